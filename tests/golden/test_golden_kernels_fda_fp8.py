"""NVIDIA's E4M3 FDA on the register path (golden/kernels/fda_fp8.py) against the numpy path: the
catalog's designs of its shapes take it, blocks with and without NaN operands, special c on clean
rows, partial blocks, every vector kind, and a planted rounding fault caught."""

import numpy as np
import pytest

import golden
from golden import kernels
from golden.catalog import instructions, lookup
from golden.vectors import KINDS, random_operands

pytestmark = [pytest.mark.skipif(not kernels.available(), reason="numba is not installed"),
              pytest.mark.xdist_group("golden_kernels")]

# one instruction of each shape: K = 32 in passes of 16 (d of the first is c of the second; make
# test's), K = 32 in one pass and K = 16 in one pass (each costs a compile: -m slow)
UNITS = [pytest.param(("ada", "QMMA.16832.F32.E4M3.E4M3"), id="ada-K32-L16"),
         pytest.param(("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3"), id="hopper-K32-L32", marks=pytest.mark.slow),
         pytest.param(("ada", "QMMA.16816.F32.E4M3.E4M3"), id="ada-K16-L16", marks=pytest.mark.slow)]


def _check(ins, a, b, c, threads=1):
    """numpy's bits, and whether both operand widths (own, uint64) give them on the compiled path."""
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    own = (a.astype(np.uint8), b.astype(np.uint8), c.astype(np.uint32))
    same = all(np.array_equal(golden.dot_add(ins, *ops, backend="numba", threads=threads), want)
               for ops in (own, (a, b, c)))
    return want, same


def test_the_catalog_designs_of_each_shape_take_it():
    """E4M3 a and b, f32 c and d, products in order, K and L of a shape: that shape's kernel, reading
    own-width operands; every shape has a catalog design; E5M2 pairs stay on the family kernel."""
    from golden.kernels import fda_fp8, fused
    used = set()
    for ins in instructions():
        pl = kernels.plan(ins)
        if not pl.handles:
            continue
        if pl.rows in fda_fp8.KERNELS.values():
            assert [f.name for f in ins.formats] == ["e4m3", "e4m3", "f32", "f32"], ins.name
            assert fda_fp8.KERNELS[(pl.k, int(pl.prm[kernels.spec.P_L]))] is pl.rows, ins.name
            assert pl.own_width == fda_fp8.OWN_WIDTH, ins.name
            used.add(pl.rows)
    assert used == set(fda_fp8.KERNELS.values())
    assert {kernels.plan(lookup(*u.values[0])).rows for u in UNITS} == used
    assert kernels.plan(lookup("ada", "QMMA.16832.F32.E5M2.E4M3")).rows is fused.fda_rows
    assert kernels.family_kernel(kernels.plan(lookup(*UNITS[0].values[0])).rows) is fused.fda_rows


@pytest.mark.parametrize("unit", UNITS)
def test_identical_bits_every_kind_and_a_planted_fault(unit):
    ins = lookup(*unit)
    for i, kind in enumerate(KINDS):
        a, b, c, _, _ = random_operands(ins, 300, np.random.default_rng([4, i]), kind)
        assert _check(ins, a, b, c)[1], kind
    a, b, c, _, _ = random_operands(ins, 256, np.random.default_rng(5), "normal")
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    with kernels.planted_fault():
        assert (golden.dot_add(ins, a, b, c, backend="numba", threads=1) != want).any()


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
    want, same = _check(ins, a, b, c, threads=2)
    assert same
    assert np.isnan(want[[blk + 5, blk + 9, 2 * blk + 3]].view(np.float32)).all()
    clean = slice(0, blk)
    with kernels.planted_fault():
        got = golden.dot_add(ins, a[clean], b[clean], c[clean], backend="numba", threads=1)
    assert (got != want[clean]).any()


def test_a_shape_reads_own_widths_only():
    """A shape's kernel refuses operands wider than its own width (golden.kernels.run narrows them
    first), rather than reading their bytes as operands."""
    from golden.kernels import profile
    ins = lookup(*UNITS[0].values[0])
    pl = kernels.plan(ins)
    a, b, c, _, _ = random_operands(ins, 4, np.random.default_rng(1), "normal")
    _, args = profile.kernel_args(ins, a, b, c, None, None)
    pl.rows(0, 4, *args)
    assert np.array_equal(args[-1].astype(np.uint32), golden.dot_add(ins, a, b, c, backend="numpy"))
    wide = [x.reshape(-1).view(np.uint8) for x in (a, b, c)]
    with pytest.raises(ValueError, match="reads a and b as bytes"):
        pl.rows(0, 4, *wide, *args[3:5], np.array([8, 8, 8, 8, 8], np.int64), *args[6:])
