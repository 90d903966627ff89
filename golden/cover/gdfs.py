"""The block-scaled group dot's (GDFS's) own cover points (docs/spec.md §3).

GDFS sums each group of products exactly, multiplies the sum by its block's two scales and aligns
the terms (unnormalised: a term's exponent is only its two scale exponents, §4.1) and c to their
largest exponent with F fraction bits, truncated.  The points: the group sums (an exact
cancellation, which keeps the scale exponent where an all-zero group takes e_zero; the smallest and
largest magnitudes), each non-zero term's alignment shift against F, bits the alignment dropped, and
c's exponent against the terms'.
"""

from __future__ import annotations

import numpy as np

from ..formats import decode, from_float, get_format, to_float
from .chain import CHAIN_POINTS
from .common import COMMON_POINTS, add_shift_hits, shift_bins
from .model import Batch, Bin, CoverPoint
from .scales import SCALE_POINTS, base_operands, positive_patterns

__all__ = ["GDFS_COVER_POINTS"]


def _group(ins) -> int:
    return ins.params.group or 16


def _pass_c(batch: Batch, i: int) -> np.ndarray:
    """c's value as pass ``i`` takes it: the operand c, or the previous pass's result."""
    fc, fd = batch.instruction.formats[2:]
    return to_float(fc, batch.c) if i == 0 else to_float(fd, batch.passes[i - 1]["rounded.d"].astype(np.uint64))


def _terms(batch: Batch):
    """``(values, rows)`` per pass: the pass's trace values and c, and the rows whose terms are all finite."""
    for i, v in enumerate(batch.passes):
        cv = _pass_c(batch, i)
        finite = np.isfinite(v["scaled.term"]).all(1) & np.isfinite(cv)
        yield v, cv, finite


# --------------------------------------------------------------------------- group sums

def _group_hits(batch: Batch) -> dict:
    fa, fb = batch.instruction.formats[:2]
    _, va = positive_patterns(fa.name)
    _, vb = positive_patterns(fb.name)
    g = _group(batch.instruction)
    out = {name: batch.none() for name in ("cancelled", "all_zero", "smallest", "largest")}
    for v in batch.passes:
        p, sigma = v["products.value"], np.abs(v["group_sums.sigma"])
        any_product = (p != 0).reshape(p.shape[0], -1, g).any(2)
        out["cancelled"] |= (any_product & (sigma == 0)).any(1)
        out["all_zero"] |= (~any_product).any(1)
        out["smallest"] |= (sigma == va[0] * vb[0]).any(1)
        out["largest"] |= (sigma == g * va[-1] * vb[-1]).any(1)
    return out


def _group_directed(ins, name: str, rng, n: int):
    """One group built for the bin (its products: a value and its negation; all zero; one smallest
    product; every product at the largest, one sign), the others random."""
    g = _group(ins)
    a, b, c, sa, sb = base_operands(ins, rng, n)
    first = rng.integers(0, ins.k // g, n) * g
    rows = np.arange(n)
    fa, fb = ins.formats[:2]
    bits_a, _ = positive_patterns(fa.name)
    bits_b, _ = positive_patterns(fb.name)
    sign_a = np.uint64(1) << np.uint64(fa.storage_bits - 1)
    for j in range(g):
        a[rows, first + j] = b[rows, first + j] = 0
    if name == "cancelled":
        pick_a, pick_b = rng.integers(0, len(bits_a), n), rng.integers(0, len(bits_b), n)
        a[rows, first], b[rows, first] = bits_a[pick_a], bits_b[pick_b]
        a[rows, first + g - 1], b[rows, first + g - 1] = bits_a[pick_a] | sign_a, bits_b[pick_b]
    elif name == "smallest":
        a[rows, first], b[rows, first] = bits_a[0], bits_b[0]
    elif name == "largest":
        for j in range(g):
            a[rows, first + j], b[rows, first + j] = bits_a[-1], bits_b[-1]
    return a, b, c, sa, sb


GROUP_SUMS = CoverPoint(
    "group_sum",
    (Bin("cancelled", "a group with non-zero products sums to exactly zero (its term keeps the scale "
                      "exponent, not e_zero)"),
     Bin("all_zero", "every product of a group is zero (its term takes e_zero)"),
     Bin("smallest", "a group sum's magnitude is the smallest non-zero product's"),
     Bin("largest", "a group sum's magnitude is G times the largest product's (every product at its largest, "
                    "one sign)")),
    _group_hits, description="each group's exact sum of products", directed=_group_directed)


# --------------------------------------------------------------------------- alignment of the scaled terms

SHIFT_BINS = shift_bins("a non-zero scaled term")


def _shift_hits(batch: Batch) -> dict:
    F = batch.instruction.params.F
    out = {b.name: batch.none() for b in SHIFT_BINS}
    for v, _, finite in _terms(batch):
        shift = np.asarray(v["max_exponent.e_max"])[:, None] - v["scaled.exponent"]
        add_shift_hits(out, shift, finite[:, None] & (v["scaled.term"] != 0), F)
    return out


def _discard_hits(batch: Batch) -> dict:
    F = batch.instruction.params.F
    out = {"none": batch.none(), "nonzero": batch.none()}
    for v, cv, finite in _terms(batch):
        scale = (F - np.asarray(v["max_exponent.e_max"])).astype(np.int32)
        with np.errstate(all="ignore"):
            exact = np.ldexp(np.concatenate([v["scaled.term"], cv[:, None]], 1), scale[:, None])
        kept = np.concatenate([v["aligned.terms"], np.trunc(exact[:, -1:])], 1)
        lost = (np.where(finite[:, None], exact, 0.0) != np.where(finite[:, None], kept, 0.0)).any(1)
        out["nonzero"] |= finite & lost
        out["none"] |= finite & ~lost
    return out


def _c_hits(batch: Batch) -> dict:
    fc = batch.instruction.formats[2]
    out = {"c_dominant": batch.none(), "tie": batch.none(), "terms_dominant": batch.none()}
    for i, (v, cv, finite) in enumerate(_terms(batch)):
        if i:                          # a later pass's c is the previous result: its exponent is not traced
            continue
        ce = decode(fc, batch.c).exp
        live = v["scaled.term"] != 0
        te = np.where(live, v["scaled.exponent"], np.iinfo(np.int64).min).max(1)
        ok = finite & (cv != 0) & live.any(1)
        out["c_dominant"] |= ok & (ce > te)
        out["tie"] |= ok & (ce == te)
        out["terms_dominant"] |= ok & (ce < te)
    return out


_SHIFTS = {"inside": (0, -1), "F-1": (-1, 0), "F": (0, 1), "F+1": (1, 2), "beyond": (2, 30)}


def _one_term(ins, rng, n: int):
    """Operands with one non-zero group (random products, scale exponents in [-20, 20]) and every
    other group zero; returns them and the group's scale exponent sum ``[n]``."""
    g = _group(ins)
    fs = get_format(ins.scale_format)
    a, b, c, sa, sb = base_operands(ins, rng, n)
    rows = np.arange(n)
    group = rng.integers(0, ins.k // g, n)
    keep = np.zeros(a.shape, bool)
    keep[rows[:, None], group[:, None] * g + np.arange(g)] = True
    a[~keep] = 0
    bits, vals = positive_patterns(fs.name)
    usable = np.flatnonzero((vals >= 2.0 ** -20) & (vals <= 2.0 ** 20))
    blk = group * g // ins.block_size
    sa[rows, blk] = bits[usable[rng.integers(0, len(usable), n)]]
    sb[rows, blk] = bits[usable[rng.integers(0, len(usable), n)]]
    fa, fb = ins.formats[:2]
    first = group * g
    ba, _ = positive_patterns(fa.name)
    bb, _ = positive_patterns(fb.name)
    a[rows, first], b[rows, first] = ba[rng.integers(0, len(ba), n)], bb[rng.integers(0, len(bb), n)]
    se = decode(fs, sa[rows, blk]).exp + decode(fs, sb[rows, blk]).exp
    return (a, b, c, sa, sb), se


def _c_at(ins, rng, exponent, low_bit: bool = False) -> np.ndarray:
    """c's bits: random sign and significand at ``exponent`` (f32-style c formats; last bit set with
    ``low_bit``)."""
    fc = ins.formats[2]
    n = len(exponent)
    sig = 1.0 + rng.integers(0, 1 << fc.man_bits, n) * 2.0 ** -fc.man_bits
    if low_bit:
        sig = np.floor(sig * 2.0 ** (fc.man_bits - 1)) * 2.0 ** (1 - fc.man_bits) + 2.0 ** -fc.man_bits
    val = np.ldexp(sig, np.asarray(exponent, np.int32)) * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return from_float(fc, val).astype(np.uint64)


def _shift_directed(ins, name: str, rng, n: int):
    """One non-zero term at scale exponent ``se`` and c at ``se + shift``: c sets e_max."""
    (a, b, c, sa, sb), se = _one_term(ins, rng, n)
    F = ins.params.F
    lo, hi = _SHIFTS[name]
    shift = F + rng.integers(lo, hi, n) if name != "inside" else rng.integers(0, F - 1, n)
    c = _c_at(ins, rng, se + shift)
    return a, b, c, sa, sb


def _discard_directed(ins, name: str, rng, n: int):
    """``none``: the term alone (c zero); ``nonzero``: c far below the term with its last bit set."""
    (a, b, c, sa, sb), se = _one_term(ins, rng, n)
    if name == "none":
        return a, b, np.zeros_like(c), sa, sb
    F, fc = ins.params.F, ins.formats[2]
    return a, b, _c_at(ins, rng, se - (F - fc.man_bits) - 1 - rng.integers(0, 8, n), low_bit=True), sa, sb


def _c_directed(ins, name: str, rng, n: int):
    (a, b, c, sa, sb), se = _one_term(ins, rng, n)
    offset = {"c_dominant": rng.integers(1, 10, n), "tie": np.zeros(n, int),
              "terms_dominant": -rng.integers(1, 10, n)}[name]
    return a, b, _c_at(ins, rng, se + offset), sa, sb


GDFS_OWN_POINTS = (
    GROUP_SUMS,
    CoverPoint("term_shift", SHIFT_BINS, _shift_hits, description="each non-zero scaled group term's alignment "
               "shift e_max - e_term (e_term: its two scale exponents) against the window F",
               directed=_shift_directed),
    CoverPoint("discarded", (Bin("none", "alignment kept every bit of every term and c"),
                             Bin("nonzero", "alignment truncated non-zero bits of a term or c")), _discard_hits,
               description="bits below 2^(e_max-F) dropped by the alignment", directed=_discard_directed),
    CoverPoint("c_vs_terms", (Bin("c_dominant", "c's exponent is above every non-zero term's"),
                              Bin("tie", "c's exponent equals the largest non-zero term exponent"),
                              Bin("terms_dominant", "the largest non-zero term exponent is above c's")),
               _c_hits, description="c's exponent against the largest scaled term exponent (non-zero c and "
                                    "some non-zero term; the first pass)", directed=_c_directed),
)

GDFS_COVER_POINTS = (*GDFS_OWN_POINTS, *SCALE_POINTS, *CHAIN_POINTS, *COMMON_POINTS)
