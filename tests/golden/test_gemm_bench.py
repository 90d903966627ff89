"""python -m golden gemm-bench: both routes in every row (their bits compared), the output written between
a file's markers with its command, and bad arguments refused in one line before anything runs."""

from __future__ import annotations

import numpy as np
import pytest

from golden import gemm_bench
from golden.cli import main

pytest.importorskip("numba")


def test_rows_and_markdown(tmp_path, capsys):
    doc = tmp_path / "doc.md"
    doc.write_text(f"# title\n\nbefore\n{gemm_bench.BEGIN}\nold table\n{gemm_bench.END}\nafter\n")
    assert main(["gemm-bench", "--shape", "8x16x64", "--big", "0", "--repeat", "1", "--markdown", str(doc)]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = out[2:]
    assert len(rows) == len(gemm_bench.BENCH)
    assert all(float(r.split()[4]) > 0 and float(r.split()[5]) > 0 for r in rows)
    text = doc.read_text()
    assert "old table" not in text and text.startswith("# title\n\nbefore\n") and text.endswith("\nafter\n")
    block = text.split(gemm_bench.BEGIN)[1].split(gemm_bench.END)[0].splitlines()
    assert block[2] == f"$ python -m golden gemm-bench --shape 8x16x64 --big 0 --threads 1 --repeat 1 --markdown {doc}"
    assert block[3:3 + len(out)] == out


def test_a_route_giving_other_bits_stops_the_bench(monkeypatch):
    real = gemm_bench.gemm

    def planted(*args, route="auto", **kw):              # the tiles route one bit off
        d = real(*args, route=route, **kw)
        return d ^ np.uint32(route == "tiles")
    monkeypatch.setattr(gemm_bench, "gemm", planted)
    ins = gemm_bench.lookup(*gemm_bench.BIG)
    with pytest.raises(AssertionError, match="the tiles and rows routes gave different bits"):
        gemm_bench.bench_row(ins, "k-loop", 4, 8, 32, 1, 1, 1)


@pytest.mark.parametrize("argv, words", [
    (["--markdown", "{missing}"], "--markdown {missing}: cannot read it"),
    (["--markdown", "{nomarkers}"], "--markdown {nomarkers}: needs one line <!-- gemm-bench: begin -->"),
    (["--repeat", "0"], "--repeat must be at least 1 and at most 100, got 0"),
    (["--threads", "0"], "--threads must be at least 1"),
])
def test_bad_arguments(argv, words, tmp_path, capsys):
    paths = {"missing": str(tmp_path / "none.md"), "nomarkers": str(tmp_path / "plain.md")}
    (tmp_path / "plain.md").write_text("no markers\n")
    argv = [a.format(**paths) for a in argv]
    assert main(["gemm-bench", "--big", "0", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words.format(**paths) in err[0], err


@pytest.mark.slow
def test_pin_runs_the_bench_on_one_cpu():
    import os
    import subprocess
    import sys
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("CPU affinity is Linux's")
    out = subprocess.run([sys.executable, "-m", "golden", "gemm-bench", "--pin", "--shape", "8x8x64", "--big", "0",
                          "--repeat", "1"], capture_output=True, text=True, check=True).stdout.splitlines()
    assert f"pinned to CPU {min(os.sched_getaffinity(0))}" in out[0] and len(out) == 2 + len(gemm_bench.BENCH)
