"""``python -m probe`` on bad input and misbehaving devices: one ``error:`` line and exit status 2, never a
traceback; an output path checked before the probe.

The misbehaving device is tests/data/dut/trouble.sv behind tests/data/dut/trouble.toml (its +MODE plusarg picks
how it misbehaves): one small Verilator build, shared with tests/cosim/test_dut_robustness.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from probe import __main__ as cli

DATA = Path(__file__).resolve().parents[1] / "data" / "dut"


def _error_line(capsys, argv) -> str:
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    err = err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: "), (rc, out, err)
    assert "Traceback" not in out
    return err[0]


def _trouble(folder: Path, mode: int) -> Path:
    shutil.copy(DATA / "trouble.sv", folder)
    path = folder / f"mode{mode}.toml"
    path.write_text((DATA / "trouble.toml").read_text().replace('"+MODE=0"', f'"+MODE={mode}"'))
    return path


@pytest.mark.parametrize("mode, words", [
    (0, "the unit made no progress for"),                               # never answers
    (2, "its combinational logic never settled"),                       # a combinational loop
    (3, "the unit produced"),                                           # extra outputs
])
def test_probe_of_a_device_that_fails_is_one_line(tmp_path, capsys, mode, words):
    line = _error_line(capsys, ["--device", f"dut:{_trouble(tmp_path, mode)}"])
    assert words in line and "trouble" in line, line


def test_probe_of_a_device_that_hangs_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MMA_COSIM_NO_PROGRESS", "4")
    line = _error_line(capsys, ["--device", f"dut:{_trouble(tmp_path, 1)}"])
    assert "the simulation made no progress for 4 s" in line, line


@pytest.mark.parametrize("spec", ["dut:", "dut: "])
def test_probe_dut_backend_without_a_path_is_one_line(capsys, spec):
    line = _error_line(capsys, ["--device", spec])
    assert "dut: needs the description's path, e.g. dut:examples/dut/dotp_vr/unit.toml" in line, line


@pytest.mark.parametrize("argv", [
    ["volta", "HMMA.884.F16.F16"],
    ["volta", "HMMA.884.F16.F16,HMMA.884.F32.F32"],
])
def test_probe_json_path_is_checked_before_the_probe(tmp_path, capsys, argv):
    (tmp_path / "f").write_text("")
    line = _error_line(capsys, [*argv, "--json", str(tmp_path / "f" / "report.json")])
    assert "--json" in line and "is a file, not a folder" in line, line


def test_probe_keeps_its_report_when_the_json_cannot_be_written(tmp_path, capsys, monkeypatch):
    import builtins
    real_open = builtins.open
    target = tmp_path / "report.json"

    def failing_open(path, mode="r", *args, **kw):
        if str(path) == str(target) and "w" in mode:
            raise OSError(28, "No space left on device", str(path))
        return real_open(path, mode, *args, **kw)
    monkeypatch.setattr(builtins, "open", failing_open)
    rc = cli.main(["volta", "HMMA.884.F16.F16", "--quiet", "--json", str(target)])
    out, err = capsys.readouterr()
    assert rc == 2 and out.strip(), out                  # the comparison line is printed, then the error
    assert "the report could not be written (No space left on device)" in err, err
