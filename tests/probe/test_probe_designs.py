"""The probe on designs teams build (issue 20): plain-function backends with planted faults, each
diagnosed right; special values that differ from the entry are differences; the inference is checked
(reproduced, or not reproduced with counterexamples); the exact sum rounded once is the reference."""

from __future__ import annotations

import probe_designs as D

import golden
from probe import GoldenBackend, probe
from probe.probes.specials import Case

HMMA = golden.lookup("hopper", "HMMA.16816.F32")            # FDA, F=25, RZ
VOLTA = golden.lookup("volta", "HMMA.884.F32.F32")          # FDA, K=4
TF32 = golden.lookup("hopper", "HMMA.1684.F32.TF32")        # products that reach the top of f32
SFMA = golden.lookup("cdna3", "v_mfma_f32_16x16x4_f32")     # four binary32 fmas in a chain


def _reproduced(r) -> bool:
    return r.verification.get("rows", 0) >= 4096 and r.verification["mismatches"] == 0


def test_an_rtz_fma_is_not_reported_as_matching():
    """The fp32 FMA built with RTZ: golden's RNE SFMA differs on many rows; the probe names the field."""
    r = probe(SFMA, D.with_params(fma_rounding="RZ"))
    assert not r.matches and r.family == "SFMA"
    assert "fma_rounding: catalog RNE, probed RZ" in r.differences
    assert _reproduced(r) and not r.outside               # RZ's saturation is no accumulator that wraps


def test_an_exact_sum_design_is_inferred_and_reproduced():
    r = probe(HMMA, D.with_params(F="exact"))
    assert "F: catalog 25, probed exact" in r.differences and _reproduced(r)
    assert r.exact["equal"]["RZ"] == r.exact["rows"]       # it is the exact sum rounded toward zero


def test_another_nan_encoding_is_a_field():
    r = probe(HMMA, D.with_params(nan_bits=0x7FC00000))
    assert "nan_bits: catalog None, probed 0x7fc00000" in r.differences and _reproduced(r)


def test_ties_away_from_zero_is_described_not_mislabelled():
    r = probe(VOLTA, D.ties_away)
    assert r.fields["out_rounding"].value == "RNA" and not r.matches
    assert any("not one of RZ, RD, RU, RNE" in x for x in r.outside)
    assert r.verification["mismatches"] > 0 and r.verification["examples"]


def test_a_wrapping_accumulator_is_described():
    r = probe(TF32, D.wrapping)
    assert not r.matches and any("wraps" in x for x in r.outside)
    assert any(x.startswith(f"special value {Case.MAX_PLUS_1U.value}: catalog inf") for x in r.differences)


def test_flushed_subnormal_results_are_a_difference_and_described():
    r = probe(HMMA, D.flushing)
    assert "special value subnormal c: catalog kept, probed flushed" in r.differences
    assert any("flushed" in x for x in r.outside) and r.verification["mismatches"] > 0


def test_special_values_that_differ_are_differences():
    """0 * inf and inf - inf that are not NaN, or an all-zero dot-add giving -0, are differences."""
    def odd(ins, a, b, c, sa=None, sb=None):
        d = golden.dot_add(ins, a, b, c, sa, sb)
        fd = golden.get_format(ins.formats[3])
        nan = golden.decode(fd, d).cls == 4
        d[nan] = 0                                          # NaN results come out as +0
        d[(a == 0).all(1) & (b == 0).all(1) & (c == 0)] = 0x80000000      # an all-zero dot-add gives -0
        return d
    r = probe(HMMA, odd)
    for case, got in ((Case.ZERO_TIMES_INF, "0.0"), (Case.INF_MINUS_INF, "0.0"), (Case.ALL_ZERO, "-0")):
        assert any(x.startswith(f"special value {case.value}: catalog") and x.endswith(f"probed {got}")
                   for x in r.differences), r.differences


def test_the_exact_reference_finds_the_1_ulp_low_case():
    """A design that claims the exact sum rounded toward zero but rounds after each product (2^20 + 2^-20
    - 2^-21 gives 1 ulp low, as 2^20 + 2^-40 - 2^-41 did in issue 20): the exact reference shows where it
    is not what it claims, with that row first."""
    r = probe(HMMA, D.with_params(F="exact", pass_size=1))
    assert r.fields["pass_size"].value == 1 and not r.matches
    assert r.exact["claimed"] == "RZ" and r.exact["equal"]["RZ"] < r.exact["rows"]
    assert "c=49800000 -> device 497fffff, exact RZ 49800000" in r.exact["examples"][0]


def test_the_catalog_still_matches_with_every_check():
    for ins in (HMMA, SFMA, TF32, golden.lookup("cdna3", "v_mfma_f32_32x32x8_bf16")):
        r = probe(ins, GoldenBackend())
        assert r.matches and _reproduced(r) and not r.outside, (ins.name, r.summary(), r.outside)


def test_a_compiled_lowering_is_verified_not_inferred():
    """The compiled MMA.16832.* entries: not inferred (a lowering), their own Params verified."""
    ins = next(i for i in golden.CATALOG if not i.native)
    r = probe(ins, GoldenBackend())
    assert r.matches and r.lowering and "compiled lowering" in r.lowering and _reproduced(r)
    wrong = probe(ins, D.with_params(c_last=False))
    assert not wrong.matches and wrong.verification["mismatches"] > 0
