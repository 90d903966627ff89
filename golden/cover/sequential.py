"""The sequential algorithms' own cover points: SFMA and GPS (docs/spec.md §3).

SFMA is K IEEE fused multiply-adds in turn; its corners are in the steps: a step whose exact result
was a tie, one that overflowed, one whose result is subnormal, an exact cancellation, and an
intermediate infinity later meeting the opposite infinity or a NaN.  Ties are decided exactly: the
step's exact value ``a*b + d`` is compared with the midpoints next to its rounded result, by
error-free transformations in float64 (an exact product, TwoSum expansions) and, for the f64 rows
outside their range, by Python fractions.

GPS sums groups of G f32 products pairwise and adds each group sum to d, flushing every subnormal
result to a zero of its sign (inputs and c to +0).  Its corners are the groups (an addition
cancelling, a group sum overflowing, a flush inside the group), the accumulation (a tie, an exact
cancellation, a flush) and the flushes themselves (an input, c, a product, and a result whose sign
the flushes changed against the same sums with gradual underflow).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..formats import SUBNORMAL, decode, from_float, to_float
from .common import COMMON_POINTS
from .model import Batch, Bin, CoverPoint

__all__ = ["SFMA_COVER_POINTS", "GPS_COVER_POINTS", "fma_ties"]


# --------------------------------------------------------------------------- exact arithmetic on float64

def _two_sum(x, y):
    """``(s, e)``: ``s = RN(x + y)`` and its exact error (Knuth; exact unless something overflows)."""
    s = x + y
    bb = s - x
    return s, (x - (s - bb)) + (y - bb)


def _sums_to_zero(terms) -> np.ndarray:
    """Whether float64 arrays sum exactly to zero: Shewchuk's grow-expansion makes a non-overlapping
    expansion of the exact sum, which is zero only when every component is."""
    expansion: list = []
    for t in terms:
        q, grown = t, []
        for part in expansion:
            q, h = _two_sum(q, part)
            grown.append(h)
        expansion = [*grown, q]
    return np.logical_and.reduce([part == 0 for part in expansion])


def _exact_product(fd, a, b):
    """``a*b`` as float64 terms whose sum is exact: f32 operands multiply exactly in float64; f64
    operands by Dekker's product after Veltkamp's split (exact in the range the caller checks)."""
    if fd.name == "f32":
        return [a * b]
    split = 134217729.0 * a
    ah = split - (split - a)
    al = a - ah
    split = 134217729.0 * b
    bh = split - (split - b)
    bl = b - bh
    ph = a * b
    return [ph, ((ah * bh - ph) + ah * bl + al * bh) + al * bl]


def _safe(fd, a, b, d, targets) -> np.ndarray:
    """Rows where :func:`_exact_product` and the expansions are exact (every f32 row; f64 rows well
    inside the exponent range)."""
    if fd.name == "f32":
        return np.ones(np.shape(a), bool)
    mid = lambda x: (np.abs(x) >= 2.0 ** -450) & (np.abs(x) <= 2.0 ** 450)  # noqa: E731
    ok = ((a * b == 0) & np.isfinite(a) & np.isfinite(b)) | (mid(a) & mid(b))
    for t in (d, *targets):
        ok &= np.abs(t) <= 2.0 ** 1000
    return ok


def _equals(fd, a, b, d, hi, lo) -> np.ndarray:
    """Whether ``a*b + d == hi + lo`` exactly (float64 arrays of one shape; NaN anywhere: False)."""
    with np.errstate(all="ignore"):
        finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(d) & np.isfinite(hi) & np.isfinite(lo)
        safe = finite & _safe(fd, a, b, d, (hi, lo))
        out = np.zeros(np.shape(a), bool)
        out[safe] = _sums_to_zero([*_exact_product(fd, a[safe], b[safe]), d[safe], -hi[safe], -lo[safe]])
    for i in zip(*np.nonzero(finite & ~safe)):          # f64 rows at the range's ends: Python fractions
        out[i] = Fraction(a[i]) * Fraction(b[i]) + Fraction(d[i]) == Fraction(hi[i]) + Fraction(lo[i])
    return out


def _half_steps(fd, r):
    """``(base, up, down)``: the rounded result as a float64 (an infinity as 2^(emax+1)) and the
    half-distances to its neighbours above and below (NaN where there is none)."""
    dt = np.float32 if fd.name == "f32" else np.float64
    with np.errstate(all="ignore"):
        top = np.ldexp(1.0, fd.emax + 1)             # f64: inf, and its overflow ties are decided apart
        r = np.asarray(r, dt)
        base = np.where(np.isinf(r), np.sign(r) * top, r.astype(np.float64))
        up = np.nextafter(r, dt(np.inf)).astype(np.float64)
        down = np.nextafter(r, dt(-np.inf)).astype(np.float64)
        up = np.where(np.isinf(up) & ~np.isinf(r), top, up)
        down = np.where(np.isinf(down) & ~np.isinf(r), -top, down)
        up_half = np.where(np.isinf(r), np.nan, (up - base) / 2)
        down_half = np.where(np.isinf(r) & (r < 0), np.nan, (base - down) / 2)
        down_half = np.where(r == np.inf, (top - fd.max_finite) / 2, down_half)
        up_half = np.where(r == -np.inf, (top - fd.max_finite) / 2, up_half)
    return base, up_half, down_half


def fma_ties(fd, a, b, d, r) -> np.ndarray:
    """Whether each ``fma(a, b, d)`` (float64 values of ``fd``, f32 or f64) rounded to ``r`` was a tie:
    its exact value lies halfway between ``r`` and a neighbour (the overflow threshold counting as
    the neighbour above the largest finite value)."""
    base, up, down = _half_steps(fd, r)
    ties = _equals(fd, a, b, d, base, up) | _equals(fd, a, b, d, base, -down)
    if fd.name == "f64":         # 2^1024 is no float64: an f64 overflow's tie (the midpoint max..2^1024) exactly
        r = np.asarray(r, np.float64)
        with np.errstate(all="ignore"):
            rows = np.isinf(r) & np.isfinite(a) & np.isfinite(b) & np.isfinite(d)
        midpoint = (Fraction(fd.max_finite) + 2 ** 1024) / 2
        for i in zip(*np.nonzero(rows)):
            ties[i] = abs(Fraction(a[i]) * Fraction(b[i]) + Fraction(d[i])) == midpoint
    return ties


# --------------------------------------------------------------------------- SFMA

def _values(fd, bits) -> np.ndarray:
    bits = np.asarray(bits)
    if fd.name == "f32":
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    return bits.astype(np.uint64).view(np.float64)


def _sfma_steps(batch: Batch):
    """``(a, b, before, after)`` ``[R, K]`` float64: each step's operands, d before and d after."""
    fd = batch.instruction.formats[3]
    after = _values(fd, batch.passes[0]["steps.d_k"])
    a, b, c = _values(fd, batch.a), _values(fd, batch.b), _values(fd, batch.c)
    before = np.concatenate([c[:, None], after[:, :-1]], 1)
    return a, b, before, after


def _sfma_hits(batch: Batch) -> dict:
    fd = batch.instruction.formats[3]
    a, b, before, after = _sfma_steps(batch)
    with np.errstate(all="ignore"):
        finite_in = np.isfinite(a) & np.isfinite(b) & np.isfinite(before)
        nonzero_product = (a != 0) & (b != 0)
        product_inf = (np.isinf(a) | np.isinf(b)) & nonzero_product & ~np.isnan(a) & ~np.isnan(b)
        product_sign = np.signbit(a) ^ np.signbit(b)
    earlier_inf = np.isinf(before)
    earlier_inf[:, 0] = False                        # c is an input, not a step's result
    return {
        "tie": fma_ties(fd, a, b, before, after).any(1),
        "overflow": (finite_in & np.isinf(after)).any(1),
        "subnormal": ((after != 0) & (np.abs(after) < 2.0 ** fd.emin)).any(1),
        "cancelled": (finite_in & nonzero_product & (before != 0) & (after == 0)
                      & _equals(fd, a, b, before, np.zeros_like(a), np.zeros_like(a))).any(1),
        "inf_then_opposite_inf": (earlier_inf & product_inf & (product_sign != np.signbit(before))).any(1),
        "inf_then_nan": (earlier_inf & (np.isnan(a) | np.isnan(b))).any(1),
    }


def _sfma_unreachable(ins) -> dict:
    if ins.k > 1:
        return {}
    why = "K=1: no step follows the only one"
    return {"inf_then_opposite_inf": why, "inf_then_nan": why}


def _sig(rng, fd, n) -> np.ndarray:
    """Random significands in [1, 2) of the format's precision."""
    bits = min(fd.man_bits, 50)
    return 1.0 + rng.integers(0, 1 << bits, n) * 2.0 ** -bits


def _sfma_directed(ins, name: str, rng, n: int):
    """A step built for the bin at a random position (the products before it zero, so d is c there)."""
    fd, K = ins.formats[3], ins.k
    rows = np.arange(n)
    a = from_float(fd, rng.standard_normal((n, K))).view(fd.numpy_dtype).astype(np.float64)
    b = from_float(fd, rng.standard_normal((n, K))).view(fd.numpy_dtype).astype(np.float64)
    c = _sig(rng, fd, n) * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    late = name.startswith("inf_then")
    if late and K < 2:
        return None
    j = rng.integers(1, K, n) if late else rng.integers(0, K, n)
    i = (rng.random(n) * j).astype(int) if late else j         # the step that overflows (or the one step)
    a[rows[:, None], np.arange(K)[None, :]] = np.where(np.arange(K)[None, :] < i[:, None], 0.0, a)
    if name == "tie":                                 # |c| plus half its ulp: always a midpoint
        e, t = rng.integers(-10, 10, n), rng.integers(-5, 5, n)
        c = np.ldexp(c, e)
        a[rows, i] = np.sign(c) * np.ldexp(1.0, e - fd.man_bits - 1 - t)
        b[rows, i] = np.ldexp(1.0, t)
    elif name == "subnormal":
        c[:] = 0.0
        a[rows, i] = np.ldexp(_sig(rng, fd, n), fd.emin + 2)
        b[rows, i] = np.ldexp(_sig(rng, fd, n), -10)
    elif name == "cancelled":
        t = rng.integers(0, 4, n)
        a[rows, i], b[rows, i] = -np.ldexp(c, -t), np.ldexp(1.0, t)
    else:                                              # overflow at step i (and, later, the bin's operand)
        sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        a[rows, i] = sign * np.ldexp(_sig(rng, fd, n), fd.emax)
        b[rows, i] = 2.0 * _sig(rng, fd, n)
        if name == "inf_then_opposite_inf":
            a[rows, j], b[rows, j] = -sign * np.inf, np.abs(b[rows, j]) + 1.0
        elif name == "inf_then_nan":
            a[rows, j] = np.nan
    return (from_float(fd, a).astype(np.uint64), from_float(fd, b).astype(np.uint64),
            from_float(fd, c).astype(np.uint64), None, None)


SFMA_STEPS = CoverPoint(
    "steps",
    (Bin("tie", "a step's exact result a_k*b_k + d was halfway between two representable values"),
     Bin("overflow", "a step overflowed to infinity from finite operands and d"),
     Bin("subnormal", "a step's result is subnormal"),
     Bin("cancelled", "a step's exact result is zero from a non-zero product and a non-zero d"),
     Bin("inf_then_opposite_inf", "a step's infinite result meets the opposite infinity in a later step "
                                  "(an infinite product: NaN)"),
     Bin("inf_then_nan", "a step's infinite result meets a NaN operand in a later step")),
    _sfma_hits, _sfma_unreachable, "the K sequential fused multiply-adds, step by step", _sfma_directed)

SFMA_COVER_POINTS = (SFMA_STEPS, *COMMON_POINTS)


# --------------------------------------------------------------------------- GPS

_TINY32 = np.float32(2.0 ** -126)


def _subnormal32(x) -> np.ndarray:
    return (x != 0) & (np.abs(x) < _TINY32)


def _flush32(x) -> np.ndarray:
    return np.where(_subnormal32(x), np.copysign(np.float32(0), x), x).astype(np.float32)


def _pairwise(p, flush: bool):
    """GPS's pairwise sum of ``p [R, G]`` (halves first), flushing each addition with ``flush``;
    returns the sum and, per row, whether an addition flushed or cancelled (non-zero operands, zero sum)."""
    if p.shape[1] == 1:
        return p[:, 0], np.zeros(p.shape[0], bool), np.zeros(p.shape[0], bool)
    h = p.shape[1] // 2
    x, fx, cx = _pairwise(p[:, :h], flush)
    y, fy, cy = _pairwise(p[:, h:], flush)
    raw = x + y
    cancelled = (raw == 0) & ((x != 0) | (y != 0))
    return (_flush32(raw) if flush else raw), fx | fy | _subnormal32(raw), cx | cy | cancelled


def _f32_add_ties(d, gamma) -> np.ndarray:
    """Whether each f32 ``d + gamma`` (RNE) was a tie: the exact sum (exact in float64) halfway
    between the rounded sum and its neighbour towards the exact sum."""
    with np.errstate(all="ignore"):
        x = d.astype(np.float64) + gamma.astype(np.float64)
        r = x.astype(np.float32)
        toward = np.nextafter(r, np.where(x > r, np.float32(np.inf), np.float32(-np.inf))).astype(np.float64)
        top = 2.0 ** 128
        r64 = np.where(np.isinf(r), np.sign(r) * top, r.astype(np.float64))
        toward = np.where(np.isinf(toward) & ~np.isinf(r), np.sign(toward) * top, toward)
        toward = np.where(np.isinf(r), np.sign(r) * np.float64(np.finfo(np.float32).max), toward)
        return np.isfinite(x) & (x != r64) & (2 * x == r64 + toward)


def _gps_c(batch: Batch, flush: bool) -> np.ndarray:
    fc = batch.instruction.formats[2]
    c = to_float(fc, batch.c).astype(np.float32)
    return np.where((c == 0) | _subnormal32(c), np.float32(0), c).astype(np.float32) if flush else c


def _gps_unflushed(batch: Batch) -> np.ndarray:
    """The same sums in the same order with gradual underflow (no flush anywhere): d ``[R]`` f32."""
    ins = batch.instruction
    fa, fb = ins.formats[:2]
    with np.errstate(all="ignore"):
        p = to_float(fa, batch.a).astype(np.float32) * to_float(fb, batch.b).astype(np.float32)
        d = _gps_c(batch, flush=False)
        g = ins.params.group
        for j in range(0, ins.k, g):
            d = d + _pairwise(p[:, j:j + g], flush=False)[0]
    return d


def _gps_hits(batch: Batch) -> dict:
    ins = batch.instruction
    v = batch.passes[0]
    g = ins.params.group
    av, bv, p = v["inputs.a"], v["inputs.b"], v["products.p"]
    out = {name: batch.none() for name in ("group_cancelled", "group_overflow", "group_flushed",
                                           "tie", "accumulate_cancelled", "accumulate_flushed")}
    d = _gps_c(batch, flush=True)
    kept = d.copy()                 # the same accumulation with the pairwise additions left unflushed
    with np.errstate(all="ignore"):
        for j in range(0, ins.k, g):
            kept = _flush32(kept + _pairwise(p[:, j:j + g], flush=False)[0])
            gamma, flushed, cancelled = _pairwise(p[:, j:j + g], flush=True)
            out["group_cancelled"] |= cancelled
            out["group_flushed"] |= flushed
            out["group_overflow"] |= np.isinf(gamma) & np.isfinite(p[:, j:j + g]).all(1)
            raw = d + gamma
            out["tie"] |= _f32_add_ties(d, gamma)
            out["accumulate_cancelled"] |= (raw == 0) & (d != 0)
            out["accumulate_flushed"] |= _subnormal32(raw)
            d = _flush32(raw)
        out["group_flush_changed"] = out["group_flushed"] & ~(np.isnan(d) & np.isnan(kept)) & \
            (d.view(np.uint32) != kept.view(np.uint32))
        fa, fb = ins.formats[:2]
        a_in, b_in = decode(fa, batch.a), decode(fb, batch.b)
        live_a = np.isfinite(bv) & (bv != 0)
        live_b = np.isfinite(av) & (av != 0)
        out["input"] = ((a_in.cls == SUBNORMAL) & live_a).any(1) | ((b_in.cls == SUBNORMAL) & live_b).any(1)
        out["c"] = decode(ins.formats[2], batch.c).cls == SUBNORMAL
        out["product"] = _subnormal32(av * bv).any(1)
        ref, got = _gps_unflushed(batch), _values(ins.formats[3], batch.d)
        out["sign"] = (~np.isnan(ref) & ~np.isnan(got) & (np.signbit(ref) != np.signbit(got))
                       & ((ref != 0) | (got != 0)))
    return out


def _pick(names: dict):
    """A point's hits from :func:`_gps_hits`: ``{bin: key}``."""
    def hits(batch: Batch) -> dict:
        got = _gps_hits(batch)
        return {b: got[k] for b, k in names.items()}
    return hits


def _unreachable_as(names: dict):
    """A point's unreachable bins from :func:`_gps_unreachable`: ``{bin: key}``."""
    def unreachable(ins) -> dict:
        why = _gps_unreachable(ins)
        return {b: why[k] for b, k in names.items() if k in why}
    return unreachable


def _product_quantum(ins) -> float:
    """Every product of normal inputs (subnormal ones are flushed) is a multiple of this power of two."""
    fa, fb = ins.formats[:2]
    return float(np.ldexp(1.0, (fa.emin - fa.man_bits) + (fb.emin - fb.man_bits)))


def _gps_unreachable(ins) -> dict:
    fa, fb = ins.formats[:2]
    g, q, tiny = ins.params.group, _product_quantum(ins), 2.0 ** -126
    out = {}
    if g == 1:
        for name in ("group_cancelled", "group_overflow", "group_flushed"):
            out[name] = "G=1: a group is one product, with no addition"
    elif g * fa.max_finite * fb.max_finite < 2.0 ** 128 - 2.0 ** 103:
        out["group_overflow"] = f"G={g} products of {fa.name} and {fb.name} sum below f32's overflow threshold"
    if q >= tiny and g > 1:
        out["group_flushed"] = (f"products of {fa.name} and {fb.name} are multiples of 2^{int(np.log2(q))}: "
                                "a non-zero sum of them is never subnormal")
    if q * 2.0 ** -24 >= tiny:
        out["accumulate_flushed"] = (f"group sums are multiples of 2^{int(np.log2(q))}: d + a non-zero group sum "
                                     "is a multiple of 2^-24 of that, never subnormal")
    if np.ldexp(1.0, fa.emin + fb.emin) >= tiny:
        out["product"] = f"the smallest product of normal {fa.name} and {fb.name} values is an f32 normal"
    return out


def _gps_values(ins, rng, n):
    """Random normal-range operand values ``a, b [n, K]`` exact in their formats, and c ``[n]`` (f32)."""
    fa, fb, fc = ins.formats[:3]
    a = to_float(fa, from_float(fa, rng.standard_normal((n, ins.k))))
    b = to_float(fb, from_float(fb, rng.standard_normal((n, ins.k))))
    c = to_float(fc, from_float(fc, rng.standard_normal(n)))
    return a, b, c


def _gps_bits(ins, a, b, c) -> tuple:
    fa, fb, fc = ins.formats[:3]
    return (from_float(fa, a).astype(np.uint64), from_float(fb, b).astype(np.uint64),
            from_float(fc, c).astype(np.uint64), None, None)


def _subnormal_of(fmt, rng, n) -> np.ndarray:
    """Random non-zero subnormal values of ``fmt``, random signs."""
    m = rng.integers(1, 1 << fmt.man_bits, n)
    return np.ldexp(m.astype(np.float64), fmt.emin - fmt.man_bits) * np.where(rng.random(n) < 0.5, -1.0, 1.0)


def _gps_group_directed(ins, name: str, rng, n: int):
    """A group ``j`` (random) built for the bin: its first two products (the first pairwise addition)
    cancelling, overflowing or leaving a subnormal; the group's other products zero."""
    fa = ins.formats[0]
    g = ins.params.group
    a, b, c = _gps_values(ins, rng, n)
    rows, first = np.arange(n), rng.integers(0, ins.k // g, n) * g
    for k in range(g):
        a[rows, first + k] = 0.0
    b[rows, first] = b[rows, first + 1] = np.ldexp(1.0, rng.integers(-3, 3, n))
    if name == "group_cancelled":
        a[rows, first] = a[rows, first + 1] = np.ldexp(_gps_sig(fa, rng, n), rng.integers(-5, 5, n))
        a[rows, first + 1] *= -1.0
    elif name == "group_overflow":
        a[rows, first] = a[rows, first + 1] = np.ldexp(1.5, 63)
        b[rows, first] = b[rows, first + 1] = np.ldexp(1.5, 63)
    else:                                              # two products 2^-127 apart, above 2^-126
        a[rows, first], a[rows, first + 1] = np.ldexp(1.5, -60), -np.ldexp(1.5 - 2.0 ** -7, -60)
        b[rows, first] = b[rows, first + 1] = np.ldexp(1.0, -60)
        if name == "group_flush_changed":              # alone beside c = 2^-126: c + 2^-127 is an f32 normal
            keep = np.zeros((n, ins.k), bool)
            keep[rows, first], keep[rows, first + 1] = True, True
            a[~keep] = 0.0
            c[:] = np.ldexp(1.0, -126)
    return _gps_bits(ins, a, b, c)


def _gps_sig(fmt, rng, n) -> np.ndarray:
    return 1.0 + rng.integers(0, 1 << fmt.man_bits, n) * 2.0 ** -fmt.man_bits


def _gps_accumulate_directed(ins, name: str, rng, n: int):
    """c, then a group ``j`` whose sum is one product and every group before it zero, so d is c there:
    half c's ulp (a tie), -c (a cancellation), or -(c - 2^-127) (a flush)."""
    fa, fb = ins.formats[:2]
    g = ins.params.group
    a, b, c = _gps_values(ins, rng, n)
    rows, group = np.arange(n), rng.integers(0, ins.k // g, n)
    a[np.arange(ins.k)[None, :] < (group[:, None] + 1) * g] = 0.0
    k = group * g + rng.integers(0, g, n)
    if name == "tie":
        e = rng.integers(-4, 20, n)
        c = np.ldexp(_gps_sig(fa, rng, n) + rng.integers(0, 1 << 12, n) * 2.0 ** -23, e)
        c *= np.where(rng.random(n) < 0.5, -1.0, 1.0)
        half = e - 24
        a[rows, k], b[rows, k] = np.sign(c) * np.ldexp(1.0, half - half // 2), np.ldexp(1.0, half // 2)
    elif name == "accumulate_cancelled":
        t = rng.integers(-3, 3, n)
        c = np.ldexp(_gps_sig(fa, rng, n), rng.integers(-5, 5, n))
        a[rows, k], b[rows, k] = -np.ldexp(c, -t), np.ldexp(1.0, t)
    else:
        c = np.full(n, np.ldexp(1.5, -120))
        a[rows, k], b[rows, k] = -np.ldexp(1.5 - 2.0 ** -7, -60), np.ldexp(1.0, -60)
    del fb
    return _gps_bits(ins, a, b, c)


def _gps_flush_directed(ins, name: str, rng, n: int):
    """A subnormal input (or c); two tiny normal inputs whose product is subnormal in f32; or, for the
    sign, c = 0, a subnormal a_k times a large b_k (flushed to +0) against a small positive product."""
    fa, fb, fc = ins.formats[:3]
    a, b, c = _gps_values(ins, rng, n)
    rows = np.arange(n)
    k = rng.integers(0, ins.k, n)
    if name == "input":
        a[rows, k] = _subnormal_of(fa, rng, n)
    elif name == "c":
        c = _subnormal_of(fc, rng, n)
    elif name == "product":
        a[rows, k], b[rows, k] = np.ldexp(_gps_sig(fa, rng, n), -65), np.ldexp(_gps_sig(fb, rng, n), -65)
    else:
        a[:], c[:] = 0.0, 0.0
        other = (k + 1 + rng.integers(0, max(ins.k - 1, 1), n)) % ins.k
        a[rows, k] = -np.abs(_subnormal_of(fa, rng, n))
        b[rows, k] = np.ldexp(1.0, min(fb.emax, -4 - (fa.emin - fa.man_bits)))
        if ins.k > 1:
            a[rows, other] = b[rows, other] = 2.0 ** -14
    return _gps_bits(ins, a, b, c)


GPS_GROUP = CoverPoint(
    "group",
    (Bin("cancelled", "an addition in a group's pairwise sum cancelled exactly (non-zero operands)"),
     Bin("overflow", "a group's pairwise sum of finite products overflowed f32"),
     Bin("flushed", "an addition in a group's pairwise sum was subnormal, flushed to zero"),
     Bin("flush_changed", "a flushed pairwise addition changed the result (the same accumulation with the "
                          "pairwise additions unflushed gives other bits)")),
    _pick({"cancelled": "group_cancelled", "overflow": "group_overflow", "flushed": "group_flushed",
           "flush_changed": "group_flush_changed"}),
    _unreachable_as({"cancelled": "group_cancelled", "overflow": "group_overflow", "flushed": "group_flushed",
                     "flush_changed": "group_flushed"}),
    "each group's pairwise sum of G products",
    lambda ins, name, rng, n: _gps_group_directed(ins, f"group_{name}", rng, n))

GPS_ACCUMULATE = CoverPoint(
    "accumulate",
    (Bin("tie", "adding a group sum to d rounded a tie"),
     Bin("cancelled", "a group sum cancelled a non-zero d exactly"),
     Bin("flushed", "d + a group sum was subnormal, flushed to zero")),
    _pick({"tie": "tie", "cancelled": "accumulate_cancelled", "flushed": "accumulate_flushed"}),
    _unreachable_as({"flushed": "accumulate_flushed"}),
    "the accumulation d = d + group sum, group by group",
    lambda ins, name, rng, n: _gps_accumulate_directed(ins, name if name == "tie" else f"accumulate_{name}",
                                                       rng, n))

GPS_FLUSH = CoverPoint(
    "flush",
    (Bin("input", "a subnormal a or b operand (its partner non-zero) read as +0"),
     Bin("c", "a subnormal c read as +0"),
     Bin("product", "a product of non-zero inputs was subnormal in f32, flushed to zero"),
     Bin("sign", "the flushes changed the result's sign: the same sums with gradual underflow have the "
                 "other sign")),
    _pick({"input": "input", "c": "c", "product": "product", "sign": "sign"}),
    _unreachable_as({"product": "product"}),
    "subnormal flushing of the inputs and products", _gps_flush_directed)

GPS_COVER_POINTS = (GPS_GROUP, GPS_ACCUMULATE, GPS_FLUSH, *COMMON_POINTS)
