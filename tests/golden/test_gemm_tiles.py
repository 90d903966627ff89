"""golden.gemm's two routes give the same bits: the GEMM-level tile kernels (golden.gemm_kernels) against
the rows route (one golden.dot_add per k-step), on every Kernel preset, the instructions the tile
kernels take, ragged M, N and K, C in the accumulator, operands with every exponent and zeros; a planted
rounding fault in the tile kernels caught; designs and operands they do not take sent to the rows
route and said so on the logger; the thread count resolved from the argument, NUMBA_NUM_THREADS and
the CPU affinity."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from kernel_shapes import in_callers_mode

import golden
from golden import gemm_kernels as GK
from golden.formats import from_float
from golden.gemm import PRESETS, Kernel, gemm
from golden.gemm_error import random_problem

# one xdist worker takes the file (make test: --dist loadgroup), with test_gemm.py's tests of whole GEMMs:
# a fresh machine compiles each tile kernel once, not in two workers at the same time
pytestmark = pytest.mark.xdist_group("gemm_tiles")

pytest.importorskip("numba")

HGMMA = golden.lookup("hopper", "HGMMA.64xNx16.F32")
QGMMA = golden.lookup("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3")
TILED = [HGMMA, QGMMA, golden.lookup("ampere", "HMMA.16816.F32.BF16"),
         golden.lookup("blackwell", "UTCQMMA.F32.E4M3.E4M3"), golden.lookup("hopper", "HGMMA.64xNx8.F32.TF32"),
         golden.lookup("hopper", "HGMMA.64xNx16.F16"), golden.lookup("hopper", "QGMMA.64xNx32.F16.E4M3.E4M3")]
MXF8 = golden.lookup("blackwell", "UTCQMMA.SF.F32.E4M3.E4M3.E8")
NVFP4 = golden.lookup("blackwell", "UTCOMMA.4X")
CDNA3 = golden.lookup("cdna3", "v_mfma_f32_32x32x8_f16")
GPS = golden.lookup("cdna2", "v_mfma_f32_32x32x4_2b_f16")
SFMA = golden.lookup("cdna2", "v_mfma_f32_32x32x1_2b_f32")
CDNA1 = golden.lookup("cdna1", "v_mfma_f32_32x32x4f16")          # no compiled row kernel: numpy's path
AMD = [CDNA3, golden.lookup("cdna3", "v_mfma_f32_32x32x16_fp8_fp8"), golden.lookup("cdna3", "v_mfma_f32_16x16x16_bf16")]


def wide(ins, M, N, K, seed):
    """Operands over many binades with zeros among them: alignment, truncation and e_zero all seen."""
    rng = np.random.default_rng(seed)
    fa, fb = ins.formats[:2]

    def vals(shape, fmt):
        span = 12 if fmt.storage_bits >= 16 else 4              # fp8's largest values are a few hundred
        v = rng.standard_normal(shape) * np.exp2(rng.integers(-span, span + 1, shape))
        return np.where(rng.random(shape) < 0.1, 0.0, v)
    return from_float(fa, vals((M, K), fa)), from_float(fb, vals((K, N), fb))


def both(A, B, C=None, **kw):
    rows = gemm(A, B, C, route="rows", **kw)
    tiles = gemm(A, B, C, route="tiles", **kw)
    return rows, tiles


def preset_problem(name, M, N, K, seed):
    kernel = PRESETS[name]
    ins = MXF8 if kernel.scaling == "block" else QGMMA if kernel.promotion else HGMMA
    prob = random_problem(ins, kernel, M, N, K, seed, "uniform")
    A, B = wide(ins, M, N, K, seed)
    return ins, kernel, A, B, prob.scale_A, prob.scale_B


SHAPES = [(33, 70, 260), (8, 24, 320), (5, 300, 290)]        # ragged M, N and K; N over one tile of columns


def check_preset(name, shapes):
    for M, N, K in shapes:
        ins, kernel, A, B, sa, sb = preset_problem(name, M, N, K, seed=M)
        if kernel.scaling == "group" and -(-K // ins.k) < kernel.promotion * kernel.split_k:
            continue
        rows, tiles = both(A, B, instr=ins, kernel=kernel, scale_A=sa, scale_B=sb)
        assert np.array_equal(rows, tiles), (name, M, N, K, np.count_nonzero(rows != tiles))


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_gives_the_rows_routes_bits(name):
    check_preset(name, SHAPES[:1])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_at_more_shapes(name):
    check_preset(name, SHAPES[1:])


@pytest.mark.parametrize("ins", TILED, ids=lambda i: i.name)
def test_every_tiled_instruction_with_promotion_split_k_and_c(ins):
    A, B = wide(ins, 19, 37, 11 * ins.k + 5, seed=3)
    C = from_float(ins.d_format, np.random.default_rng(4).standard_normal((19, 37)) * 64)
    for kernel in (Kernel(), Kernel(promotion=3, split_k=2), Kernel(split_k=3, reduction="tree"),
                   Kernel(c_accumulate=True), Kernel(promotion=2, c_accumulate=True, split_k=2),
                   Kernel(out_format="bf16", out_rounding="RZ")):
        if kernel.operand_rounding is None and "tf32" in (ins.a_format,):
            kernel = kernel.with_(operand_rounding="RNE") if kernel.split_k == 3 else kernel
        kw = dict(beta=1.0) if kernel.c_accumulate else dict(alpha=0.5, beta=-2.0)
        Cin = C if kernel.out_format is None else from_float(kernel.out_format, np.zeros((19, 37)))
        rows, tiles = both(A, B, Cin, instr=ins, kernel=kernel, **kw)
        assert np.array_equal(rows, tiles), (ins.name, kernel)


def test_overflow_and_huge_c_chain_as_the_rows_route():
    """Sums that overflow to infinity and a C of infinity and NaN in the accumulator: the
    accumulator's specials are decoded as the row kernels decode them."""
    ins = HGMMA
    A = from_float("f16", np.full((4, 64), 60000.0))
    B = from_float("f16", np.full((64, 300), 60000.0))
    C = from_float("f32", np.array([[np.inf, -np.inf, np.nan, 1.0] * 75] * 4))
    rows, tiles = both(A, B, C, instr=ins, kernel=Kernel(c_accumulate=True), beta=1.0)
    assert np.array_equal(rows, tiles)
    signed_zeros = from_float("f16", np.where(np.arange(64 * 300).reshape(64, 300) % 3, -0.0, 0.0))
    rows, tiles = both(A, signed_zeros, instr=ins)                 # sums of signed zeros only
    assert np.array_equal(rows, tiles)
    assert np.array_equal(rows, both(-A.view(np.float16), signed_zeros, instr=ins)[1])


def test_f16_accumulator_overflow_and_nan_widen_as_the_rows_route():
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F16")
    A = from_float("f16", np.full((4, 64), 200.0))
    B = from_float("f16", np.where(np.arange(64 * 260).reshape(64, 260) % 7, 100.0, -300.0))
    C = from_float("f16", np.array([[np.nan, np.inf, -np.inf, 0.0] * 65] * 4))
    for kernel in (Kernel(), Kernel(promotion=2), Kernel(c_accumulate=True), Kernel(c_accumulate=True, promotion=1)):
        kw = dict(beta=1.0) if kernel.c_accumulate else {}
        rows, tiles = both(A, B, C, instr=ins, kernel=kernel, **kw)
        assert np.array_equal(rows, tiles), kernel
    assert np.isinf(rows.view(np.float16)).any() and np.isnan(rows.view(np.float16)).any()


def fp4_problem(ins, M, N, K, rng):
    """FP4 operands and block scales of every size (not only powers of two): inexact sums."""
    fa, fb, sf = *ins.formats[:2], ins.scale_format
    A, B = from_float(fa, rng.standard_normal((M, K)) * 3), from_float(fb, rng.standard_normal((K, N)) * 3)
    nb = K // ins.block_size
    scales = lambda shape: from_float(sf, np.exp2(rng.integers(-6, 7, shape).astype(float))  # noqa: E731
                                      * rng.uniform(1, 2, shape))
    return A, B, scales((M, nb)), scales((nb, N))


@pytest.mark.parametrize("ins", [NVFP4, golden.lookup("blackwell", "UTCOMMA.MXF4.E8")], ids=lambda i: i.name)
def test_gdfs_block_scaled_with_nan_zero_and_odd_scales(ins):
    """FP4 with ue4m3 or e8m0 block scales (GDFS): scales of every size, zero and NaN among them."""
    rng = np.random.default_rng(8)
    M, N, K = 7, 260, 3 * ins.k
    A, B, sa, sb = fp4_problem(ins, M, N, K, rng)
    sf = ins.scale_format
    sa[1, 0] = from_float(sf, np.nan)
    sb[1, 3] = from_float(sf, np.nan)
    if int(from_float(sf, 0.0)) != int(from_float(sf, np.nan)):      # ue4m3 has a zero; e8m0 does not
        sa[2, 1] = from_float(sf, 0.0)
    C = from_float("f32", rng.standard_normal((M, N)))
    for kernel in (PRESETS["block-scaled"], Kernel(scaling="block", promotion=2, split_k=2, reduction="tree"),
                   Kernel(scaling="block", c_accumulate=True)):
        kw = dict(beta=1.0) if kernel.c_accumulate else dict(beta=0.5)
        rows, tiles = both(A, B, C, instr=ins, kernel=kernel, scale_A=sa, scale_B=sb, **kw)
        assert np.array_equal(rows, tiles), kernel
    assert np.isnan(tiles.view(np.float32)).any()


FLOAT64 = AMD + [golden.lookup("hopper", "MMA.16832.F32.E4M3.E4M3"), HGMMA.with_params(F=40), SFMA, GPS]


@pytest.mark.parametrize("ins", FLOAT64, ids=lambda i: f"{i.name}-{i.algorithm}-F{i.params.F}")
def test_float64_paths_with_specials_promotion_split_k_and_c(ins):
    """CDNA3's FDRDA, GFDRDA and their chains, FDA off the integer lanes (Hopper's FP8 mma.sync:
    interleaved passes, c added last; a design with F=40), CDNA2's binary32 SFMA: float64 products of
    the decoded operands (SFMA: the CPU's fma), CDNA2's GPS (flushed binary32 pairwise sums),
    infinities, NaN and signed zeros among them, and C in the accumulator."""
    A, B = wide(ins, 9, 270, 5 * ins.k + 3, seed=11)
    if ins.formats[0].storage_bits >= 16:
        A[0, :4] = from_float(ins.formats[0], np.array([np.inf, np.nan, 0.0, -0.0]))
    C = from_float("f32", np.random.default_rng(12).standard_normal((9, 270)))
    for kernel in (Kernel(), Kernel(promotion=2, split_k=2), Kernel(c_accumulate=True)):
        kw = dict(beta=1.0) if kernel.c_accumulate else {}
        rows, tiles = both(A, B, C, instr=ins, kernel=kernel, **kw)
        assert np.array_equal(rows, tiles), kernel


def test_gps_tiles_on_underflowing_bf16_products(monkeypatch):
    """bf16 operands between 2**-70 and 2**-56, so that products fall on both sides of 2**-126
    and the flushed ones change the sums, with random patterns among them (NaN, infinities): the
    tiles, which run with the CPU's flush to zero as gps_rows does (``gps.cpu_flush_is_gps``),
    give the numpy path's bits."""
    ins = golden.lookup("cdna2", "v_mfma_f32_32x32x4bf16")
    rng = np.random.default_rng(13)

    def near_the_flush(shape):
        v = rng.choice([-1.0, 1.0], shape) * (1 + rng.random(shape)) * np.exp2(rng.integers(-70, -56, shape))
        x = from_float("bf16", v)
        return np.where(rng.random(shape) < 0.05, rng.integers(0, 1 << 16, shape), x).astype(np.uint16)
    A, B = near_the_flush((8, 6 * ins.k)), near_the_flush((6 * ins.k, 40))
    tiles = gemm(A, B, instr=ins, route="tiles")
    monkeypatch.setenv("GOLDEN_BACKEND", "numpy")
    assert np.array_equal(gemm(A, B, instr=ins, route="rows"), tiles)


def test_planted_fault_is_caught():
    A, B = wide(HGMMA, 16, 40, 64, seed=5)
    rows = gemm(A, B, instr=HGMMA, route="rows")
    with GK.planted_fault():
        faulty = gemm(A, B, instr=HGMMA, route="tiles")
    assert not np.array_equal(rows, faulty)
    assert np.array_equal(rows, gemm(A, B, instr=HGMMA, route="tiles"))      # and gone after
    A, B, sa, sb = fp4_problem(NVFP4, 8, 16, 2 * NVFP4.k, np.random.default_rng(9))
    kw = dict(instr=NVFP4, kernel="block-scaled", scale_A=sa, scale_B=sb)
    rows = gemm(A, B, route="rows", **kw)
    with GK.planted_fault():                                                  # GDFS's rounding too
        assert not np.array_equal(rows, gemm(A, B, route="tiles", **kw))
    for ins in (CDNA3, HGMMA.with_params(F=40), SFMA, GPS):                  # FDRDA's, FDA's in float64, SFMA's, GPS's
        A, B = wide(ins, 8, 16, 64, seed=10)
        rows = gemm(A, B, instr=ins, route="rows")
        with GK.planted_fault():
            assert not np.array_equal(rows, gemm(A, B, instr=ins, route="tiles")), ins.name


def test_the_rows_route_where_the_tiles_do_not_go(caplog):
    caplog.set_level(logging.DEBUG, logger="golden.gemm")
    wide_f = MXF8.with_params(F=40)                          # beyond the integer lanes' bounds, block-scaled
    for ins, kernel, why in ((CDNA1, Kernel(), "has no GEMM-level kernel"),
                             (wide_f, PRESETS["block-scaled"], "float64 path's block scales or flushes")):
        prob = random_problem(ins, kernel, 32, 8, 2 * ins.k, 1, "uniform")
        kw = dict(instr=ins, kernel=kernel, scale_A=prob.scale_A, scale_B=prob.scale_B)
        caplog.clear()
        auto = gemm(prob.A, prob.B, **kw)
        assert why in caplog.text and "rows route" in caplog.text
        assert np.array_equal(auto, gemm(prob.A, prob.B, route="rows", **kw))
        with pytest.raises(ValueError, match=f"route='tiles' cannot compute this GEMM: .*{why}"):
            gemm(prob.A, prob.B, route="tiles", **kw)
    A, B = wide(HGMMA, 8, 8, 32, seed=6)
    A[3, 5] = 0x7C00                                          # +inf in f16: the rows route classifies it
    caplog.clear()
    got = gemm(A, B, instr=HGMMA)
    assert "NaN or an infinity" in caplog.text
    assert np.array_equal(got, gemm(A, B, instr=HGMMA, route="rows"))
    caplog.clear()
    gemm(*wide(HGMMA, 8, 8, 32, seed=6), instr=HGMMA)
    assert "tiles route" in caplog.text
    with pytest.raises(ValueError, match="route must be one of auto, tiles, rows, got 'fast'"):
        gemm(A, B, instr=HGMMA, route="fast")


def test_threads_give_the_same_bits():
    A, B = wide(QGMMA, 70, 300, 8 * QGMMA.k, seed=7)             # 3 x 2 tiles
    kernel = Kernel(promotion=2, split_k=2)
    one = gemm(A, B, instr=QGMMA, kernel=kernel, threads=1)
    assert np.array_equal(gemm(A, B, instr=QGMMA, kernel=kernel, threads=2), one)
    assert np.array_equal(gemm(A, B, instr=QGMMA, kernel=kernel, threads=2, route="rows"), one)


def test_thread_resolver_reads_argument_environment_and_affinity():
    assert GK.resolve_threads(3, environ={"NUMBA_NUM_THREADS": "1"}, affinity=8) == 3
    assert GK.resolve_threads(None, environ={}, affinity=6) == 6
    assert GK.resolve_threads(None, environ={"NUMBA_NUM_THREADS": "2"}, affinity=6) == 2
    assert GK.resolve_threads(None, environ={"NUMBA_NUM_THREADS": "16"}, affinity=6) == 6
    assert GK.resolve_threads(None, environ={"NUMBA_NUM_THREADS": " "}, affinity=4) == 4
    import os
    assert GK.resolve_threads() == min(len(os.sched_getaffinity(0)),
                                       int(os.environ.get("NUMBA_NUM_THREADS") or 1 << 30))
    for bad in (0, -1, 1.5, "2"):
        with pytest.raises(ValueError, match="threads must be an integer >= 1"):
            GK.resolve_threads(bad)
    with pytest.raises(ValueError, match="NUMBA_NUM_THREADS='x': valid: a whole number of threads"):
        GK.resolve_threads(None, environ={"NUMBA_NUM_THREADS": "x"}, affinity=4)


def test_tiles_ignore_the_callers_floating_point_mode():
    """The tile kernels set IEEE's floating-point mode for their work and give the caller's back
    (golden.kernels._common.ieee_mode): under a caller's flush to zero, denormals as zero and
    rounding toward zero, the same bits as under the default mode, promotion and the float64,
    SFMA and GPS paths included."""
    for ins, kernel in ((QGMMA, Kernel(promotion=2)), (CDNA3, Kernel()), (SFMA, Kernel()), (GPS, Kernel())):
        A, B = wide(ins, 9, 40, 4 * ins.k, seed=3)
        want = gemm(A, B, instr=ins, kernel=kernel, route="tiles", threads=1)
        got = in_callers_mode(gemm, A, B, instr=ins, kernel=kernel, route="tiles", threads=1)
        assert np.array_equal(got, want), ins.name
