"""Exhaustive checks of the format table against numpy / ml_dtypes conversions."""

import ml_dtypes
import numpy as np
import pytest

from golden import formats as F

NARROW = [f for f in F.FORMATS.values() if f.value_bits <= 16 and f.numpy_dtype]


def reference_dtype(fmt):
    return np.dtype(getattr(ml_dtypes, fmt.numpy_dtype, None) or fmt.numpy_dtype)


def all_patterns(fmt):
    return np.arange(1 << fmt.value_bits, dtype=np.uint64)


@pytest.mark.parametrize("fmt", NARROW, ids=lambda f: f.name)
def test_decode_matches_ml_dtypes_exhaustively(fmt):
    bits = all_patterns(fmt)
    ours = F.to_float(fmt, bits)
    raw = bits.astype(np.uint8 if fmt.value_bits <= 8 else np.uint16)
    with np.errstate(invalid="ignore"):
        ref = raw.view(reference_dtype(fmt)).astype(np.float64)
    same = (ours == ref) | (np.isnan(ours) & np.isnan(ref))
    assert same.all(), f"{fmt.name}: first differing pattern {int(bits[~same][0]):#x}"
    # signed zero survives decoding
    assert (np.signbit(ours) == np.signbit(ref))[~np.isnan(ref)].all()


def neighbours_and_midpoints(fmt):
    """Every finite value, the midpoints and quarter points between neighbours, and values past the max."""
    vals = F.to_float(fmt, all_patterns(fmt))
    fin = np.unique(vals[np.isfinite(vals)])
    mids = (fin[:-1] + fin[1:]) / 2
    q1 = fin[:-1] + (fin[1:] - fin[:-1]) / 4
    q3 = fin[:-1] + 3 * (fin[1:] - fin[:-1]) / 4
    top = fin[-1]
    past = np.array([top * 1.01, top * 1.5, top * 4, top + (top - fin[-2]) / 2, top + (top - fin[-2]) * 0.49])
    x = np.concatenate([fin, mids, q1, q3, past, -past, [np.inf, -np.inf, 0.0, -0.0]])
    return x


@pytest.mark.parametrize("fmt", [f for f in NARROW if f.name not in ("ue8m0",)], ids=lambda f: f.name)
def test_rne_encode_matches_ml_dtypes(fmt):
    x = neighbours_and_midpoints(fmt)
    if not fmt.inf:
        x = x[np.isfinite(x)]
    ours = F.from_float(fmt, x, "RNE")
    with np.errstate(over="ignore"):
        ref = x.astype(reference_dtype(fmt))
    ref_bits = ref.view(np.uint8 if fmt.value_bits <= 8 else np.uint16).astype(np.uint64)
    ov = F.to_float(fmt, ours)
    rv = ref.astype(np.float64)
    same = (ours.astype(np.uint64) == ref_bits) | (np.isnan(ov) & np.isnan(rv))
    if fmt.nan == "negative_zero":
        same |= (ov == 0) & (rv == 0)
    assert same.all(), f"{fmt.name}: {x[~same][:5]} -> ours {ov[~same][:5]}, ml_dtypes {rv[~same][:5]}"


@pytest.mark.parametrize("fmt", NARROW, ids=lambda f: f.name)
@pytest.mark.parametrize("mode", ["RZ", "RD", "RU", "RNE"])
def test_directed_rounding_against_sorted_table(fmt, mode):
    """Each mode picks the right neighbour among all finite values of the format."""
    if fmt.man_bits == 0 and mode == "RNE":
        pytest.skip("ties-to-even is undefined without mantissa bits (ue8m0 is never rounded to)")
    vals = F.to_float(fmt, all_patterns(fmt))
    fin = np.unique(vals[np.isfinite(vals)])
    x = neighbours_and_midpoints(fmt)
    x = x[np.isfinite(x) & (np.abs(x) <= fin[-1]) & (x >= fin[0])]
    if not fmt.signed:
        x = x[x > 0]
    ours = F.to_float(fmt, F.from_float(fmt, x, mode))
    lo = fin[np.searchsorted(fin, x, side="right") - 1]
    hi = fin[np.minimum(np.searchsorted(fin, x, side="left"), len(fin) - 1)]
    if mode == "RD":
        want = lo
    elif mode == "RU":
        want = hi
    elif mode == "RZ":
        want = np.where(x >= 0, lo, hi)
    else:
        dlo, dhi = x - lo, hi - x
        lo_bits = F.from_float(fmt, lo, "RZ").astype(np.int64) >> fmt.ignored_low_bits
        even_lo = (lo_bits & 1) == 0
        want = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(even_lo, lo, hi)))
    if not fmt.subnormals:   # ue8m0 has no zero: skip values below its smallest
        keep = x >= fin[0]
        ours, want = ours[keep], want[keep]
    bad = ours != want
    assert not bad.any(), f"{fmt.name} {mode}: {x[bad][:4]} -> {ours[bad][:4]}, want {want[bad][:4]}"


def test_tf32_ignores_low_bits_so_nan_can_become_inf():
    d = F.decode("tf32", np.array([0x7F800001, 0x7F802000, 0x3F801FFF], np.uint32))
    assert list(d.cls) == [F.INF, F.NAN, F.NORMAL]
    assert d.sig[2] == 1 << 10


def test_ue4m3_ignores_top_bit():
    d = F.decode("ue4m3", np.array([0x38, 0xB8, 0x7F, 0xFF], np.uint8))
    assert list(d.cls) == [F.NORMAL, F.NORMAL, F.NAN, F.NAN]
    assert d.exp[0] == d.exp[1] == 0


def test_subnormal_exponents_of_isa_fact_7():
    want = {"f64": -1022, "f32": -126, "tf32": -126, "bf16": -126, "f16": -14, "e5m2": -14,
            "e4m3": -6, "e5m2fnuz": -15, "e4m3fnuz": -7, "e3m2": -2, "e2m3": 0, "e2m1": 0, "ue8m0": -127}
    for name, e in want.items():
        assert F.get_format(name).emin == e, name


def test_f32_encode_agrees_with_numpy_on_random_doubles():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(200_000) * np.exp2(rng.integers(-160, 140, 200_000))
    ours = F.from_float("f32", x, "RNE")
    with np.errstate(over="ignore"):
        ref = x.astype(np.float32).view(np.uint32)
    assert (ours == ref).all()


def test_bad_format_name_lists_valid_ones():
    with pytest.raises(ValueError, match="valid formats: f64, f32"):
        F.get_format("f8")


def test_bits_wider_than_format_rejected():
    with pytest.raises(ValueError, match="wider than format e2m1"):
        F.check_bits(F.get_format("e2m1"), np.array([3, 16]))
