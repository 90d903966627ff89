"""Cover points of the chained forms (``pass_size < K``): each intermediate pass's rounding.

A chain of passes rounds every pass's result to the output format and feeds it to the next pass as
c, so each intermediate result is a rounding of its own: what it rounded to (:data:`INTERMEDIATE`:
zero, subnormal, normal, an overflow, an infinity, NaN) and how (:data:`INTERMEDIATE_ROUNDING`:
exact, inexact, exactly half-way).  "Intermediate" means every pass but the last, and the last one
too where a compiled path adds c after the chain (``Params.c_last``: the chain's result is rounded,
then added).  An unchained instruction has no intermediate rounding: every bin is unreachable.

The value a pass rounds is read from its trace: FDA's fixed-point sum, GDFS's aligned sum, the
FDRDA/GFDRDA normalised and floored sum; FDA with ``F="exact"`` traces no exact value, so it is summed
here (``math.fsum`` of the pass's products and c, exact where it matters).

The operand builders (:func:`build`, :func:`pass_columns`, :func:`value_range`) are shared with
golden.cover.amd: they place chosen products (as exact ``a * b`` pairs) and a chosen c into a pass.
"""

from __future__ import annotations

import math

import numpy as np

from ..datapath import pass_order
from ..descriptors import ALGORITHMS
from ..disputed import products_overflow
from ..formats import from_float, get_format, to_float
from .model import Batch, Bin, CoverPoint

__all__ = ["CHAIN_POINTS", "INTERMEDIATE", "INTERMEDIATE_ROUNDING", "ONE_PASS", "build", "pass_columns",
           "pass_count", "pass_c_values", "is_chained", "value_range", "product_range"]

ONE_PASS = "one pass: no intermediate rounding"


# --------------------------------------------------------------------------- the chain's shape

def pass_count(ins) -> int:
    """How many passes ``ins`` runs (1 when unchained)."""
    L = ins.params.pass_size
    if not L or not ALGORITHMS[ins.params.base].chained or L >= ins.k:
        return 1
    return ins.k // L


def is_chained(ins) -> bool:
    return pass_count(ins) > 1


def _intermediate_count(ins) -> int:
    """Passes whose rounded result is used again: all but the last, and the last too with ``c_last``."""
    return pass_count(ins) - 1 + bool(ins.params.c_last)


def pass_columns(ins, j: int) -> np.ndarray:
    """The columns of a and b that pass ``j`` multiplies (in the pass's order)."""
    n = pass_count(ins)
    L = ins.k // n
    order = np.arange(ins.k)
    if n > 1 and ins.params.pass_interleave is not None:
        order = pass_order(ins.k, L, ins.params.pass_interleave)
    return order[j * L:(j + 1) * L]


def pass_c_values(batch: Batch) -> list:
    """The c each pass added, float64 ``[R]``: the operand c for the first (+0 with ``c_last``), the
    previous pass's rounded result after that."""
    ins = batch.instruction
    fc, fd = get_format(ins.formats[2]), get_format(ins.formats[3])
    first = np.zeros(batch.rows) if ins.params.c_last else to_float(fc, batch.c.astype(np.uint64))
    out = [np.asarray(first, np.float64)]
    for v in batch.passes[:-1]:
        out.append(np.asarray(to_float(fd, np.asarray(v["rounded.d"]).astype(np.uint64)), np.float64))
    return out


# --------------------------------------------------------------------------- the value each pass rounds

def _pass_products(batch: Batch, j: int) -> np.ndarray:
    """Pass ``j``'s exact products ``[R, L]``: the trace's, or from the operands (F exact traces none)."""
    v = batch.passes[j]
    if "products.value" in v:
        return np.asarray(v["products.value"], np.float64)
    ins = batch.instruction
    cols = pass_columns(ins, j)
    fa, fb = (get_format(f) for f in ins.formats[:2])
    with np.errstate(all="ignore"):
        return to_float(fa, batch.a[:, cols].astype(np.uint64)) * to_float(fb, batch.b[:, cols].astype(np.uint64))


def _fsum_rows(terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of finite ``terms [R, n]``: the correctly rounded sum, and whether it is exact."""
    total = np.array([math.fsum(r) for r in terms.tolist()])
    exact = np.array([math.fsum([*r, -s]) == 0.0 for r, s in zip(terms.tolist(), total.tolist())], bool)
    return total, exact


def _rounded_value(batch: Batch, j: int, c: np.ndarray, finite: np.ndarray):
    """``(V, exact)``: the value pass ``j`` rounds (float64 ``[R]``, NaN where its inputs are not all
    finite) and whether V is that value exactly (F exact: a sum wider than float64 is not)."""
    v, p = batch.passes[j], batch.instruction.params
    V = np.full(batch.rows, np.nan)
    exact = np.ones(batch.rows, bool)
    if "normalised.significand" in v:            # FDRDA / GFDRDA: the floored sum, then RNE
        got = np.ldexp(v["normalised.significand"], (np.asarray(v["normalised.exponent"]) -
                                                      p.final_floor_bits).astype(np.int32))
    elif "sum.value" in v:                       # FDA: the fixed-point sum
        got = np.asarray(v["sum.value"], np.float64)
    elif "scaled.term" in v:                     # GDFS: the aligned sum in units of 2^(e_max - F)
        got = np.ldexp(v["aligned.sum"], (np.asarray(v["max_exponent.e_max"]) - p.F).astype(np.int32))
    else:                                        # FDA with F exact: sum the products and c here
        rows = np.flatnonzero(finite)
        got = np.full(batch.rows, np.nan)
        if rows.size:
            terms = np.concatenate([_pass_products(batch, j)[rows], c[rows, None]], 1)
            got[rows], exact[rows] = _fsum_rows(terms)
    with np.errstate(invalid="ignore"):
        V = np.where(finite, got, V)
    return V, exact


def _finite_inputs(batch: Batch, j: int, c: np.ndarray) -> np.ndarray:
    """Rows whose pass ``j`` has only finite terms (products, scaled terms and c)."""
    v = batch.passes[j]
    ok = np.isfinite(c) & np.isfinite(_pass_products(batch, j)).all(1)
    if "scaled.term" in v:
        ok &= np.isfinite(v["scaled.term"]).all(1)
    return ok


def _frac_bits(ins) -> int:
    """Fraction bits the passes round to (the output format's, or ``out_frac_bits``)."""
    fd = get_format(ins.formats[3])
    return fd.man_bits if ins.params.out_frac_bits is None else int(ins.params.out_frac_bits)


def _is_tie(V: np.ndarray, fd, frac: int) -> np.ndarray:
    """``V`` lies exactly half-way between two neighbours ``frac`` fraction bits apart (subnormals:
    below ``2^emin`` the last place stays ``2^(emin - frac)``)."""
    with np.errstate(all="ignore"):
        _, e = np.frexp(np.where(np.isfinite(V), V, 0.0))
        lsb = np.maximum(e - 1, fd.emin) - frac
        half = np.ldexp(V, (1 - lsb).astype(np.int32))       # V in units of half the last place
        return np.isfinite(V) & (V != 0) & (np.mod(half, 2.0) == 1.0)


def _intermediates(batch: Batch):
    """``(d values, V, V exact, finite inputs)`` of every intermediate pass."""
    ins = batch.instruction
    fd = get_format(ins.formats[3])
    cs = pass_c_values(batch)
    for j in range(min(_intermediate_count(ins), len(batch.passes))):
        finite = _finite_inputs(batch, j, cs[j])
        V, exact = _rounded_value(batch, j, cs[j], finite)
        x = np.asarray(to_float(fd, np.asarray(batch.passes[j]["rounded.d"]).astype(np.uint64)), np.float64)
        yield x, V, exact, finite


# --------------------------------------------------------------------------- the points' hits

def _class_hits(batch: Batch) -> dict:
    fd = get_format(batch.instruction.d_format)
    out = {b.name: batch.none() for b in INTERMEDIATE_BINS}
    for x, V, _, finite in _intermediates(batch):
        with np.errstate(invalid="ignore"):
            over = finite & np.isfinite(V) & (np.isinf(x) | (np.abs(V) >= 2.0 ** (fd.emax + 1)))
            fin = np.isfinite(x)
            out["overflow"] |= over
            out["infinite"] |= np.isinf(x) & ~over
            out["nan"] |= np.isnan(x)
            out["zero"] |= fin & (x == 0)
            out["subnormal"] |= fin & (x != 0) & (np.abs(x) < 2.0 ** fd.emin)
            out["normal"] |= fin & ~over & (np.abs(x) >= 2.0 ** fd.emin)
    return out


def _rounding_hits(batch: Batch) -> dict:
    ins = batch.instruction
    fd, frac = get_format(ins.d_format), _frac_bits(ins)
    out = {b.name: batch.none() for b in ROUNDING_BINS}
    for x, V, exact, finite in _intermediates(batch):
        ok = finite & np.isfinite(V)
        same = ok & exact & (V == x)
        out["exact"] |= same
        out["inexact"] |= ok & ~same
        out["tie"] |= ok & exact & _is_tie(V, fd, frac)
    return out


# --------------------------------------------------------------------------- reachability

def product_range(ins) -> tuple[int, int]:
    """``(lowest, highest)`` power of two a non-zero finite product of ``ins`` reaches (value exponent:
    the lowest is the product of the smallest subnormals, the highest that of the largest values)."""
    fa, fb = (get_format(f) for f in ins.formats[:2])
    low = (fa.emin - fa.man_bits) + (fb.emin - fb.man_bits)
    high = int(math.floor(math.log2(fa.max_finite * fb.max_finite)))
    if ins.scale_format:
        fs = get_format(ins.scale_format)
        low, high = low + 2 * (fs.emin - fs.man_bits), high + 2 * int(math.floor(math.log2(fs.max_finite)))
    return low, high


def value_range(fmt) -> tuple[int, int]:
    """``(lowest, highest)`` exponent of a non-zero finite value of ``fmt`` (its least subnormal, its top)."""
    fmt = get_format(fmt)
    return fmt.emin - (fmt.man_bits if fmt.subnormals else 0), fmt.emax


def _products_overflow(ins) -> bool:
    """Whether the algorithm turns products at or above 2^128 into infinities (FDRDA, GFDRDA)."""
    fa, fb = (get_format(f) for f in ins.formats[:2])
    return bool(getattr(ins.params, "product_overflow", False)) and products_overflow(fa, fb)


def _can_overflow(ins) -> bool:
    """Whether c and one pass's finite products can sum past the output format's overflow threshold."""
    fc, fd = get_format(ins.formats[2]), get_format(ins.formats[3])
    L = ins.k // pass_count(ins)
    top = min(2.0 ** product_range(ins)[1] * 2, 2.0 ** 128) if _products_overflow(ins) else \
        2.0 ** (product_range(ins)[1] + 1)
    c = 0.0 if ins.params.c_last else fc.max_finite
    if _intermediate_count(ins) > 1:
        c = max(c, fd.max_finite)
    from ..rules import Rounding
    nearest = ins.params.base in ("FDRDA", "GFDRDA") or ins.params.out_rounding == Rounding.RNE
    threshold = fd.max_finite + 2.0 ** (fd.emax - _frac_bits(ins) - 1) if nearest else 2.0 ** (fd.emax + 1)
    return c + L * top >= threshold


def _any_special(ins, kind: str) -> bool:
    fa, fb, fc = (get_format(f) for f in ins.formats[:3])
    ops = [fa, fb] + ([] if ins.params.c_last else [fc])
    if kind == "inf":
        return any(f.inf for f in ops) or _products_overflow(ins)
    return any(f.has_nan for f in ops) or any(f.inf for f in ops) or _products_overflow(ins)


def _class_unreachable(ins) -> dict:
    if not is_chained(ins):
        return {b.name: ONE_PASS for b in INTERMEDIATE_BINS}
    fc, fd = get_format(ins.formats[2]), get_format(ins.formats[3])
    out = {}
    low = product_range(ins)[0]
    if not ins.params.c_last:                                    # c enters the first pass
        low = min(low, value_range(fc)[0])
    if not fd.subnormals:
        out["subnormal"] = f"the output format {fd.name} has no subnormals"
    elif low >= fd.emin:
        out["subnormal"] = (f"no pass sum reaches below 2^{fd.emin}: the terms' least bit is 2^{low}")
    overflow = _can_overflow(ins)
    if not overflow:
        out["overflow"] = f"one pass's finite terms never sum past the largest {fd.name}"
    again = overflow and _intermediate_count(ins) > 1          # an overflowed pass is the next one's c
    if not fd.inf:
        out["infinite"] = f"the output format {fd.name} has no infinities"
    elif not (_any_special(ins, "inf") or again):
        out["infinite"] = "no operand, c or product of a pass can be infinite"
    if not fd.has_nan:
        out["nan"] = f"the output format {fd.name} has no NaN"
    elif not (_any_special(ins, "nan") or again):
        out["nan"] = "no operand, c or product of a pass can be NaN or infinite"
    return out


def _rounding_unreachable(ins) -> dict:
    if not is_chained(ins):
        return {b.name: ONE_PASS for b in ROUNDING_BINS}
    return {}


# --------------------------------------------------------------------------- operand builders

def _exact(fmt, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(bits, ok)``: ``values`` as bit patterns of ``fmt``, ``ok`` where that is exact (NaN: a NaN)."""
    values = np.asarray(values, np.float64)
    with np.errstate(all="ignore"):
        bits = np.asarray(from_float(fmt, values), np.uint64)
        back = to_float(fmt, bits)
        ok = (back == values) | (np.isnan(values) & np.isnan(back))
    if get_format(fmt).signed:                   # -0 is not +0: a zero's sign is part of the value
        ok &= (np.signbit(back) == np.signbit(values)) | np.isnan(values)
    return bits, ok


def _split(fa, fb, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each value as ``a * b`` exactly, ``b`` a power of two (as balanced as the formats allow);
    infinities and NaN as ``a`` times one.  ``(a bits, b bits, ok)``."""
    values = np.asarray(values, np.float64)
    lo, hi = value_range(fb)
    eb = np.arange(lo, hi + 1)
    with np.errstate(all="ignore"):
        cand = np.ldexp(values[:, None], -eb[None, :])
        cand = np.where(np.isfinite(values)[:, None] & (values != 0)[:, None], cand, values[:, None])
    bits, ok = _exact(fa, cand.ravel())
    bits, ok = bits.reshape(cand.shape), ok.reshape(cand.shape)
    with np.errstate(all="ignore"):
        _, ea = np.frexp(np.where(np.isfinite(cand), cand, 1.0))
    balance = np.where(ok, np.abs(ea - eb[None, :]), np.iinfo(np.int64).max)
    pick = np.argmin(balance, 1)
    rows = np.arange(len(values))
    special = ~np.isfinite(values) | (values == 0)
    b_vals = np.where(special, np.where(values == 0, np.copysign(0.0, values), 1.0), np.ldexp(1.0, eb[pick]))
    b_bits, b_ok = _exact(fb, b_vals)
    return bits[rows, pick], b_bits, ok[rows, pick] & b_ok


def build(ins, n: int, products: dict, c=None):
    """Operands ``(a, b, c, scale_a, scale_b)`` of ``n`` dot-adds of ``ins`` whose first pass has the
    given products, every other product zero (scales one).

    ``products``: ``{slot: values [n]}`` (the slot-th product of the first pass; a value is split into
    exact ``a * b``) or ``{slot: (a values, b values)}``.  ``c``: values ``[n]`` (default +0); with
    ``c_last`` c does not enter the first pass, so it takes a free product slot (times one) instead.
    Rows whose values a format cannot hold exactly are left out; None when none is left."""
    fa, fb, fc = (get_format(f) for f in ins.formats[:3])
    cols = pass_columns(ins, 0)
    products = dict(products)
    if c is not None and ins.params.c_last:
        free = [s for s in range(len(cols)) if s not in products]
        if not free:
            return None
        products[free[0]] = np.broadcast_to(np.asarray(c, np.float64), (n,))
        c = None
    a = np.zeros((n, ins.k), np.uint64)
    b = np.zeros((n, ins.k), np.uint64)
    ok = np.ones(n, bool)
    for slot, vals in products.items():
        if isinstance(vals, tuple):
            (ab, aok), (bb, bok) = _exact(fa, vals[0]), _exact(fb, vals[1])
            got = (ab, bb, aok & bok)
        else:
            got = _split(fa, fb, np.broadcast_to(np.asarray(vals, np.float64), (n,)))
        a[:, cols[slot]], b[:, cols[slot]] = got[0], got[1]
        ok &= got[2]
    cb = np.zeros(n, np.uint64)
    if c is not None:
        cb, cok = _exact(fc, np.broadcast_to(np.asarray(c, np.float64), (n,)))
        ok &= cok
    sa = sb = None
    if ins.scale_format:
        one = np.uint64(from_float(ins.scale_format, np.asarray([1.0]))[0])
        sa = np.full((n, ins.k // ins.block_size), one, np.uint64)
        sb = sa.copy()
    if not ok.any():
        return None
    keep = np.flatnonzero(ok)
    return a[keep], b[keep], cb[keep], None if sa is None else sa[keep], None if sb is None else sb[keep]


def signs(rng, n: int) -> np.ndarray:
    """Random signs, +1.0 or -1.0, ``[n]``."""
    return np.where(rng.random(n) < 0.5, -1.0, 1.0)


def infinity_or_nan(fmt, rng, n: int, negative=None):
    """``[n]`` values that are infinities of ``fmt`` where it has them (random signs unless
    ``negative`` is given), else NaN."""
    fmt = get_format(fmt)
    neg = rng.random(n) < 0.5 if negative is None else np.broadcast_to(negative, (n,))
    if fmt.inf:
        return np.where(neg, -np.inf, np.inf)
    return np.full(n, np.nan)


# --------------------------------------------------------------------------- directed constructions

def _exponents(rng, n: int, low: int, high: int):
    """``n`` random integers in ``[low, high]``, or None when the range is empty."""
    return None if low > high else rng.integers(low, high + 1, n)


def _tie(ins, rng, n: int):
    """Two products of 2^t and one term of 2^(t - frac): the carried sum 2^(t+1) + 2^(t - frac) lies
    half-way (the term is c where c enters the pass)."""
    fd = get_format(ins.formats[3])
    frac = _frac_bits(ins)
    lo, hi = product_range(ins)
    t = _exponents(rng, n, max(lo + frac, fd.emin + frac), min(hi, fd.emax - 2))
    if t is None:
        return None
    s = signs(rng, n)
    big = s * np.ldexp(1.0, t)
    return build(ins, n, {0: big, 1: big}, s * np.ldexp(1.0, t - frac))     # c_last: a third product


def _inexact(ins, rng, n: int):
    """Products and c of random significands a few binades apart: their sum has more bits than the
    output keeps."""
    fc = get_format(ins.formats[2])
    lo, hi = product_range(ins)
    t = _exponents(rng, n, max(lo + 8, value_range(fc)[0] + 30), min(hi - 2, fc.emax - 4))
    if t is None:
        return None
    sig = 1.0 + rng.integers(1, 1 << 20, n) * 2.0 ** -20
    c = signs(rng, n) * np.ldexp(1.0 + rng.integers(1, 1 << fc.man_bits, n) * 2.0 ** -fc.man_bits, t)
    for m in (20, 10, 6, 3, 1):                    # the finest product significand the formats hold
        p = np.ldexp(np.round(sig * 2 ** m) / 2 ** m, t - rng.integers(0, 4, n))
        got = build(ins, n, {0: p, 1: -0.5 * p}, c)
        if got is not None and got[0].shape[0] >= n // 4:
            return got
    return build(ins, n, {0: np.ldexp(1.5, t), 1: np.ldexp(1.0, t - 8)}, c)


def _overflow(ins, rng, n: int):
    """c at the output's top and every product of the first pass large, of one sign."""
    fa, fb, fc, fd = (get_format(f) for f in ins.formats)
    L = ins.k // pass_count(ins)
    s = signs(rng, n)
    if _products_overflow(ins):                    # the largest products that do not overflow
        slots = {i: s * 1.5 * 2.0 ** 126 for i in range(L)}
    else:
        slots = {i: (s * fa.max_finite, np.full(n, fb.max_finite)) for i in range(L)}
    c = None if ins.params.c_last else s * min(fc.max_finite, fd.max_finite)
    return build(ins, n, slots, c)


def _special(ins, rng, n: int, kind: str):
    """An infinite (or NaN) c, else an infinite (NaN) operand; else the overflow construction."""
    fa, fc = get_format(ins.formats[0]), get_format(ins.formats[2])
    want_inf = kind == "infinite"
    if not ins.params.c_last and (fc.inf if want_inf else fc.has_nan):
        return build(ins, n, {0: np.ldexp(1.0, rng.integers(-4, 4, n))},
                     infinity_or_nan(fc, rng, n) if want_inf else np.full(n, np.nan))
    if fa.inf if want_inf else fa.has_nan:
        return build(ins, n, {0: infinity_or_nan(fa, rng, n) if want_inf else np.full(n, np.nan)})
    return _overflow(ins, rng, n)


def _small(ins, rng, n: int):
    """A subnormal of the output format: as c where c enters the pass and holds it, else a product."""
    fd = get_format(ins.formats[3])
    t = rng.integers(value_range(fd)[0], fd.emin, n)
    x = signs(rng, n) * np.ldexp(1.0 + rng.integers(0, 4, n) / 4.0, t)
    got = None if ins.params.c_last else build(ins, n, {}, x)
    return got if got is not None else build(ins, n, {0: x})


def _class_directed(ins, name: str, rng, n: int):
    if not is_chained(ins):
        return None
    if name == "zero":
        x = signs(rng, n) * np.ldexp(1.0, rng.integers(-8, 8, n))
        return build(ins, n, {0: x, 1: -x})
    if name == "normal":
        return build(ins, n, {0: signs(rng, n) * np.ldexp(1.0, rng.integers(-8, 8, n))})
    if name == "subnormal":
        return _small(ins, rng, n)
    if name == "overflow":
        return _overflow(ins, rng, n)
    return _special(ins, rng, n, name)


def _rounding_directed(ins, name: str, rng, n: int):
    if not is_chained(ins):
        return None
    if name == "exact":
        return build(ins, n, {0: signs(rng, n) * np.ldexp(1.0, rng.integers(-8, 8, n))})
    if name == "tie":
        return _tie(ins, rng, n)
    return _inexact(ins, rng, n)


INTERMEDIATE_BINS = (
    Bin("zero", "an intermediate pass's result is zero"),
    Bin("subnormal", "an intermediate pass's result is subnormal"),
    Bin("normal", "an intermediate pass's result is a normal number"),
    Bin("overflow", "an intermediate pass's finite sum overflows (to infinity, or past 2^(emax+1))"),
    Bin("infinite", "an intermediate pass's result is infinite from an infinite term"),
    Bin("nan", "an intermediate pass's result is NaN"),
)

ROUNDING_BINS = (
    Bin("exact", "an intermediate pass's finite sum is its rounded result exactly"),
    Bin("inexact", "an intermediate pass's finite sum is rounded (bits dropped)"),
    Bin("tie", "an intermediate pass's finite sum lies exactly half-way between two results"),
)

INTERMEDIATE = CoverPoint(
    "intermediate", INTERMEDIATE_BINS, _class_hits, _class_unreachable,
    description="the class of each intermediate pass's rounded result (every pass but the last; the last "
                "too when c is added after the chain)",
    directed=_class_directed)

INTERMEDIATE_ROUNDING = CoverPoint(
    "intermediate_rounding", ROUNDING_BINS, _rounding_hits, _rounding_unreachable,
    description="how each intermediate pass's sum was rounded to the output format",
    directed=_rounding_directed)

CHAIN_POINTS = (INTERMEDIATE, INTERMEDIATE_ROUNDING)
