"""Scalar building blocks of the compiled kernels: bit casts, the hardware fma, operand loads and
decoding, and :func:`round_bits`, the scalar form of :func:`golden.formats.round_to_format`.

Formats travel as rows of an int64 table (:mod:`golden.kernels.spec` builds them from
:class:`golden.formats.Format`), so one compiled kernel serves every format: the format is a
runtime argument, never a specialisation.  Operands travel as their bytes (a uint8 view) and an
item size, so callers' arrays are read where they lie, in their own width, with one compiled
signature.
"""

from __future__ import annotations

import math
import platform

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..nbcache import njit
from .spec import (  # noqa: F401
    BIAS,
    EMAX,
    EMIN,
    EXP_BITS,
    EXP_TAB_OFF,
    FNUZ,
    HAS_INF,
    IGNORED_LOW,
    INF_BITS,
    MAN_BITS,
    MAX_BITS,
    MAX_MANTISSA,
    NAN_ALL_ONES,
    NAN_BITS,
    NAN_IEEE,
    NAN_KIND,
    NAN_MAX_EXP,
    NAN_NEG_ZERO,
    NAN_NONE,
    NO_TERM,
    OVERFLOW_IEEE,
    OVERFLOW_INF,
    PARKED,
    RD,
    RNE,
    RU,
    RZ,
    SIGNED,
    SUBNORMALS,
    TABLE_OFF,
    VALUE_BITS,
    WORD32,
    ZERO_EXP,
)

JIT = dict(cache=True, nogil=True)
INLINE = dict(cache=True, nogil=True)
HOT = dict(cache=True, nogil=True, inline="always")    # the per-element helpers: inlined by numba


# --------------------------------------------------------------------------- intrinsics

def _fma(ir_type, nb_type):
    """The correctly rounded ``x*y + z`` (LLVM's fma: the CPU's instruction, or libm's)."""
    def impl(typingctx, x, y, z):
        def codegen(context, builder, sig, args):
            fn = builder.module.declare_intrinsic("llvm.fma", [ir_type], ir.FunctionType(ir_type, [ir_type] * 3))
            return builder.call(fn, args)
        return nb_type(nb_type, nb_type, nb_type), codegen
    return intrinsic(impl)


fma64 = _fma(ir.DoubleType(), types.float64)
fma32 = _fma(ir.FloatType(), types.float32)


def _unary_f64(name):
    """An LLVM float64 intrinsic of one argument (one instruction where the CPU has it)."""
    def impl(typingctx, x):
        def codegen(context, builder, sig, args):
            d = ir.DoubleType()
            fn = builder.module.declare_intrinsic(name, [d], ir.FunctionType(d, [d]))
            return builder.call(fn, args)
        return types.float64(types.float64), codegen
    return intrinsic(impl)


ftrunc = _unary_f64("llvm.trunc")      # np.trunc, inlined (numba's np.trunc calls libm)
ffloor = _unary_f64("llvm.floor")      # np.floor


def _bitcast(src, dst, dst_ir):
    """An intrinsic reinterpreting a ``src`` value's bits as ``dst`` (no conversion)."""
    def impl(typingctx, x):
        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], dst_ir)
        return dst(src), codegen
    return intrinsic(impl)


f64_from_bits = _bitcast(types.uint64, types.float64, ir.DoubleType())
bits_from_f64 = _bitcast(types.float64, types.uint64, ir.IntType(64))
f32_from_bits = _bitcast(types.uint32, types.float32, ir.FloatType())
bits_from_f32 = _bitcast(types.float32, types.uint32, ir.IntType(32))


@intrinsic
def add_i32(typingctx, x, y):
    """int32 + int32 as int32, wrapping (numba widens a sum of int32 to int64: half the lanes)."""
    def codegen(context, builder, sig, args):
        return builder.add(args[0], args[1])
    return types.int32(types.int32, types.int32), codegen


def _fdiv(nb_type):
    def impl(typingctx, x, y):
        def codegen(context, builder, sig, args):
            return builder.fdiv(args[0], args[1])
        return nb_type(nb_type, nb_type), codegen
    return intrinsic(impl)


# x / y as IEEE divides, float32 and float64 (numba's ``/`` raises on a zero y: a branch a lane, and
# a loop across rows that LLVM then leaves scalar: golden.kernels.fda_float's rounding ran 0.5x)
div_f32 = _fdiv(types.float32)
div_f64 = _fdiv(types.float64)


def freeze(builder, value):
    """LLVM's ``freeze`` of ``value`` (which llvmlite's builder lacks): an arbitrary but fixed value
    where ``value`` is poison, so that what follows is defined whatever the input."""
    inst = ir.instructions.Instruction(builder.block, value.type, "freeze", [value])
    builder._insert(inst)
    return inst


def _trunc_i32(nb_type):
    def impl(typingctx, x):
        def codegen(context, builder, sig, args):
            return freeze(builder, builder.fptosi(args[0], ir.IntType(32)))
        return types.int32(nb_type), codegen
    return intrinsic(impl)


# x (float32, float64) rounded toward zero as int32 where |x| < 2**31 (one instruction on x86); some
# int32 for NaN, infinities and the rest (frozen: never poison)
trunc_i32 = _trunc_i32(types.float32)
trunc_i32_f64 = _trunc_i32(types.float64)


@intrinsic
def f32_scale_of(typingctx, x):
    """The bits of float32 ``x`` with its fraction cleared (a power of two for a normal ``x``)."""
    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        bits = builder.and_(builder.bitcast(args[0], i32), ir.Constant(i32, 0x7F800000))
        return builder.bitcast(bits, ir.FloatType())
    return types.float32(types.float32), codegen


# The SSE control and status register (MXCSR) of x86: its flush-to-zero bit makes a result below the
# smallest normal a zero of its sign, as the hardware GPS does after each operation.  Other CPUs
# read 0 and set nothing: their kernels flush in software alone.
HAS_MXCSR = platform.machine().lower() in ("x86_64", "amd64")
FLUSH_TO_ZERO = np.uint32(0x8000)


def _mxcsr_call(builder, name, ptr):
    i8p = ir.IntType(8).as_pointer()
    fn = builder.module.globals.get(name) or ir.Function(builder.module, ir.FunctionType(ir.VoidType(), [i8p]), name)
    builder.call(fn, [builder.bitcast(ptr, i8p)])


@intrinsic
def fp_control(typingctx):
    """The calling thread's MXCSR (0 where the CPU has none)."""
    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        if not HAS_MXCSR:
            return ir.Constant(i32, 0)
        slot = builder.alloca(i32)
        _mxcsr_call(builder, "llvm.x86.sse.stmxcsr", slot)
        return builder.load(slot)
    return types.uint32(), codegen


@intrinsic
def set_fp_control(typingctx, value):
    """Loads ``value`` into the calling thread's MXCSR (nothing where the CPU has none)."""
    def codegen(context, builder, sig, args):
        if HAS_MXCSR:
            slot = builder.alloca(ir.IntType(32))
            builder.store(args[0], slot)
            _mxcsr_call(builder, "llvm.x86.sse.ldmxcsr", slot)
        return context.get_dummy_value()
    return types.none(types.uint32), codegen


# MXCSR's fields a kernel's float arithmetic must not inherit: flush to zero, denormals as zero (DAZ,
# which a fast-math library sets for its whole process), the rounding control, and the exception
# masks (all set: no trap)
DENORMALS_ARE_ZERO = np.uint32(0x0040)
ROUNDING_CONTROL = np.uint32(0x6000)
EXCEPTION_MASKS = np.uint32(0x1F80)


@njit(**HOT)
def ieee_mode():
    """Sets the calling thread's floating-point mode to IEEE's default (round to nearest even,
    subnormals kept, no traps), whatever the caller's; returns the mode it found, for
    :func:`set_fp_control` to restore when the rows are done (nothing on CPUs without MXCSR)."""
    caller = fp_control()
    if HAS_MXCSR:
        keep = np.uint32(0xFFFF ^ (FLUSH_TO_ZERO | DENORMALS_ARE_ZERO | ROUNDING_CONTROL))
        set_fp_control(np.uint32((caller & keep) | EXCEPTION_MASKS))
    return caller


MAGIC_I51 = np.int64(0x4338000000000000)         # the bits of 1.5 * 2**52


@njit(**HOT)
def f64_of_i51(x):
    """``x`` (an int64, ``|x| < 2**51``) as float64, exactly: the bits of ``1.5 * 2**52`` plus ``x``
    (one ulp is 1 in that binade), less ``1.5 * 2**52``.  An integer add and a float subtract
    vectorise on every x86 (int64 to float64 conversion needs AVX-512: AVX2 converts lane by lane)."""
    return f64_from_bits(np.uint64(x + MAGIC_I51)) - 6755399441055744.0


@njit(**HOT)
def bit_length_i51(x):
    """The bit length of ``x`` (``0 <= x < 2**51``; 0 for 0): the exponent field of its exact float64
    (:func:`f64_of_i51`).  Four vector instructions on AVX2, which has no vector count of leading
    zeros (LLVM's expansion of one is a table lookup per nibble: 1.1x the rows a second of f16
    FDRDA on a Zen 3 core)."""
    return max(np.int64(bits_from_f64(f64_of_i51(x)) >> np.uint64(52)) - 1022, 0)


# --------------------------------------------------------------------------- loads and decoding

@njit(**HOT)
def load(buf, isz, i):
    """Element ``i`` of an operand given as its bytes (``isz`` bytes per element, little-endian):
    one compiled signature reads every width; LLVM turns the byte sequence into one load."""
    j = i * isz
    if isz == 1:
        return np.uint64(buf[j])
    x = np.uint64(buf[j]) | (np.uint64(buf[j + 1]) << np.uint64(8))
    if isz == 2:
        return x
    x |= (np.uint64(buf[j + 2]) << np.uint64(16)) | (np.uint64(buf[j + 3]) << np.uint64(24))
    if isz == 4:
        return x
    for t in range(4, 8):
        x |= np.uint64(buf[j + t]) << np.uint64(8 * t)
    return x


@njit(**HOT)
def table_index(fmts, f, bits):
    """Index of ``bits`` in format row ``f``'s value table (ignored bits dropped)."""
    return (np.int64(bits >> np.uint64(fmts[f, IGNORED_LOW])) & ((np.int64(1) << fmts[f, VALUE_BITS]) - 1))


@njit(**INLINE)
def value_exp(fmts, vtab, etab, f, bits):
    """Exact value (float64) and hidden-bit exponent (zero: ZERO_EXP; inf/NaN: 0) of one element,
    as ``algorithms._operand_values`` gives them: a table for formats up to 16 bits, the f32 word
    (TF32's low bits cleared) otherwise."""
    off = fmts[f, TABLE_OFF]
    if off >= 0:
        j = table_index(fmts, f, bits)
        return np.float64(vtab[off + j]), np.int64(etab[fmts[f, EXP_TAB_OFF] + j])
    if fmts[f, WORD32] == 1:
        w = np.uint32(bits & np.uint64(0xFFFFFFFF)) & ~np.uint32((1 << fmts[f, IGNORED_LOW]) - 1)
        v = np.float64(f32_from_bits(w))
        ef = np.int64((w >> np.uint32(23)) & np.uint32(0xFF))
        mn = np.int64(w & np.uint32(0x7FFFFF)) >> fmts[f, IGNORED_LOW]
        if ef == 255:
            return v, np.int64(0)
        if ef == 0:
            return v, np.int64(ZERO_EXP) if mn == 0 else np.int64(-126)
        return v, ef - 127
    if fmts[f, EXP_BITS] == 11:                                # f64
        v = f64_from_bits(bits)
        ef = np.int64((bits >> np.uint64(52)) & np.uint64(0x7FF))
        mn = bits & np.uint64((1 << 52) - 1)
        if ef == 2047:
            return v, np.int64(0)
        if ef == 0:
            return v, np.int64(ZERO_EXP) if mn == 0 else np.int64(-1022)
        return v, ef - 1023
    return fields_value_exp(fmts, f, bits)


@njit(**HOT)
def word32_value_exp(bits):
    """``value_exp`` of an f32 word."""
    w = np.uint32(bits & np.uint64(0xFFFFFFFF))
    v = np.float64(f32_from_bits(w))
    ef = np.int64((w >> np.uint32(23)) & np.uint32(0xFF))
    if ef == 255:
        return v, np.int64(0)
    if ef == 0:
        return v, np.int64(ZERO_EXP) if (w & np.uint32(0x7FFFFF)) == 0 else np.int64(-126)
    return v, ef - 127


@njit(**INLINE)
def fields_value_exp(fmts, f, bits):
    """``value_exp`` from the bit fields (``formats._decode_arith``): the 16-bit formats."""
    mb, eb = fmts[f, MAN_BITS], fmts[f, EXP_BITS]
    v = np.int64(bits >> np.uint64(fmts[f, IGNORED_LOW])) & ((np.int64(1) << fmts[f, VALUE_BITS]) - 1)
    man = v & ((np.int64(1) << mb) - 1)
    ef = (v >> mb) & ((np.int64(1) << eb) - 1)
    neg = fmts[f, SIGNED] == 1 and (v >> (eb + mb)) != 0
    top = (np.int64(1) << eb) - 1
    kind = fmts[f, NAN_KIND]
    if kind == NAN_IEEE and ef == top:
        if man != 0:
            return math.nan, np.int64(0)
        return (-math.inf if neg else math.inf), np.int64(0)
    if ((kind == NAN_ALL_ONES and ef == top and man == (np.int64(1) << mb) - 1)
            or (kind == NAN_NEG_ZERO and neg and ef == 0 and man == 0) or (kind == NAN_MAX_EXP and ef == top)):
        return math.nan, np.int64(0)
    if ef == 0 and fmts[f, SUBNORMALS] == 1:
        sig, e = man, fmts[f, EMIN]
        if man == 0:
            return (-0.0 if neg else 0.0), np.int64(ZERO_EXP)
    else:
        sig, e = man | (np.int64(1) << mb), ef - fmts[f, BIAS]
    val = np.float64(sig) * pow2(e - mb)
    return (-val if neg else val), e


# --------------------------------------------------------------------------- rounding

@njit(**HOT)
def bit_length(x):
    """``int.bit_length`` of a non-negative int64: from the exponent of its (exact) float64 below
    2**53, by shifts above."""
    if x < (np.int64(1) << 53):
        if x == 0:
            return np.int64(0)
        return np.int64((bits_from_f64(np.float64(x)) >> np.uint64(52)) & np.uint64(0x7FF)) - 1022
    n = np.int64(0)
    while x > 0:
        x >>= 1
        n += 1
    return n


@njit(**HOT)
def ldexp(x, n):
    """``math.ldexp(x, n)``: one multiply by ``2**n`` where that is a normal double (both are the
    correctly rounded ``x * 2**n``), libm's ldexp beyond."""
    if -1022 <= n <= 1023:
        return x * f64_from_bits(np.uint64(n + 1023) << np.uint64(52))
    return math.ldexp(x, n)


@njit(**HOT)
def pow2(n):
    """``2.0 ** n`` (``math.ldexp(1.0, n)``), built from its bits in the normal range."""
    if -1022 <= n <= 1023:
        return f64_from_bits(np.uint64(n + 1023) << np.uint64(52))
    return math.ldexp(1.0, n)


@njit(**INLINE)
def round_bits(fmts, f, sign, mag, exp, mode, frac_bits, overflow, fault):
    """``round_to_format`` for one value ``(-1)**sign * mag * 2**exp`` in format row ``f``.

    ``frac_bits < 0``: the format's own mantissa width.  ``fault``: a test-only switch that
    flips the round bit's effect (tests/golden/test_golden_kernels.py shows the comparison catches it).
    """
    man_bits = fmts[f, MAN_BITS]
    p = man_bits if frac_bits < 0 else frac_bits
    emin = fmts[f, EMIN]
    e_top = exp + bit_length(mag) - 1
    q = max(e_top - p, emin - p)
    shift = q - exp
    right = min(max(shift, 0), 63)
    if shift > 0:
        kept = mag >> right
    else:
        kept = mag << min(-shift, 63)
    rem = mag & ((np.int64(1) << right) - 1) if right < 63 else mag & np.int64(0x7FFFFFFFFFFFFFFF)
    half = (np.int64(1) << max(right - 1, 0)) if right > 0 else np.int64(0)
    far = shift > 63
    inexact = (shift > 0 and rem != 0) or (far and mag != 0)
    above = rem > half and shift > 0 and not far
    tie = rem == half and shift > 0 and not far
    if far:
        kept = np.int64(0)
    if mode == RNE:
        inc = above or (tie and (kept & 1) == 1)
    elif mode == RZ:
        inc = False
    elif mode == RU:
        inc = inexact and sign == 0
    else:
        inc = inexact and sign == 1
    if fault and shift > 0 and not far and rem >= half and rem != 0:
        inc = not inc                                   # the planted fault: the round bit misread
    if inc:
        kept += 1
    if (kept >> (p + 1)) != 0:
        kept >>= 1
        q += 1
    normal = kept >= (np.int64(1) << p)
    lead = q + p
    if normal:
        efield = lead + fmts[f, BIAS]
        man = (kept - (np.int64(1) << p)) << (man_bits - p)
    else:
        efield = np.int64(0)
        man = kept << (man_bits - p)
    emax = fmts[f, EMAX]
    over = normal and (lead > emax or (lead == emax and man > fmts[f, MAX_MANTISSA]))
    word = np.uint64((efield << man_bits) | man)
    sbit = np.uint64(0)
    if fmts[f, SIGNED] == 1:
        sbit = np.uint64(sign) << np.uint64(fmts[f, EXP_BITS] + man_bits)
        word |= sbit
    if fmts[f, FNUZ] == 1 and word == (np.uint64(1) << np.uint64(fmts[f, VALUE_BITS] - 1)):
        word = np.uint64(0)
    low = np.uint64(fmts[f, IGNORED_LOW])
    if over:
        if overflow == OVERFLOW_INF or mode == RNE:
            big = True
        elif mode == RZ:
            big = False
        elif mode == RU:
            big = sign == 0
        else:
            big = sign == 1
        if big:
            return overflow_bits(fmts, f, sign)
        return np.uint64(fmts[f, MAX_BITS]) | (sbit << low)
    return word << low


@njit(**INLINE)
def overflow_bits(fmts, f, sign):
    """Infinity of that sign; the NaN where the format has none; +-max where it has neither."""
    sbit = np.uint64(0)
    if fmts[f, SIGNED] == 1:
        sbit = np.uint64(sign) << np.uint64(fmts[f, EXP_BITS] + fmts[f, MAN_BITS] + fmts[f, IGNORED_LOW])
    if fmts[f, HAS_INF] == 1:
        return np.uint64(fmts[f, INF_BITS]) | sbit
    if fmts[f, NAN_KIND] != NAN_NONE:
        return np.uint64(fmts[f, NAN_BITS])
    return np.uint64(fmts[f, MAX_BITS]) | sbit


@njit(**INLINE)
def finish(fmts, fd, total, special, exp_lsb, mode, frac_bits, overflow, zero_positive, fault):
    """``algorithms._finish`` for one row: the exact sum ``total * 2**exp_lsb`` rounded to ``fd``;
    a NaN ``special`` gives the canonical NaN, an infinite one that infinity."""
    if math.isnan(special):
        return np.uint64(fmts[fd, NAN_BITS])
    if math.isinf(special):
        return overflow_bits(fmts, fd, 1 if special < 0 else 0)
    t = total if math.isfinite(total) else 0.0
    ints = np.int64(t)
    sign = 1 if ints < 0 else 0
    d = round_bits(fmts, fd, sign, abs(ints), exp_lsb, mode, frac_bits, overflow, fault)
    if zero_positive:
        neg_zero = np.uint64(1) << np.uint64(fmts[fd, EXP_BITS] + fmts[fd, MAN_BITS] + fmts[fd, IGNORED_LOW])
        if fmts[fd, SIGNED] == 1 and d == neg_zero:
            d = np.uint64(0)
    return d


@njit(**INLINE)
def round_f64(fmts, f, x, mode):
    """``formats.from_float`` for one float64 (overflow by the rounding direction, IEEE)."""
    if math.isnan(x):
        return np.uint64(fmts[f, NAN_BITS]) if fmts[f, NAN_KIND] != NAN_NONE else np.uint64(fmts[f, MAX_BITS])
    sign = 1 if math.copysign(1.0, x) < 0 else 0
    if math.isinf(x):
        return overflow_bits(fmts, f, sign)
    w = bits_from_f64(x)
    ef = np.int64((w >> np.uint64(52)) & np.uint64(0x7FF))
    mn = np.int64(w & np.uint64((1 << 52) - 1))
    if ef == 0:
        return round_bits(fmts, f, sign, mn, np.int64(-1074), mode, -1, OVERFLOW_IEEE, False)
    return round_bits(fmts, f, sign, mn | (np.int64(1) << 52), ef - 1075, mode, -1, OVERFLOW_IEEE, False)


@njit(**HOT)
def table_row(table, row):
    """Which row of ``table`` equals ``row`` (-1: none): a format's decode row matched against a
    kernel module's rows of the formats it compiles with constant fields."""
    for k in range(table.shape[0]):
        same = True
        for col in range(table.shape[1]):
            same &= row[col] == table[k, col]
        if same:
            return k
    return -1


@njit(**HOT)
def fault_ulp(out, lo, hi):
    """The register paths' planted fault (``golden.kernels.planted_fault``), a pass over rows ``lo ..
    hi - 1`` of their own once computed (their rounding then has no fault term to test per row):
    each finite nonzero f32 d one ulp off."""
    for r in range(lo, hi):
        w = out[r]
        if (w & np.uint64(0x7F800000)) != np.uint64(0x7F800000) and (w & np.uint64(0x7FFFFFFF)) != 0:
            out[r] = w ^ np.uint64(1)
