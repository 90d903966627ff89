"""NVIDIA's fused algorithms compiled: FDA (block scales, the chain of passes CoFDA, the compiled-path
lowering: operand_format, pass_interleave, c_last) and GDFS with block scales.

Each row runs the numpy path's steps (``algorithms.fda``, ``algorithms.gdfs``, ``algorithms.run``)
in the same float64 arithmetic on integer values, so every intermediate is the same number:
products from the same tables, the maximum exponent with the e_zero rule, alignment by ``trunc``,
one exact sum, :func:`_common.finish`.
"""

from __future__ import annotations

import math

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import fused_int as FI
from . import spec as S


@njit(**C.INLINE)
def widths(buf):
    """The operand's bytes as u8, u16, u32 and u64 views, made once per call: the loops below read
    the one its item size names, in its own width."""
    n = buf.shape[0]
    return buf, buf[:n - n % 2].view(np.uint16), buf[:n - n % 4].view(np.uint32), buf[:n - n % 8].view(np.uint64)


@njit(**C.INLINE)
def gather_indices(w, isz, base, order, j, L, shift, mask, out):
    """``out[t]`` = table index of element ``base + order[j + t]`` of the operand ``w`` (its
    :func:`widths`): one loop per item size, no per-element branch on the width."""
    sh = np.uint64(shift)
    if isz == 1:
        v1 = w[0]
        for t in range(L):
            out[t] = np.int64(np.uint64(v1[base + order[j + t]]) >> sh) & mask
    elif isz == 2:
        v2 = w[1]
        for t in range(L):
            out[t] = np.int64(np.uint64(v2[base + order[j + t]]) >> sh) & mask
    elif isz == 4:
        v4 = w[2]
        for t in range(L):
            out[t] = np.int64(np.uint64(v4[base + order[j + t]]) >> sh) & mask
    else:
        v8 = w[3]
        for t in range(L):
            out[t] = np.int64(v8[base + order[j + t]] >> sh) & mask


@njit(**C.INLINE)
def block_scratch(L, a, b):
    """Scratch of a kernel that takes its products a block of rows at a time (:func:`fill_block`):
    one row's products and exponents, indices, widths, the block's products and exponents, its c."""
    BL = BLOCK_ROWS
    P, E, IA, IB, wa, wb = row_scratch(max(L, BL), a, b)
    return P, E, IA, IB, wa, wb, np.empty((L, BL)), np.empty((L, BL), np.int64), np.empty(BL), np.empty(BL, np.int64)


@njit(**C.INLINE)
def first_c(fmts, vtab, etab, c, isz, r0, nb, cv, ce):
    """c's values and exponents for a block's first pass."""
    for i in range(nb):
        cv[i], ce[i] = c_value(fmts, vtab, etab, S.CF, C.load(c, isz[2], r0 + i))


@njit(**C.INLINE)
def column(Pm, Em, i, L, P, E):
    """Row ``i`` of a block's products into one row's scratch."""
    for t in range(L):
        P[t] = Pm[t, i]
        E[t] = Em[t, i]


@njit(**C.INLINE)
def chain(out, r0, i, d, fmts, vtab, etab, cv, ce):
    """Row ``r0 + i``'s pass result: d so far, and the next pass's c."""
    out[r0 + i] = d
    cv[i], ce[i] = c_value(fmts, vtab, etab, S.D, d)


@njit(**C.INLINE)
def row_scratch(L, a, b):
    """Scratch of a row-at-a-time kernel: products, exponents, indices of a and b, their widths."""
    return (np.empty(L), np.empty(L, np.int64), np.empty(L, np.int64), np.empty(L, np.int64),
            widths(a), widths(b))


@njit(**C.INLINE)
def fill_products(a, b, wa, wb, isz, fmts, vtab, etab, base, order, j, L, P, E, IA, IB):
    """``P[t], E[t]`` = product ``order[j + t]`` of the row starting at element ``base``, t < L.

    Formats of up to 8 bits gather from their 256-entry tables; f16 and bf16 decode their fields
    without branches (their 64K-entry tables miss the caches), a row with an infinity or NaN
    through the tables; TF32/f32 through ``_common.value_exp``.  ``IA, IB``: scratch."""
    oa, ob = fmts[S.A, C.TABLE_OFF], fmts[S.B, C.TABLE_OFF]
    if oa >= 0 and ob >= 0:
        gather_indices(wa, isz[0], base, order, j, L, fmts[S.A, C.IGNORED_LOW],
                       (np.int64(1) << fmts[S.A, C.VALUE_BITS]) - 1, IA)
        gather_indices(wb, isz[1], base, order, j, L, fmts[S.B, C.IGNORED_LOW],
                       (np.int64(1) << fmts[S.B, C.VALUE_BITS]) - 1, IB)
        if fields_decodable(fmts, S.A) and fields_decodable(fmts, S.B):
            if decode_fields(fmts, S.A, IA, L, P, E, True) and decode_fields(fmts, S.B, IB, L, P, E, False):
                return
        xa, xb = fmts[S.A, C.EXP_TAB_OFF], fmts[S.B, C.EXP_TAB_OFF]
        for t in range(L):
            x, y = IA[t], IB[t]
            P[t] = np.float64(vtab[oa + x]) * np.float64(vtab[ob + y])
            E[t] = np.int64(etab[xa + x]) + np.int64(etab[xb + y])
        return
    gather_indices(wa, isz[0], base, order, j, L, 0, -1, IA)          # the raw bits, in their width
    gather_indices(wb, isz[1], base, order, j, L, 0, -1, IB)
    for t in range(L):
        va, ea = C.value_exp(fmts, vtab, etab, S.A, np.uint64(IA[t]))
        vb, eb = C.value_exp(fmts, vtab, etab, S.B, np.uint64(IB[t]))
        P[t] = va * vb
        E[t] = ea + eb


@njit(**C.HOT)
def fields_decodable(fmts, f):
    """Signed formats with subnormals and no ignored bits (f16, bf16, fp8, fp6, fp4): read from
    their fields as their tables say (a NaN or infinity sends the step to the tables)."""
    return fmts[f, C.SIGNED] == 1 and fmts[f, C.SUBNORMALS] == 1 and fmts[f, C.IGNORED_LOW] == 0


@njit(**C.INLINE)
def decode_fields(fmts, f, IX, L, P, E, first):
    """Values and exponents of the indices ``IX[:L]`` from their fields, as the tables hold them
    (zero: ZERO_EXP); into ``P, E`` (``first``) or multiplied/added into them.  False (nothing
    usable written) when one is an infinity or NaN: the caller takes the tables."""
    mb, eb = fmts[f, C.MAN_BITS], fmts[f, C.EXP_BITS]
    bias, emin = fmts[f, C.BIAS], fmts[f, C.EMIN]
    mmask, emask, top = (np.int64(1) << mb) - 1, (np.int64(1) << eb) - 1, (np.int64(1) << eb) - 1
    kind = fmts[f, C.NAN_KIND]
    # the one pattern class that is not a number: its (exponent, mantissa) fields and which to match
    top_any = kind == C.NAN_IEEE                     # exponent all ones: infinity or NaN
    top_ones = kind == C.NAN_ALL_ONES                # exponent and mantissa all ones: NaN
    neg_zero = kind == C.NAN_NEG_ZERO                # the sign bit alone: NaN
    special = False
    for t in range(L):
        x = IX[t]
        man = x & mmask
        ef = (x >> mb) & emask
        sgn = (x >> (mb + eb)) & 1
        special |= ((top_any and ef == top) or (top_ones and ef == top and man == mmask)
                    or (neg_zero and sgn == 1 and ef == 0 and man == 0))
        normal = ef != 0
        sig = man | (np.int64(1) << mb) if normal else man
        e = ef - bias if normal else emin
        v = np.float64(sig) * C.f64_from_bits(np.uint64(e - mb + 1023) << np.uint64(52))
        v = -v if sgn else v
        e = e if sig != 0 else np.int64(C.ZERO_EXP)
        if first:
            P[t] = v
            E[t] = e
        else:
            P[t] *= v
            E[t] += e
    return not special


@njit(**C.INLINE)
def scale_product(sa, sb, isz, fmts, vtab, etab, i):
    """Value and exponent sum of the two block scales of block ``i`` (``algorithms._scale_stage``)."""
    va, ea = C.value_exp(fmts, vtab, etab, S.S, C.load(sa, isz[3], i))
    vb, eb = C.value_exp(fmts, vtab, etab, S.S, C.load(sb, isz[4], i))
    return va * vb, ea + eb


@njit(**C.HOT)
def c_value(fmts, vtab, etab, slot, bits):
    """c's value and exponent (an f32 word decoded in place: the common case, once per pass)."""
    if fmts[slot, C.WORD32] == 1 and fmts[slot, C.IGNORED_LOW] == 0:
        return C.word32_value_exp(bits)
    return C.value_exp(fmts, vtab, etab, slot, bits)


@njit(**C.INLINE)
def ieee_add(fmts, vtab, etab, x, y, zpos):
    """``algorithms.ieee_add``: ``RNE(x + y)`` in d's format (f16 or f32) for c_last."""
    xv, _ = C.value_exp(fmts, vtab, etab, S.D, x)
    yv, _ = C.value_exp(fmts, vtab, etab, S.D, y)
    s = xv + yv
    if math.isnan(s):
        return np.uint64(fmts[S.D, C.NAN_BITS])
    if fmts[S.D, C.WORD32] == 1:
        d = np.uint64(C.bits_from_f32(np.float32(xv) + np.float32(yv)))
    else:
        d = C.round_f64(fmts, S.D, s, C.RNE)
    if zpos and d == (np.uint64(1) << np.uint64(fmts[S.D, C.EXP_BITS] + fmts[S.D, C.MAN_BITS])):
        d = np.uint64(0)
    return d


BLOCK_ROWS = 64     # rows a fused kernel carries through each step together (the inner loops run across them)


@njit(**C.INLINE)
def gather_column(w, isz, r0, K, k, nb, shift, mask, out):
    """``out[i]`` = table index of element ``k`` of rows ``r0 + i``, i < nb (one loop per width)."""
    sh = np.uint64(shift)
    if isz == 1:
        v1 = w[0]
        for i in range(nb):
            out[i] = np.int64(np.uint64(v1[(r0 + i) * K + k]) >> sh) & mask
    elif isz == 2:
        v2 = w[1]
        for i in range(nb):
            out[i] = np.int64(np.uint64(v2[(r0 + i) * K + k]) >> sh) & mask
    elif isz == 4:
        v4 = w[2]
        for i in range(nb):
            out[i] = np.int64(np.uint64(v4[(r0 + i) * K + k]) >> sh) & mask
    else:
        v8 = w[3]
        for i in range(nb):
            out[i] = np.int64(v8[(r0 + i) * K + k] >> sh) & mask


@njit(**C.INLINE)
def fill_block(a, b, wa, wb, isz, fmts, vtab, etab, r0, nb, K, order, j, L, Pm, Em, IA, IB):
    """Products ``order[j + t]`` of rows ``r0 .. r0 + nb - 1`` into ``Pm[t, i], Em[t, i]``, as
    :func:`fill_products` computes them, a product index at a time across the rows."""
    oa, ob = fmts[S.A, C.TABLE_OFF], fmts[S.B, C.TABLE_OFF]
    if not (oa >= 0 and ob >= 0):
        for i in range(nb):                          # TF32/f32: a row at a time
            fill_products(a, b, wa, wb, isz, fmts, vtab, etab, (r0 + i) * K, order, j, L, Pm[:, i], Em[:, i],
                          IA, IB)
        return
    fields = fields_decodable(fmts, S.A) and fields_decodable(fmts, S.B)
    ma, mb = (np.int64(1) << fmts[S.A, C.VALUE_BITS]) - 1, (np.int64(1) << fmts[S.B, C.VALUE_BITS]) - 1
    xa, xb = fmts[S.A, C.EXP_TAB_OFF], fmts[S.B, C.EXP_TAB_OFF]
    for t in range(L):
        k = order[j + t]
        gather_column(wa, isz[0], r0, K, k, nb, fmts[S.A, C.IGNORED_LOW], ma, IA)
        gather_column(wb, isz[1], r0, K, k, nb, fmts[S.B, C.IGNORED_LOW], mb, IB)
        P, E = Pm[t], Em[t]
        if fields and decode_fields(fmts, S.A, IA, nb, P, E, True) and decode_fields(fmts, S.B, IB, nb, P, E, False):
            continue
        for i in range(nb):
            x, y = IA[i], IB[i]
            P[i] = np.float64(vtab[oa + x]) * np.float64(vtab[ob + y])
            E[i] = np.int64(etab[xa + x]) + np.int64(etab[xb + y])


@njit(**C.JIT)
def fda_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """Rows ``lo .. hi - 1`` of FDA / CoFDA / the lowered paths, :data:`BLOCK_ROWS` rows at a time:
    each step of :func:`fda_pass` runs across the block's rows (loops the compiler vectorises),
    the final rounding row by row.  Designs :func:`spec.fast_kind` takes run in integer lanes
    (:mod:`fused_int`)."""
    if prm[S.P_FAST] != S.FAST_NONE:
        FI.fda_block_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, FI.decode_rows(fmts), prm, order, out)
        return
    L = prm[S.P_L]
    block = prm[S.P_BLOCK]
    nblk = K // block
    scaled = prm[S.P_SCALED] == 1
    c_last = prm[S.P_CLAST] == 1
    F, ez = prm[S.P_F], prm[S.P_EZERO]
    BL = BLOCK_ROWS
    Pm = np.empty((L, BL))
    Em = np.empty((L, BL), np.int64)
    IA = np.empty(max(L, BL), np.int64)
    IB = np.empty(max(L, BL), np.int64)
    cv = np.empty(BL)
    ce = np.empty(BL, np.int64)
    cb = np.empty(BL, np.uint64)
    emax = np.empty(BL, np.int64)
    zero = np.empty(BL, np.bool_)
    scale = np.empty(BL)
    tot = np.empty(BL)
    wa, wb = widths(a), widths(b)
    for r0 in range(lo, hi, BL):
        nb = min(BL, hi - r0)
        fc_slot = S.D if c_last else S.CF
        for i in range(nb):
            cb[i] = C.load(c, isz[2], r0 + i)
            if c_last:                               # the chain starts from +0; c comes at the end
                cv[i], ce[i] = 0.0, C.ZERO_EXP
            else:
                cv[i], ce[i] = c_value(fmts, vtab, etab, S.CF, cb[i])
        for j in range(0, K, L):
            fill_block(a, b, wa, wb, isz, fmts, vtab, etab, r0, nb, K, order, j, L, Pm, Em, IA, IB)
            if scaled:                       # the two scale exponents join each product's; a NaN scale gives NaN
                for i in range(nb):
                    for t0 in range(0, L, block):
                        sv, se = scale_product(sa, sb, isz, fmts, vtab, etab, (r0 + i) * nblk + (j + t0) // block)
                        for t in range(t0, t0 + block):
                            Pm[t, i] *= sv
                            Em[t, i] += se
            for i in range(nb):
                emax[i] = ez if ce[i] <= C.NO_TERM else ce[i]         # a zero c takes e_zero
                zero[i] = False
            for t in range(L):
                E = Em[t]
                for i in range(nb):
                    emax[i] = max(emax[i], E[i])
                    zero[i] |= E[i] <= C.NO_TERM
            lift = ez > fmts[fc_slot, C.EMIN]                          # zero products take e_zero
            for i in range(nb):
                if lift and zero[i]:
                    emax[i] = max(emax[i], ez)
                scale[i] = C.pow2(F - emax[i])
                tot[i] = C.ftrunc(cv[i] * scale[i])
            for t in range(L):
                P = Pm[t]
                for i in range(nb):
                    tot[i] += C.ftrunc(P[i] * scale[i])
            for i in range(nb):
                d = C.finish(fmts, S.D, tot[i], tot[i], emax[i] - F, prm[S.P_MODE], prm[S.P_FRAC],
                             prm[S.P_OVERFLOW], prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1)
                out[r0 + i] = d
                cv[i], ce[i] = c_value(fmts, vtab, etab, S.D, d)      # the next pass takes d as c
            fc_slot = S.D
        if c_last:
            for i in range(nb):
                out[r0 + i] = ieee_add(fmts, vtab, etab, out[r0 + i], cb[i], prm[S.P_ZPOS] == 1)


@njit(**C.INLINE)
def gdfs_pass(P, j, L, a, b, c, sa, sb, isz, r, nblk, cv, ce, fmts, vtab, etab, prm, T, G):
    """One GDFS pass: exact group sums of ``g`` products, times the block scales, aligned to F."""
    F, ez, g, block = prm[S.P_F], prm[S.P_EZERO], prm[S.P_GROUP], prm[S.P_BLOCK]
    ngroups = L // g
    e_max = ez if ce <= C.NO_TERM else ce
    for q in range(ngroups):
        sigma = 0.0
        all_zero = True
        for t in range(q * g, q * g + g):
            sigma += P[t]
            all_zero &= not (P[t] != 0)
        sv, se = scale_product(sa, sb, isz, fmts, vtab, etab, r * nblk + (j + q * g) // block)
        T[q] = sigma * sv
        G[q] = ez if (all_zero or sv == 0) else se
        e_max = max(e_max, G[q])
    scale = C.pow2(F - e_max)
    total = 0.0
    for q in range(ngroups):
        total += C.ftrunc(T[q] * scale)
    total += C.ftrunc(cv * scale)
    return C.finish(fmts, S.D, total, total, e_max - F, prm[S.P_MODE], prm[S.P_FRAC], prm[S.P_OVERFLOW],
                    prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1)


@njit(**C.JIT)
def gdfs_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """Rows ``lo .. hi - 1`` of GDFS (and chains of GDFS passes); :func:`spec.fast_kind`'s designs
    in integer lanes (:mod:`fused_int`)."""
    if prm[S.P_FAST] != S.FAST_NONE:
        FI.gdfs_block_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, FI.decode_rows(fmts), prm, order, out)
        return
    L = prm[S.P_L]
    nblk = K // prm[S.P_BLOCK]
    P, E, IA, IB, wa, wb, Pm, Em, cv, ce = block_scratch(L, a, b)
    T = np.empty(L)
    G = np.empty(L, np.int64)
    for r0 in range(lo, hi, BLOCK_ROWS):          # products a block of rows at a time (fill_block)
        nb = min(BLOCK_ROWS, hi - r0)
        first_c(fmts, vtab, etab, c, isz, r0, nb, cv, ce)
        for j in range(0, K, L):
            fill_block(a, b, wa, wb, isz, fmts, vtab, etab, r0, nb, K, order, j, L, Pm, Em, IA, IB)
            for i in range(nb):
                column(Pm, Em, i, L, P, E)
                d = gdfs_pass(P, j, L, a, b, c, sa, sb, isz, r0 + i, nblk, cv[i], ce[i], fmts, vtab, etab, prm, T, G)
                chain(out, r0, i, d, fmts, vtab, etab, cv, ce)
