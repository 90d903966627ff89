"""NVIDIA's f16 FDA on the register path (golden/kernels/fda_reg.py) against the numpy path: the
catalog's designs of its shapes take it, blocks with and without NaN/inf operands, special c on
clean rows, partial blocks, every vector kind, and a planted rounding fault caught."""

import dataclasses

import numpy as np
import pytest
from kernel_shapes import catalog_shapes, every_kind_and_a_fault, own_width, refuses_wide_operands, same_bits

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
    from golden.kernels import fda_reg
    used = catalog_shapes(fda_reg, ["f16", "f16", "f32", "f32"])
    assert used == set(fda_reg.KERNELS.values())
    assert {kernels.plan(lookup(*u)).rows for u in UNITS} == used


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u[0])
def test_identical_bits_every_kind_and_a_planted_fault(unit):
    every_kind_and_a_fault(lookup(*unit), 96)


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u[0])
def test_plain_and_special_blocks_special_c_and_a_tail(unit):
    """Blocks of fda_reg.BLOCK_ROWS rows: clean ones (the copy without classes), one with an infinity
    and one with a NaN operand (every product's class: inf * 0 and inf - inf NaN), c infinite or NaN
    on clean rows, c near the f32 maximum beside a large product, a partial last block, two threads."""
    from golden.kernels import fda_reg
    ins = lookup(*unit)
    n = 3 * fda_reg.BLOCK_ROWS + 11
    a, b, c, _, _ = random_operands(ins, n, np.random.default_rng(11), "normal")
    blk = fda_reg.BLOCK_ROWS
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
    """d rounded RNE, RU or RD (designs beside the catalog's): not the shape's kernel (golden.kernels.fda_reg
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


@pytest.mark.parametrize("F, shape", [(25, True), (26, False)])
def test_f_up_to_the_lanes_room_takes_the_shape(F, shape):
    """sum_run shifts b's 11-bit significands by G = F - 20 inside their 16-bit lanes: F = 25 (G = 5,
    the lanes full) takes Hopper's shape with numpy's bits and a planted fault caught; F = 26 runs
    the family kernel, the same bits."""
    from golden.kernels import fda_reg, fused
    ins = lookup(*UNITS[0]).with_params(F=F)
    assert kernels.plan(ins).rows is (fda_reg.h16_16 if shape else fused.fda_rows)
    every_kind_and_a_fault(ins, 96)


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
