"""Random dot-add operands for an instruction: the shared vector generator.

``kind`` chooses the distribution:

``bits``
    Uniform random bit patterns over each operand's storage width; covers
    NaN, infinities, subnormals and every exponent.
``normal``
    Finite values with exponents near each other (random signs, a spread of a
    few binades, some zeros), where cancellation and rounding decide the result.
``mixed``
    Half of each.
``structured``
    Edge cases (:func:`structured_operands`): cancellation, exponent spread,
    ties at the rounding bit, overflow boundaries, the e_zero rule, chain
    boundaries.
``all``
    A third each of ``bits``, ``normal`` and ``structured``.
``disputed``
    CDNA3's disputed special values (:func:`disputed_operands`, ``golden.Params.specials``):
    input infinities meeting products that overflow the other way, in one pass and across
    chained passes; NaN or infinite c (and chained NaNs) meeting large products.  Other
    instructions get valid vectors that simply do not reach the rules.
"""

from __future__ import annotations

import numpy as np

from .catalog import Instruction
from .formats import Format, from_float, get_format, special_bits, to_float
from .params import EXACT

KINDS = ("bits", "normal", "mixed", "structured", "all", "disputed")


def random_bits(fmt: Format, shape, rng: np.random.Generator) -> np.ndarray:
    fmt = get_format(fmt)
    hi = 1 << fmt.storage_bits
    if fmt.storage_bits == 64:
        return rng.integers(0, 1 << 63, shape, dtype=np.uint64) * np.uint64(2) + \
            rng.integers(0, 2, shape, dtype=np.uint64)
    return rng.integers(0, hi, shape, dtype=np.uint64)


def random_values(fmt: Format, shape, rng: np.random.Generator, spread: int = 4, zeros: float = 0.1) -> np.ndarray:
    """Finite values ``+-m * 2**e`` with ``|e| <= spread`` clipped to the format's range, rounded to it."""
    fmt = get_format(fmt)
    lo, hi = max(fmt.emin, -spread), min(fmt.emax, spread)
    e = rng.integers(lo, hi + 1, shape)
    m = 1 + rng.random(shape)
    v = np.ldexp(m, e)
    neg = rng.random(shape) < 0.5 if fmt.signed else None
    zero = rng.random(shape) < zeros
    return _truncate_normal(fmt, v, neg, zero)


def _truncate_normal(fmt: Format, v, neg, zero) -> np.ndarray:
    """``from_float(fmt, where(zero, 0, where(neg, -v, v)), "RZ")`` for positive normal float64 ``v``
    of exponents ``emin .. emax + 1`` (``random_values``' draws), from v's fields: RZ keeps the
    top mantissa bits; above the largest finite it saturates, as RZ does.  The same bits, about 10x
    sooner (tests/test_golden_kernels.py compares the two)."""
    vb = np.asarray(v, np.float64).view(np.uint64)
    ev = ((vb >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64) - 1023
    man = (vb & np.uint64((1 << 52) - 1)) >> np.uint64(52 - fmt.man_bits)
    over = (ev > fmt.emax) | ((ev == fmt.emax) & (man > np.uint64(fmt.max_mantissa)))
    top = np.uint64(((fmt.emax + fmt.bias) << fmt.man_bits) | fmt.max_mantissa)
    word = np.where(over, top, (np.maximum(ev + fmt.bias, 0).astype(np.uint64) << np.uint64(fmt.man_bits)) | man)
    if neg is not None:
        word |= neg.astype(np.uint64) << np.uint64(fmt.exp_bits + fmt.man_bits)
    word = np.where(zero, np.uint64(0), word)
    return word << np.uint64(fmt.ignored_low_bits)


def _exact_or_zero(fmt, values):
    """Round values to the format (RZ) and read them back, so constructions stay exact."""
    bits = from_float(fmt, np.nan_to_num(values, nan=0.0), "RZ").astype(np.uint64)
    return bits, to_float(fmt, bits)


def structured_operands(ins: Instruction, n: int, rng: np.random.Generator):
    """Edge cases, an equal share of each: exact cancellation, wide exponent spread, ties and
    near-ties at the output's rounding bit, overflow boundaries, all-zero products with tiny
    or zero c (the e_zero rule), and chain boundaries (a first pass that cancels c)."""
    fa, fb, fc, fd = ins.formats
    K = ins.k
    a, b, c, sa, sb = random_operands(ins, n, rng, "normal")
    cases = rng.integers(0, 6, n)
    # 0: exact cancellation of the first two products, small rest (needs K >= 2)
    rows = cases == 0
    if K > 1 and fb.signed:
        a[rows, 1] = a[rows, 0]
        b[rows, 1] = b[rows, 0] ^ np.uint64(1 << (fb.value_bits - 1))
    # 1: wide exponent spread, the whole range of each operand format
    rows = cases == 1
    for fmt, arr in ((fa, a), (fb, b)):
        e = rng.integers(fmt.emin - fmt.man_bits, fmt.emax + 1, (rows.sum(), K))
        arr[rows] = _exact_or_zero(fmt, np.ldexp(1 + rng.random(e.shape), e) *
                                   rng.choice([-1.0, 1.0] if fmt.signed else [1.0], e.shape))[0]
    # 2: ties and near-ties: c = 1.x, one product = half an ulp of the result (+- a little)
    rows = np.nonzero(cases == 2)[0]
    p = ins.params.out_frac_bits or fd.man_bits
    cbits, cval = _exact_or_zero(fc, 1 + np.floor(rng.random(len(rows)) * 2 ** min(p, fc.man_bits)) / 2 ** min(p, fc.man_bits))
    c[rows] = cbits
    half = 2.0 ** -(p + 1)
    for j, r in enumerate(rows):
        a[r] = _exact_or_zero(fa, np.zeros(K))[0]
        a[r, 0] = _exact_or_zero(fa, np.array([1.0]))[0][0]
        b[r, 0] = _exact_or_zero(fb, np.array([half * rng.choice([1.0, 1.0, 1.5, 0.75])]))[0][0]
    # 3: overflow boundaries: operands at their largest, c near the output's largest
    rows = cases == 3
    for fmt, arr in ((fa, a), (fb, b)):
        arr[rows] = _exact_or_zero(fmt, fmt.max_finite * rng.choice([-1.0, 1.0, 0.5] if fmt.signed else [1.0, 0.5],
                                                                    (rows.sum(), K)))[0]
    c[rows] = _exact_or_zero(fc, fc.max_finite * rng.choice([-1.0, 1.0, 0.99], rows.sum()))[0]
    # 4: all products zero (or all but one tiny), c tiny or zero: the e_zero rule decides alignment
    rows = np.nonzero(cases == 4)[0]
    for r in rows:
        a[r] = 0
        if rng.random() < 0.5:
            a[r, rng.integers(K)] = _exact_or_zero(fa, np.array([2.0 ** fa.emin]))[0][0]
            b[r, :] = _exact_or_zero(fb, np.array([2.0 ** fb.emin]))[0][0]
        c[r] = rng.choice([0, 1, int(_exact_or_zero(fc, np.array([2.0 ** fc.emin]))[0][0])])
    # 4b: half of those: tiny products straddling 2**(e_zero - F), where the e_zero rule truncates;
    # with F="exact" nothing truncates, and they straddle the output's smallest subnormal instead
    ez, F = ins.params.e_zero, ins.params.F
    if ez is not None and F is not None:
        edge = fd.emin - fd.man_bits if F == EXACT else ez - F
        tiny_rows = rows[::2]
        for r in tiny_rows:
            target = np.ldexp(1 + rng.random(K), edge + rng.integers(-3, 12, K))
            bb = _exact_or_zero(fb, np.ldexp(1.0, np.clip(np.round(np.log2(target) / 2).astype(int),
                                                          fb.emin, fb.emax)))
            b[r] = bb[0]
            a[r] = _exact_or_zero(fa, target / np.where(bb[1] == 0, 1, bb[1]) * rng.choice([-1, 1], K))[0]
            a[r, rng.random(K) < 0.3] = 0
            c[r] = 0
    # 5: chain boundary: the first half of the products cancels c almost exactly
    rows = np.nonzero(cases == 5)[0]
    L = ins.params.pass_size or K
    for r in rows:
        a[r, :L] = _exact_or_zero(fa, np.r_[1.0, np.zeros(L - 1)])[0]
        b[r, :L] = _exact_or_zero(fb, np.r_[rng.choice([1.0, 2.0, 0.5]), np.zeros(L - 1)])[0]
        prod = float(to_float(fa, a[r, :1])[0] * to_float(fb, b[r, :1])[0])
        c[r] = _exact_or_zero(fc, np.array([-prod * (1 + 2.0 ** -rng.integers(5, 20))]))[0][0]
    return a, b, c, sa, sb


def _signed(fmt: Format, bits, negative):
    """``bits`` with the sign bit set where ``negative`` (formats with a sign)."""
    if not fmt.signed:
        return bits
    return np.where(negative, bits | np.uint64(1 << (fmt.value_bits - 1 + fmt.ignored_low_bits)), bits)


def _infinity(fmt: Format, negative):
    """+-infinity's bits; NaN's where the format has no infinity (FNUZ), +-max where it has neither (fp6, fp4)."""
    if fmt.inf:
        return _signed(fmt, np.full(np.shape(negative), special_bits(fmt, "inf"), np.uint64), negative)
    return _nan(fmt, negative)


def _nan(fmt: Format, negative):
    """A NaN's bits; +-max where the format has no NaN (fp6, fp4)."""
    if fmt.nan == "none":
        return _signed(fmt, np.full(np.shape(negative), special_bits(fmt, "max"), np.uint64), negative)
    return np.full(np.shape(negative), special_bits(fmt, "nan"), np.uint64)


def _large(fmt: Format, shape, rng):
    """Magnitudes near the top of the format (max, max/2, .., max/16): products that overflow (tf32,
    bf16) or reach e_dot >= 25 (bf8 x bf8), and some just short of it."""
    v = fmt.max_finite * np.ldexp(1.0, -rng.integers(0, 5, shape))
    return from_float(fmt, v, "RZ").astype(np.uint64)


def disputed_operands(ins: Instruction, n: int, rng: np.random.Generator):
    """Vectors that reach CDNA3's disputed special-value rules (``golden.Params.specials``), over
    random ``mixed`` operands; an equal share of each case:

    0. an input infinity (c, or an operand in the same pass) and a large product of the other
       sign in a random pass (it overflows where the formats allow);
    1. chained passes: a large product of one sign in the first pass, of the other in the last
       (the first pass's infinity is the last pass's input c);
    2. a NaN or infinite c with large products;
    3. chained passes: a NaN operand in the first pass, large products in the last.
    """
    fa, fb, fc, _ = ins.formats
    K = ins.k
    L = min(ins.params.pass_size or K, K)
    a, b, c, sa, sb = random_operands(ins, n, rng, "mixed")
    case = rng.integers(0, 4, n)
    first = rng.integers(0, L, n)                       # a product of the first pass
    last = K - L + rng.integers(0, L, n)                # one of the last pass
    some = rng.integers(0, K // L, n) * L + rng.integers(0, L, n)
    neg = rng.random(n) < 0.5
    rows = np.arange(n)

    def large_product(r, k, negative):
        a[r, k] = _signed(fa, _large(fa, len(r), rng), negative)
        b[r, k] = _large(fb, len(r), rng)

    r = rows[case == 0]                                 # input infinity vs overflow in one pass
    large_product(r, some[r], neg[r])
    in_c = rng.random(len(r)) < 0.5
    rc = r[in_c & (some[r] < L)]                        # c enters the first pass only
    c[rc] = _infinity(fc, ~neg[rc])
    ro = r[~(in_c & (some[r] < L))]                     # else an operand of the same pass (another product)
    other = (some[ro] // L) * L + (some[ro] % L + 1 + rng.integers(0, max(L - 1, 1), len(ro))) % L
    a[ro, other] = _infinity(fa, ~neg[ro])
    b[ro, other] = _large(fb, len(ro), rng)
    r = rows[case == 1]                                 # overflow one way, then the other, across passes
    large_product(r, first[r], neg[r])
    large_product(r, last[r], ~neg[r])
    r = rows[case == 2]                                 # NaN or infinite c, large products
    c[r] = np.where(rng.random(len(r)) < 0.5, _nan(fc, neg[r]), _infinity(fc, neg[r]))
    large_product(r, first[r], neg[r])
    r = rows[case == 3]                                 # a NaN in the first pass, large products in the last
    a[r, first[r]] = _nan(fa, neg[r])
    large_product(r, last[r], neg[r])
    return a, b, c, sa, sb


def random_operands(ins: Instruction, n: int, rng: np.random.Generator, kind: str = "mixed"):
    """``(a [n, K], b [n, K], c [n], scale_a, scale_b)`` bit patterns for ``ins``."""
    if kind not in KINDS:
        raise ValueError(f"unknown vector kind {kind!r}; valid: {', '.join(KINDS)}")
    fa, fb, fc, _ = ins.formats
    if kind == "structured":
        return structured_operands(ins, n, rng)
    if kind == "disputed":
        return disputed_operands(ins, n, rng)
    if kind in ("mixed", "all"):
        parts = ("bits", "normal") if kind == "mixed" else ("bits", "normal", "structured")
        sizes = [n // len(parts)] * (len(parts) - 1)
        sizes.append(n - sum(sizes))
        chunks = [random_operands(ins, m, rng, k) for m, k in zip(sizes, parts)]
        return tuple(None if chunks[0][i] is None else np.concatenate([ch[i] for ch in chunks]) for i in range(5))
    gen = random_bits if kind == "bits" else random_values
    a = gen(fa, (n, ins.k), rng)
    b = gen(fb, (n, ins.k), rng)
    c = gen(fc, (n,), rng)
    sa = sb = None
    if ins.scale_format:
        fs = get_format(ins.scale_format)
        shape = (n, ins.k // ins.block_size)
        if kind == "bits":
            sa, sb = random_bits(fs, shape, rng), random_bits(fs, shape, rng)
        else:   # scales near 1 so the scaled products stay comparable
            sa, sb = (from_float(fs, np.ldexp(1.0, rng.integers(-3, 4, shape))).astype(np.uint64) for _ in "ab")
    return a, b, c, sa, sb
