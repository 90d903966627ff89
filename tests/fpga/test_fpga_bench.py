"""fpga.host.bench: the host's self-test check against a board lane, numpy, the compiled stages and the
fused path side by side, and the host-core targets, on made-up build reports or a given clock and a tiny
budget (no timing is asserted: the numbers are the benchmark's, not the test's)."""

import os

import pytest

import golden
from fpga.__main__ import main
from fpga.host import bench
from fpga.host.selftest.fast import available
from fpga.toolchain.build import BuildReport, Resources

HGMMA = golden.lookup("hopper", "HGMMA.64xNx16.F32")
UNIT = "hopper HGMMA.64xNx16.F32"
needs_numba = pytest.mark.skipif(not available(), reason="numba is not installed")
AFFINITY = os.sched_getaffinity(0)
SFMA_UNIT = "cdna3 v_mfma_f32_16x16x4_f32"          # the fused kernel the default suite compiles


def _report(lanes=4, clock=25.0, fmax=30.0, unit=UNIT) -> BuildReport:
    return BuildReport(board="ulx3s-85f", device="LFE5U-85F", design="d", build_dir="/b", bitstream="/b/top.bit",
                       clock_mhz=clock, fmax_mhz=fmax, used=Resources(30_000, 9_000, 64, 30),
                       synthesised=Resources(28_000, 9_000, 64, 30), capacity=Resources(83640, 83640, 156, 208),
                       critical_path=None, tools={"yosys": "0.64"}, unit=unit, lanes=lanes, multipliers="dsp")


def _rate(normal, bits, stages=None) -> bench.Rate:
    return bench.Rate({"normal": normal, "bits": bits}, rows=1, seconds=1.0, stages=stages or {})


# numba: in the worker that compiles golden's kernels (tests/golden/test_golden_kernels.py), which then
# come from numba's cache here instead of a second first compile (about 20 s on a fresh clone)
# numba: under -m slow (the staged path's first compiles cost about 25 s of a fresh clone's make test; the
# fused path, which the self-test runs, is timed by test_bench_targets_prints_pass_or_fail)
@pytest.mark.parametrize("path", [pytest.param("numba", marks=[needs_numba, pytest.mark.slow,
                                                               pytest.mark.xdist_group("golden_kernels")]),
                                  "numpy"])
def test_check_rate_on_a_tiny_budget(path):
    rate = bench.check_rate([HGMMA], path, seconds=0.01, batch=64)
    assert set(rate.by_kind) == {"normal", "bits"} and all(r > 0 for r in rate.by_kind.values())
    assert rate.rows >= 2 * 2 * 64                      # at least two timed calls per kind
    assert min(rate.by_kind.values()) <= rate.stream <= max(rate.by_kind.values())
    assert set(rate.stages) == {"operands", "golden", "signatures"}
    assert rate.stream <= min(rate.stages.values())     # the stages add up to the whole
    assert os.sched_getaffinity(0) == AFFINITY          # the timed part's pinning undone
    with pytest.raises(ValueError, match="seconds must be positive"):
        bench.check_rate([HGMMA], path, seconds=0)


def test_stream_is_the_harmonic_mean_of_the_kinds():
    assert _rate(4e6, 1e6).stream == pytest.approx(1.6e6)


def test_cores_per_lane_are_the_met_design_clock_over_the_rate():
    row = bench.BenchRow(UNIT, "FDA", 4, 25.0, _rate(4e5, 1e5), _rate(4e6, 1e6), 5e7, 2, _report(),
                         staged=_rate(2e6, 5e5))
    assert row.lane_rate == 25e6                        # the design clock, not the 30 MHz Fmax
    assert row.cores(row.before) == pytest.approx(25e6 / 1.6e5) and row.cores(row.after) == pytest.approx(25e6 / 1.6e6)
    assert row.lanes_checked == pytest.approx(2.0)
    failing = bench.BenchRow("u", "FDA", 4, 25.0, _rate(4e5, 1e5), _rate(4e6, 1e6), None, 1, _report(fmax=20.0))
    assert failing.lane_rate is None and failing.cores(failing.after) is None and failing.verdict == "-"
    text = bench.table([row, failing])
    assert "25,000,000" in text and "156.2" in text and "15.6" in text and "2.00x" in text and "timing FAIL" in text


def test_targets_by_algorithm_and_their_verdicts():
    """4 cores for the FDA class, 8 for GDFS and the GFDRDA family; PASS at or under the target."""
    def row(algorithm, per_core):
        return bench.BenchRow("u", algorithm, 1, 75.0, None, _rate(per_core, per_core))
    assert {a: row(a, 1.0).target for a in ("FDA", "CoFDA", "FDRDA", "CoFDRDA", "SFMA", "GPS")} == dict.fromkeys(
        ("FDA", "CoFDA", "FDRDA", "CoFDRDA", "SFMA", "GPS"), 4)
    assert {row(a, 1.0).target for a in ("GDFS", "GFDRDA", "CoGFDRDA")} == {8}
    assert row("FDA", 75e6 / 4).verdict == "PASS" and row("FDA", 75e6 / 4.01).verdict == "FAIL"
    assert row("GDFS", 75e6 / 8).verdict == "PASS" and row("CoGFDRDA", 75e6 / 8.5).verdict == "FAIL"
    assert row("custom", 1.0).target is None and row("custom", 1.0).verdict == "-"
    text = bench.target_table([row("FDA", 75e6 / 3), row("GDFS", 75e6 / 9)])
    assert "3.0" in text and "PASS" in text and "9.0" in text and "FAIL" in text and "1 of 2 units" in text
    assert {a for a, _ in [(golden.lookup(*u).algorithm, u) for u in bench.TARGET_UNITS]} == set(bench.TARGETS)


def test_markdown_names_the_machine_the_versions_and_the_command():
    stages = {"generator": 1e7, "golden": 2e6, "signatures": 1e8}
    row = bench.BenchRow(UNIT, "FDA", 4, 25.0, _rate(4e5, 1e5), _rate(4e6, 1e6), 3.0e6, 2, _report(),
                         staged=_rate(2e6, 5e5), stages=stages)
    text = bench.markdown([row], "python -m fpga bench hopper HGMMA.64xNx16.F32", 2.0, when="2026-01-01")
    assert "`python -m fpga bench hopper HGMMA.64xNx16.F32`" in text and "2026-01-01" in text
    assert bench.machine() in text.splitlines()[0] and "cores" in bench.machine() and "numpy " in text
    assert (f"| {UNIT} | FDA | 25 MHz | 25,000,000 | 160,000 | 800,000 | 1,600,000 | 2.00x | 156.2 | 15.6 | 4 | FAIL "
            f"| 3,000,000 (2) |" in text)
    assert f"| {UNIT} | 10,000,000 | 2,000,000 | 100,000,000 | 82% |" in text
    assert "30,000 LUT4" in text


@needs_numba
@pytest.mark.slow                        # every path of a unit, its first compiles included (about 18 s fresh)
def test_row_of_a_unit_measures_every_path():
    row = bench.row_of(SFMA_UNIT, 75.0, seconds=0.01, batch=64, jobs=2)
    assert row.unit == SFMA_UNIT and row.algorithm == "SFMA" and row.lane_rate == 75e6
    assert row.before.stream > 0 and row.staged.stream > 0 and row.after.stream > 0
    assert row.all_cores > 0 and row.jobs == 2 and row.verdict in ("PASS", "FAIL")
    assert set(row.stages) <= set(bench.FUSED_STAGES)   # a stage lost in the machine's noise is left out
    quick = bench.row_of(SFMA_UNIT, 75.0, seconds=0.01, batch=64, compare=False)
    assert quick.before is None and quick.staged is None and quick.all_cores is None and quick.after.stream > 0
    with pytest.raises(ValueError, match="does not say which unit"):
        bench.row_of("", 75.0, seconds=0.01, report=_report(unit=""))


@needs_numba
@pytest.mark.slow       # a timed run of the fused path (its first compile about 14 s fresh); the verdicts: above
def test_bench_targets_prints_pass_or_fail(capsys, monkeypatch):
    monkeypatch.setattr(bench, "BATCH", 64)
    assert main(["bench", "--targets", "cdna3", "v_mfma_f32_16x16x4_f32", "--seconds", "0.01"]) == 0
    printed = capsys.readouterr().out
    line = next(ln for ln in printed.splitlines() if ln.startswith(SFMA_UNIT))
    assert "75 MHz" in line and line.split()[-2] == "4" and line.split()[-1] in ("PASS", "FAIL")
    assert "of 1 units within their host-core targets" in printed


def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


def test_bench_errors(capsys, tmp_path):
    assert "ARCH INSTR" in _one_line_error(capsys, ["bench", "hopper"])
    assert "name units" in _one_line_error(capsys, ["bench"]) and "--targets" in _one_line_error(capsys, ["bench"])
    assert "no build report" in _one_line_error(capsys, ["bench", "--reports", str(tmp_path)])
    assert "--seconds must be positive" in _one_line_error(capsys, ["bench", "--reports", str(tmp_path),
                                                                    "--seconds", "0"])
    assert "--clock must be a positive" in _one_line_error(capsys, ["bench", "hopper", "HGMMA.64xNx16.F32",
                                                                    "--clock", "-5"])


@needs_numba
@pytest.mark.slow       # numpy, staged and fused paths timed (their first compiles about 20 s fresh)
def test_bench_of_a_stored_report_and_a_clock_writes_the_markdown(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "BATCH", 64)
    _report(lanes=3, unit="cdna3 v_mfma_f32_16x16x4_f32,v_mfma_f32_32x32x2_f32").write(tmp_path)
    out = tmp_path / "benchmark.md"
    assert main(["bench", "cdna3", "v_mfma_f32_16x16x4_f32", "--clock", "75", "--reports", str(tmp_path),
                 "--seconds", "0.01", "--jobs", "0", "--markdown", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "25,000,000" in printed and "75,000,000" in printed          # the report's clock, then --clock
    text = out.read_text()
    assert "| cdna3 v_mfma_f32_16x16x4_f32,v_mfma_f32_32x32x2_f32 | SFMA | 25 MHz |" in text
    assert f"| {SFMA_UNIT} | SFMA | 75 MHz |" in text
