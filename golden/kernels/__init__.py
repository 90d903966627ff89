"""Compiled golden kernels (numba): the numpy path's algorithms, row by row, bit for bit.

``golden.dot_add(..., backend="numba")`` (the default when numba imports) runs here; the numpy
path in :mod:`golden.algorithms` stays the readable reference the kernels are checked against
(tests/test_golden_kernels.py).  One compiled kernel per algorithm family, formats and parameters
as runtime arguments (:mod:`golden.kernels.spec`), so the compiled code is cached on disk once
(numba ``cache=True``) and serves every instruction.

:func:`supports` decides which designs a kernel computes; every other design (a Params field a
kernel does not model, a format it cannot decode) runs on the numpy path.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

import numpy as np

from . import spec
from .spec import supports  # noqa: F401  (public: the predicate)

_FAULT = 0                       # test-only: the planted rounding fault (planted_fault())
_LAUNCH = threading.Lock()       # numba's default threading layer takes one parallel launch at a time
_WARMED: set = set()
COMPILE_NOTICE_S = 1.0           # a first call slower than this says so on stderr
BLOCKS_PER_THREAD = 8            # row blocks per thread in a parallel launch (load balance)
MATERIALISED_ELEMENTS = 1 << 19  # broadcast operands are widened this many elements per chunk (4 MB)
CONTIGUOUS_ROWS = 1 << 18        # rows per launch on contiguous operands (bounds the uint64 result buffer)
PARALLEL_MIN_ROWS = 4096         # fewer rows run on the calling thread (a launch costs more)


def available() -> bool:
    """Whether numba imports (the compiled backend can run)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def default_threads() -> int:
    """The cores this process may run on (its CPU affinity), at most numba's thread pool."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:                       # not Linux
        n = os.cpu_count() or 1
    import numba
    return max(1, min(n, numba.config.NUMBA_NUM_THREADS))


@contextlib.contextmanager
def planted_fault():
    """Test only: every kernel misreads the round bit of its final rounding while inside."""
    global _FAULT
    _FAULT = 1
    try:
        yield
    finally:
        _FAULT = 0


def _families():
    from . import amd, fused, gps, sfma
    return {"FDA": (fused.fda_rows, fused.fda_parallel), "GDFS": (fused.gdfs_rows, fused.gdfs_parallel),
            "FDRDA": (amd.fdrda_rows, amd.fdrda_parallel), "GFDRDA": (amd.fdrda_rows, amd.fdrda_parallel),
            "GPS": (gps.gps_rows, gps.gps_parallel), "SFMA": (sfma.sfma_rows, sfma.sfma_parallel)}


_EMPTY = np.empty(0, np.uint8)


def _operand(x):
    """``(bytes, itemsize)``: a flat integer array as the uint8 view kernels read (no copy)."""
    if x is None:
        return _EMPTY, 8
    flat = x.reshape(-1)
    if flat.dtype.kind not in "ui" or flat.dtype.itemsize not in (1, 2, 4, 8) or flat.dtype.byteorder == ">":
        flat = flat.astype(np.uint64)
    return flat.view(np.uint8), flat.dtype.itemsize


def run(ins, ops, threads: int | None = None) -> np.ndarray:
    """d's bits, flat ``[ops.count]``, for an :class:`golden.api.Operands` that :func:`supports`
    takes.  Contiguous operands are read where they lie; broadcast ones a chunk at a time."""
    dp = ins.datapath
    fmts, vtab, etab, prm = spec.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)
    if _FAULT:
        prm = prm.copy()
        prm[spec.P_FAULT] = 1
    K = dp.k
    order = _order(dp.params, K)
    rows, parallel = _families()[dp.params.base]
    threads = default_threads() if threads is None else max(1, int(threads))
    R = ops.count
    out = np.empty(R, dp.d_format.dtype)
    views = ops.views()                                       # None when an operand is broadcast
    step = CONTIGUOUS_ROWS if views is not None else max(1024, MATERIALISED_ELEMENTS // K)
    part_out = np.empty(min(step, R), np.uint64)
    for lo in range(0, R, step):
        hi = min(lo + step, R)
        if views is not None:                                 # the callers' arrays, sliced: no copy
            part = tuple(None if v is None else v[lo:hi] for v in views)
        else:
            part = ops.rows(lo, hi)
        _launch(rows, parallel, threads, part, K, fmts, vtab, etab, prm, order, part_out[:hi - lo], dp.params.base)
        out[lo:hi] = part_out[:hi - lo]
    return out


def _launch(rows, parallel, threads, arrays, K, fmts, vtab, etab, prm, order, out, base):
    packed = [_operand(x) for x in arrays]
    opv = tuple(v for v, _ in packed)
    isz = np.array([s for _, s in packed], np.int64)
    R = out.shape[0]
    threads = threads if R >= PARALLEL_MIN_ROWS else 1
    key = (base, threads > 1)
    if key not in _WARMED:                                    # compile (or load from the cache) on one row
        t0 = time.perf_counter()
        _call(rows, parallel, threads, 1, opv, isz, K, fmts, vtab, etab, prm, order, out[:1])
        dt = time.perf_counter() - t0
        _WARMED.add(key)
        if dt > COMPILE_NOTICE_S:
            print(f"golden: compiled the {base} kernel{' (parallel)' if threads > 1 else ''} in {dt:.1f} s; "
                  f"numba caches it for later runs", file=sys.stderr, flush=True)
    _call(rows, parallel, threads, R, opv, isz, K, fmts, vtab, etab, prm, order, out)


def _call(rows, parallel, threads, R, opv, isz, K, fmts, vtab, etab, prm, order, out):
    if threads == 1:
        rows(0, R, *opv, isz, K, fmts, vtab, etab, prm, order, out)     # nogil: no threading layer
        return
    import numba
    with _LAUNCH:
        before = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            parallel(threads * BLOCKS_PER_THREAD, R, *opv, isz, K, fmts, vtab, etab, prm, order, out)
        finally:
            numba.set_num_threads(before)


def _order(p, K: int) -> np.ndarray:
    """Product order the passes take (``algorithms.pass_order`` for an interleaved compiled path)."""
    from ..algorithms import pass_order
    if p.pass_interleave is not None:
        return pass_order(K, p.pass_size, p.pass_interleave).astype(np.int64)
    return np.arange(K, dtype=np.int64)


def handles(datapath) -> bool:
    """Whether :func:`run` computes this datapath: :func:`supports` it, and for SFMA the compiled
    fma is correctly rounded here (else the numpy path's error-free fma runs)."""
    dp = datapath
    if not supports(dp.params, dp.formats, dp.k, dp.scale_format, dp.block_size):
        return False
    return dp.params.base != "SFMA" or _fma_exact()


_FMA_OK: list = []


def _fma_exact() -> bool:
    if not _FMA_OK:
        from .sfma import fma_is_exact
        _FMA_OK.append(fma_is_exact())
    return _FMA_OK[0]
