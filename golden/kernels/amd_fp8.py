"""CDNA3's fp8 GFDRDA (and its chains) on a register path, one compiled kernel per shape: the fast
path for the catalog's fp8 pairs in passes of 16 (the designs :mod:`amd_int` takes).

A block's rows go through a loop across rows with each row's products in registers, its operands
read as 64-bit words at a constant stride (eight fp8 a word), as :mod:`amd_int`'s f16 register
path does.  Each word is decoded once, its eight patterns at a time in byte lanes
(:func:`amd_int.swar8_pair`: significands with their hidden bit, exponent fields with a subnormal's 1, their
sums a product's exponent, zeroed where a product is zero, and the signs), so that a product is a
byte of each and one multiply: against decoding each product from its two patterns, 1.6-1.7x the
dot-adds a second on K = 32 and 2.1-2.2x on K = 16.  The pass of 16 products in pairs is four loops
of their own (the even products' maximum, the odd ones', then each one's sum): one loop over the
pairs was too long for LLVM to unroll, and the loop across rows then ran scalar.  The format pair
and K must be compile-time constants (K at run time: 7.7 against 70 M rows/s; the fields at run
time: 9.7), so each of the catalog's shapes is a kernel of its own, :data:`KERNELS`, chosen when
an instruction's plan is built (``golden.kernels._rows_kernel``): a process compiles only the shapes it uses.

The FNUZ formats' only special pattern is NaN (the byte 0x80, no infinities) and fp8 products never
overflow, so a row whose operands hold a 0x80 byte is NaN whatever its sums (c's class as
:mod:`amd_int` reads it).  The kernels read a, b and c in their own width (:data:`OWN_WIDTH`:
``golden.kernels.run`` narrows wider operands first); designs whose products are out of order run
:func:`amd_int.fdrda_int_rows` (the plan chooses).
"""

from __future__ import annotations

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import amd
from . import amd_int as A
from . import spec as S
from .amd_int import H80, MAX_SHIFT, NAN_F, NEG, any_zero_byte, c_word, lane8, shr, special_bits, swar8_pair
from .fused_int import D_BIAS, D_MB, _widths, decode_row

L_PASS = 16                    # the catalog's fp8 GFDRDA pass: 16 products in pairs
OWN_WIDTH = (np.uint8, np.uint8, np.uint32)      # a, b and c as the kernels read them


@njit(**C.HOT)
def nan_bytes(w):
    """Whether a 64-bit word holds a byte 0x80 (an FNUZ NaN): the zero-byte test on ``w ^ 0x80..``."""
    return any_zero_byte(w ^ H80)


@njit(**C.HOT)
def pair_sums(P0, P1, bab, G, sh0, odd):
    """The maximum exponent (``NEG``: every product zero) and the aligned sum of the even (``odd`` 0)
    or odd products of a pass whose two word pairs are ``P0, P1`` (:func:`amd_int.swar8_pair`), each a loop
    of its own over 8 products.  The shifts read biased sums (the bias cancels); a zero product's
    sum 0 shifts its significand product, 0, by at most ``MAX_SHIFT``."""
    e = np.int64(0)
    for t in range(L_PASS // 2):
        P = P0 if t < 4 else P1
        e = max(e, lane8(P[2], 2 * (t % 4) + odd))
    s = np.int64(0)
    for t in range(L_PASS // 2):
        P = P0 if t < 4 else P1
        k = 2 * (t % 4) + odd
        m = lane8(P[0], k) * lane8(P[1], k)
        v = (m << G) >> min(e - lane8(P[2], k) + sh0, MAX_SHIFT)
        s += -v if lane8(P[3], k) != 0 else v
    return s, (np.int64(NEG) if e == 0 else e + bab)


@njit(**C.HOT)
def pairs_pass(r0, nb, wa, wb, CW, K, j, ra, rb, bab, G, sh0, fmts, prm):
    """GFDRDA's pass ``j`` (16 products) of rows ``r0 .. r0 + nb - 1``: c's words in ``CW[i]``, d's bits
    into ``CW``; the even and odd sums merged as :func:`amd_int.finish_pass` merges them, then with c
    in float64 (:func:`amd_int.merge_f64`: 1.11x the rows a second of the integer merge; the planted
    fault a pass of its own, :func:`golden.kernels._common.fault_ulp`)."""
    F, dfb, cfb, ffb, c_drop = prm[S.P_F], prm[S.P_DOTFB], prm[S.P_CFB], prm[S.P_FINFB], prm[S.P_CDROP]
    mfb = prm[S.P_MERGEFB]
    nan_bits, inf_bits = np.uint64(fmts[S.D, C.NAN_BITS]), np.uint64(fmts[S.D, C.INF_BITS])
    zpos = prm[S.P_ZPOS] == 1
    NW, jw = K // 8, j // 8
    two_nm, q = amd.p2(-mfb), A.merge_factors(dfb, cfb, ffb, c_drop)
    for i in range(nb):
        r = r0 + i
        a0, a1 = wa[np.uint64(r * NW + jw)], wa[np.uint64(r * NW + jw + 1)]
        b0, b1 = wb[np.uint64(r * NW + jw)], wb[np.uint64(r * NW + jw + 1)]
        P0, P1 = swar8_pair(a0, b0, ra, rb), swar8_pair(a1, b1, ra, rb)
        se, ee = pair_sums(P0, P1, bab, G, sh0, 0)
        so, eo = pair_sums(P0, P1, bab, G, sh0, 1)
        ed = max(ee, eo)
        a = shr(se, (ed - ee) + F - mfb) if ee > NEG else np.int64(0)
        b = shr(so, (ed - eo) + F - mfb) if eo > NEG else np.int64(0)
        _, _, cf = c_word(CW[i])
        nan = nan_bytes(a0) | nan_bytes(a1) | nan_bytes(b0) | nan_bytes(b1)
        cf |= NAN_F * np.int64(nan)
        em = 0.0 if ed == NEG else amd.p2(ed)
        c = np.float64(C.f32_from_bits(np.uint32(CW[i])))
        d = np.uint64(C.bits_from_f32(A.merge_f64(C.f64_of_i51(a + b) * em * two_nm, em, c, dfb, q)))
        d = d if cf == 0 else special_bits(cf, nan_bits, inf_bits)
        CW[i] = np.int64(np.uint64(0) if zpos and d == np.uint64(0x80000000) else d)


@njit(**C.INLINE)
def fp8_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out, KC, ra, rb):
    """:func:`amd_int.fdrda_int_rows`' rows on the register path for a shape (``KC``: K, ``ra, rb``:
    the pair's decode rows, all constants), blocks of 1,024 rows, the operands in their own width
    (``golden.kernels.run`` narrows wider ones first, :data:`OWN_WIDTH`): the pass has one call site,
    on the callers' arrays.  Two call sites (one on narrowed copies) doubled a shape's first compile;
    one on either array kept the loop across rows scalar; calling the integer-lane kernel for other
    widths linked its code into every shape's (9.5 s of CPU a shape's first compile)."""
    if isz[0] != 1 or isz[1] != 1 or isz[2] != 4:
        raise ValueError("golden.kernels.amd_fp8 reads a and b as bytes and c as 32-bit words")
    da, db = decode_row(fmts, S.A), decode_row(fmts, S.B)
    mbab = da[D_MB] + db[D_MB]
    G = max(prm[S.P_F] - mbab, 0)
    sh0 = max(mbab - prm[S.P_F], 0)
    bab = -da[D_BIAS] - db[D_BIAS]
    wa, wb, wc = _widths(a)[3], _widths(b)[3], _widths(c)[2]
    CW = np.empty(A.BL, np.int64)
    caller_fp = C.ieee_mode()          # merge_f64's float arithmetic whatever the caller's mode
    for r0 in range(lo, hi, A.BL):
        nb = min(A.BL, hi - r0)
        for i in range(nb):
            CW[i] = np.int64(wc[np.uint64(r0 + i)])
        for j in range(0, KC, L_PASS):
            pairs_pass(r0, nb, wa, wb, CW, KC, j, ra, rb, bab, G, sh0, fmts, prm)
        for i in range(nb):
            out[r0 + i] = np.uint64(CW[i])
    C.set_fp_control(caller_fp)
    if prm[S.P_FAULT] == 1:
        C.fault_ulp(out, lo, hi)


E4, E5 = A.E4M3FNUZ_ROW, A.E5M2FNUZ_ROW

# One dispatcher per shape, written out: closures from a factory would share one entry of numba's
# on-disk cache (its index is a function's name and line, not its constants), and wrappers taking
# ``*args`` ran 4-5x slower (measured, golden.bench --targets).


@njit(**C.JIT)
def e4e4_16(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    fp8_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out, 16, E4, E4)


@njit(**C.JIT)
def e4e5_16(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    fp8_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out, 16, E4, E5)


@njit(**C.JIT)
def e5e4_16(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    fp8_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out, 16, E5, E4)


@njit(**C.JIT)
def e5e5_16(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    fp8_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out, 16, E5, E5)


@njit(**C.JIT)
def e4e4_32(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    fp8_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out, 32, E4, E4)


@njit(**C.JIT)
def e4e5_32(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    fp8_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out, 32, E4, E5)


@njit(**C.JIT)
def e5e4_32(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    fp8_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out, 32, E5, E4)


@njit(**C.JIT)
def e5e5_32(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    fp8_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out, 32, E5, E5)


# (a's literal, b's literal, K) -> the shape's kernel
KERNELS = {(A.E4M3_LIT, A.E4M3_LIT, 16): e4e4_16, (A.E4M3_LIT, A.E5M2_LIT, 16): e4e5_16,
           (A.E5M2_LIT, A.E4M3_LIT, 16): e5e4_16, (A.E5M2_LIT, A.E5M2_LIT, 16): e5e5_16,
           (A.E4M3_LIT, A.E4M3_LIT, 32): e4e4_32, (A.E4M3_LIT, A.E5M2_LIT, 32): e4e5_32,
           (A.E5M2_LIT, A.E4M3_LIT, 32): e5e4_32, (A.E5M2_LIT, A.E5M2_LIT, 32): e5e5_32}


def kernel_for(fmts, prm, k: int, in_order: bool):
    """The shape's kernel of a design :func:`amd_int.int_design` takes, or None: GFDRDA in passes of
    16 with its products in order, a catalog fp8 pair (the FNUZ formats), K = 16 or 32."""
    if prm[S.P_BASE] != S.GFDRDA_CODE or prm[S.P_L] != L_PASS or not in_order:
        return None
    ka = int(A.literal_of(decode_row(fmts, S.A)))
    kb = int(A.literal_of(decode_row(fmts, S.B)))
    return KERNELS.get((ka, kb, int(k)))
