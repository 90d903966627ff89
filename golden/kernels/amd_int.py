"""CDNA3's FDRDA and GFDRDA (and their chains) in integer lanes, a block of rows at a time: the
fast path of :mod:`amd`.

Every number ``algorithms.fdrda`` computes is an integer times a power of two: a product is
``sig_a * sig_b`` at exponent ``e_a + e_b``, its alignment ``trunc(p * 2**(F - e))`` a right shift
of its magnitude, the round-down floors of docs/spec.md §4.4 arithmetic right shifts of two's
complement integers (``floor(x / 2**k)`` is ``x >> k``), and only the final RNE to f32 goes
through float64 (the CPU's float64 -> float32 conversion on an exact value, as :mod:`amd`'s block
path does).  Operands are decoded from their fields in their own width (f16, bf16, TF32, fp8).

NaN and infinities never take a branch per product: each product is classified (NaN, +inf, -inf
as IEEE float64 arithmetic combines the inputs; overflowed, ``|p| >= 2**128``, with its sign) and
a pass's special outcome is the paper's (IV-F): the inputs' classes and c first, overflowed
products only where those leave it finite.  A design outside what this path models
(:func:`int_design`) runs :func:`amd.fdrda_rows` whole.
"""

from __future__ import annotations

import math

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import amd
from . import spec as S
from .fused_int import (
    D_BIAS,
    D_MB,
    _widths,
    classes_in_place,
    classify,
    ctlz64,
    decode_in_place,
    decode_row,
    widen,
)

BL = 1024                      # rows carried through each step together, at most
BLOCK_ELEMENTS = 16384         # ... and at most this many products (their int64 lanes stay in L2); blocks
                               # of 64 rows measured 1.3x slower on f16 (each block's fixed costs)
NEG = -(1 << 24)               # the exponent of a zero or special product: below every real one
NAN_F, PINF_F, NINF_F, OVP_F, OVN_F = 1, 2, 4, 8, 16     # a product's (and a pass's) class bits
OVER_EXP = 128                 # |p| >= 2**OVER_EXP overflows (docs/spec.md §4.4)
MAX_SHIFT = 63                 # right shifts clamp here: an int64 shifted by 63 is its sign


@njit(**C.INLINE)
def int_design(fmts, prm):
    """Whether this path computes the design: :func:`amd.block_path`'s designs (f32 d, the
    paper's specials) with signed a and b formats that have subnormals and at most 16 significant
    bits, an f32 c, floor widths that keep every integer in its int64 lane, and GFDRDA's passes
    in product pairs."""
    if not amd.block_path(fmts, prm):
        return False
    for f in (S.A, S.B):
        if (fmts[f, C.SIGNED] != 1 or fmts[f, C.SUBNORMALS] != 1 or fmts[f, C.MAN_BITS] > 15
                or fmts[f, C.EMIN] != 1 - fmts[f, C.BIAS]):
            return False
    if fmts[S.CF, C.WORD32] != 1 or fmts[S.CF, C.IGNORED_LOW] != 0 or prm[S.P_SCALED] != 0:
        return False
    F, dfb, cfb, ffb, m = prm[S.P_F], prm[S.P_DOTFB], prm[S.P_CFB], prm[S.P_FINFB], prm[S.P_MERGEFB]
    return (0 <= F <= 40 and 0 <= cfb <= dfb <= 40 and 0 <= m <= 40 and 0 <= ffb <= 50 and prm[S.P_L] <= 64
            and (prm[S.P_BASE] != S.GFDRDA_CODE or prm[S.P_L] % 2 == 0)
            and F - fmts[S.A, C.MAN_BITS] - fmts[S.B, C.MAN_BITS] <= 40)


@njit(**C.INLINE)
def mark_overflows(M, E, CL, n, G, mbab, special):
    """Class bits of the products that overflow (``|p| >= 2**128``, with their sign) into ``CL``
    (zeroed first unless ``special``: then it holds the NaN/inf classes, whose products never
    overflow).  ``M``: significand products pre-shifted left by ``G``."""
    for u in range(n):
        x = M[u]
        hb = 63 - ctlz64(abs(x)) - G
        over = np.int64(x != 0) & np.int64(hb + E[u] - mbab >= OVER_EXP)
        cl = CL[u] if special else np.int64(0)
        over &= np.int64(cl == 0)
        CL[u] = cl | (over * (OVN_F if x < 0 else OVP_F))


# The catalog's operand formats as decode rows (fused_int.decode_row: ignored low bits, value mask,
# mantissa bits, exponent mask, sign shift, bias, NaN class mask and value, whether it has infinities):
# decoded with these as compile-time constants (decode_literal), measured 2x faster than from the row
F16_ROW = (0, 0xFFFF, 10, 31, 15, 15, 0x7C00, 0x7C00, 1)
BF16_ROW = (0, 0xFFFF, 7, 255, 15, 127, 0x7F80, 0x7F80, 1)
E4M3FNUZ_ROW = (0, 0xFF, 3, 15, 7, 8, 0xFF, 0x80, 0)
E5M2FNUZ_ROW = (0, 0xFF, 2, 31, 7, 16, 0xFF, 0x80, 0)
LITERAL_ROWS = np.array([F16_ROW, BF16_ROW, E4M3FNUZ_ROW, E5M2FNUZ_ROW], np.int64)
F16_LIT, BF16_LIT, E4M3_LIT, E5M2_LIT = range(4)


@njit(**C.HOT)
def literal_of(dr):
    """Which of :data:`LITERAL_ROWS` the decode row ``dr`` is (-1: none)."""
    return C.table_row(LITERAL_ROWS, dr)


@njit(**C.HOT)
def decode_literal(va, vb, start, n, G, bab, M, E, ra, rb):
    """:func:`fused_int.decode_in_place` with the formats' fields as arguments the callers give as
    constant tuples ``ra, rb`` (inlined: the compiler folds them)."""
    ia, xa, ma, ea, sa, _, na, nva, _ = ra
    ib, xb, mb, eb, sb, _, nb_, nvb, _ = rb
    a, b = va[start:start + n], vb[start:start + n]
    mma, mmb = (np.int64(1) << ma) - 1, (np.int64(1) << mb) - 1
    maybe = np.int64(0)
    for u in range(n):
        x = (np.int64(a[u]) >> ia) & xa
        y = (np.int64(b[u]) >> ib) & xb
        fa = (x >> ma) & ea
        fb = (y >> mb) & eb
        ga = (x & mma) | (np.int64(fa != 0) << ma)
        gb = (y & mmb) | (np.int64(fb != 0) << mb)
        maybe |= np.int64(((x & na) == nva) | ((y & nb_) == nvb))
        m = (ga * gb) << G
        E[u] = NEG if m == 0 else max(fa, 1) + max(fb, 1) + bab
        M[u] = -m if ((x >> sa) ^ (y >> sb)) & 1 else m
    return maybe != 0


@njit(**C.HOT)
def decode_classes_literal(va, vb, start, n, G, bab, M, E, CL, ra, rb):
    """:func:`decode_literal` and the products' NaN/inf classes (:func:`fused_int.classes_in_place`)
    in one loop, for a block with special patterns."""
    ia, xa, ma, ea, sa, _, na, nva, infa = ra
    ib, xb, mb, eb, sb, _, nb_, nvb, infb = rb
    a, b = va[start:start + n], vb[start:start + n]
    mma, mmb = (np.int64(1) << ma) - 1, (np.int64(1) << mb) - 1
    zma, zmb = (np.int64(1) << sa) - 1, (np.int64(1) << sb) - 1
    maybe = np.int64(0)
    for u in range(n):
        x = (np.int64(a[u]) >> ia) & xa
        y = (np.int64(b[u]) >> ib) & xb
        fa = (x >> ma) & ea
        fb = (y >> mb) & eb
        ga = (x & mma) | (np.int64(fa != 0) << ma)
        gb = (y & mmb) | (np.int64(fb != 0) << mb)
        m = (ga * gb) << G
        neg = ((x >> sa) ^ (y >> sb)) & 1
        E[u] = NEG if m == 0 else max(fa, 1) + max(fb, 1) + bab
        M[u] = -m if neg else m
        nan_a, inf_a = classify(x, x & mma, na, nva, infa)
        nan_b, inf_b = classify(y, y & mmb, nb_, nvb, infb)
        nan = nan_a | nan_b | (inf_a & np.int64((y & zmb) == 0)) | (inf_b & np.int64((x & zma) == 0))
        inf = (inf_a | inf_b) & (nan ^ 1)
        cl = nan | (inf << (1 + neg))
        maybe |= cl | nan_a | nan_b | inf_a | inf_b
        CL[u] = cl
    return maybe != 0


@njit(**C.HOT)
def decode_pair(va, vb, start, n, G, bab, M, E, CL, ra, rb, hint):
    """:func:`decode_literal`, and :func:`decode_classes_literal` where a special pattern is among
    them, or at once where ``hint`` (the block before had one: bits rows have one in most blocks)."""
    if not hint and not decode_literal(va, vb, start, n, G, bab, M, E, ra, rb):
        return False
    return decode_classes_literal(va, vb, start, n, G, bab, M, E, CL, ra, rb)


@njit(**C.INLINE)
def decode_generic(va, vb, start, n, da, db, G, bab, M, E, CL):
    """:func:`fused_int.decode_in_place` and, where a special pattern is among them,
    :func:`fused_int.classes_in_place`: returns whether it is."""
    special = decode_in_place(va, vb, start, n, da, db, G, bab, M, E)
    if special:
        classes_in_place(va, vb, start, n, da, db, CL)
    return special


@njit(**C.INLINE)
def decode_block(wa, wb, isz, start, n, da, db, ka, kb, G, bab, XA, XB, M, E, CL, hint):
    """A block's products and their NaN/inf classes where a special pattern is among them,
    operands read where they lie in their own width: returns whether it is.  The catalog's
    16-bit and 8-bit format pairs (``ka, kb``: :func:`literal_of` their decode rows) through
    :func:`decode_pair` in the width they come in (each pair compiled once: per width and pair
    they tripled the kernel's first compile); the others :func:`decode_generic`."""
    if isz[0] == isz[1] == 2:
        va, vb = wa[1], wb[1]
        if ka == kb == F16_LIT:
            return decode_pair(va, vb, start, n, G, bab, M, E, CL, F16_ROW, F16_ROW, hint)
        if ka == kb == BF16_LIT:
            return decode_pair(va, vb, start, n, G, bab, M, E, CL, BF16_ROW, BF16_ROW, hint)
        return decode_generic(va, vb, start, n, da, db, G, bab, M, E, CL)
    if isz[0] == isz[1] == 1:
        va, vb = wa[0], wb[0]
        if ka == kb == E4M3_LIT:
            return decode_pair(va, vb, start, n, G, bab, M, E, CL, E4M3FNUZ_ROW, E4M3FNUZ_ROW, hint)
        if ka == E4M3_LIT and kb == E5M2_LIT:
            return decode_pair(va, vb, start, n, G, bab, M, E, CL, E4M3FNUZ_ROW, E5M2FNUZ_ROW, hint)
        if ka == E5M2_LIT and kb == E4M3_LIT:
            return decode_pair(va, vb, start, n, G, bab, M, E, CL, E5M2FNUZ_ROW, E4M3FNUZ_ROW, hint)
        if ka == kb == E5M2_LIT:
            return decode_pair(va, vb, start, n, G, bab, M, E, CL, E5M2FNUZ_ROW, E5M2FNUZ_ROW, hint)
        return decode_generic(va, vb, start, n, da, db, G, bab, M, E, CL)
    widen(wa, isz[0], start, n, XA)
    widen(wb, isz[1], start, n, XB)
    return decode_generic(XA, XB, 0, n, da, db, G, bab, M, E, CL)


@njit(**C.INLINE)
def c_words(d, nb, cs, ce, cf):
    """c's signed significand (f32, 23 fraction bits), exponent (a zero's: -126) and class bits
    from the words ``d[:nb]``."""
    for i in range(nb):
        w = d[i]
        ef = (w >> 23) & 0xFF
        m = w & 0x7FFFFF
        sig = m | (np.int64(ef != 0) << 23)
        cs[i] = -sig if (w >> 31) & 1 else sig
        ce[i] = max(ef, 1) - 127
        sp = ef == 255
        cf[i] = 0 if not sp else (NAN_F if m != 0 else (NINF_F if (w >> 31) & 1 else PINF_F))


@njit(**C.HOT)
def shr(x, k):
    """``floor(x / 2**k)`` for k >= 0, ``x * 2**-k`` for k < 0 (callers bound the left shifts);
    without a branch, so that loops over rows vectorise."""
    return (x << max(-k, 0)) >> min(max(k, 0), MAX_SHIFT)


@njit(**C.INLINE)
def dot_block(MT, ET, nb, t0, L, step, sh0, s, e):
    """``_set_dot`` over products ``t0, t0 + step, ...`` of a pass, for each row: the sum ``s`` of
    magnitudes truncated to F fraction bits below the maximum exponent ``e`` (``NEG``: no term).
    ``sh0`` >= 0: the right shift of a product at the maximum (its fraction bits less F, products
    pre-shifted left where that is negative: alignment only shifts right)."""
    for i in range(nb):
        e[i] = np.int64(NEG)
        s[i] = 0
    for t in range(t0, L, step):
        Et = ET[t]
        for i in range(nb):
            e[i] = max(e[i], Et[i])
    for t in range(t0, L, step):
        Mt, Et = MT[t], ET[t]
        for i in range(nb):
            k = e[i] - Et[i] + sh0
            x = Mt[i]
            a = abs(x) >> min(k, MAX_SHIFT)
            s[i] += -a if x < 0 else a


@njit(**C.HOT)
def special_bits(fl, nan_bits, inf_bits):
    """d's bits for a pass's nonzero class bits ``fl``, the paper's order without a branch: the
    inputs' NaN and infinities (c's included) first, overflowed products where those are none."""
    inf = fl & (PINF_F | NINF_F)
    ovf = fl & (OVP_F | OVN_F)
    nan = ((fl & NAN_F) != 0) | (inf == (PINF_F | NINF_F)) | ((inf == 0) & (ovf == (OVP_F | OVN_F)))
    neg = (inf == NINF_F) | ((inf == 0) & (ovf == OVN_F))
    return nan_bits if nan else inf_bits | (np.uint64(0x80000000) if neg else np.uint64(0))


@njit(**C.HOT)
def merge_int(s_dot, e_dot, dot_frac, cs, ce, dfb, cfb, ffb, c_drop, fault):
    """``_merge_with_c`` and the RNE to f32 on integers for one finite row: d's bits."""
    has = e_dot > NEG
    e_max = max(e_dot, ce)                       # e_dot is NEG where there is no term
    D = shr(s_dot, (e_max - e_dot) + dot_frac - dfb) if has else np.int64(0)
    Cc = shr(cs, e_max - ce + 23 - cfb)
    Cc = np.int64(0) if c_drop != S.NO_C_DROP and ce < e_max - c_drop else Cc
    T = D + (Cc << (dfb - cfb))
    lsb = e_max - dfb
    bl = C.bit_length_i51(abs(T))             # |T| < 2**49: |D| < 2**(dfb + 8), |Cc| < 2**(cfb + 1)
    e_n = max(lsb + bl - 1, -126)
    Tn = shr(T, e_n - ffb - lsb)
    exact = C.f64_of_i51(Tn) * amd.p2(e_n - ffb)           # |Tn| < 2**(ffb + 1) <= 2**51
    rounded = np.float32(exact)
    d = np.uint64(C.bits_from_f32(rounded))
    off = fault and np.float64(rounded) != exact and math.isfinite(rounded)
    return d ^ np.uint64(off)


EXP64 = np.uint64(0x7FF0000000000000)      # float64's exponent field
F32_LEAST = 2.0 ** -126                     # f32's least normal: c's and d's exponents are at least -126


@njit(**C.HOT)
def binade(x):
    """``2**floor(log2|x|)`` of a finite float64 ``x`` at or above ``2**-126`` in magnitude, 2**-126
    below (a zero's included): f32's exponent of ``x``, a subnormal's counted as -126."""
    return max(C.f64_from_bits(C.bits_from_f64(x) & EXP64), F32_LEAST)


@njit(**C.HOT)
def over(k, m):
    """``2**k / m`` for a power of two ``m``, exactly, from the bits (no divide)."""
    return C.f64_from_bits(np.uint64((2046 + k) << 52) - C.bits_from_f64(m))


@njit(**C.INLINE)
def merge_factors(dfb, cfb, ffb, c_drop):
    """The powers of two :func:`merge_f64` scales by, once a kernel call: ``(2**(cfb - dfb),
    2**(dfb - cfb), 2**-dfb, 2**-ffb, 2**c_drop)`` (infinite without a c drop)."""
    drop = np.inf if c_drop == S.NO_C_DROP or c_drop > 1000 else amd.p2(max(c_drop, -1000))
    return amd.p2(cfb - dfb), amd.p2(dfb - cfb), amd.p2(-dfb), amd.p2(-ffb), drop


@njit(**C.HOT)
def merge_f64(dot, em, c, dfb, q):
    """``_merge_with_c`` and the RNE to f32 of a finite row in float64, where every step is exact:
    the dot part ``dot`` (exact; ``em``: ``2**e`` of its largest exponent sum, 0 where it has no
    term) floored to dfb fraction bits below ``2**e_max`` (e_max: the larger of e and c's
    exponent), c to cfb, their sum to ffb below its leading bit (but not below ``2**(-126 - ffb)``),
    then rounded to f32 (``q``: :func:`merge_factors`; the caller's mode IEEE's default,
    ``_common.ieee_mode``).  A pass's terms are below ``2**(e_max + 6)`` and the floors at most 40
    bits below it (:func:`int_design`), so the sum spans at most 47 bits.  Each floor is float64's of
    the value scaled by a power of two, so that nothing is shifted in int64 lanes (float64's are as
    wide, four a vector on AVX2, but int64 lanes have no count of leading zeros and no compare but
    equal and greater): :func:`merge_int`'s arithmetic in about a third of its instructions."""
    k_c, k_cd, k_nd, k_nf, drop = q
    cb = binade(c)
    m = max(em, cb)                                      # 2**e_max
    u = over(dfb, m)                                     # units of 2**(e_max - dfb)
    D = C.ffloor(dot * u)
    Cc = C.ffloor(c * (u * k_c))
    Cc = 0.0 if cb * drop < m else Cc                    # c more than c_drop binades below e_max
    T = (D + Cc * k_cd) * (m * k_nd)
    g = binade(T) * k_nf                                 # d's last place before its RNE
    return np.float32(C.ffloor(T * over(0, g)) * g)


@njit(**C.INLINE)
def dot_rows(M, E, nb, K, j, t0, L, step, sh0, s, e):
    """:func:`dot_block` on the products where they lie (passes in the products' own order): the
    products ``j + t0, j + t0 + step, ...`` of each row, a loop over each row's products."""
    for i in range(nb):
        o = np.uint64(i * K + j)
        em = np.int64(NEG)
        for t in range(t0, L, step):
            em = max(em, E[o + np.uint64(t)])
        acc = np.int64(0)
        for t in range(t0, L, step):
            x = M[o + np.uint64(t)]
            a = abs(x) >> min(em - E[o + np.uint64(t)] + sh0, MAX_SHIFT)
            acc += -a if x < 0 else a
        s[i], e[i] = acc, em


@njit(**C.INLINE)
def dot_rows_pairs(M, E, nb, K, j, L, sh0, s, e, s_o, e_o):
    """GFDRDA's :func:`dot_rows`: the even products' sum and maximum into ``s, e``, the odd ones'
    into ``s_o, e_o``, in one loop over each row's product pairs (a strided loop ran 5x slower)."""
    for i in range(nb):
        o = np.uint64(i * K + j)
        ee, eo = np.int64(NEG), np.int64(NEG)
        for t in range(L // 2):
            ee = max(ee, E[o + np.uint64(2 * t)])
            eo = max(eo, E[o + np.uint64(2 * t + 1)])
        ae, ao = np.int64(0), np.int64(0)
        for t in range(L // 2):
            x = M[o + np.uint64(2 * t)]
            y = M[o + np.uint64(2 * t + 1)]
            a = abs(x) >> min(ee - E[o + np.uint64(2 * t)] + sh0, MAX_SHIFT)
            b = abs(y) >> min(eo - E[o + np.uint64(2 * t + 1)] + sh0, MAX_SHIFT)
            ae += -a if x < 0 else a
            ao += -b if y < 0 else b
        s[i], e[i], s_o[i], e_o[i] = ae, ee, ao, eo


@njit(**C.INLINE)
def pass_sums(M, E, CL, MT, ET, FT, classes, in_order, nb, K, j, L, grouped, sh0, cf, order, Is):
    """A pass's dot sums (``Is[0]``, ``Is[1]``: even products' with GFDRDA, ``Is[2], Is[3]`` the
    odd ones') and class bits ``Is[4]`` (c's, the products' where ``classes``) for every row of a
    block: on the products where they lie where ``in_order``, else transposed to [t, row]."""
    s, e, s_o, e_o, fl = Is[0], Is[1], Is[2], Is[3], Is[4]
    for i in range(nb):
        fl[i] = cf[i]
    if in_order:
        if classes:
            for i in range(nb):
                o = np.uint64(i * K + j)
                f = fl[i]
                for t in range(L):
                    f |= CL[o + np.uint64(t)]
                fl[i] = f
        if grouped:
            dot_rows_pairs(M, E, nb, K, j, L, sh0, s, e, s_o, e_o)
        else:
            dot_rows(M, E, nb, K, j, 0, L, 1, sh0, s, e)
        return
    for t in range(L):                       # the pass's products, transposed to [t, row]
        q = order[j + t]
        Mt, Et, Ft = MT[t], ET[t], FT[t]
        for i in range(nb):
            Mt[i], Et[i] = M[i * K + q], E[i * K + q]
        if classes:
            for i in range(nb):
                Ft[i] = CL[i * K + q]
            for i in range(nb):
                fl[i] |= Ft[i]
    dot_block(MT, ET, nb, 0, L, 2 if grouped else 1, sh0, s, e)
    if grouped:
        dot_block(MT, ET, nb, 1, L, 2, sh0, s_o, e_o)


@njit(**C.INLINE)
def finish_pass(nb, grouped, cs, ce, fmts, prm, Is, dout):
    """A pass's merge with c and rounding for every row of a block (its sums and class bits in
    ``Is``, :func:`pass_sums`): ``dout[i]`` d's bits."""
    F, dfb, cfb, ffb, c_drop = prm[S.P_F], prm[S.P_DOTFB], prm[S.P_CFB], prm[S.P_FINFB], prm[S.P_CDROP]
    nan_bits, inf_bits = np.uint64(fmts[S.D, C.NAN_BITS]), np.uint64(fmts[S.D, C.INF_BITS])
    zpos, fault = prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1
    s, e, s_o, e_o, fl = Is[0], Is[1], Is[2], Is[3], Is[4]
    dot_frac = F
    if grouped:
        dot_frac = prm[S.P_MERGEFB]
        for i in range(nb):
            ed = max(e[i], e_o[i])
            a = shr(s[i], (ed - e[i]) + F - dot_frac) if e[i] > NEG else np.int64(0)
            b = shr(s_o[i], (ed - e_o[i]) + F - dot_frac) if e_o[i] > NEG else np.int64(0)
            s[i], e[i] = a + b, ed
    for i in range(nb):
        d = merge_int(s[i], e[i], dot_frac, cs[i], ce[i], dfb, cfb, ffb, c_drop, fault)
        d = d if fl[i] == 0 else special_bits(fl[i], nan_bits, inf_bits)
        dout[i] = np.uint64(0) if zpos and d == np.uint64(0x80000000) else d


# The register paths' helpers (golden.kernels.amd_fp8, fda_fp8): a row's products never leave
# registers, the loop runs across rows (LLVM vectorises it, 8 rows a zmm), each row's operands read
# as 64-bit words at a constant stride.


@njit(**C.HOT)
def c_word(w):
    """:func:`c_words` of one word: c's signed significand, exponent and class bits."""
    ef = (w >> 23) & 0xFF
    m = w & 0x7FFFFF
    sig = m | (np.int64(ef != 0) << 23)
    sp = ef == 255
    cf = 0 if not sp else (NAN_F if m != 0 else (NINF_F if (w >> 31) & 1 else PINF_F))
    return -sig if (w >> 31) & 1 else sig, max(ef, 1) - 127, np.int64(cf)


# The word-at-a-time decode below is plain njit, not inline='always' as the other per-element
# helpers: LLVM inlines these small functions itself (the shape kernels' rates unchanged), while
# numba's own inlining of their many call sites cost seconds of each shape kernel's first compile
# (golden.kernels.fda_fp8's Ada shape 14.3 s of CPU against 7.0, the integer path's Hopper f16 shape
# 11.3 against 8.5).
L01 = np.uint64(0x0101010101010101)        # a 1 in each byte of a word
H80 = np.uint64(0x8080808080808080)        # each byte's top bit
L0001 = np.uint64(0x0001000100010001)      # a 1 in each 16-bit lane of a word
H8000 = np.uint64(0x8000800080008000)      # each 16-bit lane's top bit


@njit(**C.JIT)
def lane_fields(w, row, ones, bits):
    """A word's patterns at once, one a ``bits``-wide lane (``ones``: a 1 in each lane; the sign in a
    lane's top bit: f16, bf16, fp8): their significands with the hidden bit, and their exponent
    fields with a subnormal's 1, a lane each.  No lane carries into the next: a field is below half
    a lane, so adding a lane's top bit less one sets that bit exactly where the field is not 0."""
    _, _, mw, ew, _, _, _, _, _ = row
    top = np.uint64(bits - 1)
    carry = (ones << top) - ones
    f = (w >> np.uint64(mw)) & (np.uint64(ew) * ones)
    nz = ((f + carry) & (ones << top)) >> top
    g = (w & (np.uint64((1 << mw) - 1) * ones)) | (nz << np.uint64(mw))
    return g, f | (nz ^ ones)


@njit(**C.JIT)
def lane_pair(wa, wb, ra, rb, ones, bits):
    """A word pair's products, a lane each (:func:`lane_fields`): a's and b's significands, the
    biased exponent sums (0 where a product is zero, which no nonzero product's sum is) and the
    signs: each operand decoded once, not once a product it takes part in."""
    ga, fa = lane_fields(wa, ra, ones, bits)
    gb, fb = lane_fields(wb, rb, ones, bits)
    top = np.uint64(bits - 1)
    carry = (ones << top) - ones
    both = (ga + carry) & (gb + carry) & (ones << top)
    live = both | (both - (both >> top))
    return ga, gb, (fa + fb) & live, ((wa ^ wb) >> top) & ones


@njit(**C.JIT)
def swar8_pair(wa, wb, ra, rb):
    """:func:`lane_pair` of eight fp8 patterns a word (exponent sums at most 62)."""
    return lane_pair(wa, wb, ra, rb, L01, 8)


@njit(**C.JIT)
def lane8(w, k):
    """Byte ``k`` of a word (a constant ``k`` after unrolling: a shift and a mask)."""
    return np.int64((w >> np.uint64(8 * k)) & np.uint64(0xFF))


@njit(**C.JIT)
def any_zero_byte(x):
    """Whether a word has a zero byte (exact for the word as a whole, not per byte)."""
    return ((x - L01) & ~x & H80) != np.uint64(0)


@njit(**C.JIT)
def fdrda_int_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """Rows ``lo .. hi - 1`` of FDRDA or GFDRDA, chains included, :data:`BL` rows at a time at most,
    for a design :func:`int_design` takes (golden.kernels chooses; the others run
    :func:`amd.fdrda_rows`, whose signature this is)."""
    L = prm[S.P_L]
    grouped = prm[S.P_BASE] == S.GFDRDA_CODE
    overflows = fmts[S.A, C.EMAX] + 1 + fmts[S.B, C.EMAX] + 1 >= 128 and prm[S.P_PROD_OVER] == 1
    da, db = decode_row(fmts, S.A), decode_row(fmts, S.B)
    ka, kb = literal_of(da), literal_of(db)
    mbab = da[D_MB] + db[D_MB]
    G = max(prm[S.P_F] - mbab, 0)               # products pre-shifted so alignment only shifts right
    sh0 = max(mbab - prm[S.P_F], 0)
    bab = -da[D_BIAS] - db[D_BIAS]
    wa, wb, wc = _widths(a), _widths(b), _widths(c)
    BR = min(BL, max(64, BLOCK_ELEMENTS // K))
    n = BR * K
    XA, XB = np.empty(n, np.int64), np.empty(n, np.int64)
    M, E, CL = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    MT, ET, FT = np.empty((L, BR), np.int64), np.empty((L, BR), np.int64), np.empty((L, BR), np.int64)
    Is = np.empty((5, BR), np.int64)
    cw, cs, ce, cf = np.empty(BR, np.int64), np.empty(BR, np.int64), np.empty(BR, np.int64), np.empty(BR, np.int64)
    dout = np.empty(BR, np.uint64)
    in_order = True
    for q in range(K):
        in_order &= order[q] == q
    classes = np.bool_(False)     # not the literal False: decode_block would compile for it too (about 7 s)
    caller_fp = C.ieee_mode()     # the merge's RNE to f32 whatever the caller's rounding mode
    for r0 in range(lo, hi, BR):
        nb = min(BR, hi - r0)
        nk = nb * K
        classes = decode_block(wa, wb, isz, r0 * K, nk, da, db, ka, kb, G, bab, XA, XB, M, E, CL, classes)
        if overflows:
            top = np.int64(NEG)
            for u in range(nk):
                top = max(top, E[u])
            if top >= OVER_EXP - 2:              # |p| < 2**(e + 2): no product below this overflows
                mark_overflows(M, E, CL, nk, G, mbab, classes)
                classes = True
        widen(wc, isz[2], r0, nb, cw)
        c_words(cw, nb, cs, ce, cf)
        for j in range(0, K, L):
            pass_sums(M, E, CL, MT, ET, FT, classes, in_order, nb, K, j, L, grouped, sh0, cf, order, Is)
            finish_pass(nb, grouped, cs, ce, fmts, prm, Is, dout)
            for i in range(nb):
                out[r0 + i] = dout[i]
            if j + L < K:
                for i in range(nb):
                    cw[i] = np.int64(dout[i] & np.uint64(0xFFFFFFFF))
                c_words(cw, nb, cs, ce, cf)
    C.set_fp_control(caller_fp)
