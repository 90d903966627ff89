"""golden.cover.amd: FDRDA and GFDRDA's round-down cover points, hand-made hits and directed closure."""

from __future__ import annotations

import numpy as np
import pytest

import golden
from golden.cover.amd import FDRDA_COVER_POINTS, GFDRDA_COVER_POINTS
from golden.cover.directed import solve
from golden.coverage import cover_points, measure
from golden.descriptors import ALGORITHMS
from golden.vectors import random_operands

BF16_MAX = float.fromhex("0x1.fep127")


@pytest.fixture(scope="module")
def fdrda():
    ins = golden.lookup("cdna3", "v_mfma_f32_32x32x8_bf16")     # one pass of 8 bf16 products
    assert ins.params.base == "FDRDA" and ins.k == 8 and ins.params.pass_size == 8
    return ins


@pytest.fixture(scope="module")
def gfdrda():
    ins = golden.lookup("cdna3", "v_mfma_f32_32x32x16_bf8_bf8")  # one pass of 16 bf8 products
    assert ins.params.base == "GFDRDA" and ins.k == 16 and ins.params.c_drop == 25
    return ins


def _hits(ins, products: dict, c: float, prefix: str = "") -> set:
    """Bins one dot-add hits: ``products`` ``{index: (a, b)}`` (others zero), c."""
    a, b = np.zeros(ins.k), np.zeros(ins.k)
    for i, (x, y) in products.items():
        a[i], b[i] = x, y
    cov = measure(ins, a[None], b[None], np.asarray([c]))
    return {k for k, v in cov.hits.items() if v and k.startswith(prefix)}


def test_descriptors_carry_the_points_and_their_disputed_rules(fdrda, gfdrda):
    assert cover_points(fdrda) is FDRDA_COVER_POINTS and cover_points(gfdrda) is GFDRDA_COVER_POINTS
    for base, points in (("FDRDA", FDRDA_COVER_POINTS), ("GFDRDA", GFDRDA_COVER_POINTS)):
        disputed = next(p for p in points if p.name == "disputed")
        assert tuple(b.name for b in disputed.bins) == ALGORITHMS[base].disputed


def test_round_down_of_a_negative_dot_part_is_its_own_bin(fdrda):
    # c = 2^32 sets e_max = 32: the dot part is floored to units of 2^0, and 1.5 loses half a unit
    assert _hits(fdrda, {0: (1.5, 1.0)}, 2.0 ** 32, "dot_floor") == {"dot_floor.dropped_positive"}
    assert _hits(fdrda, {0: (-1.5, 1.0)}, 2.0 ** 32, "dot_floor") == {"dot_floor.dropped_negative"}
    assert _hits(fdrda, {0: (-1.0, 1.0)}, 2.0 ** 32, "dot_floor") == {"dot_floor.exact"}
    assert _hits(fdrda, {0: (-1.5, 1.0)}, 2.0 ** 32, "c_vs_dot") == {"c_vs_dot.c_above"}


def test_c_floor_and_its_window(fdrda):
    one = {0: (1.0, 1.0)}                                           # e_dot = e_max = 0: c in units of 2^-24
    assert _hits(fdrda, one, 1.5 * 2.0 ** -24, "c_floor") == {"c_floor.dropped_positive"}
    assert _hits(fdrda, one, -1.5 * 2.0 ** -25, "c_floor") == {"c_floor.below_window_negative"}
    assert _hits(fdrda, one, 1.5 * 2.0 ** -25, "c_floor") == {"c_floor.below_window_positive"}
    assert _hits(fdrda, one, -0.75, "c_floor") == {"c_floor.exact"}
    assert _hits(fdrda, one, -0.75, "normalised") == {"normalised.below_e_max"}
    assert _hits(fdrda, {0: (1.5, 1.5)}, 0.0, "normalised") == {"normalised.above_e_max"}


def test_final_floor_clamp_and_zero_c_exponent(fdrda):
    # 1 + 2^-32 has 33 bits; the final floor keeps 32 (31 fraction bits): away from zero when negative
    assert _hits(fdrda, {0: (-(2.0 ** -16), 2.0 ** -16)}, -1.0, "final_floor") == {"final_floor.dropped_negative"}
    assert _hits(fdrda, {0: (2.0 ** -16, 2.0 ** -16)}, 1.0, "final_floor") == {"final_floor.dropped_positive"}
    assert _hits(fdrda, {}, 2.0 ** -140, "normalised") == {"normalised.clamped"}
    assert _hits(fdrda, {0: (2.0 ** -64, 2.0 ** -64)}, 0.0, "c_vs_dot") == {"c_vs_dot.zero_c_above"}


def test_product_alignment_truncates_and_loses_products(fdrda):
    assert _hits(fdrda, {0: (1.0, 1.0), 1: (1.5, 2.0 ** -24)}, 0.0, "product_") == {"product_alignment.truncated"}
    assert _hits(fdrda, {0: (1.0, 1.0), 1: (1.0, 2.0 ** -25)}, 0.0, "product_") == {"product_alignment.vanished"}


def test_products_that_overflow_and_the_disputed_infinity(fdrda):
    big = (BF16_MAX, BF16_MAX)
    assert _hits(fdrda, {0: big}, 0.0, "product_overflow") == {"product_overflow.overflow"}
    assert _hits(fdrda, {0: big}, np.inf, "product_overflow") == {"product_overflow.input_inf_same_sign"}
    assert _hits(fdrda, {0: big}, -np.inf, "disputed") == {"disputed.inf_meets_overflow"}
    assert _hits(fdrda, {0: big, 1: (-np.inf, 1.0)}, 0.0, "disputed") == {"disputed.inf_meets_overflow"}
    assert _hits(fdrda, {0: big, 1: (-np.inf, 1.0), 2: (np.nan, 1.0)}, 0.0, "disputed") == set()


def test_gfdrda_merge_small_c_drop_and_nonfinite_c(gfdrda):
    even_big = {0: (1.0, 1.0), 1: (-1.5 * 2.0 ** -12, 2.0 ** -12)}   # the odd set: -1.5 units of 2^-24
    assert _hits(gfdrda, even_big, 0.0, "merge_") == {"merge_floor.dropped_negative", "merge_sets.even_above"}
    assert _hits(gfdrda, {1: (1.0, 1.0), 3: (0.5, 1.0)}, 0.0, "merge_") == {"merge_sets.odd_only"}
    one = {0: (1.0, 1.0)}
    assert _hits(gfdrda, one, 1.5 * 2.0 ** -25, "c_drop") == {"c_drop.kept_at_edge"}
    assert _hits(gfdrda, one, -1.5 * 2.0 ** -26, "c_drop") == {"c_drop.dropped_at_edge", "c_drop.dropped_negative"}
    assert _hits(gfdrda, one, np.nan, "c_drop") == {"c_drop.nonfinite_kept"}
    assert _hits(gfdrda, {0: (2.0 ** 15, 2.0 ** 10)}, np.nan, "disputed") == {"disputed.nonfinite_small_c"}
    assert _hits(gfdrda, {0: (2.0 ** 15, 2.0 ** 9)}, np.nan, "disputed") == set()     # e_dot 24: not dropped


def test_unreachable_bins_per_instruction_say_why(fdrda, gfdrda):
    f16 = golden.lookup("cdna3", "v_mfma_f32_32x32x8_f16")
    cov = golden.coverage.empty(f16)
    un, na = cov.unreachable, cov.inapplicable              # a point no bin of which is reachable: inapplicable
    assert "stay below 2^128" in na["product_overflow"] and "disputed" in na and "disputed.nonfinite_small_c" not in un
    assert na["c_drop"] == "no small-c drop (c_drop is None)" and "c_drop.dropped_negative" not in cov.bins
    assert "c_vs_dot.zero_c_above" in un and "c_vs_dot.zero_c_above" not in golden.coverage.empty(fdrda).unreachable
    fp8 = golden.lookup("cdna3", "v_mfma_f32_32x32x16_fp8_fp8")
    assert "c_drop=25" in golden.coverage.empty(fp8).unreachable["disputed.nonfinite_small_c"]
    assert "disputed.nonfinite_small_c" not in golden.coverage.empty(gfdrda).unreachable


@pytest.mark.parametrize("arch,name", [("cdna3", "v_mfma_f32_32x32x8_bf16"), ("cdna3", "v_mfma_f32_32x32x16_bf8_bf8"),
                                       ("cdna3", "v_mfma_f32_16x16x8_xf32"), ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8"),
                                       ("cdna3", "v_mfma_f32_32x32x8_f16")])
def test_directed_vectors_close_every_reachable_bin(arch, name):
    ins = golden.lookup(arch, name)
    sol = solve(ins, np.random.default_rng(5), seconds=60)      # it returns once closed
    assert sol.coverage.closed(), sol.coverage.missed()
    assert all("." in s for s in sol.source)                   # constructions did it, not the search
    rng = np.random.default_rng(6)
    for kind in ("disputed", "structured", "bits"):              # nothing reaches an unreachable bin
        cov = measure(ins, *random_operands(ins, 512, rng, kind)[:3])
        assert not [b for b in cov.unreachable if cov.hits[b]]
