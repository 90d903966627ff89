"""CDNA2's GPS compiled: f32 products and pairwise group sums with subnormals flushed, accumulated
in order from c, as ``algorithms.gps`` computes them with numpy's IEEE binary32 arithmetic."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import _common as C
from . import spec as S
from .fused import BLOCK_ROWS, gather_column, widths

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


@njit(**C.INLINE)
def flushed_column(IX, nb, off, xoff, emin, tiny, vtab, etab, out):
    """``out[i]``: operand ``IX[i]``'s f32 value, subnormals and zeros +0, across a block's rows."""
    for i in range(nb):
        x = IX[i]
        out[i] = flushed(np.float64(vtab[off + x]), np.int64(etab[xoff + x]), emin, tiny)


@njit(**C.JIT)
def gps_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """Rows ``lo .. hi - 1`` of GPS with group ``prm[P_GROUP]``, a block of rows at a time (every
    step is one IEEE binary32 operation per row, run across the block)."""
    g = prm[S.P_GROUP]
    BL = BLOCK_ROWS
    buf = np.empty((g, BL), np.float32)
    av = np.empty(BL, np.float32)
    bv = np.empty(BL, np.float32)
    d = np.empty(BL, np.float32)
    IA = np.empty(BL, np.int64)
    IB = np.empty(BL, np.int64)
    wa, wb = widths(a), widths(b)
    oa, ob = fmts[S.A, C.TABLE_OFF], fmts[S.B, C.TABLE_OFF]          # GPS operands are tabled (spec)
    xa, xb = fmts[S.A, C.EXP_TAB_OFF], fmts[S.B, C.EXP_TAB_OFF]
    ma, mb = (np.int64(1) << fmts[S.A, C.VALUE_BITS]) - 1, (np.int64(1) << fmts[S.B, C.VALUE_BITS]) - 1
    emin_a, emin_b = fmts[S.A, C.EMIN], fmts[S.B, C.EMIN]
    tiny_a, tiny_b = C.pow2(emin_a), C.pow2(emin_b)
    fault = prm[S.P_FAULT] == 1
    for r0 in range(lo, hi, BL):
        nb = min(BL, hi - r0)
        for i in range(nb):
            cv, _ = C.value_exp(fmts, vtab, etab, S.CF, C.load(c, isz[2], r0 + i))
            x = np.float32(cv)
            d[i] = np.float32(0.0) if (C.bits_from_f32(x) & _EXP) == 0 else x    # c: subnormal (or -0) -> +0
        for j in range(0, K, g):
            for t in range(g):
                gather_column(wa, isz[0], r0, K, order[j + t], nb, fmts[S.A, C.IGNORED_LOW], ma, IA)
                gather_column(wb, isz[1], r0, K, order[j + t], nb, fmts[S.B, C.IGNORED_LOW], mb, IB)
                flushed_column(IA, nb, oa, xa, emin_a, tiny_a, vtab, etab, av)
                flushed_column(IB, nb, ob, xb, emin_b, tiny_b, vtab, etab, bv)
                row = buf[t]
                for i in range(nb):
                    row[i] = flush(av[i] * bv[i])
            width = g
            while width > 1:                                     # (p0+p1)+(p2+p3), each add flushed
                width //= 2
                for t in range(width):
                    lo_, hi_, dst = buf[2 * t], buf[2 * t + 1], buf[t]
                    for i in range(nb):
                        dst[i] = flush(lo_[i] + hi_[i])
            first = buf[0]
            for i in range(nb):
                d[i] = flush(d[i] + first[i])
        for i in range(nb):
            bits = C.bits_from_f32(d[i])
            if (bits & ~_SIGN) > _EXP:
                bits = np.uint32(0x7FC00000)                      # every NaN is the canonical quiet NaN
            elif fault and (bits & _EXP) != _EXP:
                bits ^= np.uint32(1)                              # the planted fault: the last rounding off by one ulp
            out[r0 + i] = np.uint64(bits)


@njit(parallel=True, **C.JIT)
def gps_parallel(nblocks, R, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    step = (R + nblocks - 1) // nblocks
    for i in prange(nblocks):
        gps_rows(i * step, min(R, i * step + step), a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out)
