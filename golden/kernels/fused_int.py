"""FDA and GDFS in integer lanes, a block of rows at a time: the fast path of :mod:`fused`.

The numpy path computes every step in float64 on exact values: products ``va * vb``, alignment
``trunc(p * 2**(F - e_max))``, one exact sum.  Every one of those numbers is an integer times a
power of two, so the same steps run here on integers: each operand's fields give its significand
and exponent, a product is ``sig_a * sig_b`` at exponent ``e_a + e_b``, alignment is a right
shift of the magnitude (``trunc`` drops the shifted-out bits of the magnitude), the sum is an
int64, and the rounding (:func:`round_block`) is :func:`_common.round_bits` without a branch.
FDA decodes a block's products in one contiguous loop over its rows' elements
(:func:`decode_block`: the catalog's f16 and E4M3 pairs with their fields as compile-time
constants) and takes each row's maximum and sum in a loop over its products; GDFS
carries a block's rows through each step together (its group sums a loop across the rows); both
round across the rows.

NaN and infinities never take a branch per product: a block with a pattern of a special class
classifies every product (NaN, +inf, -inf, as IEEE float64 arithmetic combines them: ``inf - inf``
and ``inf * 0`` are NaN; in the decode's own loop where the block before had one too) and a
flagged row's result is the canonical NaN or that infinity, as ``_finish`` gives it.

:func:`golden.kernels.spec.fast_kind` decides which designs take this path (bounds that keep every
integer in its lane); the others run :mod:`fused`'s float64 kernels.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..descriptors import KernelCode
from ..nbcache import njit
from . import _common as C
from . import spec as S

BL = 128                # rows carried through each step together (the vector loops run across them)
FLAT = 8192             # FDA decodes a block's products in one loop: FLAT // K rows (16 .. FDA_ROWS), and
FDA_ROWS = 512          # each step runs across them (blocks of 1,024 products measured 1.2x slower: each
                        # block's fixed costs; 16,384 no faster)
NEG = -(1 << 24)        # the exponent of a zero product here: below every real one, no int32 overflow
NO_PRODUCT = NEG // 2   # an exponent below this (scales added) is a zero product
NAN_FLAG, PINF_FLAG, NINF_FLAG = 1, 2, 4

# Columns of the decode row of a format slot (decode_row): what each element decode reads
(D_IGN, D_VMASK, D_MB, D_EMASK, D_SGNSH, D_BIAS, D_NM, D_NV, D_INF) = range(9)
D_COLUMNS = 9


def _ctlz64():
    def impl(typingctx, x):
        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            fn = builder.module.declare_intrinsic("llvm.ctlz", [i64], ir.FunctionType(i64, [i64, ir.IntType(1)]))
            return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])
        return types.int64(types.int64), codegen
    return intrinsic(impl)


ctlz64 = _ctlz64()      # leading zeros of an int64 (64 for 0); vectorises (vplzcntq) where the CPU has it


@njit(**C.INLINE)
def decode_row(fmts, f):
    """What the decode loops need of format row ``f``: its fields, and the (mask, value) pair
    whose match is its NaN pattern class (with ``D_INF``: exponent all ones, an infinity when the
    mantissa is zero)."""
    mb, eb, kind = fmts[f, S.MAN_BITS], fmts[f, S.EXP_BITS], fmts[f, S.NAN_KIND]
    emask, mmask = (np.int64(1) << eb) - 1, (np.int64(1) << mb) - 1
    nm, nv, inf = np.int64(0), np.int64(1), np.int64(0)         # mask 0 never equals 1: no NaN
    if kind == S.NAN_IEEE:
        nm = nv = emask << mb
        inf = np.int64(1)
    elif kind == S.NAN_ALL_ONES:
        nm = nv = (emask << mb) | mmask
    elif kind == S.NAN_NEG_ZERO:
        nm, nv = (np.int64(1) << (mb + eb + 1)) - 1, np.int64(1) << (mb + eb)
    elif kind == S.NAN_MAX_EXP:
        nm = nv = emask << mb
    row = np.zeros(D_COLUMNS, np.int64)
    row[D_IGN], row[D_VMASK] = fmts[f, S.IGNORED_LOW], (np.int64(1) << fmts[f, S.VALUE_BITS]) - 1
    row[D_MB], row[D_EMASK], row[D_SGNSH], row[D_BIAS] = mb, emask, mb + eb, fmts[f, S.BIAS]
    row[D_NM], row[D_NV], row[D_INF] = nm, nv, inf
    return row


# --------------------------------------------------------------------------- loads and decoding

@njit(**C.INLINE)
def load_pass(w, isz, r0, K, j, L, nb, X):
    """``X[t, i]`` = the low 32 bits of element ``j + t`` of row ``r0 + i`` (a pass's products in
    their order: spec.fast_kind takes no interleaved passes): each row read where it lies, in its
    width, the block stored a product index per row of ``X``."""
    if isz == 1:
        rows_into_columns(w[0], r0 * K + j, K, L, nb, X)
    elif isz == 2:
        rows_into_columns(w[1], r0 * K + j, K, L, nb, X)
    elif isz == 4:
        rows_into_columns(w[2], r0 * K + j, K, L, nb, X)
    else:
        rows_into_columns(w[3], r0 * K + j, K, L, nb, X)


@njit(**C.INLINE)
def rows_into_columns(v, start, K, L, nb, X):
    """``X[t, i] = v[start + i * K + t]`` (low 32 bits), one compiled copy per width of ``v``."""
    for i in range(nb):
        base = np.uint64(start + i * K)
        for t in range(L):
            X[t, i] = np.int64(np.uint64(v[base + np.uint64(t)]) & np.uint64(0xFFFFFFFF))


@njit(**C.INLINE)
def gather_column(w, isz, start, stride, nb, out):
    """``out[i]`` = the low 32 bits of element ``start + i * stride`` of an operand, i < nb."""
    if isz == 1:
        v1 = w[0]
        for i in range(nb):
            out[i] = np.int64(v1[start + i * stride])
    elif isz == 2:
        v2 = w[1]
        for i in range(nb):
            out[i] = np.int64(v2[start + i * stride])
    elif isz == 4:
        v4 = w[2]
        for i in range(nb):
            out[i] = np.int64(v4[start + i * stride])
    else:
        v8 = w[3]
        for i in range(nb):
            out[i] = np.int64(v8[start + i * stride] & np.uint64(0xFFFFFFFF))


@njit(**C.HOT)
def classify(x, m, nm, nv, inf_ok):
    """``(nan, inf)`` as 0/1 of a pattern ``x`` with mantissa field ``m`` (:func:`decode_row`)."""
    sp = np.int64((x & nm) == nv)
    inf = sp & inf_ok & np.int64(m == 0)
    return sp ^ inf, inf


@njit(**C.INLINE)
def decode_c(X, dc, zero_exp, sig, ce, flags, nb):
    """c (or the previous pass's d) across the block: signed significand, exponent (``zero_exp``
    when zero), NaN/inf class into ``flags``."""
    ign, vm, mb, em, ssh, bias = dc[D_IGN], dc[D_VMASK], dc[D_MB], dc[D_EMASK], dc[D_SGNSH], dc[D_BIAS]
    nm, nv, inf_ok = dc[D_NM], dc[D_NV], dc[D_INF]
    mm = (np.int64(1) << mb) - 1
    for i in range(nb):
        x = (X[i] >> ign) & vm
        f = (x >> mb) & em
        g = (x & mm) | (np.int64(f != 0) << mb)
        nan, inf = classify(x, x & mm, nm, nv, inf_ok)
        neg = (x >> ssh) & 1
        flags[i] = nan | (inf << (1 + neg))
        sig[i] = -g if neg != 0 else g
        ce[i] = zero_exp if g == 0 else max(f, 1) - bias


@njit(**C.INLINE)
def align_c(sig, ce, emax, F, mbc, tot, nb):
    """``tot[i] = trunc(c * 2**(F - e_max))`` as an integer (the sum starts from c)."""
    for i in range(nb):
        sh = np.int64(emax[i]) - ce[i] + mbc - F
        r = min(max(sh, 0), 62)
        lft = min(max(-sh, 0), 62)
        g = sig[i]
        v = (abs(g) >> r) << lft
        tot[i] = -v if g < 0 else v


@njit(**C.HOT)
def round_consts(drow, mode, frac, ovf_inf, zpos, fault):
    """What :func:`round_word` reads of d's format row and the rounding settings, once per call:
    ``(mb, bias, emin, p, inf bits, max bits, NaN bits, rne, ru, rd, big_pos, big_neg, fault,
    keep_neg_zero)``."""
    mb, bias, emin = drow[S.MAN_BITS], drow[S.BIAS], drow[S.EMIN]
    p = mb if frac < 0 else frac
    rne, ru, rd = np.int64(mode == C.RNE), np.int64(mode == C.RU), np.int64(mode == C.RD)
    big_pos = np.int64(ovf_inf) | rne | ru              # an overflow of each sign: infinity, else max
    big_neg = np.int64(ovf_inf) | rne | rd
    return (np.int64(mb), np.int64(bias), np.int64(emin), np.int64(p), np.int64(drow[S.INF_BITS]),
            np.int64(drow[S.MAX_BITS]), np.int64(drow[S.NAN_BITS]), rne, ru, rd, big_pos, big_neg,
            np.int64(fault), np.int64(zpos == 0))


@njit(**C.HOT)
def rz_consts(drow, frac, ovf_inf, zpos):
    """:func:`round_consts` of RZ without the planted fault, its mode flags and fault compile-time
    zeros: a loop of :func:`round_word` on them loses the rounding increment's arithmetic (the
    remainder, the half-way compare, the increment), which RZ never adds."""
    mb, bias, emin, p, infw, maxw, nanw, _, _, _, big_pos, big_neg, _, keep = round_consts(
        drow, C.RZ, frac, ovf_inf, zpos, False)
    return (mb, bias, emin, p, infw, maxw, nanw, 0, 0, 0, big_pos, big_neg, 0, keep)


@njit(**C.HOT)
def round_word(t, emax, fl, F, sgnsh, rc):
    """``_finish`` of one row: ``t * 2**(emax - F)`` rounded to d (f16/f32-like, IEEE specials),
    a row flagged ``fl`` NaN or that infinity (``rc``: :func:`round_consts`).  Branch-free: the
    steps of :func:`_common.round_bits` on a lane, so that loops across rows vectorise."""
    mb, bias, emin, p, infw, maxw, nanw, rne, ru, rd, big_pos, big_neg, fault_, keep_neg_zero = rc
    sign = np.int64(t < 0)
    mag = abs(t)
    lsb = np.int64(emax) - F
    q = max(lsb + 63 - ctlz64(mag) - p, emin - p)       # the lead bit's exponent - p
    shift = q - lsb
    r = min(max(shift, 0), 62)
    kept = (mag >> r) << min(max(-shift, 0), 62)
    rem = mag & ((np.int64(1) << r) - 1)
    half = (np.int64(1) << r) >> 1
    inexact = np.int64(rem != 0)
    up = (rne & (np.int64(rem > half) | (np.int64(rem == half) & inexact & (kept & 1)))) \
        | (ru & inexact & (sign ^ 1)) | (rd & inexact & sign)
    up ^= fault_ & inexact & np.int64(rem >= half)     # the planted fault: the round bit misread
    kept += up
    word = ((q + p + bias - 1) << mb) + (kept << (mb - p))
    word = 0 if mag == 0 else word
    big = big_neg if sign else big_pos
    word = (infw if big else maxw) if word >= infw else word
    word |= (sign & (np.int64(word != 0) | keep_neg_zero)) << sgnsh
    word = (infw | (np.int64((fl & NINF_FLAG) != 0) << sgnsh)) if fl != 0 else word
    nan = (fl & NAN_FLAG) | np.int64((fl & (PINF_FLAG | NINF_FLAG)) == (PINF_FLAG | NINF_FLAG))
    return nanw if nan != 0 else word


@njit(**C.INLINE)
def round_block(tot, emax, flags, F, sgnsh, drow, mode, frac, ovf_inf, zpos, fault, out, r0, nb):
    """:func:`round_word` across the block's rows into ``out[r0 + i]``; RZ without the planted fault
    (NVIDIA's designs) in a copy of its own on :func:`rz_consts`."""
    if mode == C.RZ and not fault:
        rz = rz_consts(drow, frac, ovf_inf, zpos)
        for i in range(nb):
            out[r0 + i] = np.uint64(round_word(tot[i], emax[i], flags[i], F, sgnsh, rz))
        return
    rc = round_consts(drow, mode, frac, ovf_inf, zpos, fault)
    for i in range(nb):
        out[r0 + i] = np.uint64(round_word(tot[i], emax[i], flags[i], F, sgnsh, rc))


# --------------------------------------------------------------------------- FDA

@njit(**C.INLINE)
def widen(w, isz, start, n, out):
    """``out[u]`` = the low 32 bits of element ``start + u`` of an operand, u < n: a contiguous
    copy in int64 lanes, one loop per width."""
    if isz == 1:
        v1 = w[0]
        for u in range(n):
            out[u] = np.int64(v1[np.uint64(start + u)])
    elif isz == 2:
        v2 = w[1]
        for u in range(n):
            out[u] = np.int64(v2[np.uint64(start + u)])
    elif isz == 4:
        v4 = w[2]
        for u in range(n):
            out[u] = np.int64(v4[np.uint64(start + u)])
    else:
        v8 = w[3]
        for u in range(n):
            out[u] = np.int64(v8[np.uint64(start + u)] & np.uint64(0xFFFFFFFF))


@njit(**C.INLINE)
def decode_flat(XA, XB, n, da, db, G, bab, M, E):
    """Products of the element pairs ``XA[u], XB[u]``, u < n (a block's rows one after another):
    ``M`` the signed significand product shifted left by ``G``, ``E`` its exponent (``NEG`` for a
    zero).  Returns whether a pattern of a special class (NaN, infinity) is among them."""
    return decode_in_place(XA, XB, 0, n, da, db, G, bab, M, E)


@njit(**C.INLINE)
def decode_in_place(va, vb, start, n, da, db, G, bab, M, E):
    """:func:`decode_flat` of elements ``start .. start + n - 1`` of ``va, vb`` (int64 widened
    copies, or the operands' own views: then no widened copy first, which cost about a fifth of
    the FDA kernel's time on f16, ``python -m golden.kernels.profile --phases``).  The slices
    index from 0 (a signed ``start + u`` is checked for wraparound, which keeps a loop scalar)."""
    a, b = va[start:start + n], vb[start:start + n]
    ia, xa, ma, ea, sa = da[D_IGN], da[D_VMASK], da[D_MB], da[D_EMASK], da[D_SGNSH]
    ib, xb, mb, eb, sb = db[D_IGN], db[D_VMASK], db[D_MB], db[D_EMASK], db[D_SGNSH]
    na, nva, nb_, nvb = da[D_NM], da[D_NV], db[D_NM], db[D_NV]
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
        e = max(fa, 1) + max(fb, 1) + bab
        E[u] = NEG if m == 0 else e
        M[u] = -m if ((x >> sa) ^ (y >> sb)) & 1 else m
    return maybe != 0


@njit(**C.INLINE)
def classes_flat(XA, XB, n, da, db, CL):
    """``CL[u]``: the NaN/inf class of product ``u`` as IEEE float64 would make it (``inf * 0``
    is NaN)."""
    classes_in_place(XA, XB, 0, n, da, db, CL)


@njit(**C.INLINE)
def classes_in_place(va, vb, start, n, da, db, CL):
    """:func:`classes_flat` of elements ``start .. start + n - 1`` of ``va, vb`` (widened copies or
    the operands' own views, as :func:`decode_in_place` reads them)."""
    a, b = va[start:start + n], vb[start:start + n]
    ia, xa, ma, sa = da[D_IGN], da[D_VMASK], da[D_MB], da[D_SGNSH]
    ib, xb, mb, sb = db[D_IGN], db[D_VMASK], db[D_MB], db[D_SGNSH]
    na, nva, infa, nb_, nvb, infb = da[D_NM], da[D_NV], da[D_INF], db[D_NM], db[D_NV], db[D_INF]
    mma, mmb = (np.int64(1) << ma) - 1, (np.int64(1) << mb) - 1
    zma, zmb = (np.int64(1) << sa) - 1, (np.int64(1) << sb) - 1     # all but the sign: zero when 0
    for u in range(n):
        x = (np.int64(a[u]) >> ia) & xa
        y = (np.int64(b[u]) >> ib) & xb
        nan_a, inf_a = classify(x, x & mma, na, nva, infa)
        nan_b, inf_b = classify(y, y & mmb, nb_, nvb, infb)
        nan = nan_a | nan_b | (inf_a & np.int64((y & zmb) == 0)) | (inf_b & np.int64((x & zma) == 0))
        inf = (inf_a | inf_b) & (nan ^ 1)
        CL[u] = nan | (inf << (1 + (((x >> sa) ^ (y >> sb)) & 1)))


# The decode rows (:func:`decode_row`'s columns) of the catalog's f16 and OCP E4M3 (S.1111.111 is
# NaN, no infinity): their pairs decode with these as compile-time constants (:func:`decode_literal`:
# masks and shifts become immediates, the classes compares kept as masks)
F16_ROW = (0, 0xFFFF, 10, 31, 15, 15, 0x7C00, 0x7C00, 1)
E4M3_ROW = (0, 0xFF, 3, 15, 7, 7, 0x7F, 0x7F, 0)
F32_ROW = (0, 0xFFFFFFFF, 23, 255, 31, 127, 0x7F800000, 0x7F800000, 1)
LITERAL_ROWS = np.array([F16_ROW, E4M3_ROW], np.int64)
F16_LIT, E4M3_LIT = range(2)


@njit(**C.HOT)
def literal_of(dr):
    """Which of :data:`LITERAL_ROWS` the decode row ``dr`` is (-1: none)."""
    return C.table_row(LITERAL_ROWS, dr)


@njit(**C.HOT)
def decode_literal(a, b, n, G, bab, M, E, CL, ra, rb, classes):
    """:func:`decode_in_place` of ``a[:n], b[:n]`` with the formats' decode rows given as constant
    tuples ``ra, rb`` (the callers' literals: the compiler folds them), and where ``classes`` each
    product's NaN/inf class into ``CL`` (:func:`classes_in_place`) in the same loop.  Returns
    whether a pattern of a special class is among them."""
    ia, xa, ma, ea, sa, _, na, nva, infa = ra
    ib, xb, mb, eb, sb, _, nb_, nvb, infb = rb
    mma, mmb = (np.int64(1) << ma) - 1, (np.int64(1) << mb) - 1
    zma, zmb = (np.int64(1) << sa) - 1, (np.int64(1) << sb) - 1     # all but the sign: zero when 0
    maybe, maybe_b = np.int64(0), np.int64(0)
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
        if classes:                     # compares of the magnitudes, kept as masks (no 0/1 lanes)
            xm, ym = x & zma, y & zmb
            if infa:                            # IEEE: exponent all ones, NaN where the mantissa is not 0
                nan_a, inf_a = xm > nva, xm == nva
            else:
                nan_a, inf_a = (x & na) == nva, False
            if infb:
                nan_b, inf_b = ym > nvb, ym == nvb
            else:
                nan_b, inf_b = (y & nb_) == nvb, False
            nan = nan_a | nan_b | (inf_a & (ym == 0)) | (inf_b & (xm == 0))
            inf = inf_a | inf_b
            cl = NAN_FLAG if nan else ((NINF_FLAG if neg else PINF_FLAG) if inf else 0)
            CL[u] = cl
            maybe |= cl                         # nonzero where either is NaN or infinite
        else:                           # the largest pattern field seen: LITERAL_ROWS' NaN mask is its value
            maybe = max(maybe, x & na)
            maybe_b = max(maybe_b, y & nb_)
    return maybe != 0 if classes else (maybe == nva) | (maybe_b == nvb)


@njit(**C.INLINE)
def decode_block(wa, wb, isz, start, n, da, db, ka, kb, G, bab, XA, XB, M, E, CL, hint):
    """A block's products, and their NaN/inf classes where a special pattern is among them
    (returned), the operands read where they lie in their own width.  f16 and E4M3 pairs (``ka,
    kb``: :func:`literal_of` their decode rows) through :func:`decode_literal`, without the
    classes first unless ``hint`` (the block before had a special pattern: random bit patterns
    have one in most blocks); the others from the decode rows (each literal loop costs 1.5-2 s of
    the kernel's first compile: bf16 and the other fp8 pairs would cost as much again each)."""
    if isz[0] == isz[1] == 2:
        va, vb = wa[1][start:start + n], wb[1][start:start + n]
        if ka == kb == F16_LIT:
            if not hint and not decode_literal(va, vb, n, G, bab, M, E, CL, F16_ROW, F16_ROW, False):
                return False
            return decode_literal(va, vb, n, G, bab, M, E, CL, F16_ROW, F16_ROW, True)
        special = decode_in_place(wa[1], wb[1], start, n, da, db, G, bab, M, E)
        if special:
            classes_in_place(wa[1], wb[1], start, n, da, db, CL)
        return special
    if isz[0] == isz[1] == 1:
        if ka == kb == E4M3_LIT:
            va, vb = wa[0][start:start + n], wb[0][start:start + n]
            if not hint and not decode_literal(va, vb, n, G, bab, M, E, CL, E4M3_ROW, E4M3_ROW, False):
                return False
            return decode_literal(va, vb, n, G, bab, M, E, CL, E4M3_ROW, E4M3_ROW, True)
        special = decode_in_place(wa[0], wb[0], start, n, da, db, G, bab, M, E)
        if special:
            classes_in_place(wa[0], wb[0], start, n, da, db, CL)
        return special
    widen(wa, isz[0], start, n, XA)
    widen(wb, isz[1], start, n, XB)
    special = decode_flat(XA, XB, n, da, db, G, bab, M, E)
    if special:
        classes_flat(XA, XB, n, da, db, CL)
    return special


@njit(**C.INLINE)
def add_scales(wsa, wsb, isz, ds, r0, K, nblk, block, nb, X, E, flags_blk):
    """The block scales' exponent sums into every product exponent of the block's rows (a zero
    product stays below NO_PRODUCT), a NaN scale's rows flagged in ``flags_blk``."""
    bias, vm, nm, nv = ds[D_BIAS], ds[D_VMASK], ds[D_NM], ds[D_NV]
    for q in range(nblk):
        gather_column(wsa, isz[3], r0 * nblk + q, nblk, nb, X)
        half = X.shape[0] // 2
        gather_column(wsb, isz[4], r0 * nblk + q, nblk, nb, X[half:])
        for i in range(nb):
            x, y = X[i] & vm, X[half + i] & vm
            se = x + y - 2 * bias
            flags_blk[i, q] = np.int64(((x & nm) == nv) | ((y & nm) == nv))
            o = np.uint64(i * K + q * block)
            for t in range(block):
                E[o + np.uint64(t)] += se


@njit(**C.INLINE)
def pass_maxima(E, CL, ce, flags, emax, nb, K, j, L, lift, special):
    """``emax[i]``: the largest exponent of row i's pass (products ``j .. j + L - 1``, a zero
    product's taken as ``lift``) and its c's ``ce[i]``; where ``special`` the products' classes
    into ``flags`` in the same loop (a loop of their own measured 1.5-2 ns a row slower)."""
    if special:
        for i in range(nb):
            o = np.uint64(i * K + j)
            em, fl = ce[i], flags[i]
            for t in range(L):
                e = E[o + np.uint64(t)]
                em = max(em, e if e >= NO_PRODUCT else lift)
                fl |= CL[o + np.uint64(t)]
            emax[i], flags[i] = em, fl
        return
    for i in range(nb):
        o = np.uint64(i * K + j)
        em = ce[i]
        for t in range(L):
            e = E[o + np.uint64(t)]
            em = max(em, e if e >= NO_PRODUCT else lift)
        emax[i] = em


@njit(**C.INLINE)
def pass_sums(M, E, emax, tot, nb, K, j, L, Dsh):
    """``tot[i]`` += the products of row i's pass aligned to its maximum (``trunc`` of each: a right
    shift of the magnitude)."""
    for i in range(nb):
        o = np.uint64(i * K + j)
        em = emax[i] + Dsh
        s = tot[i]
        for t in range(L):
            m = M[o + np.uint64(t)]
            v = abs(m) >> min(em - E[o + np.uint64(t)], 63)
            s += -v if m < 0 else v
        tot[i] = s


@njit(**C.JIT)
def fda_block_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, drows, prm, order, out):
    """Rows ``lo .. hi - 1`` of FDA / CoFDA (with power-of-two block scales) in integer lanes,
    ``FLAT // K`` rows at a time (at most FDA_ROWS): their products decoded in one contiguous
    loop, each row's maximum and sum a loop over its products, the rounding across the rows."""
    L, F, ez = prm[S.P_L], prm[S.P_F], prm[S.P_EZERO]
    scaled = prm[S.P_SCALED] == 1
    block, nblk = prm[S.P_BLOCK], K // prm[S.P_BLOCK]
    da, db, dcf, dd, ds = drows[S.A], drows[S.B], drows[S.CF], drows[S.D], drows[S.S]
    G = max(F - da[D_MB] - db[D_MB], 0)             # products pre-shifted so alignment only shifts right
    Dsh = max(da[D_MB] + db[D_MB] - F, 0)
    bab = -da[D_BIAS] - db[D_BIAS]
    mode, frac, ovf_inf = prm[S.P_MODE], prm[S.P_FRAC], prm[S.P_OVERFLOW] == C.OVERFLOW_INF
    zpos, fault = prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1
    BR = max(1, min(FDA_ROWS, max(16, FLAT // K), hi - lo))      # a short call allocates for its rows only
    XA, XB = np.empty(BR * K, np.int64), np.empty(BR * K, np.int64)      # every element written before read
    M, E, CL = np.empty(BR * K, np.int64), np.empty(BR * K, np.int64), np.empty(BR * K, np.int64)
    X1, X2 = np.zeros(BR, np.int64), np.zeros(2 * BR, np.int64)
    SF = np.zeros((BR, nblk), np.int64)
    flags, emax = np.zeros(BR, np.int64), np.zeros(BR, np.int64)
    csig, ce, tot = np.zeros(BR, np.int64), np.zeros(BR, np.int64), np.zeros(BR, np.int64)
    wa, wb, wc, wsa, wsb = _widths(a), _widths(b), _widths(c), _widths(sa), _widths(sb)
    ka, kb = literal_of(da), literal_of(db)
    lift = np.int64(0)
    special = np.bool_(False)     # not the literal False: decode_block would compile for it too (2-7 s)
    for r0 in range(lo, hi, BR):
        nb = min(BR, hi - r0)
        n = nb * K
        special = decode_block(wa, wb, isz, r0 * K, n, da, db, ka, kb, G, bab, XA, XB, M, E, CL, special)
        if scaled:
            add_scales(wsa, wsb, isz, ds, r0, K, nblk, block, nb, X2, E, SF)
        gather_column(wc, isz[2], r0, 1, nb, X1)
        dc, fc = dcf, S.CF
        for j in range(0, K, L):
            decode_c(X1, dc, ez, csig, ce, flags, nb)                  # c: a zero takes e_zero
            lift = ez if ez > fmts[fc, S.EMIN] else NEG                # zero products take e_zero
            pass_maxima(E, CL, ce, flags, emax, nb, K, j, L, lift, special)
            if scaled:
                for i in range(nb):
                    for q in range(j // block, (j + L) // block):
                        flags[i] |= SF[i, q]
            align_c(csig, ce, emax, F, dc[D_MB], tot, nb)
            pass_sums(M, E, emax, tot, nb, K, j, L, Dsh)
            round_block(tot, emax, flags, F, dd[D_SGNSH], fmts[S.D], mode, frac, ovf_inf, zpos, fault, out, r0, nb)
            for i in range(nb):                                         # the next pass takes d as c
                X1[i] = np.int64(out[r0 + i])
            dc, fc = dd, S.D


# --------------------------------------------------------------------------- GDFS

@njit(**C.INLINE)
def group_sum(XA, XB, t, da, db, sigma, nonzero):
    """One product index of a group across the rows, added to the exact group sums ``sigma`` in
    units of ``2**(emin_a + emin_b - man_a - man_b)`` (formats without NaN or infinity:
    spec.fast_kind)."""
    ia, va, ma, ea, sa = da[D_IGN], da[D_VMASK], da[D_MB], da[D_EMASK], da[D_SGNSH]
    ib, vb, mb, eb, sb = db[D_IGN], db[D_VMASK], db[D_MB], db[D_EMASK], db[D_SGNSH]
    mma, mmb = (np.int64(1) << ma) - 1, (np.int64(1) << mb) - 1
    for i in range(BL):
        x = (XA[t, i] >> ia) & va
        y = (XB[t, i] >> ib) & vb
        fa = (x >> ma) & ea
        fb = (y >> mb) & eb
        m = ((x & mma) | (np.int64(fa != 0) << ma)) * ((y & mmb) | (np.int64(fb != 0) << mb))
        m <<= max(fa, 1) - 1 + max(fb, 1) - 1
        sigma[i] += -m if ((x >> sa) ^ (y >> sb)) & 1 else m
        nonzero[i] |= np.int64(m != 0)


@njit(**C.INLINE)
def group_scales(wsa, wsb, isz, ds, r0, nblk, blk, nb, X, SS, SE, SF):
    """Block ``blk``'s scale pair of the block's rows: significand product ``SS``, exponent sum
    ``SE``, NaN flag ``SF``."""
    vm, mb, em, bias, nm, nv = ds[D_VMASK], ds[D_MB], ds[D_EMASK], ds[D_BIAS], ds[D_NM], ds[D_NV]
    mm = (np.int64(1) << mb) - 1
    lo = np.int64(ds[D_INF])                    # D_INF holds 1 - subnormals for a scale row
    for half in range(2):
        gather_column(wsa if half == 0 else wsb, isz[3 + half], r0 * nblk + blk, nblk, nb, X)
        for i in range(BL):
            x = X[i] & vm
            f = (x >> mb) & em
            g = (x & mm) | (np.int64((f != 0) | (lo == 1)) << mb)
            e = max(f, 1 - lo) - bias
            nan = np.int64((x & nm) == nv)
            SS[i] = g if half == 0 else SS[i] * g
            SE[i] = e if half == 0 else SE[i] + e
            SF[i] = nan if half == 0 else SF[i] | nan


@njit(**C.HOT)
def gdfs_scalars(K, fmts, da, db, ds, prm):
    """What every GDFS kernel reads from its parameters: ``L, F, e_zero, g``, the blocks a row holds
    and their length, the pre-shift ``G`` and post-shift ``Dsh`` of the terms, the rounding and
    overflow settings, positive zero, the planted fault and the groups a pass holds."""
    L, F, ez, g = prm[S.P_L], prm[S.P_F], prm[S.P_EZERO], prm[S.P_GROUP]
    nblk, block = K // prm[S.P_BLOCK], prm[S.P_BLOCK]
    H = F + fmts[S.A, S.EMIN] + fmts[S.B, S.EMIN] - da[D_MB] - db[D_MB] - 2 * ds[D_MB]
    G, Dsh = max(H, 0), max(-H, 0)           # terms pre-shifted so alignment only shifts right
    mode, frac, ovf_inf = prm[S.P_MODE], prm[S.P_FRAC], prm[S.P_OVERFLOW] == C.OVERFLOW_INF
    zpos, fault = prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1
    return L, F, ez, g, nblk, block, G, Dsh, mode, frac, ovf_inf, zpos, fault, L // g


@njit(**C.JIT)
def gdfs_block_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, drows, prm, order, out):
    """Rows ``lo .. hi - 1`` of GDFS in integer lanes, :data:`BL` rows at a time: exact group
    sums, times the block scales' significands, aligned to the maximum of the scale exponents
    (a group of zero products or a zero scale takes e_zero), one sum with c, the rounding."""
    da, db, dcf, dd, ds = drows[S.A], drows[S.B], drows[S.CF], drows[S.D], drows[S.S]
    L, F, ez, g, nblk, block, G, Dsh, mode, frac, ovf_inf, zpos, fault, ngr = gdfs_scalars(K, fmts, da, db, ds, prm)
    XA, XB = np.zeros((L, BL), np.int64), np.zeros((L, BL), np.int64)
    T, GE = np.zeros((ngr, BL), np.int64), np.zeros((ngr, BL), np.int64)
    X1, X2 = np.zeros(BL, np.int64), np.zeros(BL, np.int64)
    SS, SE, SF = np.zeros(BL, np.int64), np.zeros(BL, np.int64), np.zeros(BL, np.int64)
    sigma, nonzero = np.zeros(BL, np.int64), np.zeros(BL, np.int64)
    flags, emax = np.zeros(BL, np.int64), np.zeros(BL, np.int64)
    csig, ce, tot = np.zeros(BL, np.int64), np.zeros(BL, np.int64), np.zeros(BL, np.int64)
    wa, wb, wc, wsa, wsb = _widths(a), _widths(b), _widths(c), _widths(sa), _widths(sb)
    for r0 in range(lo, hi, BL):
        nb = min(BL, hi - r0)
        gather_column(wc, isz[2], r0, 1, nb, X1)
        dc = dcf
        for j in range(0, K, L):
            load_pass(wa, isz[0], r0, K, j, L, nb, XA)
            load_pass(wb, isz[1], r0, K, j, L, nb, XB)
            decode_c(X1, dc, ez, csig, ce, flags, BL)                  # c: a zero takes e_zero
            for i in range(BL):
                emax[i] = ce[i]
            for q in range(ngr):
                sigma[:] = 0
                nonzero[:] = 0
                for t in range(q * g, q * g + g):
                    group_sum(XA, XB, t, da, db, sigma, nonzero)
                group_scales(wsa, wsb, isz, ds, r0, nblk, (j + q * g) // block, nb, X2, SS, SE, SF)
                for i in range(BL):
                    T[q, i] = sigma[i] * SS[i]
                    GE[q, i] = ez if (nonzero[i] == 0) | (SS[i] == 0) else SE[i]
                    emax[i] = max(emax[i], GE[q, i])
                    flags[i] |= SF[i]
            align_c(csig, ce, emax, F, dc[D_MB], tot, BL)
            for q in range(ngr):
                for i in range(BL):
                    m = T[q, i]
                    v = (abs(m) << G) >> min(emax[i] - GE[q, i] + Dsh, 63)
                    tot[i] += -v if m < 0 else v
            round_block(tot, emax, flags, F, dd[D_SGNSH], fmts[S.D], mode, frac, ovf_inf, zpos, fault, out, r0, nb)
            for i in range(nb):                                         # the next pass takes d as c
                X1[i] = np.int64(out[r0 + i])
            dc = dd


@njit(**C.INLINE)
def _widths(buf):
    n = buf.shape[0]
    return buf, buf[:n - n % 2].view(np.uint16), buf[:n - n % 4].view(np.uint32), buf[:n - n % 8].view(np.uint64)


@njit(**C.INLINE)
def decode_rows(fmts):
    """:func:`decode_row` of every slot (a scale row's ``D_INF``: 1 where it has no subnormals)."""
    drows = np.zeros((S.SLOTS, D_COLUMNS), np.int64)
    for f in range(S.SLOTS):
        drows[f] = decode_row(fmts, f)
    drows[S.S, D_INF] = 1 - fmts[S.S, S.SUBNORMALS]
    return drows


def register_design(fmts, prm, in_order: bool, ab_row) -> bool:
    """Whether a design is an FDA one the shape kernels (golden.kernels.fda_float's, fda_fp8's) may
    take: a and b both of decode row ``ab_row``, f32 c and d, unscaled, products in order, d rounded
    RZ (NVIDIA's, the one rounding they compute), zero products' exponent e_zero at or below c's
    least (so that a zero product never lifts a pass's maximum, which they take from the nonzero
    products and c), and a design :func:`spec.fast_kind` takes (the other roundings, a user's
    designs, run the family kernel: the same bits)."""
    if not (prm[S.P_BASE] == int(KernelCode.FDA) and prm[S.P_FAST] == S.FAST_FDA and prm[S.P_SCALED] == 0
            and prm[S.P_MODE] == C.RZ and in_order and prm[S.P_EZERO] <= fmts[S.CF, S.EMIN]):
        return False
    return all(tuple(decode_row(fmts, f)) == row
               for f, row in ((S.A, ab_row), (S.B, ab_row), (S.CF, F32_ROW), (S.D, F32_ROW)))
