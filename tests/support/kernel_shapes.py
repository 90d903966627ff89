"""Which of golden's one-kernel-a-shape instructions make test runs (each shape's kernel costs about
3-8 s of CPU on its first compile): golden.kernels.amd_fp8's fp8 GFDRDA shapes, three of eight in
the default tier (each fp8 format as a and as b, K = 16 and 32; the instructions other default
tests use), golden.kernels.fdrda_reg's f16 and bf16 FDRDA shapes, two of four (f16 in one pass
of 8, bf16 in two: the bench's rows), and golden.kernels.fda_fp8's E4M3 FDA shapes, one of three
(K = 32 in passes of 16: the bench's Ada row, named with its arch, since RTX Blackwell's
instruction of the same name is K = 32 in one pass); every one under -m slow.  golden.kernels.fda_reg's
two f16 shapes are both the bench's rows: always run."""

from golden import kernels

FP8_DEFAULT = ("v_mfma_f32_16x16x32_fp8_bf8", "v_mfma_f32_32x32x16_fp8_fp8", "v_mfma_f32_16x16x32_bf8_bf8")
H16_DEFAULT = ("v_mfma_f32_32x32x8_f16", "v_mfma_f32_16x16x16_bf16")
E4M3_DEFAULT = (("ada", "QMMA.16832.F32.E4M3.E4M3"),)      # RTX Blackwell's namesake: K = 32 in one pass


def shape_kernels() -> set:
    """The kernels of one shape each that make test's default tier samples."""
    from golden.kernels import amd_fp8, fda_fp8, fdrda_reg
    return set(amd_fp8.KERNELS.values()) | set(fdrda_reg.KERNELS.values()) | set(fda_fp8.KERNELS.values())


def default_tier(instructions) -> list:
    """``instructions`` but the shapes make test leaves to -m slow: a shape kernel runs where it is
    the kernel of one of the named instructions (every instruction of that shape, whatever its
    arch: the kernel is compiled once either way)."""
    from golden.catalog import lookup
    shapes = shape_kernels()
    named = [("cdna3", name) for name in FP8_DEFAULT + H16_DEFAULT] + list(E4M3_DEFAULT)
    keep = {kernels.plan(lookup(*unit)).rows for unit in named}
    return [ins for ins in instructions if kernels.plan(ins).rows not in shapes or kernels.plan(ins).rows in keep]
