"""The defaults ``make fpga`` builds at (``--pipeline auto --clock auto``): each family's level and
design clock, checked against the records in docs/fpga/ (every board top recorded at the default
pair met its clock), and said on stderr.  No tool runs: the build is a fake."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from fpga.__main__ import main
from fpga.toolchain import build
from fpga.toolchain.families import FAMILIES

REPO = Path(__file__).resolve().parent.parent.parent
RECORDS = REPO / "docs" / "fpga"
MHZ = 1_000_000


def _records():
    """(command options, Fmax MHz, verdict) of every build record of the ECP5 boards in docs/fpga/."""
    found = []
    for path in sorted(RECORDS.glob("make_fpga_*.txt")):
        text = path.read_text()
        command = text.splitlines()[0]
        fmax = re.search(r"Fmax ([\d.]+) MHz for a .*?: (PASS|FAIL)", text)
        if fmax and command.startswith("$ python -m fpga build"):
            found.append((command, float(fmax.group(1)), fmax.group(2), path.name))
    return found


def _at(command: str, option: str) -> str | None:
    found = re.search(rf"{option} (\S+)", command)
    return found.group(1) if found else None


def test_every_board_top_recorded_at_the_ecp5_default_met_it():
    ecp5 = FAMILIES["ecp5"]
    at_default = [(cmd, fmax, verdict, name) for cmd, fmax, verdict, name in _records()
                  if "--standin" not in cmd and "--board" not in cmd
                  and _at(cmd, "--pipeline") == ecp5.default_pipeline
                  and _at(cmd, "--clock") == str(ecp5.default_clock_mhz)]
    algorithms = {cmd.split()[6] for cmd, *_ in at_default}      # the instruction of each record
    assert len(at_default) >= 5 and "HGMMA.64xNx16.F32" in algorithms, at_default
    for _cmd, fmax, verdict, name in at_default:
        assert verdict == "PASS" and fmax >= ecp5.default_clock_mhz, name


def test_a_faster_default_would_be_caught_by_the_records():
    """The check above fails for a clock the records do not support (100 MHz: the HGMMA board top
    reached 78.80 and 87.36 MHz there)."""
    at_100 = [(fmax, verdict) for cmd, fmax, verdict, _ in _records()
              if "--standin" not in cmd and _at(cmd, "--pipeline") == "3" and _at(cmd, "--clock") == "100"]
    assert at_100 and any(verdict == "FAIL" for _, verdict in at_100)


def test_auto_builds_at_the_familys_default_and_says_so(capsys, monkeypatch, tmp_path):
    from fpga.toolchain import records
    monkeypatch.setattr(records, "MANIFEST", tmp_path / "none.toml")       # no record: the family's default
    seen = {}

    def fake_build(top, brd, design, **kw):
        top._MustUse__silence = True          # not elaborated: no toolchain here
        seen.update(kw, top=top)
        raise build.BuildError("stop here")

    monkeypatch.setattr(build, "build", fake_build)
    assert main(["build", "hopper", "HGMMA.64xNx16.F32", "--pipeline", "auto", "--clock", "auto"]) == 2
    err = capsys.readouterr().err
    assert "defaults for ecp5 (ulx3s-85f): pipelining level 3 and a 75 MHz design clock" in err
    assert seen["clock_hz"] == 75 * MHZ and seen["top"].config.pipelining == "3"
    main(["build", "hopper", "HGMMA.64xNx16.F32", "--board", "tang-mega-138k", "--pipeline", "auto",
          "--clock", "auto"])
    assert "a 50 MHz design clock: the tang-mega-138k's own" in capsys.readouterr().err
    assert seen["clock_hz"] == 50 * MHZ


@pytest.mark.parametrize("given, expected", [("", "--pipeline auto --clock auto"), ("CLOCK=16", "--clock 16"),
                                             ("PIPELINE=2", "--pipeline 2")])
def test_make_fpga_asks_for_the_defaults_only_when_neither_is_given(given, expected):
    done = subprocess.run(["make", "-n", "-s", "-o", ".venv/.installed", "fpga", "ARCH=hopper",
                           "INSTR=HGMMA.64xNx16.F32", *given.split()], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0 and expected in done.stdout, done.stdout + done.stderr
    assert ("auto" in done.stdout) == (given == "")


def test_auto_is_refused_where_there_is_no_board_family(capsys):
    assert main(["sim", "hopper", "HGMMA.64xNx16.F32", "--clock", "auto"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "apply to build and program" in err and "not to sim" in err
