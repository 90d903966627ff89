"""CDNA2's GPS compiled: f32 products and pairwise group sums with subnormals flushed, accumulated
in order from c, as ``algorithms.gps`` computes them with numpy's IEEE binary32 arithmetic."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import _common as C
from . import spec as S
from .fused import gather_indices, widths

_SIGN = np.uint32(0x80000000)
_EXP = np.uint32(0x7F800000)


@njit(**C.HOT)
def flush(x):
    """A binary32 below 2**-126 becomes a zero of its sign (``algorithms._flush_signed``)."""
    b = C.bits_from_f32(x)
    if (b & _EXP) == 0:
        return C.f32_from_bits(b & _SIGN)
    return x


@njit(**C.HOT)
def flushed(v, e, emin, tiny):
    """f32 value of an operand, subnormals and zeros as +0 (``algorithms._flushed_f32_table``)."""
    if e == C.ZERO_EXP or (e == emin and abs(v) < tiny):
        return np.float32(0.0)
    return np.float32(v)


@njit(**C.JIT)
def gps_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """Rows ``lo .. hi - 1`` of GPS with group ``prm[P_GROUP]``."""
    g = prm[S.P_GROUP]
    buf = np.empty(g, np.float32)
    IA = np.empty(K, np.int64)
    IB = np.empty(K, np.int64)
    wa, wb = widths(a), widths(b)
    oa, ob = fmts[S.A, C.TABLE_OFF], fmts[S.B, C.TABLE_OFF]          # GPS operands are tabled (spec)
    xa, xb = fmts[S.A, C.EXP_TAB_OFF], fmts[S.B, C.EXP_TAB_OFF]
    ma, mb = (np.int64(1) << fmts[S.A, C.VALUE_BITS]) - 1, (np.int64(1) << fmts[S.B, C.VALUE_BITS]) - 1
    emin_a, emin_b = fmts[S.A, C.EMIN], fmts[S.B, C.EMIN]
    tiny_a, tiny_b = C.pow2(emin_a), C.pow2(emin_b)
    for r in range(lo, hi):
        cv, _ = C.value_exp(fmts, vtab, etab, S.CF, C.load(c, isz[2], r))
        d = np.float32(cv)
        if (C.bits_from_f32(d) & _EXP) == 0:                     # c: subnormal (or -0) -> +0
            d = np.float32(0.0)
        gather_indices(wa, isz[0], r * K, order, 0, K, fmts[S.A, C.IGNORED_LOW], ma, IA)
        gather_indices(wb, isz[1], r * K, order, 0, K, fmts[S.B, C.IGNORED_LOW], mb, IB)
        for j in range(0, K, g):
            for t in range(g):
                x, y = IA[j + t], IB[j + t]
                av = flushed(np.float64(vtab[oa + x]), np.int64(etab[xa + x]), emin_a, tiny_a)
                bv = flushed(np.float64(vtab[ob + y]), np.int64(etab[xb + y]), emin_b, tiny_b)
                buf[t] = flush(av * bv)
            width = g
            while width > 1:                                     # (p0+p1)+(p2+p3), each add flushed
                width //= 2
                for t in range(width):
                    buf[t] = flush(buf[2 * t] + buf[2 * t + 1])
            d = flush(d + buf[0])
        bits = C.bits_from_f32(d)
        if (bits & ~_SIGN) > _EXP:
            bits = np.uint32(0x7FC00000)                          # every NaN is the canonical quiet NaN
        elif prm[S.P_FAULT] == 1 and (bits & _EXP) != _EXP:
            bits ^= np.uint32(1)                                  # the planted fault: the last rounding off by one ulp
        out[r] = np.uint64(bits)


@njit(parallel=True, **C.JIT)
def gps_parallel(nblocks, R, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    step = (R + nblocks - 1) // nblocks
    for i in prange(nblocks):
        gps_rows(i * step, min(R, i * step + step), a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out)
