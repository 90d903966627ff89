"""Correctly rounded IEEE 754 fused multiply-add on arrays of bit patterns.

``fma_f64(a, b, c)`` and ``fma_f32(a, b, c)`` return ``RNE(a*b + c)`` -- one
rounding, round-to-nearest-even, gradual underflow (subnormals kept, never
flushed), overflow to +-inf -- for numpy arrays of ``uint64`` / ``uint32`` bit
patterns.  Nothing relies on a platform fma (Python 3.11's ``math`` has none,
numpy has none).  NaN results are the canonical quiet NaN; payloads are not
modelled.  The tests check them against an exact scalar oracle (``tests/support/fma_oracle.py``)
and against Berkeley SoftFloat.

binary32: exact product, round-to-odd sum, one final rounding
-------------------------------------------------------------
For binary32 inputs ``p = a*b`` is exact in binary64 (24+24 <= 53 significand
bits; |p| lies in [2^-298, 2^256], far inside the binary64 normal range).  The
sum ``s = RN64(p + c)`` comes with its exact error ``e = p + c - s`` from
Knuth's TwoSum, which is error free here because nothing can overflow.  If
``e != 0`` and ``s`` has an even last significand bit we step ``s`` one ulp
towards ``e``: the result is ``RO64(p + c)``, the sum rounded to odd.  Finally
``astype(float32)`` rounds once more, RNE, with binary32 subnormals/overflow.

Why the double rounding is harmless: let ``u`` be the binary64 ulp at the
binade of ``x = p + c``.  Every binary32 number and every midpoint between two
adjacent binary32 numbers in that binade (subnormal ones included: their
spacing is 2^-149 >= 2^29 u; the overflow threshold 2^128 - 2^103 too) is a
multiple of ``2u`` because binary32 carries 24 <= 53 - 2 bits.  If ``x`` is a
multiple of ``u`` then ``RO(x) = x``.  Otherwise ``x`` and ``RO(x)`` (an odd
multiple of ``u``) lie strictly between the same two consecutive multiples of
``2u`` -- and powers of two, being such multiples, cannot separate them either
-- so they are on the same side of every rounding decision point and ``x``
is never a tie: ``RN32(RO64(x)) = RN32(x)``.  Zero signs come out right because
``p`` carries the product's sign, IEEE addition gives +0 for an exact
cancellation and -0 for (-0)+(-0), and a nonzero ``x`` keeps its sign through
underflow.

binary64: error-free transformations, the integer datapath as fallback
----------------------------------------------------------------------
``fma_f64`` computes most rows with float64 arithmetic only (the method of
``shared/seeds/fma-without-wider-precision.zh.txt``: split the operands,
form the product exactly as an unevaluated sum, add from the small end; made
correctly rounded with round-to-odd, as in Boldo and Melquiond's emulated
FMA).  Rows outside the method's preconditions go through the exact integer
datapath below (``fma_f64_integer``, kept callable as the reference).  Every
step is exact under these preconditions, all checked per row (IEEE binary64,
round-to-nearest-even, gradual underflow -- numpy never flushes):

P1. ``|a|, |b| < 2^996``: Veltkamp's split ``g = (2^27+1) a; ah = g - (g - a);
    al = a - ah`` cannot overflow, so ``a = ah + al`` exactly with ``ah``, ``al``
    of at most 26 significant bits (sign trick; Veltkamp/Dekker, exact in
    binary with underflow too, Boldo 2006).
P2. ``2^-968 <= |uh| < 2^1021`` where ``uh = RN(a b)``: Dekker's
    ``ul = ((ah bh - uh) + ah bl + al bh) + al bl`` is exactly ``a b - uh``.
    Dekker proves each operation exact for an unbounded exponent; every
    quantity involved is a multiple of ``ulp(a) ulp(b)`` (``ah``, ``al`` are
    multiples of ``ulp(a)``; ``uh``'s binade is far above), a power of two
    ``> |ab| 2^-106 > 2^-1075``, hence ``>= 2^-1074``, and fits in 53 bits; such
    a number is representable (as a subnormal if small), so underflow costs
    nothing.  The upper bound keeps every term finite.
P3. ``|c| < 2^1021``: with P2, ``|ab + c| < 2^1022``, so nothing below can
    overflow.  TwoSum (Knuth) is error free for any finite binary sum that does
    not overflow, subnormals included: ``th + tl = c + uh`` and ``s + e = tl + ul``.
P2'. Instead of P2: ``a`` or ``b`` is zero (the other finite by P1) and ``c`` is not.
    Then ``uh``, ``ul``, ``tl`` and ``v`` are zeros and ``r = th = c``, the exact answer.
4.  ``v = RO(tl + ul)``: ``s = RN(tl + ul)``; when ``e != 0`` and ``s`` has an even
    last bit, step ``s`` one ulp towards ``e`` (``_round_to_odd_sum``).
5.  ``r = RN(th + v)``, the result.  The exact ``x = ab + c = th + (tl + ul)``.
    * ``e == 0``: ``v = tl + ul`` exactly, so ``th + v = x`` and ``r = RN(x)``.
    * ``e != 0``: then ``tl != 0``, so ``c + uh`` was inexact.  By Sterbenz's
      lemma (and exact subnormal sums) that rules out ``|c + uh| <= |uh|/2``,
      so ``|th| >= |uh|/2 >= 2^-969`` (normal), ``ulp(uh) <= 2 ulp(th)``, and
      ``|tl + ul| <= ulp(th)/2 + ulp(uh)/2 <= 1.5 ulp(th)``: ``|v| < 2 ulp(th)``.
      Write ``Q(y) = max(biased exponent of y, 1)``, so that the ulp of ``y``'s
      binade is ``2^(Q(y) - 1075)``, subnormals included, and let
      ``u = 2^(Q(v) - 1075)``.  The bound gives (R1) ``Q(th) >= Q(v) + 52`` and,
      as ``|th + v| > |th|/2``, (R2) ``Q(r) >= Q(v) + 50``.  ``v`` is an odd
      multiple of ``u`` and not a power of two, so ``tl + ul`` lies in the open
      interval ``(v - u, v + u)`` whose ends are consecutive multiples of ``2u``;
      ``th`` is a multiple of ``ulp(th) >= 2u`` (R1), so ``x`` and ``y = th + v``
      both lie in ``J = (y - u, y + u)``, again between consecutive multiples of
      ``2u``.  ``y``'s binade has an ulp ``>= 4u`` (R2: ``r = RN(y)`` is at most
      one binade above ``y``), so ``|y| > 2u`` and every power of two that could
      fall in ``J`` is a multiple of ``2u``: none is inside, ``J`` sits in ``y``'s
      binade, and so do its rounding boundaries (midpoints, odd multiples of
      half that ulp), all multiples of ``2u`` too.  RN is constant between
      rounding boundaries: ``RN(x) = RN(y) = r``.  This is the round-to-odd
      argument of the binary32 path, with ``th`` supplying the wide format.
    So P1-P3 are the only preconditions (no runtime check of R1/R2 is
    needed; the tests check them on every row the float path takes).
Zeros: ``x = 0`` exactly only when ``c = -ab``; then ``th = +0`` (exact
cancellation), ``tl = ul = 0`` and ``r = +0``, IEEE's answer.  A nonzero ``x`` is
a multiple of ``2^-1074`` (P2 and ``c`` a float), so it never rounds to zero.
The other rows with a zero (a zero product and ``c = 0``, or ``c = 0`` with a
product outside P2), infinite or NaN operands fail P1-P3 (NaN compares false)
and take the integer path's special-value handling; finite rows that fail them are first
tried against two closed forms (``c`` alone, or overflow: ``_fma64_far_apart``).

binary64 fallback: exact integer datapath in two 64-bit limbs
-------------------------------------------------------------
There is no wider float to lean on, so finite nonzero operands go through an
integer datapath, like hardware, on 128-bit numbers held as ``(hi, lo)``
uint64 pairs.  Zeros, infinities and NaNs take a separate float path
(``_fma64_special``) where IEEE arithmetic is exact or, for ``c == 0``, is a
single correctly rounded multiply (gradual underflow assumed: numpy never
enables flush-to-zero).

1. Decode each operand to ``m * 2^(E-1075)`` with ``2^52 <= m < 2^53``
   (subnormals are normalised, so their ``E`` may be <= 0).
2. ``M = ma*mb`` exactly (106 bits) from 32-bit partial products.
3. Align ``P = M 2^ep`` and ``C = mc 2^ec`` in a 128-bit window whose bit 0
   weighs ``2^U``.  Let ``delta = top(C) - (ep + 105)``.
   * ``delta <= 1`` (P-anchored): ``P`` sits at bits 20..125, ``C`` at bits
     ``73+delta`` upward (< 2^127, so ``|P - C| < 2^127``).
   * ``delta >= 2`` (C-anchored): ``C`` sits at bits 74..126 and ``P`` (then
     below ``C/2``) is compressed into the high limb, its lowest kept bit at
     window bit 64.
   Bits of the smaller operand that fall off the bottom are *jammed*: OR-ed
   into the lowest kept bit (round to odd at that position, unit ``j``).  The
   anchor operand is a multiple of ``2j``.  Jamming only happens when the
   operands are so far apart that ``|P +- C|`` keeps its top bit within two
   of the larger one, so every rounding decision point near the result is a
   multiple of ``2^-54`` of it, hence of ``2j`` -- by the same argument as for
   binary32, the jammed sum rounds exactly like the true sum.  When the
   operands are close (where massive cancellation can happen) nothing is
   jammed: the window holds both exactly.
4. Add or subtract in two's complement, take the magnitude and its sign.
5. Find the top bit, pick the rounding unit ``max(2^(top-52), 2^-1074)``
   (the subnormal quantum), shift it to bit 75 (jamming what falls off),
   round to nearest even with the round bit and sticky bits, and build the
   bit pattern as ``(biased_exponent - 1) << 52 + significand`` so a carry
   out of the significand bumps the exponent and saturates into inf for free.

Everything is branch-free numpy integer code; numpy defines shifts by >= 64
bits as giving 0, which the shift helpers use so that out-of-range or wrapped
(negative) shift counts contribute nothing.  Work is done in chunks that stay
in cache.
"""

from __future__ import annotations

import functools

import numpy as np

from .rules import Rounding

__all__ = ["fma_f64", "fma_f64_integer", "fma_f32"]

_U64 = np.uint64
_I64 = np.int64
_CHUNK = 16384                  # elements per block: ~128 KiB per temporary, stays in L2

# binary64 layout
_SIGN64 = _U64(1 << 63)
_FRAC64 = _U64((1 << 52) - 1)
_HIDDEN64 = _U64(1 << 52)
_INF64 = _U64(0x7FF0000000000000)
_QNAN64 = _U64(0x7FF8000000000000)
_INF_X2_M1 = _U64(0xFFDFFFFFFFFFFFFF)       # (inf << 1) - 1
_LOW32 = _U64(0xFFFFFFFF)

# binary32 layout
_QNAN32 = np.uint32(0x7FC00000)
_ABS32 = np.uint32(0x7FFFFFFF)
_INF32 = np.uint32(0x7F800000)


# ============================================================== public API

def fma_f64(a, b, c) -> np.ndarray:
    """a*b + c rounded once, RNE, binary64.

    Inputs/outputs: uint64 bit patterns, same (broadcastable) shapes.  Error-free
    transformations in float64 where their preconditions hold (every normal-range
    row), the integer datapath for the rest; see the module docstring."""
    return _blockwise(_fma_f64_eft_block, np.uint64, a, b, c)


def fma_f64_integer(a, b, c) -> np.ndarray:
    """The same function computed on every row by the exact integer datapath (the
    reference ``fma_f64`` is tested against, and its fallback)."""
    return _blockwise(_fma_f64_block, np.uint64, a, b, c)


def fma_f32(a, b, c, mode: Rounding = Rounding.RNE) -> np.ndarray:
    """a*b + c rounded once, binary32, by ``mode`` (RNE, RZ, RD, RU; IEEE overflow and signed zeros).

    Inputs/outputs: uint32 bit patterns, same (broadcastable) shapes."""
    if mode == Rounding.RNE:
        return _blockwise(_fma_f32_block, np.uint32, a, b, c)
    from .formats import ROUNDING_MODES
    if mode not in ROUNDING_MODES:
        raise ValueError(f"unknown rounding mode {mode!r}; valid: {', '.join(ROUNDING_MODES)}")
    return _blockwise(functools.partial(_fma_f32_directed, mode), np.uint32, a, b, c)


def _as_bits(x, dtype) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "ui":
        raise TypeError(f"expected integer bit patterns, got dtype {arr.dtype}")
    return arr.astype(dtype, copy=False)


def _blockwise(kernel, dtype, a, b, c) -> np.ndarray:
    """Broadcast, then run ``kernel`` over cache-sized contiguous blocks."""
    a, b, c = np.broadcast_arrays(_as_bits(a, dtype), _as_bits(b, dtype), _as_bits(c, dtype))
    shape = a.shape
    a, b, c = (np.ascontiguousarray(x).reshape(-1) for x in (a, b, c))
    out = np.empty(a.size, dtype)
    with np.errstate(all="ignore"):     # wrapped shifts, inf*0, nan compares: all intended
        for i in range(0, a.size, _CHUNK):
            j = i + _CHUNK
            out[i:j] = kernel(a[i:j], b[i:j], c[i:j])
    return out.reshape(shape)


def _mask(flag: np.ndarray) -> np.ndarray:
    """bool -> uint64 all-ones / all-zeros, for branch-free selects."""
    return -(flag.astype(_U64))


# ================================================================ binary32

def _fma_f32_block(a, b, c):
    p = a.view(np.float32).astype(np.float64) * b.view(np.float32).astype(np.float64)  # exact
    cf = c.view(np.float32).astype(np.float64)
    s = _round_to_odd_sum(p, cf)
    r = s.astype(np.float32).view(np.uint32)        # the one real rounding: RNE to binary32
    return np.where((r & _ABS32) > _INF32, _QNAN32, r)


def _fma_f32_directed(mode, a, b, c):
    """The binary32 fma rounded toward zero, down or up: the round-to-odd binary64 sum (53 > 24 + 2
    bits, so one more rounding of it is the correct rounding in any mode) rounded by ``mode``."""
    from .formats import from_float
    p = a.view(np.float32).astype(np.float64) * b.view(np.float32).astype(np.float64)  # exact
    cf = c.view(np.float32).astype(np.float64)
    s = _round_to_odd_sum(p, cf)
    r = from_float("f32", s, mode).astype(np.uint32)
    # an exact zero sum: -0 for (-0) + (-0), and for any other zero sum rounding down (IEEE 754 6.3)
    zero_sum = (s == 0) & ~np.isnan(s)
    neg = (np.signbit(p) & np.signbit(cf)) | \
        ((mode == Rounding.RD) & ~(~np.signbit(p) & ~np.signbit(cf) & (p == 0) & (cf == 0)))
    r = np.where(zero_sum, np.where(neg, np.uint32(0x80000000), np.uint32(0)), r)
    return np.where((r & _ABS32) > _INF32, _QNAN32, r)


def _round_to_odd_sum(x, y):
    """RO64(x + y) for float64 arrays whose sum cannot overflow.

    TwoSum gives s = RN(x+y) and the exact error e.  When e != 0 and s has an
    even last bit, the odd neighbour on e's side is the round-to-odd result.
    e is NaN exactly when s is not finite; NaN compares false, so inf/NaN
    sums are left alone."""
    s, e = _two_sum(x, y)
    sb = s.view(_U64)
    need = ((np.abs(e) > 0) & ((sb & 1) == 0)).astype(_U64)
    toward_zero = (e.view(_U64) ^ sb) >> 63          # e and s of opposite signs
    return (sb + need - ((need & toward_zero) << 1)).view(np.float64)


# ================================================= binary64, error-free transformations

_SPLITTER = np.float64(2.0 ** 27 + 1)                    # Veltkamp: 53 = 26 + 27
_SPLIT_LIMIT = _U64(int(np.float64(2.0 ** 996).view(np.uint64)) << 1)       # P1, on |x| << 1
_PROD_LOW = _U64(int(np.float64(2.0 ** -968).view(np.uint64)) << 1)       # P2
_SUM_LIMIT = _U64(int(np.float64(2.0 ** 1021).view(np.uint64)) << 1)      # P2, P3


def _fma_f64_eft_block(a, b, c):
    uh = a.view(np.float64) * b.view(np.float64)
    ok = _eft_rows(a, b, c, uh)
    if ok.all():
        return _eft_value(a, b, c, uh).view(_U64)
    out = np.empty_like(a)
    good = np.flatnonzero(ok)
    if 2 * good.size > a.size:                       # mostly regular: compute all, overwrite the rest
        out[:] = _eft_value(a, b, c, uh).view(_U64)
    elif good.size:                                  # mostly special (NaN chains): only the regular rows
        out[good] = _eft_value(a[good], b[good], c[good], uh[good]).view(_U64)
    idx = np.flatnonzero(~ok)                        # zeros, inf, NaN; near under/overflow
    fa, fb, fc = a[idx], b[idx], c[idx]
    regular = _finite_nonzero64(fa) & _finite_nonzero64(fb) & _finite_nonzero64(fc)
    out[idx] = _fma64_special(fa, fb, fc)
    if regular.any():
        out[idx[regular]] = _fma64_far_apart(fa[regular], fb[regular], fc[regular])
    return out


_C_ONLY_GAP = 967        # Qa + Qb <= Qc + 967: |a*b| below half of c's smaller neighbour gap
_OVERFLOW_SUM = 3071     # Qa + Qb >= 3071: |a*b| >= 2^1025


def _fma64_far_apart(a, b, c):
    """Finite nonzero operands outside P1-P3, mostly far-apart exponents.  With
    ``Q(x) = max(biased exponent, 1)``, ``|x| < 2^(Q(x) - 1022)`` and ``c``'s neighbours are
    at least ``2^(Q(c) - 1076)`` away (half the gap below a power of two; ``2^-1075`` for
    subnormals), so ``Qa + Qb <= Qc + 967`` gives ``|ab| < 2^(Qc - 1077)``: the result is ``c``.
    ``Qa + Qb >= 3071`` makes both normal with ``|ab| >= 2^1025 > 2^1024 + |c|``: +-inf with
    ``ab``'s sign.  The other rows go through the integer datapath."""
    qa, qb, qc = (np.maximum((x >> 52) & 0x7FF, 1).view(_I64) for x in (a, b, c))
    q = qa + qb
    c_only = q <= qc + _C_ONLY_GAP
    huge = q >= _OVERFLOW_SUM
    out = np.where(c_only, c, ((a ^ b) & _SIGN64) | _INF64)
    rest = np.flatnonzero(~(c_only | huge))
    if rest.size:
        out[rest] = _fma64_finite_nonzero(a[rest], b[rest], c[rest])
    return out


def _veltkamp(x):
    """(hi, lo) with x = hi + lo exactly, each of at most 26 significant bits (|x| < 2^996)."""
    g = x * _SPLITTER
    hi = g - (g - x)
    return hi, x - hi


def _fma64_eft(a, b, c):
    """(RN(a*b + c) as float64, the rows where P1-P3 hold); see the module docstring."""
    uh = a.view(np.float64) * b.view(np.float64)
    return _eft_value(a, b, c, uh), _eft_rows(a, b, c, uh)


def _eft_value(a, b, c, uh):
    """RN(a*b + c) by error-free transformations, ``uh = RN(a*b)``; exact where P1-P3 hold."""
    af, bf, cf = a.view(np.float64), b.view(np.float64), c.view(np.float64)
    ah, al = _veltkamp(af)
    bh, bl = _veltkamp(bf)
    ul = ah * bh
    ul -= uh
    ul += ah * bl
    ul += al * bh
    al *= bl
    ul += al                                         # a*b = uh + ul exactly (P1, P2)
    th, tl = _two_sum(cf, uh)                        # c + uh = th + tl exactly
    v = _round_to_odd_sum(tl, ul)                    # v = RO(tl + ul)
    return th + v


def _eft_rows(a, b, c, uh):
    """The rows where P1, P2 (or P2') and P3 hold."""
    a2, b2, c2, uh2 = a << 1, b << 1, c << 1, uh.view(_U64) << 1      # magnitudes, sign dropped
    ok = (a2 < _SPLIT_LIMIT) & (b2 < _SPLIT_LIMIT) & (c2 < _SUM_LIMIT)
    ok &= ((uh2 >= _PROD_LOW) & (uh2 < _SUM_LIMIT)) | _zero_product_rows(a2, b2, c2)   # P2 or P2'
    return ok


def _zero_product_rows(a2, b2, c2):
    """P2' on magnitudes (``x << 1``): a zero product and a nonzero addend."""
    return ((a2 == 0) | (b2 == 0)) & (c2 != 0)


def _two_sum(x, y):
    """(s, e): s = RN(x + y), e = x + y - s exactly (Knuth; no overflow)."""
    s = x + y
    yv = s - x
    xv = s - yv
    xv = x - xv
    yv = y - yv
    xv += yv
    return s, xv


# ================================================================ binary64

def _fma_f64_block(a, b, c):
    out = _fma64_finite_nonzero(a, b, c)             # garbage where an operand is 0/inf/NaN
    regular = _finite_nonzero64(a) & _finite_nonzero64(b) & _finite_nonzero64(c)
    if not regular.all():
        idx = np.flatnonzero(~regular)
        out[idx] = _fma64_special(a[idx], b[idx], c[idx])
    return out


def _finite_nonzero64(x):
    # 1 <= |x|<<1 < inf<<1, one compare: x<<1 drops the sign, and 0 - 1 wraps to 2^64 - 1
    return ((x << 1) - 1) < _INF_X2_M1


def _fma64_special(a, b, c):
    """Some operand is zero, infinite or NaN.  Float arithmetic is exact here:

    * a or b zero/inf/NaN: a*b is exactly 0, inf or NaN with the IEEE sign, and
      adding c then does the IEEE thing (inf-inf -> NaN, zero-sign rules).
    * a, b finite nonzero and c zero: the answer is RN(a*b) -- which the
      hardware multiply delivers, subnormals and overflow included.  (Adding
      c would be wrong: a product underflowing to -0 plus +0 gives +0, but
      the exact sum is negative, so the answer is -0.)
    * a, b finite nonzero and c inf/NaN: c (a huge a*b must not meet -inf)."""
    af, bf, cf = a.view(np.float64), b.view(np.float64), c.view(np.float64)
    ab = af * bf
    ab_regular = _finite_nonzero64(a) & _finite_nonzero64(b)
    c_zero = (c << 1) == 0
    r = np.where(ab_regular, np.where(c_zero, ab, cf), ab + cf).view(_U64)
    return np.where((r << 1) > (_INF64 << 1), _QNAN64, r)


def _decode64(x):
    """(m, E) with x = +-m 2^(E-1075), 2^52 <= m < 2^53, E int64 (<= 0 for subnormals)."""
    E = (x >> 52) & 0x7FF
    m = (x & _FRAC64) | _HIDDEN64
    sub = np.flatnonzero(E == 0)
    if sub.size:                                     # rare: normalise subnormals
        f = x[sub] & _FRAC64
        top = (f.astype(np.float64).view(_U64) >> 52) - 1023   # floor(log2 f), exact: f < 2^53
        shift = 52 - top
        m[sub] = f << shift
        E[sub] = 1 - shift                           # wraps; read back as int64
    return m, E.view(_I64)


def _mul_53x53(x, y):
    """Exact 106-bit product of two < 2^53 integers, as (hi, lo)."""
    x1, x0 = x >> 32, x & _LOW32
    y1, y0 = y >> 32, y & _LOW32
    mid = x1 * y0 + x0 * y1                          # < 2^54
    p00 = x0 * y0
    lo = p00 + (mid << 32)
    hi = x1 * y1 + (mid >> 32) + (lo < p00)
    return hi, lo


def _place_small64(m, s):
    """m * 2^s as 128 bits for m < 2^53, -60 <= s (s > 74 only in unused lanes).

    For s < 0 the dropped bits are jammed into bit 0."""
    su = s.view(_U64)
    ku = (-s).view(_U64)
    hi = (m >> (64 - su)) | (m << (su - 64))
    lo = (m << su) | (m >> ku) | ((m << (64 + su)) != 0)
    return hi, lo


def _shift128(hi, lo, s):
    """(hi:lo) * 2^s for -64 <= s <= 127, exact for left shifts.

    Returns (hi, lo, lost) where lost flags nonzero bits shifted out."""
    su = s.view(_U64)
    ku = (-s).view(_U64)                             # huge (=> contributes 0) when s > 0
    nhi = (hi << su) | (lo >> (64 - su)) | (lo << (su - 64)) | (hi >> ku)
    back = 64 - ku
    nlo = (lo << su) | (lo >> ku) | (hi << back)
    lost = (lo << back) != 0
    return nhi, nlo, lost


def _clz_top128(hi, lo):
    """Index of the top set bit of (hi:lo) != 0, as int64."""
    hz = hi != 0
    hm = _mask(hz)
    v = (hi & hm) | (lo & ~hm)
    top = (v.astype(np.float64).view(_U64) >> 52).view(_I64) - 1023
    top -= (v >> top.view(_U64)) == 0               # the conversion may have rounded up to 2^(top+1)
    return top + (hz.astype(_I64) << 6)


def _fma64_finite_nonzero(a, b, c):
    """The exact integer datapath; see the module docstring for the proof sketch."""
    ma, Ea = _decode64(a)
    mb, Eb = _decode64(b)
    mc, Ec = _decode64(c)

    # --- exact product and relative position of the addend
    phi, plo = _mul_53x53(ma, mb)                    # M in [2^104, 2^106)
    ep = Ea + Eb - 2150                              # P = M 2^ep
    delta = Ec - Ea - Eb + 1022                      # top(C) - (ep + 105)
    c_anchor = delta >= 2
    cm = _mask(c_anchor)

    # P-anchored layout: P at bits 20..125, C at 73+delta.. (bottom jammed), U = ep - 20.
    pw_hi = (phi << 20) | (plo >> 44)
    pw_lo = plo << 20
    cw_hi, cw_lo = _place_small64(mc, np.maximum(delta + 73, -60))  # -60: C is all sticky anyway

    # C-anchored layout: C at bits 74..126, U = ep - 20 + delta - 1.  P < C/2 is
    # compressed to one limb (window bits 64..127) with the rest jammed into bit 64.
    w = (phi << 21) | (plo >> 43) | ((plo << 21) != 0)            # M >> 43, jammed
    d = np.minimum(delta, 64).view(_U64)             # >= 64: all of P is sticky
    p_small = (w >> d) | ((w << (64 - d)) != 0)

    l_hi = (pw_hi & ~cm) | ((mc << 10) & cm)
    l_lo = pw_lo & ~cm
    s_hi = (cw_hi & ~cm) | (p_small & cm)
    s_lo = cw_lo & ~cm
    U = ep - 20 + (delta - 1) * c_anchor

    # --- L +- S in two's complement, then magnitude and sign
    sub = (a ^ b ^ c) >> 63
    sm = -sub
    t_lo = s_lo ^ sm
    x_lo = l_lo + t_lo
    carry = x_lo < l_lo
    x_lo2 = x_lo + sub
    carry2 = x_lo2 < sub
    x_hi = l_hi + (s_hi ^ sm) + carry + carry2
    neg = (x_hi >> 63) & sub                         # |L - S| < 2^127, so bit 127 is the sign
    nm = -neg
    y_lo = (x_lo2 ^ nm) + neg
    y_hi = (x_hi ^ nm) + (y_lo < neg)
    sign = (((a ^ b) & ~cm) | (c & cm)) & _SIGN64   # sign of the anchor
    sign ^= neg << 63

    # --- normalise: rounding unit to bit 75 (bit 11 of the high limb)
    top = _clz_top128(y_hi, y_lo)
    shift = np.minimum(127 - top, U + 1149)          # U+1149: unit 2^-1074 for subnormal results
    # Below -64 the value is far under half a quantum (the result is 0); in fact
    # shift >= -51 because c >= 2^-1074 lies in the window, so this is a guard.
    n_hi, n_lo, lost = _shift128(y_hi, y_lo, np.maximum(shift, -64))

    # --- round to nearest even and assemble
    mant = n_hi >> 11
    round_bit = (n_hi >> 10) & 1
    sticky = ((n_hi & _U64(0x3FF)) | n_lo) != 0
    inc = round_bit & ((sticky | lost) | (mant & 1))
    biased_m1 = np.maximum(U + top + 1022, 0).view(_U64)  # biased exponent - 1; 0 when subnormal
    bits = np.minimum((biased_m1 << 52) + mant + inc, _INF64)
    nonzero = _mask((y_hi | y_lo) != 0)              # exact cancellation gives +0
    return (bits | sign) & nonzero
