"""The fused dot-add's (FDA's) own cover points, from its trace (docs/spec.md §3, FDA).

Each pass of an FDA aligns every product and c to ``2^(e_max - F)`` (truncating), sums them in fixed
point, and rounds the sum once.  The points here: each product's alignment shift against F, the bits
the alignment dropped, c against the products, the fixed-point sum's carry-out and cancellation, and
the final rounding.  Every point has a construction (``directed``) per bin; a pass counts for a bin
when any pass of a chain hits it.  ``F="exact"`` has no alignment window: its window points are
unreachable there, and its final rounding reads the exact sum.
"""

from __future__ import annotations

import numpy as np

from ..formats import get_format
from ..rules import EXACT
from .chain import CHAIN_POINTS
from .common import (
    COMMON_POINTS,
    add_shift_hits,
    last_pass_columns,
    output_precision,
    place_products,
    rounding_point,
    set_value,
    shift_bins,
)
from .common import zero_operands as _zeros
from .model import Batch, Bin, CoverPoint
from .scales import SCALE_POINTS

__all__ = ["FDA_COVER_POINTS", "ROUNDING", "exponent_ranges"]


# --------------------------------------------------------------------------- what an instruction allows

def exponent_ranges(ins) -> dict:
    """The exponents an FDA pass of ``ins`` can see: ``lo_p``/``hi_p`` the smallest and largest product
    exponent e_a + e_b (with the block scales'), ``top`` the largest e_max, ``p_lsb``/``c_lsb`` the
    lowest bit a product or c can carry."""
    fa, fb, fc = (get_format(f) for f in ins.formats[:3])
    lo_p, hi_p = fa.emin + fb.emin, fa.emax + fb.emax
    p_lsb = fa.emin - fa.man_bits + fb.emin - fb.man_bits
    if getattr(ins, "scale_format", None):
        fs = get_format(ins.scale_format)
        lo_p, hi_p, p_lsb = lo_p + 2 * fs.emin, hi_p + 2 * fs.emax, p_lsb + 2 * (fs.emin - fs.man_bits)
    c_lsb = fc.emin - fc.man_bits
    chained = ins.params.pass_size and ins.params.pass_size < ins.k
    if chained:                           # a later pass's c is the previous pass's result
        fd = get_format(ins.d_format)
        c_lsb = min(c_lsb, fd.emin - output_precision(ins))
    return {"lo_p": lo_p, "hi_p": hi_p, "top": max(hi_p, fc.emax, ins.params.e_zero), "p_lsb": p_lsb,
            "c_lsb": c_lsb, "c_emin": fc.emin}


def _exact(ins) -> bool:
    return ins.params.F == EXACT


NO_WINDOW = "F is exact: no alignment window (nothing is shifted out or truncated)"


def _window_passes(batch: Batch):
    """``(pass values, rows)`` of each pass with an alignment window (F exact has none); ``rows``: the
    rows whose terms are all finite there."""
    for v in batch.passes:
        if "aligned.products" not in v or "max_exponent.e_max" not in v:
            continue
        finite = np.isfinite(v["products.value"]).all(1) & np.isfinite(v["max_exponent.c"])
        yield v, finite


def _construct(ins, n, rng, row):
    """``n`` rows of zeros, ``row(ops, r, cols)`` filling each; the last pass's columns."""
    ops = _zeros(ins, n)
    cols = last_pass_columns(ins)
    for r in range(n):
        row(ops, r, cols)
    return ops


def _top_exponent(rng) -> int:
    return int(rng.integers(-3, 4))


def _set_c(ins, ops, r, value) -> None:
    ops[2][r] = set_value(ins.formats[2], np.asarray([value]))[0][0]


# --------------------------------------------------------------------------- shift against F

SHIFT_BINS = shift_bins("a product")


def _shift_hits(batch: Batch) -> dict:
    F = batch.instruction.params.F
    out = {b.name: batch.none() for b in SHIFT_BINS}
    for v, finite in _window_passes(batch):
        value = v["products.value"]
        shift = np.asarray(v["max_exponent.e_max"])[:, None] - v["products.exponent"]
        add_shift_hits(out, shift, finite[:, None] & (value != 0), F)
    return out


def _shift_of(ins, name: str, rng) -> int:
    F = ins.params.F
    fixed = {"F-1": F - 1, "F": F, "F+1": F + 1}
    if name in fixed:
        return fixed[name]
    if name == "inside":
        return int(rng.integers(0, F - 1))
    return F + 2 + int(rng.integers(0, 8))


def _shift_unreachable(ins) -> dict:
    if _exact(ins):
        return {b.name: NO_WINDOW for b in SHIFT_BINS}
    r, F = exponent_ranges(ins), ins.params.F
    widest = r["top"] - r["lo_p"]
    need = {"F-1": F - 1, "F": F, "F+1": F + 1, "beyond": F + 2}
    return {name: f"the widest shift of a product is {widest} (e_max up to {r['top']}, products down to "
                  f"exponent {r['lo_p']}), below {s}" for name, s in need.items() if s > widest}


def _shift_directed(ins, name: str, rng, n: int):
    """One product at e_max (or c there) and one ``shift`` below it, a and b normal."""
    if _exact(ins):
        return None

    def row(ops, r, cols):
        s, X = _shift_of(ins, name, rng), _top_exponent(rng)
        # either sign for the small product: one of the other sign borrows through every bit of the
        # sum, so that dropping or misaligning it shows in the result under any rounding
        sign, low = rng.choice([-1.0, 1.0], 2)
        if rng.random() < 0.5:
            place_products(ins, ops, r, cols, [(1, X), (1, X - s)], [sign, low], rng, normal=True)
        else:
            _set_c(ins, ops, r, sign * 2.0 ** X)
            place_products(ins, ops, r, cols, [(1, X - s)], low, rng, normal=True)
    return _construct(ins, n, rng, row)


# --------------------------------------------------------------------------- bits the alignment drops

def _discard_hits(batch: Batch) -> dict:
    F = batch.instruction.params.F
    out = {"none": batch.none(), "nonzero": batch.none()}
    for v, finite in _window_passes(batch):
        e_max = np.asarray(v["max_exponent.e_max"])
        c = np.where(finite, v["max_exponent.c"], 0.0)
        exact = np.ldexp(np.concatenate([np.where(finite[:, None], v["products.value"], 0.0), c[:, None]], 1),
                         (F - e_max)[:, None].astype(np.int32))
        kept = np.concatenate([v["aligned.products"], np.asarray(v["aligned.c"])[:, None]], 1)
        kept = np.where(finite[:, None], kept, 0.0)
        lost = (exact != kept).any(1)
        out["nonzero"] |= finite & lost
        out["none"] |= finite & ~lost
    return out


def _discard_unreachable(ins) -> dict:
    if _exact(ins):
        return {"none": NO_WINDOW, "nonzero": NO_WINDOW}
    r, F = exponent_ranges(ins), ins.params.F
    if r["top"] - min(r["p_lsb"], r["c_lsb"]) <= F:
        return {"nonzero": f"every term's lowest bit is within F={F} bits of the largest e_max {r['top']}"}
    return {}


def _discard_directed(ins, name: str, rng, n: int):
    """``none``: products of one exponent; ``nonzero``: a product a shift of F+1..F+4 below e_max."""
    if _exact(ins):
        return None
    F = ins.params.F

    def row(ops, r, cols):
        X = _top_exponent(rng)
        if name == "none":
            place_products(ins, ops, r, cols, [(1, X), (1, X)], 1.0, rng, normal=True)
        else:
            place_products(ins, ops, r, cols, [(1, X), (3, X - F - int(rng.integers(1, 4)))], 1.0, rng, normal=True)
    return _construct(ins, n, rng, row)


# --------------------------------------------------------------------------- c against the products

def _c_hits(batch: Batch) -> dict:
    out = {"c_dominant": batch.none(), "tie": batch.none(), "products_dominant": batch.none()}
    for v, finite in _window_passes(batch):
        c = v["max_exponent.c"]
        live = (v["products.value"] != 0) & np.isfinite(v["products.value"])
        pe = np.where(live, v["products.exponent"], np.iinfo(np.int64).min).max(1)
        ce = np.asarray(v["max_exponent.c_exponent"])
        ok = finite & (c != 0) & live.any(1)
        out["c_dominant"] |= ok & (ce > pe)
        out["tie"] |= ok & (ce == pe)
        out["products_dominant"] |= ok & (ce < pe)
    return out


def _c_unreachable(ins) -> dict:
    if _exact(ins):
        why = "F is exact: the trace has no exponents to compare (no alignment)"
        return {"c_dominant": why, "tie": why, "products_dominant": why}
    return {}


def _c_directed(ins, name: str, rng, n: int):
    """A product at exponent X and c at X + d: d > 0, d = 0, d < 0."""
    if _exact(ins):
        return None

    def row(ops, r, cols):
        X = _top_exponent(rng)
        d = {"c_dominant": 1, "tie": 0, "products_dominant": -1}[name] * int(rng.integers(1, 4))
        d = 0 if name == "tie" else d
        place_products(ins, ops, r, cols, [(1, X)], 1.0, rng, normal=True)
        _set_c(ins, ops, r, (1.0 if rng.random() < 0.5 else -1.0) * 2.0 ** (X + d))
    return _construct(ins, n, rng, row)


# --------------------------------------------------------------------------- carry-out of the sum

CARRY_BINS = (Bin("none", "the sum stays below 2^(e_max+1) (no carry-out; non-zero)"),
              Bin("one_bit", "the sum reaches 2^(e_max+1) but not 2^(e_max+2): one bit of carry-out"),
              Bin("two_or_more_bits", "the sum reaches 2^(e_max+2): two or more bits of carry-out"))


def _sums(batch: Batch):
    """``(sum in units of 2^(e_max-F), rows)`` of each windowed pass whose terms are finite."""
    for v, finite in _window_passes(batch):
        yield np.where(finite, np.abs(v["sum.sum"]), 0.0), finite, v


def _carry_hits(batch: Batch) -> dict:
    F = batch.instruction.params.F
    out = {b.name: batch.none() for b in CARRY_BINS}
    for s, finite, _ in _sums(batch):
        one, two = 2.0 ** (F + 1), 2.0 ** (F + 2)
        out["none"] |= finite & (s > 0) & (s < one)
        out["one_bit"] |= finite & (s >= one) & (s < two)
        out["two_or_more_bits"] |= finite & (s >= two)
    return out


def _carry_directed(ins, name: str, rng, n: int):
    """t terms of 1.5 * 2^X of one sign (products, c one of them): t = 1, 2, 3."""
    if _exact(ins):
        return None
    t = {"none": 1, "one_bit": 2, "two_or_more_bits": 3}[name]

    def row(ops, r, cols):
        X, sign = _top_exponent(rng), 1.0 if rng.random() < 0.5 else -1.0
        terms = t
        if rng.random() < 0.5:
            _set_c(ins, ops, r, sign * 1.5 * 2.0 ** X)
            terms -= 1
        place_products(ins, ops, r, cols, [(3, X - 1)] * terms, sign, rng, normal=True)
    return _construct(ins, n, rng, row)


# --------------------------------------------------------------------------- cancellation

CANCEL_BINS = (Bin("none", "the sum's leading bit is at or above 2^e_max (no cancellation)"),
               Bin("shallow", "the sum's leading bit is 1 to 3 places below 2^e_max"),
               Bin("deep", "the sum's leading bit is 4 or more places below 2^e_max (non-zero)"),
               Bin("total", "the terms cancel to an exact zero sum (some term non-zero)"))


def _cancel_hits(batch: Batch) -> dict:
    F = batch.instruction.params.F
    out = {b.name: batch.none() for b in CANCEL_BINS}
    for s, finite, v in _sums(batch):          # (F is a number here: F exact has no windowed pass)
        some = (v["products.value"] != 0).any(1) | (v["max_exponent.c"] != 0)
        out["none"] |= finite & (s >= 2.0 ** F)
        out["shallow"] |= finite & (s < 2.0 ** F) & (s >= 2.0 ** (F - 3))
        out["deep"] |= finite & (s < 2.0 ** (F - 3)) & (s > 0)
        out["total"] |= finite & (s == 0) & some
    return out


def _cancel_directed(ins, name: str, rng, n: int):
    """2^X against the sum of 2^(X-1) .. 2^(X-d) of the other sign (products or c): 2^(X-d) is left."""
    if _exact(ins):
        return None

    def row(ops, r, cols):
        X, sign = _top_exponent(rng), 1.0 if rng.random() < 0.5 else -1.0
        d = {"none": 0, "shallow": int(rng.integers(1, 4)), "deep": int(rng.integers(4, 10)), "total": -1}[name]
        if d == -1:
            terms, signs = [(1, X), (1, X)], [sign, -sign]
        elif d == 0:
            terms, signs = [(1, X)], [sign]
        elif rng.random() < 0.5:                 # c carries 2^X - 2^(X-d)
            _set_c(ins, ops, r, -sign * (2.0 ** X - 2.0 ** (X - d)))
            terms, signs = [(1, X)], [sign]
        else:
            terms = [(1, X)] + [(1, X - i) for i in range(1, d + 1)]
            signs = [sign] + [-sign] * d
        place_products(ins, ops, r, cols, terms, signs, rng, normal=True)
    return _construct(ins, n, rng, row)


# --------------------------------------------------------------------------- the final rounding

def _pre_rounding(batch: Batch) -> np.ndarray:
    """The last pass's value before its rounding: the fixed-point sum (exact in float64), or F exact's
    sum (the float64 nearest it: bits beyond 53 of it are not seen)."""
    last = batch.passes[-1]
    v = last.get("sum.value", last.get("exact_sum.value"))
    return np.full(batch.rows, np.nan) if v is None else np.asarray(v, np.float64)


def _rounding_unreachable(ins) -> dict:
    """A tie at the smallest binade needs a bit at 2^(emin - p - 1): the finest bit an FDA sum can carry
    is the alignment unit 2^(e_max - F) or a term's lowest bit, whichever is coarser."""
    fd, p, r = get_format(ins.d_format), output_precision(ins), exponent_ranges(ins)
    need = fd.emin - p - 1
    if _exact(ins):
        finest = min(r["p_lsb"], r["c_lsb"])
    else:
        F = ins.params.F
        with_products = max(r["lo_p"] - F, min(r["p_lsb"], r["c_lsb"]))
        c_alone = max(max(ins.params.e_zero, r["c_emin"]) - F, r["c_lsb"])
        finest = min(with_products, c_alone)
    if finest <= need:
        return {}
    return {"tie_at_min_exponent": f"the finest bit the sum can carry is 2^{finest}, above the half-ulp 2^{need} "
                                   f"of {fd.name}'s smallest binade at {p} fraction bits"}


ROUNDING = rounding_point(_pre_rounding, _rounding_unreachable)


FDA_COVER_POINTS = (
    CoverPoint("shift", SHIFT_BINS, _shift_hits, _shift_unreachable, directed=_shift_directed,
               description="each non-zero finite product's alignment shift e_max - e_p against the window F"),
    CoverPoint("discarded", (Bin("none", "alignment kept every bit of every term"),
                             Bin("nonzero", "alignment truncated non-zero bits of some term")), _discard_hits,
               _discard_unreachable, directed=_discard_directed,
               description="bits below 2^(e_max-F) dropped by the alignment (products and c)"),
    CoverPoint("c_vs_products", (Bin("c_dominant", "c's exponent is above every product's"),
                                 Bin("tie", "c's exponent equals the largest product exponent"),
                                 Bin("products_dominant", "the largest product exponent is above c's")),
               _c_hits, _c_unreachable, directed=_c_directed,
               description="c's exponent against the largest product exponent (non-zero c and some non-zero "
                           "product)"),
    CoverPoint("carry", CARRY_BINS, _carry_hits, lambda ins: {b.name: NO_WINDOW for b in CARRY_BINS}
               if _exact(ins) else {}, directed=_carry_directed,
               description="carry-out of the fixed-point sum above e_max's binade"),
    CoverPoint("cancellation", CANCEL_BINS, _cancel_hits, lambda ins: {b.name: NO_WINDOW for b in CANCEL_BINS}
               if _exact(ins) else {}, directed=_cancel_directed,
               description="leading zeros of the fixed-point sum below e_max's binade"),
    ROUNDING,
    *SCALE_POINTS,
    *CHAIN_POINTS,
    *COMMON_POINTS,
)
