"""``fma_f64`` by error-free transformations (golden/fma.py, "binary64: error-free transformations")
proved like the integer datapath: against Berkeley SoftFloat's ``f64_mulAdd``, the exact rational
oracle ``tests/support/fma_oracle.py`` and the integer path ``fma_f64_integer``, on random and adversarial
operands built to sit on the method's edges (product ties, sums that tie before the product error
decides them, massive cancellation, products near the underflow and split-overflow limits,
subnormal results).  The tests also show that those edges are reached -- rows taken by the float
path with an inexact round-to-odd step, rows sent to the integer path by each precondition -- and
that a planted fault in any step (no round-to-odd, no underflow or overflow bound, a wrong
Veltkamp constant, zero products without the nonzero-addend condition, a closed form for
far-apart operands one step too loose) is caught.  ``-m slow`` runs 4 million rows against SoftFloat.
"""

from __future__ import annotations

import numpy as np
import pytest
from fma_oracle import fma_exact

import golden.fma as F
import golden.vectors
from golden.fma import fma_f64, fma_f64_integer

U64 = np.uint64
SIGN = U64(1 << 63)


# ============================================================ operands

def _pack(sign, biased, frac):
    return (sign.astype(U64) << U64(63)) | (biased.astype(U64) << U64(52)) | frac.astype(U64)


def _short_frac(rng, n, lo=1, hi=53):
    """Fractions of significands with a random number of significant bits (1..53):
    short significands make exact ties in products and sums."""
    bits = rng.integers(lo, hi + 1, n)
    frac = rng.integers(0, 1 << 52, n, dtype=U64)
    return frac & ~((U64(1) << (U64(53) - bits.astype(U64))) - U64(1))


def _product_exponent(rng, n):
    """Biased exponent of a*b: a third near underflow (2^-968 is biased 55; subnormal
    results below 1), a sixth near overflow (2^1021 is biased 2044), the rest anywhere."""
    zone = rng.random(n)
    return np.where(zone < 0.34, rng.integers(-60, 140, n),
                    np.where(zone < 0.5, rng.integers(1900, 2060, n), rng.integers(140, 1900, n)))


def _split_exponent(rng, pe):
    """(ea, eb) biased, ea + eb - 1023 = pe where possible; 5 % subnormal operands."""
    total = pe + 1023
    lo, hi = np.maximum(1, total - 2046), np.minimum(2046, total - 1)
    lo, hi = np.minimum(lo, 2046), np.maximum(np.minimum(hi, 2046), 1)
    ea = lo + (rng.random(pe.size) * (np.maximum(hi - lo, 0) + 1)).astype(np.int64)
    ea = np.clip(ea, 1, 2046)
    eb = np.clip(total - ea, 1, 2046)
    ea = np.where(rng.random(pe.size) < 0.05, 0, ea)
    eb = np.where(rng.random(pe.size) < 0.05, 0, eb)
    # the split's overflow limit 2^996 (biased 2019): a share of operands right at it
    edge = rng.random(pe.size) < 0.05
    ea = np.where(edge, rng.integers(2015, 2024, pe.size), ea)
    return ea, eb


def _signs(rng, n):
    return rng.integers(0, 2, n)


def short_mantissas(rng, n):
    """Wide exponent ranges, short significands, c aligned anywhere from far below to above a*b."""
    pe = _product_exponent(rng, n)
    ea, eb = _split_exponent(rng, pe)
    off = np.where(rng.random(n) < 0.5, rng.integers(-4, 4, n), rng.integers(-120, 60, n))
    ec = np.clip(pe + off, 0, 2046)
    return tuple(_pack(_signs(rng, n), e, _short_frac(rng, n)) for e in (ea, eb, ec))


def product_ties(rng, n):
    """a, b with 27 and 26..28 significant bits: a*b has at most 55 bits, so RN(a*b) is often a
    tie or one bit off one; c of full width in the same binade or just below makes c + RN(a*b)
    a tie that the product error ul then breaks (the double-rounding trap round-to-odd avoids)."""
    pe = _product_exponent(rng, n)
    ea, eb = _split_exponent(rng, pe)
    fa = _short_frac(rng, n, 27, 27)
    fb = _short_frac(rng, n, 26, 28)
    ec = np.clip(pe + rng.integers(-3, 3, n), 0, 2046)
    fc = _short_frac(rng, n, 50, 53)
    return _pack(_signs(rng, n), ea, fa), _pack(_signs(rng, n), eb, fb), _pack(_signs(rng, n), ec, fc)


def near_cancellation(rng, n):
    """c = -RN(a*b) nudged by a few ulps or scaled by 1 +- 2^-k: the result is (nearly) the
    product error, far below both operands -- massive cancellation, often subnormal."""
    a, b, _ = short_mantissas(rng, n)
    with np.errstate(all="ignore"):
        p = (a.view(np.float64) * b.view(np.float64)).view(U64)
    nudge = rng.integers(-3, 4, n).astype(np.int64)
    c = (p.view(np.int64) + nudge).view(U64) ^ SIGN
    with np.errstate(all="ignore"):
        scaled = (p.view(np.float64) * (1 + np.ldexp(1.0, -rng.integers(1, 60, n)))).view(U64) ^ SIGN
    c = np.where(rng.random(n) < 0.3, scaled, c)
    return a, b, c


def subnormal_results(rng, n):
    """a*b and c around the subnormal range: gradual underflow, tiny cancellations."""
    pe = rng.integers(-70, 80, n)
    ea, eb = _split_exponent(rng, pe)
    ec = np.clip(pe + rng.integers(-60, 4, n), 0, 120)
    return tuple(_pack(_signs(rng, n), e, _short_frac(rng, n)) for e in (ea, eb, ec))


def zero_operands(rng, n):
    """a or b (or both) +-0, c anything from +-0 through subnormals and normals to inf and NaN."""
    a, b, c = short_mantissas(rng, n)
    which = rng.integers(0, 3, n)
    a = np.where(which != 1, a & SIGN, a)
    b = np.where(which != 0, b & SIGN, b)
    kind = rng.integers(0, 4, n)
    c = np.where(kind == 0, c & SIGN, c)
    c = np.where(kind == 1, (c & SIGN) | U64(0x7FF0000000000000) | (c & U64(1)), c)   # inf or NaN
    return a, b, c


def uniform_values(rng, n):
    return tuple(golden.vectors.random_bits("f64", n, rng) for _ in range(3))


FAMILIES = {"short_mantissas": short_mantissas, "product_ties": product_ties,
            "near_cancellation": near_cancellation, "subnormal_results": subnormal_results,
            "zero_operands": zero_operands, "uniform_bits": uniform_values}


def adversarial(n: int, seed: int):
    """n rows of each family, concatenated."""
    rng = np.random.default_rng(seed)
    parts = [fam(rng, n) for fam in FAMILIES.values()]
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


# ============================================================ references

def _mismatches(got, want):
    nan_got = (got << U64(1)) > U64(0xFFE0000000000000)
    nan_want = (want << U64(1)) > U64(0xFFE0000000000000)
    return np.flatnonzero((got != want) & ~(nan_got & nan_want))


def _describe(bad, a, b, c, got, want, who):
    i = bad[0]
    return (f"{who}: {len(bad)} of {len(a)} rows differ; first: a={int(a[i]):#018x} b={int(b[i]):#018x} "
            f"c={int(c[i]):#018x}: {int(got[i]):#018x}, reference {int(want[i]):#018x}")


@pytest.fixture(scope="module")
def hard():
    """300,000 adversarial rows (6 families) with SoftFloat's answers."""
    from tests.hw.test_softfloat import softfloat_fma
    a, b, c = adversarial(50_000, seed=5)
    return a, b, c, softfloat_fma("f64", a, b, c)


def test_eft_matches_softfloat(hard):
    a, b, c, want = hard
    got = fma_f64(a, b, c)
    bad = _mismatches(got, want)
    assert not len(bad), _describe(bad, a, b, c, got, want, "fma_f64 vs SoftFloat")


@pytest.mark.slow
def test_eft_matches_softfloat_millions():
    from tests.hw.test_softfloat import softfloat_fma
    for seed in range(4):
        a, b, c = adversarial(170_000, seed=100 + seed)
        got, want = fma_f64(a, b, c), softfloat_fma("f64", a, b, c)
        bad = _mismatches(got, want)
        assert not len(bad), _describe(bad, a, b, c, got, want, f"fma_f64 vs SoftFloat, seed {100 + seed}")


def test_eft_matches_integer_path_on_millions():
    a, b, c = adversarial(500_000, seed=7)            # 3 million rows
    got, want = fma_f64(a, b, c), fma_f64_integer(a, b, c)
    bad = _mismatches(got, want)
    assert not len(bad), _describe(bad, a, b, c, got, want, "fma_f64 vs fma_f64_integer")


def test_eft_matches_exact_oracle():
    a, b, c = adversarial(4_000, seed=9)
    got = fma_f64(a, b, c)
    want = np.array([fma_exact(x, y, z, "f64") for x, y, z in zip(a.tolist(), b.tolist(), c.tolist())], U64)
    bad = _mismatches(got, want)
    assert not len(bad), _describe(bad, a, b, c, got, want, "fma_f64 vs fma_exact")


# ============================================================ the edges are reached

def _biased(x):
    return ((x.view(U64) >> U64(52)) & U64(0x7FF)).astype(np.int64)


def _paths(a, b, c):
    """Per row: taken by the float path; its round-to-odd step inexact (v != tl + ul); and the
    module docstring's lemmas R1, R2 (exponent gaps between v, th and the result)."""
    with np.errstate(all="ignore"):
        af, bf, cf = a.view(np.float64), b.view(np.float64), c.view(np.float64)
        uh = af * bf
        ah, al = F._veltkamp(af)
        bh, bl = F._veltkamp(bf)
        ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl
        th, tl = F._two_sum(cf, uh)
        _, e = F._two_sum(tl, ul)
        v = F._round_to_odd_sum(tl, ul)
        r, ok = F._fma64_eft(a, b, c)
    qv = np.maximum(_biased(v), 1)
    return ok, e != 0, (_biased(th) >= qv + 52) & (_biased(r) >= qv + 50)


def test_adversarial_sets_reach_every_edge(hard):
    a, b, c, _ = hard
    ok, inexact, lemmas = _paths(a, b, c)
    assert (ok & inexact).sum() > 10_000, "too few rows where the round-to-odd step matters"
    assert lemmas[ok & inexact].all(), "R1/R2 fail on a row the float path takes: the proof is wrong"
    with np.errstate(all="ignore"):
        uh = (a.view(np.float64) * b.view(np.float64)).view(U64) << U64(1)
    assert ((uh < F._PROD_LOW) & (uh > 0)).sum() > 10_000, "too few products below the underflow bound"
    big = (uh >= F._SUM_LIMIT) | (((c << U64(1)) >= F._SUM_LIMIT) & ((c << U64(1)) < U64(0xFFE0000000000000)))
    assert big.sum() > 5_000, "too few products or addends beyond the overflow bound"
    near_split = ((a << U64(1)) >= F._SPLIT_LIMIT) & ((a << U64(1)) < U64(0xFFE0000000000000))
    assert near_split.sum() > 5_000, "too few operands beyond the split's overflow limit"
    assert 0.3 < ok.mean() < 0.95
    zero_product = ((a << U64(1)) == 0) | ((b << U64(1)) == 0)
    assert (ok & zero_product).sum() > 10_000, "too few zero products on the float path (P2')"
    assert (~ok & zero_product).sum() > 10_000, "too few zero products on the special-value path"
    q = sum(np.maximum(_biased(x), 1) for x in (a, b))
    finite = np.ones(len(a), bool)
    for x in (a, b, c):
        finite &= ((x << U64(1)) - U64(1)) < U64(0xFFDFFFFFFFFFFFFF)
    qc = np.maximum(_biased(c), 1)
    for name, rows in (("c alone", q <= qc + F._C_ONLY_GAP), ("overflow", q >= F._OVERFLOW_SUM),
                       ("integer datapath", (q > qc + F._C_ONLY_GAP) & (q < F._OVERFLOW_SUM))):
        assert (finite & ~ok & rows).sum() > 2_000, f"too few far-apart rows that take the {name} branch"


def test_normal_data_takes_the_float_path():
    rng = np.random.default_rng(3)
    a, b, c = (golden.vectors.random_values("f64", 200_000, rng, spread=60, zeros=0.0) for _ in range(3))
    ok, _, _ = _paths(a, b, c)
    assert ok.all()


# ============================================================ planted faults are caught

PLANTS = {
    "no round-to-odd": ("_round_to_odd_sum", lambda x, y: x + y),      # the correction step dropped
    "no underflow bound": ("_PROD_LOW", U64(2)),
    "no overflow bound": ("_SUM_LIMIT", U64(0xFFE0000000000000)),
    "Veltkamp constant 2^26+1": ("_SPLITTER", np.float64(2.0 ** 26 + 1)),
    "P2' without c != 0": ("_zero_product_rows", lambda a2, b2, c2: (a2 == 0) | (b2 == 0)),
    "c-alone bound 2 too loose": ("_C_ONLY_GAP", F._C_ONLY_GAP + 2),
    "overflow bound 1 too loose": ("_OVERFLOW_SUM", F._OVERFLOW_SUM - 1),
}


@pytest.mark.parametrize("plant", list(PLANTS))
def test_planted_fault_is_caught(hard, plant, monkeypatch):
    a, b, c, want = hard
    name, value = PLANTS[plant]
    monkeypatch.setattr(F, name, value)
    got = fma_f64(a, b, c)
    assert len(_mismatches(got, want)) > 0, f"planted fault {plant!r} not caught by the SoftFloat comparison"
    assert len(_mismatches(got, fma_f64_integer(a, b, c))) > 0, f"{plant!r} not caught by the integer path"
