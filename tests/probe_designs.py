"""Plain-function designs for the probe's planted-fault tests (issue 20): each one a ``golden.dot_add``-
signature backend that a team's unit could be, written here from the values, not from golden's algorithms.

Inside the nine algorithms (a Params describes them): an fp32 FMA built with RTZ, a dot product that
rounds its exact sum once, another NaN encoding.  Outside: ties rounded away from zero (a sticky bit
that rounds ties up), an accumulator that wraps on overflow, subnormal results flushed.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

import golden
from golden.formats import SUBNORMAL, decode, from_float, to_float


def with_params(**changes):
    """golden with the entry's Params changed (a design one field away)."""
    def backend(ins, a, b, c, sa=None, sb=None):
        p = ins.params.with_(**changes)
        return golden.dot_add(ins.with_params(p), a, b, c, sa, sb)
    backend.name = "design " + ",".join(f"{k}={v}" for k, v in changes.items())
    return backend


def _exact_values(ins, a, b, c):
    """Per row: the exact sum as a Fraction (None for a NaN or infinite row) and its float64 value."""
    fa, fb, fc, _ = ins.formats
    va, vb, vc = to_float(fa, a), to_float(fb, b), to_float(fc, c)
    out = []
    with np.errstate(all="ignore"):
        special = (va * vb).sum(1) + vc
    for r in range(len(c)):
        if not np.isfinite(special[r]):
            out.append((None, special[r]))
            continue
        s = Fraction(float(vc[r])) + sum((Fraction(float(x)) * Fraction(float(y)) for x, y in zip(va[r], vb[r])),
                                         Fraction(0))
        out.append((s, float(s)))
    return out


def _round_ties_away_f32(x: Fraction) -> int:
    """binary32 bits of ``x`` rounded to nearest, ties away from zero (no overflow handling needed here)."""
    if x == 0:
        return 0
    neg, m = x < 0, abs(x)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    e += 1 if Fraction(2) ** e <= m / 2 else 0
    e -= 1 if Fraction(2) ** e > m else 0
    q = Fraction(2) ** (max(e, -126) - 23)
    n = m / q
    k = n.numerator // n.denominator
    k += 1 if n - k >= Fraction(1, 2) else 0
    v = float(k * q)
    return int(np.float32(-v if neg else v).view(np.uint32))


def ties_away(ins, a, b, c, sa=None, sb=None):
    """The exact sum, rounded to nearest with ties away from zero: a rounder whose sticky logic rounds
    every tie up in magnitude (binary32 results)."""
    out = np.empty(len(c), np.uint64)
    for r, (s, v) in enumerate(_exact_values(ins, a, b, c)):
        out[r] = int(from_float("f32", v)) if s is None else _round_ties_away_f32(s)
    return out


ties_away.name = "ties away from zero"


def wrapping(ins, a, b, c, sa=None, sb=None):
    """The entry, except that the sum lives in a 128-bit two's complement accumulator (units of 1) that
    wraps: a sum at or beyond 2^127 comes back negative (then truncated to binary32)."""
    d = golden.dot_add(ins, a, b, c, sa, sb).astype(np.uint64)
    for r, (s, _) in enumerate(_exact_values(ins, a, b, c)):
        if s is not None and (s >= 2 ** 127 or s < -2 ** 127):
            w = (s + 2 ** 127) % 2 ** 128 - 2 ** 127
            d[r] = int(from_float("f32", float(w), "RZ"))
    return d


wrapping.name = "wrapping accumulator"


def flushing(ins, a, b, c, sa=None, sb=None):
    """The entry, with every subnormal result flushed to +0."""
    d = golden.dot_add(ins, a, b, c, sa, sb).astype(np.uint64)
    fd = golden.get_format(ins.formats[3])
    dec = decode(fd, d)
    return np.where(dec.cls == SUBNORMAL, np.uint64(0), d)


flushing.name = "flushes subnormal results"

