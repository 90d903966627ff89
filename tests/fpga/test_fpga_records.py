"""The build records (``fpga.toolchain.records``, ``python -m fpga records``) and the defaults that come from
them: the manifest read and written, a record made from a finished build folder and from a kept
log, the re-check flagging a planted moved Fmax, a planted moved resource and a planted changed
verdict (and not a move within the noise), every clock domain judged (a sync domain below the
board clock fails), ``--clock auto`` and the Yosys release picked from the records, and bad input
in one line.  No tool runs: the builds are fakes writing a report into a folder."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from fpga.__main__ import _parser, main
from fpga.toolchain import build, records, records_table
from fpga.toolchain.build import BuildReport, CriticalPath, Resources
from fpga.toolchain.families import FAMILIES, PlaceAndRoute

REPO = Path(__file__).resolve().parent.parent.parent
MHZ = 1_000_000
HGMMA = ("hopper", "HGMMA.64xNx16.F32")


def _report(folder: Path, design: str, clock: float, fmax: dict, lut4: int = 15_757, unit: str = "hopper "
            "HGMMA.64xNx16.F32", board_clock: float = 25, tools=None, seed: int = 1) -> BuildReport:
    """A finished build's report.json (and nextpnr's top.report.json, named as nextpnr names the nets)."""
    folder.mkdir(parents=True, exist_ok=True)
    nets = {"$glbnet$clk_out": ("fast", clock), "$glbnet$clk": ("sync", board_clock)}
    pnr = {"fmax": {net: {"achieved": fmax[d], "constraint": c} for net, (d, c) in nets.items() if d in fmax}}
    (folder / "top.report.json").write_text(json.dumps(pnr))
    (folder / "build_top.json").write_text(json.dumps({"commands": [["yosys", "top.ys"], ["nextpnr-ecp5", "--report",
                                                                      "top.report.json", "--seed", str(seed)]]}))
    report = BuildReport(board="ulx3s-85f", device="LFE5U-85F", design=design, build_dir=str(folder),
                         bitstream=str(folder / "top.bit"), clock_mhz=clock, board_clock_mhz=board_clock,
                         fmax_mhz=fmax.get("fast", fmax.get("sync")), used=Resources(lut4, 13_090, 16, 19),
                         synthesised=Resources(lut4, 13_090, 16, 19), capacity=Resources(83_640, 83_640, 156, 208),
                         critical_path=CriticalPath("a", "b", 9.6, 2.4, 7.2, 10), unit=unit, lanes=1,
                         tools=tools or {"yosys": "0.64 (git sha1 6d2c445ae)", "nextpnr-ecp5": "nextpnr-0.11.1"},
                         steps=[("synthesis", 100.0), ("place and route", 500.0)])
    report.write(folder)
    return report


@pytest.fixture
def manifest(tmp_path, monkeypatch):
    """An empty manifest in tmp_path, made the one builds and ``python -m fpga records`` read."""
    path = tmp_path / "records.toml"
    monkeypatch.setattr(records, "MANIFEST", path)
    return path


def _hgmma_record(tmp_path, clock=100, fmax=None, **kw) -> records.BuildRecord:
    design = f"hopper_HGMMA.64xNx16.F32_x1_p3_{clock}MHz"
    _report(tmp_path / "given" / design, design, clock, fmax or {"fast": 104.33, "sync": 72.31}, **kw)
    return records.record_from_build(tmp_path / "given" / design, commit="abc1234", machine="test")


# --- records: read, written, made from builds -----------------------------------------------------

def test_a_record_from_a_finished_build_folder(tmp_path):
    rec = _hgmma_record(tmp_path)
    assert rec.name == "hopper/HGMMA.64xNx16.F32/p3/100MHz"
    assert (rec.arch, rec.instr, rec.pipeline, rec.clock_mhz, rec.seed, rec.yosys, rec.standin) == \
        (*HGMMA, "3", 100, 1, None, False)
    res = rec.result
    assert res.verdict == "PASS" and res.fmax == {"fast": 104.33, "sync": 72.31} and res.clocks == \
        {"fast": 100, "sync": 25}
    assert (res.lut4, res.ff, res.dsp, res.ebr, res.two_domains, res.selftest) == (15_757, 13_090, 16, 19, True, True)
    assert res.commit == "abc1234" and res.wall_s == 600.0
    assert res.source == "build folder fpga/given/hopper_HGMMA.64xNx16.F32_x1_p3_100MHz"
    assert rec.command() == "python -m fpga build hopper HGMMA.64xNx16.F32 --pipeline 3 --clock 100"
    again = _hgmma_record(tmp_path / "again", seed=2, tools={"yosys": "0.70 (git sha1 28ba3cb92)"})
    assert again.name.endswith("/seed2") and (again.seed, again.yosys) == (2, "env")
    assert again.command().endswith("--yosys env --seed 2")


def test_the_manifest_round_trips_and_each_command_is_the_cli(tmp_path):
    rec = _hgmma_record(tmp_path)
    env = replace(rec, name="x/env", yosys="env", seed=2)
    text = records.dumps([rec, env])
    assert records.parse(text) == [rec, env]
    kept = records.load(records.MANIFEST)
    assert len(kept) >= 10 and all(r.result is not None for r in kept)
    for r in kept:                                      # the command a record shows is one the parser takes
        args = _parser().parse_args(r.command().split()[3:])
        assert (args.arch, args.instr, args.pipeline) == (r.arch, r.instr, r.pipeline), r.name


def test_a_record_from_a_kept_build_log():
    rec = records.record_from_log(REPO / "docs" / "fpga" / "make_fpga_cdna3_v_mfma_f32_32x32x16_fp8_fp8_p3.txt")
    assert rec.name == "cdna3/v_mfma_f32_32x32x16_fp8_fp8/p3/75MHz" and rec.yosys == "env"
    assert rec.result.fmax == {"fast": 84.23} and rec.result.lut4 == 9_266 and rec.result.commit == "2d838dd"


# --- every clock domain judged ----------------------------------------------------------------------

def test_a_sync_domain_below_the_board_clock_fails(tmp_path):
    rec = _hgmma_record(tmp_path, fmax={"fast": 104.33, "sync": 22.5})
    assert rec.result.verdict == "FAIL"
    report = BuildReport.from_json((tmp_path / "given" / "hopper_HGMMA.64xNx16.F32_x1_p3_100MHz"
                                    / "report.json").read_text())
    report.domains = build.clock_domains(json.loads((Path(report.build_dir) / "top.report.json").read_text()),
                                         100 * MHZ, 25 * MHZ)
    assert report.failing_domains == ["sync"] and not report.timing_met
    assert "sync: UART and host link): FAIL" in report.text() and "timing: FAIL: sync" in report.text()


def test_the_build_names_the_failing_domain_in_one_line(capsys, monkeypatch, tmp_path, manifest):
    def fake_build(top, brd, design, **kw):
        top._MustUse__silence = True          # not elaborated: no toolchain here
        report = _report(tmp_path / design, design, kw["clock_hz"] / MHZ, {"fast": 104.0, "sync": 22.5})
        report.domains = build.clock_domains(json.loads((tmp_path / design / "top.report.json").read_text()),
                                             kw["clock_hz"], 25 * MHZ)
        return report

    monkeypatch.setattr(build, "build", fake_build)
    assert main(["build", *HGMMA, "--clock", "100"]) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("error: timing FAIL: the sync domain (the board's oscillator: the UART and the host "
                          "link) reaches 22.50 MHz, below its 25 MHz"), err
    assert "--seed 2" in err and "fast" not in err


# --- the re-check ---------------------------------------------------------------------------------

def _fake_builds(monkeypatch, tmp_path, planted: dict):
    """``fpga.toolchain.build.build`` replaced: a report of HGMMA at the record's numbers, or as ``planted`` says
    (design -> fmax dict, lut4)."""
    def fake_build(top, brd, design, **kw):
        top._MustUse__silence = True
        fmax, lut4 = planted.get(design, ({"fast": 104.33, "sync": 72.31}, 15_757))
        return _report(tmp_path / "now" / design, design, kw["clock_hz"] / MHZ, fmax, lut4)
    monkeypatch.setattr(build, "build", fake_build)


def _recheck(capsys, *options) -> tuple[int, str, str]:
    code = main(["records", *options])
    out, err = capsys.readouterr()
    return code, out, err


def test_nothing_moved_exits_0_and_prints_record_against_now(capsys, monkeypatch, tmp_path, manifest):
    records.dump([_hgmma_record(tmp_path)])
    _fake_builds(monkeypatch, tmp_path, {})
    code, out, err = _recheck(capsys, "--report", str(tmp_path / "table.md"))
    assert code == 0, out + err
    assert "| hopper/HGMMA.64xNx16.F32/p3/100MHz | 15,757 | 13,090 | 16 | 19 | fast 104.33, sync 72.31 | PASS | - |" \
        in out
    assert "placement noise: Fmax 5%, resources 1% (5 % Fmax (seeds 1 and 2" in err
    assert "0 of 1 moved" in err and "PASS" in (tmp_path / "table.md").read_text()


@pytest.mark.parametrize("planted, flagged", [
    (({"fast": 97.0, "sync": 72.31}, 15_757), "Fmax fast 104.33 -> 97.00 MHz (-7.0 %)"),     # beyond 5 %
    (({"fast": 104.33, "sync": 60.0}, 15_757), "Fmax sync 72.31 -> 60.00 MHz"),
    (({"fast": 104.33, "sync": 72.31}, 16_100), "LUT4 15,757 -> 16,100 (+2.2 %)"),            # beyond 1 %
    (({"fast": 99.5, "sync": 72.31}, 15_757), "verdict PASS -> FAIL"),                         # Fmax within 5 %
])
def test_a_planted_move_or_verdict_is_flagged(capsys, monkeypatch, tmp_path, manifest, planted, flagged):
    records.dump([_hgmma_record(tmp_path)])
    _fake_builds(monkeypatch, tmp_path, {"hopper_HGMMA.64xNx16.F32_x1_p3_100MHz": planted})
    code, out, err = _recheck(capsys)
    assert code == 1 and flagged in out, out
    assert "1 of 1 moved beyond the noise or changed verdict: hopper/HGMMA.64xNx16.F32/p3/100MHz" in err


def test_a_move_within_the_noise_is_not_flagged_and_update_rewrites(capsys, monkeypatch, tmp_path, manifest):
    records.dump([_hgmma_record(tmp_path)])
    _fake_builds(monkeypatch, tmp_path, {"hopper_HGMMA.64xNx16.F32_x1_p3_100MHz": ({"fast": 101.0, "sync": 74.0},
                                                                                     15_800)})
    code, out, _ = _recheck(capsys, "--update")
    assert code == 0 and "104.33 -> 101.00" in out and "15,757 -> 15,800" in out
    rec, = records.load()
    assert rec.result.fmax == {"fast": 101.0, "sync": 74.0} and rec.result.lut4 == 15_800


def test_a_failed_rebuild_is_flagged_and_the_others_still_run(capsys, monkeypatch, tmp_path, manifest):
    hgmma = _hgmma_record(tmp_path)
    records.dump([hgmma, replace(hgmma, name="hopper/HGMMA.64xNx16.F32/p3/100MHz/seed2", seed=2)])

    def fake_build(top, brd, design, seed, **kw):
        top._MustUse__silence = True
        if seed == 2:
            raise build.BuildError("synthesis failed (exit status 1): ERROR: planted")
        return _report(tmp_path / "now" / design, design, 100, {"fast": 104.33, "sync": 72.31})

    monkeypatch.setattr(build, "build", fake_build)
    code, out, _ = _recheck(capsys, "--jobs", "2")
    assert code == 1 and "verdict PASS -> ERROR (synthesis failed (exit status 1): ERROR: planted)" in out
    assert "| hopper/HGMMA.64xNx16.F32/p3/100MHz | 15,757 |" in out


def test_from_build_adds_a_record(capsys, tmp_path, manifest):
    rec = _hgmma_record(tmp_path)
    assert main(["records", "--from-build", str(tmp_path / "given" / "hopper_HGMMA.64xNx16.F32_x1_p3_100MHz"),
                 "--commit", "abc1234"]) == 0
    got, = records.load()
    assert got.name == rec.name and got.result.fmax == rec.result.fmax and got.result.commit == "abc1234"


# --- defaults from the records --------------------------------------------------------------------

def _chosen(capsys, monkeypatch, argv) -> tuple[dict, str]:
    seen = {}

    def fake_build(top, brd, design, **kw):
        top._MustUse__silence = True
        seen.update(kw, design=design)
        raise build.BuildError("stop here")

    monkeypatch.setattr(build, "build", fake_build)
    assert main(["build", *argv]) == 2
    return seen, capsys.readouterr().err


def test_auto_clock_is_the_fastest_its_record_closed(capsys, monkeypatch, tmp_path, manifest):
    passed = _hgmma_record(tmp_path)
    failed = replace(_hgmma_record(tmp_path, clock=120, fmax={"fast": 104.0, "sync": 72.0}), name="at120")
    assert failed.result.verdict == "FAIL"
    seen, err = _chosen(capsys, monkeypatch, HGMMA)
    assert seen["clock_hz"] == 75 * MHZ and "no record of this design closes a faster one" in err
    records.dump([passed, failed])
    seen, err = _chosen(capsys, monkeypatch, HGMMA)
    assert seen["clock_hz"] == 100 * MHZ
    assert ("pipelining level 3 and a 100 MHz design clock: the fastest its record closed "
            "(hopper/HGMMA.64xNx16.F32/p3/100MHz: fast 104.33, sync 72.31 MHz)") in err
    seen, err = _chosen(capsys, monkeypatch, [*HGMMA, "--pipeline", "2"])      # no record at level 2
    assert seen["clock_hz"] == 25 * MHZ and "no record of level 2 closes a faster one" in err
    seen, _ = _chosen(capsys, monkeypatch, [*HGMMA, "--seed", "2"])             # its own folder: seed 1's stays
    assert seen["design"] == "hopper_HGMMA.64xNx16.F32_x1_p3_100MHz_seed2" and seen["seed"] == 2


def test_auto_yosys_from_the_record_or_the_known_aborts(capsys, monkeypatch, tmp_path, manifest):
    seen, err = _chosen(capsys, monkeypatch, ["blackwell", "UTCOMMA.MXF4NVF4.E8.B32"])        # GDFS, no record
    assert seen["yosys_version"] == "env" and "known to fail on GDFS" in err
    seen, err = _chosen(capsys, monkeypatch, ["cdna3", "v_mfma_f32_32x32x16_fp8_bf8"])       # GFDRDA: the pin again
    assert seen["yosys_version"] is None and "yosys:" not in err
    seen, err = _chosen(capsys, monkeypatch, HGMMA)
    assert seen["yosys_version"] is None and "yosys:" not in err        # the family's pin
    records.dump([replace(_hgmma_record(tmp_path), yosys="env")])
    seen, err = _chosen(capsys, monkeypatch, HGMMA)
    assert seen["yosys_version"] == "env" and "its record hopper/HGMMA.64xNx16.F32/p3/100MHz was built with it" in err
    seen, _ = _chosen(capsys, monkeypatch, [*HGMMA, "--yosys", "0.64.0.0.post1131"])         # named: kept
    assert seen["yosys_version"] == "0.64.0.0.post1131"
    other = replace(_hgmma_record(tmp_path), name="x", pipeline="3,merge=3", yosys="0.66.0.0.post1")
    ours = replace(_hgmma_record(tmp_path), yosys="env")
    assert records.yosys_choice([other, ours], FAMILIES["ecp5"], *HGMMA, "ulx3s-85f", "3") == \
        ("env", "its record hopper/HGMMA.64xNx16.F32/p3/100MHz was built with it")      # the level's own first
    assert set(FAMILIES["ecp5"].yosys_aborts) == {"GDFS"}



def test_auto_place_and_route_from_the_record_and_read_back_from_the_plan(capsys, monkeypatch, tmp_path, manifest):
    seen, err = _chosen(capsys, monkeypatch, HGMMA)
    assert seen["pnr"] == PlaceAndRoute() and "place and route:" not in err     # nextpnr's own (the family's)
    routed = replace(_hgmma_record(tmp_path), router="router2", placer="static", tmg_ripup=True)
    records.dump([routed])
    assert routed.command().endswith("--clock 100 --router router2 --placer static --tmg-ripup")
    assert (routed.request()["router"], routed.request()["placer"], routed.request()["tmg_ripup"]) == \
        ("router2", "static", True)
    assert records.load() == [routed]                                           # the manifest keeps all three
    seen, err = _chosen(capsys, monkeypatch, HGMMA)
    assert seen["pnr"] == PlaceAndRoute("router2", "static", True)
    assert ("place and route: --router router2 --placer static --tmg-ripup for hopper HGMMA.64xNx16.F32: its record "
            "hopper/HGMMA.64xNx16.F32/p3/100MHz was placed and routed with them") in err
    seen, err = _chosen(capsys, monkeypatch, [*HGMMA, "--router", "router1", "--no-tmg-ripup"])  # named: kept
    assert seen["pnr"] == PlaceAndRoute("router1", "static", False)
    assert "place and route: --placer static for" in err                        # only what was left to auto
    seen, err = _chosen(capsys, monkeypatch, [*HGMMA, "--router", "router1", "--placer", "heap", "--no-tmg-ripup"])
    assert seen["pnr"] == PlaceAndRoute("router1", "heap", False) and "place and route:" not in err
    design = "hopper_HGMMA.64xNx16.F32_x1_p3_100MHz"
    folder = tmp_path / "given" / design
    plan = json.loads((folder / "build_top.json").read_text())
    plan["commands"][1][-2:-2] = ["--router", "router2", "--placer", "static", "--tmg-ripup"]
    (folder / "build_top.json").write_text(json.dumps(plan))
    assert records.record_from_build(folder, commit="abc1234").pnr() == PlaceAndRoute("router2", "static", True)
    assert records.pnr_choice([], FAMILIES["ecp5"], *HGMMA, "ulx3s-85f") == (PlaceAndRoute(), "")
    # several records of one design: the one of the level being built first, then one that closed timing
    missed = replace(routed, name="p3 heap", placer=None, tmg_ripup=False,
                     result=replace(routed.result, verdict="FAIL"))
    override = replace(routed, name="p3 override", pipeline="3,partials=1")
    ecp5 = FAMILIES["ecp5"]
    assert records.pnr_choice([missed, override], ecp5, *HGMMA, "ulx3s-85f", "3")[0] == PlaceAndRoute("router2")
    assert records.pnr_choice([missed, override], ecp5, *HGMMA, "ulx3s-85f", "3,partials=1")[0] == \
        PlaceAndRoute("router2", "static", True)
    assert records.pnr_choice([missed, override], ecp5, *HGMMA, "ulx3s-85f", "2")[1] == \
        "its record p3 override was placed and routed with them"
    logged = records._logged_request([*HGMMA, "--placer", "static", "--tmg-ripup", "--standin"], "a log")
    assert (logged.placer, logged.tmg_ripup, logged.standin) == ("static", True, True)


def test_auto_pipeline_takes_an_override_only_where_the_level_missed(capsys, monkeypatch, tmp_path, manifest):
    missed = _hgmma_record(tmp_path, clock=75, fmax={"fast": 73.5, "sync": 68.6})
    assert missed.result.verdict == "FAIL"
    closed = replace(missed, name="hopper/HGMMA.64xNx16.F32/p3,merge=3/75MHz", pipeline="3,merge=3",
                     result=replace(missed.result, verdict="PASS", fmax={"fast": 77.0, "sync": 70.0}))
    records.dump([missed])
    seen, err = _chosen(capsys, monkeypatch, HGMMA)
    assert "_p3_75MHz" in seen["design"] and "pipelining:" not in err           # nothing closed: the level
    records.dump([missed, closed])
    seen, err = _chosen(capsys, monkeypatch, HGMMA)
    assert "_p3_merge3_75MHz" in seen["design"], seen["design"]
    assert "pipelining: 3,merge=3 for hopper HGMMA.64xNx16.F32: no record at level 3 closed timing" in err
    passed = replace(missed, result=replace(missed.result, verdict="PASS", fmax={"fast": 76.0, "sync": 70.0}))
    records.dump([passed, closed])
    seen, _ = _chosen(capsys, monkeypatch, HGMMA)
    assert "_p3_75MHz" in seen["design"]                                          # the level closes: kept
    seen, _ = _chosen(capsys, monkeypatch, [*HGMMA, "--pipeline", "2"])
    assert "_p2" in seen["design"] and "MHz" not in seen["design"]               # another level: the board's clock
    records.dump([])
    seen, _ = _chosen(capsys, monkeypatch, [*HGMMA, "--pipeline", "3,align=2"])
    assert seen["design"].endswith("_p3_align2_75MHz")                          # the level's overrides: its clock


def test_the_plan_names_nextpnrs_choices_and_one_the_family_lacks_is_refused():
    from amaranth import Elaboratable, Module, Signal

    from fpga.toolchain.boards import board as find_board

    class Blink(Elaboratable):
        def elaborate(self, platform):
            m, count = Module(), Signal(8)
            m.d.sync += count.eq(count + 1)
            return m

    brd = find_board("ulx3s-85f")
    chosen = PlaceAndRoute(router="router2", placer="static", tmg_ripup=True)
    script = build._prepare(Blink(), brd, 1, "dsp", 1, None, pnr=chosen).files["build_top.sh"]
    assert "--seed 1 --router router2 --placer static --tmg-ripup" in script
    plain = build._prepare(Blink(), brd, 1, "dsp", 1, None).files["build_top.sh"]
    assert not {"--router", "--placer", "--tmg-ripup"} & set(plain.split())
    refused = Blink()
    refused._MustUse__silence = True
    with pytest.raises(ValueError, match="router 'router3' is not one of the ecp5 family's: router1, router2$"):
        build.build(refused, brd, "x", pnr=PlaceAndRoute(router="router3"))
    with pytest.raises(ValueError, match="placer 'analytic' is not one of the ecp5 family's: heap, static, sa$"):
        build.build(refused, brd, "x", pnr=PlaceAndRoute(placer="analytic"))


# --- bad input ------------------------------------------------------------------------------------

def _one_line(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


def test_bad_input_is_one_line(capsys, tmp_path, manifest):
    records.dump([_hgmma_record(tmp_path)])
    err = _one_line(capsys, ["records", "--only", "nosuch"])
    assert "--only 'nosuch' matches no record; the records: hopper/HGMMA.64xNx16.F32/p3/100MHz" in err
    manifest.write_text(manifest.read_text().replace('lut4 = 15757', 'lut4 = 15,757'))
    assert "not a records manifest" in _one_line(capsys, ["records"])
    manifest.write_text(manifest.read_text().replace('lut4 = 15,757', 'lut4 = -3'))
    assert "lut4 = -3 is not a count" in _one_line(capsys, ["records"])
    manifest.write_text(manifest.read_text().replace('lut4 = -3', 'lut4 = 1').replace('ebr = 19\n', ''))
    assert "result lacks ebr" in _one_line(capsys, ["records"])
    manifest.write_text(manifest.read_text().replace('pipeline = "3"', 'pipe = "3"'))
    assert "unknown field 'pipe'; valid:" in _one_line(capsys, ["records"])
    manifest.unlink()
    assert "no records (python -m fpga records --from-build FOLDER adds one)" in _one_line(capsys, ["records"])
    assert "no such build folder or build log" in _one_line(capsys, ["records", "--from-build", str(tmp_path / "no")])
    assert "no report.json" in _one_line(capsys, ["records", "--from-build", str(tmp_path)])
    with pytest.raises(SystemExit) as stopped:                               # argparse's own error, one line
        main(["build", *HGMMA, "--placer", "nope"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.count("\n") == 1 and "argument --placer: invalid choice: 'nope'" in err


def test_make_passes_nextpnrs_choices_through():
    done = subprocess.run(["make", "-n", "-s", "-o", ".venv/.installed", "fpga", "ARCH=cdna3",
                           "INSTR=v_mfma_f32_16x16x4_f32", "ROUTER=router2", "PLACER=static", "TMG_RIPUP=1"],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0 and "--router router2 --placer static --tmg-ripup=1" in " ".join(done.stdout.split())
    done = subprocess.run(["make", "-n", "-s", "-o", ".venv/.installed", "fpga", "ARCH=cdna3",
                           "INSTR=v_mfma_f32_16x16x4_f32", "TMG_RIPUP=0"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0 and "--tmg-ripup=0" in done.stdout and "--placer" not in done.stdout


def test_make_targets_run_the_records_in_the_foreground_and_the_background():
    for target, expected in (("fpga-records", "-m fpga records"), ("fpga-records-bg", "nohup")):
        done = subprocess.run(["make", "-n", "-s", "-o", ".venv/.installed", target, "ONLY=seed2"], cwd=REPO,
                              capture_output=True, text=True)
        assert done.returncode == 0 and expected in done.stdout and "--only seed2" in done.stdout, done.stdout


def test_the_defaults_pick_a_passing_record_wherever_one_exists():
    """The defaults come from these records: for each ECP5 board top recorded, the pipelining and clock
    the defaults pick (fpga.toolchain.records.pipeline_choice, fastest_clock) are a record that met timing at
    the family's clock or faster, whenever some record of that top at the family's level (or an
    override of it) did; the tops that no record closes are the README's "Not done"."""
    ecp5 = FAMILIES["ecp5"]
    manifest = records.load(records.MANIFEST)
    tops = {(r.arch, r.instr) for r in manifest if not r.standin and r.board == "ulx3s-85f"}
    assert len({records_table.algorithm(r) for r in manifest if (r.arch, r.instr) in tops}) == 9
    level = ecp5.default_pipeline
    for arch, instr in sorted(tops):
        closed = [r for r in manifest if (r.arch, r.instr, r.board) == (arch, instr, "ulx3s-85f") and not r.standin
                  and r.pipeline.split(",")[0] == level and r.result.verdict == "PASS"]
        spec, _ = records.pipeline_choice(manifest, arch, instr, "ulx3s-85f", level)
        chosen = records.fastest_clock(manifest, arch, instr, "ulx3s-85f", spec)
        if closed:
            assert chosen is not None and chosen.clock_mhz >= ecp5.default_clock_mhz, (arch, instr, spec)
        else:
            assert chosen is None and spec == level, (arch, instr, spec)


def test_every_algorithms_board_top_closes_the_familys_clock_at_the_defaults():
    """Issue 24's goal, held by the records: for each of the nine algorithms' ULX3S board tops the
    defaults pick a record that met the family's clock or faster, and place and route the way that
    record was (so that a build with no options is that record's build)."""
    ecp5 = FAMILIES["ecp5"]
    manifest = records.load(records.MANIFEST)
    tops = {(r.arch, r.instr) for r in manifest if not r.standin and r.board == "ulx3s-85f"}
    for arch, instr in sorted(tops):
        spec, _ = records.pipeline_choice(manifest, arch, instr, "ulx3s-85f", ecp5.default_pipeline)
        chosen = records.fastest_clock(manifest, arch, instr, "ulx3s-85f", spec)
        assert chosen is not None and chosen.result.verdict == "PASS", (arch, instr, spec)
        assert chosen.clock_mhz >= ecp5.default_clock_mhz and chosen.seed == 1, chosen.name
        pnr, _ = records.pnr_choice(manifest, ecp5, arch, instr, "ulx3s-85f", spec)
        assert pnr == chosen.pnr(), chosen.name


def test_a_release_that_fails_is_retried_with_the_other(capsys, monkeypatch, tmp_path, manifest):
    """--yosys auto chose the pin and it failed (an abort the known list does not name): built again with env,
    said in one line; the other way round where a record chose env; a release the user named is not
    second-guessed."""
    tried, failing = [], {None, "0.64.0.0.post1131"}

    def fake_build(top, brd, design, yosys_version, **kw):
        top._MustUse__silence = True
        tried.append(yosys_version)
        if yosys_version in failing:
            raise build.BuildError("synthesis failed (exit status 134) after 60 s: ERROR: Assert failed; see log")
        return _report(tmp_path / design, design, 75, {"fast": 80.0, "sync": 70.0})

    monkeypatch.setattr(build, "build", fake_build)
    assert main(["build", "ampere", "HMMA.16816.F32"]) == 0 and tried == [None, "env"]
    err = capsys.readouterr().err
    assert "yosys: the ecp5 pin 0.64.0.0.post1131 did not build ampere HMMA.16816.F32 (synthesis failed" in err
    assert "building again with the environment's release (--yosys env)" in err
    tried.clear()
    assert main(["build", "ampere", "HMMA.16816.F32", "--yosys", "0.64.0.0.post1131"]) == 2 and tried == [
        "0.64.0.0.post1131"]
    tried.clear()
    failing = {"env"}
    records.dump([replace(_hgmma_record(tmp_path), yosys="env")])
    assert main(["build", *HGMMA]) == 0 and tried == ["env", None]
    err = capsys.readouterr().err
    assert "yosys: the environment's release did not build hopper HGMMA.64xNx16.F32 (synthesis failed" in err
    assert "building again with the ecp5 pin 0.64.0.0.post1131 (--yosys 0.64.0.0.post1131)" in err


# --- the records as the docs show them ------------------------------------------------------------

def test_the_docs_table_is_the_manifests():
    """docs/fpga/README.md's records table is ``python -m fpga records --table``: a record changed in the
    manifest and not in the docs (or the other way) fails here."""
    from fpga.toolchain.records_table import docs_block, markdown
    shown = docs_block((REPO / "docs" / "fpga" / "README.md").read_text())
    manifest = records.load(records.MANIFEST)
    assert shown == markdown(manifest), "regenerate it: python -m fpga records --table"
    first = manifest[0]
    planted = [replace(first, result=replace(first.result, lut4=first.result.lut4 + 1))] + manifest[1:]
    assert markdown(planted) != shown


def test_table_rows_name_the_algorithm_the_build_and_every_domain(capsys, tmp_path, manifest):
    from fpga.toolchain.records_table import algorithm, built_as, markdown
    rec = _hgmma_record(tmp_path)
    standin = replace(rec, name="standin", standin=True)
    text = markdown([rec, standin])
    row = text.splitlines()[2]
    assert algorithm(rec) == "FDA" and "fast 100, sync 25" in row and "fast 104.33, sync 72.31" in row
    assert "15,757" in row and "abc1234" in row
    assert built_as(rec) == "board top, self-test, two clock domains" and "--standin" in built_as(standin)
    records.dump([rec], manifest)
    assert main(["records", "--table", "--manifest", str(manifest)]) == 0
    assert capsys.readouterr().out == markdown([rec])


def test_a_document_without_the_table_is_one_line():
    from fpga.toolchain.records_table import docs_block
    with pytest.raises(ValueError, match="no records table"):
        docs_block("# a README\n")


def test_from_build_rewrites_the_table_beside_the_manifest(capsys, tmp_path, manifest):
    from fpga.toolchain.records_table import BEGIN, END, docs_block, markdown
    readme = manifest.with_name("README.md")
    readme.write_text(f"# records\n\n{BEGIN}\n{markdown([])}{END}\n\nafter\n")
    _hgmma_record(tmp_path)
    folder = tmp_path / "given" / "hopper_HGMMA.64xNx16.F32_x1_p3_100MHz"
    assert main(["records", "--from-build", str(folder), "--manifest", str(manifest)]) == 0
    assert "its table in" in capsys.readouterr().out
    text = readme.read_text()
    assert docs_block(text) == markdown(records.load(manifest)) and "hopper/HGMMA" in text and text.endswith("after\n")
