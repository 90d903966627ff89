"""Compiled golden kernels (numba): the numpy path's algorithms, row by row, bit for bit.

``golden.dot_add(..., backend="numba")`` (the default when numba imports) runs here; the numpy
path in :mod:`golden.algorithms` stays the readable reference the kernels are checked against
(tests/golden/test_golden_kernels.py).  One compiled kernel per algorithm family, formats and parameters
as runtime arguments (:mod:`golden.kernels.spec`), so the compiled code is cached on disk once
(numba ``cache=True``) and serves every instruction.

:func:`supports` decides which designs a kernel computes; every other design (a Params field a
kernel does not model, a format it cannot decode) runs on the numpy path.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import threading
import time

import numpy as np

from ..descriptors import KernelCode
from . import apart, spec
from .spec import supports  # noqa: F401  (public: the predicate)

_FAULT = 0                       # test-only: the planted rounding fault (planted_fault())
_WARMED: set = set()
_APART: set = set()              # shape kernels (golden.kernels.apart: first compiled in a child process)
COMPILE_NOTICE_S = 1.0           # a first call slower than this says so on stderr
BLOCKS_PER_THREAD = 4            # row ranges per thread in a threaded call (a core taken away costs less)
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
    """The cores this process may run on (its CPU affinity)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:                       # not Linux
        n = os.cpu_count() or 1
    return max(1, n)


@contextlib.contextmanager
def pinned():
    """The calling thread on one core (the first this process may use) while inside, its affinity
    restored after: one-core rates read with no migration between cores (``golden.bench``).
    Yields the core, or None where the OS has no affinity call."""
    if not hasattr(os, "sched_setaffinity"):
        yield None
        return
    before = os.sched_getaffinity(0)
    core = min(before)
    os.sched_setaffinity(0, {core})
    try:
        yield core
    finally:
        os.sched_setaffinity(0, before)


@contextlib.contextmanager
def planted_fault():
    """Test only: every kernel's final rounding goes wrong while inside (the round bit misread; in
    GPS, SFMA, the FDRDA block path and the register paths of one shape the result one ulp off where
    it was inexact or finite)."""
    global _FAULT
    _FAULT = 1
    try:
        yield
    finally:
        _FAULT = 0


def _families():
    """The row kernel of each kernel code (golden.descriptors.KernelCode, an algorithm descriptor's
    ``kernel_code``): ``rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out)``
    computes rows ``lo .. hi - 1`` without the GIL (threads share them)."""
    from . import amd, fused, gps, sfma
    return {KernelCode.FDA: fused.fda_rows, KernelCode.GDFS: fused.gdfs_rows, KernelCode.FDRDA: amd.fdrda_rows,
            KernelCode.GFDRDA: amd.fdrda_rows, KernelCode.GPS: gps.gps_rows, KernelCode.SFMA: sfma.sfma_rows}


def _rows_kernel(code, fmts, prm, k: int, order):
    """``(row kernel, own width)`` of a design: its family's kernel (:func:`_families`), but FDRDA
    and GFDRDA designs that golden.kernels.amd_int computes in integer lanes run there (the catalog's
    f16 and bf16 FDRDA shapes in golden.kernels.fdrda_float and its fp8 GFDRDA shapes in
    golden.kernels.amd_fp8, a kernel a shape, which read a, b and c only in the dtypes ``own width``
    gives), FDA's f16 shapes in golden.kernels.fda_float and its E4M3 shapes in golden.kernels.fda_fp8
    (likewise), and GDFS
    designs of narrow operands (fp4, fp6) in golden.kernels.gdfs_int (chosen here, not inside the
    kernel, so that neither compiles the other)."""
    in_order = bool((order == np.arange(k)).all())
    if code in (KernelCode.FDRDA, KernelCode.GFDRDA):
        from . import amd_fp8, amd_int, fdrda_float
        if amd_int.int_design(fmts, prm):
            h16 = fdrda_float.kernel_for(fmts, prm, k, in_order)
            if h16 is not None:
                return h16, fdrda_float.OWN_WIDTH
            fp8 = amd_fp8.kernel_for(fmts, prm, k, in_order)
            return (fp8, amd_fp8.OWN_WIDTH) if fp8 is not None else (amd_int.fdrda_int_rows, None)
    if code == KernelCode.FDA:
        from . import fda_float, fda_fp8
        f16 = fda_float.kernel_for(fmts, prm, k, in_order)
        if f16 is not None:
            return f16, fda_float.OWN_WIDTH
        e4 = fda_fp8.kernel_for(fmts, prm, k, in_order)
        if e4 is not None:
            return e4, fda_fp8.OWN_WIDTH
    if code == KernelCode.GDFS:
        from . import gdfs_int
        if gdfs_int.takes(fmts, prm):
            return gdfs_int.gdfs_int_rows, None
    return _families()[code], None


def family_kernel(rows):
    """The kernel of ``rows``' family that computes the same designs without it, where ``rows`` is a
    kernel of one shape (:func:`_shape_modules`), else ``rows``: the same bits, one compiled kernel
    for every shape (the board's fused self-test checks through it; ``python -m
    golden.kernels.profile --paths`` times the two side by side)."""
    for module, family in _shape_modules():
        if rows in module.KERNELS.values():
            return family
    return rows


def _shape_modules() -> tuple:
    """``(module, family kernel)`` of every module of one-kernel-a-shape kernels: its
    ``KERNELS`` (shape -> kernel) and the kernel that computes the same designs for every shape."""
    from . import amd_fp8, amd_int, fda_float, fda_fp8, fdrda_float, fused
    return ((fdrda_float, amd_int.fdrda_int_rows), (amd_fp8, amd_int.fdrda_int_rows), (fda_float, fused.fda_rows),
            (fda_fp8, fused.fda_rows))


def shape_kernels() -> set:
    """Every kernel of one shape (:func:`_shape_modules`)."""
    return {k for module, _ in _shape_modules() for k in module.KERNELS.values()}


def own_width_operands(pl, a, b, c) -> tuple:
    """``a, b, c`` as the plan's kernel reads them: narrowed to ``pl.own_width`` where it reads them
    in their own width only (each pattern fits: the operands were checked), else as they are."""
    if pl.own_width is None:
        return a, b, c
    return tuple(None if x is None else x.astype(t, copy=False) for x, t in zip((a, b, c), pl.own_width))


_EMPTY = np.empty(0, np.uint8)


def _operand(x):
    """``(bytes, itemsize)``: a flat integer array as the uint8 view kernels read (no copy)."""
    if x is None:
        return _EMPTY, 8
    flat = x.reshape(-1)
    size = _READ_AS_IS.get(flat.dtype)
    if size is None:
        flat, size = flat.astype(np.uint64), 8
    return flat.view(np.uint8), size


# dtypes the kernels read as they lie (native integers of 1, 2, 4, 8 bytes) -> item size: one lookup
_READ_AS_IS = {np.dtype(t): np.dtype(t).itemsize for t in (np.uint8, np.uint16, np.uint32, np.uint64,
                                                              np.int8, np.int16, np.int32, np.int64)}


@dataclasses.dataclass(frozen=True)
class Plan:
    """What :func:`run` hands an instruction's kernel, built once per instruction (:func:`plan`):
    its row kernel, format table, value tables, parameter vector and product order."""

    handles: bool
    rows: object = None
    fmts: np.ndarray | None = None
    vtab: np.ndarray | None = None
    etab: np.ndarray | None = None
    prm: np.ndarray | None = None
    order: np.ndarray | None = None
    k: int = 0
    base: str = ""
    d_dtype: object = None
    own_width: tuple | None = None          # dtypes of a, b, c where the kernel reads them in their own width


_PLANS: dict = {}
PLANS_KEPT = 256                 # instructions whose plan is kept (with_params makes new ones: bounded)


def plan(ins) -> Plan:
    """The :class:`Plan` of a catalog instruction, cached by identity: building it reads
    ``ins.datapath`` (a parameter check, tens of microseconds), which a call of a few rows would
    otherwise pay on every call.  The cache holds the instruction itself, so an id is never reused
    while its entry lives."""
    hit = _PLANS.get(id(ins))
    if hit is not None and hit[0] is ins:
        return hit[1]
    dp = ins.datapath
    if not handles(dp):
        p = Plan(False)
    else:
        fmts, vtab, etab, prm = spec.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)
        order = product_order(dp.params, dp.k)
        rows, own = _rows_kernel(spec.kernel_code(dp.params), fmts, prm, dp.k, order)
        if own is not None:                 # the kernels of one shape read own-width operands
            _APART.add(rows)
        p = Plan(True, rows, fmts, vtab, etab, prm, order, dp.k, dp.params.base, dp.d_format.dtype, own)
    if len(_PLANS) >= PLANS_KEPT:
        _PLANS.clear()
    _PLANS[id(ins)] = (ins, p)
    return p


def takes(ins) -> bool:
    """Whether :func:`run` computes ``ins`` (:func:`handles` of its datapath, from its :class:`Plan`)."""
    return plan(ins).handles


def run(ins, ops, threads: int | None = None) -> np.ndarray:
    """d's bits, flat ``[ops.count]``, for an :class:`golden.api.Operands` that :func:`supports`
    takes.  Contiguous operands are read where they lie; broadcast ones a chunk at a time."""
    views = ops.views()                                       # None when an operand is broadcast
    if views is not None:
        return run_arrays(ins, views, ops.count, threads)
    pl = plan(ins)
    prm, threads = _fault_prm(pl), _threads(threads)
    R = ops.count
    out = np.empty(R, pl.d_dtype)
    step = max(1024, MATERIALISED_ELEMENTS // pl.k)
    direct = out.dtype == np.uint64                           # f64's d: the kernels write the result itself
    part_out = out if direct else _scratch(min(step, R))
    for lo in range(0, R, step):
        hi = min(lo + step, R)
        part = ops.rows(lo, hi)
        part = (*own_width_operands(pl, *part[:3]), *part[3:])
        _launch(pl.rows, threads, part, pl.k, pl.fmts, pl.vtab, pl.etab, prm, pl.order,
                part_out[lo:hi] if direct else part_out[:hi - lo], out[lo:hi], pl.base)
    return out


def run_arrays(ins, views, count: int, threads: int | None = None, isz=None) -> np.ndarray:
    """:func:`run` on the callers' own contiguous arrays ``(a [R, K], b [R, K], c [R], scale_a,
    scale_b)`` (scales ``[R, blocks]`` or None), checked, ``count`` = R rows: read where they lie, a
    slice of :data:`CONTIGUOUS_ROWS` rows a launch.  ``isz``: the operands' item sizes as the
    kernels read them, where the caller worked them out before (:class:`Bound`)."""
    pl = plan(ins)
    prm, threads = _fault_prm(pl), _threads(threads)
    out = np.empty(count, pl.d_dtype)
    direct = out.dtype == np.uint64
    part_out = out if direct else _scratch(min(CONTIGUOUS_ROWS, count))
    for lo in range(0, count, CONTIGUOUS_ROWS):
        hi = min(lo + CONTIGUOUS_ROWS, count)
        part = views if hi - lo == count else tuple(None if v is None else v[lo:hi] for v in views)
        part = (*own_width_operands(pl, *part[:3]), *part[3:])
        _launch(pl.rows, threads, part, pl.k, pl.fmts, pl.vtab, pl.etab, prm, pl.order,
                part_out[lo:hi] if direct else part_out[:hi - lo], out[lo:hi], pl.base, isz)
    return out


def _fault_prm(pl: Plan) -> np.ndarray:
    """The plan's parameter vector, a copy with the planted fault on while :func:`planted_fault` is."""
    if not _FAULT:
        return pl.prm
    prm = pl.prm.copy()
    prm[spec.P_FAULT] = 1
    return prm


def _threads(threads: int | None) -> int:
    return default_threads() if threads is None else max(1, int(threads))


class Bound:
    """:func:`run` for one instruction and one layout of operands (dtypes, shapes, contiguous, none
    broadcast), what it works out per call worked out once: a caller that calls again with arrays of
    the same layout (``golden.dot_add`` keys its calls by layout) skips the checks and the
    unpacking, tens of microseconds a call.  Built after a call of that layout has run.

    Parameters
    ----------
    ins : Instruction
        One :func:`takes` computes.
    views : tuple
        ``(a [R, K], b [R, K], c [R], scale_a, scale_b)`` of a call already checked, contiguous.
    batch : tuple
        The callers' batch shape (d's shape).
    threads : int or None
        As :func:`run` takes it (None: the process's CPU affinity, read at each call).
    """

    def __init__(self, ins, views, batch: tuple, threads: int | None):
        self.ins, self.batch, self.threads = ins, batch, threads
        self.count = int(np.prod(batch, dtype=np.int64))
        self._tails = tuple(None if v is None else v.shape[1:] for v in views)
        self._plan = plan(ins)
        read = (*own_width_operands(self._plan, *views[:3]), *views[3:])
        self.isz = np.array([_operand(x)[1] for x in read], np.int64)
        # whether a call's a, b and c are read as they come (already in the kernel's widths), and
        # whether its operands go to the kernel straight (one launch, native integers: no copy)
        self._as_is = all(x is None or y is x for x, y in zip(views[:3], read[:3]))
        self._direct = self.count <= CONTIGUOUS_ROWS and all(x is None or x.dtype in _READ_AS_IS for x in read)

    def __call__(self, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
        """d's bits in the batch shape, for arrays of the layout this was bound to (as rows where
        :func:`run_arrays` slices them, else as they are: the kernels read them flat).  A layout of
        one launch of native integers goes straight to the kernel: what :func:`run_arrays` and
        :func:`_launch` work out per call (the views' item sizes, the compile on first use) was
        worked out when this was bound, half of a small call's cost."""
        views = (a, b, c, scale_a, scale_b)
        if not self._direct:
            if self.count > CONTIGUOUS_ROWS:
                views = tuple(None if x is None else x.reshape((self.count, *t)) for x, t in zip(views, self._tails))
            return run_arrays(self.ins, views, self.count, self.threads, self.isz).reshape(self.batch)
        pl = self._plan
        if not self._as_is:
            views = (*own_width_operands(pl, a, b, c), scale_a, scale_b)
        out = np.empty(self.count, pl.d_dtype)
        part = out if out.dtype == np.uint64 else _scratch(self.count)
        args = (*(_EMPTY if x is None else x.reshape(-1).view(np.uint8) for x in views), self.isz, pl.k, pl.fmts,
                pl.vtab, pl.etab, _fault_prm(pl), pl.order, part)
        threads = _threads(self.threads) if self.count >= PARALLEL_MIN_ROWS else 1
        _call(pl.rows, threads, self.count, args, part, out)
        return out.reshape(self.batch)


_SCRATCH = threading.local()


def _scratch(n: int) -> np.ndarray:
    """A uint64 buffer of ``n`` elements the kernels write before the copy into d's dtype, kept per
    thread and grown on demand: a fresh one costs a page fault per 4 KB on its first write, which
    measured a third of a 200,000-row SFMA call."""
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.shape[0] < n:
        buf = np.empty(max(n, 1024), np.uint64)
        _SCRATCH.buf = buf
    return buf[:n]


def _launch(rows, threads, arrays, K, fmts, vtab, etab, prm, order, out, final, base, isz=None):
    """Rows of one chunk into ``out`` (uint64, what the kernels write), then ``final`` (d's dtype).
    ``isz``: the arrays' item sizes, where the caller has them (else read from the arrays)."""
    packed = [_operand(x) for x in arrays]
    opv = tuple(v for v, _ in packed)
    if isz is None:
        isz = np.array([s for _, s in packed], np.int64)
    R = out.shape[0]
    threads = threads if R >= PARALLEL_MIN_ROWS else 1
    args = (*opv, isz, K, fmts, vtab, etab, prm, order, out)
    t0 = time.perf_counter()
    if rows in _APART:                                        # a shape kernel: compiled in a child process
        apart.ensure(rows, (0, 1, *args))
    if base not in _WARMED:                                   # compile (or load from the cache) on one row
        rows(0, 1, *args)
        dt = time.perf_counter() - t0
        _WARMED.add(base)
        if dt > COMPILE_NOTICE_S:
            print(f"golden: compiled the {base} kernel in {dt:.1f} s; numba caches it for later runs",
                  file=sys.stderr, flush=True)
    _call(rows, threads, R, args, out, final)


_POOL: dict = {"size": 0, "pool": None}
_POOL_LOCK = threading.Lock()


def _pool(workers: int):
    """The process's worker threads, at least ``workers`` of them (grown on demand, kept)."""
    from concurrent.futures import ThreadPoolExecutor
    with _POOL_LOCK:
        if _POOL["size"] < workers:
            if _POOL["pool"] is not None:
                _POOL["pool"].shutdown(wait=False)
            _POOL["pool"] = ThreadPoolExecutor(workers, thread_name_prefix="golden-kernel")
            _POOL["size"] = workers
        return _POOL["pool"]


def _call(rows, threads: int, R: int, args, out, final) -> None:
    """Rows ``0 .. R - 1`` on ``threads`` threads: the calling thread and ``threads - 1`` workers
    take row ranges in turn until none is left (the kernels release the GIL, and so does numpy's
    copy of a range's results into ``final``, d's dtype: no serial step after the kernels).
    Plain Python threads, not numba's threading layer: no parallel variant to compile, no OpenMP
    threads spinning on a shared machine."""
    if threads == 1:
        rows(0, R, *args)
        if final is not out:
            final[:] = out
        return
    step = max(PARALLEL_MIN_ROWS // 4, -(-R // (threads * BLOCKS_PER_THREAD)))
    starts = iter(range(0, R, step))
    take = threading.Lock()

    def work():
        while True:
            with take:
                lo = next(starts, None)
            if lo is None:
                return
            hi = min(R, lo + step)
            rows(lo, hi, *args)
            if final is not out:
                final[lo:hi] = out[lo:hi]

    futures = [_pool(threads - 1).submit(work) for _ in range(threads - 1)]
    try:
        work()
        for f in futures:
            f.result()
    except BaseException:                   # Ctrl-C (or an error): the workers take no further range
        with take:
            for _ in starts:
                pass
        raise


def product_order(p, K: int) -> np.ndarray:
    """Product order the passes take (``golden.datapath.pass_order`` for an interleaved compiled path),
    int64 ``[K]``: what every row kernel (numba's and the C library's) reads as ``order``."""
    from ..datapath import pass_order
    if p.pass_interleave is not None:
        return pass_order(K, p.pass_size, p.pass_interleave).astype(np.int64)
    return np.arange(K, dtype=np.int64)


def handles(datapath) -> bool:
    """Whether :func:`run` computes this datapath: :func:`supports` it, and for SFMA the compiled
    fma is correctly rounded here (else the numpy path's error-free fma runs)."""
    dp = datapath
    if not supports(dp.params, dp.formats, dp.k, dp.scale_format, dp.block_size):
        return False
    return spec.kernel_code(dp.params) != KernelCode.SFMA or _fma_exact()


_FMA_OK: list = []


def _fma_exact() -> bool:
    if not _FMA_OK:
        from .sfma import fma_is_exact
        _FMA_OK.append(fma_is_exact())
    return _FMA_OK[0]
