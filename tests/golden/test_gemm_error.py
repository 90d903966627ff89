"""``python -m golden gemm-error``: the exact reference against Python fractions, the table and
the plot, and one clear line for each bad argument."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import golden
from golden.cli import main
from golden.formats import from_float
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
    (["--params", "F=-1"], "Params.F=-1 is not valid"),
    (["--m", "0"], "--m must be at least 1 and at most 1,024, got 0"),
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


def capture_file(path, kernel, route="e4m3_f32out_promoted", capability=(9, 0)):
    """A file in tools/gpu_gemm_capture.py's format whose results golden.gemm made under ``kernel``."""
    import json

    from golden.gemm import gemm
    ins = golden.lookup("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3")
    rng = np.random.default_rng(3)
    A = from_float("e4m3", rng.uniform(0, 1, (4, 1024)))
    B = from_float("e4m3", rng.uniform(0, 1, (1024, 16)))
    cases = [{"shape": [4, 16, 1024], "index": 0, "deterministic": True, "row0_batch_invariant": True,
              "out_dtype": "torch.float32"}, {"shape": [1, 1, 7], "error": "RuntimeError: refused"}]
    meta = {"device": "a GPU", "capability": list(capability), "torch": "x", "route": route, "cases": cases}
    np.savez(path, meta=json.dumps(meta), a_0=A, b_0=B, d_0=gemm(A, B, instr=ins, kernel=kernel))
    return str(path)


def test_gemm_compare_names_the_composition(tmp_path, capsys):
    from golden.gemm import Kernel
    for kernel, best in ((Kernel(promotion=4), "promote-4 1.0000"), (Kernel(split_k=3, split_unit=4),
                                                                     "splitk-3-unit4 1.0000")):
        assert main(["gemm-compare", capture_file(tmp_path / "c.npz", kernel), "--rows", "2"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[1].startswith("4x16x1024 (deterministic=True") and out[1].split(": ", 1)[1].startswith(best)
        assert "not run on the GPU (RuntimeError: refused)" in out[2]
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.zeros(1))
    assert main(["gemm-compare", str(bad)]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert main(["gemm-compare", capture_file(tmp_path / "c.npz", Kernel(), capability=(6, 1))]) == 2
    assert "compute capability (6, 1)" in capsys.readouterr().err
