"""Bad input and misbehaving designs on the DUT path (``python -m cosim.dut``) and ``python -m cosim``: one
``error:`` line and exit status 2 for what is wrong before the work, one clear line for a design that hangs,
never settles or floods, nothing computed lost, no simulator process left behind.

The misbehaving design is tests/data/dut/trouble.sv (its +MODE plusarg picks how it misbehaves), one small
Verilator build for every mode; the checks that need no build refuse before one.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from cosim.dut import __main__ as cli

DATA = Path(__file__).resolve().parents[1] / "data" / "dut"
REPO = Path(__file__).resolve().parents[2]
AXIS = REPO / "examples" / "dut" / "dotp_axis"
INS = ("volta", "HMMA.884.F16.F16")


def _error_line(capsys, argv, main=cli.main) -> str:
    try:
        rc = main(argv)
    except SystemExit as e:                              # the parser's own refusals (golden.options.Parser)
        rc = e.code
    out, err = capsys.readouterr()
    err = err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: "), (rc, out, err)
    return err[0]


@pytest.fixture
def trouble(tmp_path):
    """``trouble(mode)``: the path of a description of trouble.sv in that mode, with a plusarg of its own
    (``trouble.token``) by which a test finds its simulator processes."""
    shutil.copy(DATA / "trouble.sv", tmp_path)
    token = uuid.uuid4().hex

    def describe(mode: int) -> Path:
        text = (DATA / "trouble.toml").read_text().replace('"+MODE=0"', f'"+MODE={mode}", "+TOKEN={token}"')
        path = tmp_path / f"mode{mode}.toml"
        path.write_text(text)
        return path
    describe.token = token
    return describe


def _simulators(token: str) -> list[int]:
    """Processes whose command line carries ``token`` (the simulators of one test's description)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if token.encode() in cmd and b"cosim_harness" in cmd:
                found.append(int(entry))
    return found


def _gone(token: str, within: float = 10.0) -> bool:
    t0 = time.monotonic()
    while _simulators(token):
        if time.monotonic() - t0 > within:
            for pid in _simulators(token):          # the test's own simulator: not left spinning
                os.kill(pid, signal.SIGKILL)
            return False
        time.sleep(0.1)
    return True


# ---- export: existing files refused without --force, checked before the unit is elaborated ---------------

@pytest.fixture
def no_export(monkeypatch):
    """cosim.dut.export.export replaced by a recorder: what the command does before it is the point."""
    from cosim.dut import export
    calls = []

    def fake(ins, folder, *args, **kw):
        calls.append(Path(folder))
        return Path(folder) / export.DESCRIPTION
    monkeypatch.setattr(export, "export", fake)
    return calls


def test_dut_export_refuses_to_overwrite_without_force(tmp_path, capsys, no_export):
    (tmp_path / "unit.toml").write_text("# a description of one's own\n")
    line = _error_line(capsys, ["export", *INS, str(tmp_path)])
    assert "unit.toml already exists" in line and "--force" in line, line
    assert no_export == [] and (tmp_path / "unit.toml").read_text() == "# a description of one's own\n"
    assert cli.main(["export", *INS, str(tmp_path), "--force"]) == 0 and no_export == [tmp_path]


@pytest.mark.parametrize("where, words", [
    ("file", "is a file; give the folder"),
    ("under-a-file", "is a file, not a folder"),
])
def test_dut_export_to_a_folder_that_cannot_be_written_is_one_line(tmp_path, capsys, no_export, where, words):
    (tmp_path / "f").write_text("")
    folder = tmp_path / "f" if where == "file" else tmp_path / "f" / "sub"
    assert words in _error_line(capsys, ["export", *INS, str(folder)])
    assert no_export == []


# ---- description conflicts: one port, two jobs ------------------------------------------------------------

def _axis(tmp_path, old: str, new: str) -> Path:
    text = (AXIS / "unit.toml").read_text().replace('core = "dotp_axis.core"', f'core = "{AXIS / "dotp_axis.core"}"')
    assert old in text, old
    path = tmp_path / "axis.toml"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize("old, new, words", [
    ('instr = "HMMA.1688.F32.BF16"', 'instr = "HMMA.1688.F32.BF16"\npins = { s_axis_tvalid = 1 }',
     "pins.s_axis_tvalid is s_axis_tvalid, which is also [handshake] in_valid"),
    ('out_prefix = "m_axis"', 'out_prefix = "s_axis"',
     "[handshake] out_valid is s_axis_tvalid, which is also [handshake] in_valid"),
    ('name = "aclk"', 'name = "s_axis_tvalid"', "[handshake] in_valid is s_axis_tvalid, which is also [clock] name"),
    ('name = "aresetn"', 'name = "aclk"', "[reset] name is aclk, which is also [clock] name"),
    # two operands on the same bits of tdata (refused before; kept here beside the rest)
    ('c = { port = "s_axis_tdata", element_bits = 32, offset = 0 }',
     'c = { port = "s_axis_tdata", element_bits = 32, offset = 16 }',
     "c[0] (s_axis_tdata[47:16]) overlaps a[0] (s_axis_tdata[47:32])"),
])
def test_dut_axi_description_conflicts_are_one_line(tmp_path, capsys, old, new, words):
    line = _error_line(capsys, ["ports", str(_axis(tmp_path, old, new))])
    assert words in line, line


# ---- options that would be dropped ----------------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["bench", *INS, "-n", "0"], "argument -n: must be at least 1, got 0"),
    (["run", "unit.toml", "-n", "0"], "argument -n: must be at least 1, got 0"),
    (["run", "unit.toml", "--min-n", "-1"], "argument --min-n: must be at least 0"),
    (["signals", "unit.toml", "-n", "0"], "argument -n: must be at least 1, got 0"),
    (["throughput", "unit.toml", "-n", "0"], "argument -n: must be at least 1, got 0"),
    (["run", "unit.toml", "--budget", "-3"], "--budget must be a positive number of seconds, got -3"),
    (["run", "unit.toml", "--budget", "nan"], "--budget must be a positive number of seconds, got nan"),
    (["run", "unit.toml", "--budget", "inf"], "--budget must be a positive number of seconds, got inf"),
    (["run", "unit.toml", "--budget", "0"], "--budget must be a positive number of seconds, got 0"),
])
def test_dut_options_out_of_range_are_refused(capsys, argv, words):
    assert words in _error_line(capsys, argv)


@pytest.mark.parametrize("argv", [
    ["run", "ampere", "HMMA.1688.F32", "--budget", "inf"],
    ["run", "ampere", "HMMA.1688.F32", "--budget", "nan"],
    ["tensor-core", "volta", "--budget", "inf"],
    ["tensor-core", "volta", "--budget", "-3"],
])
def test_cosim_budget_must_be_a_positive_number_of_seconds(capsys, argv):
    from cosim import __main__ as cosim_cli
    assert "--budget must be a positive number of seconds" in _error_line(capsys, argv, cosim_cli.main)


def test_dut_no_progress_limit_must_be_seconds(capsys, monkeypatch):
    monkeypatch.setenv("MMA_COSIM_NO_PROGRESS", "soon")
    line = _error_line(capsys, ["run", "unit.toml"])
    assert "MMA_COSIM_NO_PROGRESS=soon: expected a positive number of seconds" in line, line


# ---- output paths: checked before the work, results kept when the write fails anyway -----------------------

def test_dut_run_report_path_is_checked_before_the_run(tmp_path, capsys, trouble):
    (tmp_path / "f").write_text("")
    line = _error_line(capsys, ["run", str(trouble(0)), "-n", "10", "--report", str(tmp_path / "f" / "r.xml")])
    assert "--report" in line and "is a file, not a folder" in line, line


def test_dut_run_keeps_its_table_when_the_report_cannot_be_written(capsys, monkeypatch, trouble):
    from cosim.dut import junit

    def full_disk(path, prep, results):
        raise OSError(28, "No space left on device", str(path))
    monkeypatch.setattr(junit, "write", full_disk)
    rc = cli.main(["run", str(trouble(3)), "-n", "100", "--report", "r.xml", "--quiet"])
    out, err = capsys.readouterr()
    assert rc == 2 and "HMMA.884.F16.F16" in out and "1 instruction(s)" in out, out
    assert "the JUnit report could not be written (No space left on device); the results are in the table" in err


# ---- misbehaving designs: one clear line, no hang, no simulator left ----------------------------------------

def test_dut_design_that_hangs_in_one_evaluation_is_stopped(capsys, monkeypatch, trouble):
    """A loop inside an always_ff block that never ends stops simulated time: the wall-clock limit
    (MMA_COSIM_NO_PROGRESS, here 4 s) kills the simulator and says so, naming the design."""
    monkeypatch.setenv("MMA_COSIM_NO_PROGRESS", "4")
    t0 = time.monotonic()
    rc = cli.main(["run", str(trouble(1)), "-n", "100", "--quiet"])
    out = capsys.readouterr().out
    assert rc == 1 and time.monotonic() - t0 < 120
    assert "the simulation made no progress for 4 s: the design trouble" in out, out
    assert "MMA_COSIM_NO_PROGRESS" in out
    assert _gone(trouble.token, within=5)


def test_dut_combinational_loop_names_the_designs_signal(capsys, trouble):
    """Verilator's 'did not converge' names the harness's line; the message names the design's signal."""
    rc = cli.main(["run", str(trouble(2)), "-n", "100", "--quiet"])
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("error: "))
    assert rc == 1 and "its combinational logic never settled" in line, out
    assert re.search(r"a combinational loop through osc \([^()]*trouble\.sv:\d+\)", line), line
    assert "cosim_harness.sv" not in line, line


def test_dut_ctrl_c_ends_with_interrupted_and_no_simulator_left(trouble):
    """SIGINT to ``python -m cosim.dut run`` while its design hangs: 'interrupted', status 130, no traceback,
    and the simulator process (which got no signal) killed, not left spinning."""
    path = trouble(1)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("MMA_COSIM_NO_PROGRESS", None)
    proc = subprocess.Popen([sys.executable, "-m", "cosim.dut", "run", str(path), "-n", "100", "--quiet"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        t0 = time.monotonic()
        while not _simulators(trouble.token):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - t0 < 180, "no simulator started"
            time.sleep(0.2)
        time.sleep(1.0)                                  # the simulator is in the design's endless loop
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err and err.strip().endswith("interrupted"), err
    assert _gone(trouble.token), "the simulator was left running"


# ---- vague messages ---------------------------------------------------------------------------------------

def test_cosim_build_folder_with_a_space_is_refused(tmp_path):
    from cosim import build as bld
    with pytest.raises(bld.BuildError, match=r"has a space in its path.*set MMA_BUILD_DIR to a folder without one"):
        bld.check_build_root(tmp_path / "with space")


def test_dut_build_folder_with_a_space_is_one_line_before_a_build(tmp_path, trouble):
    env = {**os.environ, "PYTHONPATH": str(REPO), "MMA_BUILD_DIR": str(tmp_path / "my builds")}
    p = subprocess.run([sys.executable, "-m", "cosim.dut", "run", str(trouble(0)), "-n", "10"], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=300)
    err = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(err) == 1 and p.stdout == "", (p.stdout, err)
    assert "has a space in its path" in err[0] and "MMA_BUILD_DIR" in err[0], err


def test_cosim_refused_design_leaves_no_unused_elaboratable_warnings(capsys, monkeypatch):
    """A unit whose RTL refuses after building some of its parts (planted: hw.dot_add_unit builds the unit, then
    refuses) must not print Amaranth's UnusedElaboratable warnings, one per block, around the refusal."""
    import gc
    import warnings

    from amaranth.hdl import UnusedElaboratable

    import hw
    from cosim import __main__ as cosim_cli
    monkeypatch.setattr(UnusedElaboratable, "_MustUse__silence", False)   # as after a first elaboration
    real = hw.dot_add_unit

    def refusing(ins, **kw):
        unit = real(ins, **kw)                           # noqa: F841  (parts built, never elaborated)
        raise NotImplementedError("no RTL for this change (planted)")
    monkeypatch.setattr(hw, "dot_add_unit", refusing)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rc = cosim_cli.main(["run", *INS, "-n", "10", "--progress", "0"])
        gc.collect()
    out = capsys.readouterr().out
    assert rc == 1 and "no RTL for this change (planted)" in out, out
    assert [str(w.message) for w in seen if issubclass(w.category, UnusedElaboratable)] == []


def test_dut_bench_of_a_change_the_rtl_refuses_is_one_line(capsys):
    line = _error_line(capsys, ["bench", "cdna3", "v_mfma_f32_16x16x8_xf32", "--plant", "out_frac_bits=10"])
    assert "no RTL for out_frac_bits in FDRDA" in line, line


@pytest.mark.parametrize("spec", ["", "  "])
def test_dut_empty_description_path_is_one_line(capsys, spec):
    line = _error_line(capsys, ["ports", spec])
    assert "dut: needs the description's path, e.g. dut:examples/dut/dotp_vr/unit.toml" in line, line


def test_dut_folder_without_a_description_is_one_line(tmp_path, capsys):
    assert "is a folder without a unit.toml" in _error_line(capsys, ["ports", str(tmp_path)])
