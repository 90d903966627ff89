"""``golden.bench`` runs end to end on a tiny batch, and its before/after switch really swaps SFMA's
binary64 path (same bits either way, through ``dot_add``).  Rates are not checked here: speed lives
in the benchmark, not in timed tests."""

from __future__ import annotations

import numpy as np
import pytest

import golden.fma
from golden import bench, dot_add, lookup
from golden.vectors import random_operands


def test_bench_runs_and_prints_both_tables(capsys):
    assert bench.main(["-n", "300", "--repeat", "1", "--no-reference"]) == 0
    out = capsys.readouterr().out
    for row in bench.REPRESENTATIVES:
        assert row[1] in out
    assert "fma_f64_integer" in out and "fma alone (fmas/s)" in out
    for arch, name in bench.F64_SFMA:
        assert f"{arch} {name} (dot-adds/s)" in out


def test_sfma_path_switch_swaps_and_restores():
    ins = lookup("hopper", "DMMA.8x8x4")
    for kind in ("normal", "bits", "structured"):
        a, b, c, _, _ = random_operands(ins, 3000, np.random.default_rng(4), kind)
        calls = []

        def counting(x, y, z):
            calls.append(len(x))  # noqa: B023
            return golden.fma.fma_f64_integer(x, y, z)

        with bench.sfma_f64_path(counting):
            old = dot_add(ins, a, b, c)
        assert sum(calls) == 3000 * ins.k, "the switch did not route SFMA's steps through the given fma"
        assert golden.fma.fma_f64 is not counting, "the switch did not restore fma_f64"
        assert np.array_equal(dot_add(ins, a, b, c), old)


def test_only_selects_rows_and_refuses_none(capsys):
    assert bench.main(["-n", "300", "--repeat", "1", "--no-fma", "--no-reference", "--only", "DMMA,GPS"]) == 0
    out = capsys.readouterr().out
    assert "DMMA.8x8x4" in out and "v_mfma_f32_32x32x8_f16" in out and "HMMA.16816.F32" not in out
    assert "reference model (mmasim): not timed" in out
    assert bench.main(["--only", "NOSUCH"]) == 2
    assert "error: --only 'NOSUCH' matches no row" in capsys.readouterr().err


def test_reference_model_names():
    """Catalog names map to the reference model's (CDNA2 keeps CDNA1's spelling; its 4-product bf16
    group is ``_1k``); without a model, no column."""
    from golden import bench_reference as R
    cdna2 = ["f32_32x32x8f16", "f32_32x32x4bf16", "f32_32x32x8bf16_1k"]
    cdna3 = ["f32_32x32x8_f16"]
    assert R._amd_suffix(lookup("cdna2", "v_mfma_f32_32x32x8_f16"), cdna2) == "f32_32x32x8f16"
    assert R._amd_suffix(lookup("cdna2", "v_mfma_f32_32x32x4bf16"), cdna2) == "f32_32x32x4bf16"
    assert R._amd_suffix(lookup("cdna2", "v_mfma_f32_32x32x8_bf16"), cdna2) == "f32_32x32x8bf16_1k"
    assert R._amd_suffix(lookup("cdna3", "v_mfma_f32_32x32x8_f16"), cdna3) == "f32_32x32x8_f16"
    assert R._amd_suffix(lookup("cdna3", "v_mfma_f32_16x16x16_bf16"), cdna3) is None


@pytest.mark.slow
@pytest.mark.parametrize("unit", [("cdna3", "v_mfma_f32_32x32x8_f16"), ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8"),
                                  ("cdna2", "v_mfma_f32_32x32x4bf16"), ("hopper", "DMMA.8x8x4"),
                                  ("cdna3", "v_mfma_f32_16x16x4_f32")], ids=lambda u: f"{u[0]}-{u[1]}")
def test_reference_model_column_times_the_same_results(unit):
    """Where mmasim is installed, the bench times it on operands it computes as golden does (normal
    values: no disputed rule, no NaN payload), so the column compares like with like."""
    from golden import bench_reference as R
    if not R.available():
        pytest.skip("mmasim is not installed (pip install mma-rtl[reference])")
    ins = lookup(*unit)
    a, b, c, _, _ = random_operands(ins, 500, np.random.default_rng(9), "normal")
    d = R.reference_call(ins, a, b, c)()
    width = d.dtype.itemsize
    got = d.view({4: torch_int(32), 8: torch_int(64)}[width]).numpy().view(f"u{width}")
    assert np.array_equal(got.astype(np.uint64), dot_add(ins, a, b, c).astype(np.uint64))


def torch_int(bits):
    import torch
    return getattr(torch, f"int{bits}")
