"""CDNA3's FDRDA and GFDRDA in integer lanes (golden/kernels/amd_int.py) against the numpy path:
every catalog datapath of those families on every vector kind, overflowed products and special c
built on purpose, chains, and a planted rounding fault caught."""

import numpy as np
import pytest
from kernel_shapes import FP8_DEFAULT, H16_DEFAULT, default_tier, in_callers_mode, refuses_wide_operands, shape_kernels

import golden
from golden import kernels
from golden.catalog import instructions, lookup
from golden.vectors import KINDS, random_operands

pytestmark = [pytest.mark.skipif(not kernels.available(), reason="numba is not installed"),
              pytest.mark.xdist_group("golden_kernels")]

ROWS = 64               # per vector kind in the default tier; the slow tier: SLOW_ROWS
SLOW_ROWS = 20_000


def _amd_datapaths():
    seen = {}
    for ins in instructions("cdna3"):
        if ins.params.base in ("FDRDA", "GFDRDA"):
            seen.setdefault(ins.datapath, ins)
    return list(seen.values())


AMD = _amd_datapaths()
AMD_DEFAULT = default_tier(AMD)


def _own_width(ins, a, b, c):
    fa, fb, fc, _ = ins.formats
    return a.astype(fa.dtype), b.astype(fb.dtype), c.astype(fc.dtype)


def _mismatches(ins, n, kinds=KINDS, seed=0):
    bad = 0
    for i, kind in enumerate(kinds):
        a, b, c, _, _ = random_operands(ins, n, np.random.default_rng([seed, i]), kind)
        want = golden.dot_add(ins, a, b, c, backend="numpy")
        for ops in ((a, b, c), _own_width(ins, a, b, c)):
            bad += int((golden.dot_add(ins, *ops, backend="numba", threads=1) != want).sum())
    return bad


def test_every_cdna3_fdrda_datapath_takes_the_integer_path():
    """Every datapath runs in integer lanes: amd_int's kernel, or a kernel of its shape that reads
    own-width operands: the catalog's fp8 GFDRDA shapes (four pairs, K = 16 and 32) and its f16 and
    bf16 FDRDA shapes in passes of 8 (K = 8 and 16; make test runs some of each,
    tests/support/kernel_shapes.py)."""
    from golden.kernels import amd_fp8, amd_int, fdrda_float
    assert len(AMD) >= 10
    used = set()
    for ins in AMD:
        pl = kernels.plan(ins)
        assert amd_int.int_design(pl.fmts, pl.prm), ins.name
        if pl.rows is amd_int.fdrda_int_rows:
            assert pl.own_width is None, ins.name
        else:
            own = amd_fp8.OWN_WIDTH if pl.rows in amd_fp8.KERNELS.values() else fdrda_float.OWN_WIDTH
            assert pl.rows in shape_kernels() and pl.own_width == own, ins.name
            used.add(pl.rows)
    assert used == set(amd_fp8.KERNELS.values()) | set(fdrda_float.KERNELS.values())
    assert all(name in {ins.name for ins in AMD_DEFAULT} for name in FP8_DEFAULT + H16_DEFAULT)


def test_identical_bits_every_datapath_and_kind():
    assert sum(_mismatches(ins, ROWS) for ins in AMD_DEFAULT) == 0


@pytest.mark.slow
def test_identical_bits_every_shape_and_kind():
    assert sum(_mismatches(ins, ROWS) for ins in AMD if ins not in AMD_DEFAULT) == 0


@pytest.mark.parametrize("name, refusal", [(FP8_DEFAULT[0], "reads a and b as bytes"),
                                           (H16_DEFAULT[1], "reads a and b as 16-bit")])
def test_shape_kernels_read_own_widths_only(name, refusal):
    """A shape's kernel refuses operands wider than its own width (golden.kernels.run narrows them
    first: _mismatches' uint64 operands), rather than reading their bytes as operands."""
    refuses_wide_operands(lookup("cdna3", name), refusal)


@pytest.mark.parametrize("unit", [("cdna3", "v_mfma_f32_32x32x8_f16"), ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8")],
                         ids=lambda u: u[1])
def test_full_blocks_and_a_tail(unit):
    """More rows than one block of the kernel (amd_int.BL, fewer for a long K) and a partial one."""
    from golden.kernels import amd_int
    assert _mismatches(lookup(*unit), 2 * amd_int.BL + 37, kinds=("normal", "bits")) == 0


@pytest.mark.slow
@pytest.mark.parametrize("ins", AMD, ids=lambda i: i.name)
def test_identical_bits_many_rows(ins):
    assert _mismatches(ins, SLOW_ROWS, seed=3) == 0


def _bf16(x):
    return np.asarray(x, np.uint16).astype(np.uint64)


def test_overflowed_products_and_special_c():
    """bf16 products at 2**254 (past 2**128: AMD's overflow) of either sign, beside input
    infinities and NaN and infinite c: the paper's order decides each row as numpy does."""
    ins = lookup("cdna3", H16_DEFAULT[1])                    # bf16 in two passes of 8
    rng = np.random.default_rng(5)
    a, b, c, _, _ = random_operands(ins, 512, rng, "normal")
    big, nbig, inf, nan = 0x7F00, 0xFF00, 0x7F80, 0x7FC0
    picks = np.array([big, nbig, inf, nan, 0x0000, 0x3F80])
    for u in range(a.shape[0]):
        for t in rng.choice(a.shape[1], size=rng.integers(0, 6), replace=False):
            a[u, t], b[u, t] = rng.choice(picks), rng.choice(picks)
    c[::7] = 0x7F800000
    c[3::11] = 0xFF800000
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    assert np.array_equal(golden.dot_add(ins, *_own_width(ins, a, b, c), backend="numba"), want)
    assert np.array_equal(golden.dot_add(ins, a, b, c, backend="numba"), want)


@pytest.mark.parametrize("unit", [("cdna3", "v_mfma_f32_32x32x8_f16"), ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8"),
                                  ("cdna3", "v_mfma_f32_16x16x16_bf16")], ids=lambda u: u[1])
def test_planted_fault_is_caught(unit):
    ins = lookup(*unit)
    assert _mismatches(ins, 4 * ROWS, kinds=("normal",)) == 0
    with kernels.planted_fault():
        assert _mismatches(ins, 4 * ROWS, kinds=("normal",)) > 0


@pytest.mark.parametrize("unit", [("cdna3", "v_mfma_f32_32x32x8_f16"), ("cdna3", "v_mfma_f32_16x16x16_bf16")],
                         ids=lambda u: u[1])
def test_register_path_blocks_and_special_c(unit):
    """The register path (golden.kernels.fdrda_float) beside the block path: clean blocks, a block with
    an infinity and a NaN operand, c infinite and NaN on clean rows, c near the f32 maximum plus a
    large product; bf16's products at 2**128 and just below it, of either sign, one past it by its
    significands alone, two of opposite signs in one row, one beside an infinity (its copy that takes
    the overflowed products' classes); a planted fault caught on a clean block alone."""
    from golden.kernels import fdrda_float
    ins = lookup(*unit)
    fa, _, fc, _ = ins.formats
    assert kernels.plan(ins).rows in fdrda_float.KERNELS.values()
    BL = fdrda_float.BLOCK_ROWS
    n = 3 * BL + 11
    a, b, c, _, _ = random_operands(ins, n, np.random.default_rng(11), "normal")
    inf, nan = (0x7C00, 0x7E00) if fa.name == "f16" else (0x7F80, 0x7FC0)
    a[BL + 5, 1], b[BL + 9, 0] = inf, nan
    c[::13], c[5::17], c[7::19] = 0x7F800000, 0xFF800000, 0x7FC00000
    c[3::23], a[3::23, 0], b[3::23, 0] = 0x7F7FFFFF, 0x7BFF if fa.name == "f16" else 0x7F7F, 0x3C00
    if fa.name == "bf16":                         # 2**64 * 2**64 overflows; (2**64 - 2**56) * 2**64 does not
        big, below = 0x5F80, 0x5F7F
        r = 2 * BL
        a[r:r + 4, 0], b[r:r + 4, 0] = big, big
        a[r + 1, 0] = big | 0x8000                              # -2**128
        a[r + 2, 3], b[r + 2, 3] = big | 0x8000, big            # +2**128 and -2**128 in one row: NaN
        a[r + 3, 5] = inf                                       # an infinity beside an overflow
        a[r + 4:r + 8, 2], b[r + 4:r + 8, 2] = below, big       # just below 2**128: finite
        a[r + 5, 2] = below | 0x8000
        a[r + 8, 4], b[r + 8, 4] = below, 0x5FC0                # 2**127 * (2 - 2**-7) * 1.5: over by its
        a[r + 8, 6], b[r + 8, 6] = big | 0x8000, big            # significands, beside -2**128: NaN
        c[r:r + 9] = 0                                          # c finite: the products decide
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    assert np.array_equal(golden.dot_add(ins, *_own_width(ins, a, b, c), backend="numba", threads=1), want)
    if fa.name == "bf16":
        d = want[2 * BL:2 * BL + 9].astype(np.uint32).view(np.float32)
        assert d[0] == np.inf and d[1] == -np.inf and np.isnan(d[2]) and d[3] == np.inf and np.isnan(d[8])
        assert np.isfinite(d[4:8]).all()
    clean = slice(0, BL)                          # the first block: no special pattern
    with kernels.planted_fault():
        got = golden.dot_add(ins, *_own_width(ins, a[clean], b[clean], c[clean]), backend="numba", threads=1)
        assert (got != want[clean]).sum() > 0


@pytest.mark.parametrize("name", ["v_mfma_f32_32x32x8_f16", "v_mfma_f32_16x16x16_bf16"])
@pytest.mark.parametrize("F", [0, 13, 26, 27])
def test_register_path_takes_f_within_its_window(name, F):
    """fdrda_float's passes sum eight products of up to F + 2 bits in int32 lanes: F from 0 to 26
    takes the shape's kernel, at its edges with numpy's bits and the planted fault caught; F = 27
    runs the family kernel, the same bits."""
    from golden.kernels import amd_int, fdrda_float
    ins = lookup("cdna3", name).with_params(F=F)
    rows = kernels.plan(ins).rows
    assert (rows in fdrda_float.KERNELS.values()) if F <= fdrda_float.MAX_F else (rows is amd_int.fdrda_int_rows)
    assert _mismatches(ins, 4 * ROWS) == 0
    with kernels.planted_fault():
        assert _mismatches(ins, 4 * ROWS) > 0


@pytest.mark.parametrize("name", ["v_mfma_f32_32x32x8_f16", "v_mfma_f32_16x16x16_bf16"])
@pytest.mark.parametrize("floors", [dict(dot_floor_bits=40, c_floor_bits=40, final_floor_bits=50),
                                    dict(dot_floor_bits=20, c_floor_bits=12, final_floor_bits=3)],
                         ids=["widest", "narrow"])
def test_register_path_merges_at_every_floor_width(name, floors):
    """amd_int.merge_f64 merges the register paths' rows in float64, exact for every floor width
    their designs have (amd_int.int_design: at most 40 for the dot and c, 50 for d): at the widest
    and at narrow ones (c's below the dot's), the shape's kernel gives numpy's bits."""
    ins = lookup("cdna3", name).with_params(**floors)
    assert kernels.plan(ins).rows in kernels.shape_kernels()
    assert _mismatches(ins, 4 * ROWS) == 0


# per format: inf, -inf, NaN, 1, a subnormal's significand mask, the least subnormal, a large power of
# two whose product with it holds a pass's largest exponent sum (e_min + e: its grid 2**(e_min + e - 24)),
# and ranges of a and b whose products lie far below it with bits below that grid
HALF_PATTERNS = {"v_mfma_f32_32x32x8_f16": (0x7C00, 0xFC00, 0x7E00, 0x3C00, 0x03FF, 0x0001, 0x7800,
                                            (0x3400, 0x3800), (0x2800, 0x2C00)),
                 "v_mfma_f32_16x16x16_bf16": (0x7F80, 0xFF80, 0x7FC0, 0x3F80, 0x007F, 0x0001, 0x7F00,
                                              (0x3C80, 0x3D00), (0x3C80, 0x3D00))}


@pytest.mark.parametrize("name", list(HALF_PATTERNS))
def test_float_path_classes_zeros_subnormals_and_c_drop(name):
    """fdrda_float takes a pass's class from the float sum of its products and c: inf * 0, opposite
    infinite products, an infinite product beside an opposite infinite c, NaN operands; rows whose
    products are all zero beside c of either zero, subnormal and normal; subnormal operands (their
    exponent field counted as 1) deciding the maximum, the least subnormal times a large power of
    two among them (a product far below its exponents' 2**(e_a + e_b), whose grid truncates a
    product beside it); products far below c, of either sign (the floor of a negative dot part);
    the same rows with c dropped more than 3 binades below the maximum (a c_drop of the test's own
    on an FDRDA design): numpy's bits on each."""
    from golden.kernels import fdrda_float
    inf, ninf, nan, one, sub_mask, least, big, a_lo, b_lo = HALF_PATTERNS[name]
    sign = 0x8000
    base = lookup("cdna3", name)
    rng = np.random.default_rng(21)
    n = 2 * fdrda_float.BLOCK_ROWS + 13
    a, b, c, _, _ = random_operands(base, n, rng, "normal")
    a[0, 3], b[0, 3] = inf, 0                                   # inf * 0: NaN
    a[1, 2], b[1, 2], a[1, 6], b[1, 6] = inf, one, ninf, one    # +inf and -inf products: NaN
    a[2, 5], b[2, 5], c[2] = inf, one, 0xFF800000               # +inf product, c -inf: NaN
    a[3, 0], b[3, 0], c[3] = ninf, one, 0x3F800000              # -inf product, c finite: -inf
    a[4, 7] = nan
    a[5:40], c[5:40:4], c[6:40:4], c[7:40:4] = 0, 0x80000000, 0x00000001, 0x80400000   # zero products
    sub = rng.integers(1, sub_mask + 1, size=(40, a.shape[1]))      # subnormal a beside normal b
    a[40:80] = sub | (rng.integers(0, 2, size=sub.shape) * sign)
    a[80:120] &= sign | sub_mask                                    # tiny products beneath c
    b[80:120] &= sign | (2 * sub_mask + 1)
    c[80:120] = rng.integers(0x3F800000, 0x4F000000, size=40) | (rng.integers(0, 2, size=40) << 31)
    a[120:140], b[120:140], c[120:140] = 0, 0, 0
    a[120:140, 0], b[120:140, 0] = least, big
    a[120:140, 1], b[120:140, 1] = rng.integers(*a_lo, size=20), rng.integers(*b_lo, size=20)
    for ins in (base, base.with_params(c_drop=3)):
        want = golden.dot_add(ins, a, b, c, backend="numpy")
        assert kernels.plan(ins).rows in fdrda_float.KERNELS.values()
        assert np.array_equal(golden.dot_add(ins, *_own_width(ins, a, b, c), backend="numba", threads=1), want)
    d = want[:4].astype(np.uint32).view(np.float32)
    assert np.isnan(d[:3]).all() and d[3] == -np.inf
    assert not np.array_equal(golden.dot_add(base, a, b, c, backend="numpy"), want)   # the drop drops some c


def _bf16_fields(rng, shape, fields):
    """bf16 patterns of random signs and significands with exponent fields drawn from ``fields``."""
    sign = rng.integers(0, 2, size=shape) << 15
    return (rng.choice(fields, size=shape) << 7) | rng.integers(0, 128, size=shape) | sign


def test_bf16_float32_window_edges():
    """fdrda_float runs a bf16 block in float32 lanes where every nonzero magnitude lies in its
    window (exponent fields 77 to 188), else in float64 lanes.  With F = 26: a block at both edges
    (and zeros) in float32; outside, which float32 lanes would get wrong, a block of positive fields
    189 (a pass's sum past float32's range, c bringing d back below it) and one of fields 76
    (2**(F - e) past float32's range): numpy's bits on each."""
    from golden.kernels import fdrda_float
    ins = lookup("cdna3", "v_mfma_f32_16x16x16_bf16").with_params(F=26)
    assert kernels.plan(ins).rows in fdrda_float.KERNELS.values()
    BL = fdrda_float.BLOCK_ROWS
    rng = np.random.default_rng(8)
    a, b, c, _, _ = random_operands(ins, 3 * BL, rng, "normal")
    a[:BL], b[:BL] = _bf16_fields(rng, (BL, 16), [77, 188]), _bf16_fields(rng, (BL, 16), [77, 188])
    a[:BL:5, 3], c[:BL:3] = 0x8000, 0
    a[:32], b[:32], c[:32] = _bf16_fields(rng, (32, 16), [77]), _bf16_fields(rng, (32, 16), [77]), 0     # e least
    a[BL:2 * BL], b[BL:2 * BL] = (189 << 7) | rng.integers(64, 128, size=(BL, 16)), (189 << 7) | 0x7F
    a[BL:2 * BL, 8:] = 0                                           # the chain's second pass adds nothing
    c[BL:2 * BL] = 0xFF7FFFFF                                     # -f32's largest
    a[2 * BL:], b[2 * BL:] = _bf16_fields(rng, (BL, 16), [76]), _bf16_fields(rng, (BL, 16), [76])
    c[2 * BL:] = 0
    lo, hi = fdrda_float.BF16_WINDOW
    assert ((a[:BL] & 0x7FFF) >= lo).sum() > 0 and ((a[:BL] & 0x7FFF) <= hi).all()
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    assert np.array_equal(golden.dot_add(ins, *_own_width(ins, a, b, c), backend="numba", threads=1), want)
    d = want[BL:2 * BL].astype(np.uint32).view(np.float32)
    assert np.isfinite(d).all() and (d > 2.0 ** 125).all()        # past float32's range only in the sum


def test_float_kernels_ignore_the_callers_floating_point_mode():
    """The kernels that compute with the CPU's float arithmetic (fdrda_float's f16 and bf16,
    amd_fp8's merge, the FDRDA block path's, GPS, SFMA in f32 and f64) set IEEE's mode for their
    rows, whatever the caller's (flush to zero and denormals as zero, as a fast-math library leaves
    them, and rounding toward zero: each changed some of these rows' bits before), and give it
    back: subnormal bf16 operands and c among random patterns, numpy's bits."""
    rng = np.random.default_rng(13)
    units = [("cdna3", name) for name in ("v_mfma_f32_16x16x16_bf16", "v_mfma_f32_32x32x8_f16",
                                          "v_mfma_f32_32x32x16_fp8_fp8", "v_mfma_f32_32x32x4_2b_f16",
                                          "v_mfma_f64_16x16x4_f64", "v_mfma_f32_16x16x4_f32")]
    for arch, name in units + [("cdna2", "v_mfma_f32_32x32x4bf16")]:
        ins = lookup(arch, name)
        a, b, c, _, _ = random_operands(ins, 600, rng, "bits")
        if name == "v_mfma_f32_16x16x16_bf16":                # subnormal a times 1.0 beside zeros
            a[:300], b[:300] = rng.integers(1, 0x80, size=(300, 16)), 0
            b[:300, 0] = 0x3F80
            c[:300:2] = rng.integers(1, 0x800000, size=150)
        want = golden.dot_add(ins, a, b, c, backend="numpy")
        ops = _own_width(ins, a, b, c)
        golden.dot_add(ins, *ops, backend="numba", threads=1)          # compiled before the mode changes
        got = in_callers_mode(golden.dot_add, ins, *ops, backend="numba", threads=1)
        assert np.array_equal(got, want), name
