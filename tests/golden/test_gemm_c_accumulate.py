"""Kernel.c_accumulate: C loaded into the accumulator before the K loop (the first dot-add's c, the fp32
main accumulator under promotion, slice 0 only under split-K) against chains written out here with
golden.mma and numpy float32 adds; shown to differ from the epilogue's ``acc + C`` on a case built to
differ, equal to it where it must be, and its bad uses refused with one clear error."""

from __future__ import annotations

import numpy as np
import pytest

import golden
from golden.formats import from_float, to_float
from golden.gemm import Kernel, gemm

HGMMA = ("hopper", "HGMMA.64xNx16.F32")                 # f16 x f16 + f32, K=16, truncating accumulator
QGMMA = ("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3")       # e4m3, K=32, E8M13 accumulation
ACC = Kernel(c_accumulate=True)


def operands(ins, M, N, K, seed, spread=4):
    rng = np.random.default_rng(seed)
    fa, fb = ins.formats[:2]
    vals = lambda shape: rng.standard_normal(shape) * np.exp2(rng.integers(-spread, spread + 1, shape))  # noqa: E731
    return from_float(fa, vals((M, K))), from_float(fb, vals((K, N)))


def big_c(M, N, seed, scale=2.0 ** 8):
    """C in f32 a few binades above the products: where the accumulator's alignment drops their low bits."""
    return from_float("f32", np.random.default_rng(seed).standard_normal((M, N)) * scale)


def f32(bits):
    return np.asarray(bits, np.uint32).view(np.float32)


def chain(ins, A, B, steps, start, promotion=None):
    """golden.mma step by step from ``start`` (the first c; with promotion the fp32 main accumulator),
    promoted with numpy float32 adds."""
    k, (M, N) = ins.k, (A.shape[0], B.shape[1])
    zero = np.zeros((M, N), np.uint32)
    acc, main = (zero, f32(start)) if promotion else (start, None)
    for i, s in enumerate(steps):
        acc = golden.mma(ins, A[:, s * k:(s + 1) * k], B[s * k:(s + 1) * k], acc)
        if promotion and ((i + 1) % promotion == 0 or i == len(steps) - 1):
            main, acc = f32(acc) + main, zero
    return main if promotion else f32(acc)


def test_c_is_the_first_dot_adds_c_and_differs_from_the_epilogue():
    ins = golden.lookup(*HGMMA)
    A, B = operands(ins, 64, 8, 4 * ins.k, seed=1)
    C = big_c(64, 8, seed=2)
    zero = np.zeros((64, 8), np.uint32)
    got = f32(gemm(A, B, C, instr=ins, kernel=ACC, beta=1.0))
    assert np.array_equal(got, chain(ins, A, B, range(4), C))
    epi = f32(gemm(A, B, C, instr=ins, beta=1.0))
    assert np.array_equal(epi, chain(ins, A, B, range(4), zero) + f32(C))
    differ = np.count_nonzero(got != epi)
    assert differ > 64, differ                    # built to differ: C's alignment drops the products' low bits


def test_promotion_starts_the_fp32_accumulator_at_c():
    ins = golden.lookup(*QGMMA)
    A, B = operands(ins, 64, 8, 8 * ins.k, seed=3)
    C = big_c(64, 8, seed=4, scale=2.0 ** 4)
    k = Kernel(promotion=4, c_accumulate=True)
    got = f32(gemm(A, B, C, instr=ins, kernel=k, beta=1.0))
    assert np.array_equal(got, chain(ins, A, B, range(8), C, promotion=4))
    # planted: C in the tensor-core partial instead (the first QGMMA's c) gives other bits
    in_mma = chain(ins, A, B, range(4), C) + chain(ins, A, B, range(4, 8), np.zeros((64, 8), np.uint32))
    assert not np.array_equal(got, in_mma)
    epi = f32(gemm(A, B, C, instr=ins, kernel=k.with_(c_accumulate=False), beta=1.0))
    assert not np.array_equal(got, epi)


def test_split_k_gives_c_to_slice_zero_only():
    ins = golden.lookup(*HGMMA)
    A, B = operands(ins, 64, 8, 6 * ins.k, seed=5)
    C = big_c(64, 8, seed=6)
    zero = np.zeros((64, 8), np.uint32)
    got = f32(gemm(A, B, C, instr=ins, kernel=Kernel(split_k=2, c_accumulate=True), beta=1.0))
    want = chain(ins, A, B, range(3), C) + chain(ins, A, B, range(3, 6), zero)
    assert np.array_equal(got, want)
    planted = chain(ins, A, B, range(3), zero) + chain(ins, A, B, range(3, 6), C)     # C in the last slice
    assert not np.array_equal(got, planted)


def test_agrees_with_the_epilogue_where_it_must():
    ins = golden.lookup(*HGMMA)
    A, B = operands(ins, 64, 8, 3 * ins.k, seed=7)
    zero_c = np.zeros((64, 8), np.uint32)         # +0 in the accumulator is where the chain starts anyway
    assert np.array_equal(gemm(A, B, zero_c, instr=ins, kernel=ACC, beta=1.0), gemm(A, B, instr=ins))
    rng = np.random.default_rng(8)                 # small integers: every sum exact, so the order cannot show
    Ai, Bi = from_float("f16", rng.integers(-3, 4, (64, 48))), from_float("f16", rng.integers(-3, 4, (48, 8)))
    Ci = from_float("f16", rng.integers(-50, 50, (64, 8)))
    k16 = Kernel(out_format="f16")                 # C comes in f16 and widens to f32 exactly
    for extra in ({}, {"promotion": 2}, {"split_k": 3}):
        epi = gemm(Ai, Bi, Ci, instr=ins, kernel=k16.with_(**extra), beta=1.0)
        acc = gemm(Ai, Bi, Ci, instr=ins, kernel=k16.with_(c_accumulate=True, **extra), beta=1.0)
        assert np.array_equal(acc, epi), extra
        assert np.array_equal(to_float("f16", acc), to_float("f16", Ci) + Ai.view(np.float16).astype(float)
                              @ Bi.view(np.float16).astype(float))


@pytest.mark.parametrize("kw,message", [
    (dict(beta=0.0), "c_accumulate=True loads C into the accumulator, so it needs alpha=1 and beta=1"),
    (dict(beta=1.0, alpha=2.0), r"alpha=1 and beta=1 \(got alpha=2.0, beta=1.0\)"),
    (dict(beta=1.0, C=None), r"c_accumulate=True needs C \[M, N\] = \[64, 8\] in f32"),
    (dict(beta=1.0, C=np.zeros((8, 64), np.uint32)), r"C must have shape \[64, 8\]"),
])
def test_bad_use_refused(kw, message):
    ins = golden.lookup(*HGMMA)
    A, B = operands(ins, 64, 8, ins.k, seed=9)
    kw = {"C": np.zeros((64, 8), np.uint32), **kw}
    with pytest.raises(ValueError, match=message) as e:
        gemm(A, B, kw.pop("C"), instr=ins, kernel=ACC, **kw)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="c_accumulate must be True or False"):
        Kernel(c_accumulate=1)
