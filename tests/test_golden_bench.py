"""``golden.bench`` runs end to end on a tiny batch, and its before/after switch really swaps SFMA's
binary64 path (same bits either way, through ``dot_add``).  Rates are not checked here: speed lives
in the benchmark, not in timed tests."""

from __future__ import annotations

import numpy as np

import golden.fma
from golden import bench, dot_add, lookup
from golden.vectors import random_operands


def test_bench_runs_and_prints_both_tables(capsys):
    assert bench.main(["-n", "300", "--repeat", "1"]) == 0
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
            calls.append(len(x))
            return golden.fma.fma_f64_integer(x, y, z)

        with bench.sfma_f64_path(counting):
            old = dot_add(ins, a, b, c)
        assert sum(calls) == 3000 * ins.k, "the switch did not route SFMA's steps through the given fma"
        assert golden.fma.fma_f64 is not counting, "the switch did not restore fma_f64"
        assert np.array_equal(dot_add(ins, a, b, c), old)
