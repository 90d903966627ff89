"""Special values (III-F): subnormals, signed zeros, product and intermediate overflow with the
boundary cases, NaN generation, TF32's low bits."""

from __future__ import annotations

import math
from enum import StrEnum

import numpy as np

from golden.formats import special_bits, to_float

from ..rig import Row, exact_in


class Case(StrEnum):
    """The special-value cases: results are keyed by these constants (their values are the display
    labels; nothing reads a label)."""

    SUBNORMAL_C = "subnormal c"
    SUBNORMAL_A = "subnormal a"
    SUBNORMAL_B = "subnormal b"
    SUBNORMAL_PRODUCT = "subnormal product"
    SUBNORMAL_SUM = "subnormal sum"
    NEG_ZERO_SUM = "-0 + sum(+0 * -0)"
    TINY_NEGATIVE = "-tiny product rounding to zero"
    CANCELLATION = "1 - 1 (exact cancellation)"
    PRODUCT_OVERFLOW = "product overflow: 2^(E+1) - 2^E"
    INTERMEDIATE_OVERFLOW = "intermediate overflow: 2^E + 2^E - 2^E"
    INTERMEDIATE_OVERFLOW_C_FIRST = "intermediate overflow: c=2^E first, + 2^E - 2^E"
    MAX_PLUS_1U = "overflow boundary +(max + 1.0u)"
    MAX_PLUS_075U = "overflow boundary +(max + 0.75u)"
    MAX_PLUS_05U = "overflow boundary +(max + 0.5u)"
    MAX_PLUS_025U = "overflow boundary +(max + 0.25u)"
    MIN_MINUS_1U = "overflow boundary -(max + 1.0u)"
    MIN_MINUS_075U = "overflow boundary -(max + 0.75u)"
    MIN_MINUS_05U = "overflow boundary -(max + 0.5u)"
    MIN_MINUS_025U = "overflow boundary -(max + 0.25u)"
    ZERO_TIMES_INF = "0 * inf"
    INF_MINUS_INF = "+inf - inf (products)"
    C_INF_PRODUCT_NEG_INF = "c=+inf, product -inf"
    C_INF = "c=+inf"
    NAN_INPUT = "NaN input"
    ALL_ZERO = "all-zero dot-add: +0 + sum(+0 * +0)"
    TF32_LOW_BIT = "tf32 1.0 with a low bit set"
    TF32_LOW_NAN = "tf32 NaN with payload only in the low bits"


class Outcome(StrEnum):
    """What a special-value case gave, where it is one of a few words (else the value's repr, or a
    note): what the inference reads.  The values are also what the reports show."""

    KEPT = "kept"                    # a subnormal input, product or sum kept
    FLUSHED = "flushed"              # ... flushed to zero
    NEG_ZERO = "-0"
    POS_ZERO = "+0"
    OVERFLOWS = "overflows"          # an overflowing product or sum became infinity
    EXACT = "exact"                  # ... or stayed exact
    INF = "inf"                      # max + u: infinity
    MAX = "max"                      # ... or the largest finite value
    NAN = "NaN"
    IGNORED = "ignored"              # tf32's low bits
    USED = "used"
    BECOMES_INF = "becomes infinity"


_BOUNDARY = {(1, 1.0): Case.MAX_PLUS_1U, (1, 0.75): Case.MAX_PLUS_075U, (1, 0.5): Case.MAX_PLUS_05U,
             (1, 0.25): Case.MAX_PLUS_025U, (-1, 1.0): Case.MIN_MINUS_1U, (-1, 0.75): Case.MIN_MINUS_075U,
             (-1, 0.5): Case.MIN_MINUS_05U, (-1, 0.25): Case.MIN_MINUS_025U}
NAN_PATTERNS = "_nan_patterns"         # the key of the NaN results' bit patterns


def _bits_of(fmt, v):
    return exact_in(fmt, v)


def special_values(rig, p_out: int) -> dict:
    """III-F: subnormal inputs, products and sums (flushed or kept), -0, product and
    intermediate overflow with the boundary cases, NaN generation, TF32 low bits."""
    K, fa, fb, fc, fd = rig.K, rig.fa, rig.fb, rig.fc, rig.fd
    cases = {}

    def add(name, row, judge):
        cases[name] = (row, judge)

    one_a, one_b = _bits_of(fa, 1.0), _bits_of(fb, 1.0)
    # subnormal inputs
    if fc.subnormals and fc.man_bits:
        v = math.ldexp(1.0, fc.emin - 1)
        add(Case.SUBNORMAL_C, Row({}, c=v), lambda d, v=v: _kept(d, v))
    for side, fmt in (("a", fa), ("b", fb)):
        if fmt.subnormals and fmt.man_bits and one_a is not None and one_b is not None:
            v = math.ldexp(1.0, fmt.emin - 1)
            bits = _bits_of(fmt, v)
            raw = {("a", 0): bits if side == "a" else one_a, ("b", 0): bits if side == "b" else one_b}
            if rig.out_bits(v) is not None:
                add(Case.SUBNORMAL_A if side == "a" else Case.SUBNORMAL_B, Row({}, 0.0, raw), lambda d, v=v: _kept(d, v))
    # subnormal product (in the result format) from normal operands
    v = math.ldexp(1.0, fd.emin - 1)
    p = rig.prod(v)
    if p is not None and rig._is_normal(fa, p[0]) and rig._is_normal(fb, p[1]) and \
            abs(float(to_float(fa, np.array([p[0]], np.uint64))[0])) >= math.ldexp(1.0, fa.emin) and \
            abs(float(to_float(fb, np.array([p[1]], np.uint64))[0])) >= math.ldexp(1.0, fb.emin):
        add(Case.SUBNORMAL_PRODUCT, Row({0: v}), lambda d, v=v: _kept(d, v))
    # subnormal sum: 1.5 eps - eps
    e = math.ldexp(1.0, fd.emin)
    if K >= 2 and rig.has_prod(1.5 * e) and rig.has_prod(-e):
        add(Case.SUBNORMAL_SUM, Row({0: 1.5 * e, 1: -e}), lambda d, e=e: _kept(d, 0.5 * e))
    elif rig.c_ok(1.5 * e) and rig.has_prod(-e):
        add(Case.SUBNORMAL_SUM, Row({0: -e}, c=1.5 * e), lambda d, e=e: _kept(d, 0.5 * e))
    # negative zero
    zb = _bits_of(fb, -0.0)
    if zb is not None and rig.c_ok(-0.0):
        raw = {("b", k): zb for k in range(K)}
        add(Case.NEG_ZERO_SUM, Row({}, -0.0, raw), lambda d: _zero_sign(d))
    if rig.c_ok(0.0) and rig.has_prod(0.0):
        add(Case.ALL_ZERO, Row({}, 0.0), lambda d: _zero_sign(d))
    tiny = _tiny_negative_product(rig, fd.emin - fd.man_bits - 2)
    if tiny is not None:
        add(Case.TINY_NEGATIVE, Row({}, 0.0, {("a", K - 1): tiny[0], ("b", K - 1): tiny[1]}),
            lambda d: _zero_sign(d))
    if K >= 2 and rig.has_prod(1.0) and rig.has_prod(-1.0):
        add(Case.CANCELLATION, Row({0: 1.0, 1: -1.0}), lambda d: _zero_sign(d))
    # overflow
    E = fd.emax
    big = math.ldexp(1.0, E + 1) if E < 1023 else math.inf
    if math.isfinite(big) and rig.has_prod(big) and rig.c_ok(-math.ldexp(1.0, E)):
        add(Case.PRODUCT_OVERFLOW, Row({0: big}, c=-math.ldexp(1.0, E)),
            lambda d, E=E: Outcome.OVERFLOWS if d is not None and math.isinf(d) else
            (Outcome.EXACT if d == math.ldexp(1.0, E) else _fmt(d)))
    top = math.ldexp(1.0, E)
    if K >= 2 and rig.has_prod(top) and rig.c_ok(-top) and rig.c_ok(top) and rig.has_prod(-top):
        add(Case.INTERMEDIATE_OVERFLOW, Row({0: top, 1: top}, c=-top),
            lambda d, top=top: Outcome.OVERFLOWS if d is not None and math.isinf(d) else
            (Outcome.EXACT if d == top else _fmt(d)))
        add(Case.INTERMEDIATE_OVERFLOW_C_FIRST, Row({0: top, 1: -top}, c=top),
            lambda d, top=top: Outcome.OVERFLOWS if d is not None and math.isinf(d) else
            (Outcome.EXACT if d == top else _fmt(d)))
    mx = fd.max_finite
    u = math.ldexp(1.0, E - p_out)
    if rig.c_ok(mx):
        for f in (1.0, 0.75, 0.5, 0.25):
            for s in (1, -1):
                if rig.has_prod(s * f * u) and rig.c_ok(s * mx):
                    add(_BOUNDARY[(s, f)], Row({0: s * f * u}, c=s * mx),
                        lambda d: Outcome.INF if d is not None and math.isinf(d) else
                        (Outcome.MAX if d is not None and abs(d) == fd.max_finite else _fmt(d)))
    # NaN
    if fa.inf and one_b is not None:
        inf_a = _bits_of(fa, math.inf)
        zero_b = _bits_of(fb, 0.0)
        add(Case.ZERO_TIMES_INF, Row({}, 0.0, {("a", 0): inf_a, ("b", 0): zero_b}), lambda d: _nan(d))
        if K >= 2:
            add(Case.INF_MINUS_INF, Row({}, 0.0, {("a", 0): inf_a, ("b", 0): one_b,
                                                       ("a", 1): _bits_of(fa, -math.inf), ("b", 1): one_b}),
                lambda d: _nan(d))
    if fc.inf and rig.c_ok(math.inf):
        if fa.inf and one_b is not None:
            add(Case.C_INF_PRODUCT_NEG_INF, Row({}, math.inf, {("a", 0): _bits_of(fa, -math.inf), ("b", 0): one_b}),
                lambda d: _nan(d))
        add(Case.C_INF, Row({0: 1.0}, c=math.inf), lambda d: _fmt(d))
    if fa.has_nan and one_b is not None:
        add(Case.NAN_INPUT, Row({}, 0.0, {("a", 0): int(special_bits(fa, "nan")), ("b", 0): one_b}),
            lambda d: _nan(d))
    # TF32: low 13 bits
    if fa.name == "tf32" and one_b is not None:
        add(Case.TF32_LOW_BIT, Row({}, 0.0, {("a", 0): 0x3F800001, ("b", 0): one_b}),
            lambda d: Outcome.IGNORED if d == 1.0 else (Outcome.USED if d is not None else None))
        add(Case.TF32_LOW_NAN, Row({}, 0.0, {("a", 0): 0x7F800001, ("b", 0): one_b}),
            lambda d: Outcome.BECOMES_INF if d is not None and math.isinf(d) else
            (Outcome.NAN if d is not None and math.isnan(d) else _fmt(d)))
    names = list(cases)
    vals, bits = rig.run([cases[n][0] for n in names])
    out = {}
    nan_bits = set()
    for n, v, bt in zip(names, vals, bits):
        out[n] = cases[n][1](v)
        if v is not None and math.isnan(v):
            nan_bits.add(int(bt))
    out[NAN_PATTERNS] = sorted(nan_bits)
    return out


def _tiny_negative_product(rig, below: int):
    """Bits (a, b) of normal operands whose product is -2**e for the largest e < ``below`` (or None)."""
    fa, fb = rig.fa, rig.fb
    for e in range(below - 1, below - 60, -1):
        for ea in sorted(range(fa.emin, fa.emax + 1), key=lambda x: abs(x - e / 2)):
            eb = e - ea
            if fb.emin <= eb <= fb.emax:
                a = exact_in(fa, -math.ldexp(1.0, ea))
                b = exact_in(fb, math.ldexp(1.0, eb))
                if a is not None and b is not None:
                    return a, b
            break
    return None


def _fmt(d):
    if d is None:
        return None
    return repr(d)


def _kept(d, v):
    if d is None:
        return None
    if d == v:
        return Outcome.KEPT
    if d == 0:
        return Outcome.FLUSHED
    return f"other ({d!r})"


def _zero_sign(d):
    if d is None:
        return None
    if d == 0:
        return Outcome.NEG_ZERO if math.copysign(1.0, d) < 0 else Outcome.POS_ZERO
    return f"non-zero ({d!r})"


def _nan(d):
    if d is None:
        return None
    return Outcome.NAN if math.isnan(d) else _fmt(d)
