"""golden.coverage and golden.cover: the model, hand-made vectors in named bins, and the directed solver
closing every reachable bin of one instruction per FDA family."""

from __future__ import annotations

import time

import numpy as np
import pytest

import golden
from golden.cover.directed import solve
from golden.cover.fda import FDA_COVER_POINTS
from golden.coverage import Coverage, cover_points, measure

F32_MAX = np.float32(np.finfo(np.float32).max)


@pytest.fixture(scope="module")
def ins():
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    assert ins.params.base == "FDA" and ins.params.F == 25 and ins.params.out_rounding == "RZ"
    return ins


@pytest.fixture(scope="module")
def f16_out():
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F16")
    assert ins.params.out_rounding == "RNE" and ins.d_format == "f16"
    return ins


def _normal(n, k, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, k)).astype(np.float16), rng.standard_normal((n, k)).astype(np.float16),
            rng.standard_normal(n).astype(np.float32))


def _row(ins, products=(), c=0.0, c_dtype=np.float32):
    """One dot-add: ``products`` as (a, b) pairs in the first columns, zeros after."""
    a, b = np.zeros(ins.k, np.float16), np.zeros(ins.k, np.float16)
    for i, (x, y) in enumerate(products):
        a[i], b[i] = x, y
    return a, b, c_dtype(c)


def _hits(ins, *row):
    return {name for name, n in measure(ins, *row).hits.items() if n}


# --------------------------------------------------------------------------- the model

def test_fda_descriptor_carries_its_cover_points(ins):
    assert cover_points(ins) is FDA_COVER_POINTS is golden.descriptors.part("FDA", golden.descriptors.Part.COVER)
    names = [p.name for p in FDA_COVER_POINTS]
    for want in ("shift", "discarded", "c_vs_products", "carry", "cancellation", "rounding", "output",
                 "special_operands", "special_cross"):
        assert want in names


def test_random_normal_vectors_hit_inside_but_not_every_bin(ins):
    cov = measure(ins, *_normal(20, ins.k))
    assert cov.hits["shift.inside"] == 20 and cov.dot_adds == cov.offered == 20
    assert cov.hits["output.normal"] == 20
    for hole in ("shift.F", "output.infinite", "output.max_finite", "special_cross.c_inf*products_nan"):
        assert hole in cov.missed()


def test_a_sample_is_part_of_the_result(ins):
    cov = measure(ins, *_normal(30, ins.k), sample=5)
    assert (cov.dot_adds, cov.offered) == (5, 30)
    assert sum(cov.hits[b] for b in cov.bins if b.startswith("output.") and b != "output.max_finite") == 5


def test_merge_adds_counts(ins):
    one, two = measure(ins, *_normal(4, ins.k, 1)), measure(ins, *_normal(6, ins.k, 2))
    both = one.merge(two)
    assert both.hits == {b: one.hits[b] + two.hits[b] for b in one.bins}
    assert (both.dot_adds, both.offered) == (10, 10)
    with pytest.raises(ValueError, match="cannot merge"):
        one.merge(Coverage.empty("other", FDA_COVER_POINTS))


def test_json_round_trip(ins):
    cov = measure(ins, *_normal(3, ins.k), sample=2)
    back = Coverage.from_json(cov.to_json())
    assert back == cov and back.summary() == cov.summary()


def test_summary_line(ins):
    cov = measure(ins, *_normal(10, ins.k))
    reachable, unreachable = len(cov.bins) - len(cov.unreachable), len(cov.unreachable)
    assert unreachable > 0 and len(cov.hit()) < reachable
    assert cov.summary() == f"coverage: {len(cov.hit())} of {reachable} reachable bins hit ({unreachable} unreachable)"


def test_unreachable_bins_name_a_reason(ins):
    """e4m3 has no infinities; HGMMA's f32 sum cannot hold the half-ulp of f32's smallest binade."""
    fp8 = golden.lookup("ada", "QMMA.16832.F32.E4M3.E4M3")
    cov = golden.coverage.empty(fp8)
    assert "no infinities" in cov.unreachable["special_operands.+inf_in_a"]
    assert "special_operands.nan_in_a" not in cov.unreachable
    assert "special_cross.c_inf*products_nan" not in cov.unreachable       # e4m3 has NaN
    why = golden.coverage.empty(ins).unreachable["rounding.tie_at_min_exponent*positive"]
    assert "2^-149" in why and "2^-150" in why
    skipped = golden.coverage.empty(golden.lookup("cdna1", "v_mfma_f32_32x32x8f16")).inapplicable
    assert "F is exact" in skipped["shift"] and "F is exact" in skipped["carry"]


# --------------------------------------------------------------------------- hand-made vectors

def test_a_handcrafted_vector_hits_shift_exactly_F(ins):
    got = _hits(ins, *_row(ins, [(1.0, 1.0), (2.0 ** -12, 2.0 ** -13)]))    # exponents 0 and -25
    assert {"shift.F", "discarded.none"} <= got and not got & {"shift.F-1", "shift.F+1", "discarded.nonzero"}


def test_carry_and_cancellation(ins):
    assert "carry.one_bit" in _hits(ins, *_row(ins, [(1.5, 1.0), (1.5, 1.0)]))         # 3 = 1.5 * 2^1
    assert "carry.two_or_more_bits" in _hits(ins, *_row(ins, [(1.5, 1.0)] * 3))       # 4.5
    assert "cancellation.total" in _hits(ins, *_row(ins, [(1.0, 1.0), (-1.0, 1.0)]))
    assert "cancellation.deep" in _hits(ins, *_row(ins, [(1.0, 1.0)], c=-(1 - 2.0 ** -10)))
    assert {"cancellation.none", "carry.none"} <= _hits(ins, *_row(ins, [(1.0, 1.0)]))


def test_rounding_positions_by_sign(ins):
    """1 + 2^-24 is a tie at f32's 23 fraction bits; 1 + 2^-25 below half; 1 + 3 * 2^-25 above."""
    tie = (2.0 ** -12, 2.0 ** -12)
    assert "rounding.tie*positive" in _hits(ins, *_row(ins, [tie], c=1.0))
    assert "rounding.tie*negative" in _hits(ins, *_row(ins, [(-tie[0], tie[1])], c=-1.0))
    assert "rounding.below_half*positive" in _hits(ins, *_row(ins, [(2.0 ** -12, 2.0 ** -13)], c=1.0))
    assert "rounding.above_half*positive" in _hits(ins, *_row(ins, [(3 * 2.0 ** -13, 2.0 ** -12)], c=1.0))
    assert "rounding.exact*positive" in _hits(ins, *_row(ins, [(1.0, 1.0)]))


def test_tie_at_the_minimum_output_exponent(f16_out):
    """2^-14 + 2^-25 is a tie at f16's smallest normal binade (ulp 2^-24)."""
    row = _row(f16_out, [(2.0 ** -7, 2.0 ** -7), (2.0 ** -12, 2.0 ** -13)], c_dtype=np.float16)
    got = _hits(f16_out, *row)
    assert {"rounding.tie*positive", "rounding.tie_at_min_exponent*positive"} <= got
    normal_tie = _row(f16_out, [(1.0, 1.0), (2.0 ** -5, 2.0 ** -6)], c_dtype=np.float16)     # 1 + 2^-11
    got = _hits(f16_out, *normal_tie)
    assert "rounding.tie*positive" in got and "rounding.tie_at_min_exponent*positive" not in got


def test_overflow_boundary_and_specials(ins):
    assert "output.max_finite" in _hits(ins, *_row(ins, [(1.0, 1.0)], c=-F32_MAX))       # RZ keeps the max
    got = _hits(ins, *_row(ins, [(np.nan, 1.0)], c=np.inf))
    assert {"special_cross.c_inf*products_nan", "special_operands.nan_in_a", "special_operands.+inf_in_c",
            "output.nan"} <= got
    got = _hits(ins, *_row(ins, [(1.0, -np.inf), (0.0, np.inf)]))                      # inf * 0 is NaN
    assert {"special_cross.c_finite*products_nan", "special_operands.-inf_in_b"} <= got


# --------------------------------------------------------------------------- the directed solver closes

@pytest.mark.parametrize("arch, name", [
    ("hopper", "HGMMA.64xNx16.F32"),                 # RZ, f32 out
    ("blackwell", "UTCQMMA.SF.F32.E4M3.E4M3.E8"),    # block-scaled FDA
    ("ampere", "HMMA.16816.F16"),                    # a chain of FDA passes, RNE, f16 out
])
def test_solve_closes_every_reachable_bin(arch, name):
    ins = golden.lookup(arch, name)
    start = time.monotonic()
    sol = solve(ins, np.random.default_rng(3), seconds=20)
    assert sol.coverage.closed(), sol.coverage.missed()
    assert time.monotonic() - start < 15
    assert ins.params.base == "FDA"
    # every row kept was measured: measuring the solution again closes the same bins
    again = measure(ins, *sol.operands)
    assert again.closed() and again.dot_adds == sol.rows
