"""The Params fields that describe what teams build, in golden and the RTL: F="exact", nan_bits,
zero_sign="ieee754", fma_rounding.

Default tier: each field's RTL (Amaranth's simulator, small units) against golden on random and
structured rows, each field shown to change results, and a planted disagreement (the unit without
the field scored against golden with it) caught.  ``slow``: the same through Verilator and cosim's
``hw:params=...`` units (a build per design).
"""

from __future__ import annotations

import numpy as np
import pytest
from amaranth_sim import simulate

import golden
import golden.vectors
import hw
from golden.algorithms import exact_window, run

VOLTA = ("volta", "HMMA.884.F32.F32")               # K = 4: the smallest FDA unit
SFMA32 = ("cdna3", "v_mfma_f32_32x32x1_2b_f32")      # K = 1: one binary32 fma

DESIGNS = [
    (VOLTA, {"F": "exact"}),
    (VOLTA, {"F": "exact", "out_rounding": "RU", "overflow": "ieee"}),
    (VOLTA, {"zero_sign": "ieee754"}),
    (VOLTA, {"zero_sign": "ieee754", "out_rounding": "RD"}),
    (VOLTA, {"nan_bits": 0x7FC00000}),
    (SFMA32, {"fma_rounding": "RZ"}),
    (SFMA32, {"fma_rounding": "RD"}),
    (SFMA32, {"fma_rounding": "RU", "nan_bits": 0x7FC00001}),
]


def _rows(ins, n, seed):
    """Random rows of every kind, and rows of signed zeros (what zero_sign="ieee754" reads)."""
    rng = np.random.default_rng(seed)
    a, b, c, _, _ = golden.vectors.random_operands(ins, n, rng, "all" if ins.k > 1 else "mixed")
    z = n // 5
    fa, fb, fc = (golden.get_format(f) for f in ins.formats[:3])
    a[:z] = 0
    b[:z] = np.where(rng.random((z, ins.k)) < 0.7, np.uint64(1 << (fb.storage_bits - 1)), np.uint64(0))
    c[:z] = np.where(rng.random(z) < 0.6, np.uint64(1 << (fc.storage_bits - 1)), np.uint64(0))
    b[:z // 3], c[:z // 3] = np.uint64(1 << (fb.storage_bits - 1)), np.uint64(1 << (fc.storage_bits - 1))   # all -0
    return a, b, c


@pytest.mark.parametrize("pair,changes", DESIGNS, ids=[f"{p[1]}-{c}" for p, c in DESIGNS])
def test_rtl_follows_golden_on_each_new_field(pair, changes):
    ins = golden.lookup(*pair)
    design = ins.params.with_(**changes)
    a, b, c = _rows(ins, 120, seed=len(str(changes)))
    got, _ = simulate(hw.dot_add_unit(ins, params=design), a, b, c)
    want = run(design, a, b, c, *ins.formats).astype(np.uint64)
    assert (got == want).all(), np.flatnonzero(got != want)[:5]
    # the field is a different design on these rows, and the unit built without it disagrees
    assert (want != golden.dot_add(ins, a, b, c)).any()
    plain, _ = simulate(hw.dot_add_unit(ins), a, b, c)
    assert (plain != want).any()


def test_the_exact_window_drops_nothing():
    """F="exact" in the RTL is FDA with the window of exact_window: for f16 x f16 + f32 it spans
    c's largest exponent (127) down to the last place of an f32 subnormal (2^-149)."""
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    assert exact_window(ins.datapath.with_(params=ins.params.with_(F="exact"))) == 127 + 149


def test_the_1_ulp_case_of_issue_20():
    """2^20 + 2^-40 - 2^-41 under RTZ is 2^20; rounding up it is 2^20 + ulp; a window of F=25 loses
    the small terms and stays at 2^20 under RU."""
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    f16 = golden.get_format("f16")
    a = np.zeros((1, ins.k))
    b = np.zeros((1, ins.k))
    a[0, :2], b[0, :2] = [2.0 ** -20, -(2.0 ** -20)], [2.0 ** -20, 2.0 ** -21]
    a, b = golden.from_float(f16, a), golden.from_float(f16, b)
    c = golden.from_float("f32", np.array([2.0 ** 20]))

    def d(**ch):
        return int(run(ins.params.with_(**ch), a, b, c, *ins.formats)[0])
    assert d(F="exact", out_rounding="RZ") == 0x49800000
    assert d(F="exact", out_rounding="RU") == 0x49800001
    assert d(out_rounding="RU") == 0x49800000


def test_nan_bits_must_be_a_nan_of_the_result():
    ins = golden.lookup(*VOLTA)
    bad = ins.params.with_(nan_bits=0x7F800000)          # +infinity
    a = np.zeros((1, ins.k), np.uint64)
    with pytest.raises(ValueError, match=r"nan_bits=0x7f800000 is not a NaN of the output format f32"):
        run(bad, a, a, np.zeros(1, np.uint64), *ins.formats)
    with pytest.raises(ValueError, match="is not a NaN"):
        hw.dot_add_unit(ins, params=bad)


def test_the_rtl_refuses_what_it_does_not_build():
    """zero_sign="ieee754" has RTL in FDA only; binary64 SFMA rounds to nearest only (as golden)."""
    fdrda = golden.lookup("cdna3", "v_mfma_f32_16x16x16_bf16")
    with pytest.raises(NotImplementedError, match="ieee754"):
        hw.dot_add_unit(fdrda, params=fdrda.params.with_(zero_sign="ieee754"))
    dmma = golden.lookup("ampere", "DMMA.884")
    with pytest.raises(ValueError, match="binary32 design"):
        hw.dot_add_unit(dmma, params=dmma.params.with_(fma_rounding="RZ"))
    with pytest.raises(ValueError, match="F='exact'"):
        fdrda.params.with_(F="exact")


@pytest.mark.slow                   # a Verilator build per design
@pytest.mark.parametrize("spec", ["hw:params=F=exact,zero_sign=ieee754", "hw:params=nan_bits=0x7fc00000"])
def test_cosim_runs_the_new_fields_and_catches_a_planted_disagreement(spec, tmp_path):
    from cosim import run as cr
    ins = golden.lookup(*VOLTA)
    cfg = dict(n=20_000, seed=3, progress=0, rerun_with_waves=False, failures_dir=tmp_path)
    ok = cr.run_instruction(ins, cr.Config(**cfg), spec)
    assert ok.status == "ok" and ok.mismatches == 0
    planted = cr.run_instruction(ins, cr.Config(**cfg), spec, reference=golden.dot_add)
    assert planted.status == "MISMATCH" and planted.mismatches > 0
