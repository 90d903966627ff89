"""golden.gemm: the chaining of dot-adds checked against explicit loops over golden.mma written
here, the split-K reductions and promotions against their stated order, planted changes of
order and interval caught, and every bad Kernel field refused with one clear error."""

from __future__ import annotations

import numpy as np
import pytest

import golden
from golden.fma import fma_f32
from golden.formats import from_float, to_float
from golden.gemm import PRESETS, Kernel, f32_add, gemm, gemm_float

HGMMA = ("hopper", "HGMMA.64xNx16.F32")                 # f16 x f16 + f32, K=16
QGMMA = ("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3")       # e4m3, K=32, E8M13 accumulation
AMPERE = ("ampere", "HMMA.16816.F32.BF16")
CDNA3 = ("cdna3", "v_mfma_f32_32x32x8_f16")
MXF8 = ("blackwell", "UTCQMMA.SF.F32.E4M3.E4M3.E8")
NVFP4 = ("blackwell", "UTCOMMA.4X")


def operands(ins, M, N, K, seed=0, spread=4.0):
    """Random bit patterns of A [M, K] and B [K, N], values spread over several binades."""
    rng = np.random.default_rng(seed)
    fa, fb = ins.formats[:2]
    vals = lambda shape: rng.standard_normal(shape) * np.exp2(rng.integers(-spread, spread + 1, shape))  # noqa: E731
    return from_float(fa, vals((M, K))), from_float(fb, vals((K, N)))


def f32(bits):
    return np.asarray(bits, np.uint32).view(np.float32)


def explicit_slice(ins, A, B, steps, promotion=None, scales=None):
    """The K loop written out: golden.mma step by step, promoted with numpy float32 adds
    (IEEE binary32 RNE), or with fma_f32 where group scales apply."""
    k, (M, N) = ins.k, (A.shape[0], B.shape[1])
    zero = np.zeros((M, N), np.uint32)
    acc, main = zero, np.zeros((M, N), np.float32)
    for i, s in enumerate(steps):
        acc = golden.mma(ins, A[:, s * k:(s + 1) * k], B[s * k:(s + 1) * k], acc)
        if promotion and ((i + 1) % promotion == 0 or i == len(steps) - 1):
            if scales is None:
                main = f32(acc) + main
            else:
                sa, sb = scales
                g = s // promotion
                sc = (f32(sa[:, g])[:, None] * f32(sb[g])[None, :]).astype(np.float32)
                main = f32(fma_f32(sc.view(np.uint32), acc, main.view(np.uint32)))
            acc = zero
    return main if promotion else f32(acc)


@pytest.mark.xdist_group("gemm_tiles")      # with test_gemm_tiles.py: each tile kernel compiles in one worker
def test_one_k_step_equals_mma():
    for arch, name in (HGMMA, QGMMA, AMPERE, CDNA3):
        ins = golden.lookup(arch, name)
        A, B = operands(ins, ins.m, ins.n, ins.k, seed=1)
        want = golden.mma(ins, A, B, np.zeros((ins.m, ins.n), np.uint32))
        assert np.array_equal(gemm(A, B, instr=ins), want), name


@pytest.mark.xdist_group("gemm_tiles")      # with test_gemm_tiles.py: each tile kernel compiles in one worker
def test_chained_equals_mma_loop():
    for arch, name in (HGMMA, QGMMA, CDNA3):
        ins = golden.lookup(arch, name)
        A, B = operands(ins, ins.m, ins.n, 7 * ins.k, seed=2)
        want = explicit_slice(ins, A, B, range(7))
        assert np.array_equal(f32(gemm(A, B, instr=ins)), want), name


def test_ragged_k_is_padded_with_zero_products():
    ins = golden.lookup(*HGMMA)
    A, B = operands(ins, 64, 8, 40, seed=3)
    Ap, Bp = np.pad(A, ((0, 0), (0, 8))), np.pad(B, ((0, 8), (0, 0)))
    assert np.array_equal(f32(gemm(A, B, instr=ins)), explicit_slice(ins, Ap, Bp, range(3)))


@pytest.mark.xdist_group("gemm_tiles")      # with test_gemm_tiles.py: each tile kernel compiles in one worker
def test_block_scaled_chain_equals_mma_loop():
    for arch, name in (MXF8, NVFP4):
        ins = golden.lookup(arch, name)
        K, nb = 3 * ins.k, 3 * ins.k // ins.block_size
        A, B = operands(ins, ins.m, ins.n, K, seed=4, spread=1)
        rng = np.random.default_rng(5)
        sf = ins.scale_format
        sa = from_float(sf, np.exp2(rng.integers(-2, 3, (ins.m, nb)).astype(float)))
        sb = from_float(sf, np.exp2(rng.integers(-2, 3, (nb, ins.n)).astype(float)))
        acc, per = np.zeros((ins.m, ins.n), np.uint32), ins.k // ins.block_size
        for s in range(3):
            ks, bs = slice(s * ins.k, (s + 1) * ins.k), slice(s * per, (s + 1) * per)
            acc = golden.mma(ins, A[:, ks], B[ks], acc, sa[:, bs], sb[bs])
        got = gemm(A, B, instr=ins, kernel="block-scaled", scale_A=sa, scale_B=sb)
        assert np.array_equal(got, acc), name


def reduce_np(parts, how, order=None):
    """The stated reductions in numpy float32 (IEEE binary32, RNE): an independent adder."""
    if how == "sequential":
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        return total
    if how == "tree":
        while len(parts) > 1:
            parts = [parts[i] + parts[i + 1] for i in range(0, len(parts) - 1, 2)] + parts[len(parts) & ~1:]
        return parts[0]
    total = np.zeros_like(parts[0])
    for i in order:
        total = total + parts[i]
    return total


SPLIT = [("sequential", None), ("tree", None), ("atomic", (2, 0, 3, 1))]


@pytest.mark.parametrize("how,order", SPLIT)
def test_split_k_equals_slices_and_reduction(how, order):
    ins = golden.lookup(*HGMMA)
    A, B = operands(ins, 64, 16, 10 * ins.k, seed=6, spread=6)
    bounds = [range(0, 3), range(3, 6), range(6, 9), range(9, 10)]      # per = ceil(10 / 4) = 3
    parts = [explicit_slice(ins, A, B, r) for r in bounds]
    k = Kernel(split_k=4, reduction=how, atomic_order=order)
    got = f32(gemm(A, B, instr=ins, kernel=k))
    assert np.array_equal(got, reduce_np(parts, how, order))
    # planted: another order of the same partials gives other bits, and the comparison sees it
    other = reduce_np(parts[::-1], "sequential") if how != "sequential" else reduce_np(parts, "tree")
    assert not np.array_equal(got, other)


def test_split_k_with_promotion():
    ins = golden.lookup(*QGMMA)
    A, B = operands(ins, 64, 8, 16 * ins.k, seed=7)
    parts = [explicit_slice(ins, A, B, range(s * 8, s * 8 + 8), promotion=4) for s in (0, 1)]
    got = gemm(A, B, instr=ins, kernel=Kernel(split_k=2, promotion=4))
    assert np.array_equal(f32(got), parts[0] + parts[1])


def test_promotion_interval_is_seen():
    ins = golden.lookup(*QGMMA)
    A, B = operands(ins, 64, 16, 24 * ins.k, seed=8, spread=1)
    want = explicit_slice(ins, A, B, range(24), promotion=4)
    got = f32(gemm(A, B, instr=ins, kernel="fp8-promote-4"))
    assert np.array_equal(got, want)
    for planted in (2, 8, None):                   # a planted change of interval changes the bits
        other = f32(gemm(A, B, instr=ins, kernel=Kernel(promotion=planted)))
        assert not np.array_equal(other, want), planted


def test_group_scales_applied_on_promotion():
    ins = golden.lookup(*QGMMA)
    A, B = operands(ins, 64, 256, 8 * ins.k, seed=9, spread=1)
    rng = np.random.default_rng(10)
    sa = from_float("f32", rng.uniform(0.5, 2.0, (64, 2)))
    sb = from_float("f32", rng.uniform(0.5, 2.0, (2, 2)))
    kern = PRESETS["fp8-promote-128-elements-groupscaled"]
    got = gemm(A, B, instr=ins, kernel=kern, scale_A=sa, scale_B=sb)
    want = explicit_slice(ins, A, B, range(8), promotion=4, scales=(sa, np.repeat(sb, 128, axis=1)))
    assert np.array_equal(f32(got), want)
    unfused = gemm(A, B, instr=ins, kernel=kern.with_(scale_fma=False), scale_A=sa, scale_B=sb)
    assert not np.array_equal(unfused, got)        # fused and unfused scaling are told apart


def test_epilogue_order_and_conversion():
    ins = golden.lookup(*HGMMA)
    A, B = operands(ins, 64, 8, 2 * ins.k, seed=11, spread=2)
    rng = np.random.default_rng(12)
    C = from_float("f16", rng.standard_normal((64, 8)))
    bias = from_float("f16", rng.standard_normal(8))
    acc = f32(gemm(A, B, instr=ins)).astype(np.float64)
    k16 = Kernel(out_format="f16")
    got = gemm(A, B, C, instr=ins, kernel=k16, alpha=0.5, beta=2.0, bias=bias)
    # 0.5 * acc and 2 * C are exact; their sum in float64 is exact here (a few binades apart)
    t = (0.5 * acc + 2.0 * to_float("f16", C)).astype(np.float32) + to_float("f16", bias).astype(np.float32)
    assert np.array_equal(got, t.astype(np.float16).view(np.uint16))
    rz = gemm(A, B, C, instr=ins, kernel=k16.with_(out_rounding="RZ"), alpha=0.5, beta=2.0, bias=bias)
    assert not np.array_equal(rz, got)


def test_fp32_add_is_ieee():
    """The adds of promotion, reduction and epilogue against numpy's float32 add (IEEE binary32, RNE;
    NaN payloads aside: golden returns the canonical NaN)."""
    rng = np.random.default_rng(13)
    x = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32)
    z = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32)
    with np.errstate(all="ignore"):
        y = (x.view(np.float32) * np.float32(-0.999)).view(np.uint32)      # cancellation and subnormals
        for u in (y, z):
            want = x.view(np.float32) + u.view(np.float32)
            got = f32_add(x, u)
            nan = np.isnan(want)
            assert np.array_equal(np.isnan(got.view(np.float32)), nan)
            assert np.array_equal(got[~nan], want.view(np.uint32)[~nan])


def test_float_path_and_params():
    ins = golden.lookup(*QGMMA)
    rng = np.random.default_rng(14)
    A, B = rng.uniform(0, 1, (64, 8 * 32)), rng.uniform(0, 1, (8 * 32, 8))
    d = gemm_float(A, B, instr=ins)
    assert np.array_equal(d, to_float("f32", gemm(from_float("e4m3", A), from_float("e4m3", B), instr=ins)))
    wide = gemm_float(A, B, instr=ins, params={"F": 24, "out_frac_bits": None})
    assert not np.array_equal(wide, d)             # a design of one's own changes the bits


BAD_FIELDS = [
    (dict(split_k=0), "split_k"), (dict(split_k=2.5), "split_k"), (dict(split_unit=0), "split_unit"),
    (dict(reduction="random"), "reduction must be one of sequential, tree, atomic"),
    (dict(split_k=3, reduction="atomic"), "atomic_order must be a permutation"),
    (dict(split_k=3, reduction="atomic", atomic_order=(0, 1, 1)), "atomic_order must be a permutation"),
    (dict(atomic_order=(0,)), "atomic_order is only for reduction='atomic'"),
    (dict(promotion=0), "promotion must be an integer >= 1"),
    (dict(scaling="tensor"), "scaling must be one of none, block, group"),
    (dict(scaling="group"), "scaling='group' applies the scales on the promotion adds"),
    (dict(group_k=0), "group_k"), (dict(group_n=-1), "group_n"),
    (dict(scale_fma="yes"), "scale_fma must be True or False"),
    (dict(out_format="f17"), "out_format: unknown number format"),
    (dict(out_rounding="RNA"), "out_rounding must be one of RZ, RD, RU, RNE"),
    (dict(operand_rounding="RNA"), "operand_rounding must be None or one of RZ, RD, RU, RNE"),
]


@pytest.mark.parametrize("fields,message", BAD_FIELDS)
def test_bad_kernel_field(fields, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        Kernel(**fields)
    assert "\n" not in str(e.value)


def test_tf32_operand_rounding():
    ins = golden.lookup("hopper", "HGMMA.64xNx8.F32.TF32")
    rng = np.random.default_rng(16)
    A = rng.standard_normal((64, 16)).astype(np.float32).view(np.uint32)
    B = rng.standard_normal((16, 8)).astype(np.float32).view(np.uint32)
    rounded = [from_float("tf32", x.view(np.float32).astype(np.float64)) for x in (A, B)]
    got = gemm(A, B, instr=ins, kernel=Kernel(operand_rounding="RNE"))
    assert np.array_equal(got, gemm(*rounded, instr=ins))
    assert not np.array_equal(got, gemm(A, B, instr=ins))          # the tensor core alone truncates
    with pytest.raises(ValueError, match="operand_rounding rounds f32 words to TF32"):
        gemm(*operands(golden.lookup(*HGMMA), 64, 8, 16), instr=golden.lookup(*HGMMA),
             kernel=Kernel(operand_rounding="RNE"))


def test_kernel_and_instruction_mismatch():
    ins = golden.lookup(*QGMMA)
    A, B = operands(ins, 64, 8, 4 * ins.k)
    with pytest.raises(ValueError, match="group_k=128 must equal promotion"):
        gemm(A, B, instr=ins, kernel=Kernel(promotion=2, scaling="group"))
    with pytest.raises(ValueError, match="not block-scaled"):
        gemm(A, B, instr=ins, kernel="block-scaled")
    with pytest.raises(ValueError, match="leaves slices without k-steps: K=128 is 4 k-steps of 32"):
        gemm(A, B, instr=ins, kernel=Kernel(split_k=5))
    with pytest.raises(ValueError, match="unknown kernel preset 'nope'; valid: k-loop"):
        gemm(A, B, instr=ins, kernel="nope")
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        gemm(A, B, instr=ins, workers=0)
    with pytest.raises(ValueError, match="C and D formats are equal"):
        gemm(A, B, arch="volta", instr="HMMA.884.F32.F16")


def test_tiles_and_threads_give_the_same_bits():
    ins = golden.lookup(*HGMMA)
    A, B = operands(ins, 130, 72, 2 * ins.k, seed=15)            # 9,360 outputs: two tiles
    one = gemm(A, B, instr=ins)
    assert np.array_equal(gemm(A, B, instr=ins, workers=2), one)
    assert np.array_equal(gemm(A[:64], B[:, :8], instr=ins), one[:64, :8])     # an output never depends on M or N
