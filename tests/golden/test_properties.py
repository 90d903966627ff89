"""Properties against exact rational arithmetic (fractions.Fraction).

* FDA with F wide enough to hold every aligned term is exact before its one
  final rounding: it equals the exact sum rounded RZ to f32 / RNE to f16.
* GPS equals its literal sequence of IEEE binary32 operations, each rounded
  RNE from the exact value, with the paper's flushes.
* SFMA equals a chain of correctly rounded fused multiply-adds.
"""

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import golden
import golden.vectors
from golden.algorithms import run
from golden.formats import decode, from_float, get_format

F16 = get_format("f16")


def exact(fmt, bits) -> Fraction | None:
    """Exact value of one bit pattern (None for NaN / inf)."""
    d = decode(fmt, np.array([bits], np.uint64))
    if d.cls[0] >= 3:
        return None
    v = Fraction(int(d.sig[0])) * Fraction(2) ** (int(d.exp[0]) - get_format(fmt).man_bits)
    return -v if d.sign[0] else v


def round_exact(value: Fraction, fmt, mode) -> int:
    """Round an exact value to fmt: an independent rounding, by bisection on the encoding."""
    f = get_format(fmt)
    if value == 0:
        return 0
    sign = value < 0
    mag = -value if sign else value
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    while Fraction(2) ** e > mag:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    q = max(e, f.emin) - f.man_bits                     # exponent of the last place
    units = mag / Fraction(2) ** q
    n = units.numerator // units.denominator
    rem = units - n
    if mode == "RNE" and (rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1)):
        n += 1
    value_bits = Fraction(n) * Fraction(2) ** q
    if value_bits >= Fraction(2) ** (f.emax + 1):
        word = (((1 << f.exp_bits) - 1) << f.man_bits)          # infinity
    else:
        hidden = 1 << f.man_bits
        if n >= hidden * 2:
            n //= 2
            q += 1
        word = (q + f.man_bits + f.bias) << f.man_bits | (n - hidden) if n >= hidden else n
    return word | (int(sign) << (f.exp_bits + f.man_bits))


f16_near_one = st.builds(lambda s, e, m: (-1) ** s * (1 + m / 1024) * 2.0 ** e,
                         st.integers(0, 1), st.integers(-4, 4), st.integers(0, 1023))


# c zero or at least 2^-10 in magnitude: its last bit (2^-33 or above) is then within F = 44 bits of any
# maximum exponent here (below 2^11); a smaller c loses bits to the window, as the hardware's does
c_in_window = st.one_of(st.just(0.0), st.floats(2.0 ** -10, 30, width=32), st.floats(-30, -2.0 ** -10, width=32))


@settings(max_examples=150, deadline=None)
@given(st.lists(f16_near_one, min_size=16, max_size=16), st.lists(f16_near_one, min_size=16, max_size=16),
       c_in_window, st.sampled_from(["f32", "f16"]))
def test_fda_with_wide_f_is_exact_before_rounding(a_vals, b_vals, c_val, out):
    # products lie in [2^-8, 2^10) with 20 fraction bits, c in f32: F = 44 keeps every bit
    params = golden.Params(base="FDA", F=44, pass_size=16, e_zero=-133,
                           out_rounding="RZ" if out == "f32" else "RNE", overflow="inf" if out == "f32" else "ieee")
    a = from_float("f16", np.array(a_vals))
    b = from_float("f16", np.array(b_vals))
    c = from_float(out, np.float64(c_val))
    d = run(params, a[None], b[None], np.array([c], np.uint64), "f16", "f16", out, out)
    total = sum(exact("f16", x) * exact("f16", y) for x, y in zip(a, b)) + exact(out, int(c))
    assert int(d[0]) == round_exact(total, out, "RZ" if out == "f32" else "RNE")


def test_fda_narrow_f_is_not_exact():
    """The same property fails with the real F = 25: the test above can fail."""
    rng = np.random.default_rng(3)
    params = golden.lookup("hopper", "HMMA.16816.F32").params
    misses = 0
    for _ in range(200):
        a = from_float("f16", rng.uniform(-8, 8, 16))
        b = from_float("f16", rng.uniform(-8, 8, 16) * 2.0 ** rng.integers(-12, 0, 16))
        d = run(params, a[None], b[None], np.zeros(1, np.uint64), "f16", "f16", "f32", "f32")
        total = sum(exact("f16", x) * exact("f16", y) for x, y in zip(a, b))
        misses += int(d[0]) != round_exact(total, "f32", "RZ")
    assert misses > 0


# --------------------------------------------------------------------------- GPS

def _f32(x: Fraction | float) -> Fraction | float:
    """One IEEE binary32 operation's rounding (RNE), on an exact value."""
    if not isinstance(x, Fraction):
        return x                                        # inf / nan pass through
    bits = round_exact(x, "f32", "RNE")
    v = exact("f32", bits)
    return float("inf") * (-1 if bits >> 31 else 1) if v is None else (v, bits >> 31)


def _flushed(v_sign, keep_sign=True):
    """Paper Algorithm 2/3 flush: |x| < 2^-126 becomes a signed (or +) zero."""
    if isinstance(v_sign, float):
        return v_sign, 0
    v, s = v_sign
    if abs(v) < Fraction(2) ** -126:
        return Fraction(0), s if keep_sign else 0
    return v, s


def _add(x, y):
    (xv, xs), (yv, ys) = x, y
    if isinstance(xv, float) or isinstance(yv, float):
        return (xv if isinstance(xv, float) else 0.0) + (yv if isinstance(yv, float) else 0.0), 0
    if xv + yv == 0:
        return Fraction(0), int(xs and ys) if xv == 0 and yv == 0 else 0
    return _flushed(_f32(xv + yv))


def _gps_reference(a, b, c, fmt, G):
    def val(bits, f):
        d = decode(f, np.array([bits], np.uint64))
        if d.cls[0] in (0, 1):                     # zero / subnormal input -> +0
            return Fraction(0), 0
        v = exact(f, bits)
        if v is None:
            return (float("nan") if d.cls[0] == 4 else (-1) ** int(d.sign[0]) * float("inf")), 0
        return v, int(d.sign[0])

    prods = []
    for x, y in zip(a, b):
        (xv, xs), (yv, ys) = val(x, fmt), val(y, fmt)
        if isinstance(xv, float) or isinstance(yv, float):
            prods.append((float(xv) * float(yv), 0))
        else:
            prods.append(_flushed(_f32(xv * yv)) if xv * yv else (Fraction(0), xs ^ ys))

    def pairwise(ps):
        if len(ps) == 1:
            return ps[0]
        return _add(pairwise(ps[:len(ps) // 2]), pairwise(ps[len(ps) // 2:]))

    cv = exact("f32", c)
    d = (cv, c >> 31) if cv is not None else (float(np.uint32(c).view(np.float32)), 0)
    if isinstance(d[0], Fraction) and abs(d[0]) < Fraction(2) ** -126:
        d = (Fraction(0), 0)
    for j in range(0, len(prods), G):
        d = _add(d, pairwise(prods[j:j + G]))
    return d


def test_gps_equals_its_ieee_f32_operation_sequence():
    rng = np.random.default_rng(11)
    for name in ("v_mfma_f32_32x32x8_f16", "v_mfma_f32_32x32x8bf16_1k", "v_mfma_f32_16x16x8bf16"):
        ins = golden.lookup("cdna2", name)
        fmt = ins.a_format
        a, b, c, _, _ = golden.vectors.random_operands(ins, 300, rng, "normal")
        # push a third of the operands towards the subnormal range
        tiny = from_float(fmt, np.ldexp(rng.random((100, ins.k)), -get_format(fmt).bias - 8))
        a[:100] = tiny
        d = golden.dot_add(ins, a, b, c)
        for i in range(len(c)):
            want_v, want_s = _gps_reference([int(x) for x in a[i]], [int(x) for x in b[i]], int(c[i]), fmt,
                                            ins.params.group)
            got = exact("f32", int(d[i]))
            if isinstance(want_v, float):
                got_f = float(np.uint32(d[i]).view(np.float32))
                assert got_f == want_v or (np.isnan(got_f) and np.isnan(want_v)), (name, i)
                continue
            assert got == want_v and (want_v != 0 or int(d[i]) >> 31 == want_s), (name, i)


# --------------------------------------------------------------------------- SFMA

def test_sfma_is_a_chain_of_correctly_rounded_fmas():
    from fma_oracle import fma_exact
    rng = np.random.default_rng(5)
    for arch, name, fmt in (("hopper", "DMMA.8x8x4", "f64"), ("cdna3", "v_mfma_f32_16x16x4_f32", "f32"),
                            ("cdna2", "v_mfma_f64_16x16x4_f64", "f64")):
        ins = golden.lookup(arch, name)
        a, b, c, _, _ = golden.vectors.random_operands(ins, 400, rng, "mixed")
        d = golden.dot_add(ins, a, b, c)
        for i in range(len(c)):
            want = int(c[i])
            for k in range(ins.k):
                want = fma_exact(int(a[i, k]), int(b[i, k]), want, fmt)
            got = int(d[i])
            width = 64 if fmt == "f64" else 32
            def is_nan(x):
                return (x >> (52 if width == 64 else 23)) & (0x7FF if width == 64 else 0xFF) == \
                    (0x7FF if width == 64 else 0xFF) and x & ((1 << (52 if width == 64 else 23)) - 1)  # noqa: B023
            assert got == want or (is_nan(got) and is_nan(want)), (name, i)
