"""The FDA family on a GPU (numba-cuda): one thread per row, bit for bit the CPU path.

Optional (``pip install .[cuda]``, numba-cuda); nothing in golden imports it, and ``make test`` never
needs a GPU (its test runs numba-cuda's simulator, ``NUMBA_ENABLE_CUDASIM=1``, where numba-cuda is
installed).  ``tools/gpu_kernel_check.py`` runs it on a GPU against ``golden.dot_add``.

The kernel is :mod:`golden.kernels.fused`'s FDA (``fda_rows``: CoFDA's chain of passes, block
scales, the compiled-path lowering's product order) written per thread: it takes the same format
rows, value tables and parameter vector (:func:`golden.kernels.spec.build`) and calls the same
scalar functions of :mod:`golden.kernels._common` (element decoding, ``pow2``, ``ftrunc``, the
final rounding ``finish``), compiled for the GPU, so every intermediate is the same float64 or int64.
Products are computed twice (for the maximum exponent, then for the sum) rather than held: a
thread keeps no array.  ``c_last`` (an IEEE add after the chain) is not modelled here
(:func:`supports`).
"""

from __future__ import annotations

import os
import types

import numpy as np

from . import _common as C
from . import spec as S

__all__ = ["THREADS_PER_BLOCK", "available", "dot_add", "launch", "prepare", "supports"]

THREADS_PER_BLOCK = 128


def available() -> bool:
    """Whether numba-cuda imports and sees a GPU (or its simulator is on)."""
    try:
        from numba import cuda
    except ImportError:
        return False
    try:
        return bool(cuda.is_available())
    except Exception:                          # a driver that is there but broken: no GPU
        return False


def supports(ins) -> bool:
    """Whether the GPU kernel computes this instruction: an FDA-family design the CPU kernels
    compute, without ``c_last``."""
    from ..descriptors import KernelCode
    from . import handles, spec
    dp = ins.datapath
    return spec.kernel_code(dp.params) == KernelCode.FDA and not dp.params.c_last and handles(dp)


_kernel = None
cuda = None                    # numba.cuda, imported on first use (the simulator swaps it in the kernel's globals)
libdevice = None               # numba.cuda.libdevice, on a GPU
_trunc = C.ftrunc              # an LLVM intrinsic: the simulator's pure Python takes numpy's trunc instead


def _fda(a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    r = cuda.grid(1)
    if r < out.shape[0]:
        out[r] = _row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order)


def _fda_simulated(a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``, CPU only): the same row code, its arrays
    unwrapped from the simulator's to numpy, which the CPU-compiled helpers take (on a GPU the
    helpers are compiled for it and take its arrays)."""
    r = cuda.grid(1)
    if r < out.shape[0]:
        host = [x._item._ary for x in (a, b, c, sa, sb, isz, fmts, vtab, etab, prm, order)]
        out[r] = _row(r, *host[:6], K, *host[6:])


def _libdevice_casts() -> dict:
    """The intrinsics of :mod:`golden.kernels._common` (bit casts, trunc, floor, fma) as CUDA
    device functions: the same operations through libdevice."""
    dev = cuda.jit(device=True)
    return {
        "f64_from_bits": dev(lambda x: libdevice.longlong_as_double(np.int64(x))),
        "bits_from_f64": dev(lambda x: np.uint64(libdevice.double_as_longlong(x))),
        "f32_from_bits": dev(lambda x: libdevice.int_as_float(np.int32(x))),
        "bits_from_f32": dev(lambda x: np.uint32(libdevice.float_as_int(x))),
        "ftrunc": dev(lambda x: libdevice.trunc(x)), "ffloor": dev(lambda x: libdevice.floor(x)),
        "fma64": dev(lambda x, y, z: libdevice.fma(x, y, z)), "fma32": dev(lambda x, y, z: libdevice.fmaf(x, y, z)),
    }


def _retarget(module, replacements: dict):
    """``module``'s numba functions as CUDA device functions, compiled from their Python source in a
    copy of its namespace where ``replacements`` stand for its intrinsics (and each function for
    its device version): the same code, no CPU-only LLVM."""
    ns = dict(vars(module))
    ns.update(replacements)
    for name, obj in vars(module).items():
        py = getattr(obj, "py_func", None)
        if py is not None and py.__module__ == module.__name__:
            ns[name] = cuda.jit(device=True)(types.FunctionType(py.__code__, ns, name, py.__defaults__,
                                                                 py.__closure__))
    shadow = types.ModuleType(module.__name__ + "_cuda")       # a module: numba resolves its attributes
    vars(shadow).update(ns)
    return shadow


def _compile():
    """The CUDA kernel, made on first use (importing this module needs no numba-cuda): ``_row``
    and its helpers become device functions (their calls then resolve to each other's)."""
    global _kernel, cuda, _trunc
    if _kernel is None:
        from numba import cuda as numba_cuda
        cuda = numba_cuda
        g = globals()
        simulated = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
        if simulated:
            _trunc = np.trunc
        else:                                  # NVVM rejects the CPU path's LLVM intrinsics: libdevice's instead
            from numba.cuda import libdevice as ld
            g["libdevice"] = ld
            g["C"] = _retarget(C, _libdevice_casts())
            _trunc = g["C"].ftrunc
        for name in ("_product", "_c_value", "_row"):
            g[name] = cuda.jit(device=True)(g[name])
        _kernel = cuda.jit(_fda_simulated if simulated else _fda)
    return _kernel


def _product(a, b, sa, sb, isz, K, fmts, vtab, etab, prm, order, r, j, t):
    """Value and exponent of product ``order[j + t]`` of row ``r``, its block scales applied."""
    k = order[j + t]
    va, ea = C.value_exp(fmts, vtab, etab, S.A, C.load(a, isz[0], r * K + k))
    vb, eb = C.value_exp(fmts, vtab, etab, S.B, C.load(b, isz[1], r * K + k))
    p, e = va * vb, ea + eb
    if prm[S.P_SCALED] == 1:
        block = prm[S.P_BLOCK]
        i = r * (K // block) + (j + (t // block) * block) // block
        xa, fa = C.value_exp(fmts, vtab, etab, S.S, C.load(sa, isz[3], i))
        xb, fb = C.value_exp(fmts, vtab, etab, S.S, C.load(sb, isz[4], i))
        p, e = p * (xa * xb), e + (fa + fb)
    return p, e


def _c_value(fmts, vtab, etab, slot, bits):
    if fmts[slot, C.WORD32] == 1 and fmts[slot, C.IGNORED_LOW] == 0:
        return C.word32_value_exp(bits)
    return C.value_exp(fmts, vtab, etab, slot, bits)


def _row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order):
    """Row ``r``'s d bits: each pass of ``fused.fda_rows`` in the same arithmetic."""
    L, F, ez = prm[S.P_L], prm[S.P_F], prm[S.P_EZERO]
    cv, ce = _c_value(fmts, vtab, etab, S.CF, C.load(c, isz[2], r))
    slot = S.CF
    d = np.uint64(0)
    for j in range(0, K, L):
        emax = ez if ce <= C.NO_TERM else ce                 # a zero c takes e_zero
        zero = False
        for t in range(L):
            _, e = _product(a, b, sa, sb, isz, K, fmts, vtab, etab, prm, order, r, j, t)
            emax = max(emax, e)
            zero |= e <= C.NO_TERM
        if ez > fmts[slot, C.EMIN] and zero:                  # zero products take e_zero
            emax = max(emax, ez)
        scale = C.pow2(F - emax)
        tot = _trunc(cv * scale)
        for t in range(L):
            p, _ = _product(a, b, sa, sb, isz, K, fmts, vtab, etab, prm, order, r, j, t)
            tot += _trunc(p * scale)
        d = C.finish(fmts, S.D, tot, tot, emax - F, prm[S.P_MODE], prm[S.P_FRAC], prm[S.P_OVERFLOW],
                     prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1)
        cv, ce = _c_value(fmts, vtab, etab, S.D, d)          # the next pass takes d as c
        slot = S.D
    return d


class Prepared:
    """One call's operands and tables on the GPU (:func:`prepare`), launched by :func:`launch`."""

    def __init__(self, ins, args, tables, rows: int):
        self.ins, self.args, self.tables, self.rows = ins, args, tables, rows


def prepare(ins, a, b, c, scale_a=None, scale_b=None, *, fault: bool = False) -> Prepared:
    """Copy a call's operands (``a, b [R, K]``, ``c [R]``, scales ``[R, K // block]``: unsigned bit
    patterns) and the design's tables to the GPU.  ``fault``: the test-only planted rounding fault
    of :func:`golden.kernels.planted_fault`."""
    from . import _operand, _order
    _compile()
    if not supports(ins):
        raise ValueError(f"{ins.arch} {ins.name} ({ins.algorithm}) is not computed by the GPU kernel: "
                         f"FDA-family designs without c_last are")
    dp = ins.datapath
    fmts, vtab, etab, prm = S.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)
    prm = prm.copy()
    prm[S.P_FAULT] = int(fault)
    packed = [_operand(None if x is None else np.ascontiguousarray(x)) for x in (a, b, c, scale_a, scale_b)]
    isz = np.array([s for _, s in packed], np.int64)
    args = [cuda.to_device(v) for v, _ in packed]
    tables = [cuda.to_device(x) for x in (isz, fmts, vtab, etab, prm, _order(dp.params, dp.k))]
    return Prepared(ins, args, tables, np.asarray(c).reshape(-1).shape[0])


def launch(p: Prepared):
    """Run the kernel over a prepared call: d's bits as a uint64 device array (asynchronous)."""
    kernel = _compile()
    out = cuda.device_array(p.rows, np.uint64)
    blocks = max(1, -(-p.rows // THREADS_PER_BLOCK))
    kernel[blocks, THREADS_PER_BLOCK](*p.args, p.tables[0], p.ins.datapath.k, *p.tables[1:], out)
    return out


def dot_add(ins, a, b, c, scale_a=None, scale_b=None, *, fault: bool = False) -> np.ndarray:
    """``golden.dot_add``'s bits computed on the GPU, for an instruction :func:`supports` takes
    (operands as :func:`prepare` takes them)."""
    out = launch(prepare(ins, a, b, c, scale_a, scale_b, fault=fault))
    return out.copy_to_host().astype(ins.datapath.d_format.dtype)
