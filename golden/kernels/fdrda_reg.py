"""CDNA3's FDRDA of bf16 pairs on a register path, one compiled kernel per shape: the fast path of
the catalog's bf16 FDRDA designs in passes of 8 (those :mod:`amd_int` takes; f16's run
:mod:`fdrda_half`, whose products and their scaled truncations are exact in float32).

A block's rows go through a loop across rows with each row's products in registers (LLVM
vectorises it, a row a lane), their operands read as 64-bit words at a constant stride (four
16-bit patterns a word), each word decoded once, its four patterns at a time
(:func:`amd_int.swar16_pair`: 1.2-1.4x the dot-adds a second of decoding each product from its two
patterns, normal and bits alike): per pass the products' maximum exponent, their aligned sum, and the merge
with c and the RNE to f32 (:func:`amd_int.merge_f64`: 1.07x the rows a second of the block path's
integer merge on one lane).  K,
the pass length and the formats' fields must be compile-time constants (with the fields at run
time the loop across rows did not vectorise: 7x slower), so each shape is a kernel of its own,
:data:`KERNELS`, chosen when an instruction's plan is built (``golden.kernels._rows_kernel``).
The chains (K = 16 in passes of 8) copy a block's words into planes first, a plane per word of a
row, so that a pass reads its two words a row contiguously rather than gathered at a stride of
four.  K = 4 (the 2-block instructions) stays on the block path: each shape costs about 6 s of
CPU on its first compile.

NaN, infinities and overflowed products never take a branch per product.  A block whose a or b
holds an exponent field at or above ``T`` runs a second copy of the pass that takes every
product's class in a loop of its own (in the maximum's loop they made it too long for LLVM to
unroll, and the loop across rows then ran scalar): NaN and infinities as IEEE float64 combines
the inputs, and, where the pair's exponents reach that far (``T`` = 191), products at or above
``2**128`` with their sign.  The pass's special outcome is then the paper's
(:func:`amd_int.special_bits`): the inputs' classes and c's first, overflowed products only where
those leave it finite, so an infinite product's own overflow bit is never read.  The kernels read
a, b and c in their own width (:data:`OWN_WIDTH`: ``golden.kernels.run`` narrows wider operands
first); designs whose products are out of order run :func:`amd_int.fdrda_int_rows`.
"""

from __future__ import annotations

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import amd_int as A
from . import spec as S
from .amd_int import (
    MAX_SHIFT,
    NEG,
    OVER_EXP,
    OVN_F,
    OVP_F,
    c_word,
    fields_reach,
    lane16,
    lane_mask,
    special_bits,
    swar16_pair,
    words_classes,
)
from .fused_int import D_BIAS, D_MB, D_NV, _widths, decode_row

BLOCK_ROWS = 256              # rows a block (their classes scanned at once)
OWN_WIDTH = (np.uint16, np.uint16, np.uint32)      # a, b and c as the kernels read them


@njit(**C.HOT)
def pass_word(r, RS, WS, jw, q):
    """The index of word ``q`` of a pass whose 64-bit words start at word ``jw`` of row ``r`` (four
    16-bit patterns a word): ``r * RS + (jw + q) * WS`` (a block's rows as they lie: ``RS`` the
    words a row, ``WS`` 1; its word planes, :func:`h16_rows`: ``RS`` 1, ``WS`` the rows a plane)."""
    return np.uint64(r * RS + (jw + q) * WS)


@njit(**C.HOT)
def class_run(wa, wb, r, RS, WS, jw, L, ra, rb, bab, over):
    """The class bits of row ``r``'s products of a pass, or-ed: NaN and infinities four products a
    word (:func:`amd_int.words_classes`), and where ``over`` (a constant of the pair) the products at
    or above ``2**OVER_EXP``, with their signs, four a word pair (``RS, WS``: :func:`pass_word`'s
    strides)."""
    fl = words_classes(wa, wb, r * RS + jw * WS, L // 4, WS, ra[D_NV])
    if over:
        for q in range(L // 4):
            u = pass_word(r, RS, WS, jw, q)
            ga, gb, es, sg = swar16_pair(wa[u], wb[u], ra, rb)
            for k in range(4):
                # 2**OVER_EXP or more: the exponent sum, plus 1 where the significands' product
                # reaches 2 (a normal pair's is below 4); a pair with a subnormal (its field taken
                # as 1) has a sum too small to reach it whatever its carry
                carry = (lane16(ga, k) * lane16(gb, k)) >> (ra[D_MB] + rb[D_MB] + 1)
                fl |= np.int64(lane16(es, k) + carry >= OVER_EXP - bab) * (OVN_F if lane16(sg, k) != 0 else OVP_F)
    return fl


@njit(**C.HOT)
def reg_pass(r0, nb, wa, wb, CW, RS, WS, L, j, ra, rb, bab, G, sh0, over, fmts, prm, classes):
    """Pass ``j`` (``L`` = 8 products: two word pairs, :func:`amd_int.swar16_pair`) of rows ``r0 ..
    r0 + nb - 1`` (``RS, WS``: :func:`pass_word`'s strides): c's words in ``CW[i]``, d's bits into
    ``CW``.  With ``classes`` (a constant: two copies) a loop of its own over the row's products
    takes their classes (:func:`class_run`), which decide the rows that have one (their sums are
    computed and not read)."""
    F, dfb, cfb, ffb, c_drop = prm[S.P_F], prm[S.P_DOTFB], prm[S.P_CFB], prm[S.P_FINFB], prm[S.P_CDROP]
    nan_bits, inf_bits = np.uint64(fmts[S.D, C.NAN_BITS]), np.uint64(fmts[S.D, C.INF_BITS])
    zpos = prm[S.P_ZPOS] == 1
    jw = j // 4
    # the products' left shift G is taken by the significands in their 16-bit lanes, b's first
    # (kernel_for: they fit), one shift a word for four products
    gb_ = min(G, 15 - rb[D_MB])
    ga_, gb_ = np.uint64(G - gb_), np.uint64(gb_)
    two_nf = A.amd.p2(-F)
    q = A.merge_factors(dfb, cfb, ffb, c_drop)
    for i in range(nb):
        r = r0 + i
        u0, u1 = pass_word(r, RS, WS, jw, 0), pass_word(r, RS, WS, jw, 1)
        P0, P1 = swar16_pair(wa[u0], wb[u0], ra, rb), swar16_pair(wa[u1], wb[u1], ra, rb)
        A0, A1, B0, B1 = P0[0] << ga_, P1[0] << ga_, P0[1] << gb_, P1[1] << gb_
        e = np.int64(0)             # the biased exponent sums' maximum (0: every product zero)
        for t in range(L):          # the products' maximum, then their aligned sum (LLVM keeps them)
            P = P0 if t < 4 else P1
            e = max(e, lane16(P[2], t % 4))
        s = np.int64(0)
        for t in range(L):
            P = P0 if t < 4 else P1
            k = t % 4
            m = lane16(A0 if t < 4 else A1, k) * lane16(B0 if t < 4 else B1, k)   # m << G
            v = m >> min(e - lane16(P[2], k) + sh0, MAX_SHIFT)              # the bias cancels
            s += -v if lane16(P[3], k) != 0 else v
        e = np.int64(NEG) if e == 0 else e + bab
        _, _, cf = c_word(CW[i])
        if classes:
            cf |= class_run(wa, wb, r, RS, WS, jw, L, ra, rb, bab, over)
        em = 0.0 if e == NEG else A.amd.p2(e)
        c = np.float64(C.f32_from_bits(np.uint32(CW[i])))
        d = np.uint64(C.bits_from_f32(A.merge_f64(C.f64_of_i51(s) * em * two_nf, em, c, dfb, q)))
        d = d if cf == 0 else special_bits(cf, nan_bits, inf_bits)
        CW[i] = np.int64(np.uint64(0) if zpos and d == np.uint64(0x80000000) else d)


@njit(**C.INLINE)
def h16_rows(lo, hi, a, b, c, isz, fmts, prm, out, KC, LC, ra, rb):
    """:func:`amd_int.fdrda_int_rows`' rows on the register path for a shape (``KC, LC``: K and the
    pass length, ``ra, rb``: the pair's decode rows, all constants), a, b and c in their own width
    (:data:`OWN_WIDTH`).  A block scans its exponent fields once (:func:`amd_int.fields_reach`,
    four lanes a word): none at ``T`` or above, no product is special or overflows (a product is
    below ``2**(e_a + e_b + 2)``)."""
    if isz[0] != 2 or isz[1] != 2 or isz[2] != 4:
        raise ValueError("golden.kernels.fdrda_reg reads a and b as 16-bit and c as 32-bit words")
    da, db = decode_row(fmts, S.A), decode_row(fmts, S.B)
    mbab = da[D_MB] + db[D_MB]
    G = max(prm[S.P_F] - mbab, 0)                  # products pre-shifted so alignment only shifts right
    sh0 = max(mbab - prm[S.P_F], 0)
    bab = -da[D_BIAS] - db[D_BIAS]
    _, _, ma, ea, _, _, _, _, _ = ra
    _, _, mb, eb, _, _, _, _, _ = rb
    half = (OVER_EXP + ra[D_BIAS] + rb[D_BIAS]) // 2
    ta, tb = min(ea, half), min(eb, half)
    over = ta != ea or tb != eb                     # the pair's products may overflow (bf16)
    # four lanes at once: a field e >= T carries (e + 2**bits - T) into the lane's sign bit
    fa_m, fa_add = lane_mask(ea << ma), lane_mask((ea + 1 - ta) << ma)
    fb_m, fb_add = lane_mask(eb << mb), lane_mask((eb + 1 - tb) << mb)
    wa, wb, wc = _widths(a)[3], _widths(b)[3], _widths(c)[2]
    CW = np.empty(BLOCK_ROWS, np.int64)
    NW = KC // 4
    chain = KC > LC                                 # passes of part of a row: its words in planes first
    PA, PB = np.empty(NW * BLOCK_ROWS if chain else 0, np.uint64), np.empty(NW * BLOCK_ROWS if chain else 0, np.uint64)
    for r0 in range(lo, hi, BLOCK_ROWS):
        nb = min(BLOCK_ROWS, hi - r0)
        for i in range(nb):
            CW[i] = np.int64(wc[np.uint64(r0 + i)])
        special = fields_reach(wa, wb, r0 * NW, (r0 + nb) * NW, fa_m, fa_add, fb_m, fb_add)
        if chain:
            for i in range(nb):
                for q in range(NW):
                    PA[q * BLOCK_ROWS + i] = wa[np.uint64((r0 + i) * NW + q)]
                    PB[q * BLOCK_ROWS + i] = wb[np.uint64((r0 + i) * NW + q)]
        xa, xb = (PA, PB) if chain else (wa, wb)
        p0, RS, WS = (0, 1, BLOCK_ROWS) if chain else (r0, NW, 1)
        for j in range(0, KC, LC):
            if special:
                reg_pass(p0, nb, xa, xb, CW, RS, WS, LC, j, ra, rb, bab, G, sh0, over, fmts, prm, True)
            else:
                reg_pass(p0, nb, xa, xb, CW, RS, WS, LC, j, ra, rb, bab, G, sh0, over, fmts, prm, False)
        for i in range(nb):
            out[r0 + i] = np.uint64(CW[i])
    if prm[S.P_FAULT] == 1:
        C.fault_ulp(out, lo, hi)


BF16 = A.BF16_ROW

# One dispatcher per shape, written out (as golden.kernels.amd_fp8's: a factory's closures share
# one entry of numba's on-disk cache, and wrappers taking ``*args`` ran 4-5x slower).


@njit(**C.JIT)
def bf16_8(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    h16_rows(lo, hi, a, b, c, isz, fmts, prm, out, 8, 8, BF16, BF16)


@njit(**C.JIT)
def bf16_16(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    h16_rows(lo, hi, a, b, c, isz, fmts, prm, out, 16, 8, BF16, BF16)


# (a's and b's literal, K, L) -> the shape's kernel
KERNELS = {(A.BF16_LIT, 8, 8): bf16_8, (A.BF16_LIT, 16, 8): bf16_16}


def kernel_for(fmts, prm, k: int, in_order: bool):
    """The shape's kernel of a design :func:`amd_int.int_design` takes, or None: FDRDA (not GFDRDA)
    with its products in order and overflowed products special, a and b both bf16 (F at most 30:
    :func:`reg_pass`), K and the pass length of :data:`KERNELS`."""
    if prm[S.P_BASE] == S.GFDRDA_CODE or prm[S.P_PROD_OVER] != 1 or not in_order:
        return None
    ka = int(A.literal_of(decode_row(fmts, S.A)))
    kb = int(A.literal_of(decode_row(fmts, S.B)))
    if ka != kb:
        return None
    ma, mb, F = int(fmts[S.A, C.MAN_BITS]), int(fmts[S.B, C.MAN_BITS]), int(prm[S.P_F])
    if F - ma - mb > (15 - ma) + (15 - mb):
        return None                 # reg_pass: G within the significands' 16-bit lanes
    return KERNELS.get((ka, int(k), int(prm[S.P_L])))
