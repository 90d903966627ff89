"""fpga.toolchain.families: the ECP5 and Gowin GW5A families behind one interface, and the board that names
each; the plans they make (no tool runs: these cost about a second)."""

from __future__ import annotations

import json

import pytest

from fpga.board.top import BoardTop, platform_family
from fpga.toolchain import boards, build
from fpga.toolchain.families import FAMILIES, Resources, Step, family
from fpga.toolchain.families.gowin import chipdb
from fpga.toolchain.fit import board_config, buffer_ebr
from tests.fpga.test_fpga_build import Blinky

GOWIN = "tang-mega-138k"


def test_every_board_names_a_family_that_has_every_piece():
    for brd in boards.BOARDS.values():
        fam = brd.family
        assert set(fam.tools) == {Step.SYNTHESIS, Step.PLACE_AND_ROUTE, Step.PACK}
        assert set(fam.titles) == set(fam.bels) == {"lut4", "ff", "dsp", "ebr"}
        assert platform_family(brd.platform()) is fam, brd.name
    assert boards.board(GOWIN).family.name == "gowin-gw5a" and boards.board("ulx3s-85f").family.name == "ecp5"
    with pytest.raises(ValueError, match="unknown FPGA family 'xc7'; valid: ecp5, gowin-gw5a"):
        family("xc7")


def test_gowin_plan_runs_himbaechel_and_gowin_pack_at_the_boards_clock(tmp_path):
    brd = boards.board(GOWIN)
    plan = build._prepare(Blinky(), brd, 3, "dsp", None, None)
    plan.extract(tmp_path)
    commands = {c[0]: c for c in json.loads((tmp_path / "build_top.json").read_text())["commands"]}
    assert set(commands) == {"yosys", "nextpnr-himbaechel-gowin", "gowin_pack"}
    pnr = " ".join(commands["nextpnr-himbaechel-gowin"])
    assert "--device GW5AST-LV138FPG676AC1/I0 --vopt family=GW5AST-138C --vopt cst=top.cst" in pnr
    assert "--seed 3" in pnr and "--freq 50" in pnr and "--report top.report.json" in pnr
    assert commands["gowin_pack"][1:5] == ["-d", "GW5AST-138C", "-o", "top.fs"]
    assert "synth_gowin -family gw5a -nowidelut" in (tmp_path / "top.ys").read_text()
    assert "IO_LOC" in (tmp_path / "top.cst").read_text()


def test_gowin_refuses_what_it_cannot_do_in_one_line():
    fam = FAMILIES["gowin-gw5a"]
    with pytest.raises(ValueError, match="no PLL support here: the design clock is the board's 50 MHz"):
        fam.check_clock(50_000_000, 75_000_000)
    assert not fam.makes_exactly(50_000_000, 75_000_000) and fam.makes_exactly(50_000_000, 50_000_000)
    with pytest.raises(ValueError, match="multipliers auto"):
        fam.yosys_overrides("auto", 2, 1)
    with pytest.raises(ValueError, match="no GW5A chip database for part 'GW1N-LV9'"):
        chipdb("GW1N-LV9")
    cfg = board_config("cdna3", "v_mfma_f32_16x16x4_f32", 1, clock_hz=75_000_000)
    with pytest.raises(ValueError, match="no PLL support"):
        boards.board(GOWIN).platform().prepare(BoardTop(cfg), name="top")


def test_ecp5_pll_still_comes_from_the_family():
    fam = FAMILIES["ecp5"]
    fam.check_clock(25_000_000, 75_000_000)
    with pytest.raises(ValueError, match="cannot make exactly 17.3 MHz"):
        fam.check_clock(25_000_000, 17_300_000)
    assert build.passing_clock_mhz(79.0, 25_000_000, 1_000_000) == 75
    assert build.passing_clock_mhz(79.0, 50_000_000, 1_000_000, family="gowin-gw5a") == 50
    assert build.passing_clock_mhz(40.0, 50_000_000, 1_000_000, family="gowin-gw5a") is None


def test_resources_count_each_familys_cells_and_bels():
    gowin = FAMILIES["gowin-gw5a"]
    cells = {"LUT1": 5, "LUT2": 6, "LUT3": 7, "LUT4": 100, "ALU": 48, "DFF": 10, "DFFE": 3, "DFFRE": 2,
             "SDPX9B": 2, "SDPB": 1, "MUX2_LUT5": 99, "IBUF": 4, "RAM16SDP4": 1}
    assert gowin.synth_resources(cells) == Resources(lut4=5 + 6 + 7 + 100 + 48 + 4, ff=15, dsp=0, ebr=3)
    report = {"utilization": {"LUT4": {"used": 11, "available": 138240}, "ALU": {"used": 26, "available": 103680},
                              "DFF": {"used": 28, "available": 138240}, "BSRAM": {"used": 0, "available": 340},
                              "MULT12X12": {"used": 0, "available": 596}}}
    assert build.resources_of_report(report, "used", gowin) == Resources(lut4=37, ff=28, dsp=0, ebr=0)
    assert build.resources_of_report(report, "available", gowin) == Resources(lut4=138240, ff=138240, dsp=596,
                                                                              ebr=340)


def test_the_buffer_model_is_the_familys():
    cfg = board_config("cdna3", "v_mfma_f32_16x16x4_f32", 1)
    assert buffer_ebr(cfg) == buffer_ebr(cfg, "ecp5") > 0
    assert buffer_ebr(cfg, "gowin-gw5a") > 0
