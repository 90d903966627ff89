"""golden.cover.scales and golden.cover.gdfs: block scales at their extremes, GDFS's group sums and
alignment, hand-made vectors on named bins, each construction on its bin, and the solver's closure."""

from __future__ import annotations

import numpy as np
import pytest

import golden
from golden.cover.directed import solve
from golden.cover.gdfs import GDFS_OWN_POINTS
from golden.cover.scales import NO_SCALES, SCALE_POINTS
from golden.coverage import cover_points, empty, row_hits
from golden.formats import from_float


@pytest.fixture(scope="module")
def scaled_fda():
    ins = golden.lookup("blackwell", "UTCQMMA.SF.F32.E4M3.E4M3.E8")
    assert ins.params.base == "FDA" and ins.scale_format == "ue8m0" and ins.block_size == 32
    return ins


@pytest.fixture(scope="module")
def mxf4():
    ins = golden.lookup("blackwell", "UTCOMMA.MXF4.E8")
    assert ins.params.base == "GDFS" and ins.scale_format == "ue8m0" and ins.params.F == 35
    return ins


@pytest.fixture(scope="module")
def nvf4():
    ins = golden.lookup("blackwell", "UTCOMMA.4X")
    assert ins.params.base == "GDFS" and ins.scale_format == "ue4m3" and ins.block_size == 16
    return ins


def _one_product(ins, sa_bits, sb_bits, a_value=1.0, c_value=0.0):
    """One dot-add: product 0 is ``a_value * 1``, the rest zero; every block's scales ``sa_bits, sb_bits``."""
    fa, fb, fc = ins.formats[:3]
    a, b = np.zeros((1, ins.k), np.uint64), np.zeros((1, ins.k), np.uint64)
    a[0, 0], b[0, 0] = from_float(fa, a_value), from_float(fb, 1.0)
    blocks = ins.k // ins.block_size
    sa, sb = np.full((1, blocks), sa_bits, np.uint64), np.full((1, blocks), sb_bits, np.uint64)
    return a, b, np.asarray([from_float(fc, c_value)], np.uint64), sa, sb


def _hit(hits, *bins):
    return {b for b in bins if hits[b][0]}


def test_unscaled_instructions_have_every_scale_bin_unreachable():
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    cov = empty(ins)
    scale_bins = [f"{p.name}.{b.name}" for p in SCALE_POINTS for b in p.bins]
    assert scale_bins and not set(scale_bins) & set(cov.bins)                    # not measured, nor counted
    assert {p.name: NO_SCALES for p in SCALE_POINTS}.items() <= cov.inapplicable.items()


def test_smallest_scales_on_one_product_underflow_the_term(scaled_fda):
    hits = row_hits(scaled_fda, *_one_product(scaled_fda, 0x00, 0x00))        # 2^-127 * 2^-127
    assert _hit(hits, "scale_a.smallest", "scale_b.smallest", "scale_pair.smallest*smallest",
                "scaled_term.underflow", "scale_a.largest", "scaled_term.overflow") == {
        "scale_a.smallest", "scale_b.smallest", "scale_pair.smallest*smallest", "scaled_term.underflow"}


def test_largest_scales_overflow_and_a_nan_scale_gives_nan(scaled_fda):
    hits = row_hits(scaled_fda, *_one_product(scaled_fda, 0xFE, 0xFE))        # 2^127 * 2^127
    assert _hit(hits, "scale_pair.largest*largest", "scaled_term.overflow", "output.infinite", "scale_a.nan") == {
        "scale_pair.largest*largest", "scaled_term.overflow", "output.infinite"}
    hits = row_hits(scaled_fda, *_one_product(scaled_fda, 0xFF, 0x7F))        # scale_a NaN
    assert _hit(hits, "scale_a.nan", "scale_b.nan", "output.nan") == {"scale_a.nan", "output.nan"}


def test_an_extreme_scale_on_a_block_of_zeros_is_not_hit(scaled_fda):
    a, b, c, sa, sb = _one_product(scaled_fda, 0x7F, 0x7F)
    sa[0, 0] = 0x00
    a[:] = 0
    assert not row_hits(scaled_fda, a, b, c, sa, sb)["scale_a.smallest"][0]


def test_ue4m3_has_a_zero_scale_and_no_out_of_range_terms(nvf4):
    un = empty(nvf4).unreachable
    assert "scale_a.zero" not in un and "scale_a.nan" not in un
    assert "below the output's overflow threshold" in un["scaled_term.overflow"]
    assert "scaled_term.underflow" in un
    assert "ue8m0 has no zero" in empty(golden.lookup("blackwell", "UTCOMMA.MXF4.E8")).unreachable["scale_a.zero"]


def test_gdfs_group_that_cancels_and_a_term_shifted_exactly_f(mxf4):
    a, b, c, sa, sb = _one_product(mxf4, 127, 127, a_value=3.0)
    a[0, 1], b[0, 1] = from_float("e2m1", -3.0), from_float("e2m1", 1.0)     # group 0: 3 - 3
    hits = row_hits(mxf4, a, b, c, sa, sb)
    assert _hit(hits, "group_sum.cancelled", "group_sum.all_zero") == {"group_sum.cancelled", "group_sum.all_zero"}
    a, b, c, sa, sb = _one_product(mxf4, 127, 127, a_value=1.0, c_value=2.0 ** 35)   # term at 2^0, c at 2^35
    hits = row_hits(mxf4, a, b, c, sa, sb)
    assert _hit(hits, "term_shift.F", "term_shift.F-1", "term_shift.F+1", "c_vs_terms.c_dominant",
                "discarded.none") == {"term_shift.F", "c_vs_terms.c_dominant", "discarded.none"}


def test_gdfs_largest_group_sum(mxf4):
    a = np.full((1, mxf4.k), from_float("e2m1", 6.0), np.uint64)
    _, _, c, sa, sb = _one_product(mxf4, 127, 127)
    hits = row_hits(mxf4, a, a.copy(), c, sa, sb)
    assert hits["group_sum.largest"][0] and not hits["group_sum.smallest"][0]


@pytest.mark.parametrize("which", ["scaled_fda", "mxf4", "nvf4"])
def test_each_construction_hits_its_bin(which, request):
    ins = request.getfixturevalue(which)
    rng = np.random.default_rng(3)
    points = SCALE_POINTS + (GDFS_OWN_POINTS if ins.params.base == "GDFS" else ())
    for p in points:
        unreachable = p.unreachable(ins)
        for b in p.bins:
            if b.name not in unreachable:
                ops = p.directed(ins, b.name, rng, 8)
                assert row_hits(ins, *ops, points=[p])[f"{p.name}.{b.name}"].any(), (p.name, b.name)


@pytest.mark.parametrize("which", ["scaled_fda", "mxf4", "nvf4"])
def test_solve_closes_every_reachable_bin(which, request):
    ins = request.getfixturevalue(which)
    sol = solve(ins, np.random.default_rng(0), seconds=60)      # it returns once closed
    assert sol.coverage.closed(), sol.coverage.missed()
    assert all("." in s for s in sol.source)                   # constructions did it, not the search
    assert cover_points(ins)[0].name in {"group_sum", "shift"}
