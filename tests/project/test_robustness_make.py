"""The Makefile's variables: each target takes what tools/make_vars.py says, uses every one of them,
and refuses the rest in one line before anything runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

import make_vars  # noqa: E402


def _make(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-n", "-s", "-o", ".venv/.installed", *args], cwd=REPO, text=True,
                          capture_output=True, timeout=60, env=env)


def test_the_table_names_every_target_of_the_makefile():
    phony = re.search(r"^\.PHONY:(.*?)(?<!\\)\n", (REPO / "Makefile").read_text(), re.S | re.M)[1]
    assert set(phony.replace("\\", " ").split()) == set(make_vars.TARGETS)


def _sentinels(names) -> dict[str, str]:
    """A value per variable that shows where it lands in the commands (yes/no words stay words)."""
    return {v: "yes" if v in make_vars.WORDS else f"zq{v.lower()}" for v in names}


@pytest.mark.parametrize("dut", [False, True], ids=["plain", "DUT"])
def test_every_variable_a_target_takes_reaches_its_commands(dut):
    """``make -n TARGET VAR=...`` with every variable the table gives the target: each one's value is
    in the printed commands (a variable in the table that the recipe ignores would be dropped)."""
    lost = []
    for goal, (plain, with_dut) in make_vars.TARGETS.items():
        if dut and with_dut is None or goal in ("help", "venv", "clean"):
            continue
        given = _sentinels(with_dut if dut else plain)
        if dut:
            given["DUT"] = "zqdut.toml"
        done = _make(goal, *(f"{k}={v}" for k, v in given.items()))
        assert done.returncode == 0, (goal, done.stderr)
        for name, value in given.items():
            shown = f"={value}" if name in make_vars.WORDS else value
            if shown not in done.stdout:
                lost.append(f"{goal}{' DUT' if dut else ''}: {name}")
    assert not lost


@pytest.mark.parametrize("args, words", [
    (["fpga", "DUT=x.toml", "LANES=2"], "make fpga: LANES does not apply with DUT="),
    (["cosim", "DUT=x.toml", "LANES=4"], "make cosim: LANES does not apply with DUT="),
    (["cosim", "DUT=x.toml", "PIPELINE=2"], "make cosim: PIPELINE does not apply with DUT="),
    (["cosim", "LANE=4"], "make cosim: LANE is not a variable of make cosim"),
    (["cosim", "REPORT=r.xml"], "make cosim: REPORT applies only with DUT="),
    (["cosim", "DUT="], "DUT= is empty"),
    (["fpga-program", "DUT=x.toml"], "make fpga-program does not take DUT="),
    (["fpga", "TMG_RIPUP=maybe"], "TMG_RIPUP=maybe: expected yes or no"),
    (["test", "N=5"], "make test: N is not a variable of make test"),
])
def test_a_variable_the_goal_does_not_take_is_refused_in_one_line(args, words):
    done = _make(*args)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and words in done.stderr and "(make help)" in done.stderr \
        or "DUT=" in words or "TMG_RIPUP" in words, done.stderr
    assert words in done.stderr


def test_a_variable_either_goal_takes_is_accepted():
    """``make golden list ARCH= INSTR= N=``: N is golden's, so it is no stranger to the command."""
    assert _make("golden", "list", "ARCH=volta", "INSTR=HMMA.884.F16.F16", "N=5").returncode == 0


def test_a_known_variable_from_the_environment_is_noted_not_refused():
    import os
    done = _make("list", env={**os.environ, "LANES": "4"})
    assert done.returncode == 0 and "note: LANES=4 (from the environment) is not used by make list" in done.stderr


@pytest.mark.parametrize("word, value", [("yes", True), ("on", True), ("TRUE", True), ("0", False), ("off", False)])
def test_tmg_ripup_takes_the_common_yes_no_words(word, value):
    """``TMG_RIPUP=on`` reaches the build as ``--tmg-ripup=on``, which fpga's parser reads as yes
    (it was ``TMG_RIPUP=1|0`` only: ``yes`` was dropped without a word)."""
    from fpga.__main__ import _parser
    done = _make("fpga", "ARCH=volta", "INSTR=HMMA.884.F16.F16", f"TMG_RIPUP={word}")
    assert done.returncode == 0, done.stderr
    build = [line for line in done.stdout.splitlines() if " build " in line]
    assert build and f"--tmg-ripup={word}" in build[0].split()
    args = _parser().parse_args(["build", "volta", "HMMA.884.F16.F16", f"--tmg-ripup={word}"])
    assert args.tmg_ripup is value
    assert _parser().parse_args(["build", "volta", "HMMA.884.F16.F16", "--no-tmg-ripup"]).tmg_ripup is False


def test_backend_is_devices_old_name_and_says_so_once():
    """``make probe BACKEND=`` still works, as DEVICE=, with one note on stderr; DEVICE= is the word."""
    old = subprocess.run(["make", "-s", "-o", ".venv/.installed", "probe", "BACKEND=golden", "ARCH=hopper",
                          "INSTR=HGMMA.64xNx16.F32"], cwd=REPO, text=True, capture_output=True, timeout=300)
    assert old.returncode == 0, old.stderr
    assert old.stderr.count("note: BACKEND= is DEVICE= now") == 1 and "--backend" not in old.stderr, old.stderr
    assert "--device golden" in _make("probe", "DEVICE=golden").stdout
    assert "note:" not in _make("probe", "DEVICE=golden").stdout


def test_make_help_runs_and_names_every_target():
    """make help is the Makefile's manual: it runs (a stray quote in an echo breaks it) and names each target."""
    done = subprocess.run(["make", "-s", "help"], cwd=REPO, text=True, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    named = set(re.findall(r"^make ([\w-]+)", done.stdout, re.M))
    assert set(make_vars.TARGETS) - {"help"} <= named | {"venv", "clean"}, set(make_vars.TARGETS) - named
