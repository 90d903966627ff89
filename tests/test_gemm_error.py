"""``python -m golden gemm-error``: the exact reference against Python fractions, the table and
the plot, and one clear line for each bad argument."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from golden.cli import main
from golden.gemm_error import exact_product


def test_exact_product_equals_fractions():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2, 300)) * np.exp2(rng.integers(-40, 40, (2, 300)))
    Y = rng.standard_normal((300, 3))
    got = exact_product(X, Y)
    for m in range(2):
        for n in range(3):
            exact = sum(Fraction(float(X[m, k])) * Fraction(float(Y[k, n])) for k in range(300))
            assert got[m, n] == float(exact)          # float(Fraction) rounds correctly
    # a plain float64 dot product is not the reference: it differs here
    assert not np.array_equal(X @ Y, got)


def test_table_and_plot(tmp_path, capsys):
    png = tmp_path / "err.png"
    argv = ["gemm-error", "hopper", "QGMMA.64xNx32.F32.E4M3.E4M3", "--kernel", "fp8-no-promotion,fp8-promote-4",
            "--k", "128..512", "--m", "8", "--n", "8", "--params", "F=20,out_frac_bits=20", "--plot", str(png)]
    assert main(argv) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| hopper")]
    assert len(rows) == 2 * 2 * 3
    err = {(r.split("|")[2].strip(), r.split("|")[3].strip(), int(r.split("|")[4])): float(r.split("|")[5])
           for r in rows}
    # promotion bounds the error; without it the E8M13 accumulator's error grows with K
    assert err["fp8-no-promotion", "catalog", 512] > 2 * err["fp8-promote-4", "catalog", 512]
    assert err["fp8-no-promotion", "F=20,out_frac_bits=20", 512] < err["fp8-no-promotion", "catalog", 512] / 100
    assert png.stat().st_size > 10_000


@pytest.mark.parametrize("extra, words", [
    (["--k", "64..x"], "--k '64..x': give LO..HI"),
    (["--k", "0"], "every K must be between 1 and 65536"),
    (["--kernel", "fast"], "unknown kernel preset 'fast'; valid: k-loop"),
    (["--params", "Q=3"], "'Q' is not a golden.Params field"),
    (["--params", "F=-1"], "needs F >= 0"),
    (["--m", "0"], "--m must be between 1 and 1024"),
    (["--plot", "out.jpg"], "give a .png path"),
    (["--kernel", "block-scaled"], "is not block-scaled"),
    (["--kernel", "splitk-4-tree"], "leaves slices without k-steps: K=64 is 2 k-steps"),
])
def test_bad_arguments_are_one_line(extra, words, capsys):
    assert main(["gemm-error", "hopper", "QGMMA.64xNx32.F32.E4M3.E4M3", "--k", "64", *extra]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and words in err[0], captured.err
    assert "|" not in captured.out                   # nothing computed before the error


def test_gemm_bench_rows_and_bad_shape(capsys):
    assert main(["gemm-bench", "--shape", "8x8x64", "--big", "0"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert len(rows) == 4 and all(float(r.split()[4]) > 0 for r in rows)
    assert main(["gemm-bench", "--shape", "8x8"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --shape '8x8': give MxNxK")
