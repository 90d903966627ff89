"""Planted faults that random finite vectors miss and the cover vectors catch.

Three faulty devices (tests/support/planted_faults.py) each differ from golden in one corner.  A
million vectors of the ``normal`` kind (random finite values, what a testbench's randn gives) never
reach any of the three corners: their coverage has the matching bin as a hole, and they show no
mismatch.  The ``cover`` vectors hit every reachable bin, and so catch each fault.

The tie at the smallest binade cannot happen on HGMMA.64xNx16.F32 at all (its f32 sum never carries
a bit at 2^-150: the bin is unreachable there, with that reason), so that fault is planted in the
f16-output sibling HGMMA.64xNx16.F16, where the bin is reachable.  Uniform random bits (half of the
``mixed`` kind) do reach shift == F; what they give is checked too.
"""

from __future__ import annotations

import numpy as np
import pytest
from planted_faults import FAULTS

import golden
from golden.coverage import empty, row_hits
from golden.formats import from_float, to_float
from golden.rules import Rounding
from golden.vectors import random_operands

# the module's fixtures (a million vectors and golden's results on them) are built once: its tests
# share one xdist worker (make test: --dist loadgroup), not a copy in each
pytestmark = pytest.mark.xdist_group("cover_faults")

N_RANDOM = 1_000_000
N_COVER = 1024
CHUNK = 1 << 16

# the fault, its instruction, and the bin whose corner it sits in
CASES = {
    "drop_shift_F": ("HGMMA.64xNx16.F32", "shift.F"),
    "tie_up_at_min_exponent": ("HGMMA.64xNx16.F16", "rounding.tie_at_min_exponent*positive"),
    "inf_c_beats_nan_product": ("HGMMA.64xNx16.F32", "special_cross.c_inf*products_nan"),
}


@pytest.fixture(scope="module")
def instructions():
    return {name: golden.lookup("hopper", name) for name in ("HGMMA.64xNx16.F32", "HGMMA.64xNx16.F16")}


@pytest.fixture(scope="module")
def normal_vectors(instructions):
    """A million ``normal`` vectors for each instruction: drawn once for the f32 one; the f16 one takes
    the same a and b, and c rounded (RZ) to f16 (still a random finite value)."""
    a, b, c, _, _ = random_operands(instructions["HGMMA.64xNx16.F32"], N_RANDOM, np.random.default_rng(11), "normal")
    c16 = from_float("f16", to_float("f32", c), Rounding.RZ).astype(np.uint64)
    return {"HGMMA.64xNx16.F32": (a, b, c), "HGMMA.64xNx16.F16": (a, b, c16)}


@pytest.fixture(scope="module")
def cover_vectors(instructions):
    """``N_COVER`` vectors of the ``cover`` kind for each instruction."""
    return {name: random_operands(ins, N_COVER, np.random.default_rng(12), "cover")[:3]
            for name, ins in instructions.items()}


@pytest.fixture(scope="module")
def normal_golden(instructions, normal_vectors):
    """golden's results on the million normal vectors, once per instruction."""
    return {name: golden.dot_add(ins, *normal_vectors[name]) for name, ins in instructions.items()}


def _mismatches(fault, ins, ops, expected=None) -> int:
    expected = golden.dot_add(ins, *ops) if expected is None else expected
    return int(np.count_nonzero(FAULTS[fault](ins, *ops) != expected))


def _bin_hits(ins, ops, full_bin: str) -> int:
    """Dot-adds of ``ops`` that hit ``full_bin`` ("point.bin"), measuring only its point, a chunk at a time."""
    point = next(p for p in golden.coverage.cover_points(ins) if p.name == full_bin.split(".")[0])
    return sum(int(row_hits(ins, *(x[lo:lo + CHUNK] for x in ops), points=[point])[full_bin].sum())
               for lo in range(0, ops[0].shape[0], CHUNK))


@pytest.mark.parametrize("fault", list(CASES))
def test_a_million_normal_vectors_miss_the_fault_and_its_bin(fault, instructions, normal_vectors, normal_golden):
    name, full_bin = CASES[fault]
    ins, ops = instructions[name], normal_vectors[name]
    assert full_bin not in empty(ins).unreachable
    assert _bin_hits(ins, ops, full_bin) == 0                # a hole in the random vectors' coverage
    assert _mismatches(fault, ins, ops, normal_golden[name]) == 0       # so the fault goes unseen


@pytest.mark.parametrize("fault", list(CASES))
def test_cover_vectors_hit_the_bin_and_catch_the_fault(fault, instructions, cover_vectors):
    name, full_bin = CASES[fault]
    ins, ops = instructions[name], cover_vectors[name]
    assert _bin_hits(ins, ops, full_bin) >= 1
    assert _mismatches(fault, ins, ops) >= 1


@pytest.mark.parametrize("name", ["HGMMA.64xNx16.F32", "HGMMA.64xNx16.F16"])
def test_cover_vectors_close_every_reachable_bin(name, instructions, cover_vectors):
    ins, ops = instructions[name], cover_vectors[name]
    cov = golden.coverage.measure(ins, *ops)
    assert cov.closed(), cov.missed()


def test_each_fault_differs_from_golden_only_in_its_corner(instructions):
    """Hand-made rows: each device is wrong on its corner and right on a neighbour of it."""
    f32, f16 = instructions["HGMMA.64xNx16.F32"], instructions["HGMMA.64xNx16.F16"]

    def row(ins, products, c, c_dtype=np.float32):
        a, b = np.zeros((1, ins.k), np.float16), np.zeros((1, ins.k), np.float16)
        for i, (x, y) in enumerate(products):
            a[0, i], b[0, i] = x, y
        return a, b, np.asarray([c], c_dtype)

    def wrong(fault, ins, ops):
        return bool((FAULTS[fault](ins, *ops) != golden.dot_add(ins, *ops)).any())

    at_F = [(1.0, 1.0), (-(2.0 ** -12), 2.0 ** -13)]              # 1 - 2^-25: the dropped unit shows under RZ
    assert wrong("drop_shift_F", f32, row(f32, at_F, 0.0))
    assert not wrong("drop_shift_F", f32, row(f32, [(1.0, 1.0), (-(2.0 ** -12), 2.0 ** -12)], 0.0))   # shift F-1
    tie = [(2.0 ** -7, 2.0 ** -7), (2.0 ** -12, 2.0 ** -13)]      # 2^-14 + 2^-25: RNE keeps the even 2^-14
    assert wrong("tie_up_at_min_exponent", f16, row(f16, tie, 0.0, np.float16))
    assert not wrong("tie_up_at_min_exponent", f16, row(f16, [(1.0, 1.0), (2.0 ** -5, 2.0 ** -6)], 0.0, np.float16))
    assert wrong("inf_c_beats_nan_product", f32, row(f32, [(np.nan, 1.0)], np.inf))
    assert not wrong("inf_c_beats_nan_product", f32, row(f32, [(np.inf, 1.0)], np.inf))


def test_mixed_vectors_catch_only_the_shift_fault(instructions):
    """Half of ``mixed`` is uniform random bits: products at shift exactly F are common there, so the
    shift fault is caught; an infinite c (2 of 2^32 f32 words) and a tie in the smallest binade are not."""
    got = {}
    for fault, (name, _) in CASES.items():
        ins = instructions[name]
        ops = random_operands(ins, 1 << 16, np.random.default_rng(13), "mixed")[:3]
        got[fault] = _mismatches(fault, ins, ops)
    assert got["drop_shift_F"] > 100
    assert got["inf_c_beats_nan_product"] == 0 and got["tie_up_at_min_exponent"] == 0
