"""The DPI-C scoreboard example (examples/dpi, golden_c/sv, make dpi-example; docs/dpi.md).

One Verilator build of the SystemVerilog bench (cached by content hash under build/dpi-example/, so a
second run does not rebuild), run twice: clean, every result of the test design equals golden's through
DPI-C and the bench exits 0 with the scoreboard's PASS line (its dot-adds one by one, then whole
instructions checked as tiles through the mma import); with +fault (the same binary), the planted
fault is caught: non-zero exit, a MISMATCH naming its vector (or tile element) and the FAIL line.
Skips, saying why, where the C library's public API or the Verilator toolchain is missing.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

RUNNER = Path(__file__).resolve().parents[2] / "examples" / "dpi" / "run.py"
N = 1000
TILES = 2
TILE = 16 * 8                         # ampere HMMA.1688.F32: m16 n8, one dot-add per element
pytestmark = pytest.mark.xdist_group("dpi_example")      # one worker: one build, not one per worker


def _runner():
    spec = importlib.util.spec_from_file_location("dpi_example_run", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example():
    run = _runner()
    try:
        run.build(verbose=False)
    except run.Missing as e:
        pytest.skip(f"the DPI-C example cannot be built here: {e}")
    return run


def test_clean_run_passes(example):
    done = example.run(N, seed=1, fault=False, verbose=False)
    assert done.returncode == 0, done.stdout
    assert f"mma_golden_scoreboard ampere HMMA.1688.F32: {N + TILES * TILE} checked, 0 mismatches: PASS" \
        in done.stdout
    assert f"dpi_bench: {TILES} tiles checked whole (mma), 0 with a differing element" in done.stdout
    assert "MISMATCH" not in done.stdout


def test_planted_fault_is_caught(example):
    done = example.run(N, seed=1, fault=True, verbose=False)
    assert done.returncode != 0, done.stdout
    first = re.search(r"MISMATCH ampere HMMA\.1688\.F32 vector (\d+): a=\[.*\] b=\[.*\] c=\w+ "
                      r"got (\w+) expected (\w+)", done.stdout)
    assert first, done.stdout
    got, expected = (int(x, 16) for x in first.group(2, 3))
    assert got ^ expected == 1 and got >> 31        # the planted corner: d's lowest bit, a negative result
    summary = re.search(rf"mma_golden_scoreboard ampere HMMA\.1688\.F32: {N + TILES * TILE} checked, (\d+) "
                        r"mismatches: FAIL",
                        done.stdout)
    assert summary and int(summary[1]) > 0, done.stdout


def test_a_tile_fault_is_caught_by_the_mma_check(example):
    """Tiles alone (no dot-adds checked one by one): the planted fault shows as tile elements that
    differ from golden's mma."""
    done = example.run(0, seed=2, fault=True, verbose=False, tiles=TILES)
    assert done.returncode != 0, done.stdout
    element = re.search(r"MISMATCH ampere HMMA\.1688\.F32 tile (\d) D\[(\d+)\]\[(\d+)\]: got (\w+) expected (\w+)",
                        done.stdout)
    assert element, done.stdout
    got, expected = (int(x, 16) for x in element.group(4, 5))
    assert got ^ expected == 1 and got >> 31
    counted = re.search(rf"dpi_bench: {TILES} tiles checked whole \(mma\), (\d+) with a differing element",
                        done.stdout)
    assert counted and int(counted[1]) > 0, done.stdout
    clean = example.run(0, seed=2, fault=False, verbose=False, tiles=TILES)
    assert clean.returncode == 0 and f"{TILES} tiles checked whole (mma), 0 with" in clean.stdout, clean.stdout


def test_the_fault_run_reuses_the_build(example):
    """The planted fault is a plusarg of the same binary: a second build() finds it."""
    assert example.build(verbose=False) == example.build(verbose=False)
    assert example.main(["--fault", "yes", "-n", "200"]) == 0      # make dpi-example FAULT=yes: caught is success


@pytest.mark.parametrize("instr, words", [("HMMA.9999.F32", "mma_golden_scoreboard: ampere HMMA.9999.F32: "),
                                          ("HMMA.884.F32.F32", "has k = 4, the design K = 8")])
def test_a_wrong_instruction_is_refused_by_name(example, instr, words):
    """An unknown name: the scoreboard stops with the library's reason; a known one of another k: the
    bench refuses it before any vector (the same binary, +instr=)."""
    import subprocess
    exe = example.build(verbose=False)
    arch = "volta" if instr == "HMMA.884.F32.F32" else "ampere"
    done = subprocess.run([str(exe), "+n=10", f"+arch={arch}", f"+instr={instr}"], capture_output=True, text=True)
    assert done.returncode != 0
    assert words in done.stdout + done.stderr, done.stdout + done.stderr



def test_a_design_of_your_own_at_run_time(example):
    """+arch=custom: the scoreboard makes the instruction from its spec at run time (mma_golden_sv_from_spec,
    no rebuild of the library or the bench); the design matches HMMA.1688.F32's Params written as a spec,
    a spec golden refuses stops the bench with the reason."""
    import importlib
    import subprocess

    import golden
    custom = importlib.import_module("golden.custom")
    ins = golden.lookup("ampere", "HMMA.1688.F32")
    spec = custom.custom(ins.k, ins.a_format, ins.c_format, ins.params, m=ins.m, n=ins.n).name
    exe = example.build(verbose=False)
    done = subprocess.run([str(exe), "+n=200", "+arch=custom", f"+instr={spec}"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"mma_golden_scoreboard custom {spec}: {200 + TILES * TILE} checked, 0 mismatches: PASS" in done.stdout
    bad = subprocess.run([str(exe), "+n=10", "+arch=custom", "+instr=k=8,a=f16,c=f32,base=FDA"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "FDA needs F" in bad.stdout + bad.stderr
