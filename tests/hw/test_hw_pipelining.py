"""The pipelining knob (hw.Pipelining): every stage at deeper settings computes the bits of level 0,
its declared latency later, and a stage that builds another number of registers than it declares
is caught.

Stages are compared with their level-0 selves on random port values (every input bit pattern,
valid or not: a register cut must not change any function of the inputs), in Amaranth's
simulator; whole units against golden at every level; the Verilator co-simulation
(tests/cosim/test_cosim_rtl.py) runs the deepest level at full scale.
"""

import zlib

import numpy as np
import pytest
from amaranth import Shape, Value
from amaranth.lib import data
from amaranth.sim import Simulator
from amaranth_sim import simulate

import golden
import golden.vectors
import hw
from golden.formats import get_format
from hw import MAX_LEVEL, Pipelining
from hw.align import AlignShifters
from hw.compress import CompressorTree
from hw.fdrda import AMDProducts, EvenOddMerge, FloorNormalise, RoundDownMerge
from hw.fma import FMAAlignAdd, FMAMultiply, FMARound
from hw.gdfs import FP4Products, GroupTerm, ScaledGroups
from hw.gps import F32Add, F32Multiply
from hw.maxexp import MaxExponentTree
from hw.multiply import MultiplierArray, Product
from hw.normalise import NormaliseRound
from hw.pipeline import questions_only
from hw.round import Rounder

F = {name: get_format(name) for name in ("f16", "bf16", "f32", "f64", "e4m3", "e2m1", "ue8m0", "tf32")}
CDNA3 = golden.lookup("cdna3", "v_mfma_f32_32x32x16_fp8_fp8").params

# every stage with a knob: a factory taking the pipelining
STAGES = {
    "MultiplierArray": lambda p: MultiplierArray(F["f16"], F["f16"], F["f32"], 4, -133, pipelining=p),
    "MultiplierArray.scaled": lambda p: MultiplierArray(F["e4m3"], F["e4m3"], F["f32"], 4, -133, F["ue8m0"], 2,
                                                        pipelining=p),
    "AMDProducts": lambda p: AMDProducts(F["tf32"], F["tf32"], F["f32"], 4, True, p),
    "FP4Products": lambda p: FP4Products(F["e2m1"], F["e2m1"], F["f32"], F["ue8m0"], 4, 2, p),
    "ScaledGroups": lambda p: ScaledGroups(F["ue8m0"], 8, 4, -139, 4, p),
    "MaxExponentTree": lambda p: MaxExponentTree(17, p.max_levels),
    "AlignShifters": lambda p: AlignShifters(Product(F["f16"], F["f16"]), 20, 4, 25, F["f32"], p),
    "AlignShifters.groups": lambda p: AlignShifters(GroupTerm(F["ue8m0"]), 2, 2, 35, F["f32"], p),
    "CompressorTree": lambda p: CompressorTree(28, 17, p),
    "NormaliseRound": lambda p: NormaliseRound(32, 25, F["f32"], None, "RZ", "inf", True, p),
    "NormaliseRound.f16": lambda p: NormaliseRound(40, 25, F["f16"], None, "RNE", "ieee", False, p),
    "EvenOddMerge": lambda p: EvenOddMerge(30, p),
    "RoundDownMerge": lambda p: RoundDownMerge(31, CDNA3.merge_floor_bits, F["f32"], CDNA3, p),
    "FloorNormalise": lambda p: FloorNormalise(40, CDNA3, p),
    "FMAMultiply": lambda p: FMAMultiply("f32", p),
    "FMAMultiply.f64": lambda p: FMAMultiply("f64", p),
    "FMAAlignAdd": lambda p: FMAAlignAdd("f32", p),
    "FMARound": lambda p: FMARound("f32", p),
    "FMAAlignAdd.f64": lambda p: FMAAlignAdd("f64", p),
    "F32Multiply": lambda p: F32Multiply(F["f16"], F["f16"], p),
    "F32Multiply.f32": lambda p: F32Multiply(F["f32"], F["f32"], p),
    "F32Add": lambda p: F32Add(True, p),
}
# make test: the shallowest and the deepest level; the rest under @pytest.mark.slow (make test stays short)
SETTINGS = ["1", "3"]
SLOW_SETTINGS = ["2", "0,normalise=1", "0,normalise=3", "0,normalise=5", "0,align=2", "0,align=3", "0,compress=1",
                 "0,max_levels=1", "0,multiply=1"]


def _ports(stage, flow):
    return {name: getattr(stage, name) for name, member in stage.signature.members.items()
            if member.flow.name == flow}


def _random_inputs(stage, n, seed):
    """Random bit patterns for every input port, at varied magnitudes (so that leading-one
    detectors and shifters see every distance, not only the top bits)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, port in _ports(stage, "In").items():
        width = len(Value.cast(port))
        words = [int.from_bytes(rng.bytes((width + 7) // 8), "little") & ((1 << width) - 1) for _ in range(n)]
        out[name] = [w >> int(rng.integers(0, width + 1)) if rng.random() < 0.5 else w for w in words]
    return out


def run_ports(stage, inputs, n):
    """Feed ``n`` input sets, one per cycle; every output port's value ``latency`` cycles later."""
    outs = _ports(stage, "Out")
    got = {name: [] for name in outs}

    async def bench(ctx):
        for t in range(n + stage.latency):
            if t < n:
                for name, values in inputs.items():
                    ctx.set(Value.cast(getattr(stage, name)), values[t])
            await ctx.tick()
            if t >= stage.latency - 1 and len(got[next(iter(outs))]) < n:
                for name, port in outs.items():
                    got[name].append(ctx.get(Value.cast(port)))

    sim = Simulator(stage)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return got


# ---- the knob -------------------------------------------------------------------------------------

def test_levels_parse_and_print_back():
    assert Pipelining.level(0) == Pipelining() == Pipelining.parse("0") == Pipelining.parse(0)
    for n in range(MAX_LEVEL + 1):
        p = Pipelining.level(n)
        assert Pipelining.parse(str(p)) == p == Pipelining.parse(str(n))
    p = Pipelining.parse("2,align=2")
    assert p.align == 2 and p.normalise == Pipelining.level(2).normalise
    assert Pipelining.parse(str(p)) == p
    assert Pipelining.parse("normalise=3") == Pipelining(normalise=3)
    # deeper levels never have fewer registers anywhere
    for lo, hi in zip(range(MAX_LEVEL), range(1, MAX_LEVEL + 1)):
        a, b = Pipelining.level(lo), Pipelining.level(hi)
        assert a.multiply <= b.multiply and a.align <= b.align and a.normalise <= b.normalise
        assert a.max_levels >= b.max_levels


@pytest.mark.parametrize("spec,words", [("9", "level must be 0..3"), ("2,bogus=1", "FIELD one of operands, multiply"),
                                        ("align=7", "align must be 0..3"), ("normalise=6", "normalise must be 0..5"),
                                        ("max_levels=0", "1 or more"),
                                        ("2,x", "FIELD=N"), ("normalise=a", "whole number")])
def test_bad_specs_are_one_line_errors(spec, words):
    with pytest.raises(ValueError, match=words) as e:
        Pipelining.parse(spec)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match=words):
        hw.dot_add_unit(("hopper", "HGMMA.64xNx16.F32"), pipelining=spec)


def test_level_0_is_the_default_everywhere():
    with questions_only():
        for arch, name in [("hopper", "HGMMA.64xNx16.F32"), ("cdna3", "v_mfma_f32_32x32x8_f16"),
                           ("blackwell", "UTCOMMA.MXF4.E8"), ("cdna2", "v_mfma_f32_32x32x8_f16"),
                           ("ampere", "DMMA.884"), ("cdna3", "v_mfma_f32_32x32x16_fp8_fp8")]:
            default, zero = hw.dot_add_unit((arch, name)), hw.dot_add_unit((arch, name), pipelining=0)
            assert default.stage_latencies == zero.stage_latencies
        # the latencies of the original RTL
        assert hw.dot_add_unit(("hopper", "HGMMA.64xNx16.F32")).latency == 6
        assert hw.dot_add_unit(("ampere", "DMMA.884")).latency == 2 * 4 + 1
        assert hw.dot_add_unit(("cdna2", "v_mfma_f32_32x32x8_f16")).latency == 1 + 2 + 8 // 4
        del default, zero


def test_deeper_levels_add_latency_and_keep_ii_1():
    with questions_only():
        for arch, name in [("hopper", "HGMMA.64xNx16.F32"), ("blackwell", "UTCOMMA.MXF4.E8"),
                           ("cdna3", "v_mfma_f32_32x32x8_f16"), ("cdna2", "v_mfma_f32_32x32x8_f16"),
                           ("cdna3", "v_mfma_f32_16x16x4_f32")]:
            lat = [hw.dot_add_unit((arch, name), pipelining=n).latency for n in range(MAX_LEVEL + 1)]
            assert lat == sorted(lat) and lat[-1] > lat[0], (name, lat)
            unit = hw.dot_add_unit((arch, name), pipelining=MAX_LEVEL)
            assert unit.initiation_interval == 1
            assert sum(c for _, c in unit.stage_latencies) == unit.latency
            del unit


# ---- stages against level 0 ----------------------------------------------------------------------

# merge=3 and overflow=1 (no level's): only the FDRDA stages read them
FDRDA_STAGES = [name for name in STAGES if name.startswith(("RoundDownMerge", "EvenOddMerge", "FloorNormalise"))]
OVERFLOW_STAGES = [name for name in STAGES if name.startswith("AMDProducts")]
PARTIALS_STAGES = [name for name in STAGES if name.startswith("FMAMultiply")]
ALIGN_ADD_STAGES = [name for name in STAGES if name.startswith("FMAAlignAdd")]


@pytest.mark.parametrize("stage,setting", [(stage, setting) for stage in STAGES for setting in SETTINGS]
                         + [(stage, "3,merge=3") for stage in FDRDA_STAGES]
                         + [(stage, s) for stage in OVERFLOW_STAGES for s in ("3,overflow=1", "0,overflow=1")]
                         + [(stage, s) for stage in PARTIALS_STAGES
                            for s in ("3,partials=1", "0,partials=1", "3,decode=1", "0,decode=1")]
                         + [(stage, s) for stage in ALIGN_ADD_STAGES for s in ("3,fma=3", "0,fma=3")]
                         + [pytest.param(stage, s, marks=pytest.mark.slow) for stage in STAGES for s in SLOW_SETTINGS])
def test_stage_computes_the_bits_of_level_0(stage, setting):
    make = STAGES[stage]
    p = Pipelining.parse(setting)
    ref, deep = make(Pipelining()), make(p)
    n = 60
    inputs = _random_inputs(ref, n, zlib.crc32(f"{stage}{setting}".encode()))
    want, got = run_ports(ref, inputs, n), run_ports(deep, inputs, n)
    for name in want:
        bad = [t for t in range(n) if want[name][t] != got[name][t]]
        assert not bad, (f"{stage} at {setting} (latency {deep.latency}): {name} differs in {len(bad)} of {n}; "
                         f"first set {bad[0]}: {got[name][bad[0]]:#x}, level 0 {want[name][bad[0]]:#x}")


@pytest.mark.parametrize("mode", ["RZ", "RD", "RU"])
def test_align_add_of_a_directed_mode_at_fma_3_computes_the_bits_of_level_0(mode):
    """fma=3 chooses the product's place after a register; a directed mode's sticky product too."""
    ref, deep = FMAAlignAdd("f32", Pipelining(), mode), FMAAlignAdd("f32", Pipelining.parse("3,fma=3"), mode)
    n = 60
    inputs = _random_inputs(ref, n, zlib.crc32(mode.encode()))
    want, got = run_ports(ref, inputs, n), run_ports(deep, inputs, n)
    assert want == got


@pytest.mark.parametrize("cuts", [("amount",), ("shift",), ("increment",), ("lod",),
                                  ("amount", "shift", "increment", "lod")])
def test_pipelined_rounder_matches_the_combinational_one(cuts):
    rng = np.random.default_rng(len(cuts))
    comb = Rounder("f32", 40, "RNE", sticky="mask", lod="halves")
    deep = Rounder("f32", 40, "RNE", sticky="mask", lod="halves", cuts=cuts)
    assert deep.latency == len(cuts)
    n = 200
    mag = [int(rng.integers(0, 1 << 62)) >> int(rng.integers(22, 63)) for _ in range(n)]
    e0 = [int(rng.integers(-170, 120)) for _ in range(n)]
    sign = [int(rng.integers(0, 2)) for _ in range(n)]
    want = []

    async def comb_bench(ctx):
        for m, e, s in zip(mag, e0, sign):
            ctx.set(comb.mag, m)
            ctx.set(comb.e0, e)
            ctx.set(comb.sign, s)
            want.append(ctx.get(comb.word))

    sim = Simulator(comb)
    sim.add_testbench(comb_bench)
    sim.run()
    got = run_ports(deep, {"mag": mag, "e0": [e & 0xFFFF for e in e0], "sign": sign}, n)["word"]
    assert got == want


# ---- units against golden ------------------------------------------------------------------------

UNITS = [("volta", "HMMA.884.F32.F16"), ("ampere", "HMMA.16816.F16"), ("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8"),
         ("blackwell", "UTCOMMA.4X"), ("cdna3", "v_mfma_f32_32x32x4_xf32"), ("cdna3", "v_mfma_f32_32x32x16_fp8_bf8"),
         ("cdna3", "v_mfma_f32_16x16x4_f32"), ("cdna2", "v_mfma_f32_32x32x4_2b_f16")]


@pytest.mark.parametrize("level", [MAX_LEVEL] + [pytest.param(n, marks=pytest.mark.slow) for n in range(1, MAX_LEVEL)])
@pytest.mark.parametrize("arch,name", UNITS)
def test_unit_matches_golden_at_every_level(arch, name, level):
    ins = golden.lookup(arch, name)
    unit = hw.dot_add_unit(ins, pipelining=level)
    rng = np.random.default_rng(zlib.crc32(f"{name}{level}".encode()))
    a, b, c, sa, sb = golden.vectors.random_operands(ins, 60, rng, "all")
    got, _ = simulate(unit, a, b, c, sa, sb, stall_in=0.2, stall_out=0.2, seed=level)
    want = golden.dot_add(ins, a, b, c, sa, sb).astype(np.uint64)
    assert not len(golden.mismatching(ins, got, want))


# the overrides no preset level takes: FDRDA's floor in two shifts, its products registered before the
# overflow test (the CDNA3 CoFDRDA top's "3,merge=3,overflow=1"), the fused multiply-add's partial
# products registered before their sum (tried on the SFMA top); each adds registers in every pass
OVERRIDES = [("cdna3", "v_mfma_f32_16x16x32_fp8_fp8", "3,merge=3"),
             ("cdna3", "v_mfma_f32_16x16x16_bf16", "3,overflow=1"),
             ("cdna3", "v_mfma_f32_16x16x4_f32", "3,partials=1")]


@pytest.mark.parametrize("arch,name,spec", OVERRIDES)
def test_an_override_no_level_takes_matches_golden(arch, name, spec):
    ins = golden.lookup(arch, name)
    with questions_only():
        assert hw.dot_add_unit(ins, pipelining=spec).latency > hw.dot_add_unit(ins, pipelining=3).latency
    unit = hw.dot_add_unit(ins, pipelining=spec)
    rng = np.random.default_rng(zlib.crc32(f"{name}{spec}".encode()))
    a, b, c, sa, sb = golden.vectors.random_operands(ins, 60, rng, "all")
    got, _ = simulate(unit, a, b, c, sa, sb, stall_in=0.2, stall_out=0.2, seed=3)
    want = golden.dot_add(ins, a, b, c, sa, sb).astype(np.uint64)
    assert not len(golden.mismatching(ins, got, want))


# ---- planted faults ------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [AlignShifters, CompressorTree, NormaliseRound, MultiplierArray, F32Add, FMARound])
def test_a_stage_declaring_another_latency_is_caught(cls, monkeypatch):
    """A stage whose declared latency is one more than the registers it builds fails to elaborate."""
    from amaranth.back import rtlil
    built = cls.latency
    monkeypatch.setattr(cls, "latency", property(lambda self: built.fget(self) + 1))
    name = {F32Add: ("cdna2", "v_mfma_f32_32x32x4_2b_f16"), FMARound: ("ampere", "DMMA.884")}.get(
        cls, ("volta", "HMMA.884.F32.F16"))
    with questions_only():                 # the half-elaborated design is dropped, not reported unused
        unit = hw.dot_add_unit(name, pipelining=MAX_LEVEL)
        with pytest.raises(AssertionError, match="declared latency"):
            rtlil.convert(unit)
        del unit


def test_a_wrong_delay_line_is_caught_in_simulation(monkeypatch):
    """The checks above see stage latencies; a side delay line (e_max waiting for the sum) one
    cycle off is a datapath that elaborates and gives wrong bits, which the comparison catches."""
    import hw.fda
    real = hw.fda.delayed
    monkeypatch.setattr(hw.fda, "delayed", lambda m, name, shape, cycles, value:
                        real(m, name, shape, cycles + (name == "emax_wait"), value))
    ins = golden.lookup("volta", "HMMA.884.F32.F16")
    unit = hw.dot_add_unit(ins, pipelining=MAX_LEVEL)
    a, b, c, sa, sb = golden.vectors.random_operands(ins, 60, np.random.default_rng(3), "all")
    got, _ = simulate(unit, a, b, c)
    assert len(golden.mismatching(ins, got, golden.dot_add(ins, a, b, c)))


def test_shapes_in_the_stage_table_are_what_the_stages_take():
    """The test's own factories build stages of the shapes the datapaths use (guards the table)."""
    with questions_only():
        s = STAGES["AlignShifters"](Pipelining())
        assert isinstance(s.signature.members["products"].shape, data.ArrayLayout)
        assert Shape.cast(s.signature.members["terms"].shape.elem_shape).signed
        del s


def _unused_elaboratable_warnings(make_and_drop) -> list:
    """The UnusedElaboratable warnings seen while ``make_and_drop`` runs and a collection after it."""
    import gc
    import warnings

    from amaranth.hdl import UnusedElaboratable
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        make_and_drop()
        gc.collect()
    return [w for w in seen if issubclass(w.category, UnusedElaboratable)]


def _a_unit_in_a_cycle():
    unit = hw.dot_add_unit(golden.lookup("volta", "HMMA.884.F16.F16"))
    unit.myself = unit                    # only the collector frees it, not its reference count


def test_questions_only_keeps_a_design_it_never_elaborates_quiet(monkeypatch):
    """Inside the block (which freezes the older objects out of its collection) the unit's warning is
    silenced; the same unit made outside it warns (the check can fail)."""
    from amaranth.hdl import UnusedElaboratable
    monkeypatch.setattr(UnusedElaboratable, "_MustUse__silence", False)   # as after a first elaboration

    def asked():
        with questions_only():
            _a_unit_in_a_cycle()
    assert _unused_elaboratable_warnings(asked) == []
    assert _unused_elaboratable_warnings(_a_unit_in_a_cycle) != []


def test_questions_only_leaves_no_object_frozen():
    import gc
    before = gc.get_freeze_count()
    with questions_only():
        _a_unit_in_a_cycle()
    assert gc.get_freeze_count() == before
