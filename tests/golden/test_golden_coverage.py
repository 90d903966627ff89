"""golden.coverage: cover points measured from golden's trace (FDA's first cover points)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import golden
from golden.coverage import FDA_COVER_POINTS, Coverage, cover_points, measure


@pytest.fixture(scope="module")
def ins():
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    assert ins.params.base == "FDA" and ins.params.F == 25
    return ins


def _normal(n, k, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, k)).astype(np.float16), rng.standard_normal((n, k)).astype(np.float16),
            rng.standard_normal(n).astype(np.float32))


def test_fda_descriptor_carries_its_cover_points(ins):
    assert cover_points(ins) is FDA_COVER_POINTS
    assert golden.descriptors.ALGORITHMS["GDFS"].cover_points == ()


def test_random_normal_vectors_hit_inside_but_not_every_bin(ins):
    cov = measure(ins, *_normal(20, ins.k))
    assert cov.hits["shift.inside"] == 20 and cov.dot_adds == cov.offered == 20
    assert cov.hits["output.normal"] == 20
    assert cov.missed() and "shift.F" in cov.missed() and "output.infinite" in cov.missed()


def test_a_handcrafted_vector_hits_shift_exactly_F(ins):
    a, b = np.zeros(ins.k, np.float16), np.zeros(ins.k, np.float16)
    a[0] = b[0] = 1.0                                 # exponent 0 = e_max
    a[1], b[1] = 2.0 ** -12, 2.0 ** -13               # exponent -25: shift 25 = F
    cov = measure(ins, a, b, np.float32(0))
    assert cov.hits["shift.F"] == 1 and cov.hits["shift.F-1"] == cov.hits["shift.F+1"] == 0
    assert cov.hits["discarded.none"] == 1 and cov.hits["discarded.nonzero"] == 0


def test_output_infinite_and_c_dominant(ins):
    a, b = np.zeros(ins.k, np.float16), np.zeros(ins.k, np.float16)
    a[0] = b[0] = 1.0
    cov = measure(ins, a, b, np.float32(2.0 ** 10))
    assert cov.hits["c_vs_products.c_dominant"] == 1
    cov = measure(ins, a, b, np.float32(np.inf))         # (RZ output: an overflow stays finite)
    assert cov.hits["output.infinite"] == 1


def test_a_sample_is_part_of_the_result(ins):
    cov = measure(ins, *_normal(30, ins.k), sample=5)
    assert (cov.dot_adds, cov.offered) == (5, 30)
    assert sum(cov.hits[b] for b in cov.bins if b.startswith("output.")) == 5


def test_merge_adds_counts(ins):
    one, two = measure(ins, *_normal(4, ins.k, 1)), measure(ins, *_normal(6, ins.k, 2))
    both = one.merge(two)
    assert both.hits == {b: one.hits[b] + two.hits[b] for b in one.bins}
    assert (both.dot_adds, both.offered) == (10, 10)
    other = Coverage.empty("other", FDA_COVER_POINTS)
    with pytest.raises(ValueError, match="cannot merge"):
        one.merge(other)


def test_json_round_trip(ins):
    cov = measure(ins, *_normal(3, ins.k), sample=2)
    back = Coverage.from_json(cov.to_json())
    assert back == cov


def test_summary_line(ins):
    cov = measure(ins, *_normal(10, ins.k))
    n = len(cov.hit())
    assert cov.summary() == f"coverage: {n} of 15 reachable bins hit (0 unreachable)"


def test_unreachable_bins_name_a_reason():
    cov = Coverage.empty("toy", FDA_COVER_POINTS, SimpleNamespace(d_format="e4m3"))
    assert list(cov.unreachable) == ["output.infinite"]
    assert "no infinities" in cov.unreachable["output.infinite"]
    assert cov.summary() == "coverage: 0 of 14 reachable bins hit (1 unreachable)"
