"""fma_f64 / fma_f32 against the exact rational oracle fma_exact.

binary64 is checked twice: ``fma_f64`` (error-free transformations with the
integer fallback) and ``fma_f64_integer`` (the integer datapath on every row).

The oracle itself is checked independently (CPython's correctly rounded int/int
division, and the "nearest, ties to even" property evaluated with Fractions),
and so is the round-to-odd lemma that fma_f32 rests on.  Layout:

1. oracle and lemma checks
2. targeted hard cases (ties, subnormal boundary, underflow, overflow,
   cancellation, sticky, signed zeros, specials, exponent-alignment sweep)
3. hypothesis: uniform bit patterns, close exponents, near-cancellation
4. large vectorised random batches
5. API: shapes, broadcasting, dtypes
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest
from fma_oracle import fma_exact
from hypothesis import given, settings
from hypothesis import strategies as st

from golden.fma import fma_f32, fma_f64, fma_f64_integer

# ============================================================== formats

@dataclass(frozen=True)
class Fmt:
    name: str
    ebits: int
    fbits: int
    dtype: type
    fdtype: type
    fma: object
    label: str = ""                    # test id when one format has two implementations

    @property
    def width(self):
        return 1 + self.ebits + self.fbits

    @property
    def p(self):                       # precision, hidden bit included
        return self.fbits + 1

    @property
    def bias(self):
        return (1 << (self.ebits - 1)) - 1

    @property
    def emax(self):                    # exponent of the largest binade
        return self.bias

    @property
    def emin(self):                    # exponent of the smallest normal
        return 1 - self.bias

    @property
    def qmin(self):                    # exponent of the subnormal quantum
        return self.emin - self.fbits

    @property
    def sign(self):
        return 1 << (self.width - 1)

    @property
    def inf(self):
        return ((1 << self.ebits) - 1) << self.fbits

    @property
    def qnan(self):
        return self.inf | (1 << (self.fbits - 1))

    @property
    def max_bits(self):
        return self.inf - 1

    def enc(self, m: int, e: int = 0) -> int:
        """Bit pattern of the exactly representable value m * 2^e (m may be negative)."""
        s = self.sign if m < 0 else 0
        m = abs(m)
        if m == 0:
            return s
        top = e + m.bit_length() - 1
        assert top <= self.emax, "overflow"
        q = max(top - self.fbits, self.qmin)
        if e >= q:
            mm = m << (e - q)
        else:
            assert m % (1 << (q - e)) == 0, "not representable"
            mm = m >> (q - e)
        if mm >> self.fbits:
            return s | (q + self.fbits + self.bias) << self.fbits | (mm & ((1 << self.fbits) - 1))
        return s | mm

    def value(self, bits: int):
        """Exact Fraction of a finite pattern, or None for inf/NaN."""
        field = bits >> self.fbits & ((1 << self.ebits) - 1)
        frac = bits & ((1 << self.fbits) - 1)
        if field == (1 << self.ebits) - 1:
            return None
        m, e = (frac, self.qmin) if field == 0 else (frac | 1 << self.fbits, field - self.bias - self.fbits)
        v = Fraction(m) * Fraction(2) ** e
        return -v if bits & self.sign else v

    def is_nan(self, bits: int) -> bool:
        return (bits & (self.sign - 1)) > self.inf

    def rand_bits(self, rng, n):
        return rng.integers(0, 1 << self.width, n, dtype=np.uint64).astype(self.dtype)


F64 = Fmt("f64", 11, 52, np.uint64, np.float64, fma_f64)
F64_INTEGER = Fmt("f64", 11, 52, np.uint64, np.float64, fma_f64_integer, "f64_integer")
F32 = Fmt("f32", 8, 23, np.uint32, np.float32, fma_f32)
FORMATS = [F64, F32]
IMPLEMENTATIONS = [F64, F64_INTEGER, F32]
by_name = pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
by_fma = pytest.mark.parametrize("fmt", IMPLEMENTATIONS, ids=lambda f: f.label or f.name)


def check(fmt: Fmt, triples, limit: int = 8):
    """Vectorised fma vs fma_exact on every triple; report the first mismatches."""
    triples = list(triples)
    assert triples
    a, b, c = (np.array(col, dtype=fmt.dtype) for col in zip(*triples))
    got = fmt.fma(a, b, c)
    assert got.dtype == fmt.dtype and got.shape == a.shape
    bad = []
    for (x, y, z), g in zip(triples, got.tolist()):
        want = fma_exact(x, y, z, fmt.name)
        if g != want:
            bad.append(f"fma({x:#x}, {y:#x}, {z:#x}) = {g:#x}, exact {want:#x}")
            if len(bad) >= limit:
                break
    assert not bad, f"{fmt.name}: " + "; ".join(bad)
    return len(triples)


def signed(fmt, triples):
    """Every sign combination of each triple."""
    out = []
    for t in triples:
        for s in range(8):
            out.append(tuple(v ^ (fmt.sign if s >> i & 1 else 0) for i, v in enumerate(t)))
    return out


# ================================================== 1. oracle and lemma

def rn_fraction_f64(x: Fraction) -> int:
    """Independent binary64 RNE: CPython's int/int division is correctly rounded."""
    try:
        v = x.numerator / x.denominator
    except OverflowError:
        v = math.inf if x > 0 else -math.inf
    return int(np.float64(v).view(np.uint64))


def nearest_ok(fmt: Fmt, x: Fraction, r: int) -> bool:
    """r is RNE(x): no representable value is closer, ties go to the even one."""
    if x == 0:
        return fmt.value(r) == 0
    if (r & fmt.sign) != (fmt.sign if x < 0 else 0):
        return False
    mag, ax = r & (fmt.sign - 1), abs(x)
    big = fmt.value(fmt.max_bits) + Fraction(2) ** (fmt.emax - fmt.p)   # overflow threshold
    if mag == fmt.inf:
        return ax >= big
    if ax >= big:
        return False
    v = abs(fmt.value(mag))
    for nb in (mag - 1, mag + 1):
        if nb < 0 or nb >= fmt.inf:
            continue
        dv, dn = abs(ax - v), abs(ax - fmt.value(nb))
        if dn < dv or (dn == dv and mag & 1):
            return False
    return True


def exact_value(fmt, a, b, c):
    va, vb, vc = fmt.value(a), fmt.value(b), fmt.value(c)
    return None if None in (va, vb, vc) else va * vb + vc


def test_oracle_against_correctly_rounded_division():
    rng = random.Random(7)
    done = 0
    cases = rng.sample(hard_cases(F64), 4000) + [tuple(rng.getrandbits(64) for _ in range(3)) for _ in range(3000)]
    for a, b, c in cases:
        x = exact_value(F64, a, b, c)
        if x is None or x == 0:
            continue
        assert fma_exact(a, b, c, "f64") == rn_fraction_f64(x), (hex(a), hex(b), hex(c))
        done += 1
    assert done > 3000


@by_name
def test_oracle_is_nearest_even(fmt):
    rng = random.Random(11)
    cases = rng.sample(hard_cases(fmt), 3000) + \
        [tuple(rng.getrandbits(fmt.width) for _ in range(3)) for _ in range(2000)]
    for a, b, c in cases:
        x = exact_value(fmt, a, b, c)
        if x is not None:
            assert nearest_ok(fmt, x, fma_exact(a, b, c, fmt.name)), (hex(a), hex(b), hex(c))


@by_name
def test_oracle_handwritten(fmt):
    f, e = fmt.enc, fmt.name
    one, ulp = f(1), f(1, -fmt.fbits)
    # (1 + u)(1 - u) - 1 = -u^2 exactly, lost entirely by a*b+c in two roundings
    u = 1 << fmt.fbits
    assert fma_exact(f(u + 1, -fmt.fbits), f(u - 1, -fmt.fbits), f(-1), e) == f(-1, -2 * fmt.fbits)
    assert fma_exact(one, one, f(1, -fmt.p), e) == one                       # tie -> even
    assert fma_exact(one, f(u + 1, -fmt.fbits), f(1, -fmt.p), e) == f(u + 2, -fmt.fbits)
    assert fma_exact(fmt.sign, f(5), fmt.sign, e) == fmt.sign                # (-0)*5 + (-0) = -0
    assert fma_exact(f(0), f(5), fmt.sign, e) == 0                           # (+0)*5 + (-0) = +0
    assert fma_exact(f(3), f(5), f(-15), e) == 0                             # exact cancellation
    assert fma_exact(fmt.sign | f(3), f(5), f(15), e) == 0
    assert fma_exact(fmt.inf, 0, one, e) == fmt.qnan                         # inf*0
    assert fma_exact(fmt.inf, one, fmt.sign | fmt.inf, e) == fmt.qnan        # inf - inf
    assert fma_exact(fmt.max_bits, fmt.max_bits, fmt.sign | fmt.inf, e) == fmt.sign | fmt.inf
    assert fma_exact(f(1, fmt.qmin), f(1, -1), 0, e) == 0                    # half quantum -> 0
    assert fma_exact(f(1, fmt.qmin), f(3, -2), 0, e) == 1                    # 3/4 quantum -> 1
    assert fma_exact(fmt.sign | f(1, fmt.qmin), f(1, -2), 0, e) == fmt.sign  # underflow keeps -
    assert fma_exact(ulp, one, fmt.qnan | 5, e) == fmt.qnan


def _round_units(k: int, prec: int, qmin: int, odd: bool) -> int:
    """Round the integer k > 0 to `prec` significant bits, quantum >= 2^qmin;
    ties to even (odd=False) or round to odd (odd=True)."""
    q = max(k.bit_length() - prec, qmin)
    if q <= 0:
        return k
    m, rem = k >> q, k & ((1 << q) - 1)
    if odd:
        m |= rem != 0
    elif rem > 1 << (q - 1) or (rem == 1 << (q - 1) and m & 1):
        m += 1
    return m << q


@pytest.mark.parametrize("q,qmin", [(3, 0), (4, 0), (4, 3), (5, 6), (3, 9)])
def test_round_to_odd_double_rounding_lemma(q, qmin):
    """RN_q(RO_p(x)) == RN_q(x) whenever p >= q + 2 (the RO quantum may be any
    finer power of two than RN's, subnormal-like minimum quantum included) --
    the reason fma_f32 may round the float64 sum to odd first.  p = q + 1 fails."""
    xs = range(1, 1 << 13)
    for p in (q + 2, q + 3, q + 7):
        for k in xs:
            assert _round_units(_round_units(k, p, 0, True), q, qmin, False) == _round_units(k, q, qmin, False)
    bad = [k for k in xs
           if _round_units(_round_units(k, q + 1, 0, True), q, qmin, False) != _round_units(k, q, qmin, False)]
    assert bad, "p = q + 1 should not be enough"


def test_f32_double_rounding_trap():
    """(1 + 2^-12)^2 + 2^-80 is just above a binary32 tie; rounding a*b + c to
    float64 first drops 2^-80 and produces a false tie."""
    a = np.array([F32.enc((1 << 12) + 1, -12)], np.uint32)
    c = np.array([F32.enc(1, -80)], np.uint32)
    want = F32.enc((1 << 23) + (1 << 12) + 1, -23)
    naive = np.float32(a.view(np.float32).astype(np.float64) ** 2 + c.view(np.float32).astype(np.float64))
    assert int(naive.view(np.uint32)[0]) != want
    assert fma_exact(int(a[0]), int(a[0]), int(c[0]), "f32") == want
    assert int(fma_f32(a, a, c)[0]) == want


# ======================================================= 2. hard cases

def _ties(fmt):
    f, p = fmt.enc, fmt.p
    out = []
    # perturbations: none, far sticky (around binary64's ulp for binary32: double-rounding traps), ulp-sized
    small = [0, f(1, fmt.qmin), f(1, -p), f(1, -p + 1), f(-1), f(-1, 1)]
    small += [f(k, -2 * p - sh) for k in (1, 3, 5) for sh in (2, 4, 6, 20)]
    for j in range(1, p - 1):
        b = f((1 << (p - j)) + 1, -(p - j))
        for am in (1, 3):                                  # lower neighbour of the tie even / odd
            # a*b = 1 + am 2^-j + 2^-(p-j) + am 2^-p: (mostly) halfway between two neighbours
            a = f((1 << j) + am, -j)
            out += [(a, b, c) for c in small]
            for k in (fmt.emax // 2, -(fmt.emax // 2)):
                ak = f((1 << j) + am, k - j)
                out += [(ak, b, f(1, k - 2 * p - 4)), (ak, b, f(3, k - 2 * p - 5)), (ak, b, 0)]
    # addend decides: c = half an ulp of a*b, plus or minus a sticky bit
    for m in (1 << fmt.fbits, (1 << fmt.fbits) + 1, (1 << fmt.p) - 1):
        for k in (0, 20, -20):
            t = p - 2                                                   # half ulp, +- a far sticky bit
            for half in (f(1, k - p), f((1 << t) + 1, k - p - t), f((1 << t) - 1, k - p - t)):
                out += [(f(m, -fmt.fbits), f(1, k), half), (f(1, k), f(m, -fmt.fbits), half)]
    # product decides: a*b = half an ulp of c (+- a sticky bit), c even/odd/power of two
    for cm in (1 << fmt.fbits, (1 << fmt.fbits) + 1, (1 << fmt.p) - 1, (1 << fmt.fbits) + 2):
        for bm in (1, 3, (1 << fmt.fbits) + 1, (1 << fmt.fbits) - 1):
            blen = bm.bit_length()
            for shift in (0, 1, -1):
                out.append((f(1, -fmt.p - shift), f(bm, 1 - blen), f(cm, -fmt.fbits)))
    return signed(fmt, out)


def _subnormal_boundary(fmt):
    f, p, q = fmt.enc, fmt.p, fmt.qmin
    B = 1 << fmt.fbits                           # min normal in units of the subnormal quantum
    cs = [0, 1, 2, 3, B - 1, B - 2, B, B + 1, 2 * B, B // 2, B + B // 2, 3 * B - 2]
    ms = [1, 3, 5, (1 << p) - 1, (1 << p) - 3, (1 << (p - 1)) + 1]
    out = []
    for m in ms:
        for g in (0, 1, 2, 3, 4, p - 1, p, p + 1):
            a = f(m, -(p + 10))                  # a normal; the product lands at m 2^(q-g)
            b = f(1, q - g + p + 10)
            for cu in cs:
                for cs_ in (1, -1):
                    out += [(a, b, f(cs_ * cu, q)), (b, a, f(cs_ * cu, q))]
    # (2^p - 1) 2^(q-1) = min_normal - quantum/2: a tie that rounds up into the normal range
    out += [(f((1 << p) - 1, 1 - p), f(1, fmt.emin - 1), c) for c in (0, 1, fmt.sign | 1)]
    return signed(fmt, out)


def _underflow(fmt):
    f, q = fmt.enc, fmt.qmin
    out = []
    cs = (0, 1, 2, 3, f(1, fmt.emin), f(1, fmt.emin) - 1)
    for total in (q - 1, q - 2, q - 3, q - 60, max(q - 200, 2 * q + 2 * fmt.p)):
        x = total // 2 + fmt.p                     # a*b = m 2^(total - bitlen(m) + 1) ~ 2^total
        for m in (1, 3, (1 << fmt.fbits) + 1, (1 << fmt.p) - 1):
            a = f(m, x - m.bit_length() + 1)
            b = f(1, total - x)
            out += [(a, b, c) for c in cs]
    out += [(1, 1, c) for c in cs] + [(1, f(1, -1), c) for c in cs]   # two subnormals
    return signed(fmt, out)


def _far_sticky_subnormal(fmt):
    """a*b = (2^s+1)(2^s-1) 2^k = 2^(2s+k) - 2^k: a long run of ones whose
    complement, after c cancels the top, is a tie at a subnormal rounding bit
    plus one sticky bit ~2s places below it (a sticky the tie must not lose)."""
    f, q = fmt.enc, fmt.qmin
    out = []
    for s in range(1, fmt.p):
        for o in (-2, -1, 0, 1, 2, fmt.p - 1, fmt.p, fmt.p + 1):
            k = q - 1 + o - 2 * s                   # a*b = 2^(q-1+o) - 2^k
            x = k // 2
            if x < q or k - x < q:
                continue
            a, b = f((1 << s) + 1, x), f((1 << s) - 1, k - x)
            out += [(a, b, c) for c in (1, 2, 3, 4, f(1, fmt.emin), f(3, fmt.emin - 1))]
    return signed(fmt, out)


def _split(n, p):
    """n = u*v with u, v < 2^p."""
    for d in range(2, 1 << 16):
        if n % d == 0 and (n // d).bit_length() <= p:
            return d, n // d
    raise AssertionError(n)


def _overflow(fmt):
    f, p, E = fmt.enc, fmt.p, fmt.emax
    mx = fmt.max_bits
    h = E // 2
    big = f(1, E - p - 30)
    out = [
        (f(3, h), f(1, E - h), fmt.sign | mx),            # 1.5*2^(E+1) - max fits
        (f(1, h), f(1, E + 1 - h), fmt.sign | f(1, E)),   # 2^(E+1) - 2^E
        (f(1, h), f(1, E + 1 - h), fmt.sign | mx),
        (f(1, h), f(1, E + 1 - h), 0),
        (f(1, h), f(1, E + 1 - h), 1),
        (mx, f(1), f(1, E - p)),                          # max + half ulp: tie -> inf
        (mx, f(1), f((1 << 20) - 1, E - p - 20)),         # just below the tie -> max
        (mx, mx, fmt.sign | mx),
        (mx, mx, fmt.sign | fmt.inf),
        (mx, mx, fmt.inf),
        (mx, mx, fmt.qnan),
        (f(1, E), f(1, E), fmt.sign | mx),
    ]
    u, v = _split((1 << (p + 1)) - 1, p)                 # u*v 2^(E-p) = 2^(E+1) - 2^(E-p): tie
    for k in (0, 5, -5):
        a, b = f(u, h + k), f(v, E - p - h - k)
        out += [(a, b, c) for c in (0, 1, 2, big, f(-1), fmt.sign | big, fmt.sign | f(1, E), fmt.sign | mx)]
    return signed(fmt, out)


def _cancellation(fmt, rng):
    f = fmt.enc
    out = [(f(3, k), f(5, -k), f(-15)) for k in (0, 10, -10)]
    n = 1 << fmt.fbits
    for k in (0, 3, fmt.emax // 2 - 5, -(fmt.emax // 2) + 5):
        out += [
            (f(n + 1, -fmt.fbits + k), f(n - 1, -fmt.fbits), f(-1, k)),
            (f(2 * n - 1, -fmt.fbits + k), f(2 * n - 1, -fmt.fbits), f(-4, k)),    # top(C) just above P
            (f(2 * n - 1, -fmt.fbits + k), f(2 * n - 1, -fmt.fbits), f(-2, k)),
            (f(2 * n - 1, -fmt.fbits + k), f(2 * n - 1, -fmt.fbits), f(-8, k)),
            (f(n, -fmt.fbits + k), f(n, -fmt.fbits), f(-1, k)),
        ]
    # c = -RN(a*b) (+- a few ulps): the result is the product's rounding error
    fd = fmt.fdtype
    for lo, hi in ((1, 2 * fmt.bias), (fmt.bias - 40, fmt.bias + 40), (1, fmt.bias // 2),
                   (fmt.bias * 3 // 2, 2 * fmt.bias)):
        ea, eb = rng.integers(lo, hi + 1, (2, 400)).astype(np.uint64) << np.uint64(fmt.fbits)
        ma, mb = rng.integers(0, 1 << fmt.fbits, (2, 400), dtype=np.uint64)
        a, b = (ea | ma).astype(fmt.dtype), (eb | mb).astype(fmt.dtype)
        with np.errstate(all="ignore"):
            prod = (a.view(fd) * b.view(fd)).view(fmt.dtype)
        for x, y, z in zip(a.tolist(), b.tolist(), prod.tolist()):
            mag = z & (fmt.sign - 1)
            for d in (0, 1, -1, 2):
                if 0 <= mag + d < fmt.inf:
                    out.append((x, y, ((z & fmt.sign) | (mag + d)) ^ fmt.sign))
    return signed(fmt, out)


def _sticky(fmt):
    f, p = fmt.enc, fmt.p
    n = 1 << fmt.fbits
    out = []
    cs = [f(1), f(n + 1, -fmt.fbits), f(2 * n - 1, -fmt.fbits), f(1, 40), f(1, -40), f(1, fmt.emin), f(3, fmt.emin)]
    for g in list(range(p - 3, p + 5)) + [p + 10, p + 60, 2 * p, 3 * p, 3 * p + 10, 200]:
        for pm in (n, n + 1, 2 * n - 1, n + n // 2):
            for c in cs:
                e = math.floor(math.log2(fmt.value(c))) - g - 2 * fmt.fbits   # a*b ~ c 2^-g
                try:
                    a = f(pm, e // 2)
                    b = f(1 << fmt.fbits, e - e // 2)
                except AssertionError:                  # not representable: skip
                    continue
                out.append((a, b, c))
                out.append((c, f(1), a if (a & (fmt.sign - 1)) else 1))  # dominant product, tiny c
    return signed(fmt, out)


def _zeros_and_specials(fmt):
    f = fmt.enc
    vals = [0, f(1), f(3, -1), 1, fmt.max_bits, f(1, fmt.emin), fmt.inf, fmt.qnan,
            fmt.inf | 1, fmt.qnan | 12345]                        # the last two: signalling, payload
    vals += [v | fmt.sign for v in vals]
    return [(a, b, c) for a in vals for b in vals for c in vals]


def _alignment_sweep(fmt, rng):
    """Addend exponent swept across (and beyond) the product: every window shift."""
    fm = (1 << fmt.fbits) - 1
    out = []
    p = fmt.p
    for ea, eb in ((fmt.bias, fmt.bias), (fmt.bias - 300 % fmt.bias, fmt.bias + 7),
                   (1, fmt.bias), (fmt.bias + fmt.bias // 2, fmt.bias + fmt.bias // 3),
                   (fmt.bias // 2 + 3, fmt.bias // 2 + 2)):
        for dlt in range(-3 * p - 10, 2 * p + 20):
            ec = ea + eb - fmt.bias + dlt
            if not 0 <= ec <= 2 * fmt.bias:
                continue
            for fa, fb, fc in ((0, 0, 0), (fm, fm, fm), (fm, fm, 0), (0, 0, fm), (1, fm, 1 << (fmt.fbits - 1)),
                               tuple(int(x) for x in rng.integers(0, fm + 1, 3))):
                out.append(((ea << fmt.fbits) | fa, (eb << fmt.fbits) | fb, (ec << fmt.fbits) | fc))
    return signed(fmt, out)


def _subnormal_operands(fmt, rng):
    fm = (1 << fmt.fbits) - 1
    out = []
    for _ in range(400):
        a = int(rng.integers(1, fm + 1))                           # subnormal
        eb = int(rng.integers(fmt.bias, 2 * fmt.bias + 1))
        b = (eb << fmt.fbits) | int(rng.integers(0, fm + 1))
        ec = max(0, min(2 * fmt.bias, eb - fmt.bias + int(rng.integers(-fmt.p - 3, 3))))
        c = (ec << fmt.fbits) | int(rng.integers(0, fm + 1))
        out += [(a, b, c), (b, a, c), (a, b, int(rng.integers(0, fm + 1))), (a, a, int(rng.integers(0, 4))),
                (a, int(rng.integers(1, fm + 1)), c)]
    return signed(fmt, out)


def hard_cases(fmt):
    rng = np.random.default_rng(1234)
    return (_ties(fmt) + _subnormal_boundary(fmt) + _underflow(fmt) + _far_sticky_subnormal(fmt) + _overflow(fmt)
            + _cancellation(fmt, rng) + _sticky(fmt) + _zeros_and_specials(fmt)
            + _alignment_sweep(fmt, rng) + _subnormal_operands(fmt, rng))


GROUPS = {
    "ties": _ties,
    "subnormal_boundary": _subnormal_boundary,
    "underflow": _underflow,
    "far_sticky_subnormal": _far_sticky_subnormal,
    "overflow": _overflow,
    "cancellation": lambda fmt: _cancellation(fmt, np.random.default_rng(1)),
    "sticky": _sticky,
    "zeros_and_specials": _zeros_and_specials,
    "alignment_sweep": lambda fmt: _alignment_sweep(fmt, np.random.default_rng(2)),
    "subnormal_operands": lambda fmt: _subnormal_operands(fmt, np.random.default_rng(3)),
}


@by_fma
@pytest.mark.parametrize("group", list(GROUPS))
def test_hard_cases(fmt, group):
    assert check(fmt, GROUPS[group](fmt)) > 50


@by_fma
def test_handwritten_results(fmt):
    f, s = fmt.enc, fmt.sign
    n = 1 << fmt.fbits

    def one(a, b, c):
        return int(fmt.fma(np.array([a], fmt.dtype), np.array([b], fmt.dtype), np.array([c], fmt.dtype))[0])

    assert one(s, f(5), s) == s                                   # fma(-0, 5, -0) = -0
    assert one(0, f(5), s) == 0                                   # fma(+0, 5, -0) = +0
    assert one(f(3), f(5), f(-15)) == 0                           # exact cancellation -> +0
    assert one(f(-3), f(5), f(15)) == 0
    assert one(f(n + 1, -fmt.fbits), f(n - 1, -fmt.fbits), f(-1)) == f(-1, -2 * fmt.fbits)
    assert one(fmt.inf, 0, f(1)) == fmt.qnan
    assert one(fmt.inf, f(1), s | fmt.inf) == fmt.qnan
    assert one(fmt.qnan | 7 | s, f(1), f(1)) == fmt.qnan
    assert one(fmt.max_bits, fmt.max_bits, s | fmt.inf) == s | fmt.inf
    assert one(fmt.max_bits, f(2), s | fmt.max_bits) == fmt.max_bits
    assert one(s | f(1, fmt.qmin), f(1, -2), 0) == s              # tiny negative -> -0
    assert one(f(1, fmt.qmin), f(3, -2), 0) == 1
    assert one(f(1), f(1), f(1, -fmt.p)) == f(1)                  # tie to even


# ========================================================== 3. hypothesis

def _bits(fmt):
    return st.integers(0, (1 << fmt.width) - 1)


def _close_triple(fmt):
    """Operands whose addend exponent is near the product's (cancellation,
    overlapping alignment), with mantissas biased towards boundary patterns."""
    fm = (1 << fmt.fbits) - 1
    frac = st.one_of(st.integers(0, fm), st.sampled_from([0, fm, 1, fm - 1, 1 << (fmt.fbits - 1)]))
    expo = st.integers(0, 2 * fmt.bias)
    sign = st.integers(0, 1)

    @st.composite
    def triple(draw):
        ea, eb = draw(expo), draw(expo)
        ec = ea + eb - fmt.bias + draw(st.integers(-2 * fmt.p - 8, fmt.p + 8))
        ec = min(max(ec, 0), 2 * fmt.bias)
        return tuple((draw(sign) << (fmt.width - 1)) | (e << fmt.fbits) | draw(frac) for e in (ea, eb, ec))

    return triple()


def _near_cancel_triple(fmt):
    """c = -RN(a*b) nudged by a few ulps: the result is (almost) the product error."""
    @st.composite
    def triple(draw):
        a, b = draw(_bits(fmt)), draw(_bits(fmt))
        with np.errstate(all="ignore"):
            prod = (np.array([a], fmt.dtype).view(fmt.fdtype) * np.array([b], fmt.dtype).view(fmt.fdtype))
        z = int(prod.view(fmt.dtype)[0]) ^ fmt.sign
        z = (z + draw(st.integers(-2, 2))) % (1 << fmt.width)
        return a, b, z

    return triple()


HYP = settings(max_examples=150, deadline=None)


@by_fma
@HYP
@given(data=st.data())
def test_hypothesis_uniform_bits(fmt, data):
    check(fmt, data.draw(st.lists(st.tuples(_bits(fmt), _bits(fmt), _bits(fmt)), min_size=1, max_size=40)))


@by_fma
@HYP
@given(data=st.data())
def test_hypothesis_close_exponents(fmt, data):
    check(fmt, data.draw(st.lists(_close_triple(fmt), min_size=1, max_size=40)))


@by_fma
@HYP
@given(data=st.data())
def test_hypothesis_near_cancellation(fmt, data):
    check(fmt, data.draw(st.lists(_near_cancel_triple(fmt), min_size=1, max_size=40)))


@by_name
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_hypothesis_oracle_nearest(fmt, data):
    a, b, c = data.draw(st.one_of(st.tuples(_bits(fmt), _bits(fmt), _bits(fmt)), _close_triple(fmt)))
    x = exact_value(fmt, a, b, c)
    if x is not None:
        assert nearest_ok(fmt, x, fma_exact(a, b, c, fmt.name))


# ===================================================== 4. large batches

def _close_batch(fmt, rng, n):
    """Vectorised version of _close_triple."""
    e = rng.integers(0, 2 * fmt.bias + 1, (2, n))
    ec = np.clip(e[0] + e[1] - fmt.bias + rng.integers(-2 * fmt.p - 8, fmt.p + 9, n), 0, 2 * fmt.bias)
    exps = np.stack([e[0], e[1], ec]).astype(np.uint64)
    fr = rng.integers(0, 1 << fmt.fbits, (3, n), dtype=np.uint64)
    # a quarter of the fractions at boundary patterns (all ones / zero)
    fr = np.where(rng.random((3, n)) < 0.125, np.uint64((1 << fmt.fbits) - 1), fr)
    fr = np.where(rng.random((3, n)) < 0.125, np.uint64(0), fr)
    sg = rng.integers(0, 2, (3, n), dtype=np.uint64)
    bits = (sg << np.uint64(fmt.width - 1)) | (exps << np.uint64(fmt.fbits)) | fr
    return [x.astype(fmt.dtype) for x in bits]


@by_fma
@pytest.mark.parametrize("kind", ["uniform_bits", "close_exponents"])
def test_large_random_batch(fmt, kind):
    rng = np.random.default_rng(2024 + fmt.width + len(kind))
    n = 200_000
    if kind == "uniform_bits":
        a, b, c = (fmt.rand_bits(rng, n) for _ in range(3))
    else:
        a, b, c = _close_batch(fmt, rng, n)
    got = fmt.fma(a, b, c).tolist()
    name = fmt.name
    bad = [i for i, (x, y, z, g) in enumerate(zip(a.tolist(), b.tolist(), c.tolist(), got))
           if fma_exact(x, y, z, name) != g]
    assert not bad, f"{len(bad)} mismatches, first: " + ", ".join(
        f"({int(a[i]):#x}, {int(b[i]):#x}, {int(c[i]):#x}) -> {got[i]:#x}" for i in bad[:5])


# ================================================================ 5. API

@by_fma
def test_shapes_and_broadcasting(fmt):
    rng = np.random.default_rng(5)
    a = fmt.rand_bits(rng, 24).reshape(4, 6)
    b = fmt.rand_bits(rng, 6)
    c = fmt.enc(3, -1)                                   # python int scalar
    got = fmt.fma(a, b, c)
    assert got.shape == (4, 6) and got.dtype == fmt.dtype
    for i in range(4):
        for j in range(6):
            assert int(got[i, j]) == fma_exact(int(a[i, j]), int(b[j]), c, fmt.name)
    strided = fmt.fma(a[:, ::2], a[:, 1::2], b[:3])      # non-contiguous views
    assert np.array_equal(strided, fmt.fma(a[:, ::2].copy(), a[:, 1::2].copy(), np.broadcast_to(b[:3], (4, 3))))
    scalar = fmt.fma(fmt.enc(2), fmt.enc(3), fmt.enc(1))
    assert scalar.shape == () and int(scalar) == fmt.enc(7)
    assert fmt.fma(np.zeros(0, fmt.dtype), np.zeros(0, fmt.dtype), np.zeros(0, fmt.dtype)).shape == (0,)


@by_fma
def test_rejects_float_arrays(fmt):
    with pytest.raises(TypeError):
        fmt.fma(np.ones(3), np.ones(3), np.ones(3))
