"""AMD CDNA3's FDRDA and GFDRDA compiled (and their chains), step for step as
``algorithms.fdrda`` / ``algorithms.gfdrda``: products with AMD's overflow and the special outcome
of IV-F (or the later model's, ``Params.specials``), products aligned to their own maximum, the
round-down (or toward-zero) floors of docs/spec.md §4.4, RNE to f32.
"""

from __future__ import annotations

import math

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import spec as S
from .half import f32_of_bf16, f32_of_f16

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


# --------------------------------------------------------------------------- the block path
# A block of BLOCK rows goes through each step together, every step a loop over the block's rows
# (the compiler vectorises them): operands decoded row-major over contiguous memory, products,
# then per pass the products transposed to [t, row], their maxima and aligned sums, the merge
# with c and the rounding to f32 as float64 arithmetic on integer values (the numpy path's own
# numbers), the f32 rounding by the CPU's float64 -> float32 conversion (RNE, subnormals, overflow
# to infinity: round_to_format's RNE on an exact value).  A row whose special outcome is NaN or an
# infinity takes it at the end; a row outside what the block path models (an alignment shift
# outside float64's normal exponents) runs fdrda_pass alone.  Designs the block path does not take
# (the later model's specials, an output other than f32) run fdrda_pass per row.

BLOCK = 64
_INF_EXP = 0                  # algorithms' exponent of an infinity or NaN operand


@njit(**C.HOT)
def p2(n):
    """``2.0 ** n`` from its bits, for -1022 <= n <= 1023 (callers check the range)."""
    return C.f64_from_bits(np.uint64(n + 1023) << np.uint64(52))


@njit(**C.HOT)
def in_range(n):
    return -1022 <= n <= 1023


@njit(**C.HOT)
def field_value(x, mb, eb, bias, emin):
    """Value and exponent of an IEEE-style pattern ``x`` (int64) as ``algorithms._operand_table``
    holds them (zero: ZERO_EXP; infinity, NaN: 0): integer selects and one multiply."""
    emask = (np.int64(1) << eb) - 1
    m = x & ((np.int64(1) << mb) - 1)
    ef = (x >> mb) & emask
    normal = ef != 0
    sig = (m | (np.int64(1) << mb)) if normal else m
    e = ef - bias if normal else emin
    v = np.float64(sig) * p2(e - mb)
    v = -v if ((x >> (mb + eb)) & 1) == 1 else v
    xe = e if sig != 0 else np.int64(C.ZERO_EXP)
    if ef == emask:
        v = math.nan if m != 0 else v * math.inf
        xe = np.int64(_INF_EXP)
    return v, xe


@njit(**C.HOT)
def ieee_fields(fmts, f):
    """Formats :func:`field_value` reads: IEEE NaN/infinity, signed, subnormals, at most 16 bits."""
    return (fmts[f, C.NAN_KIND] == C.NAN_IEEE and fmts[f, C.SIGNED] == 1 and fmts[f, C.SUBNORMALS] == 1
            and fmts[f, C.IGNORED_LOW] == 0 and fmts[f, C.VALUE_BITS] <= 16)


@njit(**C.HOT)
def field_exp(x, mb, eb, bias, emin):
    """The exponent :func:`field_value` gives, alone (the value comes from the CPU's conversion)."""
    emask = (np.int64(1) << eb) - 1
    ef = (x >> mb) & emask
    e = ef - bias if ef != 0 else emin
    e = np.int64(C.ZERO_EXP) if (x & ((np.int64(1) << (mb + eb)) - 1)) == 0 else e
    return np.int64(_INF_EXP) if ef == emask else e


@njit(**C.HOT)
def hw_value(x, kind):
    """The exact value of an f16 (``kind`` 1: F16C's conversion) or bf16 (2: the f32 word's top
    half) pattern ``x`` (uint64), every class included."""
    return np.float64(f32_of_f16(x) if kind == 1 else f32_of_bf16(x))


@njit(**C.INLINE)
def fields_span(w, kind, mb, eb, bias, emin, vmask, n, V, X, mul):
    """:func:`operand_span` from the fields of ``w[:n]`` (one integer view); ``mul``: multiply
    into ``V`` and add into ``X`` (b's pass over a's values: the products in one sweep)."""
    if kind != 0 and mul:
        for e in range(n):
            x = np.uint64(w[e])
            V[e] *= hw_value(x, kind)
            X[e] += field_exp(np.int64(x) & vmask, mb, eb, bias, emin)
    elif kind != 0:
        for e in range(n):
            x = np.uint64(w[e])
            V[e] = hw_value(x, kind)
            X[e] = field_exp(np.int64(x) & vmask, mb, eb, bias, emin)
    else:
        for e in range(n):
            v, xe = field_value(np.int64(w[e]) & vmask, mb, eb, bias, emin)
            V[e] = V[e] * v if mul else v
            X[e] = X[e] + xe if mul else xe


@njit(**C.HOT)
def put(V, X, e, v, xe, mul):
    """``V[e], X[e] = v, xe``, or (``mul``) the product's value and exponent."""
    V[e] = V[e] * v if mul else v
    X[e] = X[e] + xe if mul else xe


@njit(**C.INLINE)
def operand_span(x, isz, fmts, vtab, etab, f, e0, n, V, X, mul):
    """``V[e], X[e]``: value and exponent of operand element ``e0 + e``, e < n (a block's rows,
    row-major), in the operand's own width (``mul``: multiplied into ``V``, added into ``X``): from
    the fields (f16, bf16: the CPU's conversions), the table (other narrow formats: fp8's 256
    entries gather faster than its fields decode, measured 1.5x) or ``_common.value_exp`` (TF32,
    f32).  Loops index slices from 0: numba checks an index like ``e0 + e`` for wraparound, which
    keeps a loop from vectorising (5x slower, measured)."""
    if ieee_fields(fmts, f) and isz in (2, 8):
        mb, eb, bias, emin = fmts[f, C.MAN_BITS], fmts[f, C.EXP_BITS], fmts[f, C.BIAS], fmts[f, C.EMIN]
        vmask = (np.int64(1) << fmts[f, C.VALUE_BITS]) - 1
        kind = 1 if (eb, mb, bias) == (5, 10, 15) else 2 if (eb, mb, bias) == (8, 7, 127) else 0
        if isz == 8:
            fields_span(x[:x.shape[0] - x.shape[0] % 8].view(np.uint64)[e0:e0 + n], kind, mb, eb, bias, emin,
                        vmask, n, V, X, mul)
        else:
            fields_span(x[:x.shape[0] - x.shape[0] % 2].view(np.uint16)[e0:e0 + n], kind, mb, eb, bias, emin,
                        vmask, n, V, X, mul)
    elif fmts[f, C.TABLE_OFF] >= 0:
        vt = vtab[fmts[f, C.TABLE_OFF]:]
        et = etab[fmts[f, C.EXP_TAB_OFF]:]
        sh, mask = fmts[f, C.IGNORED_LOW], (np.int64(1) << fmts[f, C.VALUE_BITS]) - 1
        if isz == 8:
            v8 = x[:x.shape[0] - x.shape[0] % 8].view(np.uint64)[e0:e0 + n]
            for e in range(n):
                j = np.int64(v8[e] >> np.uint64(sh)) & mask
                put(V, X, e, np.float64(vt[j]), np.int64(et[j]), mul)
        elif isz == 1:                     # fp8 in its own width: the bytes are the elements
            v1 = x[e0:e0 + n]
            for e in range(n):
                j = np.int64(v1[e] >> np.uint8(sh)) & mask
                put(V, X, e, np.float64(vt[j]), np.int64(et[j]), mul)
        else:
            for e in range(n):
                j = np.int64(C.load(x, isz, e0 + e) >> np.uint64(sh)) & mask
                put(V, X, e, np.float64(vt[j]), np.int64(et[j]), mul)
    else:
        for e in range(n):
            v, xe = C.value_exp(fmts, vtab, etab, f, C.load(x, isz, e0 + e))
            put(V, X, e, v, xe, mul)


@njit(**C.INLINE)
def c_span(c, isz, fmts, vtab, etab, r0, nb, cv, ce):
    """c's values and exponents for a block's first pass (an f32 c decoded in place)."""
    if fmts[S.CF, C.WORD32] == 1 and fmts[S.CF, C.IGNORED_LOW] == 0 and isz == 8:
        v8 = c[:c.shape[0] - c.shape[0] % 8].view(np.uint64)[r0:r0 + nb]
        for i in range(nb):
            cv[i], ce[i] = f32_value_exp(np.int64(v8[i] & np.uint64(0xFFFFFFFF)))
    elif fmts[S.CF, C.WORD32] == 1 and fmts[S.CF, C.IGNORED_LOW] == 0 and isz == 4:   # f32 c in its own width
        v4 = c[:c.shape[0] - c.shape[0] % 4].view(np.uint32)[r0:r0 + nb]
        for i in range(nb):
            cv[i], ce[i] = f32_value_exp(np.int64(v4[i]))
    else:
        for i in range(nb):
            cv[i], ce[i] = C.value_exp(fmts, vtab, etab, S.CF, C.load(c, isz, r0 + i))


@njit(**C.INLINE)
def set_dot_block(PT, ET, nb, t0, L, step, F, s, e, has, ok):
    """``_set_dot`` over products ``t0, t0 + step, ...`` of the pass, for each row of the block."""
    for i in range(nb):
        e[i] = np.int64(-(1 << 40))
    for t in range(t0, L, step):
        Et = ET[t]
        for i in range(nb):
            e[i] = max(e[i], Et[i])
    for i in range(nb):
        has[i] = e[i] > C.NO_TERM
        e[i] = e[i] if has[i] else np.int64(C.PARKED)
        ok[i] &= in_range(F - e[i])
        s[i] = 0.0
    for t in range(t0, L, step):
        Pt = PT[t]
        for i in range(nb):
            s[i] += C.ftrunc(Pt[i] * p2(F - e[i]))


@njit(**C.INLINE)
def special_block(PT, nb, L, cv, overflows, sp, dot, hit):
    """Each row's special outcome (``_amd_products``, the paper's order): the IEEE sum of the
    products and c; where that is finite and a product reaches 2**128, the sum of the products
    with those made infinite.  Only NaN, +inf, -inf or finite matters, which no order changes."""
    for i in range(nb):
        sp[i] = cv[i]
        dot[i] = 0.0
        hit[i] = False
    for t in range(L):
        Pt = PT[t]
        for i in range(nb):
            sp[i] += Pt[i]
    if overflows:
        for t in range(L):
            Pt = PT[t]
            for i in range(nb):
                big = abs(Pt[i]) >= OVERFLOW
                hit[i] |= big
                dot[i] += math.copysign(math.inf, Pt[i]) if big else Pt[i]
        for i in range(nb):
            if hit[i] and math.isfinite(sp[i]):
                sp[i] = dot[i]


@njit(**C.HOT)
def floor_p2(x, n, rd):
    """``floor(x * 2**n)`` (``trunc`` unless ``rd``), n in float64's normal exponents."""
    y = x * p2(n)
    return C.ffloor(y) if rd else C.ftrunc(y)


@njit(**C.HOT)
def merge_row(s_dot, e_dot, has, dot_frac, cv, ce, sp, dfb, cfb, ffb, rd, c_drop, nan_bits, inf_bits, fault):
    """``_merge_with_c`` and ``_finish`` for one row, f32 output (paper specials): d's bits and
    whether every shift stayed in float64's normal exponents (else the row runs fdrda_pass).
    ``fault``: the test-only planted fault, an inexact rounding one ulp off."""
    ce = np.int64(-126) if ce <= C.NO_TERM else ce
    e_max = max(e_dot, ce) if has else ce
    n1, n2 = dfb - dot_frac - (e_max - e_dot), cfb - e_max
    ok = in_range(n1) and in_range(n2)
    D = floor_p2(s_dot, n1, rd) if has else 0.0
    Cc = floor_p2(cv, n2, rd)
    if c_drop != S.NO_C_DROP and ce < e_max - c_drop and math.isfinite(cv):
        Cc = 0.0
    T = D + Cc * p2(dfb - cfb)
    Tf = T if math.isfinite(T) else 0.0
    lsb = e_max - dfb
    bl = np.int64((C.bits_from_f64(abs(Tf)) >> np.uint64(52)) & np.uint64(0x7FF)) - 1022 if Tf != 0 else np.int64(0)
    e_n = max(lsb + bl - 1, -126)
    n3, n4 = lsb - (e_n - ffb), e_n - ffb
    ok = ok and in_range(n3) and in_range(n4) and abs(Tf) < 2.0 ** 53
    Tn = floor_p2(Tf, n3, rd)
    exact = Tn * p2(n4)
    rounded = np.float32(exact)
    d = np.uint64(C.bits_from_f32(rounded))
    if fault and np.float64(rounded) != exact and math.isfinite(rounded):
        d ^= np.uint64(1)
    if math.isnan(sp):
        d = nan_bits
    elif math.isinf(sp):
        d = inf_bits | (np.uint64(0x80000000) if sp < 0 else np.uint64(0))
    return d, ok


@njit(**C.INLINE)
def grouped_dot(s, e, has, s_o, e_o, has_o, nb, F, m, rd, ok):
    """GFDRDA: the even and odd sums merged at ``m`` fraction bits (``algorithms.gfdrda``), into
    ``s, e, has``."""
    for i in range(nb):
        ee = e[i] if has[i] else np.int64(C.PARKED)
        eo = e_o[i] if has_o[i] else np.int64(C.PARKED)
        ed = max(ee, eo)
        n_e, n_o = m - F - (ed - ee), m - F - (ed - eo)
        ok[i] &= (not has[i] or in_range(n_e)) and (not has_o[i] or in_range(n_o))
        s[i] = (floor_p2(s[i], n_e, rd) if has[i] else 0.0) + (floor_p2(s_o[i], n_o, rd) if has_o[i] else 0.0)
        e[i] = ed
        has[i] = has[i] or has_o[i]


@njit(**C.INLINE)
def pass_block(PT, ET, nb, L, cv, ce, fmts, prm, overflows, grouped, Fs, Is, Bs, dout, ok):
    """One FDRDA/GFDRDA pass for every row of a block: ``dout[i]`` d's bits, ``ok[i]`` False where
    the row must run :func:`fdrda_pass` instead.  ``Fs, Is, Bs``: float, int and bool scratch."""
    F, rd = prm[S.P_F], prm[S.P_FLOOR_RD] == 1
    s, s_o, sp, dot = Fs[0], Fs[1], Fs[2], Fs[3]
    e, e_o = Is[0], Is[1]
    has, has_o, hit = Bs[0], Bs[1], Bs[2]
    for i in range(nb):
        ok[i] = True
    special_block(PT, nb, L, cv, overflows, sp, dot, hit)
    dot_frac = F
    if grouped:
        set_dot_block(PT, ET, nb, 0, L, 2, F, s, e, has, ok)
        set_dot_block(PT, ET, nb, 1, L, 2, F, s_o, e_o, has_o, ok)
        dot_frac = prm[S.P_MERGEFB]
        grouped_dot(s, e, has, s_o, e_o, has_o, nb, F, dot_frac, rd, ok)
    else:
        set_dot_block(PT, ET, nb, 0, L, 1, F, s, e, has, ok)
    dfb, cfb, ffb, c_drop = prm[S.P_DOTFB], prm[S.P_CFB], prm[S.P_FINFB], prm[S.P_CDROP]
    nan_bits, inf_bits = np.uint64(fmts[S.D, C.NAN_BITS]), np.uint64(fmts[S.D, C.INF_BITS])
    zpos, fault = prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1
    for i in range(nb):
        d, good = merge_row(s[i], e[i], has[i], dot_frac, cv[i], ce[i], sp[i], dfb, cfb, ffb, rd, c_drop,
                            nan_bits, inf_bits, fault)
        dout[i] = np.uint64(0) if zpos and d == np.uint64(0x80000000) else d
        ok[i] &= good


@njit(**C.HOT)
def block_path(fmts, prm):
    """Whether a design's passes take :func:`pass_block`: f32 output at its own precision and the
    paper's specials (else every row runs :func:`fdrda_pass`)."""
    return (fmts[S.D, C.WORD32] == 1 and fmts[S.D, C.IGNORED_LOW] == 0 and prm[S.P_FRAC] < 0
            and prm[S.P_LATER] == 0)


@njit(**C.JIT)
def fdrda_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """Rows ``lo .. hi - 1`` of FDRDA or GFDRDA, chains included, :data:`BLOCK` rows at a time."""
    L = prm[S.P_L]
    grouped = prm[S.P_BASE] == S.GFDRDA_CODE
    overflows = fmts[S.A, C.EMAX] + 1 + fmts[S.B, C.EMAX] + 1 >= 128 and prm[S.P_PROD_OVER] == 1
    fast = block_path(fmts, prm)
    BL = BLOCK
    Va, Xa = np.empty(BL * K), np.empty(BL * K, np.int64)
    PT, ET = np.empty((L, BL)), np.empty((L, BL), np.int64)
    Fs, Is, Bs = np.empty((4, BL)), np.empty((2, BL), np.int64), np.empty((3, BL), np.bool_)
    cv, ce, dout, ok = np.empty(BL), np.empty(BL, np.int64), np.empty(BL, np.uint64), np.empty(BL, np.bool_)
    P, E = np.empty(L), np.empty(L, np.int64)
    caller_fp = C.ieee_mode()     # float64 arithmetic whatever the caller's mode
    for r0 in range(lo, hi, BL):
        nb = min(BL, hi - r0)
        n = nb * K
        operand_span(a, isz[0], fmts, vtab, etab, S.A, r0 * K, n, Va, Xa, False)     # row-major, contiguous
        operand_span(b, isz[1], fmts, vtab, etab, S.B, r0 * K, n, Va, Xa, True)      # the products
        c_span(c, isz[2], fmts, vtab, etab, r0, nb, cv, ce)
        for j in range(0, K, L):
            for t in range(L):                       # the pass's products, transposed to [t, row]
                col_v, col_x = Va[order[j + t]::K], Xa[order[j + t]::K]
                Pt, Et = PT[t], ET[t]
                for i in range(nb):
                    Pt[i] = col_v[i]
                    Et[i] = col_x[i]
            if fast:
                pass_block(PT, ET, nb, L, cv, ce, fmts, prm, overflows, grouped, Fs, Is, Bs, dout, ok)
            for i in range(nb):
                if not (fast and ok[i]):
                    for t in range(L):
                        P[t], E[t] = PT[t, i], ET[t, i]
                    dout[i] = fdrda_pass(P, E, L, cv[i], ce[i], fmts, prm, overflows, grouped)
            for i in range(nb):
                out[r0 + i] = dout[i]
            if j + L < K:
                chain_c(fmts, vtab, etab, dout, nb, cv, ce)
    C.set_fp_control(caller_fp)


@njit(**C.HOT)
def f32_value_exp(w):
    """``_common.word32_value_exp`` of the word ``w`` (int64) without early returns (vectorises)."""
    ef = (w >> 23) & 0xFF
    e = ef - 127 if ef != 0 else np.int64(-126)
    e = np.int64(C.ZERO_EXP) if (w & 0x7FFFFFFF) == 0 else e
    return np.float64(C.f32_from_bits(np.uint32(w))), (np.int64(0) if ef == 255 else e)


@njit(**C.INLINE)
def chain_c(fmts, vtab, etab, d, nb, cv, ce):
    """The next pass's c: d's values and exponents (an f32 d decoded in place)."""
    if fmts[S.D, C.WORD32] == 1 and fmts[S.D, C.IGNORED_LOW] == 0:
        for i in range(nb):
            cv[i], ce[i] = f32_value_exp(np.int64(d[i] & np.uint64(0xFFFFFFFF)))
    else:
        for i in range(nb):
            cv[i], ce[i] = C.value_exp(fmts, vtab, etab, S.D, d[i])
