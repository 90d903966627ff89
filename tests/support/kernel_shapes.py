"""Which of golden's one-kernel-a-shape instructions make test runs (each shape's kernel costs about
5 s of CPU on its first compile): golden.kernels.amd_fp8's fp8 GFDRDA shapes, three of eight in the
default tier (each fp8 format as a and as b, K = 16 and 32; the instructions other default tests
use), every one under -m slow."""

from golden import kernels

FP8_DEFAULT = ("v_mfma_f32_16x16x32_fp8_bf8", "v_mfma_f32_32x32x16_fp8_fp8", "v_mfma_f32_16x16x32_bf8_bf8")


def fp8_shape(ins) -> bool:
    """Whether ``ins`` runs on an fp8 GFDRDA shape's own kernel."""
    from golden.kernels import amd_fp8
    return kernels.plan(ins).rows in amd_fp8.KERNELS.values()


def default_tier(instructions) -> list:
    """``instructions`` but the fp8 shapes make test leaves to -m slow."""
    return [ins for ins in instructions if not fp8_shape(ins) or ins.name in FP8_DEFAULT]
