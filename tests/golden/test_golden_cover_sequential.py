"""golden.cover.sequential: SFMA's steps and GPS's groups, accumulation and flushes; exact ties,
hand-made vectors on named bins, each construction on its bin, and the solver's closure."""

from __future__ import annotations

import numpy as np
import pytest

import golden
from golden.cover.directed import solve
from golden.cover.sequential import GPS_ACCUMULATE, GPS_FLUSH, GPS_GROUP, SFMA_STEPS, fma_ties
from golden.coverage import empty, row_hits
from golden.formats import get_format

F32, F64 = get_format("f32"), get_format("f64")
GPS_OWN = (GPS_GROUP, GPS_ACCUMULATE, GPS_FLUSH)
# the result of GPS is flushed at every addition: COMMON's output.subnormal can never be hit there
GPS_COMMON_HOLES = {"output.subnormal"}


@pytest.fixture(scope="module")
def dmma():
    ins = golden.lookup("hopper", "DMMA.16x8x16")
    assert ins.params.base == "SFMA" and ins.k == 16 and ins.formats[3].name == "f64"
    return ins


@pytest.fixture(scope="module")
def sfma32():
    ins = golden.lookup("cdna1", "v_mfma_f32_16x16x4f32")
    assert ins.params.base == "SFMA" and ins.k == 4 and ins.formats[3].name == "f32"
    return ins


@pytest.fixture(scope="module")
def gps16():
    ins = golden.lookup("cdna2", "v_mfma_f32_16x16x16_f16")
    assert ins.params.base == "GPS" and ins.params.group == 4 and ins.k == 16
    return ins


@pytest.fixture(scope="module")
def gps_bf16():
    ins = golden.lookup("cdna2", "v_mfma_f32_32x32x4bf16")
    assert ins.params.base == "GPS" and ins.params.group == 2 and ins.formats[0].name == "bf16"
    return ins


def _ties(fd, a, b, d, r):
    return fma_ties(fd, *(np.asarray([x], np.float64) for x in (a, b, d, r)))[0]


def test_fma_ties_are_exact_in_f32():
    assert _ties(F32, 2.0 ** -24, 1.0, 1.0, 1.0)                           # 1 + half an ulp: to even, 1
    assert _ties(F32, 3 * 2.0 ** -24, 1.0, 1.0, 1.0 + 2.0 ** -22)          # 1 + 3/2 ulp: to even, up
    assert not _ties(F32, 2.0 ** -24 + 2.0 ** -60, 1.0, 1.0, 1.0 + 2.0 ** -23)
    assert not _ties(F32, 1.0, 1.0, 1.0, 2.0)                              # exact
    assert _ties(F32, 2.0 ** -150, 1.0, 0.0, 0.0)                          # half the smallest subnormal


def test_fma_ties_are_exact_in_f64_at_the_range_ends():
    assert _ties(F64, 2.0 ** -53, 1.0, 1.0, 1.0)
    assert not _ties(F64, 2.0 ** -53 + 2.0 ** -100, 1.0, 1.0, 1.0 + 2.0 ** -52)
    assert _ties(F64, 2.0 ** -1074, 0.5, 0.0, 0.0)                         # 2^-1075: between 0 and 2^-1074
    assert _ties(F64, F64.max_finite, 1.0, 2.0 ** 970, np.inf)             # max + half an ulp rounds to inf
    assert not _ties(F64, F64.max_finite, 1.0, 2.0 ** 969, F64.max_finite)


def _f32_bits(*values):
    return np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)


def test_sfma_overflow_then_the_opposite_infinity(sfma32):
    big = F32.max_finite
    a, b = _f32_bits(big, 1.0, -np.inf, 0.0), _f32_bits(2.0, 1.0, 1.0, 0.0)
    hits = row_hits(sfma32, a[None], b[None], _f32_bits(0.0))
    assert {k for k in ("steps.overflow", "steps.inf_then_opposite_inf", "steps.inf_then_nan", "steps.tie",
                        "output.nan") if hits[k][0]} == {"steps.overflow", "steps.inf_then_opposite_inf",
                                                         "output.nan"}


def test_sfma_cancellation_and_a_subnormal_step(sfma32):
    a, b = _f32_bits(-1.5, 2.0 ** -100, 0.0, 0.0), _f32_bits(1.0, 2.0 ** -30, 0.0, 0.0)
    hits = row_hits(sfma32, a[None], b[None], _f32_bits(1.5))
    assert hits["steps.cancelled"][0] and hits["steps.subnormal"][0] and not hits["steps.overflow"][0]


def test_sfma_k1_has_no_later_step():
    un = empty(golden.lookup("cdna1", "v_mfma_f32_4x4x1f32")).unreachable
    assert "K=1" in un["steps.inf_then_nan"] and "steps.tie" not in un


def _f16(*values):
    return np.asarray(values, np.float16).view(np.uint16).astype(np.uint64)


def test_gps_flush_of_a_subnormal_input_changes_the_sign(gps16):
    a, b = np.zeros(gps16.k), np.zeros(gps16.k)
    a[0], b[0] = -(2.0 ** -20), 2.0 ** 10                     # -2^-10, but a is subnormal: read as +0
    a[5] = b[5] = 2.0 ** -14                                 # +2^-28
    hits = row_hits(gps16, _f16(*a)[None], _f16(*b)[None], _f32_bits(0.0))
    assert hits["flush.input"][0] and hits["flush.sign"][0] and not hits["flush.c"][0]
    a[0] = -(2.0 ** -14)                                     # normal: no flush, no sign change
    hits = row_hits(gps16, _f16(*a)[None], _f16(*b)[None], _f32_bits(0.0))
    assert not hits["flush.input"][0] and not hits["flush.sign"][0]


def test_gps_accumulation_tie_and_group_cancellation(gps16):
    a, b = np.zeros(gps16.k), np.zeros(gps16.k)
    a[4], b[4] = 2.0 ** -12, 2.0 ** -12                       # group 1's sum: 2^-24, half of 1's ulp
    a[8], a[9], b[8], b[9] = 3.0, -3.0, 1.0, 1.0              # group 2: 3 - 3
    hits = row_hits(gps16, _f16(*a)[None], _f16(*b)[None], _f32_bits(1.0))
    assert hits["accumulate.tie"][0] and hits["group.cancelled"][0] and not hits["accumulate.cancelled"][0]


def test_gps_f16_cannot_flush_sums_but_bf16_can(gps16, gps_bf16):
    un16, unbf = empty(gps16).unreachable, empty(gps_bf16).unreachable
    assert {"group.overflow", "group.flushed", "accumulate.flushed", "flush.product"} <= set(un16)
    assert not {"group.overflow", "group.flushed", "accumulate.flushed", "flush.product"} & set(unbf)
    assert "flush.sign" not in un16 and "accumulate.tie" not in un16


def test_gps_pair_sum_flush_that_changes_the_result():
    """(1.25 * 2**-125 - 2**-125) + (2**-126 + 0), c = 0 (group 4): the first pair's 2**-127 is flushed, so
    d is 2**-126, not 1.5 * 2**-126 -- a hit of flush_changed, and a pairwise flush left out is seen."""
    ins = golden.lookup("cdna2", "v_mfma_f32_32x32x8_bf16")
    assert ins.params.group == 4 and ins.k == 8
    fa = get_format(ins.formats[0])

    def bf(v):
        return golden.from_float(fa, np.asarray(v, np.float64)).astype(np.uint64)

    a = bf([1.25 * 2.0 ** -60, -(2.0 ** -60), 2.0 ** -60, 0, 0, 0, 0, 0])[None]
    b = bf([2.0 ** -65, 2.0 ** -65, 2.0 ** -66, 0, 0, 0, 0, 0])[None]
    c = np.zeros(1, np.uint64)
    hits = row_hits(ins, a, b, c, points=(GPS_GROUP,))
    assert hits["group.flushed"][0] and hits["group.flush_changed"][0]
    d = golden.dot_add(ins, a, b, c.astype(np.uint32), backend="numpy")
    assert d[0] == np.float32(2.0 ** -126).view(np.uint32)
    b[0, 2] = 0                                         # no second pair: the flush changes nothing visible
    hits = row_hits(ins, a, b, c, points=(GPS_GROUP,))
    assert hits["group.flushed"][0] and not hits["group.flush_changed"][0]


@pytest.mark.parametrize("which, points", [("dmma", (SFMA_STEPS,)), ("sfma32", (SFMA_STEPS,)),
                                           ("gps16", GPS_OWN), ("gps_bf16", GPS_OWN)])
def test_each_construction_hits_its_bin(which, points, request):
    ins = request.getfixturevalue(which)
    rng = np.random.default_rng(5)
    for p in points:
        unreachable = p.unreachable(ins)
        for b in p.bins:
            if b.name not in unreachable:
                hit = row_hits(ins, *p.directed(ins, b.name, rng, 8), points=[p])[f"{p.name}.{b.name}"]
                assert hit.all(), (p.name, b.name, hit)


@pytest.mark.parametrize("which", ["dmma", "sfma32"])
def test_solve_closes_sfma(which, request):
    sol = solve(request.getfixturevalue(which), np.random.default_rng(0), seconds=60)   # it returns once closed
    assert sol.coverage.closed(), sol.coverage.missed()
    assert all("." in s for s in sol.source)                   # constructions did it, not the search


@pytest.mark.parametrize("which", ["gps16", "gps_bf16"])
def test_solve_closes_gps_own_points(which, request):
    ins = request.getfixturevalue(which)
    sol = solve(ins, np.random.default_rng(0), seconds=60, points=GPS_OWN)     # it returns once closed
    assert sol.coverage.closed(), sol.coverage.missed()
    assert all("." in s for s in sol.source)                   # constructions did it, not the search


@pytest.mark.slow
def test_solve_on_every_gps_point_leaves_only_the_common_holes(gps16):
    sol = solve(gps16, np.random.default_rng(0), seconds=5)
    assert set(sol.coverage.missed()) <= GPS_COMMON_HOLES
