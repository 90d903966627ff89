"""CDNA3's FDRDA of f16 and bf16 pairs in floating-point lanes, one compiled kernel per shape: the
fast path of the catalog's f16 and bf16 FDRDA designs in passes of 8 (those :mod:`amd_int` takes).

A product of two f16 is exact in float32 (22 significant bits, at or above ``2**-48``), and so is its
scaling by ``2**(F - e)``, e the pass's largest exponent sum (below ``2**(F + 2)``, at most 26 + 2
bits for the F these kernels take); the hardware's truncation of the product's magnitude to F
fraction bits below ``2**e``, with its sign, is then the float's rounding toward zero to an integer
(:func:`golden.kernels._common.trunc_i32`: one instruction, eight lanes on AVX2 where int64 lanes
take four).  The products' sum in float32 is their IEEE class (NaN, an infinity or finite: no sum
of finite f16 products overflows), so NaN and infinities take no branch and no scan of their own.
bf16's products (16 significant bits, from ``2**-266`` to ``2**256``) leave float32's range: a block
whose nonzero magnitudes all lie in :data:`BF16_WINDOW` (:func:`outside_window`, four patterns a
64-bit word) runs f16's float32 arithmetic, any other the same in float64 lanes (four a vector on
AVX2), where the overflowed products (at or above ``2**128``) are finite and are told apart from
the inputs' infinities.  The rows run in IEEE's default floating-point mode, set and given back
(``_common.ieee_mode``): a caller's denormals-as-zero would zero bf16's subnormals in the planes.

A block's operands go first into float32 planes, a plane per product of a row, the rows side by
side (:func:`half.transpose8_f16`, :func:`half.transpose8_bf16`: eight rows by eight patterns at a
time), so that the loop across rows reads each plane contiguously.  The merge with c and the RNE
to f32 is :func:`amd_int.merge_f64`'s, in a loop of its own (with the products' loop, int64 and
float64 lanes took the vector's width down to four rows for both).  Against golden.kernels'
earlier integer register path on one Zen 3 core: f16 1.5-1.6x (``normal``) and 1.6-1.9x
(``bits``) the rows a second, bf16 1.3x in both (``python tools/kernel_ab.py``).  The kernels read
a, b and c in their own width (:data:`OWN_WIDTH`: ``golden.kernels.run`` narrows wider operands
first); designs whose products are out of order run :func:`amd_int.fdrda_int_rows`.
"""

from __future__ import annotations

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import amd
from . import amd_int as A
from . import spec as S
from .fused_int import _widths, decode_row
from .half import f32_of_bf16, f32_of_f16, transpose8_bf16, transpose8_f16

BLOCK_ROWS = 256              # rows a block (their planes: 16 KB a plane pair at K = 8)
OWN_WIDTH = (np.uint16, np.uint16, np.uint32)      # a, b and c as the kernels read them
MAX_F = 26                    # a pass's eight products below 2**(F + 2) each sum below 2**31
SUB_F16 = np.float32(2.0 ** -14)      # f16's least normal: a subnormal's exponent field counts as 1
ZERO_GUARD = np.float32(2.0 ** 20)    # |a*b| * this >= the fields' 2**(e_a + e_b) for every nonzero f16 pair
# bf16 magnitudes (patterns less the sign) whose products and their scalings stay normal in float32:
# exponent fields 77 .. 188, so a product lies in 2**-100 .. 2**124 (a pass's eight sum below 2**127,
# none reaches AMD's overflow at 2**128) and 2**(F - e) in 2**-98 .. 2**126 for F at most 26
BF16_WINDOW = (77 << 7, (189 << 7) - 1)
WINDOW_CHUNK = 64                     # words a step of outside_window's scan
# inside the window a bf16's 2**e is at least 2**-50: a floor below that never binds, and one far
# above 2**-126 keeps a zero pair's product of floors normal (2**-252 took float32's slow path for
# subnormal results: 0.8x the rows a second on a Zen 3 core)
LEAST_F32 = np.float32(2.0 ** -60)


@njit(**C.HOT)
def field_scale(x, least):
    """``2**e`` of a float's exponent field e (a subnormal's: 1), the float given as its float32:
    ``least`` its format's least normal."""
    return max(C.f32_scale_of(x), least)


@njit(**C.HOT)
def outside_window(w64, u0, u1):
    """Whether a nonzero bf16 pattern of 64-bit words ``u0 .. u1 - 1`` (four a word) has its magnitude
    outside :data:`BF16_WINDOW`: each 16-bit lane's tests an add or a subtract that sets its top bit
    and carries no further (a magnitude is at most 0x7FFF)."""
    lo, hi = BF16_WINDOW
    mask, top = np.uint64(0x7FFF) * A.L0001, A.H8000
    add_hi, sub_lo = np.uint64(0x7FFF - hi) * A.L0001, np.uint64(lo) * A.L0001
    for c0 in range(u0, u1, WINDOW_CHUNK):           # a chunk's loop vectorises; random patterns stop early
        acc = np.uint64(0)
        for u in range(c0, min(c0 + WINDOW_CHUNK, u1)):
            m = w64[np.uint64(u)] & mask
            acc |= (m + add_hi) | (~((m | top) - sub_lo) & (m + mask))     # above hi, or nonzero below lo
        if (acc & top) != np.uint64(0):
            return True
    return False


@njit(**C.HOT)
def half_dots(XA, XB, t0, nb, L, two_f, least, DS, EM, SP):
    """Products ``t0 .. t0 + L - 1`` of rows ``0 .. nb - 1`` of a block's planes: each row's sum of
    products truncated to F fraction bits below ``2**e`` into ``DS``, ``2**e`` into ``EM`` (e the
    largest exponent sum of a nonzero product; 0 where there is none) and the products' float32 sum
    into ``SP``.  Every value 32 bits wide: eight rows a vector on AVX2.  f16 (``least`` 2**-14), and
    bf16 inside :data:`BF16_WINDOW` (``least`` 2**-126)."""
    for i in range(nb):
        em = np.float32(0)
        sp = np.float32(0)
        for t in range(L):
            xa, xb = XA[(t0 + t) * BLOCK_ROWS + i], XB[(t0 + t) * BLOCK_ROWS + i]
            p = xa * xb
            sp += p
            em = max(em, min(field_scale(xa, least) * field_scale(xb, least), abs(p) * ZERO_GUARD))
        scale = C.div_f32(two_f, em)              # infinite where em is 0: s is then not read
        s = np.int32(0)
        for t in range(L):
            s = C.add_i32(s, C.trunc_i32(XA[(t0 + t) * BLOCK_ROWS + i] * XB[(t0 + t) * BLOCK_ROWS + i] * scale))
        DS[i], EM[i], SP[i] = s, em, sp


BF16_GUARD = 2.0 ** 14                # |a*b| * this >= the fields' 2**(e_a + e_b) for every nonzero bf16 pair
OVER = amd.p2(A.OVER_EXP)             # products at or above it overflow


@njit(**C.HOT)
def bf16_dots(XA, XB, t0, nb, L, F, DS, EM, SP, OV):
    """:func:`half_dots` of bf16 planes in float64 lanes, where a bf16 product is exact (16
    significant bits, between ``2**-266`` and ``2**256``): also each row's overflowed products
    into ``OV`` (1: one at or above ``2**128``, 2: one at or below ``-2**128``, or-ed)."""
    for i in range(nb):
        em, sp, hi, lo = 0.0, 0.0, 0.0, 0.0
        for t in range(L):
            xa, xb = np.float64(XA[(t0 + t) * BLOCK_ROWS + i]), np.float64(XB[(t0 + t) * BLOCK_ROWS + i])
            p = xa * xb
            sp += p
            hi, lo = max(hi, p), min(lo, p)
            em = max(em, min(A.binade(xa) * A.binade(xb), abs(p) * BF16_GUARD))   # bf16's e_min is f32's
        scale = A.over(F, em)                     # 2**F / em (huge where em is 0: s is then not read)
        s = np.int32(0)
        for t in range(L):
            x = np.float64(XA[(t0 + t) * BLOCK_ROWS + i]) * np.float64(XB[(t0 + t) * BLOCK_ROWS + i]) * scale
            s = C.add_i32(s, C.trunc_i32_f64(x))
        DS[i], EM[i], SP[i] = s, em, sp
        OV[i] = np.float64(hi >= OVER) + 2.0 * np.float64(lo <= -OVER)


@njit(**C.HOT)
def special_d(nan, negative, nan_bits, inf_bits):
    """d's bits for a row of a special class: the canonical NaN, else an infinity of its sign."""
    return nan_bits if nan else inf_bits | (np.uint64(0x80000000) if negative else np.uint64(0))


@njit(**C.HOT)
def half_merges(nb, DS, EM, SP, CW, two_nf, dfb, q, nan_bits, inf_bits, zpos):
    """:func:`half_dots`' rows merged with c (its words in ``CW``; d's bits into ``CW``): finite rows
    by :func:`amd_int.merge_f64`, the rest by the IEEE sum of c and the products' sum (NaN where
    either is NaN or they are opposite infinities, else an infinity: the paper's order of the
    classes).  No product overflows in float32's lanes, so no test of one (:func:`bf16_merges`
    reading a zero for each made the f16 ``bits`` rows 0.7x)."""
    for i in range(nb):
        c = np.float64(C.f32_from_bits(np.uint32(CW[i])))
        em = np.float64(EM[i])
        x = np.float64(SP[i]) + c
        if x - x == 0:
            d = np.uint64(C.bits_from_f32(A.merge_f64(np.float64(DS[i]) * em * two_nf, em, c, dfb, q)))
        else:
            d = special_d(x != x, x < 0, nan_bits, inf_bits)
        CW[i] = np.int64(np.uint64(0) if zpos and d == np.uint64(0x80000000) else d)


@njit(**C.HOT)
def bf16_merges(nb, DS, EM, SP, OV, CW, two_nf, dfb, q, nan_bits, inf_bits, zpos):
    """:func:`half_merges` of :func:`bf16_dots`' rows: where c and the products' sum are finite,
    overflowed products come next (``OV``: both signs NaN, else an infinity of theirs), as the
    paper orders the classes."""
    for i in range(nb):
        c = np.float64(C.f32_from_bits(np.uint32(CW[i])))
        em = EM[i]
        x = SP[i] + c
        ov = OV[i]
        if x - x != 0:
            d = special_d(x != x, x < 0, nan_bits, inf_bits)
        elif ov != 0:
            d = special_d(ov == 3, ov == 2, nan_bits, inf_bits)
        else:
            d = np.uint64(C.bits_from_f32(A.merge_f64(np.float64(DS[i]) * em * two_nf, em, c, dfb, q)))
        CW[i] = np.int64(np.uint64(0) if zpos and d == np.uint64(0x80000000) else d)


@njit(**C.HOT)
def to_planes(x16, r0, nb, KC, X, bf16):
    """Rows ``r0 .. r0 + nb - 1`` of ``KC`` f16 (``bf16``: bf16) patterns each into float32 planes
    ``X`` (plane t at ``t * BLOCK_ROWS``): eight rows by eight patterns at a time, the rest one by one."""
    n8 = nb - nb % 8
    for g in range(0, n8, 8):
        for j in range(0, KC, 8):
            if bf16:
                transpose8_bf16(x16, (r0 + g) * KC + j, KC, X, j * BLOCK_ROWS + g, BLOCK_ROWS)
            else:
                transpose8_f16(x16, (r0 + g) * KC + j, KC, X, j * BLOCK_ROWS + g, BLOCK_ROWS)
    for i in range(n8, nb):
        for t in range(KC):
            h = np.int64(x16[(r0 + i) * KC + t])
            X[t * BLOCK_ROWS + i] = f32_of_bf16(h) if bf16 else f32_of_f16(h)


@njit(**C.INLINE)
def float_rows(lo, hi, a, b, c, isz, fmts, prm, out, KC, LC, bf16):
    """:func:`amd_int.fdrda_int_rows`' rows of an f16 pair (``bf16``: a bf16 pair) for a shape
    (``KC, LC``: K and the pass length; all three constants), a, b and c in their own width
    (:data:`OWN_WIDTH`)."""
    if isz[0] != 2 or isz[1] != 2 or isz[2] != 4:
        raise ValueError("golden.kernels.fdrda_float reads a and b as 16-bit and c as 32-bit words")
    F, dfb, cfb, ffb, c_drop = prm[S.P_F], prm[S.P_DOTFB], prm[S.P_CFB], prm[S.P_FINFB], prm[S.P_CDROP]
    nan_bits, inf_bits = np.uint64(fmts[S.D, C.NAN_BITS]), np.uint64(fmts[S.D, C.INF_BITS])
    zpos = prm[S.P_ZPOS] == 1
    two_f, two_nf = np.float32(amd.p2(F)), amd.p2(-F)
    q = A.merge_factors(dfb, cfb, ffb, c_drop)
    (_, a16, _, wa), (_, b16, _, wb), wc = _widths(a), _widths(b), _widths(c)[2]
    CW = np.empty(BLOCK_ROWS, np.int64)
    XA, XB = np.empty(KC * BLOCK_ROWS, np.float32), np.empty(KC * BLOCK_ROWS, np.float32)
    DS, EM32, SP32 = np.empty(BLOCK_ROWS, np.int32), np.empty(BLOCK_ROWS, np.float32), np.empty(BLOCK_ROWS, np.float32)
    EM, SP, OV = np.empty(BLOCK_ROWS), np.empty(BLOCK_ROWS), np.empty(BLOCK_ROWS)
    caller_fp = C.ieee_mode()          # whatever the caller's mode (its DAZ would zero bf16's subnormals)
    for r0 in range(lo, hi, BLOCK_ROWS):
        nb = min(BLOCK_ROWS, hi - r0)
        for i in range(nb):
            CW[i] = np.int64(wc[np.uint64(r0 + i)])
        to_planes(a16, r0, nb, KC, XA, bf16)
        to_planes(b16, r0, nb, KC, XB, bf16)
        u0, u1 = r0 * KC // 4, (r0 + nb) * KC // 4
        wide = bf16 and (outside_window(wa, u0, u1) or outside_window(wb, u0, u1))
        for j in range(0, KC, LC):
            if wide:
                bf16_dots(XA, XB, j, nb, LC, F, DS, EM, SP, OV)
                bf16_merges(nb, DS, EM, SP, OV, CW, two_nf, dfb, q, nan_bits, inf_bits, zpos)
            else:
                half_dots(XA, XB, j, nb, LC, two_f, LEAST_F32 if bf16 else SUB_F16, DS, EM32, SP32)
                half_merges(nb, DS, EM32, SP32, CW, two_nf, dfb, q, nan_bits, inf_bits, zpos)
        for i in range(nb):
            out[r0 + i] = np.uint64(CW[i])
    C.set_fp_control(caller_fp)
    if prm[S.P_FAULT] == 1:
        C.fault_ulp(out, lo, hi)


# One dispatcher per shape, written out (as golden.kernels.amd_fp8's: a factory's closures share
# one entry of numba's on-disk cache, and wrappers taking ``*args`` ran 4-5x slower).


@njit(**C.JIT)
def f16_8(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    float_rows(lo, hi, a, b, c, isz, fmts, prm, out, 8, 8, False)


@njit(**C.JIT)
def f16_16(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    float_rows(lo, hi, a, b, c, isz, fmts, prm, out, 16, 8, False)


@njit(**C.JIT)
def bf16_8(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    float_rows(lo, hi, a, b, c, isz, fmts, prm, out, 8, 8, True)


@njit(**C.JIT)
def bf16_16(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    float_rows(lo, hi, a, b, c, isz, fmts, prm, out, 16, 8, True)


# (a's and b's literal, K, L) -> the shape's kernel
KERNELS = {(A.F16_LIT, 8, 8): f16_8, (A.F16_LIT, 16, 8): f16_16, (A.BF16_LIT, 8, 8): bf16_8,
           (A.BF16_LIT, 16, 8): bf16_16}


def kernel_for(fmts, prm, k: int, in_order: bool):
    """The shape's kernel of a design :func:`amd_int.int_design` takes, or None: FDRDA (not GFDRDA)
    with its products in order and overflowed products special, a and b both f16 or both bf16, F
    from 0 to :data:`MAX_F`, K and the pass length of :data:`KERNELS`."""
    if prm[S.P_BASE] == S.GFDRDA_CODE or prm[S.P_PROD_OVER] != 1 or not in_order:
        return None
    ka, kb = A.literal_of(decode_row(fmts, S.A)), A.literal_of(decode_row(fmts, S.B))
    if ka != kb or not 0 <= int(prm[S.P_F]) <= MAX_F:
        return None
    return KERNELS.get((int(ka), int(k), int(prm[S.P_L])))
