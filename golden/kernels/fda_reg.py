"""NVIDIA's FDA and CoFDA of f16 pairs into f32 on a register path, one compiled kernel per shape:
the fast path of the catalog's HMMA f16 designs with f32 c and d (the designs
:mod:`fused_int` takes).

A block's rows go through a loop across rows with each row's products in registers (LLVM
vectorises it, a row a lane), its operands read as 64-bit words at a constant stride (four f16 a
word), as :mod:`amd_int`'s register path does, each word decoded once, its four patterns at a time
(:func:`amd_int.swar16_pair`: 1.9x Hopper's normal dot-adds a second and 1.6x its bits, 1.35x and
1.1x Ampere's, against decoding each product from its two patterns): per pass, c's fields, the products' maximum
exponent, c and the products aligned to it and summed, and the rounding to f32
(:func:`fused_int.round_word`, the block path's arithmetic on one lane).  K, the pass length L
and the formats' fields are compile-time constants (with them at run time the loop across rows
stays scalar), so each shape is a kernel of its own, :data:`KERNELS`, chosen when an
instruction's plan is built (``golden.kernels._rows_kernel``).  Two shapes take it: K = 16 in one
pass (Hopper's, Blackwell's and Ada's HMMA.16816) and in two passes of 8 (Ampere's), 1.8-2.0x the
block path (``python -m golden.kernels.profile --paths --only HMMA.16816.F32``); every shape costs 7-8 s of
CPU on its first compile, which make test's workers would pay for each, so K = 8 and 4 (HMMA.1688,
HMMA.884) stay on the block path.

NaN and infinities: a block whose a or b holds an all-ones exponent field runs a second copy of
the pass that takes every product's class (IEEE float64's: ``inf * 0`` and ``inf - inf`` are NaN)
in a loop of its own, four products a 64-bit word (:func:`amd_int.words_classes`); c's class is
read on every row.  The kernels read a, b and c in their own width (:data:`OWN_WIDTH`:
``golden.kernels.run`` narrows wider operands first).
"""

from __future__ import annotations

import numpy as np

from ..descriptors import KernelCode
from ..nbcache import njit
from . import _common as C
from . import spec as S
from .amd_int import c_word, fields_reach, lane16, lane_mask, swar16_pair, words_classes
from .fused_int import (
    D_BIAS,
    D_MB,
    D_NV,
    D_SGNSH,
    F16_ROW,
    NEG,
    _widths,
    decode_row,
    round_word,
    rz_consts,
)

BLOCK_ROWS = 128               # rows a block: their a and b words (8 KB for K = 16) stay in L1 for a second
                               # pass (1,024 rows: Ampere's two passes 0.9x, the one pass of 16 0.95-0.97x)
RUN = 8                        # products a loop: a pass of 16 is two (one loop of 16 was not unrolled, and
                               # the loop across rows then ran scalar: 0.45x)
OWN_WIDTH = (np.uint16, np.uint16, np.uint32)      # a, b and c as the kernels read them
F32_ROW = (0, 0xFFFFFFFF, 23, 255, 31, 127, 0x7F800000, 0x7F800000, 1)   # fused_int.decode_row's columns


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
def fda_pass(r0, nb, wa, wb, CW, K, L, j, G, Dsh, bab, F, ez, sgnsh, rc, classes):
    """Pass ``j`` (L products, loops of :data:`RUN`) of rows ``r0 .. r0 + nb - 1``: c's words in
    ``CW[i]``, d's bits into ``CW``.  With ``classes`` (a constant: two copies) a loop of its own
    takes the products' NaN/inf classes (in the maximum's loop they kept LLVM from unrolling it,
    and the loop across rows then ran scalar, :mod:`amd_int`).  A row's passes one after another
    in one loop across rows (d in registers) ran scalar too: 0.2x."""
    NW, jw = K // 4, j // 4
    for i in range(nb):
        r = r0 + i
        u = np.uint64(r * NW + jw)
        P0 = swar16_pair(wa[u], wb[u], F16_ROW, F16_ROW)
        P1 = swar16_pair(wa[u + np.uint64(1)], wb[u + np.uint64(1)], F16_ROW, F16_ROW)
        two = L > RUN
        Q0 = swar16_pair(wa[u + np.uint64(2)], wb[u + np.uint64(2)], F16_ROW, F16_ROW) if two else P0
        Q1 = swar16_pair(wa[u + np.uint64(3)], wb[u + np.uint64(3)], F16_ROW, F16_ROW) if two else P1
        cs, ce, fl = c_lane(CW[i], ez)
        e = max(ce, max_run(P0, P1, bab))
        if two:
            e = max(e, max_run(Q0, Q1, bab))
        tot = c_aligned(cs, ce, e, F)
        topb = e + Dsh - bab            # the biased sums' top
        tot += sum_run(P0, P1, G, topb)
        if two:
            tot += sum_run(Q0, Q1, G, topb)
        if classes:
            fl |= class_run(wa, wb, r, NW, jw, 0, min(L, RUN)) | class_run(wa, wb, r, NW, jw, RUN, L)
        CW[i] = round_word(tot, e, fl, F, sgnsh, rc)


@njit(**C.HOT)
def max_run(P0, P1, bab):
    """The largest exponent of a run's 8 products, two word pairs (:func:`amd_int.swar16_pair`),
    ``NEG`` where every one is zero: the biased sums' maximum (a zero product's sum is 0, below
    every other), unbiased once.  A zero product's exponent never lifts a pass's maximum
    (:func:`register_design`: e_zero at or below c's least exponent, which the maximum includes)."""
    m = np.int64(0)
    for t in range(RUN):
        m = max(m, lane16((P0 if t < 4 else P1)[2], t % 4))
    return m + bab if m != 0 else np.int64(NEG)


@njit(**C.HOT)
def class_run(wa, wb, r, NW, jw, t0, t1):
    """The NaN/inf class bits of row ``r``'s products ``t0 .. t1 - 1`` of a pass (multiples of 4:
    four a word, :func:`amd_int.words_classes`), or-ed."""
    return words_classes(wa, wb, r * NW + jw + t0 // 4, (t1 - t0) // 4, 1, F16_ROW[D_NV])


@njit(**C.HOT)
def product_shift(topb, es):
    """The right shift that truncates a product of biased exponent sum ``es`` to ``topb``, capped at
    63 (c may lift the maximum far above a product) and masked to 0 .. 63: a negative one is a zero
    product's (its sum 0 may sit above ``topb``), whose 0 any shift keeps, and the mask alone keeps
    it defined (one AVX2 compare and blend fewer than a clamp at 0: 1.02-1.08x Ampere's dot-adds a
    second on a Zen 3 core)."""
    return min(topb - es, 63) & 63


@njit(**C.HOT)
def sum_run(P0, P1, G, topb):
    """A run's 8 products (two word pairs) truncated to ``topb`` (the maximum exponent plus the
    fraction bits' right shift, biased as the pairs' exponent sums are) and summed, each shifted by
    :func:`product_shift`.  b's significands are shifted left by ``G`` in their word
    (:func:`kernel_for`: 11 + G bits fit a 16-bit lane), a shift for four products: 1.04-1.08x
    Hopper's and Ampere's dot-adds a second on a Zen 3 core."""
    s = np.int64(0)
    gw = np.uint64(G)
    B0, B1 = P0[1] << gw, P1[1] << gw            # b's 11-bit significands shifted in their 16-bit lanes
    for t in range(RUN):                          # (G at most 5: kernel_for), one shift for four products
        P, k = (P0 if t < 4 else P1), t % 4
        m = lane16(P[0], k) * lane16(B0 if t < 4 else B1, k)
        v = m >> product_shift(topb, lane16(P[2], k))
        s += -v if lane16(P[3], k) != 0 else v
    return s


@njit(**C.HOT)
def special_block(wa, wb, w0, w1):
    """Whether a's or b's words ``w0 .. w1 - 1`` hold an f16 with an all-ones exponent field (NaN,
    infinity): the field plus one carried into the lane's top bit (:func:`amd_int.fields_reach`)."""
    fm, one = lane_mask(0x7C00), lane_mask(0x0400)
    return fields_reach(wa, wb, w0, w1, fm, one, fm, one)


@njit(**C.HOT)
def fda_scalars(fmts, prm):
    """What a register-path FDA pass reads of a design, once per call: ``(F, e_zero, G, Dsh, bab,
    d's sign shift, rounding constants)``: products pre-shifted left by ``G`` so that alignment
    only shifts right (``Dsh`` the fraction bits' right shift), ``bab`` the operands' biases.  The
    rounding is RZ's (the shape kernels take RZ designs alone: :func:`kernel_for`) on
    :func:`fused_int.rz_consts` (1.1x the dot-adds a second on Ampere's two roundings a row); the
    planted fault is :func:`_common.fault_ulp`'s pass."""
    F, ez = prm[S.P_F], prm[S.P_EZERO]
    da, db = decode_row(fmts, S.A), decode_row(fmts, S.B)
    G = max(F - da[D_MB] - db[D_MB], 0)
    Dsh = max(da[D_MB] + db[D_MB] - F, 0)
    bab = -da[D_BIAS] - db[D_BIAS]
    rc = rz_consts(fmts[S.D], prm[S.P_FRAC], prm[S.P_OVERFLOW] == C.OVERFLOW_INF, prm[S.P_ZPOS] == 1)
    return F, ez, G, Dsh, bab, decode_row(fmts, S.D)[D_SGNSH], rc


@njit(**C.INLINE)
def f16_rows(lo, hi, a, b, c, isz, fmts, prm, out, KC, LC):
    """:func:`fused_int.fda_block_rows`' rows on the register path for a shape (``KC, LC``: K and
    the pass length, constants), blocks of :data:`BLOCK_ROWS` rows, a, b and c in their own width
    (:data:`OWN_WIDTH`): the pass has one call site per copy, on the callers' arrays."""
    if isz[0] != 2 or isz[1] != 2 or isz[2] != 4:
        raise ValueError("golden.kernels.fda_reg reads a and b as 16-bit and c as 32-bit words")
    F, ez, G, Dsh, bab, sgnsh, rc = fda_scalars(fmts, prm)
    wa, wb, wc = _widths(a)[3], _widths(b)[3], _widths(c)[2]
    CW = np.empty(BLOCK_ROWS, np.int64)
    NW = KC // 4
    for r0 in range(lo, hi, BLOCK_ROWS):
        nb = min(BLOCK_ROWS, hi - r0)
        for i in range(nb):
            CW[i] = np.int64(wc[np.uint64(r0 + i)])
        special = special_block(wa, wb, r0 * NW, (r0 + nb) * NW)
        for j in range(0, KC, LC):
            if special:
                fda_pass(r0, nb, wa, wb, CW, KC, LC, j, G, Dsh, bab, F, ez, sgnsh, rc, True)
            else:
                fda_pass(r0, nb, wa, wb, CW, KC, LC, j, G, Dsh, bab, F, ez, sgnsh, rc, False)
        for i in range(nb):
            out[r0 + i] = np.uint64(CW[i])
    if prm[S.P_FAULT] == 1:
        C.fault_ulp(out, lo, hi)


# One dispatcher per shape, written out (as golden.kernels.amd_fp8's: a factory's closures share
# one entry of numba's on-disk cache, and wrappers taking ``*args`` ran 4-5x slower).


@njit(**C.JIT)
def h16_16(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    f16_rows(lo, hi, a, b, c, isz, fmts, prm, out, 16, 16)


@njit(**C.JIT)
def h16_8(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    f16_rows(lo, hi, a, b, c, isz, fmts, prm, out, 16, 8)


# (K, L) -> the shape's kernel
KERNELS = {(16, 16): h16_16, (16, 8): h16_8}


def kernel_for(fmts, prm, k: int, in_order: bool):
    """The shape's kernel of an FDA design, or None: a design :func:`register_design` takes with f16
    a and b, F at most their fraction bits plus 5 (:func:`sum_run` shifts b's significands by G
    inside their 16-bit lanes), a pass length and K of :data:`KERNELS`."""
    if not register_design(fmts, prm, in_order, F16_ROW) or prm[S.P_F] - 2 * F16_ROW[D_MB] > 5:
        return None
    return KERNELS.get((int(k), int(prm[S.P_L])))


def register_design(fmts, prm, in_order: bool, ab_row) -> bool:
    """Whether a design is an FDA one the register paths (this module's, :mod:`fda_fp8`'s) may take:
    a and b both of decode row ``ab_row``, f32 c and d, unscaled, products in order, d rounded RZ
    (NVIDIA's: :func:`fda_scalars`), zero products' exponent e_zero at or below c's least (it never
    lifts a pass's maximum: :func:`max_run`), and a design :func:`spec.fast_kind` takes (the other
    roundings, a user's designs, run the family kernel: the same bits)."""
    if not (prm[S.P_BASE] == int(KernelCode.FDA) and prm[S.P_FAST] == S.FAST_FDA and prm[S.P_SCALED] == 0
            and prm[S.P_MODE] == C.RZ and in_order and prm[S.P_EZERO] <= fmts[S.CF, S.EMIN]):
        return False
    return all(tuple(decode_row(fmts, f)) == row
               for f, row in ((S.A, ab_row), (S.B, ab_row), (S.CF, F32_ROW), (S.D, F32_ROW)))
