"""AMD CDNA3's FDRDA and GFDRDA compiled (and their chains), step for step as
``algorithms.fdrda`` / ``algorithms.gfdrda``: products with AMD's overflow and the special outcome
of IV-F (or the later model's, ``Params.specials``), products aligned to their own maximum, the
round-down (or toward-zero) floors of docs/spec.md §4.4, RNE to f32.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from . import _common as C
from . import spec as S
from .fused import BLOCK_ROWS, block_scratch, chain, column, fill_block, first_c

NONFINITE_C_EXP = -1          # algorithms.NONFINITE_C_EXP
OVERFLOW = 2.0 ** 128


@njit(**C.INLINE)
def floor_scaled(x, log2_scale, rd):
    s = C.ldexp(x, log2_scale)
    return C.ffloor(s) if rd else C.ftrunc(s)


@njit(**C.INLINE)
def amd_products(P, E, L, cv, prm, overflows):
    """``algorithms._amd_products`` in place on ``P``: returns ``(special, dot_special)``."""
    special = 0.0
    for t in range(L):
        special += P[t]
    special += cv
    if prm[S.P_PROD_OVER] == 1 and overflows:
        hit = False
        for t in range(L):
            if abs(P[t]) >= OVERFLOW:
                P[t] = math.copysign(math.inf, P[t])
                hit = True
        if hit:
            dot = 0.0
            for t in range(L):
                dot += P[t]
            if prm[S.P_LATER] == 1:
                special = dot + cv                     # one IEEE sum: NaN where the infinities meet
            elif math.isfinite(special):
                special = dot                          # step 3: only now do overflowed products decide
    dot_special = 0.0
    for t in range(L):
        dot_special += P[t]
    return special, dot_special


@njit(**C.INLINE)
def set_dot(P, E, lo, hi, step, F):
    """``algorithms._set_dot`` over ``P[lo:hi:step]``: ``(s, e, has)``."""
    e = np.int64(-(1 << 40))
    for t in range(lo, hi, step):
        e = max(e, E[t])
    has = e > C.NO_TERM
    if not has:
        e = np.int64(C.PARKED)
    scale = C.pow2(F - e)
    s = 0.0
    for t in range(lo, hi, step):
        s += C.ftrunc(P[t] * scale)
    return s, e, has


@njit(**C.INLINE)
def merge_with_c(fmts, prm, s_dot, e_dot, has_dot, dot_frac, cv, ce, special, dot_special):
    """``algorithms._merge_with_c``: FDRDA steps 6-8, d's bits."""
    rd = prm[S.P_FLOOR_RD] == 1
    later = prm[S.P_LATER] == 1
    c_drop = prm[S.P_CDROP]
    dfb, cfb, ffb = prm[S.P_DOTFB], prm[S.P_CFB], prm[S.P_FINFB]
    if ce <= C.NO_TERM:
        ce = np.int64(-126)                                       # a zero c keeps the exponent -126
    if later and c_drop != S.NO_C_DROP and not math.isfinite(cv):
        ce = np.int64(NONFINITE_C_EXP)
    e_max = max(e_dot, ce) if has_dot else ce
    D = floor_scaled(s_dot, dfb - dot_frac - (e_max - e_dot), rd) if has_dot else 0.0
    Cc = floor_scaled(cv, cfb - e_max, rd)
    if c_drop != S.NO_C_DROP:
        drop = ce < e_max - c_drop
        if later:
            if drop and not math.isfinite(cv):
                special = dot_special
        else:
            drop = drop and math.isfinite(cv)
        if drop:
            Cc = 0.0
    T = D + C.ldexp(Cc, dfb - cfb)
    Tf = T if math.isfinite(T) else 0.0
    ints = np.int64(Tf)
    lsb = e_max - dfb
    e_n = max(lsb + C.bit_length(abs(ints)) - 1, -126)
    Tn = floor_scaled(Tf, lsb - (e_n - ffb), rd)
    return C.finish(fmts, S.D, Tn, special, e_n - ffb, C.RNE, prm[S.P_FRAC], prm[S.P_OVERFLOW],
                    prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1)


@njit(**C.INLINE)
def fdrda_pass(P, E, L, cv, ce, fmts, prm, overflows, grouped):
    special, dot_special = amd_products(P, E, L, cv, prm, overflows)
    F = prm[S.P_F]
    if not grouped:
        s, e, has = set_dot(P, E, 0, L, 1, F)
        return merge_with_c(fmts, prm, s, e, has, F, cv, ce, special, dot_special)
    s_e, e_e, has_e = set_dot(P, E, 0, L, 2, F)
    s_o, e_o, has_o = set_dot(P, E, 1, L, 2, F)
    has = has_e or has_o
    e_dot = max(e_e if has_e else C.PARKED, e_o if has_o else C.PARKED)
    m = prm[S.P_MERGEFB]
    rd = prm[S.P_FLOOR_RD] == 1
    s_dot = ((floor_scaled(s_e, m - F - (e_dot - e_e), rd) if has_e else 0.0) +
             (floor_scaled(s_o, m - F - (e_dot - e_o), rd) if has_o else 0.0))
    return merge_with_c(fmts, prm, s_dot, e_dot, has, m, cv, ce, special, dot_special)


@njit(**C.JIT)
def fdrda_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """Rows ``lo .. hi - 1`` of FDRDA or GFDRDA, chains included."""
    L = prm[S.P_L]
    grouped = prm[S.P_BASE] == S.GFDRDA_CODE
    overflows = fmts[S.A, C.EMAX] + 1 + fmts[S.B, C.EMAX] + 1 >= 128
    P, E, IA, IB, wa, wb, Pm, Em, cv, ce = block_scratch(L, a, b)
    for r0 in range(lo, hi, BLOCK_ROWS):          # products a block of rows at a time (fused.fill_block)
        nb = min(BLOCK_ROWS, hi - r0)
        first_c(fmts, vtab, etab, c, isz, r0, nb, cv, ce)
        for j in range(0, K, L):
            fill_block(a, b, wa, wb, isz, fmts, vtab, etab, r0, nb, K, order, j, L, Pm, Em, IA, IB)
            for i in range(nb):
                column(Pm, Em, i, L, P, E)
                chain(out, r0, i, fdrda_pass(P, E, L, cv[i], ce[i], fmts, prm, overflows, grouped),
                      fmts, vtab, etab, cv, ce)


@njit(parallel=True, **C.JIT)
def fdrda_parallel(nblocks, R, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    step = (R + nblocks - 1) // nblocks
    for i in prange(nblocks):
        fdrda_rows(i * step, min(R, i * step + step), a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out)
