"""CDNA3's disputed special values: ``golden.Params.specials`` ("paper" | "later_model").

Hand-built vectors show each rule in golden (the paper's reading and the later model's), the
RTL follows the field (Amaranth simulation here; Verilator co-simulation of a chained FDRDA and
a chained GFDRDA entry in both settings, with the planted cross-setting check), the unit spec
``hw:params=...`` is parsed strictly, and the probe names the reading each setting follows.
"""

import dataclasses
import io

import numpy as np
import pytest
from amaranth_sim import simulate

import golden
import golden.vectors as gv
from golden.algorithms import DISPUTED_RULES, Params, disputed_rules
from golden.descriptors import ALGORITHMS
from golden.formats import from_float, special_bits

F32_PINF, F32_NINF = 0x7F800000, 0xFF800000
BF16_CHAIN = ("cdna3", "v_mfma_f32_16x16x16_bf16")        # CoFDRDA 2x8, bf16 products overflow
TF32_CHAIN = ("cdna3", "v_mfma_f32_16x16x8_xf32")         # CoFDRDA 2x4
BF8_CHAIN = ("cdna3", "v_mfma_f32_16x16x32_bf8_bf8")      # CoGFDRDA 2x16, products reach 2**30

# every catalog entry whose results depend on the field, and the rule that makes them
TOUCHED = {
    "v_mfma_f32_16x16x8_xf32": ("inf_meets_overflow",), "v_mfma_f32_32x32x4_xf32": ("inf_meets_overflow",),
    "v_mfma_f32_32x32x4_2b_bf16": ("inf_meets_overflow",), "v_mfma_f32_16x16x4_4b_bf16": ("inf_meets_overflow",),
    "v_mfma_f32_4x4x4_16b_bf16": ("inf_meets_overflow",), "v_mfma_f32_32x32x8_bf16": ("inf_meets_overflow",),
    "v_mfma_f32_16x16x16_bf16": ("inf_meets_overflow",),
    "v_mfma_f32_16x16x32_bf8_bf8": ("nonfinite_small_c",), "v_mfma_f32_32x32x16_bf8_bf8": ("nonfinite_small_c",),
}


def later(ins):
    p = ins.params.with_(specials="later_model")
    return dataclasses.replace(ins, params=p)


def bits(fmt, values):
    return np.asarray(from_float(fmt, np.asarray(values, np.float64), "RNE"), np.uint64)


def both(ins, a, b, c):
    """(paper, later model) results, as Python ints."""
    return [[int(x) for x in golden.dot_add(i, a, b, c)] for i in (ins, later(ins))]


def is_nan32(x):
    return (x & 0x7F800000) == 0x7F800000 and (x & 0x7FFFFF) != 0


# ---- the field ----------------------------------------------------------------------------------

def test_the_field_is_validated_and_read_by_the_amd_fused_algorithms_only():
    with pytest.raises(ValueError, match="Params.specials='mmasim' is not valid; valid: one of paper, later_model"):
        Params(base="FDRDA", F=24, specials="mmasim")
    assert Params(base="FDRDA", F=24).specials == "paper"
    for base, alg in ALGORITHMS.items():                  # read exactly where a disputed rule can be reached
        assert ("specials" in alg.fields_read) == bool(alg.disputed), base
    for ins in golden.CATALOG:                    # the project follows the paper everywhere
        assert ins.params.specials == "paper"


def test_disputed_rules_per_catalog_entry():
    got = {ins.name: disputed_rules(ins) for ins in golden.CATALOG if disputed_rules(ins)}
    assert got == TOUCHED
    assert all(ins.arch == "cdna3" for ins in golden.CATALOG if disputed_rules(ins))
    assert set(DISPUTED_RULES) == {"inf_meets_overflow", "nonfinite_small_c"}
    # from Params alone: the rules the algorithm can reach, whatever the formats
    assert disputed_rules(golden.lookup(*BF16_CHAIN).params) == ("inf_meets_overflow",)
    assert disputed_rules(golden.lookup(*BF8_CHAIN).params) == ("inf_meets_overflow", "nonfinite_small_c")
    assert disputed_rules(golden.lookup("hopper", "HGMMA.64xNx16.F32").datapath) == ()
    with pytest.raises(TypeError, match="takes a Params, Datapath or Instruction"):
        disputed_rules("cdna3")


def test_disputed_vectors_separate_the_settings_exactly_where_a_rule_is_reachable():
    """Every CDNA3 fused entry on the 'disputed' vector kind: the two settings differ on some
    vectors iff disputed_rules names a rule for it (the NVIDIA FDA never reads the field: refused there)."""
    with pytest.raises(ValueError, match="specials='later_model' is not valid for hopper HGMMA.64xNx16.F32: FDA does "
                                         "not read it"):
        later(golden.lookup("hopper", "HGMMA.64xNx16.F32"))
    for ins in golden.instructions("cdna3"):
        if not ALGORITHMS[ins.params.base].disputed:
            continue
        a, b, c, sa, sb = gv.random_operands(ins, 400, np.random.default_rng(5), "disputed")
        differ = len(golden.mismatching(ins, golden.dot_add(ins, a, b, c, sa, sb),
                                        golden.dot_add(later(ins), a, b, c, sa, sb)))
        assert (differ > 0) == bool(disputed_rules(ins)), (ins.name, differ)


# ---- rule 1: an input infinity meets a product overflowing to the other infinity ---------------

@pytest.mark.parametrize("pair", [BF16_CHAIN, TF32_CHAIN], ids=lambda p: p[1])
def test_chained_passes_overflow_one_way_then_the_other(pair):
    """Pass one's products overflow to +inf (its result, +inf, is pass two's c); pass two's overflow
    to -inf: the paper keeps the input +inf, the later model gives NaN.  Mirrored: -inf / NaN."""
    ins = golden.lookup(*pair)
    fa = ins.a_format
    K, L = ins.k, ins.params.pass_size
    assert K == 2 * L
    a, b = np.zeros((2, K)), np.zeros((2, K))
    a[:, 0], b[:, 0], a[:, L], b[:, L] = 2.0 ** 127, 2.0, -(2.0 ** 127), 2.0
    a[1] = -a[1]
    paper, later_ = both(ins, bits(fa, a), bits(fa, b), bits("f32", [1.0, 1.0]))
    assert paper == [F32_PINF, F32_NINF]
    assert all(is_nan32(x) for x in later_)


@pytest.mark.parametrize("name", ["v_mfma_f32_32x32x8_bf16", "v_mfma_f32_32x32x4_xf32"])
def test_input_infinity_meets_overflow_in_one_pass(name):
    ins = golden.lookup("cdna3", name)
    fa, K = ins.a_format, ins.k
    a, b = np.zeros((4, K)), np.zeros((4, K))
    c = np.array([np.inf, 0.0, np.inf, 0.0])
    a[:, 1], b[:, 1] = -(2.0 ** 127), 4.0                  # product #1 overflows to -inf
    a[1, 0], b[1, 0] = np.inf, 1.0                         # row 1: an operand infinity instead of c
    a[2, 1] = 2.0 ** 127                                   # row 2 (control): overflows to +inf, same sign
    a[3, 0], b[3, 0] = 2.0 ** 127, 4.0                     # row 3 (control): both overflow, no input inf
    paper, later_ = both(ins, bits(fa, a), bits(fa, b), bits("f32", c))
    assert paper[:3] == [F32_PINF, F32_PINF, F32_PINF] and is_nan32(paper[3])
    assert is_nan32(later_[0]) and is_nan32(later_[1]) and later_[2] == F32_PINF and is_nan32(later_[3])


def test_f16_products_never_overflow_so_the_settings_agree():
    ins = golden.lookup("cdna3", "v_mfma_f32_16x16x16_f16")
    a, b = np.full((1, 16), 65504.0), np.full((1, 16), 65504.0)
    a[0, 8:] = -65504.0
    paper, later_ = both(ins, bits("f16", a), bits("f16", b), bits("f32", [np.inf]))
    assert paper == later_ == [F32_PINF]


# ---- rule 2: GFDRDA drops a NaN or infinite c as a small c -------------------------------------

def test_chained_gfdrda_nan_dropped_as_small_c_by_the_later_model():
    """Pass one has a NaN operand (0x80), so its result is NaN; pass two's products sum to 2**e_dot.
    The paper: NaN.  The later model: c (the NaN) has exponent -1 < e_dot - 25, dropped: 2**e_dot
    exactly for e_dot = 30 and 25; at e_dot = 24 it is kept (NaN under both)."""
    ins = golden.lookup(*BF8_CHAIN)
    f8 = "e5m2fnuz"
    a, b = np.zeros((3, 32), np.uint64), np.zeros((3, 32), np.uint64)
    a[:, 0], b[:, 0] = 0x80, bits(f8, 1.0)
    for r, (ea, eb) in enumerate(((15, 15), (12, 13), (12, 12))):
        a[r, 16], b[r, 16] = bits(f8, 2.0 ** ea), bits(f8, 2.0 ** eb)
    paper, later_ = both(ins, a, b, bits("f32", [0.0, 0.0, 0.0]))
    assert all(is_nan32(x) for x in paper)
    assert later_[:2] == [int(bits("f32", 2.0 ** 30)), int(bits("f32", 2.0 ** 25))] and is_nan32(later_[2])


def test_gfdrda_nonfinite_input_c_with_large_products():
    ins = golden.lookup("cdna3", "v_mfma_f32_32x32x16_bf8_bf8")
    f8 = "e5m2fnuz"
    a, b = np.zeros((3, 16), np.uint64), np.zeros((3, 16), np.uint64)
    a[:, 5], b[:, 5] = bits(f8, -(2.0 ** 15)), bits(f8, 2.0 ** 14)
    c = np.array([special_bits("f32", "nan"), F32_NINF, F32_PINF], np.uint64)
    paper, later_ = both(ins, a, b, c)
    assert is_nan32(paper[0]) and paper[1:] == [F32_NINF, F32_PINF]
    assert later_ == [int(bits("f32", -(2.0 ** 29)))] * 3


# ---- the RTL follows the field (Amaranth simulation) -------------------------------------------

@pytest.mark.parametrize("pair", [BF16_CHAIN, BF8_CHAIN, ("cdna3", "v_mfma_f32_32x32x4_xf32")], ids=lambda p: p[1])
def test_rtl_follows_each_setting_and_not_the_other(pair):
    import hw
    ins = golden.lookup(*pair)
    a, b, c, _, _ = gv.random_operands(ins, 150, np.random.default_rng(7), "disputed")
    want = {i.params.specials: golden.dot_add(i, a, b, c) for i in (ins, later(ins))}
    assert len(golden.mismatching(ins, want["paper"], want["later_model"])) > 10     # the vectors reach it
    for i in (ins, later(ins)):
        got, _ = simulate(hw.dot_add_unit(i), a, b, c, stall_in=0.2, stall_out=0.2, seed=3)
        mine, other = want[i.params.specials], want["later_model" if i is ins else "paper"]
        assert len(golden.mismatching(ins, got, mine)) == 0, i.params.specials
        assert len(golden.mismatching(ins, got, other)) > 10          # the check can see the other reading


# ---- the unit spec -------------------------------------------------------------------------------

def test_the_hw_unit_spec_takes_params_for_unit_and_reference(capsys):
    from cosim.units import unit_provider
    u = unit_provider("hw:params=specials=later_model")
    assert u.spec == "hw:params=specials=later_model" and u.params == {"specials": "later_model"}
    assert u.instruction(golden.lookup(*BF16_CHAIN)).params.specials == "later_model"
    both_ = unit_provider("hw:pipeline=2,align=2,params=specials=later_model")
    assert both_.pipeline == "2,align=2" and unit_provider(both_.spec).spec == both_.spec
    assert unit_provider("hw:params=specials=paper,F=25").params == {"specials": "paper", "F": 25}
    assert "note:" not in capsys.readouterr().err
    # the old FIELD:VALUE spelling still reads, with a note naming the new one
    assert unit_provider("hw:params=specials:paper,F:25").spec == "hw:params=specials=paper,F=25"
    assert "old spelling" in capsys.readouterr().err
    ins = golden.lookup(*BF8_CHAIN)
    a, b, c, _, _ = gv.random_operands(ins, 300, np.random.default_rng(2), "disputed")
    assert (u.reference(ins, a, b, c) == golden.dot_add(later(ins), a, b, c)).all()
    assert unit_provider("hw").reference is None                       # golden.dot_add itself
    for bad, msg in (("hw:params=specials=bogus", "valid: one of paper, later_model"),
                     ("hw:params=special=later_model", "'special' is not a golden.Params field"),
                     ("hw:params=base=FDA", "'base' .* is the instruction's"),
                     ("hw:params=F=2.5", "Params.F='2.5' is not valid"),
                     ("hw:params=specials", "FIELD=VALUE"), ("hw:params=", "empty option"),
                     ("hw:pipeline=1,pipeline=2", "repeated option"), ("hw:speed=9", "hw:params=FIELD=VALUE")):
        with pytest.raises(ValueError, match=msg):
            unit_provider(bad)


# ---- co-simulation (Verilator) in both settings -----------------------------------------------

def _cosim(pair, setting, reference=None, n=20_000):
    from cosim import run as cr
    from cosim.units import HwUnits
    pytest.importorskip("hw")
    ins = golden.lookup(*pair)
    cfg = cr.Config(progress=0, rerun_with_waves=False, n=n, seed=3, stall=0.2, vectors="disputed",
                     max_saved=4, out=io.StringIO())
    unit = HwUnits(params={"specials": setting})
    return cr.run_instruction(ins, cfg, unit, reference)


def _check_both_ways(pair, setting):
    r = _cosim(pair, setting)
    if r.status == "no RTL" or "toolchain" in (r.message or "").lower():
        pytest.skip(r.message)
    assert r.status == "ok" and r.mismatches == 0 and r.vectors == 20_000, r.message
    # planted: the same unit scored against golden in the other setting must mismatch
    other = "paper" if setting == "later_model" else "later_model"
    ins = golden.lookup(*pair)
    wrong = _cosim(pair, setting, lambda i, *ops: golden.dot_add(
        dataclasses.replace(ins, params=ins.params.with_(specials=other)), *ops), n=4_000)
    assert wrong.status == "MISMATCH" and wrong.mismatches > 100, wrong.message


@pytest.mark.slow   # make test's 8-minute budget (docs/verification.md)
def test_cosim_chained_fdrda_later_model():
    _check_both_ways(BF16_CHAIN, "later_model")


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["paper", "later_model"])
@pytest.mark.parametrize("pair", [BF16_CHAIN, BF8_CHAIN], ids=lambda p: p[1])
def test_cosim_chained_entries_in_both_settings(pair, setting):
    _check_both_ways(pair, setting)


# ---- the probe -------------------------------------------------------------------------------------

@pytest.mark.parametrize("pair,rule", [(BF16_CHAIN, "inf_meets_overflow"), (BF8_CHAIN, "nonfinite_small_c"),
                                       (("cdna3", "v_mfma_f32_32x32x4_xf32"), "inf_meets_overflow")],
                         ids=lambda p: p[1] if isinstance(p, tuple) else p)
def test_probe_names_the_setting_golden_follows(pair, rule):
    from probe import probe
    from probe.backends import GoldenBackend, ParamsBackend
    ins = golden.lookup(*pair)
    r = probe(ins, GoldenBackend())
    assert r.matches and r.fields["specials"].value == "paper" and r.facts["disputed"]["rules"][rule] == "paper"
    r = probe(ins, ParamsBackend(specials="later_model"))
    assert r.fields["specials"].value == "later_model" and r.facts["disputed"]["rules"][rule] == "later_model"
    assert r.differences == ["specials: catalog paper, probed later_model"]


def test_probe_says_when_no_rule_is_reachable():
    from probe import probe
    from probe.backends import ParamsBackend
    for name in ("v_mfma_f32_32x32x8_f16", "v_mfma_f32_16x16x32_fp8_bf8"):
        r = probe(golden.lookup("cdna3", name), ParamsBackend(specials="later_model"))
        assert r.matches and r.fields["specials"].status == "unobservable"
        assert any(u.startswith("specials (catalog paper)") for u in r.unobserved)
