"""Special values (III-F): subnormals, signed zeros, product and intermediate overflow with the
boundary cases, NaN generation, TF32's low bits."""

from __future__ import annotations

import math

import numpy as np

from golden.formats import special_bits, to_float

from ..rig import Row, exact_in


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
        add("subnormal c", Row({}, c=v), lambda d, v=v: _kept(d, v))
    for side, fmt in (("a", fa), ("b", fb)):
        if fmt.subnormals and fmt.man_bits and one_a is not None and one_b is not None:
            v = math.ldexp(1.0, fmt.emin - 1)
            bits = _bits_of(fmt, v)
            raw = {("a", 0): bits if side == "a" else one_a, ("b", 0): bits if side == "b" else one_b}
            if rig.out_bits(v) is not None:
                add(f"subnormal {side}", Row({}, 0.0, raw), lambda d, v=v: _kept(d, v))
    # subnormal product (in the result format) from normal operands
    v = math.ldexp(1.0, fd.emin - 1)
    p = rig.prod(v)
    if p is not None and rig._is_normal(fa, p[0]) and rig._is_normal(fb, p[1]) and \
            abs(float(to_float(fa, np.array([p[0]], np.uint64))[0])) >= math.ldexp(1.0, fa.emin) and \
            abs(float(to_float(fb, np.array([p[1]], np.uint64))[0])) >= math.ldexp(1.0, fb.emin):
        add("subnormal product", Row({0: v}), lambda d, v=v: _kept(d, v))
    # subnormal sum: 1.5 eps - eps
    e = math.ldexp(1.0, fd.emin)
    if K >= 2 and rig.has_prod(1.5 * e) and rig.has_prod(-e):
        add("subnormal sum", Row({0: 1.5 * e, 1: -e}), lambda d, e=e: _kept(d, 0.5 * e))
    elif rig.c_ok(1.5 * e) and rig.has_prod(-e):
        add("subnormal sum", Row({0: -e}, c=1.5 * e), lambda d, e=e: _kept(d, 0.5 * e))
    # negative zero
    zb = _bits_of(fb, -0.0)
    if zb is not None and rig.c_ok(-0.0):
        raw = {("b", k): zb for k in range(K)}
        add("-0 + sum(+0 * -0)", Row({}, -0.0, raw), lambda d: _zero_sign(d))
    tiny = _tiny_negative_product(rig, fd.emin - fd.man_bits - 2)
    if tiny is not None:
        add("-tiny product rounding to zero", Row({}, 0.0, {("a", K - 1): tiny[0], ("b", K - 1): tiny[1]}),
            lambda d: _zero_sign(d))
    if K >= 2 and rig.has_prod(1.0) and rig.has_prod(-1.0):
        add("1 - 1 (exact cancellation)", Row({0: 1.0, 1: -1.0}), lambda d: _zero_sign(d))
    # overflow
    E = fd.emax
    big = math.ldexp(1.0, E + 1) if E < 1023 else math.inf
    if math.isfinite(big) and rig.has_prod(big) and rig.c_ok(-math.ldexp(1.0, E)):
        add("product overflow: 2^(E+1) - 2^E", Row({0: big}, c=-math.ldexp(1.0, E)),
            lambda d, E=E: "overflows" if d is not None and math.isinf(d) else
            ("exact" if d == math.ldexp(1.0, E) else _fmt(d)))
    top = math.ldexp(1.0, E)
    if K >= 2 and rig.has_prod(top) and rig.c_ok(-top) and rig.c_ok(top) and rig.has_prod(-top):
        add("intermediate overflow: 2^E + 2^E - 2^E", Row({0: top, 1: top}, c=-top),
            lambda d, top=top: "overflows" if d is not None and math.isinf(d) else
            ("exact" if d == top else _fmt(d)))
        add("intermediate overflow: c=2^E first, + 2^E - 2^E", Row({0: top, 1: -top}, c=top),
            lambda d, top=top: "overflows" if d is not None and math.isinf(d) else
            ("exact" if d == top else _fmt(d)))
    mx = fd.max_finite
    u = math.ldexp(1.0, E - p_out)
    if rig.c_ok(mx):
        for f in (1.0, 0.75, 0.5, 0.25):
            for s in (1, -1):
                if rig.has_prod(s * f * u) and rig.c_ok(s * mx):
                    add(f"overflow boundary {'+' if s > 0 else '-'}(max + {f}u)", Row({0: s * f * u}, c=s * mx),
                        lambda d: "inf" if d is not None and math.isinf(d) else
                        ("max" if d is not None and abs(d) == fd.max_finite else _fmt(d)))
    # NaN
    if fa.inf and one_b is not None:
        inf_a = _bits_of(fa, math.inf)
        zero_b = _bits_of(fb, 0.0)
        add("0 * inf", Row({}, 0.0, {("a", 0): inf_a, ("b", 0): zero_b}), lambda d: _nan(d))
        if K >= 2:
            add("+inf - inf (products)", Row({}, 0.0, {("a", 0): inf_a, ("b", 0): one_b,
                                                       ("a", 1): _bits_of(fa, -math.inf), ("b", 1): one_b}),
                lambda d: _nan(d))
    if fc.inf and rig.c_ok(math.inf):
        if fa.inf and one_b is not None:
            add("c=+inf, product -inf", Row({}, math.inf, {("a", 0): _bits_of(fa, -math.inf), ("b", 0): one_b}),
                lambda d: _nan(d))
        add("c=+inf", Row({0: 1.0}, c=math.inf), lambda d: _fmt(d))
    if fa.has_nan and one_b is not None:
        add("NaN input", Row({}, 0.0, {("a", 0): int(special_bits(fa, "nan")), ("b", 0): one_b}),
            lambda d: _nan(d))
    # TF32: low 13 bits
    if fa.name == "tf32" and one_b is not None:
        add("tf32 1.0 with a low bit set", Row({}, 0.0, {("a", 0): 0x3F800001, ("b", 0): one_b}),
            lambda d: "ignored" if d == 1.0 else ("used" if d is not None else None))
        add("tf32 NaN with payload only in the low bits", Row({}, 0.0, {("a", 0): 0x7F800001, ("b", 0): one_b}),
            lambda d: "becomes infinity" if d is not None and math.isinf(d) else
            ("NaN" if d is not None and math.isnan(d) else _fmt(d)))
    names = list(cases)
    vals, bits = rig.run([cases[n][0] for n in names])
    out = {}
    nan_bits = set()
    for n, v, bt in zip(names, vals, bits):
        out[n] = cases[n][1](v)
        if v is not None and math.isnan(v):
            nan_bits.add(int(bt))
    out["_nan_patterns"] = sorted(nan_bits)
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
        return "kept"
    if d == 0:
        return "flushed"
    return f"other ({d!r})"


def _zero_sign(d):
    if d is None:
        return None
    if d == 0:
        return "-0" if math.copysign(1.0, d) < 0 else "+0"
    return f"non-zero ({d!r})"


def _nan(d):
    if d is None:
        return None
    return "NaN" if math.isnan(d) else _fmt(d)
