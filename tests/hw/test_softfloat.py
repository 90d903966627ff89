"""The fused multiply-add (golden ``fma_f64``/``fma_f32`` and the RTL ``hw.fma.FusedMultiplyAdd``)
against Berkeley SoftFloat 3's ``f64_mulAdd``/``f32_mulAdd``, through the ``softfloatpy`` binding.

SoftFloat is the independent IEEE 754 reference issue 4 names; ``tests/support/fma_oracle.py`` (exact
rationals) is the other.  Round to nearest even, SoftFloat's default.  SoftFloat propagates NaN
payloads (x86 rules) while the units return the canonical quiet NaN, so where SoftFloat gives a
NaN the test asks for a NaN, any payload.  Skipped where ``softfloatpy`` does not install.
"""

from __future__ import annotations

import numpy as np
import pytest
from amaranth_sim import run_stage

import golden.vectors
from golden.fma import fma_f32, fma_f64
from hw.fma import FusedMultiplyAdd
from tests.hw.test_hw_sfma_gps import is_nan, targeted_fma

sf = pytest.importorskip("softfloatpy", reason="Berkeley SoftFloat binding (softfloatpy) not installed")

_SF = {"f64": (sf.Float64, sf.f64_mul_add, 8), "f32": (sf.Float32, sf.f32_mul_add, 4)}


def softfloat_fma(fmt: str, a, b, c) -> np.ndarray:
    """SoftFloat's fused multiply-add on bit patterns, one call per element."""
    cls, mul_add, nbytes = _SF[fmt]
    sf.set_rounding_mode(sf.RoundingMode.NEAR_EVEN)

    def f(x):
        return cls.from_bytes(int(x).to_bytes(nbytes, "big"))
    return np.array([int.from_bytes(mul_add(f(x), f(y), f(z)).to_bytes(), "big") for x, y, z in zip(a, b, c)],
                    np.uint64)


def operands(fmt: str, n: int, seed: int):
    """Targeted hard cases (ties, sticky bits, subnormal and overflow boundaries, cancellation,
    signed zeros, specials) plus uniform bit patterns and random normal values."""
    rng = np.random.default_rng(seed)
    a, b, c = targeted_fma(fmt, n // 10, rng)
    for kind in (golden.vectors.random_bits, golden.vectors.random_values):
        a, b, c = (np.concatenate([x, kind(fmt, n, rng)]) for x in (a, b, c))
    return a, b, c


def assert_same(fmt, got, want, a, b, c, who):
    nan = is_nan(fmt, want)
    assert np.array_equal(is_nan(fmt, got), nan), f"{who}: NaN where SoftFloat has none, or the reverse"
    bad = np.nonzero((got != want) & ~nan)[0]
    assert not len(bad), (f"{who}: {len(bad)} of {len(a)} differ from SoftFloat; first: a={int(a[bad[0]]):#x} "
                          f"b={int(b[bad[0]]):#x} c={int(c[bad[0]]):#x}: {int(got[bad[0]]):#x}, "
                          f"SoftFloat {int(want[bad[0]]):#x}")


def test_softfloat_binding_sanity():
    one, two, three = (int(np.float64(v).view(np.uint64)) for v in (1.0, 2.0, 3.0))
    assert softfloat_fma("f64", [two], [three], [one])[0] == int(np.float64(7.0).view(np.uint64))
    # 1 + 2^-24 times 1 - 2^-24 plus -1: -2^-48 exactly, which a separate multiply would round away
    x, y, m1 = (int(np.float32(v).view(np.uint32)) for v in (1 + 2.0 ** -23, 1 - 2.0 ** -23, -1.0))
    assert softfloat_fma("f32", [x], [y], [m1])[0] == int(np.float32(-(2.0 ** -46)).view(np.uint32))


@pytest.mark.parametrize("fmt,fma", [("f64", fma_f64), ("f32", fma_f32)])
def test_golden_fma_matches_softfloat(fmt, fma):
    a, b, c = operands(fmt, 40_000, seed={"f64": 21, "f32": 22}[fmt])
    assert_same(fmt, fma(a, b, c), softfloat_fma(fmt, a, b, c), a, b, c, f"golden fma_{fmt}")


@pytest.mark.parametrize("fmt", ["f64", "f32"])
def test_rtl_fma_unit_matches_softfloat(fmt):
    a, b, c = operands(fmt, 400, seed={"f64": 31, "f32": 32}[fmt])
    got = run_stage(FusedMultiplyAdd(fmt), {"a": a, "b": b, "c": c}, len(a))
    assert_same(fmt, got, softfloat_fma(fmt, a, b, c), a, b, c, f"RTL FusedMultiplyAdd({fmt!r})")
