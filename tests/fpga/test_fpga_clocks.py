"""fpga.toolchain.families.ecp5_pll and the design clock: the ECP5 PLL's dividers (checked against Project Trellis's
``ecppll``), the board top's PLL and reset, the timing verdict on the design clock's net, and the
command line's ``--clock``.  The real build of the CDNA3 FDRDA board top at 16 MHz is slow."""

from __future__ import annotations

import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from amaranth.back import rtlil
from amaranth_boards.ecp5_5g_evn import ECP55GEVNPlatform
from amaranth_boards.ulx3s import ULX3S_85F_Platform

from fpga.__main__ import _parser, config_from, main
from fpga.board.config import BoardConfig
from fpga.board.top import BoardTop
from fpga.toolchain import build
from fpga.toolchain.build import BuildError, BuildReport, CriticalPath, Resources
from fpga.toolchain.families.ecp5_pll import (
    ECP5PLL,
    FEEDBACK_HZ,
    OUTPUT_HZ,
    PFD_HZ,
    VCO_HZ,
    PLLParams,
    ecp5_pll,
    makes_exactly,
)

REPO = Path(__file__).resolve().parent.parent.parent
ECPPLL = Path(sys.executable).parent / "yowasp-ecppll"
MHZ = 1_000_000


# --- the PLL's dividers --------------------------------------------------------------------------

@pytest.mark.parametrize("fin, fout, dividers, vco", [
    (25, 20, (5, 4, 30, None), 600),       # CLKOP out
    (25, 15, (5, 3, 40, None), 600),
    (12, 16, (3, 4, 37, None), 592),       # the ECP5-5G EVN's 12 MHz
    (25, 16, (5, 2, 56, 35), 560),         # CLKOP alone would need a 1 MHz phase detector: CLKOS out
])
def test_pll_dividers(fin, fout, dividers, vco):
    p = ecp5_pll(fin * MHZ, fout * MHZ)
    assert (p.clki_div, p.clkfb_div, p.clkop_div, p.clkos_div) == dividers
    assert p.vco_hz == vco * MHZ and p.fout_hz == fout * MHZ
    assert p.clkop_cphase == p.clkop_div // 2
    assert p.output == ("CLKOP" if dividers[3] is None else "CLKOS")


def _obeys_the_limits(fin_hz: int, p: PLLParams) -> bool:
    pfd = Fraction(fin_hz, p.clki_div)
    loop = pfd * p.clkfb_div                                   # CLKOP: what the phase detector compares
    out = loop if p.clkos_div is None else p.vco_hz / p.clkos_div
    return (PFD_HZ[0] <= pfd <= PFD_HZ[1] and VCO_HZ[0] <= p.vco_hz <= VCO_HZ[1] and p.vco_hz == loop * p.clkop_div
            and OUTPUT_HZ[0] <= out <= OUTPUT_HZ[1] and out == p.fout_hz
            and (p.clkos_div is None or FEEDBACK_HZ[0] <= loop <= FEEDBACK_HZ[1])
            and 1 <= p.clki_div <= 128 and 1 <= p.clkfb_div <= 80 and 1 <= p.clkop_div <= 128
            and (p.clkos_div is None or 1 <= p.clkos_div <= 128))


def test_every_solution_obeys_the_pll_limits():
    made = [(25 * MHZ, fout) for fout in range(4 * MHZ, 61 * MHZ, MHZ)]     # every whole MHz from 4 to 60
    made += [(12 * MHZ, fout) for fout in (4 * MHZ, 16 * MHZ, 33 * MHZ, 48 * MHZ, 12_500_000)]
    for fin, fout in made:
        assert _obeys_the_limits(fin, ecp5_pll(fin, fout)), (fin, fout)
    planted = ecp5_pll(25 * MHZ, 16 * MHZ)
    assert not _obeys_the_limits(25 * MHZ, PLLParams(**{**planted.__dict__, "clkos_div": 34}))


@pytest.mark.parametrize("fin, fout, words", [
    (25 * MHZ, 17_300_000, ["cannot make exactly 17.3 MHz from 25 MHz", "nearest it makes: 17.299107 MHz and "
                            "17.307692 MHz"]),
    (25 * MHZ, 1 * MHZ, ["makes 3.125 MHz to 400 MHz, not 1 MHz"]),
    (25 * MHZ, 401 * MHZ, ["makes 3.125 MHz to 400 MHz, not 401 MHz"]),
    (2 * MHZ, 16 * MHZ, ["cannot run from a 2 MHz input", "phase detector takes 3.125 MHz to 400 MHz"]),
    (25 * MHZ, 16e6, ["fout_hz must be a positive integer (Hz), not 16000000.0"]),
    (0, 16 * MHZ, ["fin_hz must be a positive integer (Hz), not 0"]),
])
def test_impossible_targets_are_one_line(fin, fout, words):
    with pytest.raises(ValueError) as e:
        ecp5_pll(fin, fout)
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words), str(e.value)
    assert not (isinstance(fin, int) and isinstance(fout, int) and makes_exactly(fin, fout))


def _ecppll(tmp_path, fin: int, fout: int, highres: bool) -> dict:
    if not ECPPLL.exists():
        pytest.skip("yowasp-ecppll is not installed")
    done = subprocess.run([str(ECPPLL), *(["--highres"] if highres else []), "-i", str(fin), "-o", str(fout),
                           "-f", "pll.v"], cwd=tmp_path, capture_output=True, text=True, check=True)
    found = dict(re.findall(r"^(.+?): ([\d.]+)", done.stdout, re.M))
    verilog = (tmp_path / "pll.v").read_text()
    found["CLKOP_CPHASE"] = re.search(r"\.CLKOP_CPHASE\((\d+)\)", verilog).group(1)
    return found


@pytest.mark.parametrize("fin, fout, highres", [(25, 20, False), (12, 16, False), (25, 16, True)])
def test_dividers_are_the_ones_ecppll_picks(tmp_path, fin, fout, highres):
    theirs = _ecppll(tmp_path, fin, fout, highres)
    ours = ecp5_pll(fin * MHZ, fout * MHZ)
    assert (ours.clkos_div is not None) == highres
    assert int(theirs["Refclk divisor"]) == ours.clki_div
    assert int(theirs["Feedback divisor"]) == ours.clkfb_div
    assert int(theirs["clkout0 divisor"]) == ours.clkop_div
    assert float(theirs["VCO frequency"]) == ours.vco_hz / MHZ
    if highres:
        assert int(theirs["clkout1 divisor"]) == ours.clkos_div
    else:            # ecppll --highres leaves CLKOP's phase at a constant; its plain mode sets half a period
        assert int(theirs["CLKOP_CPHASE"]) == ours.clkop_cphase


# --- the board top's clock -----------------------------------------------------------------------

def _config(clock_hz: int) -> BoardConfig:
    return BoardConfig.from_names("hopper", "HMMA.1684.F32.TF32", depth=16, clock_hz=clock_hz)


def _plan(platform, clock_hz: int):
    plan = platform.prepare(BoardTop(_config(clock_hz)), name="board")
    return plan.files["board.il"], plan.files["board.lpf"]


def _pll_parameters(il: str) -> dict:
    cell = il[il.index("cell \\EHXPLLL"):]
    cell = cell[:cell.index("\n  end")]
    return dict(re.findall(r"parameter \\(\w+) (\S+)", cell))


def test_board_top_at_16_mhz_on_the_ulx3s_runs_from_the_pll():
    il, lpf = _plan(ULX3S_85F_Platform(), 16 * MHZ)
    params = _pll_parameters(il)
    assert {k: params[k] for k in ("CLKI_DIV", "CLKFB_DIV", "CLKOP_DIV", "CLKOS_DIV", "FEEDBK_PATH")} == \
        {"CLKI_DIV": "5", "CLKFB_DIV": "2", "CLKOP_DIV": "56", "CLKOS_DIV": "35", "FEEDBK_PATH": '"CLKOP"'}
    assert 'attribute \\FREQUENCY_PIN_CLKOS "16"' in il and 'attribute \\FREQUENCY_PIN_CLKI "25"' in il
    assert "connect \\CLKOS \\clk_out" in il and "connect \\LOCK \\locked" in il
    assert "module \\board.reset_sync" in il                       # sync held in reset until lock
    # the design clock's reset reaches every pipeline register: on a global, through a DCCA
    assert re.search(r"cell \\DCCA \\reset_global\n\s+connect \\CLKI \\fast_reset_source_rst \[0\]\n"
                     r"\s+connect \\CE 1'1\n\s+connect \\CLKO \\fast_rst\n", il)
    assert re.search(r'FREQUENCY NET "\S+" 16000000\.0 HZ;', lpf)   # nextpnr judges the design clock
    assert 'FREQUENCY PORT "clk25_0__io" 25000000.0 HZ;' in lpf
    assert "bridge" in il                           # two clock domains by default on a PLL board


def test_board_top_at_the_boards_clock_has_no_pll():
    il, lpf = _plan(ULX3S_85F_Platform(), 25 * MHZ)
    assert "EHXPLLL" not in il and "reset_sync" not in il and "FREQUENCY NET" not in lpf


def test_board_top_on_the_evn_takes_its_reset_button_too():
    il, _ = _plan(ECP55GEVNPlatform(), 16 * MHZ)
    params = _pll_parameters(il)
    assert (params["CLKI_DIV"], params["CLKFB_DIV"], params["CLKOP_DIV"]) == ("3", "4", "37")
    assert "CLKOS_DIV" not in params and "rst_0__io" in il


def test_board_top_refuses_a_clock_the_pll_cannot_make():
    with pytest.raises(ValueError, match="cannot make exactly 17.3 MHz from 25 MHz; the nearest it makes"):
        _plan(ULX3S_85F_Platform(), 17_300_000)


def test_simulated_board_top_has_no_pll():
    top = BoardTop(_config(16 * MHZ))
    assert top.clocks_per_bit == 16
    assert "EHXPLLL" not in rtlil.convert(top, name="board")


def test_pll_component_signature():
    pll = ECP5PLL(25 * MHZ, 20 * MHZ)
    pll._MustUse__silence = True                     # asked its signature, never elaborated
    assert set(pll.signature.members) == {"clk_in", "clk_out", "locked"}
    assert pll.params == ecp5_pll(25 * MHZ, 20 * MHZ) and pll.params.output == "CLKOP"


# --- the timing verdict on the design clock ------------------------------------------------------

def _path(reg: str, delay: float) -> list:
    return [{"type": "clk-to-q", "from": {"cell": reg}, "to": {"cell": reg}, "delay": delay},
            {"type": "setup", "from": {"cell": reg + "_end"}, "to": {"cell": reg + "_end"}, "delay": 0.0}]


TWO_CLOCKS = {  # nextpnr's --report of a PLL design: the oscillator's net listed first
    "fmax": {"$glbnet$clk_pin.i": {"achieved": 61.5, "constraint": 25.0},
             "$glbnet$clk": {"achieved": 18.1, "constraint": 16.0}},
    "critical_paths": [
        {"from": "posedge $glbnet$clk_pin.i", "to": "posedge $glbnet$clk_pin.i", "path": _path("in_ff", 16.3)},
        {"from": "posedge $glbnet$clk", "to": "posedge $glbnet$clk", "path": _path("unit_ff", 55.2)},
        {"from": "posedge $glbnet$clk", "to": "<async>", "path": _path("out_ff", 2.0)}]}


def test_design_fmax_picks_the_design_clocks_net():
    assert build.design_clock(TWO_CLOCKS, 16e6) == "$glbnet$clk"
    assert build.design_fmax(TWO_CLOCKS, 16e6) == 18.1
    assert build.critical_path(TWO_CLOCKS, "$glbnet$clk").start == "unit_ff"
    assert build.design_fmax(TWO_CLOCKS, 25e6) == 61.5            # (what the oscillator's net would say)
    with pytest.raises(BuildError, match="no clock constrained to the 20 MHz design clock: "
                                         r"\$glbnet\$clk_pin.i \(25 MHz\), \$glbnet\$clk \(16 MHz\)"):
        build.design_fmax(TWO_CLOCKS, 20e6)


def _report(fmax: float, clock: float, board: float | None) -> BuildReport:
    return BuildReport(board="ulx3s-85f", device="LFE5U-85F", design="d", build_dir="/b", bitstream="/b/top.bit",
                       clock_mhz=clock, board_clock_mhz=board, fmax_mhz=fmax, used=Resources(1, 1, 0, 0),
                       synthesised=Resources(1, 1, 0, 0), capacity=Resources(9, 9, 9, 9),
                       critical_path=CriticalPath("a", "b", 55.2, 20.0, 35.2, 9))


def test_report_shows_the_board_and_the_design_clock():
    passing, failing = _report(18.1, 16, 25), _report(15.2, 16, 25)
    assert "Fmax 18.10 MHz for a 16 MHz design clock (PLL from the 25 MHz board clock): PASS" in passing.text()
    assert "FAIL: 15.20 MHz is below the design clock" in failing.text() and not failing.timing_met
    assert BuildReport.from_json(failing.json) == failing
    assert "Fmax 17.88 MHz for a 25 MHz board clock: FAIL" in _report(17.88, 25, 25).text()
    with pytest.raises(BuildError, match="below the ulx3s-85f's 16 MHz design clock"):
        build._timing_verdict(failing, allow_timing_fail=False)


def test_the_passing_clock_suggested():
    assert build.passing_clock_mhz(17.88, 25 * MHZ, 1_000_000) == 16     # 17.88 * 0.95 = 16.99
    assert build.passing_clock_mhz(17.88, 25 * MHZ, 3_000_000) == 15     # 16 MHz / 3 Mbaud: 6.7 % off
    assert build.passing_clock_mhz(17.88, 33_333_333, 1_000_000) is None  # no whole MHz from 33.333333 MHz
    assert build.passing_clock_mhz(3.5, 25 * MHZ, 1_000_000) is None      # below the UART's 4 clocks per bit


# --- the command line ----------------------------------------------------------------------------

def test_clock_option_sets_the_design_clock():
    args = _parser().parse_args(["sim", "hopper", "HMMA.1684.F32.TF32", "--clock", "16"])
    assert config_from(args).clock_hz == 16 * MHZ and config_from(args).clocks_per_bit == 16
    args = _parser().parse_args(["build", "hopper", "HMMA.1684.F32.TF32", "--clock", "12.5"])
    assert args.clock == 12_500_000
    assert _parser().parse_args(["program", "hopper", "HMMA.1684.F32.TF32"]).clock == "auto"
    assert _parser().parse_args(["sim", "hopper", "HMMA.1684.F32.TF32"]).clock is None


@pytest.mark.parametrize("value", ["fast", "0", "16.0000001"])
def test_a_clock_that_is_not_a_frequency(capsys, value):
    with pytest.raises(SystemExit) as e:
        main(["build", "hopper", "HMMA.1684.F32.TF32", "--clock", value])
    assert e.value.code == 2 and "--clock" in capsys.readouterr().err


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


def test_a_clock_the_pll_cannot_make_is_refused_before_building(capsys, monkeypatch):
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("built"))
    err = _error(capsys, ["build", "hopper", "HMMA.1684.F32.TF32", "--clock", "17.3"])
    assert "cannot make exactly 17.3 MHz from 25 MHz; the nearest it makes: 17.299107 MHz" in err
    err = _error(capsys, ["build", "hopper", "HMMA.1684.F32.TF32", "--clock", "16", "--standin"])
    assert "--clock applies to the board top" in err
    err = _error(capsys, ["sim", "hopper", "HMMA.1684.F32.TF32", "--clock", "3"])
    assert "baud 1000000 is too fast for a 3000000 Hz clock" in err


def test_a_timing_fail_names_a_clock_that_passes(capsys, monkeypatch):
    seen = {}

    def fake_build(top, brd, design, **kw):
        top._MustUse__silence = True          # not elaborated: no toolchain here
        seen.update(kw, top=top)
        return _report(17.88, kw["clock_hz"] / MHZ, 25)

    monkeypatch.setattr(build, "build", fake_build)
    assert main(["build", "cdna3", "v_mfma_f32_32x32x8_f16", "--board", "ulx3s-85f", "--pipeline", "0",
                 "--clock", "25"]) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("error: timing FAIL: Fmax 17.88 MHz is below the 25 MHz board clock")
    assert "a slower design clock: --clock 16 (CLOCK=16)" in err
    assert seen["clock_hz"] == 25 * MHZ and seen["top"].config.clock_hz == 25 * MHZ
    assert main(["build", "cdna3", "v_mfma_f32_32x32x8_f16", "--clock", "16", "--baud", "500000",
                 "--pipeline", "0"]) == 0
    assert seen["clock_hz"] == 16 * MHZ and seen["top"].config.clock_hz == 16 * MHZ
    assert "16 MHz design clock (PLL from the 25 MHz board clock): PASS" in capsys.readouterr().out


def test_make_passes_clock_through():
    done = subprocess.run(["make", "-n", "-s", "-o", ".venv/.installed", "fpga", "ARCH=cdna3",
                           "INSTR=v_mfma_f32_32x32x8_f16", "CLOCK=16"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0 and "--clock 16" in done.stdout, done.stdout + done.stderr


# --- the real thing ------------------------------------------------------------------------------

@pytest.mark.slow
def test_cdna3_fdrda_board_top_meets_16_mhz_from_the_pll(capsys):
    """The board top that misses the ULX3S's 25 MHz (Fmax about 18 MHz) passes at a 16 MHz PLL clock."""
    assert main(["build", "cdna3", "v_mfma_f32_32x32x8_f16", "--board", "ulx3s-85f", "--clock", "16"]) == 0
    out = capsys.readouterr().out
    assert "for a 16 MHz design clock (PLL from the 25 MHz board clock): PASS" in out
    assert Path(out.split("bitstream: ")[1].split()[0]).stat().st_size > 100_000
