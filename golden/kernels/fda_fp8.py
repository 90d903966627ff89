"""NVIDIA's FDA and CoFDA of E4M3 pairs into f32 on a register path, one compiled kernel per shape:
the fast path of the catalog's QMMA/HGMMA E4M3 x E4M3 designs with f32 c and d (those
:mod:`fda_float` would take were they f16).

A block's rows go through a loop across rows with each row's products
in registers, its operands read as 64-bit words (eight E4M3 a word), each word decoded once, its
eight patterns at a time in byte lanes (:func:`amd_int.swar8_pair`); per pass, c's fields, the
products' maximum exponent, c and the products aligned to it and summed, and the rounding to f32
(:func:`fused_int.round_word`).  Against the family kernel (``fused.fda_rows``, which decodes each
product from the patterns into memory), 1.7x the dot-adds a second on Ada's QMMA.16832 (K = 32 in
passes of 16), normal and random bit patterns alike.  K and the pass length are compile-time
constants, a kernel a shape (:data:`KERNELS`), as :mod:`fda_float`'s are.

E4M3 has no infinities and its one NaN magnitude is 0x7F: a block whose a or b holds one (a
zero-byte test on the words, :func:`nan_word`) runs a second copy of the pass that flags the rows
of a NaN product NaN; c's class is read on every row.  E5M2 (infinities) stays on the family
kernel.  The kernels read a, b and c in their own width (:data:`OWN_WIDTH`: ``golden.kernels.run``
narrows wider operands first).
"""

from __future__ import annotations

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import spec as S
from .amd_int import any_zero_byte, c_word, lane8, swar8_pair
from .fused_int import (
    D_BIAS,
    D_MB,
    D_SGNSH,
    E4M3_ROW,
    NAN_FLAG,
    NEG,
    _widths,
    decode_row,
    register_design,
    round_word,
    rz_consts,
)

BLOCK_ROWS = 128               # rows a block
OWN_WIDTH = (np.uint8, np.uint8, np.uint32)      # a, b and c as the kernels read them
M7F = np.uint64(0x7F7F7F7F7F7F7F7F)


@njit(**C.HOT)
def c_lane(x, ez):
    """c (or the previous pass's d), an f32 pattern: :func:`amd_int.c_word`'s signed significand,
    exponent and NaN/inf class bits (fused_int's flag values), the exponent ``ez`` when zero, as
    :func:`fused_int.decode_c` gives them."""
    cs, ce, fl = c_word(x)
    return cs, ez if cs == 0 else ce, fl


@njit(**C.HOT)
def c_aligned(cs, ce, e, F):
    """c (signed significand ``cs`` at exponent ``ce``) aligned to the pass's maximum ``e``:
    ``trunc(c * 2**(F - e))``."""
    sh = e - ce + 23 - F
    v = (abs(cs) >> min(max(sh, 0), 62)) << min(max(-sh, 0), 62)
    return -v if cs < 0 else v


@njit(**C.HOT)
def product_shift(topb, es):
    """The right shift that truncates a product of biased exponent sum ``es`` to ``topb``, capped at
    63 (c may lift the maximum far above a product) and masked to 0 .. 63: a negative one is a zero
    product's (its sum 0 may sit above ``topb``), whose 0 any shift keeps, and the mask alone keeps
    it defined (one AVX2 compare and blend fewer than a clamp at 0: 1.02-1.08x Ampere's f16 dot-adds
    a second on a Zen 3 core, on the integer path that f16 took before :mod:`fda_float`)."""
    return min(topb - es, 63) & 63


@njit(**C.HOT)
def fda_scalars(fmts, prm):
    """What a register-path FDA pass reads of a design, once per call: ``(F, e_zero, G, Dsh, bab,
    d's sign shift, rounding constants)``: products pre-shifted left by ``G`` so that alignment
    only shifts right (``Dsh`` the fraction bits' right shift), ``bab`` the operands' biases.  The
    rounding is RZ's (the shape kernels take RZ designs alone: :func:`fused_int.register_design`) on
    :func:`fused_int.rz_consts` (1.1x the dot-adds a second on Ampere's two roundings a row); the
    planted fault is :func:`_common.fault_ulp`'s pass."""
    F, ez = prm[S.P_F], prm[S.P_EZERO]
    da, db = decode_row(fmts, S.A), decode_row(fmts, S.B)
    G = max(F - da[D_MB] - db[D_MB], 0)
    Dsh = max(da[D_MB] + db[D_MB] - F, 0)
    bab = -da[D_BIAS] - db[D_BIAS]
    rc = rz_consts(fmts[S.D], prm[S.P_FRAC], prm[S.P_OVERFLOW] == C.OVERFLOW_INF, prm[S.P_ZPOS] == 1)
    return F, ez, G, Dsh, bab, decode_row(fmts, S.D)[D_SGNSH], rc


@njit(**C.HOT)
def nan_word(w):
    """Whether a word holds an E4M3 NaN (magnitude 0x7F) in a byte: the zero-byte test on the
    magnitudes xor 0x7F."""
    return any_zero_byte((w & M7F) ^ M7F)


@njit(**C.HOT)
def max8(P, bab):
    """The largest exponent of a word pair's 8 products (:func:`amd_int.swar8_pair`), ``NEG`` where
    every one is zero.  A zero product's exponent never lifts a pass's maximum
    (:func:`fused_int.register_design`: e_zero at or below c's least, which the maximum includes)."""
    m = np.int64(0)
    for k in range(8):
        m = max(m, lane8(P[2], k))
    return m + bab if m != 0 else np.int64(NEG)


@njit(**C.HOT)
def sum8(P, G, topb):
    """A word pair's 8 products truncated to ``topb`` (the maximum exponent plus the fraction bits'
    right shift, biased as the pair's exponent sums are) and summed, each shifted by
    :func:`product_shift`."""
    s = np.int64(0)
    for k in range(8):
        m = lane8(P[0], k) * lane8(P[1], k)
        v = (m << G) >> product_shift(topb, lane8(P[2], k))
        s += -v if lane8(P[3], k) != 0 else v
    return s


@njit(**C.HOT)
def fp8_pass(r0, nb, wa, wb, CW, K, L, j, G, Dsh, bab, F, ez, sgnsh, rc, classes):
    """Pass ``j`` (``L`` = 8, 16 or 32 products: one to four word pairs) of rows ``r0 .. r0 + nb -
    1``: c's words in ``CW[i]``, d's bits into ``CW``; with ``classes`` (a constant: two copies) the
    rows with a NaN operand in the pass flagged NaN."""
    NW, jw = K // 8, j // 8
    for i in range(nb):
        r = r0 + i
        u = np.uint64(r * NW + jw)
        P0 = swar8_pair(wa[u], wb[u], E4M3_ROW, E4M3_ROW)
        P1 = swar8_pair(wa[u + np.uint64(1)], wb[u + np.uint64(1)], E4M3_ROW, E4M3_ROW) if L >= 16 else P0
        P2 = swar8_pair(wa[u + np.uint64(2)], wb[u + np.uint64(2)], E4M3_ROW, E4M3_ROW) if L >= 32 else P0
        P3 = swar8_pair(wa[u + np.uint64(3)], wb[u + np.uint64(3)], E4M3_ROW, E4M3_ROW) if L >= 32 else P0
        cs, ce, fl = c_lane(CW[i], ez)
        e = max(ce, max8(P0, bab))
        if L >= 16:
            e = max(e, max8(P1, bab))
        if L >= 32:
            e = max(e, max(max8(P2, bab), max8(P3, bab)))
        tot = c_aligned(cs, ce, e, F)
        topb = e + Dsh - bab            # the biased sums' top
        tot += sum8(P0, G, topb)
        if L >= 16:
            tot += sum8(P1, G, topb)
        if L >= 32:
            tot += sum8(P2, G, topb) + sum8(P3, G, topb)
        if classes:
            nan = np.int64(0)
            for q in range(L // 8):
                nan |= np.int64(nan_word(wa[u + np.uint64(q)]) | nan_word(wb[u + np.uint64(q)]))
            fl |= NAN_FLAG * nan
        CW[i] = round_word(tot, e, fl, F, sgnsh, rc)


@njit(**C.INLINE)
def e4_rows(lo, hi, a, b, c, isz, fmts, prm, out, KC, LC):
    """:func:`fused_int.fda_block_rows`' rows on the register path for a shape (``KC, LC``: K and the
    pass length, constants), blocks of :data:`BLOCK_ROWS` rows, a, b and c in their own width
    (:data:`OWN_WIDTH`)."""
    if isz[0] != 1 or isz[1] != 1 or isz[2] != 4:
        raise ValueError("golden.kernels.fda_fp8 reads a and b as bytes and c as 32-bit words")
    F, ez, G, Dsh, bab, sgnsh, rc = fda_scalars(fmts, prm)
    wa, wb, wc = _widths(a)[3], _widths(b)[3], _widths(c)[2]
    CW = np.empty(BLOCK_ROWS, np.int64)
    NW = KC // 8
    for r0 in range(lo, hi, BLOCK_ROWS):
        nb = min(BLOCK_ROWS, hi - r0)
        for i in range(nb):
            CW[i] = np.int64(wc[np.uint64(r0 + i)])
        special = False
        for q in range(r0 * NW, (r0 + nb) * NW):
            special |= nan_word(wa[np.uint64(q)]) | nan_word(wb[np.uint64(q)])
        for j in range(0, KC, LC):
            if special:
                fp8_pass(r0, nb, wa, wb, CW, KC, LC, j, G, Dsh, bab, F, ez, sgnsh, rc, True)
            else:
                fp8_pass(r0, nb, wa, wb, CW, KC, LC, j, G, Dsh, bab, F, ez, sgnsh, rc, False)
        for i in range(nb):
            out[r0 + i] = np.uint64(CW[i])
    if prm[S.P_FAULT] == 1:
        C.fault_ulp(out, lo, hi)


# One dispatcher per shape, written out (as golden.kernels.amd_fp8's: a factory's closures share
# one entry of numba's on-disk cache, and wrappers taking ``*args`` ran 4-5x slower).


@njit(**C.JIT)
def e4_32_16(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    e4_rows(lo, hi, a, b, c, isz, fmts, prm, out, 32, 16)


@njit(**C.JIT)
def e4_32_32(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    e4_rows(lo, hi, a, b, c, isz, fmts, prm, out, 32, 32)


@njit(**C.JIT)
def e4_16_16(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    e4_rows(lo, hi, a, b, c, isz, fmts, prm, out, 16, 16)


# (K, L) -> the shape's kernel
KERNELS = {(32, 16): e4_32_16, (32, 32): e4_32_32, (16, 16): e4_16_16}


def kernel_for(fmts, prm, k: int, in_order: bool):
    """The shape's kernel of an FDA design, or None: a design :func:`fused_int.register_design` takes
    with E4M3 a and b, a pass length and K of :data:`KERNELS`."""
    return KERNELS.get((int(k), int(prm[S.P_L]))) if register_design(fmts, prm, in_order, E4M3_ROW) else None
