"""GDFS's narrow-operand kernel (golden/kernels/gdfs_int.py) against the numpy path: identical bits
on every GDFS datapath of the catalog for every vector kind, on operands in their own width and in
uint64, on designs beside the catalog that take its product-table path, chains of passes included;
its e2m1 float32 group sums equal the table's on every pair of patterns; a planted rounding fault
and a planted wrong product are caught."""

import dataclasses

import numpy as np
import pytest

import golden
from golden import kernels
from golden.catalog import instructions
from golden.descriptors import KernelCode
from golden.formats import get_format
from golden.kernels import spec
from golden.vectors import KINDS, random_operands

pytestmark = [pytest.mark.skipif(not kernels.available(), reason="numba is not installed"),
              pytest.mark.xdist_group("golden_kernels")]

ROWS = 300              # per vector kind, datapath and operand width in make test
SLOW_ROWS = 20_000


def _gdfs_datapaths():
    seen = {}
    for ins in instructions():
        if spec.kernel_code(ins.params) == KernelCode.GDFS:
            seen.setdefault(ins.datapath, ins)
    return list(seen.values())


GDFS = _gdfs_datapaths()
MXF4 = ("blackwell", "UTCOMMA.MXF4.E8")


def _own_width(ins, ops):
    """The operands in their formats' own dtypes (uint8 fp4 and scales, uint32 f32)."""
    fs = ins.scale_format and get_format(ins.scale_format)
    return tuple(x if x is None else x.astype(f.dtype) for x, f in zip(ops, (*ins.formats[:3], fs, fs)))


def mismatches(ins, n: int, kinds=KINDS, seed: int = 0, threads: int = 1) -> int:
    """Rows where numba differs from numpy, over ``n`` rows of each kind, uint64 and own-width operands."""
    bad = 0
    for i, kind in enumerate(kinds):
        ops = random_operands(ins, n, np.random.default_rng([seed, i]), kind)
        want = golden.dot_add(ins, *ops, backend="numpy")
        for form in (ops, _own_width(ins, ops)):
            got = golden.dot_add(ins, *form, backend="numba", threads=threads)
            assert got.dtype == want.dtype and got.shape == want.shape
            bad += int((got != want).sum())
    return bad


def test_every_gdfs_datapath_runs_the_narrow_kernel():
    """So the comparisons below check it (and not fused_int's kernel the plan falls back to)."""
    from golden.kernels import gdfs_int
    assert GDFS and all(kernels.plan(ins).rows is gdfs_int.gdfs_int_rows for ins in GDFS)


@pytest.mark.parametrize("ins", GDFS, ids=lambda i: f"{i.arch}-{i.name}")
def test_identical_bits_every_vector_kind(ins):
    assert mismatches(ins, ROWS) == 0


@pytest.mark.slow
@pytest.mark.parametrize("ins", GDFS, ids=lambda i: f"{i.arch}-{i.name}")
def test_identical_bits_many_rows_all_threads(ins):
    assert mismatches(ins, SLOW_ROWS, seed=1, threads=kernels.default_threads()) == 0


def test_wider_words_and_mixed_widths_read_their_low_bits():
    """fp4 in uint16/uint32 words, a and b in different widths, a tail of a block: the kernel reads
    each pattern's low byte as the numpy path reads its value bits."""
    ins = golden.lookup(*MXF4)
    a, b, c, sa, sb = random_operands(ins, 256 + 37, np.random.default_rng(3), "mixed")
    want = golden.dot_add(ins, a, b, c, sa, sb, backend="numpy")
    for wa, wb in ((np.uint16, np.uint16), (np.uint32, np.uint8), (np.uint8, np.uint64)):
        got = golden.dot_add(ins, a.astype(wa), b.astype(wb), c, sa, sb, backend="numba")
        assert np.array_equal(got, want), (wa, wb)


# designs beside the catalog: fp6 operands, a group of 8 (the product table's path), two passes
BESIDE = [({"a_format": "e3m2", "b_format": "e2m3"}, {}), ({"a_format": "e2m1", "b_format": "e3m2"}, {"group": 8}),
          ({}, {"group": 8}), ({}, {"pass_size": 32})]


@pytest.mark.parametrize("fields,change", BESIDE, ids=str)
def test_designs_beside_the_catalog(fields, change):
    from golden.kernels import gdfs_int
    ins = golden.lookup(*MXF4)
    new = dataclasses.replace(ins, params=ins.params.with_(**change), **fields)
    assert kernels.plan(new).rows is gdfs_int.gdfs_int_rows
    assert mismatches(new, 128 + 5, kinds=("bits", "normal", "structured")) == 0


def test_planted_rounding_fault_is_caught():
    ins = golden.lookup(*MXF4)
    assert mismatches(ins, ROWS, kinds=("normal", "bits")) == 0
    with kernels.planted_fault():
        assert mismatches(ins, ROWS, kinds=("normal", "bits")) > 0


def _pairs_in_groups():
    """Every (a, b) pattern pair of e2m1 once, in groups of 16, and groups that sum to zero: all
    zeros (+0 and -0), and products that cancel."""
    x, y = np.divmod(np.arange(256), 16)
    a, b = [x.astype(np.uint8)], [y.astype(np.uint8)]
    a.append(np.array([0, 8] * 8, np.uint8)), b.append(np.array([8, 0, 3, 11] * 4, np.uint8))   # zeros
    a.append(np.array([2, 2] * 8, np.uint8)), b.append(np.array([2, 10] * 8, np.uint8))         # 1 - 1 + ...
    return np.concatenate(a), np.concatenate(b)


@pytest.mark.slow       # compiles the group-sum helpers for direct calls (about 4 s CPU fresh); make test's random
# bits rows hold every pair of patterns many times over
def test_e2m1_float_sums_equal_the_product_table_and_a_wrong_product_is_caught():
    """The float32 closed form against the table of exact integer products, every pair of patterns;
    the same comparison with one table entry off by one finds the difference."""
    from golden.kernels import fused_int, gdfs_int
    ins = golden.lookup(*MXF4)
    dp = ins.datapath
    fmts = spec.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)[0]
    da, db = fused_int.decode_rows(fmts)[[spec.A, spec.B]]
    a, b = _pairs_in_groups()
    K = 16
    n = a.size // K

    def sums(PT=None):
        SG, NZ = np.zeros((1, n), np.int64), np.zeros((1, n), np.int64)
        if PT is None:
            gdfs_int.e2m1_group_sums(a, b, 0, K, n, 1, SG, NZ)
        else:
            gdfs_int.group_sums(a, b, 0, K, n, 1, 16, PT, 4, 0, 15, 0, 15, SG, NZ)
        return SG, NZ

    PT, vb = gdfs_int.product_table(da, db)
    assert vb == 4 and PT[(7 << 4) | 15] == -144            # 6 x -6 in units of 1/4
    got, want = sums(), sums(PT)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert list(want[1][0, -2:]) == [0, 1] and want[0][0, -1] == 0      # zeros, and a sum that cancels
    wrong = PT.copy()
    wrong[(5 << 4) | 3] += 1
    assert not np.array_equal(sums(wrong)[0], got[0])
