"""fpga.toolchain.fit and fpga.toolchain.multipliers: lanes that fit a device, from costs measured by synthesis.

The arithmetic runs on made-up costs; the multiplier choices are synthesised for real on a toy
two-lane design (seconds); one real unit's lane cost is behind the slow marker.
"""

import json

import pytest
from amaranth import Module, Signal
from amaranth.lib import io, wiring

from fpga.__main__ import main
from fpga.toolchain import fit as fitting
from fpga.toolchain.build import Resources, synthesise
from fpga.toolchain.fit import LaneCost, board_config, buffer_ebr, cost_from, depth_for, fit, parse_lanes
from fpga.toolchain.multipliers import check_multipliers, yosys_overrides

DEVICE = Resources(lut4=10_000, ff=10_000, dsp=20, ebr=50)


FIXED = Resources(1_000, 500, 0, 2)         # the board top's own logic, the same in every case


def _cost(kind, lut4, ff, dsp, fixed=FIXED) -> LaneCost:
    return LaneCost(kind, Resources(lut4, ff, dsp, 0), fixed)


def _no_buffers(n):
    return 0


# --- the arithmetic --------------------------------------------------------------------------------

def test_dsp_binds_when_each_lane_takes_many_dsps():
    found = fit({"dsp": _cost("dsp", 500, 100, 6)}, DEVICE, _no_buffers, "dsp")
    assert found.by_resource["dsp"] == 3                  # 3 x 6 = 18 <= 20 < 24
    assert found.by_resource["lut4"] == (8_000 - 1_000) // 500     # 80 % headroom: 14
    assert found.lanes == 3 and found.binding == ["dsp"] and found.dsp_lanes == 3
    assert found.at_lanes == Resources(2_500, 800, 18, 2)
    assert "3 lanes fit" in found.answer() and "DSP (MULT18X18D) binds" in found.answer()


def test_lut_headroom_is_what_binds_before_the_device_is_full():
    cost = {"lut": _cost("lut", 1_000, 100, 0)}
    assert fit(cost, DEVICE, _no_buffers, "lut").lanes == 7                  # (8,000 - 1,000) / 1,000
    assert fit(cost, DEVICE, _no_buffers, "lut", headroom=1.0).lanes == 9    # the whole device
    found = fit(cost, DEVICE, _no_buffers, "lut")
    assert found.usable.lut4 == 8_000 and found.binding == ["lut4"]
    with pytest.raises(ValueError, match="headroom"):
        fit(cost, DEVICE, _no_buffers, "lut", headroom=1.5)


def test_no_dsp_per_lane_means_dsps_never_bind():
    found = fit({"lut": _cost("lut", 700, 100, 0)}, DEVICE, _no_buffers, "lut")
    assert found.by_resource["dsp"] is None and "no limit" in found.table()
    assert found.dsp_lanes == 0 and found.lanes == 10      # (8,000 - 1,000) // 700


def test_ebr_comes_from_the_buffers_at_each_lane_count():
    found = fit({"dsp": _cost("dsp", 100, 10, 0)}, DEVICE, lambda n: 4 * n, "dsp")
    assert found.by_resource["ebr"] == 12                  # 2 fixed + 4 x 12 = 50
    assert found.lanes == 12 and found.binding == ["ebr"] and found.at_lanes.ebr == 50


def test_nothing_fits_says_so():
    found = fit({"dsp": _cost("dsp", 9_000, 10, 1)}, DEVICE, _no_buffers, "dsp")
    assert found.lanes == 0 and "not even 1 lane fits" in found.answer()


def test_auto_fills_the_dsps_then_continues_in_luts():
    costs = {"dsp": _cost("dsp", 400, 100, 8), "lut": _cost("lut", 1_200, 120, 0)}
    dsp_only = fit(costs, DEVICE, _no_buffers, "dsp")
    auto = fit(costs, DEVICE, _no_buffers, "auto")
    assert dsp_only.lanes == 2                             # 20 DSPs / 8
    # 2 DSP lanes (1,000 + 800 LUT4), then LUT lanes of 1,200 while 8,000 last: 5 more
    assert auto.dsp_lanes == 2 and auto.lanes == 7
    assert auto.at_lanes == Resources(1_000 + 2 * 400 + 5 * 1_200, 500 + 200 + 600, 16, 2)
    assert "DSP blocks for 2 lanes, LUTs for 5" in auto.answer()
    with pytest.raises(ValueError, match="needs the lut lane cost"):
        fit({"dsp": costs["dsp"]}, DEVICE, _no_buffers, "auto")


def test_cost_from_two_syntheses():
    cost = cost_from("dsp", Resources(3772, 1311, 4, 11), Resources(6344, 2024, 8, 20), 10, 20)
    assert cost.per_lane == Resources(2572, 713, 4, 0)
    assert cost.fixed == Resources(1200, 598, 0, 1) and cost.ebr_error == -1
    assert cost.cost(3, 30) == Resources(1200 + 3 * 2572, 598 + 3 * 713, 12, 31)
    assert cost_from("dsp", Resources(10, 1, 0, 10), Resources(20, 2, 0, 22), 10, 20).fixed.ebr == 2


# --- the buffers -------------------------------------------------------------------------------------

def test_buffer_ebr_counts_36_bit_blocks_with_byte_lanes_of_8_bits():
    cfg = board_config("hopper", "HMMA.1684.F32.TF32", 2)
    assert (cfg.in_bytes, cfg.out_bits, cfg.depth) == (72, 64, 256)
    assert buffer_ebr(cfg) == 18 + 2        # what Yosys 0.64 mapped (PDPW16KD, 36 wide) for this top


def test_wide_entries_make_the_buffers_shallower():
    assert depth_for(68, 4) == 256
    assert depth_for(4 * 68, 16) == (0xFFFF - 4) // (4 * 68) < 256
    cfg = board_config("hopper", "HGMMA.64xNx16.F32", 4)
    assert cfg.lanes == 4 and cfg.depth == depth_for(cfg.in_bytes, cfg.out_bytes) < 256


def test_lanes_argument():
    assert parse_lanes("max") == "max" and parse_lanes("MAX") == "max" and parse_lanes("3") == 3
    for bad in ("0", "-2", "two", "1.5"):
        with pytest.raises(ValueError, match="positive integer or 'max'"):
            parse_lanes(bad)


def test_multiplier_choices_become_yosys_options():
    assert yosys_overrides("dsp", 4) == {}
    assert yosys_overrides("lut", 4) == {"synth_opts": "-nodsp"}
    auto = yosys_overrides("auto", 3, dsp_lanes=1)["script_after_read"]
    assert auto.startswith("chtype -set $__soft_mul ") and "top.unit.lane2/t:$mul" in auto
    assert "top.unit.lane0" not in auto
    assert yosys_overrides("auto", 3, dsp_lanes=3) == {} and yosys_overrides("auto", 3, dsp_lanes=0) == {
        "synth_opts": "-nodsp"}
    with pytest.raises(ValueError, match="valid: dsp, lut, auto"):
        check_multipliers("bram")


# --- the multiplier choice, synthesised -------------------------------------------------------------

class _Lane(wiring.Component):
    a: wiring.In(16)
    b: wiring.In(16)
    p: wiring.Out(32)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.p.eq(self.a * self.b)
        return m


class _Unit(wiring.Component):
    x: wiring.In(16)
    p: wiring.Out(32)

    def elaborate(self, platform):
        m = Module()
        total = 0
        for n in range(2):
            m.submodules[f"lane{n}"] = lane = _Lane()
            m.d.comb += [lane.a.eq(self.x + n), lane.b.eq(self.x ^ (3 << n))]
            total ^= lane.p
        m.d.sync += self.p.eq(total)
        return m


class _ToyTop(wiring.Component):
    """Two 16x16 multiplier lanes at ``top.unit.lane<n>`` (where BoardTop has its unit's), on an LED."""

    def __init__(self):
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = _Unit()
        counter = Signal(16)
        m.d.sync += counter.eq(counter + 1)
        m.submodules.led = led = io.Buffer("o", platform.request("led", 0, dir="-"))
        m.d.comb += [unit.x.eq(counter), led.o.eq(unit.p.xor())]
        return m


@pytest.mark.slow   # make test's 8-minute budget (docs/verification.md)
@pytest.mark.xdist_group("yosys")
def test_multiplier_choices_synthesise_where_they_say(tmp_path):
    found = {(kind, k): synthesise(_ToyTop(), "ulx3s-12f", "toy", build_dir=tmp_path / f"{kind}{k}",
                                   multipliers=kind, lanes=2, dsp_lanes=k)
             for kind, k in (("dsp", None), ("lut", None), ("auto", 1))}
    assert found["dsp", None].dsp == 2 and found["lut", None].dsp == 0
    assert found["auto", 1].dsp == 1                       # lane 1 retyped to a soft multiplier
    assert found["lut", None].lut4 > found["auto", 1].lut4 > found["dsp", None].lut4
    stored = json.loads((tmp_path / "auto1" / "synth.json").read_text())
    assert stored["resources"] == {"lut4": found["auto", 1].lut4, "ff": found["auto", 1].ff, "dsp": 1,
                                   "ebr": found["auto", 1].ebr}


@pytest.mark.slow
@pytest.mark.xdist_group("yosys")
def test_a_real_lane_cost_and_its_buffers(tmp_path):
    """The K=4 TF32 unit's board top with 1 and 2 lanes (about a minute each here)."""
    cost = fitting.lane_cost("hopper", "HMMA.1684.F32.TF32", "ulx3s-85f", "dsp", build_dir=tmp_path)
    assert cost.per_lane.dsp == 4 and cost.per_lane.lut4 > 1000 and cost.fixed.lut4 > 500
    assert abs(cost.ebr_error) <= 1                         # the identify ROM: EBR or logic, as Yosys picks


# --- command line --------------------------------------------------------------------------------

def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


def test_fit_errors(capsys):
    assert "unknown board 'nope'" in _one_line_error(capsys, ["fit", "hopper", "HGMMA.64xNx16.F32", "--board", "nope"])
    assert "leave out --lanes" in _one_line_error(capsys, ["fit", "hopper", "HGMMA.64xNx16.F32", "--lanes", "3"])
    assert "a tensor core has one lane" in _one_line_error(capsys,
                                                           ["fit", "hopper", "HGMMA.64xNx16.F32,HGMMA.64xNx16.F16"])
    assert "--headroom" in _one_line_error(capsys, ["fit", "hopper", "HGMMA.64xNx16.F32", "--headroom", "0"])
    assert "HGMMA.64xNx99" in _one_line_error(capsys, ["fit", "hopper", "HGMMA.64xNx99"])


def test_lanes_max_only_where_a_fit_can_decide(capsys):
    assert "--lanes max applies to build and program" in _one_line_error(
        capsys, ["sim", "hopper", "HGMMA.64xNx16.F32", "--lanes", "max"])
    assert "a tensor core has one lane" in _one_line_error(
        capsys, ["build", "hopper", "HGMMA.64xNx16.F32,HGMMA.64xNx16.F16", "--lanes", "max"])


@pytest.mark.parametrize("argv, said", [
    (["build", "hopper", "HGMMA.64xNx16.F32", "--lanes", "lots"], "positive integer or 'max'"),
    (["build", "hopper", "HGMMA.64xNx16.F32", "--lanes", "0"], "positive integer or 'max'"),
    (["build", "hopper", "HGMMA.64xNx16.F32", "--multipliers", "bram"], "invalid choice: 'bram'"),
])
def test_bad_options_are_refused_by_the_parser(capsys, argv, said):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2 and said in capsys.readouterr().err
