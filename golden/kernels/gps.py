"""CDNA2's GPS compiled: f32 products and pairwise group sums with subnormals flushed, accumulated
in order from c, as ``algorithms.gps`` computes them with numpy's IEEE binary32 arithmetic.

A block of :data:`BLOCK` rows goes through each step together: the operands of one product index
are read down the block's rows and turned into flushed binary32 from their fields (f16, bf16:
a few integer operations, no table), then every multiply, flush and add runs across the block
(loops the compiler vectorises; the CPU's binary32 arithmetic is numpy's).  NaN and infinities
need no other path: IEEE arithmetic carries them, and a NaN result's bits are made canonical at
the end.  Other 16-bit formats read the numpy path's flushed values from the value table.

Where the flush is the CPU's own (:func:`cpu_flush_is_gps`), the rows run with x86's flush to zero
set: a product or sum below 2**-126 is then a zero of its sign as it comes out of the operation,
and the CPU's slow path for producing a subnormal (random bf16 patterns underflow about one product
in 24) is never taken; the software flush after each operation stays, for the CPUs without it.
"""

from __future__ import annotations

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import spec as S
from .half import f32_of_f16

_SIGN = np.uint32(0x80000000)
_EXP = np.uint32(0x7F800000)
NAN32 = np.uint32(0x7FC00000)
BLOCK = 256              # rows carried through each step together


@njit(**C.HOT)
def flush(x):
    """A binary32 below 2**-126 becomes a zero of its sign (``algorithms._flush_signed``)."""
    b = C.bits_from_f32(x)
    if (b & _EXP) == 0:
        return C.f32_from_bits(b & _SIGN)
    return x


@njit(**C.HOT)
def fields_to_f32(x, eb, mb, bias):
    """The binary32 of an IEEE-style pattern ``x`` (int64; ``eb`` <= 8 exponent bits, ``mb`` <= 23
    mantissa bits, a sign bit above), zeros and subnormals as +0 (``algorithms._flushed_f32_table``):
    int64 selects, no branch (numba widens unsigned 32-bit arithmetic; int64 keeps it integer)."""
    top = (np.int64(1) << eb) - 1
    m = x & ((np.int64(1) << mb) - 1)
    e = (x >> mb) & top
    s = (x >> (mb + eb)) & 1
    ef = np.int64(255) if e == top else e + (127 - bias)
    w = (s << 31) | (ef << 23) | (m << (23 - mb))
    return C.f32_from_bits(np.uint32(np.int64(0) if e == 0 else w))


@njit(**C.HOT)
def bf16_to_f32(x):
    """:func:`fields_to_f32` of a bf16 pattern (an integer): binary32's exponent field, so the word
    shifted into place, zeros and subnormals as +0 (a shift and a select the compiler vectorises,
    in 32-bit lanes: int64's took 1.3x as long; the general decode's run-time field widths
    measured 6x slower)."""
    w = np.uint32(x << 16)
    return C.f32_from_bits(np.uint32(0) if (w & np.uint32(0x7F800000)) == np.uint32(0) else w)


@njit(**C.HOT)
def decodes_fields(fmts, f):
    """Formats :func:`fields_to_f32` reads: IEEE NaN/infinity, signed, subnormals, no ignored bits."""
    return (fmts[f, C.NAN_KIND] == C.NAN_IEEE and fmts[f, C.SIGNED] == 1 and fmts[f, C.SUBNORMALS] == 1
            and fmts[f, C.IGNORED_LOW] == 0 and fmts[f, C.EXP_BITS] <= 8 and fmts[f, C.MAN_BITS] <= 23)


@njit(**C.HOT)
def tabled_f32(fmts, vtab, etab, f, bits):
    """A tabled operand's f32 value, subnormals and zeros as +0 (any 16-bit format)."""
    j = C.table_index(fmts, f, bits)
    v = np.float64(vtab[fmts[f, C.TABLE_OFF] + j])
    e = np.int64(etab[fmts[f, C.EXP_TAB_OFF] + j])
    if e == C.ZERO_EXP or (e == fmts[f, C.EMIN] and abs(v) < C.pow2(fmts[f, C.EMIN])):
        return np.float32(0.0)
    return np.float32(v)


@njit(**C.HOT)
def half_to_f32(x):
    """GPS's flushed f32 of an f16 pattern (low 16 bits of a uint64), by the CPU's conversion: one
    compare, false for NaN too, so no branch (``or math.isnan(v)`` left the decode loop scalar)."""
    v = f32_of_f16(x)
    return np.float32(0.0) if abs(v) < np.float32(2.0 ** -14) else v


@njit(**C.INLINE)
def decode_span(x, isz, fmts, vtab, etab, f, e0, n, out):
    """``out[e]``: operand element ``e0 + e`` (row-major: row by row, a row's K in order) as GPS's
    flushed f32, e < n: one pass over contiguous memory, in the operand's own width, one loop per
    width and decoding (f16 by the CPU's conversion, IEEE-style formats from their fields, others
    from the table).  The loops index slices from 0: an index like ``e0 + e`` may be negative to
    numba, whose wraparound check then keeps the loop from vectorising (5x slower, measured)."""
    eb, mb, bias = fmts[f, C.EXP_BITS], fmts[f, C.MAN_BITS], fmts[f, C.BIAS]
    fields = decodes_fields(fmts, f)
    half = fields and eb == 5 and mb == 10 and bias == 15
    bf16 = fields and eb == 8 and mb == 7 and bias == 127
    if fields and isz == 8:
        v8 = x[:x.shape[0] - x.shape[0] % 8].view(np.uint64)[e0:e0 + n]
        if half:
            for e in range(n):
                out[e] = half_to_f32(v8[e])
        elif bf16:
            for e in range(n):
                out[e] = bf16_to_f32(np.int64(v8[e] & np.uint64(0xFFFF)))
        else:
            for e in range(n):
                out[e] = fields_to_f32(np.int64(v8[e] & np.uint64(0xFFFF_FFFF)), eb, mb, bias)
    elif fields and isz == 2:
        v2 = x[:x.shape[0] - x.shape[0] % 2].view(np.uint16)[e0:e0 + n]
        if half:
            for e in range(n):
                out[e] = half_to_f32(np.uint64(v2[e]))
        elif bf16:
            for e in range(n):
                out[e] = bf16_to_f32(np.int64(v2[e]))
        else:
            for e in range(n):
                out[e] = fields_to_f32(np.int64(v2[e]), eb, mb, bias)
    elif fields:
        for e in range(n):
            out[e] = fields_to_f32(np.int64(C.load(x, isz, e0 + e) & np.uint64(0xFFFF_FFFF)), eb, mb, bias)
    else:
        for e in range(n):
            out[e] = tabled_f32(fmts, vtab, etab, f, C.load(x, isz, e0 + e))


@njit(**C.INLINE)
def c_column(c, isz, fmts, vtab, etab, r0, nb, d):
    """``d[i]``: c of row ``r0 + i`` as f32, a subnormal (or -0) as +0 (an f32 c read in place)."""
    if fmts[S.CF, C.WORD32] == 1 and fmts[S.CF, C.IGNORED_LOW] == 0 and isz in (4, 8):
        if isz == 8:
            v8 = c[:c.shape[0] - c.shape[0] % 8].view(np.uint64)[r0:r0 + nb]
            for i in range(nb):
                d[i] = c_f32(C.f32_from_bits(np.uint32(v8[i] & np.uint64(0xFFFFFFFF))))
        else:
            v4 = c[:c.shape[0] - c.shape[0] % 4].view(np.uint32)[r0:r0 + nb]
            for i in range(nb):
                d[i] = c_f32(C.f32_from_bits(v4[i]))
        return
    for i in range(nb):
        d[i] = c_f32(np.float32(C.value_exp(fmts, vtab, etab, S.CF, C.load(c, isz, r0 + i))[0]))


@njit(**C.HOT)
def c_f32(x):
    """c as GPS reads it: a subnormal (or -0) becomes +0."""
    return np.float32(0.0) if (C.bits_from_f32(x) & _EXP) == 0 else x


@njit(**C.INLINE)
def pair_level(src, m, dst):
    """``dst[e] = flush(src[2e] + src[2e+1])``, e < m: a stride-2 loop, which LLVM vectorises with
    shuffles (the pairs read as 64-bit words and split took 1.6x as long, on a Zen 3 core)."""
    for e in range(m):
        dst[e] = flush(src[2 * e] + src[2 * e + 1])


@njit(**C.INLINE)
def accumulate(src, nb, ng, d):
    """``d[i]`` accumulates row i's ``ng`` group sums ``src[i * ng + j]`` in order, flushed after
    each add.  Two groups (K = 4 in pairs, K = 8 in fours) and one are loops of a constant stride,
    which the compiler vectorises (a stride of a run-time ``ng`` does not: 0.8 ns a row of K = 4
    bf16, against 0.2)."""
    if ng == 2:
        for i in range(nb):
            d[i] = flush(flush(d[i] + src[2 * i]) + src[2 * i + 1])
    elif ng == 1:
        for i in range(nb):
            d[i] = flush(d[i] + src[i])
    else:
        for j in range(ng):
            for i in range(nb):
                d[i] = flush(d[i] + src[i * ng + j])


@njit(**C.HOT)
def cpu_flush_is_gps(fmts):
    """Whether the CPU's flush to zero gives GPS's bits: the products of a's and b's significands
    (at most 24 bits together) are exact binary32 until they underflow, and the sums of flushed
    values are multiples of 2**-149, exact wherever they fall below 2**-126; so an operation whose
    result is below 2**-126 before rounding is below it after, and the CPU's flush (a zero of the
    exact result's sign) is the software's.  Wider significands could round a product to exactly
    2**-126, which the CPU flushes and GPS keeps."""
    return fmts[S.A, C.MAN_BITS] + fmts[S.B, C.MAN_BITS] + 2 <= 24


@njit(**C.HOT)
def cpu_flush_on(fmts):
    """Sets the calling thread's floating-point mode to IEEE's default (``_common.ieee_mode``: the
    caller's rounding mode and denormals-as-zero undone), with flush to zero where
    :func:`cpu_flush_is_gps`; returns the mode it found, for ``_common.set_fp_control`` to restore
    when the rows are done."""
    caller_fp = C.ieee_mode()
    if cpu_flush_is_gps(fmts):
        C.set_fp_control(C.fp_control() | C.FLUSH_TO_ZERO)
    return caller_fp


@njit(**C.JIT)
def gps_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """Rows ``lo .. hi - 1`` of GPS with group ``prm[P_GROUP]``, :data:`BLOCK` rows at a time.

    The block's products lie row by row (a row's K products in order): products, then each level
    of the pairwise sums (adjacent pairs: (p0+p1)+(p2+p3)), each one IEEE binary32 operation
    and a flush per element over contiguous memory; then d accumulates the group sums in order."""
    g = prm[S.P_GROUP]
    BL = BLOCK
    av = np.empty(BL * K, np.float32)
    bv = np.empty(BL * K, np.float32)
    d = np.empty(BL, np.float32)
    fault = prm[S.P_FAULT] == 1
    ng = K // g
    caller_fp = cpu_flush_on(fmts)
    for r0 in range(lo, hi, BL):
        nb = min(BL, hi - r0)
        c_column(c, isz[2], fmts, vtab, etab, r0, nb, d)
        n = nb * K
        decode_span(a, isz[0], fmts, vtab, etab, S.A, r0 * K, n, av)
        decode_span(b, isz[1], fmts, vtab, etab, S.B, r0 * K, n, bv)
        for e in range(n):
            av[e] = flush(av[e] * bv[e])
        m = n
        src_, dst = av, bv
        while m > nb * ng:                                   # one level of every group's pairwise sum
            m //= 2
            pair_level(src_, m, dst)
            src_, dst = dst, src_
        accumulate(src_, nb, ng, d)                          # d accumulates the group sums in order
        o = out[r0:r0 + nb]                                  # indexed from 0: no wraparound check
        for i in range(nb):
            bits = C.bits_from_f32(d[i])
            if (bits & ~_SIGN) > _EXP:
                bits = NAN32                                      # every NaN is the canonical quiet NaN
            elif fault and (bits & _EXP) != _EXP:
                bits ^= np.uint32(1)                              # the planted fault: the last rounding off by one ulp
            o[i] = np.uint64(bits)
    C.set_fp_control(caller_fp)                              # the caller's mode as it was
