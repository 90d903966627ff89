"""NVIDIA's FDA and CoFDA of f16 pairs into f32 in floating-point lanes, one compiled kernel per shape:
the fast path of the catalog's HMMA f16 designs with f32 c and d (K = 16 in one pass, Hopper's,
Blackwell's and Ada's HMMA.16816, and in two passes of 8, Ampere's).

As :mod:`fdrda_float` does for CDNA3's f16: a product of two f16 is exact in float32, and so is its
scaling by ``2**(F - e)`` (e the pass's largest exponent, c's included), below ``2**(F + 2)``; the
alignment's truncation to F fraction bits, sign kept, is then the float's rounding toward zero to an
integer (:func:`golden.kernels._common.trunc_i32`), eight rows a vector on AVX2.  A pass's products
sum in int32 (:data:`MAX_F`).  c is scaled and truncated in float64, in a loop of its own (its
scaling reaches ``2**(F + 126)`` for a subnormal c beside zero products, past float32's range),
where the sum is scaled back to its value, exactly, and cut toward zero to d's fraction bits
(:func:`rz_f32`: NVIDIA's RZ, without a count of leading zeros, which AVX2 lacks in vector form).
The products' float32 sum with c is the row's IEEE class (NaN, an infinity or finite: no sum of finite
f16 products reaches float32's overflow, nor lifts c's to it), which is FDA's order of the special
values: a NaN, ``inf * 0`` or opposite infinities give NaN, infinities of one sign that infinity.

A block's a and b go first into float32 planes, a plane per product of a row, the rows side by side
(:func:`fdrda_float.to_planes`); c is a plane as it lies (f32).  In a chain (CoFDA) each pass's d is
the next pass's c.  The rows run in IEEE's default floating-point mode, set and given back
(``_common.ieee_mode``).  The kernels read a, b and c in their own width (:data:`OWN_WIDTH`:
``golden.kernels.run`` narrows wider operands first).
"""

from __future__ import annotations

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import amd_int as A
from . import spec as S
from .fdrda_float import BLOCK_ROWS, SUB_F16, ZERO_GUARD, field_scale, special_d, to_planes
from .fused_int import F16_ROW, _widths, register_design

OWN_WIDTH = (np.uint16, np.uint16, np.uint32)      # a, b and c as the kernels read them
MAX_F = 25                    # a pass of 16 products below 2**(F + 2) each sums below 2**31 (8: F 26)
RUN = 8                       # products a loop: a pass of 16 is two (one loop of 16 was not unrolled, and
                              # the loop across rows then ran scalar: 0.4x)
SUB_F32 = np.float32(2.0 ** -126)     # f32's least normal: a subnormal (or zero) c's exponent field counts as 1
# the least exponent sum of two f16: a pass with a nonzero product has its maximum at or above it, so
# flooring the maximum there changes no product's scaling, and keeps 2**F / 2**e finite in float32
# (a zero product times an infinite scale is NaN, its truncation the CPU's choice)
LEAST_PRODUCT = np.float32(2.0 ** -28)


@njit(**C.HOT)
def run_max(XA, XB, t0, i, em, sp):
    """:data:`RUN` products from ``t0`` of row ``i``: the largest ``2**(e_a + e_b)`` of a nonzero one
    and ``em``, and their float32 sum added to ``sp``."""
    for t in range(RUN):
        xa, xb = XA[(t0 + t) * BLOCK_ROWS + i], XB[(t0 + t) * BLOCK_ROWS + i]
        p = xa * xb
        sp += p
        em = max(em, min(field_scale(xa, SUB_F16) * field_scale(xb, SUB_F16), abs(p) * ZERO_GUARD))
    return em, sp


@njit(**C.HOT)
def run_sum(XA, XB, t0, i, scale, s):
    """``s`` plus :data:`RUN` products from ``t0`` of row ``i``, each scaled and truncated to an integer."""
    for t in range(RUN):
        s = C.add_i32(s, C.trunc_i32(XA[(t0 + t) * BLOCK_ROWS + i] * XB[(t0 + t) * BLOCK_ROWS + i] * scale))
    return s


@njit(**C.HOT)
def fda_dots(XA, XB, CF, t0, nb, L, two_f, DS, EM, SP):
    """Products ``t0 .. t0 + L - 1`` (L 8 or 16) of rows ``0 .. nb - 1`` of a block's planes and c
    (``CF``): each row's ``2**e`` into ``EM`` (e the largest exponent of a nonzero product and of
    c, a zero c's taken as f32's least: below every product's, and a zero d's whatever e is), the
    products truncated to F fraction bits below ``2**e`` summed into ``DS``, and the float32 sum
    of c and the products into ``SP``.  Every value 32 bits wide: eight rows a vector on AVX2."""
    two = L > RUN
    for i in range(nb):
        c = CF[i]
        em, sp = run_max(XA, XB, t0, i, field_scale(c, SUB_F32), c)
        if two:
            em, sp = run_max(XA, XB, t0 + RUN, i, em, sp)
        scale = C.div_f32(two_f, max(em, LEAST_PRODUCT))
        s = run_sum(XA, XB, t0, i, scale, np.int32(0))
        if two:
            s = run_sum(XA, XB, t0 + RUN, i, scale, s)
        DS[i], EM[i], SP[i] = s, em, sp


@njit(**C.HOT)
def rz_f32(v, low, tiny):
    """float64 ``v`` (at most 33 significant bits, below ``2**128``) rounded toward zero to d's
    grid: its fraction cut to d's fraction bits (``low``: the float64 fraction bits below them),
    or below f32's least normal to the subnormal grid (``tiny``: its step's inverse); then exact in
    float32."""
    normal = C.f64_from_bits(C.bits_from_f64(v) & ~low)
    sub = C.ftrunc(v * tiny) * (1.0 / tiny)
    return np.float32(sub if abs(v) < A.F32_LEAST else normal)


@njit(**C.HOT)
def fda_rounds(nb, DS, EM, SP, CF, CW, two_f, two_nf, low, tiny, neg_zero, nan_bits, inf_bits):
    """:func:`fda_dots`' rows rounded to d (``CW``: its bits; ``CF``: its float32, the next pass's c),
    in float64 lanes: c truncated at the pass's grid (``2**F / 2**e`` leaves float32's range where
    the products are zero and c is tiny), added to the products' sum, scaled to its value (exact:
    at most 33 bits) and rounded toward zero (:func:`rz_f32`), a zero's sign kept where
    ``neg_zero`` is the sign bit (an exact zero sum is +0 either way: no sum here is -0); a special
    row (``SP``'s class) the canonical NaN or an infinity of its sign.  No finite row overflows: a
    c near ``2**128`` puts the grid at ``2**(127 - F)``, where f16's products (below ``2**37``)
    truncate to 0."""
    for i in range(nb):
        em = np.float64(EM[i])
        sc = C.div_f64(two_f, em)
        v = (np.float64(DS[i]) + C.ftrunc(np.float64(CF[i]) * sc)) * (em * two_nf)
        x = SP[i]
        d = np.uint64(C.bits_from_f32(rz_f32(v, low, tiny)))
        d = d if d & np.uint64(0x7FFFFFFF) != 0 else d & neg_zero
        d = d if x - x == 0 else special_d(x != x, x < 0, nan_bits, inf_bits)
        CW[i] = np.int64(d)
        CF[i] = C.f32_from_bits(np.uint32(d))


@njit(**C.INLINE)
def float_rows(lo, hi, a, b, c, isz, fmts, prm, out, KC, LC):
    """:func:`fused_int.fda_block_rows`' rows of an f16 pair for a shape (``KC, LC``: K and the pass
    length, constants), a, b and c in their own width (:data:`OWN_WIDTH`)."""
    if isz[0] != 2 or isz[1] != 2 or isz[2] != 4:
        raise ValueError("golden.kernels.fda_float reads a and b as 16-bit and c as 32-bit words")
    F = prm[S.P_F]
    two_f32, two_f64, two_nf = np.float32(2.0 ** F), 2.0 ** F, 2.0 ** -F
    nan_bits, inf_bits = np.uint64(fmts[S.D, C.NAN_BITS]), np.uint64(fmts[S.D, C.INF_BITS])
    p = 23 if prm[S.P_FRAC] < 0 else prm[S.P_FRAC]         # d's fraction bits (a design's out_frac_bits)
    low, tiny = np.uint64((1 << (52 - p)) - 1), 2.0 ** (126 + p)
    neg_zero = np.uint64(0) if prm[S.P_ZPOS] == 1 else np.uint64(0x80000000)
    a16, b16, wc = _widths(a)[1], _widths(b)[1], _widths(c)[2]
    CW = np.empty(BLOCK_ROWS, np.int64)
    CF = np.empty(BLOCK_ROWS, np.float32)
    XA, XB = np.empty(KC * BLOCK_ROWS, np.float32), np.empty(KC * BLOCK_ROWS, np.float32)
    DS, EM, SP = np.empty(BLOCK_ROWS, np.int32), np.empty(BLOCK_ROWS, np.float32), np.empty(BLOCK_ROWS, np.float32)
    caller_fp = C.ieee_mode()
    for r0 in range(lo, hi, BLOCK_ROWS):
        nb = min(BLOCK_ROWS, hi - r0)
        for i in range(nb):
            CF[i] = C.f32_from_bits(np.uint32(wc[np.uint64(r0 + i)]))
        to_planes(a16, r0, nb, KC, XA, False)
        to_planes(b16, r0, nb, KC, XB, False)
        for j in range(0, KC, LC):
            fda_dots(XA, XB, CF, j, nb, LC, two_f32, DS, EM, SP)
            fda_rounds(nb, DS, EM, SP, CF, CW, two_f64, two_nf, low, tiny, neg_zero, nan_bits, inf_bits)
        for i in range(nb):
            out[r0 + i] = np.uint64(CW[i])
    C.set_fp_control(caller_fp)
    if prm[S.P_FAULT] == 1:
        C.fault_ulp(out, lo, hi)


# The shapes' dispatchers are written out, as every shape module's (golden.kernels.amd_fp8 says why).


@njit(**C.JIT)
def h16_16(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    float_rows(lo, hi, a, b, c, isz, fmts, prm, out, 16, 16)


@njit(**C.JIT)
def h16_8(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    float_rows(lo, hi, a, b, c, isz, fmts, prm, out, 16, 8)


# (K, L) -> the shape's kernel
KERNELS = {(16, 16): h16_16, (16, 8): h16_8}


def kernel_for(fmts, prm, k: int, in_order: bool):
    """The shape's kernel of an FDA design, or None: a design :func:`fused_int.register_design` takes
    with f16 a and b, F from 0 to the most a pass's int32 sum holds (:data:`MAX_F` for 16 products,
    one more for 8), a pass length and K of :data:`KERNELS`."""
    L = int(prm[S.P_L])
    if not register_design(fmts, prm, in_order, F16_ROW) or not 0 <= int(prm[S.P_F]) <= MAX_F + (L <= 8):
        return None
    return KERNELS.get((int(k), L))
