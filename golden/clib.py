"""The C golden library (``golden_c/``) built and called from Python: the C row kernels against the
numpy path and the compiled (numba) kernels, bit for bit.

:func:`build` compiles ``golden_c/src/*.c`` with the generated ``golden_spec.h``
(:mod:`golden.c_library`) into one shared object under ``build/golden-c/`` (:func:`golden.paths.build_dir`),
named by a hash of its sources, flags and compiler, so it is rebuilt only when one of them changes.
:func:`load` opens it with ctypes; :func:`dot_add` computes ``d = c + sum a*b`` with the C row kernel
of the instruction's algorithm, as :func:`golden.kernels.run` calls the numba one (the same tables and
parameters, :func:`golden.kernels.spec.build`).  ``python -m golden.clib`` builds and prints its path.

The library's public API (``mma_golden.h``: the catalog compiled in, no Python at run time) is bound
here too: :func:`c_lookup` gives a :class:`CInstruction`, :func:`c_dot_add` and :func:`c_mma` compute
through ``mma_golden_dot_add`` / ``mma_golden_mma`` (the tests hold them to golden.dot_add / golden.mma).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
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

__all__ = ["SOURCE_DIR", "INCLUDE_DIR", "CFLAGS", "KERNELS", "build", "load", "kernel", "dot_add", "planted_fault",
           "CInstruction", "c_lookup", "c_entries", "c_dot_add", "c_mma", "c_tables", "c_from_spec",
           "c_from_params"]

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


def _digest(spec_header: str, catalog: str = "") -> str:
    """Hash of everything the shared object is made of: sources, headers, the generated spec header
    and catalog, flags."""
    h = hashlib.sha256()
    files = _sources() + sorted(SOURCE_DIR.glob("*.h")) + sorted(INCLUDE_DIR.glob("*.h"))
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(spec_header.encode())
    h.update(catalog.encode())
    h.update(" ".join(_compiler() + list(CFLAGS) + list(LDFLAGS)).encode())
    return h.hexdigest()[:16]


@functools.cache
def _generated(custom: tuple = ()) -> tuple[str, str]:
    """The generated sources (:mod:`golden.c_library`): ``golden_spec.h``, and ``golden_catalog.inc`` with
    ``golden_runtime.inc`` after it (one text: :func:`_split` parts them)."""
    from .c_library import catalog_source, runtime_source, spec_header
    return spec_header(), catalog_source(custom) + _SPLIT + runtime_source()


_SPLIT = "/* ---- golden_runtime.inc ---- */\n"


def _split(generated: str) -> tuple[str, str]:
    catalog, _, runtime = generated.partition(_SPLIT)
    return catalog, runtime


def build(folder=None, custom=()) -> Path:
    """The shared object of ``golden_c/src/*.c``, compiled into ``folder`` (default
    ``build/golden-c/``) unless one of the same sources is there already.

    ``custom``: specs of instructions of your own (:mod:`golden.custom`'s grammar) compiled into the
    catalog beside golden's (architecture ``custom``); such a build's default folder is
    ``build/golden-c/custom/`` (a folder keeps one build: the catalog's own stays).

    Raises
    ------
    RuntimeError
        The compiler failed (its message included) or is missing.
    """
    custom = tuple(custom)
    if folder is None:
        folder = build_dir("golden-c") / "custom" if custom else build_dir("golden-c")
    folder = Path(folder)
    header, catalog = _generated(custom)
    so = folder / f"libmma_golden-{_digest(header, catalog)}.so"
    if so.exists():
        return so
    folder.mkdir(parents=True, exist_ok=True)
    gen = folder / "include"
    gen.mkdir(exist_ok=True)
    for name, text in (("golden_spec.h", header), *zip(("golden_catalog.inc", "golden_runtime.inc"),
                                                           _split(catalog))):
        path = gen / name
        if not path.exists() or path.read_text() != text:
            tmp = gen / f".{name}.{os.getpid()}"
            tmp.write_text(text)
            os.replace(tmp, path)
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


def load(folder=None, custom=()) -> ctypes.CDLL:
    """The built library, opened (built first where needed); the row kernels' argument types set."""
    so = build(folder, custom)
    key = str(so)
    if key not in _LIBS:
        lib = ctypes.CDLL(key)
        for name in set(KERNELS.values()):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = None
                fn.argtypes = [ctypes.c_int64, ctypes.c_int64] + [ctypes.c_void_p] * 6 + [ctypes.c_int64] \
                    + [ctypes.c_void_p] * 6
        _api_types(lib)
        _LIBS[key] = lib
    return _LIBS[key]


def _api_types(lib) -> None:
    P, Int, S, U = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint64)
    sigs = {"mma_golden_lookup": (P, [S, S]), "mma_golden_last_error": (S, []),
            "mma_golden_count": (ctypes.c_size_t, []), "mma_golden_entry": (P, [ctypes.c_size_t]),
            "mma_golden_format": (S, [P, Int]), "mma_golden_with_shape": (P, [P, Int, Int]),
            "mma_golden_dot_add": (Int, [P, ctypes.c_size_t, U, U, U, U, U, U]),
            "mma_golden_mma": (Int, [P, U, U, U, U, U, U]),
            "mma_golden_from_spec": (P, [S]), "mma_golden_free": (None, [P]),
            "mma_golden_tables": (Int, [P, ctypes.POINTER(ctypes.POINTER(ctypes.c_float)),
                                      ctypes.POINTER(ctypes.POINTER(ctypes.c_int16)), ctypes.POINTER(ctypes.c_size_t)])}
    for name in ("arch", "name", "algorithm"):
        sigs[f"mma_golden_{name}"] = (S, [P])
    for name in ("m", "n", "k", "block", "d_bytes"):
        sigs[f"mma_golden_{name}"] = (Int, [P])
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype, fn.argtypes = res, args


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
    from . import c_library
    from .api import Operands, _instruction
    from .kernels import product_order, spec
    ins = _instruction(ins, arch)
    dp = ins.datapath
    if not c_library.supports(dp):
        raise ValueError(f"{ins.arch} {ins.name}: no C kernel models this design "
                         f"(golden.c_library.supports is False); golden.dot_add computes it on the numpy path")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    code = spec.kernel_code(dp.params)
    fn = kernel(code, load(folder))
    if fn is None:
        raise ValueError(f"{ins.arch} {ins.name}: the C kernel of {dp.params.base} ({KERNELS.get(code)}) "
                         f"is not in the C library yet (golden_c/src/)")
    ops = Operands(ins, a, b, c, scale_a, scale_b)
    fmts, vtab, etab, prm = c_library.build_design(dp)
    prm[spec.P_FAULT] = _FAULT[0]
    tables = tuple(np.ascontiguousarray(x, dtype=t) for x, t in ((fmts, np.int64), (vtab, np.float32),
                                                                (etab, np.int16), (prm, np.int64)))
    order = np.ascontiguousarray(product_order(dp.params, dp.k))
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


# --------------------------------------------------------------------------- the public API (mma_golden.h)

class CInstruction:
    """An instruction of the C library's catalog (``mma_golden_lookup``): its facts read back from C."""

    def __init__(self, lib, ptr: int):
        self.lib, self.ptr = lib, ptr

    def _s(self, what: str) -> str:
        return getattr(self.lib, f"mma_golden_{what}")(self.ptr).decode()

    def _i(self, what: str) -> int:
        return int(getattr(self.lib, f"mma_golden_{what}")(self.ptr))

    arch = property(lambda self: self._s("arch"))
    name = property(lambda self: self._s("name"))
    algorithm = property(lambda self: self._s("algorithm"))
    m = property(lambda self: self._i("m"))
    n = property(lambda self: self._i("n"))
    k = property(lambda self: self._i("k"))
    block = property(lambda self: self._i("block"))
    d_bytes = property(lambda self: self._i("d_bytes"))

    @property
    def formats(self) -> tuple:
        """``(a, b, c, d, scale)`` format names (scale None when unscaled)."""
        out = [self.lib.mma_golden_format(self.ptr, i) for i in range(5)]
        return tuple(None if f is None else f.decode() for f in out)

    def with_shape(self, m: int, n: int) -> CInstruction:
        """``mma_golden_with_shape``: this instruction at another of its shapes (ValueError otherwise)."""
        ptr = self.lib.mma_golden_with_shape(self.ptr, m, n)
        if not ptr:
            raise ValueError(_error(self.lib))
        return CInstruction(self.lib, ptr)

    def __repr__(self) -> str:
        return f"CInstruction({self.arch} {self.name} {self.m}x{self.n}x{self.k})"


def _error(lib) -> str:
    return lib.mma_golden_last_error().decode()


def c_lookup(arch: str, name: str, folder=None, custom=()) -> CInstruction:
    """``mma_golden_lookup``; ValueError with the library's message where it returns NULL.
    ``folder``, ``custom``: which build (:func:`build`)."""
    lib = load(folder, custom)
    ptr = lib.mma_golden_lookup(str(arch).encode(), str(name).encode())
    if not ptr:
        raise ValueError(_error(lib))
    return CInstruction(lib, ptr)


def c_from_spec(spec: str, folder=None) -> CInstruction:
    """``mma_golden_from_spec``: an instruction of your own made at run time by the built library (no
    rebuild), from a spec in :mod:`golden.custom`'s grammar; released (``mma_golden_free``) when the
    returned object is collected.  ValueError with the library's message where the spec is refused."""
    import weakref
    lib = load(folder)
    if not isinstance(spec, str):
        raise ValueError(f"a spec is a string k=K,a=FMT,c=FMT,base=ALG,..., not {spec!r}")
    ptr = lib.mma_golden_from_spec(spec.encode())
    if not ptr:
        raise ValueError(_error(lib))
    ins = CInstruction(lib, ptr)
    weakref.finalize(ins, lib.mma_golden_free, ptr)
    return ins


def c_from_params(params, k: int, a: str, c: str, *, b=None, d=None, m: int = 1, n: int = 1, scale=None,
                  block=None, folder=None) -> CInstruction:
    """:func:`c_from_spec` of a :class:`golden.Params` and a shape: the spec written with
    :func:`golden.params.format_params` (the fields that differ from the defaults)."""
    import dataclasses

    from .params import format_params
    changes = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)
               if f.name == "base" or getattr(params, f.name) != f.default}
    shape = {"k": k, "m": m, "n": n, "a": a, "b": b, "c": c, "d": d, "scale": scale, "block": block}
    head = ",".join(f"{key}={value}" for key, value in shape.items() if value is not None)
    return c_from_spec(f"{head},{format_params(changes)}", folder)


def c_entries(folder=None, custom=()) -> list[CInstruction]:
    """Every entry of the C library's catalog at its default shape."""
    lib = load(folder, custom)
    return [CInstruction(lib, lib.mma_golden_entry(i)) for i in range(lib.mma_golden_count())]


def _words(x, shape) -> np.ndarray | None:
    if x is None:
        return None
    return np.ascontiguousarray(np.broadcast_to(np.asarray(x).astype(np.uint64), shape))


def _u64p(x):
    return None if x is None else x.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64))


def _d_dtype(ins: CInstruction):
    return np.dtype(f"uint{8 * ins.d_bytes}")


def c_dot_add(ins: CInstruction, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
    """``mma_golden_dot_add`` on a batch: ``a, b [..., K]``, ``c [...]``, scales ``[..., K // block]``
    (broadcast to one batch shape); d's bit patterns ``[...]`` in d's width."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    shapes = [a.shape[:-1], b.shape[:-1], c.shape]
    shapes += [np.shape(s)[:-1] for s in (scale_a, scale_b) if s is not None]
    batch = np.broadcast_shapes(*shapes)
    K = ins.k
    nblk = K // ins.block if ins.block else 0
    a, b = _words(a, batch + (K,)), _words(b, batch + (K,))
    c = _words(c, batch)
    sa, sb = (_words(s, batch + (nblk,)) for s in (scale_a, scale_b))
    count = int(np.prod(batch, dtype=np.int64))
    d = np.empty(count, np.uint64)
    if ins.lib.mma_golden_dot_add(ins.ptr, count, _u64p(a), _u64p(b), _u64p(c), _u64p(sa), _u64p(sb), _u64p(d)):
        raise ValueError(_error(ins.lib))
    return d.astype(_d_dtype(ins)).reshape(batch)


def c_mma(ins: CInstruction, A, B, C, scale_A=None, scale_B=None) -> np.ndarray:
    """``mma_golden_mma``: ``A [M, K]``, ``B [K, N]``, ``C [M, N]``, ``scale_A [M, K // block]``,
    ``scale_B [K // block, N]``; D's bit patterns ``[M, N]``."""
    M, N, K = ins.m, ins.n, ins.k
    nblk = K // ins.block if ins.block else 0
    A, B, C = _words(A, (M, K)), _words(B, (K, N)), _words(C, (M, N))
    sA, sB = _words(scale_A, (M, nblk)), _words(scale_B, (nblk, N))
    D = np.empty((M, N), np.uint64)
    if ins.lib.mma_golden_mma(ins.ptr, _u64p(A), _u64p(B), _u64p(C), _u64p(sA), _u64p(sB), _u64p(D)):
        raise ValueError(_error(ins.lib))
    return D.astype(_d_dtype(ins))


def c_tables(ins: CInstruction) -> tuple[np.ndarray, np.ndarray]:
    """The value and exponent tables the C library built for ``ins``'s design (copies)."""
    v, e, n = ctypes.POINTER(ctypes.c_float)(), ctypes.POINTER(ctypes.c_int16)(), ctypes.c_size_t()
    if ins.lib.mma_golden_tables(ins.ptr, ctypes.byref(v), ctypes.byref(e), ctypes.byref(n)):
        raise ValueError(_error(ins.lib))
    return (np.ctypeslib.as_array(v, (n.value,)).copy(), np.ctypeslib.as_array(e, (n.value,)).copy())


if __name__ == "__main__":
    import argparse
    cli = argparse.ArgumentParser(prog="python -m golden.clib", description="build the C golden library, "
                                  "print its shared object's path")
    cli.add_argument("folder", nargs="?", help="build folder (default build/golden-c/)")
    cli.add_argument("--custom", action="append", default=[], metavar="SPEC",
                     help="an instruction of your own (golden.custom's grammar) compiled in; repeatable")
    args = cli.parse_args()
    try:
        print(build(args.folder, args.custom))
    except ValueError as e:                   # a spec golden refuses, or one no C kernel models: bad input
        print(e, file=sys.stderr)
        sys.exit(2)
    except RuntimeError as e:                 # the compiler failed or is missing
        print(e, file=sys.stderr)
        sys.exit(1)
