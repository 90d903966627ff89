"""fpga.bench: the board-against-host table on made-up build reports, and golden's rate on a tiny
budget (no timing is asserted: the numbers are the benchmark's, not the test's)."""

import golden
import pytest

from fpga import bench
from fpga.__main__ import main
from fpga.build import BuildReport, Resources

HGMMA = golden.lookup("hopper", "HGMMA.64xNx16.F32")


def _report(lanes=4, clock=25.0, fmax=30.0, unit="hopper HGMMA.64xNx16.F32") -> BuildReport:
    return BuildReport(board="ulx3s-85f", device="LFE5U-85F", design="d", build_dir="/b", bitstream="/b/top.bit",
                       clock_mhz=clock, fmax_mhz=fmax, used=Resources(30_000, 9_000, 64, 30),
                       synthesised=Resources(28_000, 9_000, 64, 30), capacity=Resources(83640, 83640, 156, 208),
                       critical_path=None, tools={"yosys": "0.64"}, unit=unit, lanes=lanes, multipliers="dsp")


def _rate(normal, bits) -> bench.GoldenRate:
    return bench.GoldenRate({"normal": normal, "bits": bits}, rows=1, seconds=1.0)


def test_golden_rate_on_a_tiny_budget():
    rate = bench.golden_rate([HGMMA], seconds=0.01, batch=64)
    assert set(rate.by_kind) == {"normal", "bits"} and all(r > 0 for r in rate.by_kind.values())
    assert rate.rows >= 2 * 2 * 64                      # at least two timed calls per kind
    assert min(rate.by_kind.values()) <= rate.stream <= max(rate.by_kind.values())
    with pytest.raises(ValueError, match="seconds must be positive"):
        bench.golden_rate([HGMMA], seconds=0)


def test_a_pool_of_two_measures_too():
    assert bench.pooled_rate([HGMMA], jobs=2, seconds=0.01, batch=64) > 0


def test_stream_is_the_harmonic_mean_of_the_kinds():
    assert _rate(4e6, 1e6).stream == pytest.approx(1.6e6)


def test_board_rate_is_lanes_times_the_met_design_clock():
    row = bench.BenchRow("hopper HGMMA.64xNx16.F32", "FDA", 4, "dsp", _report(), _rate(4e6, 1e6))
    assert row.board_rate == 4 * 25e6                   # the design clock, not the 30 MHz Fmax
    assert row.cores == pytest.approx(100e6 / 1.6e6)
    failing = bench.BenchRow("u", "FDA", 4, "dsp", _report(fmax=20.0), _rate(4e6, 1e6))
    assert failing.board_rate is None and failing.cores is None
    text = bench.table([row, failing])
    assert "100,000,000" in text and "62.5" in text and "timing FAIL" in text and "20.00 MHz (FAIL)" in text


def test_markdown_names_the_machine_and_the_command():
    row = bench.BenchRow("hopper HGMMA.64xNx16.F32", "FDA", 4, "dsp", _report(), _rate(4e6, 1e6), 3.0e6, 2)
    text = bench.markdown([row], "python -m fpga bench hopper HGMMA.64xNx16.F32", 2.0, when="2026-01-01")
    assert "`python -m fpga bench hopper HGMMA.64xNx16.F32`" in text and "2026-01-01" in text
    assert bench.machine() in text and "cores" in bench.machine()
    assert "| hopper HGMMA.64xNx16.F32 | FDA | 4 | dsp | 30,000 |" in text
    assert "2 processes at once 3,000,000 dot-adds/s, 94% of 2 x one core" in text


def test_row_of_a_report_measures_its_unit():
    row = bench.row_of(_report(lanes=2), seconds=0.01, batch=64)
    assert row.unit == "hopper HGMMA.64xNx16.F32" and row.algorithm == HGMMA.algorithm and row.lanes == 2
    with pytest.raises(ValueError, match="does not say which unit"):
        bench.row_of(_report(unit=""), seconds=0.01)


def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


def test_bench_errors(capsys, tmp_path):
    assert "ARCH INSTR" in _one_line_error(capsys, ["bench", "hopper"])
    assert "name units" in _one_line_error(capsys, ["bench"])
    assert "no build report" in _one_line_error(capsys, ["bench", "--reports", str(tmp_path)])
    assert "--seconds must be positive" in _one_line_error(capsys, ["bench", "--reports", str(tmp_path),
                                                                    "--seconds", "0"])


def test_bench_of_a_stored_report_writes_the_markdown(capsys, tmp_path):
    _report(lanes=3).write(tmp_path)
    out = tmp_path / "benchmark.md"
    assert main(["bench", "--reports", str(tmp_path), "--seconds", "0.01", "--markdown", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "75,000,000" in printed                      # 3 lanes x 25 MHz
    assert "| hopper HGMMA.64xNx16.F32 | FDA | 3 | dsp |" in out.read_text()
