"""The SFMA and GPS kernels' own loops against the numpy path: GPS's bf16 decode and its group-sum
accumulation for one, two and four groups a row, operands in their own width and in uint64, every
vector kind; both kernels on row ranges that start past row 0 and end inside a block (their loops
index slices taken from ``lo``); a planted fault caught on each path."""

import numpy as np
import pytest

import golden
import golden.formats
from golden import api, kernels
from golden.catalog import lookup
from golden.kernels import spec
from golden.vectors import KINDS, random_operands

pytestmark = [pytest.mark.skipif(not kernels.available(), reason="numba is not installed"),
              pytest.mark.xdist_group("golden_kernels")]

ROWS = 48               # per vector kind: the loops' paths, not their statistics

# (unit, groups a row): K = 2 in pairs and K = 4 in fours (one), K = 4 in pairs and f16 K = 8 in
# fours (two, read as one word a row), K = 16 in fours (four)
GPS_UNITS = [(("cdna2", "v_mfma_f32_32x32x2bf16"), 1), (("cdna2", "v_mfma_f32_16x16x4_4b_bf16"), 1),
             (("cdna2", "v_mfma_f32_32x32x4bf16"), 2), (("cdna2", "v_mfma_f32_32x32x8_f16"), 2),
             (("cdna2", "v_mfma_f32_16x16x16_bf16"), 4)]


def _operands(ins, n, seed, kind, narrow):
    return random_operands(ins, n, np.random.default_rng(seed), kind, narrow=narrow)[:3]


def _bad_rows(ins, narrow: bool, kinds=KINDS) -> int:
    bad = 0
    for i, kind in enumerate(kinds):
        a, b, c = _operands(ins, ROWS, [5, i], kind, narrow)
        want = golden.dot_add(ins, a, b, c, backend="numpy")
        got = golden.dot_add(ins, a, b, c, backend="numba", threads=1)
        bad += int((got != want).sum())
    return bad


@pytest.mark.parametrize("unit,groups", GPS_UNITS, ids=lambda u: "-".join(u) if isinstance(u, tuple) else str(u))
def test_gps_paths_match_every_kind(unit, groups):
    ins = lookup(*unit)
    assert ins.k // ins.params.group == groups
    assert _bad_rows(ins, narrow=True) == 0
    assert _bad_rows(ins, narrow=False) == 0


@pytest.mark.parametrize("unit", [("cdna2", "v_mfma_f32_32x32x4bf16"), ("cdna2", "v_mfma_f32_32x32x2bf16")],
                         ids="-".join)
def test_gps_bf16_in_own_width_catches_the_planted_fault(unit):
    ins = lookup(*unit)
    with kernels.planted_fault():
        assert _bad_rows(ins, narrow=True, kinds=("normal", "structured")) > 0


def _row_range(ins, n, lo, hi, narrow, fault=False):
    """The row kernel on rows ``lo .. hi - 1`` of ``n`` (as a thread's range is run), every other
    row of ``out`` left as it was; with ``fault`` the planted fault on (as kernels.run plants it)."""
    a, b, c = _operands(ins, n, 9, "mixed", narrow)
    pl = kernels.plan(ins)
    prm = pl.prm.copy()
    prm[spec.P_FAULT] = int(fault)
    packed = [kernels._operand(x) for x in (a, b, c, None, None)]
    isz = np.array([s for _, s in packed], np.int64)
    out = np.full(n, 0xDEAD, np.uint64)
    pl.rows(lo, hi, *(v for v, _ in packed), isz, pl.k, pl.fmts, pl.vtab, pl.etab, prm, pl.order, out)
    want = golden.dot_add(ins, a, b, c, backend="numpy").astype(np.uint64)
    return out, want


# a range past row 0 that ends inside GPS's block of 256 rows, and one that spans two blocks
@pytest.mark.parametrize("unit", [("hopper", "DMMA.8x8x4"), ("cdna3", "v_mfma_f32_16x16x4_f32"),
                                  ("hopper", "DMMA.16x8x8"), ("cdna2", "v_mfma_f32_32x32x4bf16"),
                                  ("cdna2", "v_mfma_f32_32x32x8_f16")], ids="-".join)
@pytest.mark.parametrize("lo,hi", [(3, 200), (250, 530)])
def test_row_ranges_past_row_zero(unit, lo, hi):
    ins = lookup(*unit)
    for narrow in (True, False):
        out, want = _row_range(ins, 600, lo, hi, narrow)
        assert np.array_equal(out[lo:hi], want[lo:hi])
        assert (out[:lo] == 0xDEAD).all() and (out[hi:] == 0xDEAD).all()
        bad, _ = _row_range(ins, 600, lo, hi, narrow, fault=True)
        assert (bad[lo:hi] != want[lo:hi]).any()


@pytest.mark.parametrize("unit", [("cdna2", "v_mfma_f32_32x32x4bf16"), ("cdna2", "v_mfma_f32_32x32x8_f16")],
                         ids="-".join)
def test_gps_decodes_every_16_bit_pattern(unit):
    """Every pattern of a and of b times a power of two that lifts a subnormal operand's product into
    binary32's normal range (so keeping a subnormal operand, which GPS flushes, changes d)."""
    ins = lookup(*unit)
    fa = ins.formats[0]
    lift = golden.formats.from_float(fa, 2.0 ** (100 if fa.exp_bits == 8 else 14))
    pats = np.arange(1 << 16, dtype=np.uint16)
    a = np.zeros((2 << 16, ins.k), np.uint16)
    b = np.zeros_like(a)
    a[:1 << 16, 0], b[:1 << 16, 0] = pats, lift
    a[1 << 16:, 1], b[1 << 16:, 1] = lift, pats
    c = np.zeros(2 << 16, np.uint32)
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    for ops in ((a, b, c), (a.astype(np.uint64), b.astype(np.uint64), c.astype(np.uint64))):
        assert np.array_equal(golden.dot_add(ins, *ops, backend="numba", threads=1), want)


@pytest.mark.parametrize("shapes", [[(3,), (3,), (3,)], [(), (), ()], [(2, 5), (2, 5), (2, 5)], [(3,), (1,), (3,)],
                                    [(4, 1), (1, 6), (4, 6)], [(0,), (0,), (0,)], [(3,), (2,), (3,)],
                                    [(2, 3), (3,), (2, 3)], [(2, 3), (3, 2), (2, 3)]], ids=str)
def test_batch_shape_is_numpy_broadcast(shapes):
    """dot_add's per-call batch shape (equal shapes without np.broadcast_shapes) is numpy's, and
    shapes that do not broadcast are refused as numpy refuses them."""
    try:
        want = np.broadcast_shapes(*shapes)
    except ValueError:
        with pytest.raises(ValueError):
            api._batch_shape(shapes)
        return
    assert api._batch_shape(shapes) == want
