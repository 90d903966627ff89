"""NVIDIA's E4M3 FDA on the register path (golden/kernels/fda_fp8.py) against the numpy path: the
catalog's designs of its shapes take it, blocks with and without NaN operands, special c on clean
rows, partial blocks, every vector kind, and a planted rounding fault caught."""

import numpy as np
import pytest
from kernel_shapes import catalog_shapes, every_kind_and_a_fault, refuses_wide_operands, same_bits

import golden
from golden import kernels
from golden.catalog import lookup
from golden.vectors import random_operands

pytestmark = [pytest.mark.skipif(not kernels.available(), reason="numba is not installed"),
              pytest.mark.xdist_group("golden_kernels")]

# one instruction of each shape: K = 32 in passes of 16 (d of the first is c of the second; make
# test's), K = 32 in one pass and K = 16 in one pass (each costs a compile: -m slow)
UNITS = [pytest.param(("ada", "QMMA.16832.F32.E4M3.E4M3"), id="ada-K32-L16"),
         pytest.param(("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3"), id="hopper-K32-L32", marks=pytest.mark.slow),
         pytest.param(("ada", "QMMA.16816.F32.E4M3.E4M3"), id="ada-K16-L16", marks=pytest.mark.slow)]



def test_the_catalog_designs_of_each_shape_take_it():
    """E4M3 a and b, f32 c and d, products in order, K and L of a shape: that shape's kernel, reading
    own-width operands; every shape has a catalog design; E5M2 pairs stay on the family kernel."""
    from golden.kernels import fda_fp8, fused
    used = catalog_shapes(fda_fp8, ["e4m3", "e4m3", "f32", "f32"])
    assert used == set(fda_fp8.KERNELS.values())
    assert {kernels.plan(lookup(*u.values[0])).rows for u in UNITS} == used
    assert kernels.plan(lookup("ada", "QMMA.16832.F32.E5M2.E4M3")).rows is fused.fda_rows
    assert kernels.family_kernel(kernels.plan(lookup(*UNITS[0].values[0])).rows) is fused.fda_rows


@pytest.mark.parametrize("unit", UNITS)
def test_identical_bits_every_kind_and_a_planted_fault(unit):
    every_kind_and_a_fault(lookup(*unit), 300)


def test_plain_and_nan_blocks_special_c_and_a_tail():
    """Blocks of fda_fp8.BLOCK_ROWS rows: clean ones (the copy without classes), ones with a NaN
    operand of either sign in a or b, c infinite or NaN on clean rows, c near the f32 maximum beside
    the largest products, a partial last block, two threads."""
    from golden.kernels import fda_fp8
    ins = lookup(*UNITS[0].values[0])
    blk = fda_fp8.BLOCK_ROWS
    n = 3 * blk + 11
    a, b, c, _, _ = random_operands(ins, n, np.random.default_rng(11), "normal")
    a[blk + 5, 1], b[blk + 9, 30], a[2 * blk + 3, 17] = 0x7F, 0xFF, 0xFF        # NaN operands
    b[blk + 5, 1] = 0x00                                                    # NaN * 0: still NaN
    c[::13], c[5::17], c[7::19] = 0x7F800000, 0xFF800000, 0x7FC00000
    c[3::23], a[3::23, 0], b[3::23, 0] = 0x7F7FFFFF, 0x7E, 0x7E             # 448 * 448 beside f32's maximum
    want, same = same_bits(ins, a, b, c, threads=2)
    assert same
    assert np.isnan(want[[blk + 5, blk + 9, 2 * blk + 3]].view(np.float32)).all()
    clean = slice(0, blk)
    with kernels.planted_fault():
        got = golden.dot_add(ins, a[clean], b[clean], c[clean], backend="numba", threads=1)
    assert (got != want[clean]).any()


def test_a_shape_reads_own_widths_only():
    """A shape's kernel refuses operands wider than its own width (golden.kernels.run narrows them
    first), rather than reading their bytes as operands."""
    refuses_wide_operands(lookup(*UNITS[0].values[0]), "reads a and b as bytes")
