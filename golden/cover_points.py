"""Functional coverage of the arithmetic's corners: the model and FDA's cover points.

A :class:`CoverPoint` is a named set of :class:`Bin` s and a function from one traced dot-add (a
:class:`Sample`: the instruction, each pass's trace values by their stable names, golden.stages, and
the result's bits) to the names of the bins it hits.  :class:`Coverage` counts, per bin, the dot-adds
that hit it.  An algorithm's cover points are its descriptor's ``cover_points``
(:class:`golden.descriptors.Algorithm`); :func:`golden.coverage.measure` runs golden with trace and
fills a Coverage.

This module sits below golden.algorithms (which attaches FDA's cover points to its descriptor), so it
imports neither golden.algorithms nor golden.api; :mod:`golden.coverage` re-exports it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .formats import get_format, to_float

__all__ = ["Bin", "CoverPoint", "Coverage", "Sample", "FDA_COVER_POINTS"]


@dataclass(frozen=True)
class Bin:
    """One bin of a cover point: ``name`` (unique in its point) and what hitting it means."""

    name: str
    description: str


@dataclass(frozen=True)
class Sample:
    """One traced dot-add as the cover points see it.

    ``instruction``: the :class:`golden.Instruction`; ``passes``: each pass's values ``{"STAGE.VALUE":
    array}`` (golden.stages.value_key), one dict per pass; ``d``: the result's bit pattern."""

    instruction: object
    passes: tuple
    d: int


@dataclass(frozen=True)
class CoverPoint:
    """A named cover point: its bins, ``hits(sample) -> set of bin names`` and
    ``unreachable(instruction) -> {bin name: reason}`` (bins it can never hit on that instruction)."""

    name: str
    bins: tuple
    hits: Callable
    unreachable: Callable = field(default=lambda instruction: {})
    description: str = ""

    def bin_names(self) -> list[str]:
        return [f"{self.name}.{b.name}" for b in self.bins]


@dataclass
class Coverage:
    """Hit counts per bin (``"point.bin"``) of one instruction's cover points.

    ``bins``: ``{bin: description}``; ``hits``: ``{bin: dot-adds that hit it}``; ``unreachable``:
    ``{bin: reason}``; ``dot_adds``: the dot-adds measured; ``offered``: the dot-adds given to
    :func:`golden.coverage.measure` (more than ``dot_adds`` when a random sample was measured)."""

    instruction: str
    bins: dict
    hits: dict
    unreachable: dict = field(default_factory=dict)
    dot_adds: int = 0
    offered: int = 0

    @classmethod
    def empty(cls, instruction: str, points, ins=None) -> Coverage:
        bins, unreachable = {}, {}
        for p in points:
            for b in p.bins:
                bins[f"{p.name}.{b.name}"] = b.description
            if ins is not None:
                for name, why in p.unreachable(ins).items():
                    unreachable[f"{p.name}.{name}"] = why
        return cls(instruction, bins, dict.fromkeys(bins, 0), unreachable)

    def reachable(self) -> list[str]:
        return [b for b in self.bins if b not in self.unreachable]

    def hit(self) -> list[str]:
        return [b for b in self.reachable() if self.hits.get(b, 0) > 0]

    def missed(self) -> list[str]:
        return [b for b in self.reachable() if self.hits.get(b, 0) == 0]

    def merge(self, other: Coverage) -> Coverage:
        """The sum of two measurements of the same instruction and bins (e.g. two workers')."""
        if (other.instruction, list(other.bins), other.unreachable) != (self.instruction, list(self.bins),
                                                                          self.unreachable):
            raise ValueError(f"cannot merge coverage of {other.instruction} into {self.instruction}: "
                             "different instruction, bins or unreachable bins")
        return Coverage(self.instruction, dict(self.bins),
                        {b: self.hits.get(b, 0) + other.hits.get(b, 0) for b in self.bins},
                        dict(self.unreachable), self.dot_adds + other.dot_adds, self.offered + other.offered)

    def summary(self) -> str:
        """``coverage: H of R reachable bins hit (U unreachable)``."""
        return (f"coverage: {len(self.hit())} of {len(self.reachable())} reachable bins hit "
                f"({len(self.unreachable)} unreachable)")

    def to_json(self) -> str:
        return json.dumps({"instruction": self.instruction, "bins": self.bins, "hits": self.hits,
                           "unreachable": self.unreachable, "dot_adds": self.dot_adds,
                           "offered": self.offered}, indent=1)

    @classmethod
    def from_json(cls, text: str) -> Coverage:
        o = json.loads(text)
        return cls(o["instruction"], o["bins"], o["hits"], o["unreachable"], o["dot_adds"], o["offered"])


# --------------------------------------------------------------------------- FDA's cover points

def _products(v: dict):
    """The finite non-zero products of a pass: (values, exponents)."""
    val = np.atleast_1d(np.asarray(v["products.value"], np.float64))
    exp = np.atleast_1d(np.asarray(v["products.exponent"]))
    keep = np.isfinite(val) & (val != 0)
    return val[keep], exp[keep]


def _fda_passes(sample: Sample):
    """The passes with an FDA window (F exact has none) and finite terms."""
    for v in sample.passes:
        if "aligned.products" not in v or "max_exponent.e_max" not in v:
            continue
        if not np.all(np.isfinite(np.asarray(v["products.value"], np.float64))):
            continue
        yield v


SHIFT_BINS = (
    Bin("inside", "a product's alignment shift e_max - e_p is below F-1"),
    Bin("F-1", "a product's alignment shift is exactly F-1"),
    Bin("F", "a product's alignment shift is exactly F"),
    Bin("F+1", "a product's alignment shift is exactly F+1"),
    Bin("beyond", "a product's alignment shift is above F+1 (the product is truncated away)"),
)


def _shift_hits(sample: Sample) -> set:
    F = sample.instruction.params.F
    out = set()
    for v in _fda_passes(sample):
        _, exp = _products(v)
        shift = int(np.asarray(v["max_exponent.e_max"])) - exp
        for s in shift.tolist():
            out.add("inside" if s < F - 1 else "F-1" if s == F - 1 else "F" if s == F else
                    "F+1" if s == F + 1 else "beyond")
    return out


def _discard_hits(sample: Sample) -> set:
    out = set()
    F = sample.instruction.params.F
    for v in _fda_passes(sample):
        e_max = int(np.asarray(v["max_exponent.e_max"]))
        val = np.atleast_1d(np.asarray(v["products.value"], np.float64))
        c = float(np.asarray(v["max_exponent.c"]))
        exact = np.ldexp(np.append(val, c if np.isfinite(c) else 0.0), F - e_max)
        kept = np.append(np.atleast_1d(np.asarray(v["aligned.products"], np.float64)),
                         float(np.asarray(v["aligned.c"])) if np.isfinite(c) else 0.0)
        out.add("nonzero" if np.any(exact != kept) else "none")
    return out


def _c_hits(sample: Sample) -> set:
    out = set()
    for v in _fda_passes(sample):
        c = float(np.asarray(v["max_exponent.c"]))
        _, exp = _products(v)
        if c == 0 or not np.isfinite(c) or exp.size == 0:
            continue
        ce, pe = int(np.asarray(v["max_exponent.c_exponent"])), int(exp.max())
        out.add("c_dominant" if ce > pe else "tie" if ce == pe else "products_dominant")
    return out


def _output_hits(sample: Sample) -> set:
    fd = get_format(sample.instruction.d_format)
    x = float(to_float(fd, np.array([sample.d], np.uint64))[0])
    if np.isnan(x):
        return {"nan"}
    if np.isinf(x):
        return {"infinite"}
    if x == 0:
        return {"zero"}
    return {"subnormal" if abs(x) < 2.0 ** fd.emin else "normal"}


def _output_unreachable(ins) -> dict:
    fd = get_format(ins.d_format)
    out = {}
    if not fd.subnormals:
        out["subnormal"] = f"the output format {fd.name} has no subnormals"
    if not fd.inf:
        out["infinite"] = f"the output format {fd.name} has no infinities"
    if not fd.has_nan:
        out["nan"] = f"the output format {fd.name} has no NaN"
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
    CoverPoint("output", (Bin("normal", "the result is a normal number"),
                          Bin("subnormal", "the result is subnormal"),
                          Bin("zero", "the result is zero"),
                          Bin("infinite", "the result is infinite"),
                          Bin("nan", "the result is NaN")),
               _output_hits, _output_unreachable, description="the class of the result"),
)
