"""``golden.bench`` runs end to end on a tiny batch, and its before/after switch really swaps SFMA's
binary64 path (same bits either way, through ``dot_add``).  Rates are not checked here: speed lives
in the benchmark, not in timed tests."""

from __future__ import annotations

import re
import time

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


def test_the_bench_rows_compile_no_shape_past_make_tests_tier():
    """The bench's rows that run a kernel of their own shape are among the shapes make test compiles
    anyway (tests/support/kernel_shapes.py): its run above compiles none of its own."""
    from kernel_shapes import default_tier
    rows = [lookup(arch, name) for arch, name, _ in bench.REPRESENTATIVES]
    assert default_tier(rows) == rows


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


def test_reference_targets_by_family():
    assert bench.reference_target(lookup("hopper", "HMMA.16816.F32")) == 40
    assert bench.reference_target(lookup("cdna3", "v_mfma_f32_32x32x8_f16")) == 40
    assert bench.reference_target(lookup("cdna2", "v_mfma_f32_32x32x8_f16")) == 10
    assert bench.reference_target(lookup("hopper", "DMMA.8x8x4")) == 10
    assert bench.reference_target(lookup("cdna3", "v_mfma_f32_16x16x4_f32")) is None      # f32 SFMA: no target


def _fake_rates(monkeypatch, golden_rate, reference_rate):
    """The targets table on fixed rates (no timing, no mmasim needed)."""
    monkeypatch.setattr(bench.bench_reference, "available", lambda: True)
    monkeypatch.setattr(bench.bench_reference, "reference_op", lambda ins: object())
    monkeypatch.setattr(bench, "paired_rates",
                        lambda *a, **k: (golden_rate, reference_rate, golden_rate / reference_rate))


def test_calls_in_turn_alternate_and_the_ratio_is_the_pairs_median():
    """One timed call of each a round, each after untimed ones of its own for WARM_S (the caches as
    back-to-back calls leave them)."""
    seen = []
    slow = lambda: time.sleep(bench.WARM_S) or seen.append("r")          # noqa: E731
    calls = bench.time_in_turn([lambda: seen.append("g"), slow], 3)
    # a quick function runs untimed for WARM_S before its timed call; a slow one once
    assert re.fullmatch(r"(g{3,}rr){3}", "".join(seen)) and [len(c) for c in calls] == [3, 3]
    assert all(w >= 0 and cpu >= 0 for c in calls for w, cpu in c)


@pytest.mark.parametrize("golden_rate, verdict", [(40e6, "PASS"), (39.9e6, "FAIL")])
def test_targets_table_says_pass_or_fail_and_writes_the_doc(monkeypatch, capsys, tmp_path, golden_rate, verdict):
    """A rate just under the target (the planted fault) reads FAIL; the table lands between the doc's
    markers and nowhere else."""
    _fake_rates(monkeypatch, golden_rate, 1e6)
    doc = tmp_path / "doc.md"
    doc.write_text(f"before\n{bench.DOC_BEGIN}\nold table\n{bench.DOC_END}\nafter\n")
    assert bench.main(["--targets", "-n", "10", "--repeat", "1", "--only", "hopper HMMA.16816.F32",
                       "--write-doc", str(doc)]) == 0
    out = capsys.readouterr().out
    assert (f"| hopper | HMMA.16816.F32 | FDA | normal | {golden_rate:,.0f} | 1,000,000 | {golden_rate / 1e6:.1f}x "
            f"| 40x | {verdict} |") in out
    text = doc.read_text()
    assert text.startswith(f"before\n{bench.DOC_BEGIN}\n") and text.endswith(f"{bench.DOC_END}\nafter\n")
    assert "old table" not in text and f"| {verdict} |" in text and ("| PASS |" in text) == (verdict == "PASS")


def test_write_doc_refuses_a_file_without_markers(capsys, tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("no markers\n")
    assert bench.main(["--targets", "--write-doc", str(doc)]) == 2
    assert "has no" in capsys.readouterr().err and doc.read_text() == "no markers\n"
    assert bench.main(["--write-doc", str(doc)]) == 2
    assert "give both" in capsys.readouterr().err


def test_pinned_runs_on_one_core_and_restores():
    import os
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity on this OS")
    before = os.sched_getaffinity(0)
    from golden import kernels
    with kernels.pinned() as core:
        assert os.sched_getaffinity(0) == {core}
    assert os.sched_getaffinity(0) == before


def test_kernel_profile_runs_and_refuses_bad_input(capsys):
    from golden.kernels import profile
    assert profile.main(["-n", "200", "--repeat", "1", "--only", "DMMA.8x8x4"]) == 0
    out = capsys.readouterr().out
    assert "hopper   DMMA.8x8x4" in out and " us" in out
    assert profile.main(["--only", "NOSUCH"]) == 2
    assert "matches no row" in capsys.readouterr().err
    assert profile.main(["-n", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err


@pytest.mark.slow
def test_kernel_profile_phases_cover_the_integer_fda_path_only():
    from golden.kernels import profile
    assert len(profile.fda_phases(lookup("hopper", "HMMA.16816.F32"), 2000, 1)) == len(profile.PHASES)
    assert profile.fda_phases(lookup("hopper", "DMMA.8x8x4"), 2000, 1) == []


def test_kernel_profile_paths_time_a_shape_against_its_family(capsys):
    """A shape's kernel beside its family's (the same bits, or it stops); an instruction without one
    has no row."""
    from golden.kernels import profile
    rates = profile.path_rates(lookup("cdna3", "v_mfma_f32_32x32x8_f16"), 300, 1)
    assert [k for k, _, _ in rates] == ["normal", "bits"] and all(s > 0 and b > 0 for _, s, b in rates)
    assert profile.path_rates(lookup("hopper", "DMMA.8x8x4"), 300, 1) == []
    assert profile.main(["-n", "300", "--repeat", "1", "--only", "v_mfma_f32_32x32x8_f16", "--paths"]) == 0
    assert "its family's kernel" in capsys.readouterr().out


def test_kernel_profile_batch_costs(monkeypatch):
    from golden import bench_reference
    from golden.kernels import profile
    monkeypatch.setattr(bench_reference, "available", lambda: False)      # golden's side only (no torch import)
    costs = profile.batch_costs(lookup("hopper", "DMMA.8x8x4"), batches=(1, 8))
    assert [n for n, _, _ in costs] == [1, 8]
    assert all(g > 0 and r is None for _, g, r in costs)


def test_paired_rates_read_the_ratio_round_by_round(monkeypatch):
    """A round where both calls ran slow counts as one ratio among the others: golden's CPU seconds
    1, 2, 3 against the reference's 30, 4, 10 are rounds of 30x, 2x and 3.3x, median 3.3x (the
    medians' ratio would read 5x)."""
    monkeypatch.setattr(bench.bench_reference, "reference_call", lambda *a: (lambda: None))
    monkeypatch.setattr(bench, "time_in_turn", lambda fns, repeat: [[(1, 1.0), (1, 2.0), (1, 3.0)],
                                                                    [(1, 30.0), (1, 4.0), (1, 10.0)]])
    gold, ref, ratio = bench.paired_rates(lookup("hopper", "HMMA.16816.F32"), 60, "normal", 3)
    assert (gold, ref) == (30.0, 6.0) and ratio == pytest.approx(10 / 3)


def test_kernel_ab_refuses_bad_input_with_one_line():
    """tools/kernel_ab.py: an unknown revision or instruction, or a count below 1, is one line and
    exit 2, before anything compiles."""
    import subprocess
    import sys
    tool = ["tools/kernel_ab.py"]
    for args, code, says in ((["HEAD", "HEAD", "hopper:NOPE"], 2, "unknown instruction 'NOPE'"),
                             (["HEAD", "HEAD", "hopper"], 2, "unknown instruction ''"),
                             (["no-such-rev", "HEAD", "hopper:DMMA.8x8x4"], 2, "'no-such-rev' is not a revision"),
                             (["HEAD", "HEAD", "hopper:DMMA.8x8x4", "-n", "0"], 2, "1 or more")):
        run = subprocess.run([sys.executable, *tool, *args], capture_output=True, text=True, timeout=120)
        assert run.returncode == code, (args, run.stderr)
        assert says in run.stderr and "Traceback" not in run.stderr, run.stderr
