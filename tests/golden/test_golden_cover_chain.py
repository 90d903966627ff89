"""golden.cover.chain: the intermediate passes' rounding, on chained instructions of every chained algorithm."""

from __future__ import annotations

import numpy as np
import pytest

import golden
from golden.cover.chain import CHAIN_POINTS, ONE_PASS, _is_tie, pass_count
from golden.cover.directed import solve
from golden.coverage import measure
from golden.formats import get_format
from golden.vectors import random_operands

# a chained instruction of each chained algorithm in the catalog (FDA also with F exact, the F=13
# "E8M13" result, two products per pass, and the compiled path that adds c after the chain)
CHAINED = [("cdna3", "v_mfma_f32_16x16x8_xf32"), ("cdna3", "v_mfma_f32_16x16x16_f16"),
           ("cdna3", "v_mfma_f32_16x16x32_bf8_bf8"), ("ampere", "HMMA.16816.F16"),
           ("cdna1", "v_mfma_f32_16x16x16f16"), ("cdna1", "v_mfma_f32_16x16x8bf16"),
           ("ada", "QMMA.16832.F32.E4M3.E4M3"), ("blackwell", "MMA.16832.F32.E4M3.E4M3")]


def _lookup(arch, name):
    return golden.lookup(arch, name)


def _measure(ins, a, b, c):
    """One dot-add's coverage (values exact in the formats)."""
    return measure(ins, np.asarray(a, np.float64)[None], np.asarray(b, np.float64)[None], np.asarray([c], np.float64))


def _hits(ins, a, b, c) -> set:
    cov = _measure(ins, a, b, c)
    return {k for k, v in cov.hits.items() if v and k.startswith("intermediate")}


@pytest.mark.parametrize("arch,name", [("cdna3", "v_mfma_f32_32x32x8_f16"), ("hopper", "HGMMA.64xNx16.F32")])
def test_unchained_instructions_have_no_intermediate_bin(arch, name):
    ins = _lookup(arch, name)
    assert pass_count(ins) == 1
    for p in CHAIN_POINTS:
        assert p.unreachable(ins) == {b.name: ONE_PASS for b in p.bins}
        assert p.directed(ins, p.bins[0].name, np.random.default_rng(0), 4) is None


def test_cofdrda_first_pass_tie_exact_and_classes():
    ins = _lookup("cdna3", "v_mfma_f32_16x16x8_xf32")          # two passes of 4 tf32 products
    assert pass_count(ins) == 2
    one = np.zeros(8)
    one[:2] = 1.0
    ones = np.ones(8)
    # 1 + 1 + 2^-23 = 2 + 2^-23: half-way between 2 and 2 + 2^-22
    assert _hits(ins, one, ones, 2.0 ** -23) == {"intermediate.normal", "intermediate_rounding.tie",
                                                 "intermediate_rounding.inexact"}
    assert _hits(ins, one, ones, 0.0) == {"intermediate.normal", "intermediate_rounding.exact"}
    assert _hits(ins, np.zeros(8), ones, 2.0 ** -140) == {"intermediate.subnormal", "intermediate_rounding.exact"}
    nan = one.copy()
    nan[0] = np.nan
    assert _hits(ins, nan, ones, 0.0) == {"intermediate.nan"}
    assert _hits(ins, one, ones, np.inf) == {"intermediate.infinite"}


def test_an_intermediate_overflow_is_not_an_infinite_input():
    ins = _lookup("cdna3", "v_mfma_f32_16x16x8_xf32")
    a, b = np.zeros(8), np.zeros(8)
    a[:4], b[:4] = 2.0 ** 63, 1.5 * 2.0 ** 63                  # 1.5 * 2^126 each: no product overflows
    hits = _hits(ins, a, b, float(np.finfo(np.float32).max))
    assert "intermediate.overflow" in hits and "intermediate.infinite" not in hits
    assert "intermediate_rounding.inexact" in hits


def test_exact_f_passes_are_summed_exactly_here():
    ins = _lookup("cdna1", "v_mfma_f32_16x16x16f16")           # FDA, F exact, four passes of 4
    assert pass_count(ins) == 4 and ins.params.F == "exact"
    a, b = np.zeros(16), np.ones(16)
    a[0] = 1.0
    exact = _hits(ins, a, b, 1.0 + 2.0 ** -22)                 # 2 + 2^-22: an f32
    assert "intermediate_rounding.exact" in exact and "intermediate_rounding.inexact" not in exact
    assert "intermediate_rounding.tie" in _hits(ins, a, b, 1.0 + 2.0 ** -23)     # 2 + 2^-23: half-way
    a[1] = 2.0 ** -24
    hits = _hits(ins, a, b, 2.0 ** 100)                        # wider than float64: inexact, never a tie
    assert "intermediate_rounding.inexact" in hits and "intermediate_rounding.tie" not in hits


def test_c_added_after_the_chain_makes_the_last_pass_intermediate():
    ins = _lookup("blackwell", "MMA.16832.F32.E4M3.E4M3")
    assert ins.params.c_last and pass_count(ins) == 2
    a, b = np.zeros(32), np.ones(32)
    last = np.flatnonzero(np.arange(32) % 4 >= 2)[0]           # a product of the second pass
    a[last] = np.nan
    assert "intermediate.nan" in _hits(ins, a, b, 1.0)


def test_tie_detection_uses_the_format_last_place():
    f32 = get_format("f32")
    v = np.array([1 + 2.0 ** -24, 1 + 2.0 ** -23, 1 + 3 * 2.0 ** -25, 2.0 ** -150, 3 * 2.0 ** -150, 2.0 ** -149])
    assert _is_tie(v, f32, 23).tolist() == [True, False, False, True, True, False]


@pytest.mark.parametrize("arch,name", CHAINED)
def test_directed_vectors_close_the_chain_points(arch, name):
    ins = _lookup(arch, name)
    sol = solve(ins, np.random.default_rng(3), seconds=60, points=CHAIN_POINTS)     # it returns once closed
    assert sol.coverage.closed(), sol.coverage.missed()
    assert all("." in s for s in sol.source)                   # constructions did it, not the search
    rng = np.random.default_rng(4)
    for kind in ("disputed", "structured"):                    # and nothing reaches an unreachable bin
        cov = measure(ins, *random_operands(ins, 512, rng, kind)[:3])
        assert not [b for b in cov.unreachable if cov.hits[b]]


def test_unreachable_bins_of_the_compiled_fp8_path_say_why():
    ins = _lookup("blackwell", "MMA.16832.F32.E4M3.E4M3")
    why = CHAIN_POINTS[0].unreachable(ins)
    assert set(why) == {"subnormal", "overflow", "infinite"}
    assert "2^-18" in why["subnormal"]
