"""How every command ends and what it checks first (golden.console, golden.launch): Ctrl-C, a file
that cannot be written, an extra that is not installed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from golden.console import INTERRUPTED, OutputError, check_output, exit_with, on_interrupt

REPO = Path(__file__).resolve().parents[2]


# ---- Ctrl-C ---------------------------------------------------------------------------------------

def _interrupted_main():
    print("a row that was computed")
    raise KeyboardInterrupt


def test_ctrl_c_ends_a_command_with_one_line_and_130(capsys):
    on_interrupt("")
    with pytest.raises(SystemExit) as stop:
        exit_with(_interrupted_main)
    out, err = capsys.readouterr()
    assert stop.value.code == INTERRUPTED == 130
    assert out == "a row that was computed\n" and err.strip() == "interrupted"


def test_a_command_says_what_an_interrupt_keeps(capsys):
    on_interrupt("the finished blocks are in the database; rerun with --resume")
    try:
        with pytest.raises(SystemExit):
            exit_with(_interrupted_main)
    finally:
        on_interrupt("")
    assert capsys.readouterr().err.strip() == \
        "interrupted: the finished blocks are in the database; rerun with --resume"


def test_sigint_to_a_running_command_is_interrupted_not_a_traceback():
    """A real process, a real SIGINT: ``python -m golden run`` on more vectors than it can finish."""
    proc = subprocess.Popen([sys.executable, "-m", "golden", "run", "volta", "HMMA.884.F16.F16", "-n", "1000000000"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))   # not inherited SIG_IGN
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err and err.strip().endswith("interrupted"), err


# ---- a file the command will write ----------------------------------------------------------------

def test_a_writable_path_is_returned_and_missing_folders_are_allowed(tmp_path):
    assert check_output(tmp_path / "new" / "deeper" / "r.xml", "--report") == tmp_path / "new" / "deeper" / "r.xml"


@pytest.mark.parametrize("case, words", [
    ("folder", "is a folder; give a file path"),
    ("under_a_file", "is a file, not a folder"),
    ("read_only", "is not writable"),
    ("empty", "an empty path"),
])
def test_a_path_that_cannot_be_written_is_one_line(tmp_path, case, words):
    if case == "read_only" and os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    (tmp_path / "file").write_text("x")
    (tmp_path / "ro").mkdir(mode=0o500)
    path = {"folder": tmp_path, "under_a_file": tmp_path / "file" / "r.xml", "read_only": tmp_path / "ro" / "r.xml",
            "empty": ""}[case]
    with pytest.raises(OutputError, match=words) as e:
        check_output(path, "REPORT")
    assert str(e.value).startswith("REPORT") and "\n" not in str(e.value)


def test_an_existing_file_is_kept_when_the_command_must_not_overwrite(tmp_path):
    (tmp_path / "unit.toml").write_text("mine")
    with pytest.raises(OutputError, match="already exists and would be overwritten"):
        check_output(tmp_path / "unit.toml", "DIR", overwrite=False)
    assert check_output(tmp_path / "unit.toml", "DIR") == tmp_path / "unit.toml"


# ---- an extra that is not installed ----------------------------------------------------------------

def _without(tmp_path: Path, *modules: str) -> dict:
    """An environment in which ``modules`` cannot be imported, as in a venv without their extra."""
    for m in modules:
        (tmp_path / m).mkdir()
        (tmp_path / m / "__init__.py").write_text(f"raise ModuleNotFoundError(\"No module named '{m}'\", name='{m}')\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}


@pytest.mark.parametrize("argv, words", [
    (["hw", "volta"], "hw needs the [rtl] extra (amaranth is not installed): pip install 'mma-rtl[rtl]'"),
    (["formal", "--list"], "formal needs the [formal] extra (amaranth is not installed)"),
    (["fpga", "--help"], "fpga needs the [fpga] extra (amaranth is not installed)"),
    (["cosim", "run", "volta", "HMMA.884.F16.F16", "-n", "10"], "hw needs the [rtl] extra (amaranth is not installed)"),
])
def test_python_m_without_the_extra_names_it_in_one_line(tmp_path, argv, words):
    proc = subprocess.run([sys.executable, "-m", *argv], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env=_without(tmp_path, "amaranth"))
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {words}"), lines[0]


def test_a_library_import_without_the_extra_is_an_error_naming_it(tmp_path):
    """``import hw`` in a program: a ModuleNotFoundError (what a program catches) whose message names
    the extra, not a bare one about Amaranth."""
    code = "import hw"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env=_without(tmp_path, "amaranth"))
    from golden.launch import ExtraMissing
    assert proc.returncode == 1 and issubclass(ExtraMissing, ModuleNotFoundError)
    assert proc.stderr.splitlines()[-1] == (
        "golden.launch.ExtraMissing: hw needs the [rtl] extra (amaranth is not installed): "
        "pip install 'mma-rtl[rtl]' (or pip install -e '.[rtl]' in a checkout)")
