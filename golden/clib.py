"""The C golden library (``golden_c/``) built and called from Python: the C row kernels against the
numpy path and the compiled (numba) kernels, bit for bit.

:func:`build` compiles ``golden_c/src/*.c`` with the generated ``golden_spec.h``
(:mod:`golden.c_library`) into one shared object under ``build/golden-c/`` (:func:`golden.paths.build_dir`),
named by a hash of its sources, flags and compiler, so it is rebuilt only when one of them changes.
:func:`load` opens it with ctypes; :func:`dot_add` computes ``d = c + sum a*b`` with the C row kernel
of the instruction's algorithm, as :func:`golden.kernels.run` calls the numba one (the same tables and
parameters, :func:`golden.kernels.spec.build`).  ``python -m golden.clib`` builds and prints its path.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .descriptors import KernelCode
from .paths import REPO, build_dir

__all__ = ["SOURCE_DIR", "INCLUDE_DIR", "CFLAGS", "KERNELS", "build", "load", "kernel", "dot_add", "planted_fault"]

SOURCE_DIR = REPO / "golden_c" / "src"
INCLUDE_DIR = REPO / "golden_c" / "include"
# ISO C99, no contraction of a*b+c into an fma: the float64 steps round as numpy's and numba's do
CFLAGS = ("-std=c99", "-O2", "-fPIC", "-ffp-contract=off", "-Wall", "-Wextra")
LDFLAGS = ("-shared", "-Wl,--no-undefined", "-lm")
# the C row kernel of each kernel code (golden/kernels/__init__.py _families: the numba ones)
KERNELS = {KernelCode.FDA: "golden_fda_rows", KernelCode.GDFS: "golden_gdfs_rows",
           KernelCode.FDRDA: "golden_fdrda_rows", KernelCode.GFDRDA: "golden_fdrda_rows",
           KernelCode.GPS: "golden_gps_rows", KernelCode.SFMA: "golden_sfma_rows"}
_LIBS: dict = {}
_FAULT = [0]


def _compiler() -> list[str]:
    return shlex.split(os.environ.get("CC", "cc")) or ["cc"]


def _sources() -> list[Path]:
    return sorted(SOURCE_DIR.glob("*.c"))


def _digest(spec_header: str) -> str:
    """Hash of everything the shared object is made of: sources, headers, the spec header, flags."""
    h = hashlib.sha256()
    files = _sources() + sorted(SOURCE_DIR.glob("*.h")) + sorted(INCLUDE_DIR.glob("*.h"))
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(spec_header.encode())
    h.update(" ".join(_compiler() + list(CFLAGS) + list(LDFLAGS)).encode())
    return h.hexdigest()[:16]


def build(folder=None) -> Path:
    """The shared object of ``golden_c/src/*.c``, compiled into ``folder`` (default
    ``build/golden-c/``) unless one of the same sources is there already.

    Raises
    ------
    RuntimeError
        The compiler failed (its message included) or is missing.
    """
    from .c_library import spec_header
    folder = Path(folder) if folder is not None else build_dir("golden-c")
    header = spec_header()
    so = folder / f"libmma_golden-{_digest(header)}.so"
    if so.exists():
        return so
    folder.mkdir(parents=True, exist_ok=True)
    gen = folder / "include"
    gen.mkdir(exist_ok=True)
    spec_path = gen / "golden_spec.h"
    if not spec_path.exists() or spec_path.read_text() != header:
        tmp = gen / f".golden_spec.h.{os.getpid()}"
        tmp.write_text(header)
        os.replace(tmp, spec_path)
    fd, tmp_so = tempfile.mkstemp(suffix=".so", dir=folder)
    os.close(fd)
    cmd = (_compiler() + list(CFLAGS) + [f"-I{gen}", f"-I{SOURCE_DIR}", f"-I{INCLUDE_DIR}"]
           + [str(s) for s in _sources()] + ["-o", tmp_so] + list(LDFLAGS))
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        os.unlink(tmp_so)
        raise RuntimeError(f"golden C library: cannot run the C compiler {cmd[0]!r} ({e}); set CC") from None
    if done.returncode != 0:
        os.unlink(tmp_so)
        raise RuntimeError(f"golden C library: the build failed:\n{shlex.join(cmd)}\n{done.stderr}")
    os.replace(tmp_so, so)                    # whole or absent: concurrent builders each write their own
    for old in folder.glob("libmma_golden-*.so"):  # earlier sources' builds (a process holding one keeps it)
        if old != so:
            with contextlib.suppress(OSError):
                old.unlink()
    return so


def load(folder=None) -> ctypes.CDLL:
    """The built library, opened (built first where needed); the row kernels' argument types set."""
    so = build(folder)
    key = str(so)
    if key not in _LIBS:
        lib = ctypes.CDLL(key)
        for name in set(KERNELS.values()):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = None
                fn.argtypes = [ctypes.c_int64, ctypes.c_int64] + [ctypes.c_void_p] * 6 + [ctypes.c_int64] \
                    + [ctypes.c_void_p] * 6
        _LIBS[key] = lib
    return _LIBS[key]


def kernel(code: KernelCode, lib=None):
    """The C row kernel of kernel code ``code``, or None where its source is not built yet."""
    lib = load() if lib is None else lib
    name = KERNELS.get(code)
    return None if name is None else getattr(lib, name, None)


@contextlib.contextmanager
def planted_fault():
    """Test only: prm[P_FAULT] = 1 in every C call inside (the final rounding's round bit misread),
    so a comparison shows it sees a wrong kernel."""
    _FAULT[0] = 1
    try:
        yield
    finally:
        _FAULT[0] = 0


def _operand(x):
    """``(array, itemsize)``: a flat contiguous little-endian unsigned array the kernel reads."""
    if x is None:
        return None, 8
    flat = np.ascontiguousarray(x).reshape(-1)
    if flat.dtype.kind not in "ui" or flat.dtype.itemsize not in (1, 2, 4, 8) or flat.dtype.byteorder == ">":
        flat = flat.astype(np.uint64)
    return flat, flat.dtype.itemsize


def _order(p, K: int) -> np.ndarray:
    from .algorithms import pass_order
    if p.pass_interleave is not None:
        return np.ascontiguousarray(pass_order(K, p.pass_size, p.pass_interleave), dtype=np.int64)
    return np.arange(K, dtype=np.int64)


def _ptr(x) -> int | None:
    return None if x is None else x.ctypes.data


def dot_add(ins, a, b, c, scale_a=None, scale_b=None, *, arch=None, threads: int = 1, folder=None) -> np.ndarray:
    """``golden.dot_add`` computed by the C library: d's bit patterns, shape ``[...]``.

    Contiguous operands are read where they lie (in their own width, as :func:`golden.kernels.run`
    hands them to the numba kernels); broadcast ones are widened :data:`BROADCAST_ROWS` rows at a time.
    ``threads``: row ranges run on that many threads (ctypes lets go of the GIL during each call).

    Raises
    ------
    ValueError
        The design is one no compiled kernel models (:func:`golden.kernels.supports`: the numpy path
        alone computes it), or its algorithm's C kernel is not built yet.
    """
    from .api import Operands, _instruction
    from .kernels import spec
    ins = _instruction(ins, arch)
    dp = ins.datapath
    if not spec.supports(dp.params, dp.formats, dp.k, dp.scale_format, dp.block_size):
        raise ValueError(f"{ins.arch} {ins.name}: no compiled kernel models this design "
                         f"(golden.kernels.supports is False); golden.dot_add computes it on the numpy path")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    code = spec.kernel_code(dp.params)
    fn = kernel(code, load(folder))
    if fn is None:
        raise ValueError(f"{ins.arch} {ins.name}: the C kernel of {dp.params.base} ({KERNELS.get(code)}) "
                         f"is not in the C library yet (golden_c/src/)")
    ops = Operands(ins, a, b, c, scale_a, scale_b)
    fmts, vtab, etab, prm = spec.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)
    prm = prm.copy()
    prm[spec.P_FAULT] = _FAULT[0]
    tables = tuple(np.ascontiguousarray(x, dtype=t) for x, t in ((fmts, np.int64), (vtab, np.float32),
                                                                (etab, np.int16), (prm, np.int64)))
    order = _order(dp.params, dp.k)
    R = ops.count
    out = np.empty(R, np.uint64)
    views = ops.views()
    step = max(R, 1) if views is not None else max(1024, BROADCAST_ELEMENTS // dp.k)
    for lo in range(0, R, step):
        hi = min(lo + step, R)
        parts = tuple(None if v is None else v[lo:hi] for v in views) if views is not None else ops.rows(lo, hi)
        _rows(fn, parts, dp.k, tables, order, out[lo:hi], threads)
    return out.astype(dp.d_format.dtype).reshape(ops.batch)


BROADCAST_ELEMENTS = 1 << 19     # broadcast operands are widened about this many elements per chunk (4 MB)
THREAD_MIN_ROWS = 4096           # rows per thread at least (a thread costs more than fewer rows)


def _rows(fn, parts, K: int, tables, order, out, threads: int) -> None:
    """Rows of one chunk into ``out`` (uint64) with the C row kernel ``fn``."""
    packed = [_operand(x) for x in parts]
    isz = np.array([s for _, s in packed], np.int64)
    arrs = [x for x, _ in packed]                        # kept alive across the calls
    fmts, vtab, etab, prm = tables
    R = out.shape[0]
    args = (*(_ptr(x) for x in arrs), isz.ctypes.data, K, fmts.ctypes.data, vtab.ctypes.data, etab.ctypes.data,
            prm.ctypes.data, order.ctypes.data, out.ctypes.data)
    n = min(threads, max(1, R // THREAD_MIN_ROWS))
    if n <= 1:
        if R:
            fn(0, R, *args)
        return
    from concurrent.futures import ThreadPoolExecutor
    bounds = np.linspace(0, R, n + 1).astype(np.int64)
    with ThreadPoolExecutor(n - 1) as pool:
        futures = [pool.submit(fn, int(lo), int(hi), *args) for lo, hi in zip(bounds[1:-1], bounds[2:])]
        fn(0, int(bounds[1]), *args)
        for f in futures:
            f.result()


if __name__ == "__main__":
    try:
        print(build(sys.argv[1] if len(sys.argv) > 1 else None))
    except RuntimeError as e:
        print(e, file=sys.stderr)
        sys.exit(1)
