"""The SFMA and GPS RTL in Amaranth's simulator, bit for bit against the golden model.

SFMA (DMMA, f64/f32 MFMA) and GPS (CDNA2 f16/bf16 MFMA) units under random
valid/ready stalls against ``golden.dot_add``; the IEEE fused multiply-add
unit on its own against ``golden.fma.fma_exact`` on targeted vectors (ties,
subnormal boundaries, cancellation, overflow, zero signs, special values);
the GPS binary32 multiplier and adder against numpy's binary32 arithmetic.
A NaN may differ from golden's only in its payload (docs/spec.md §4.3); every
other result, signed zeros included, is bit exact.
"""

import numpy as np
import pytest
from amaranth_sim import run_stage, simulate
from fma_oracle import fma_exact

import golden
import golden.vectors
import hw
from golden.fma import fma_f32, fma_f64
from golden.formats import NAN, decode, from_float, get_format
from hw.fma import FusedMultiplyAdd
from hw.gps import F32Add, F32Multiply
from hw.specials import quiet_nan

SFMA_UNITS = [
    ("hopper", "DMMA.8x8x4"),                      # f64, K=4
    # the datapath and NaN rule of hopper's DMMA.8x8x4, about 7 s: -m slow (make test's budget)
    pytest.param("ampere", "DMMA.884", marks=pytest.mark.slow),
    ("cdna3", "v_mfma_f32_16x16x4_f32"),           # f32, K=4
    ("cdna2", "v_mfma_f64_4x4x4_4b_f64"),
    ("cdna2", "v_mfma_f32_32x32x2_f32"),           # K=2
    ("cdna3", "v_mfma_f32_32x32x1_2b_f32"),        # K=1: a single fma
]
GPS_UNITS = [
    ("cdna2", "v_mfma_f32_32x32x8_f16"),           # G=4, two groups
    ("cdna2", "v_mfma_f32_32x32x2bf16"),           # G=2, one group
    ("cdna2", "v_mfma_f32_16x16x16bf16_1k"),       # G=4, four groups
    ("cdna2", "v_mfma_f32_16x16x8bf16"),           # G=2, four groups
    ("cdna2", "v_mfma_f32_4x4x4_16b_f16"),         # G=4, one group
]


def is_nan(fmt, bits):
    return decode(fmt, np.asarray(bits, np.uint64)).cls == NAN


# the GPS units' NaN rule (any NaN matches, docs/spec.md §4.3) for their binary32 stages on their own
GPS_DATAPATH = golden.lookup("cdna2", "v_mfma_f32_32x32x8_f16").datapath


def vectors(ins, n, seed):
    rng = np.random.default_rng(seed)
    # the structured generator needs two products per row; K = 1 gets bit patterns and normal values
    a, b, c, _, _ = golden.vectors.random_operands(ins, n, rng, "all" if ins.k > 1 else "mixed")
    return a, b, c


def check_unit(arch, name, n, seed):
    ins = golden.lookup(arch, name)
    unit = hw.dot_add_unit(ins)
    assert sum(cyc for _, cyc in unit.stage_latencies) == unit.latency
    a, b, c = vectors(ins, n, seed)
    got, _ = simulate(unit, a, b, c, stall_in=0.2, stall_out=0.2, seed=seed)
    want = golden.dot_add(ins, a, b, c).astype(np.uint64)
    bad = golden.mismatching(ins, got, want)
    if len(bad):
        i = bad[0]
        pytest.fail(f"{len(bad)} of {len(c)} differ; first row {i}: RTL {int(got[i]):#x}, golden {int(want[i]):#x}\n"
                    + str(golden.trace(ins, a[i], b[i], c[i])))
    return unit


# --------------------------------------------------------------------------- SFMA


@pytest.mark.parametrize("arch,name", SFMA_UNITS)
def test_sfma_matches_golden_under_stalls(arch, name):
    unit = check_unit(arch, name, 150, seed=sum(map(ord, name)))
    k = unit.ins.k
    assert unit.latency == 2 * k + 1 and unit.initiation_interval == 1


def _bits(fmt, values):
    return from_float(fmt, np.asarray(values, np.float64), "RNE").astype(np.uint64)


def targeted_fma(fmt, n, rng):
    """``n`` rows each of ties, near-ties, subnormal boundaries, cancellation, overflow, zeros and specials."""
    f = get_format(fmt)
    pm, emin, emax = f.man_bits, f.emin, f.emax
    one = lambda k: rng.choice([-1.0, 1.0], k)  # noqa: E731
    sig = lambda k: 1 + np.floor(rng.random(k) * 2.0 ** pm) / 2.0 ** pm        # exact significands  # noqa: E731
    A, B, C = [], [], []

    def add(a, b, c):
        A.append(_bits(f, a)), B.append(_bits(f, b)), C.append(_bits(f, c))

    # ties and near-ties: c = 1.x * 2^e, product = odd * 2^(ulp(c) - 1 or - 2): exactly or off a midpoint
    e = rng.integers(-20, 21, n)
    c = one(n) * np.ldexp(sig(n), e)
    odd = 2 * rng.integers(0, 8, n) + 1.0
    x = rng.integers(-5, 6, n)
    add(odd * np.ldexp(1.0, x), one(n) * np.ldexp(1.0, e - pm - rng.integers(1, 3, n) - x), c)
    # the product itself a tie (a = 1 + odd ulps, b = 1.5), c far below it or zero: only c's sticky bit
    # (jammed out of the alignment window) breaks the tie
    # (c a power of two half the time, often just below the product's last place)
    e = rng.integers(-8, 9, n)
    below = np.where(rng.random(n) < 0.5, rng.integers(pm + 2, 3 * pm + 10, n), 2 * pm + rng.integers(-2, 8, n))
    add(one(n) * np.ldexp(1 + (2 * rng.integers(0, 4, n) + 1.0) * 2.0 ** -pm, e), np.full(n, 1.5),
        rng.choice([0.0, 1.0], n) * one(n) * np.ldexp(np.where(rng.random(n) < 0.5, 1.0, sig(n)), e - below))
    # subnormal boundaries: products around 2^emin (normal/subnormal, rounding up to the least normal),
    # subnormal and tiny c, products of subnormals
    e1 = rng.integers(-20, 21, n)
    add(one(n) * np.ldexp(sig(n), e1), np.ldexp(1.0, emin - e1 + rng.integers(-pm - 3, 3, n)),
        rng.choice([0.0, 1.0], n) * one(n) * np.ldexp(sig(n), emin - rng.integers(0, pm + 2, n)))
    add(np.ldexp(sig(n), emin - rng.integers(0, pm, n)), one(n) * np.ldexp(sig(n), rng.integers(-3, pm + 3, n)),
        one(n) * np.ldexp(sig(n), emin - rng.integers(-2, pm, n)))
    add(np.ldexp(1.0, emin - pm + rng.integers(0, 4, n)), one(n) * np.ldexp(sig(n), rng.integers(-4, 0, n)),
        rng.choice([0.0, 1.0], n) * one(n) * np.ldexp(1.0, emin - pm))
    # cancellation: c = -RN(a*b) (+- a few ulps): the result is the product's rounding error
    a_, b_ = one(n) * np.ldexp(sig(n), rng.integers(-30, 31, n)), np.ldexp(sig(n), rng.integers(-30, 31, n))
    ab, bb = _bits(f, a_), _bits(f, b_)
    rn = np.array([fma_exact(int(p), int(q), 0, f.name) for p, q in zip(ab, bb)], np.uint64)
    sign = np.uint64(1 << (f.storage_bits - 1))
    A.append(ab), B.append(bb), C.append((rn ^ sign) + rng.integers(0, 3, n).astype(np.uint64))
    # overflow: products and c at the top of the range; max + half an ulp is a tie that rounds up to inf
    add(one(n) * np.ldexp(sig(n), emax - rng.integers(0, 3, n)), np.ldexp(sig(n), rng.integers(-1, 2, n)),
        one(n) * f.max_finite * rng.choice([1.0, 0.5, 0.0], n))
    add(np.full(n, f.max_finite), np.ldexp(1.0, -pm - rng.integers(1, 3, n)) * one(n),
        np.full(n, f.max_finite))
    # zeros of both signs (exact zero sign rules) and exact cancellation to +0
    z = rng.integers(0, 4, (3, n))
    add(np.where(z[0] == 0, 1.5, 0.0) * one(n), np.where(z[1] == 0, 2.0, 0.0) * one(n),
        np.where(z[2] == 0, 3.0, 0.0) * one(n))
    v = np.ldexp(sig(n), rng.integers(-10, 10, n))
    add(v, one(n), v * one(n))
    # special values: inf * 0, inf - inf, NaN operands
    specials = np.array([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan])
    add(rng.choice(specials, n), rng.choice(specials, n), rng.choice(specials, n))
    return np.concatenate(A), np.concatenate(B), np.concatenate(C)


@pytest.mark.parametrize("fmt", ["f64", "f32"])
def test_fma_unit_targeted_against_exact_oracle(fmt):
    rng = np.random.default_rng(11 if fmt == "f64" else 12)
    a, b, c = targeted_fma(fmt, 120, rng)
    # plus uniform random bit patterns and normal values
    for kind in (golden.vectors.random_bits, golden.vectors.random_values):
        a, b, c = (np.concatenate([x, kind(fmt, 300, rng)]) for x in (a, b, c))
    unit = FusedMultiplyAdd(fmt)
    assert unit.latency == 3
    got = run_stage(unit, {"a": a, "b": b, "c": c}, len(a))
    want = np.array([fma_exact(int(x), int(y), int(z), fmt) for x, y, z in zip(a, b, c)], np.uint64)
    assert ((fma_f64 if fmt == "f64" else fma_f32)(a, b, c) == want).all()     # the oracle agrees with golden
    bad = np.nonzero(got != want)[0]         # the unit's NaN is the canonical one, like the oracle's
    assert not len(bad), (f"{len(bad)} of {len(a)} differ; first: a={int(a[bad[0]]):#x} b={int(b[bad[0]]):#x} "
                          f"c={int(c[bad[0]]):#x}: RTL {int(got[bad[0]]):#x}, exact {int(want[bad[0]]):#x}")
    assert int(got[is_nan(fmt, want)][0]) == quiet_nan(fmt)


# --------------------------------------------------------------------------- GPS


@pytest.mark.parametrize("arch,name", GPS_UNITS)
def test_gps_matches_golden_under_stalls(arch, name):
    unit = check_unit(arch, name, 150, seed=sum(map(ord, name)))
    ins = unit.ins
    groups = -(-ins.k // ins.params.group)
    assert unit.latency == 1 + {2: 1, 4: 2}[min(ins.params.group, ins.k)] + groups


def gps_targeted(ins, n, rng):
    """Flush boundaries: products and sums around 2**-126 (bf16), c subnormal, zero of either sign, or tiny."""
    fa, fb, fc, _ = ins.formats
    K = ins.k
    sgn = lambda shape: rng.choice([-1.0, 1.0], shape)  # noqa: E731
    half = fa.emin // 2 if fa.emin < -100 else -7          # bf16: products near 2**-126
    a = _bits(fa, sgn((n, K)) * np.ldexp(1 + rng.random((n, K)), rng.integers(half - 3, half + 3, (n, K))))
    b = _bits(fb, sgn((n, K)) * np.ldexp(1 + rng.random((n, K)), rng.integers(half - 3, half + 3, (n, K))))
    # cancelling pairs inside a group leave tiny differences; some operands zero or subnormal
    b[::3, 1] = b[::3, 0] ^ np.uint64(1 << (fb.storage_bits - 1))
    a[::3, 1] = a[::3, 0] + rng.integers(0, 2, len(a[::3])).astype(np.uint64)
    a[rng.random((n, K)) < 0.15] = rng.choice([0, 1 << (fa.storage_bits - 1), 1, 3])    # +-0 and subnormals
    cv = rng.choice([0.0, -0.0, 2.0 ** -130, -(2.0 ** -140), 2.0 ** -126, -1.5 * 2.0 ** -126, 1.0], n)
    c = _bits(fc, cv * np.where(np.abs(cv) == 1.0, 1.0, 1 + np.floor(rng.random(n) * 8) / 8))
    return a, b, c


@pytest.mark.parametrize("arch,name", [("cdna2", "v_mfma_f32_16x16x16bf16_1k"), ("cdna2", "v_mfma_f32_32x32x8_f16"),
                                       ("cdna2", "v_mfma_f32_16x16x8bf16")])
def test_gps_flush_boundaries(arch, name):
    ins = golden.lookup(arch, name)
    a, b, c = gps_targeted(ins, 150, np.random.default_rng(7))
    got, _ = simulate(hw.dot_add_unit(ins), a, b, c, stall_in=0.1, stall_out=0.1)
    want = golden.dot_add(ins, a, b, c).astype(np.uint64)
    bad = golden.mismatching(ins, got, want)
    assert not len(bad), f"{len(bad)} of {len(c)} differ; first row {bad[0]}: " + str(
        golden.trace(ins, a[bad[0]], b[bad[0]], c[bad[0]]))


def _f32_flush(x):
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    tiny = (bits & np.uint64(0x7F800000)) == 0
    return np.where(tiny, bits & np.uint64(1 << 31), bits)


def _same_f32(got, want):
    return golden.mismatching(GPS_DATAPATH, got, want)


def _f32_operands(n, rng):
    """Random bit patterns, normal values, values near 2**-126 and the overflow threshold, zeros, specials."""
    parts = [golden.vectors.random_bits("f32", n, rng), golden.vectors.random_values("f32", n, rng)]
    e = rng.integers(-128, -100, n)
    parts.append(_bits("f32", rng.choice([-1.0, 1.0], n) * np.ldexp(1 + rng.random(n), e)))
    parts.append(_bits("f32", rng.choice([-1.0, 1.0], n) * np.ldexp(1 + rng.random(n), rng.integers(120, 128, n))))
    parts.append(_bits("f32", rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0], n)))
    x = np.concatenate(parts)
    return x[rng.permutation(len(x))]


@pytest.mark.parametrize("flush", [True, False])
def test_f32_adder_against_numpy(flush):
    rng = np.random.default_rng(5)
    x, y = _f32_operands(200, rng), _f32_operands(200, rng)
    y[::7] = x[::7] ^ np.uint64(1 << 31)                 # exact cancellation
    # ties at x's last place (y = half an ulp of x) and near-ties broken only by y's lowest bit
    k = len(x[2::7])
    xv = np.ldexp(1 + np.floor(rng.random(k) * 2 ** 23) / 2 ** 23, rng.integers(-20, 20, k))
    ulp = np.ldexp(1.0, np.frexp(xv)[1] - 24)
    x[2::7] = _bits("f32", xv * rng.choice([-1.0, 1.0], k))
    y[2::7] = _bits("f32", rng.choice([-0.5, 0.5], k) * ulp * (1 + np.where(rng.random(k) < 0.3, 0.0,
                                                                            2.0 ** -rng.integers(1, 24, k))))
    zeros = np.array([0, 1 << 31], np.uint64)
    x[1::7], y[1::7] = rng.choice(zeros, len(x[1::7])), rng.choice(zeros, len(y[1::7]))    # zero sign rules
    # subnormal-range differences of normal numbers (flushed) and, unflushed, subnormal inputs
    got = run_stage(F32Add(flush=flush), {"x": x, "y": y}, len(x))
    with np.errstate(all="ignore"):
        s = x.astype(np.uint32).view(np.float32) + y.astype(np.uint32).view(np.float32)
    want = _f32_flush(s) if flush else s.view(np.uint32).astype(np.uint64)
    bad = _same_f32(got, want)
    assert not len(bad), [(hex(int(x[i])), hex(int(y[i])), hex(int(got[i])), hex(int(want[i]))) for i in bad[:5]]


@pytest.mark.parametrize("fmt", ["f16", "bf16", "f32"])
def test_f32_multiplier_against_numpy(fmt):
    """Inputs subnormal in their own format and zeros are +0; products below 2**-126 keep their sign; RNE for f32."""
    rng = np.random.default_rng(6)
    if fmt == "f32":
        a, b = _f32_operands(200, rng), _f32_operands(200, rng)
    else:
        a, b = (golden.vectors.random_bits(fmt, 1000, rng) for _ in "ab")
        a[::5] = _bits(fmt, np.ldexp(1.0, rng.integers(get_format(fmt).emin - 3, 0, len(a[::5]))))
    got = run_stage(F32Multiply(fmt, fmt), {"a": a, "b": b}, len(a))
    from golden.formats import to_float
    va, vb = (np.where(decode(fmt, v).cls <= 1, 0.0, to_float(fmt, v)).astype(np.float32) for v in (a, b))
    with np.errstate(all="ignore"):
        want = _f32_flush(va * vb)
    bad = _same_f32(got, want)
    assert not len(bad), [(hex(int(a[i])), hex(int(b[i])), hex(int(got[i])), hex(int(want[i]))) for i in bad[:5]]
