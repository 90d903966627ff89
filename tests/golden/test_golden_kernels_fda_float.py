"""NVIDIA's f16 FDA in floating-point lanes (golden/kernels/fda_float.py) against the numpy path: the
catalog's designs of its shapes take it, NaN/inf operands and c, partial blocks, every vector kind,
the int32 sum at its widest, c alone beside zero products (subnormal, at d's fraction bits), the
caller's floating-point mode, and a planted rounding fault caught."""

import dataclasses

import numpy as np
import pytest
from kernel_shapes import (
    catalog_shapes,
    every_kind_and_a_fault,
    in_callers_mode,
    own_width,
    refuses_wide_operands,
    same_bits,
)

import golden
from golden import kernels
from golden.catalog import lookup
from golden.vectors import random_operands

pytestmark = [pytest.mark.skipif(not kernels.available(), reason="numba is not installed"),
              pytest.mark.xdist_group("golden_kernels")]

# one instruction of each shape: K = 16 in one pass, and in two passes of 8 (d of the first is c of the second)
UNITS = [("hopper", "HMMA.16816.F32"), ("ampere", "HMMA.16816.F32")]


def test_the_catalog_designs_of_each_shape_take_it():
    """f16 a and b, f32 c and d, products in order, K and L of a shape: that shape's kernel, reading
    own-width operands; every shape has a catalog design; no other design takes one."""
    from golden.kernels import fda_float
    used = catalog_shapes(fda_float, ["f16", "f16", "f32", "f32"])
    assert used == set(fda_float.KERNELS.values())
    assert {kernels.plan(lookup(*u)).rows for u in UNITS} == used


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u[0])
def test_identical_bits_every_kind_and_a_planted_fault(unit):
    every_kind_and_a_fault(lookup(*unit), 96)


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u[0])
def test_plain_and_special_blocks_special_c_and_a_tail(unit):
    """Blocks of fdrda_float.BLOCK_ROWS rows: clean ones, one with an infinity and one with a NaN
    operand (inf * 0 and inf - inf NaN), c infinite or NaN, c near the f32 maximum beside a large
    product, a partial last block, two threads."""
    from golden.kernels import fdrda_float
    ins = lookup(*unit)
    n = 3 * fdrda_float.BLOCK_ROWS + 11
    a, b, c, _, _ = random_operands(ins, n, np.random.default_rng(11), "normal")
    blk = fdrda_float.BLOCK_ROWS
    a[blk + 5, 1], b[blk + 5, 1] = 0x7C00, 0x0000                   # inf * 0: NaN
    a[blk + 9, 3], b[blk + 9, 3], a[blk + 9, 4], b[blk + 9, 4] = 0x7C00, 0x3C00, 0xFC00, 0x3C00   # inf - inf
    a[blk + 12, 0], b[blk + 12, 0] = 0xFC00, 0x4000                 # -inf alone
    b[2 * blk + 3, 7] = 0x7E00                                       # a NaN operand
    c[::13], c[5::17], c[7::19] = 0x7F800000, 0xFF800000, 0x7FC00000
    c[3::23], a[3::23, 0], b[3::23, 0] = 0x7F7FFFFF, 0x7BFF, 0x7BFF
    c[blk + 12] = 0x3F800000                                         # the -inf row's c: 1.0
    want, same = same_bits(ins, a, b, c, threads=2)
    assert same
    assert np.isnan(want[[blk + 5, blk + 9, 2 * blk + 3]].view(np.float32)).all()
    assert want[blk + 12].view(np.float32) == -np.inf
    clean = slice(0, blk)
    with kernels.planted_fault():
        got = golden.dot_add(ins, *own_width(ins, a[clean], b[clean], c[clean]), backend="numba", threads=1)
    assert (got != want[clean]).any()


def test_a_shape_reads_own_widths_only():
    """A shape's kernel refuses operands wider than its own width (golden.kernels.run narrows them
    first), rather than reading their bytes as operands."""
    refuses_wide_operands(lookup(*UNITS[0]), "reads a and b as 16-bit")


@pytest.mark.parametrize("unit", [UNITS[1], ("ada", "QMMA.16832.F32.E4M3.E4M3")], ids=lambda u: u[0])
def test_a_design_of_a_shape_rounding_otherwise_runs_the_family_kernel(unit):
    """d rounded RNE, RU or RD (designs beside the catalog's): not the shape's kernel (golden.kernels.fda_float
    and fda_fp8 round RZ alone) but the family kernel, with numpy's bits."""
    from golden.kernels import fused
    ins = lookup(*unit)
    assert kernels.plan(ins).rows in kernels.shape_kernels()
    a, b, c, _, _ = random_operands(ins, 300, np.random.default_rng(13), "normal")
    for mode in ("RNE", "RU", "RD"):
        new = dataclasses.replace(ins, params=ins.datapath.params.with_(out_rounding=mode))
        assert kernels.plan(new).rows is fused.fda_rows
        want = golden.dot_add(new, a, b, c, backend="numpy")
        assert np.array_equal(golden.dot_add(new, *own_width(ins, a, b, c), backend="numba"), want), mode
        assert not np.array_equal(want, golden.dot_add(ins, a, b, c, backend="numpy")), mode


@pytest.mark.parametrize("unit, F, shape", [(UNITS[0], 25, True), (UNITS[0], 26, False), (UNITS[1], 26, True),
                                            (UNITS[1], 27, False), (UNITS[0], 0, True)],
                         ids=["one-pass-25", "one-pass-26", "two-passes-26", "two-passes-27", "F0"])
def test_the_int32_sum_at_its_widest(unit, F, shape):
    """A pass's products sum in int32: 16 products below 2**(F + 2) each fit for F up to 25, 8 for F
    up to 26, and those designs take the shape's kernel; one F more runs the family kernel.  Rows of
    f16's largest products, all of one sign (their sum nearest 2**31), beside c at their exponent
    (the row's sum past int32's range: c joins it in float64), give numpy's bits either way, as
    every vector kind does, and the planted fault is caught."""
    from golden.kernels import fda_float, fused
    ins = lookup(*unit).with_params(F=F)
    assert (kernels.plan(ins).rows in fda_float.KERNELS.values()) is shape
    assert shape or kernels.plan(ins).rows is fused.fda_rows
    n = 64
    a, b = np.full((n, 16), 0x7BFF, np.uint64), np.full((n, 16), 0x7BFF, np.uint64)    # 65504 * 65504
    a[n // 2:] |= 0x8000
    c = np.full(n, 0x4EFFFFFF, np.uint64)                           # just below 2**31: exponent 30, the products'
    c[n // 2:] |= 0x80000000
    c[::4] = 0
    want, same = same_bits(ins, a, b, c)
    assert same
    assert np.isfinite(want.astype(np.uint32).view(np.float32)).all()
    every_kind_and_a_fault(ins, 96)


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u[0])
@pytest.mark.parametrize("frac", [23, 13])
@pytest.mark.parametrize("zero_sign", ["positive", "ieee"])
def test_c_alone_beside_zero_products(unit, frac, zero_sign):
    """Where every product is zero the pass's exponent is c's, down to f32's least (2**(F + 126) is
    beyond float32: the kernel scales c in float64), and d is c cut to d's fraction bits (``frac``;
    13 puts a subnormal c's grid at 2**-139): subnormal, tiny and large normal c, and zeros of
    both signs.  A zero d is +0 (``zero_sign`` positive), or where a nonzero c is cut to zero it
    keeps c's sign (ieee) but in a chain, whose next pass sums that -0 to an exact +0; zero
    operands beside finite ones in the same rows."""
    ins = lookup(*unit).with_params(out_frac_bits=frac, zero_sign=zero_sign)
    rng = np.random.default_rng(17)
    n = 600
    a = rng.integers(0, 0x7C00, size=(n, 16), dtype=np.uint64)
    a |= rng.integers(0, 2, size=(n, 16), dtype=np.uint64) << 15
    b = np.zeros((n, 16), np.uint64)
    b[: n // 2: 2] = 0x8000                                         # -0 operands
    c = rng.integers(1, 0x800000, size=n, dtype=np.uint64)          # subnormal
    c[:60] = rng.integers(1, 1 << 10, size=60)                      # below 2**-139
    c[n // 3:] = rng.integers(0x00800000, 0x7F800000, size=n - n // 3, dtype=np.uint64)
    c |= rng.integers(0, 2, size=n, dtype=np.uint64) << 31
    c[::7] = 0x80000000
    c[1::7] = 0
    want, same = same_bits(ins, a, b, c)
    assert same
    cut = c & ~np.uint64((1 << (23 - frac)) - 1)
    keep_sign = zero_sign == "ieee" and frac < 23 and ins.params.pass_size == ins.k
    expect = np.where((cut & 0x7FFFFFFF) == 0, cut & (0x80000000 if keep_sign else 0), cut)
    expect[::7] = 0
    assert np.array_equal(want, expect)
    assert frac == 23 or ((c[:60] & 0x80000000) != 0).any()        # a negative c cut to zero among them


def test_the_callers_floating_point_mode_changes_nothing():
    """The kernel sets IEEE's mode for its rows and gives the caller's back: under flush to zero,
    denormals as zero and rounding toward zero, numpy's bits on random patterns, on rows of
    subnormal f16 operands, and on subnormal c beside zero products (d subnormal too)."""
    rng = np.random.default_rng(3)
    for unit in UNITS:
        ins = lookup(*unit)
        a, b, c, _, _ = random_operands(ins, 700, np.random.default_rng(19), "bits")
        a[:200], b[:200] = rng.integers(1, 0x400, size=(2, 200, 16))
        b[200:300], c[200:300] = 0, rng.integers(1, 0x800000, size=100) | (rng.integers(0, 2, size=100) << 31)
        want = golden.dot_add(ins, a, b, c, backend="numpy")
        ops = own_width(ins, a, b, c)
        golden.dot_add(ins, *ops, backend="numba", threads=1)
        assert np.array_equal(in_callers_mode(golden.dot_add, ins, *ops, backend="numba", threads=1), want), unit


@pytest.mark.parametrize("unit", [UNITS[0], ("ada", "QMMA.16832.F32.E4M3.E4M3")], ids=lambda u: u[0])
def test_a_zero_product_exponent_above_c_runs_the_family_kernel(unit):
    """The register paths take a pass's maximum from the nonzero products' exponent sums alone, so
    a design whose zero products' exponent (e_zero) sits above c's least exponent, and so can lift
    that maximum, runs the family kernel: numpy's bits, and the planted fault caught."""
    from golden.kernels import fused
    ins = lookup(*unit)
    assert kernels.plan(ins).rows in kernels.shape_kernels()
    new = ins.with_params(e_zero=-2)
    assert kernels.plan(new).rows is fused.fda_rows
    every_kind_and_a_fault(new, 96)
    fa = ins.formats[0]                       # the least normal binade, random significands, one zero product
    rng = np.random.default_rng(9)
    a = (1 << fa.man_bits) | rng.integers(0, 1 << fa.man_bits, (500, ins.k), dtype=np.uint64)
    b = (1 << fa.man_bits) | rng.integers(0, 1 << fa.man_bits, (500, ins.k), dtype=np.uint64)
    a[:, 0] = 0
    c = np.zeros(500, np.uint64)
    want = golden.dot_add(new, a, b, c, backend="numpy")
    assert np.array_equal(golden.dot_add(new, *own_width(ins, a, b, c), backend="numba"), want)
    assert not np.array_equal(want, golden.dot_add(ins, a, b, c, backend="numpy"))    # the lift matters
