"""SFMA compiled: sequential IEEE fused multiply-adds with the CPU's fma (LLVM's ``llvm.fma``:
one rounding, RNE, subnormals kept), binary64 and binary32.  The dispatcher checks once that the
compiled fma is correctly rounded on cases a separate multiply and add get wrong
(:func:`fma_is_exact`); where it is not, SFMA stays on the numpy path's error-free
transformations (``golden.fma``)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import _common as C
from . import spec as S
from .fused import gather_indices, widths

NAN64 = np.uint64(0x7FF8000000000000)      # golden.fma's canonical NaNs
NAN32 = np.uint32(0x7FC00000)


@njit(**C.HOT)
def sfma64_row(IA, IB, cbits, K):
    d = C.f64_from_bits(cbits)
    for k in range(K):
        d = C.fma64(C.f64_from_bits(np.uint64(IA[k])), C.f64_from_bits(np.uint64(IB[k])), d)
    bits = C.bits_from_f64(d)
    return NAN64 if d != d else bits


@njit(**C.HOT)
def sfma32_row(IA, IB, cbits, K):
    d = C.f32_from_bits(np.uint32(cbits))
    for k in range(K):
        d = C.fma32(C.f32_from_bits(np.uint32(IA[k])), C.f32_from_bits(np.uint32(IB[k])), d)
    return np.uint64(NAN32 if d != d else C.bits_from_f32(d))


@njit(**C.JIT)
def sfma_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """Rows ``lo .. hi - 1``; d's format (f64 or f32) from the format table's d row."""
    wide = fmts[S.D, C.EXP_BITS] == 11
    fault = prm[S.P_FAULT] == 1
    IA = np.empty(K, np.int64)
    IB = np.empty(K, np.int64)
    wa, wb = widths(a), widths(b)
    for r in range(lo, hi):
        gather_indices(wa, isz[0], r * K, order, 0, K, 0, -1, IA)       # the raw bits, in their width
        gather_indices(wb, isz[1], r * K, order, 0, K, 0, -1, IB)
        cbits = C.load(c, isz[2], r)
        d = sfma64_row(IA, IB, cbits, K) if wide else sfma32_row(IA, IB, cbits, K)
        if fault and d != (NAN64 if wide else np.uint64(NAN32)):
            d ^= np.uint64(1)                                     # the planted fault: the last rounding off by one ulp
        out[r] = d


@njit(parallel=True, **C.JIT)
def sfma_parallel(nblocks, R, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    step = (R + nblocks - 1) // nblocks
    for i in prange(nblocks):
        sfma_rows(i * step, min(R, i * step + step), a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out)


@njit(**C.JIT)
def _fma_cases(x, y, z):
    out = np.empty(len(x))
    for i in range(len(x)):
        out[i] = C.fma64(x[i], y[i], z[i])
    return out


def fma_is_exact() -> bool:
    """Whether the compiled fma rounds once: ``(1 + 2**-52) * (1 - 2**-52) - 1`` is ``-2**-104``
    exactly (a multiply then an add gives 0), and a product's low bits decide a tie."""
    x = np.array([1 + 2.0 ** -52, 1 + 2.0 ** -30, 2.0 ** -1070])
    y = np.array([1 - 2.0 ** -52, 1 + 2.0 ** -23, 2.0 ** 60])
    z = np.array([-1.0, -1.0, 2.0 ** -1020])
    want = np.array([-2.0 ** -104, 2.0 ** -30 + 2.0 ** -23 + 2.0 ** -53, 2.0 ** -1010 + 2.0 ** -1020])
    return bool((_fma_cases(x, y, z) == want).all())
