"""Which of golden's one-kernel-a-shape instructions make test runs (each shape's kernel costs about
3-8 s of CPU on its first compile): golden.kernels.amd_fp8's fp8 GFDRDA shapes, three of eight in
the default tier (each fp8 format as a and as b, K = 16 and 32; the instructions other default
tests use), golden.kernels.fdrda_float's f16 and bf16 FDRDA shapes, two of four
(f16 in one pass of 8, bf16 in two: the bench's rows), and golden.kernels.fda_fp8's E4M3 FDA shapes, one of three
(K = 32 in passes of 16: the bench's Ada row, named with its arch, since RTX Blackwell's
instruction of the same name is K = 32 in one pass); every one under -m slow.  golden.kernels.fda_float's
two f16 shapes are both the bench's rows: always run."""

import numpy as np
import pytest

import golden
from golden import kernels
from golden.vectors import KINDS, random_operands

FP8_DEFAULT = ("v_mfma_f32_16x16x32_fp8_bf8", "v_mfma_f32_32x32x16_fp8_fp8", "v_mfma_f32_16x16x32_bf8_bf8")
H16_DEFAULT = ("v_mfma_f32_32x32x8_f16", "v_mfma_f32_16x16x16_bf16")
E4M3_DEFAULT = (("ada", "QMMA.16832.F32.E4M3.E4M3"),)      # RTX Blackwell's namesake: K = 32 in one pass


def shape_kernels() -> set:
    """The kernels of one shape that make test's default tier samples: every one
    (``golden.kernels.shape_kernels``) but fda_float's, which the bench's rows take and make test runs
    whole."""
    from golden.kernels import fda_float
    return kernels.shape_kernels() - set(fda_float.KERNELS.values())


def default_tier(instructions) -> list:
    """``instructions`` but the shapes make test leaves to -m slow: a shape kernel runs where it is
    the kernel of one of the named instructions (every instruction of that shape, whatever its
    arch: the kernel is compiled once either way)."""
    from golden.catalog import lookup
    shapes = shape_kernels()
    named = [("cdna3", name) for name in FP8_DEFAULT + H16_DEFAULT] + list(E4M3_DEFAULT)
    keep = {kernels.plan(lookup(*unit)).rows for unit in named}
    return [ins for ins in instructions if kernels.plan(ins).rows not in shapes or kernels.plan(ins).rows in keep]


def catalog_shapes(module, formats) -> set:
    """The kernels of ``module`` (a module of one-kernel-a-shape kernels) the catalog's designs take,
    each design checked: its formats' names are ``formats`` (a, b, c, d), the kernel is its shape's
    (K and the pass length) and reads own-width operands."""
    from golden.catalog import instructions
    used = set()
    for ins in instructions():
        pl = kernels.plan(ins)
        if pl.handles and pl.rows in module.KERNELS.values():
            assert [f.name for f in ins.formats] == list(formats), ins.name
            assert module.KERNELS[(pl.k, int(pl.prm[kernels.spec.P_L]))] is pl.rows, ins.name
            assert pl.own_width == module.OWN_WIDTH, ins.name
            used.add(pl.rows)
    return used


def own_width(ins, a, b, c) -> tuple:
    """a, b and c in their formats' own dtypes."""
    fa, fb, fc, _ = ins.formats
    return a.astype(fa.dtype), b.astype(fb.dtype), c.astype(fc.dtype)


def same_bits(ins, a, b, c, threads=1) -> tuple:
    """numpy's bits, and whether both operand widths (own, uint64) give them on the compiled path."""
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    same = all(np.array_equal(golden.dot_add(ins, *ops, backend="numba", threads=threads), want)
               for ops in (own_width(ins, a, b, c), (a, b, c)))
    return want, same


def every_kind_and_a_fault(ins, n: int) -> None:
    """``n`` rows of every vector kind give numpy's bits on the compiled path, and the planted
    rounding fault changes some of 256 normal rows."""
    for i, kind in enumerate(KINDS):
        a, b, c, _, _ = random_operands(ins, n, np.random.default_rng([4, i]), kind)
        assert same_bits(ins, a, b, c)[1], kind
    a, b, c, _, _ = random_operands(ins, 256, np.random.default_rng(5), "normal")
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    with kernels.planted_fault():
        assert (golden.dot_add(ins, *own_width(ins, a, b, c), backend="numba", threads=1) != want).any()


def refuses_wide_operands(ins, refusal: str) -> None:
    """The shape kernel of ``ins`` gives numpy's bits on own-width operands (narrowed as
    golden.kernels.run narrows them) and refuses wider ones with ``refusal``, rather than reading
    their bytes as operands."""
    from golden.kernels import profile
    pl = kernels.plan(ins)
    a, b, c, _, _ = random_operands(ins, 4, np.random.default_rng(1), "normal")
    _, args = profile.kernel_args(ins, a, b, c, None, None)
    pl.rows(0, 4, *args)
    assert np.array_equal(args[-1].astype(np.uint32), golden.dot_add(ins, a, b, c, backend="numpy"))
    wide = [x.reshape(-1).view(np.uint8) for x in (a, b, c)]
    with pytest.raises(ValueError, match=refusal):
        pl.rows(0, 4, *wide, *args[3:5], np.array([8, 8, 8, 8, 8], np.int64), *args[6:])


CALLER_MODE = 0x1F80 | 0x8040 | 0x6000      # x86 MXCSR: exceptions masked, FTZ and DAZ, round toward zero


def in_callers_mode(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` run under a caller's floating-point mode that changes float arithmetic's bits (flush
    to zero, denormals as zero, rounding toward zero: :data:`CALLER_MODE`; nothing where the CPU
    has no MXCSR), that mode given back after; ``fn``'s result, once the mode it left is checked
    to be the caller's (status flags aside)."""
    from numba import njit

    from golden.kernels import _common

    @njit
    def swap_mode(mode):
        old = _common.fp_control()
        _common.set_fp_control(np.uint32(mode))
        return old
    mode = CALLER_MODE if _common.HAS_MXCSR else 0
    caller = swap_mode(mode)
    try:
        out = fn(*args, **kwargs)
    finally:
        kept = swap_mode(caller)
    assert kept & 0xFFC0 == mode, hex(kept)        # (bits 0-5: status flags)
    return out
