"""Coverage in co-simulation (cosim.coverage): measured on every vector a run checked, the table's coverage
column, the summary line, the HTML + JSON report, JUnit properties, ``-n closure`` and ``make coverage``.

The simulations reuse builds the suite already makes: the stand-in of test_cosim_infra (build/cosim/test),
the hw HGMMA unit of test_cosim_rtl and the exported volta unit of test_dut (one build each, cached).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import golden
from cosim import build as bld
from cosim import coverage as ccov
from cosim import junit, standin, table
from cosim import run as cr
from cosim.__main__ import main as cosim_main
from cosim.units import StandInUnits
from golden.cover.model import Coverage
from golden.coverage import measure
from golden.streams import VectorStream

REPO = Path(__file__).resolve().parents[2]
ROOT = bld.BUILD_ROOT / "test"                  # test_cosim_infra's stand-in builds
HGMMA = ("hopper", "HGMMA.64xNx16.F32")
SUMMARY = r"coverage: \d+ of \d+ reachable bins hit \(\d+ unreachable\)"


@pytest.fixture(scope="module")
def standin_build():
    ins = golden.lookup(*HGMMA)
    return bld.build_unit(standin.StandInUnit(ins, 1, latency=3), ins.arch, ins.name, root=ROOT)


def _config(tmp_path, **kw):
    base = dict(progress=0, build_root=ROOT, failures_dir=tmp_path, rerun_with_waves=False, coverage=True)
    base.update(kw)
    return cr.Config(**base)


def test_every_checked_vector_is_measured(standin_build, tmp_path):
    """The run's coverage is golden's measurement of exactly the vectors it checked."""
    ins = golden.lookup(*HGMMA)
    out = io.StringIO()
    r = cr.run_many([ins], _config(tmp_path, n=5000, seed=3, out=out), StandInUnits(latency=3))[0]
    assert r.ok and r.coverage is not None
    want = measure(ins, *VectorStream(ins, "mixed", seed=3).take(5000))
    assert r.coverage.hits == want.hits and r.coverage.dot_adds == r.coverage.offered == 5000
    lines = out.getvalue().splitlines()
    assert lines[0] == table.header(coverage=True) and lines[0].split()[-2:] == ["coverage", "status"]
    assert lines[1].split()[-2] == f"{len(want.hit())}/{len(want.reachable())}"
    sampled = cr.run_instruction(ins, _config(tmp_path, n=3000, seed=3, coverage_sample=1000), StandInUnits(latency=3))
    first = measure(ins, *VectorStream(ins, "mixed", seed=3).take(1000))
    assert sampled.coverage.hits == first.hits and (sampled.coverage.dot_adds, sampled.coverage.offered) == (1000, 3000)
    quiet = cr.run_instruction(ins, _config(tmp_path, n=100, coverage=False), StandInUnits(latency=3))
    assert quiet.coverage is None and table.coverage_cell(quiet) == "-"


def _coverage(missed: int = 1) -> Coverage:
    bins = {"p.a": "a", "p.b": "b", "q.c": "c"}
    return Coverage("hopper HGMMA.64xNx16.F32", bins, {"p.a": 4, "p.b": 0 if missed else 1, "q.c": 0},
                    {"q.c": "never"}, 4, 4, {"p": "point p", "q": "point q"})


def test_report_run_prints_the_summary_and_writes_the_page(tmp_path):
    class R:
        coverage = _coverage()
    out = io.StringIO()
    covs = ccov.report_run([R()], title="make coverage", meta=ccov.run_meta(seed=1), folder=tmp_path / "c", out=out)
    text = out.getvalue()
    assert "hopper HGMMA.64xNx16.F32: coverage: 1 of 2 reachable bins hit (1 unreachable)" in text
    assert "  holes: p.b" in text and f"coverage report: {tmp_path / 'c' / 'coverage.html'}" in text
    doc = json.loads((tmp_path / "c" / "coverage.json").read_text())
    assert doc["coverage"][0]["missed"] == ["p.b"] and doc["meta"]["seed"] == 1
    assert covs == [R.coverage]
    ins = golden.lookup(*HGMMA)
    closed, unmeasured = cr.Result(ins, coverage=_coverage(0)), cr.Result(ins)
    assert ccov.require_closed([R()], out=io.StringIO()) == 1 and ccov.require_closed([closed]) == 0
    said = io.StringIO()
    assert ccov.require_closed([closed, unmeasured], out=said) == 1 and "not measured" in said.getvalue()


def test_a_cover_point_that_fails_does_not_stop_the_run(standin_build, tmp_path, monkeypatch):
    """A measurement that raises is a note and a ``-`` in the column; the co-simulation's verdict stands."""
    def broken(*args, **kw):
        raise ValueError("a broken cover point")
    monkeypatch.setattr(ccov.gcov, "measure", broken)
    out = io.StringIO()
    r = cr.run_instruction(golden.lookup(*HGMMA), _config(tmp_path, n=500, out=out), StandInUnits(latency=3))
    assert r.ok and r.coverage is None and table.coverage_cell(r) == "-"
    assert "was not measured: ValueError: a broken cover point" in out.getvalue()


def test_junit_properties_name_each_instruction(tmp_path, standin_build):
    ins = golden.lookup(*HGMMA)
    r = cr.Result(ins, vectors=4, coverage=_coverage())
    twice = cr.Result(ins, vectors=4, coverage=_coverage(0))
    suite = ET.parse(junit.write(tmp_path / "r.xml", [r, twice])).getroot()
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    key = "coverage.hopper.HGMMA.64xNx16.F32"
    assert (props[f"{key}.hit"], props[f"{key}.reachable"], props[f"{key}.unreachable"], props[f"{key}.holes"]) == \
        ("1", "2", "1", "p.b")
    assert props[f"{key}#2.holes"] == "" and suite.get("tests") == "2"


def test_a_tile_transaction_is_measured_as_its_chained_dot_adds():
    ins = golden.lookup("volta", "HMMA.884.F16.F16")
    rng = np.random.default_rng(2)
    t, m, n, k = 3, 2, 5, 2 * ins.k
    A = rng.integers(0, 1 << 16, (t, m, k), dtype=np.uint64)
    B = rng.integers(0, 1 << 16, (t, k, n), dtype=np.uint64)
    C = rng.integers(0, 1 << 16, (t, m, n), dtype=np.uint64)
    a, b, c, _, _ = ccov.tile_dot_adds(ins, A, B, C)
    assert a.shape == (t * m * n * 2, ins.k) and c.shape == (t * m * n * 2,)
    first = golden.dot_add(ins, A[1, 1, :ins.k], B[1, :ins.k, 3], C[1, 1, 3])       # element (1, 3) of tile 1
    row = 1 * m * n + 1 * n + 3
    assert (a[row] == A[1, 1, :ins.k]).all() and c[row] == C[1, 1, 3]
    assert c[t * m * n + row] == first and (b[t * m * n + row] == B[1, ins.k:, 3]).all()


@pytest.mark.parametrize("argv, words", [
    (["-n", "closure"], "-n closure sizes a run to the solved closure of --vectors cover"),
    (["-n", "3", "--no-coverage", "--require-closed"], "--require-closed (CLOSED=yes) needs coverage measured"),
    (["-n", "3", "--coverage-dir", "FILE"], "is a file"),
])
def test_bad_coverage_options_are_one_line(argv, words, tmp_path, capsys):
    argv = [str(tmp_path / "f") if a == "FILE" else a for a in argv]
    (tmp_path / "f").write_text("")
    assert cosim_main(["run", *HGMMA, *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and words in err[0], err


def test_closure_run_hits_every_reachable_bin(tmp_path, capsys):
    """``-n closure --vectors cover`` on the hw unit: the solved closure's rows, every reachable bin hit,
    the report written, JUnit properties with no holes."""
    try:
        import hw  # noqa: F401
    except ImportError:
        pytest.skip("no hw package")
    xml, folder = tmp_path / "r.xml", tmp_path / "cov"
    status = cosim_main(["run", *HGMMA, "-n", "closure", "--vectors", "cover", "--progress", "0", "--report",
                         str(xml), "--coverage-dir", str(folder), "--require-closed"])
    out = capsys.readouterr().out
    assert status == 0, out
    doc = json.loads((folder / "coverage.json").read_text())["coverage"][0]
    assert doc["missed"] == [] and doc["dot_adds"] == ccov.closure_size(golden.lookup(*HGMMA), "cover", 1)
    assert f"hopper HGMMA.64xNx16.F32: {doc['summary']}" in out and (folder / "coverage.html").exists()
    props = {p.get("name"): p.get("value") for p in ET.parse(xml).getroot().find("properties")}
    assert props["coverage.hopper.HGMMA.64xNx16.F32.holes"] == ""


# ---- the DUT path: the exported volta unit behind test_dut's wrapper (the same build) --------------------

def test_a_dut_run_reports_coverage(tmp_path, capsys):
    from cosim.dut import __main__ as dut_cli
    from cosim.dut import export
    ins = golden.lookup("volta", "HMMA.884.F16.F16")
    export.export(ins, tmp_path)
    shutil.copy(REPO / "tests" / "data" / "dut" / "mma_wrap.sv", tmp_path)
    desc = tmp_path / "unit.toml"
    desc.write_text(export.description_text(ins, top="mma_wrap", sources=("mma_unit.v", "mma_wrap.sv"), latency=5,
                                            name="wrap"))
    xml = tmp_path / "r.xml"
    status = dut_cli.main(["run", str(desc), "-n", "4096", "--quiet", "--report", str(xml), "--coverage-dir",
                           str(tmp_path / "cov")])
    out = capsys.readouterr().out
    assert status == 0, out
    doc = json.loads((tmp_path / "cov" / "coverage.json").read_text())["coverage"][0]
    assert doc["offered"] == 4096 + 4096                # the run and its structured pass, both measured
    hit = len(doc["bins"]) - len(doc["unreachable"]) - len(doc["missed"])
    assert table.header(coverage=True) in out and f" {hit}/" in out
    assert f"volta HMMA.884.F16.F16: {doc['summary']}" in out
    props = {p.get("name") for p in ET.parse(xml).getroot().find("properties")}
    assert "coverage.volta.HMMA.884.F16.F16.reachable" in props


def test_a_tile_device_is_measured_in_dot_adds(tmp_path):
    """The tile engine example (test_dut_tile's build): every chained dot-add of its transactions measured."""
    from cosim.dut import run as drun
    from cosim.dut.builds import prepare
    prep = prepare(REPO / "examples" / "dut" / "tile_engine" / "unit.toml")
    (target, ins), = prep.pairs
    dr = drun.run_target(prep, target, ins, _config(tmp_path, n=2000, build_root=None, out=io.StringIO()))
    assert dr.result.ok, dr.result.message
    assert dr.result.coverage.dot_adds == dr.result.coverage.offered == dr.result.vectors >= 2000


# ---- make coverage -----------------------------------------------------------------------------------------

def _make(*args):
    return subprocess.run(["make", "-s", "-o", ".venv/.installed", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "MAKEFLAGS": ""})


@pytest.mark.parametrize("args, words", [
    (["INSTR=NOPE"], "unknown instruction 'NOPE' on hopper"),
    (["INSTR=HGMMA.64xNx16.F32", "N=closure"], "-n closure sizes a run to the solved closure of --vectors cover"),
    (["INSTR=HGMMA.64xNx16.F32", "N=0"], "argument -n: must be at least 1, got 0 (or closure: with --vectors"),
])
def test_make_coverage_bad_input_is_one_line(args, words):
    done = _make("coverage", "ARCH=hopper", *args)
    ours = [x for x in done.stderr.splitlines()                   # make's own line: make: or make[N]: (nested)
            if x.strip() and not re.match(r"make(\[\d+\])?: ", x) and not x.startswith("note:")]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(ours) == 1 and words in ours[0], done.stderr


def test_make_coverage_passes_its_variables():
    dry = subprocess.run(["make", "-n", "-s", "-o", ".venv/.installed", "coverage", "ARCH=hopper",
                          "INSTR=HGMMA.64xNx16.F32", "VECTORS=cover", "CLOSED=yes", "REPORT=r.xml"], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    line = dry.stdout.split()
    assert dry.returncode == 0 and line[3:6] == ["run", "hopper", "HGMMA.64xNx16.F32"], dry.stdout
    for words in (["-n", "closure"], ["--vectors", "cover"], ["--require-closed=yes"], ["--report", "r.xml"]):
        assert " ".join(words) in " ".join(line), (words, dry.stdout)
    with_n = subprocess.run(["make", "-n", "-s", "-o", ".venv/.installed", "coverage", "VECTORS=cover", "N=50"],
                            cwd=REPO, capture_output=True, text=True, timeout=60).stdout
    assert "-n 50" in with_n and "closure" not in with_n
