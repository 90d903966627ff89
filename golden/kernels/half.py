"""16-bit float patterns (f16, bf16) as float32 lanes: the exact conversion, and an 8 x 8 block of
patterns converted and transposed at once, as LLVM vector IR (numba intrinsics).

A kernel whose loop runs across rows (LLVM vectorises it, a row a lane) wants a row's k-th operand
in one plane, the rows side by side; a and b hold a row's operands side by side instead.
:func:`transpose8_f16` turns eight rows of eight patterns into eight planes of eight float32 with
24 shuffles and eight conversions (x86's F16C: ``vcvtph2ps``, eight a instruction; ARM's own
conversions likewise).  Elsewhere LLVM would call a compiler-rt routine numba does not link, so
the conversion is spelt out in integer and float IR (:data:`NATIVE_HALF`).  A bf16 pattern is the
high half of its float32's (:func:`transpose8_bf16`: a shift).
"""

from __future__ import annotations

import platform

from llvmlite import binding as llvm
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ._common import HAS_MXCSR

NATIVE_HALF = platform.machine().lower() in ("aarch64", "arm64") or (
    HAS_MXCSR and bool(llvm.get_host_cpu_features().get("f16c")))

I16, I32, I64, F32 = ir.IntType(16), ir.IntType(32), ir.IntType(64), ir.FloatType()


def _const(ty, v):
    """``v`` as a constant of ``ty``, splat across a vector type's lanes."""
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, v)] * ty.count)
    return ir.Constant(ty, v)


def _half_soft(builder, h):
    """The float32 of f16 patterns ``h`` (an i32 or a vector of them), exactly, in integer and float IR
    every CPU has: normal patterns rebiased, subnormal ones scaled from their integer significand."""
    ity = h.type
    fty = ir.VectorType(F32, ity.count) if isinstance(ity, ir.VectorType) else F32
    sign = builder.shl(builder.and_(h, _const(ity, 0x8000)), _const(ity, 16))
    mag = builder.and_(h, _const(ity, 0x7FFF))
    shifted = builder.shl(mag, _const(ity, 13))
    normal = builder.add(shifted, _const(ity, 112 << 23))            # the exponent rebiased 15 -> 127
    special = builder.or_(shifted, _const(ity, 0x7F800000))
    tiny = builder.bitcast(builder.fmul(builder.uitofp(mag, fty), _const(fty, 2.0 ** -24)), ity)
    field = builder.lshr(mag, _const(ity, 10))
    bits = builder.select(builder.icmp_unsigned("==", field, _const(ity, 0)), tiny,
                          builder.select(builder.icmp_unsigned("==", field, _const(ity, 31)), special, normal))
    return builder.bitcast(builder.or_(bits, sign), fty)


def _like(value, element):
    """``element`` as a scalar, or as a vector of ``value``'s lanes where ``value`` is a vector."""
    return ir.VectorType(element, value.type.count) if isinstance(value.type, ir.VectorType) else element


def _to_f32(builder, h16, kind):
    """float32 of i16 patterns ``h16`` (a scalar or a vector) of ``kind``: :data:`F16`,
    :data:`F16_SOFT` (spelt out) or :data:`BF16`."""
    if kind == F16:
        return builder.fpext(builder.bitcast(h16, _like(h16, ir.HalfType())), _like(h16, F32))
    wide = builder.zext(h16, _like(h16, I32))
    if kind == F16_SOFT:
        return _half_soft(builder, wide)
    return builder.bitcast(builder.shl(wide, _const(wide.type, 16)), _like(h16, F32))


def _scalar(kind):
    def impl(typingctx, x):
        if not isinstance(x, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            return _to_f32(builder, builder.trunc(args[0], I16), kind)
        return types.float32(x), codegen
    return intrinsic(impl)


F16, F16_SOFT, BF16 = "f16", "f16 spelt out", "bf16"          # the conversions _to_f32 emits
_F16 = F16 if NATIVE_HALF else F16_SOFT

f32_of_f16 = _scalar(_F16)          # the f16 pattern in an integer's low 16 bits as float32, exactly
f32_of_f16_soft = _scalar(F16_SOFT)  # the same spelt out (what CPUs without a conversion run)
f32_of_bf16 = _scalar(BF16)         # the bf16 pattern likewise


def _shuffle(builder, x, y, unit, mask):
    """Lanes ``mask`` of ``x`` and ``y`` (8 x i16 each) taken as ``unit``-bit lanes, back as 8 x i16."""
    v16 = ir.VectorType(I16, 8)
    vty = ir.VectorType(ir.IntType(unit), 128 // unit)
    out = builder.shuffle_vector(builder.bitcast(x, vty), builder.bitcast(y, vty),
                                 ir.Constant(ir.VectorType(I32, len(mask)), mask))
    return builder.bitcast(out, v16)


def _transpose8(builder, rows):
    """Columns of eight rows of 8 x i16: unpacks of 16-, 32- and 64-bit lanes, eight each."""
    lo16, hi16 = [0, 8, 1, 9, 2, 10, 3, 11], [4, 12, 5, 13, 6, 14, 7, 15]
    # pairs of rows: [q][h] holds columns 4h .. 4h + 3 of rows 2q, 2q + 1, one 32-bit lane a column
    p = [[_shuffle(builder, rows[2 * q], rows[2 * q + 1], 16, m) for m in (lo16, hi16)] for q in range(4)]
    # quads of rows: [g][c2] holds columns 2 c2, 2 c2 + 1 of rows 4g .. 4g + 3, one 64-bit lane a column
    quads = [[None] * 4 for _ in range(2)]
    for g in range(2):
        for h in range(2):
            x, y = p[2 * g][h], p[2 * g + 1][h]
            quads[g][2 * h] = _shuffle(builder, x, y, 32, [0, 4, 1, 5])
            quads[g][2 * h + 1] = _shuffle(builder, x, y, 32, [2, 6, 3, 7])
    cols = []
    for c2 in range(4):
        cols.append(_shuffle(builder, quads[0][c2], quads[1][c2], 64, [0, 2]))
        cols.append(_shuffle(builder, quads[0][c2], quads[1][c2], 64, [1, 3]))
    return cols


def _transposer(kind):
    def impl(typingctx, src, s0, sstride, dst, d0, dstride):
        if not (isinstance(src, types.Array) and src.dtype == types.uint16 and src.layout == "C"
                and isinstance(dst, types.Array) and dst.dtype == types.float32 and dst.layout == "C"):
            return None

        def codegen(context, builder, sig, args):
            src_p = context.make_array(sig.args[0])(context, builder, args[0]).data
            dst_p = context.make_array(sig.args[3])(context, builder, args[3]).data
            s0_, ss, d0_, ds = args[1], args[2], args[4], args[5]
            v16 = ir.VectorType(I16, 8)
            rows = []
            for r in range(8):
                at = builder.gep(src_p, [builder.add(s0_, builder.mul(ss, ir.Constant(I64, r)))])
                rows.append(builder.load(builder.bitcast(at, v16.as_pointer()), align=2))
            v32 = ir.VectorType(F32, 8)
            for c, col in enumerate(_transpose8(builder, rows)):
                at = builder.gep(dst_p, [builder.add(d0_, builder.mul(ds, ir.Constant(I64, c)))])
                builder.store(_to_f32(builder, col, kind), builder.bitcast(at, v32.as_pointer()), align=4)
            return context.get_dummy_value()
        return types.none(src, types.int64, types.int64, dst, types.int64, types.int64), codegen
    return intrinsic(impl)


# transpose8_f16(src, s0, sstride, dst, d0, dstride): the f16 patterns src[s0 + r * sstride + k] (uint16;
# r, k in 0 .. 7) as float32 into dst[d0 + k * dstride + r]; the caller keeps both in bounds
transpose8_f16 = _transposer(_F16)
transpose8_f16_soft = _transposer(F16_SOFT)
transpose8_bf16 = _transposer(BF16)
