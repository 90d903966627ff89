"""The fused dot-add's (FDA's) own cover points, from its trace (docs/spec.md §3, FDA)."""

from __future__ import annotations

import numpy as np

from .chain import CHAIN_POINTS
from .common import COMMON_POINTS
from .model import Batch, Bin, CoverPoint
from .scales import SCALE_POINTS

__all__ = ["FDA_COVER_POINTS"]


def _window_passes(batch: Batch):
    """``(pass values, rows)`` of each pass with an alignment window (F exact has none); ``rows``: the
    rows whose terms are all finite there."""
    for v in batch.passes:
        if "aligned.products" not in v or "max_exponent.e_max" not in v:
            continue
        finite = np.isfinite(v["products.value"]).all(1) & np.isfinite(v["max_exponent.c"])
        yield v, finite


SHIFT_BINS = (
    Bin("inside", "a product's alignment shift e_max - e_p is below F-1"),
    Bin("F-1", "a product's alignment shift is exactly F-1"),
    Bin("F", "a product's alignment shift is exactly F"),
    Bin("F+1", "a product's alignment shift is exactly F+1"),
    Bin("beyond", "a product's alignment shift is above F+1 (the product is truncated away)"),
)


def _shift_hits(batch: Batch) -> dict:
    F = batch.instruction.params.F
    out = {b.name: batch.none() for b in SHIFT_BINS}
    for v, finite in _window_passes(batch):
        value = v["products.value"]
        shift = np.asarray(v["max_exponent.e_max"])[:, None] - v["products.exponent"]
        live = finite[:, None] & (value != 0)
        for name, where in (("inside", shift < F - 1), ("F-1", shift == F - 1), ("F", shift == F),
                            ("F+1", shift == F + 1), ("beyond", shift > F + 1)):
            out[name] |= (live & where).any(1)
    return out


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


FDA_COVER_POINTS = (
    CoverPoint("shift", SHIFT_BINS, _shift_hits,
               description="each non-zero finite product's alignment shift e_max - e_p against the window F"),
    CoverPoint("discarded", (Bin("none", "alignment kept every bit of every term"),
                             Bin("nonzero", "alignment truncated non-zero bits of some term")), _discard_hits,
               description="bits below 2^(e_max-F) dropped by the alignment (products and c)"),
    CoverPoint("c_vs_products", (Bin("c_dominant", "c's exponent is above every product's"),
                                 Bin("tie", "c's exponent equals the largest product exponent"),
                                 Bin("products_dominant", "the largest product exponent is above c's")),
               _c_hits, description="c's exponent against the largest product exponent (non-zero c and "
                                    "some non-zero product)"),
    *SCALE_POINTS,
    *CHAIN_POINTS,
    *COMMON_POINTS,
)
