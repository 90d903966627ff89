"""The coverage model: bins, cover points, a traced batch of dot-adds, and hit counts.

A :class:`CoverPoint` is a named set of :class:`Bin` s and a function from a :class:`Batch` (R traced
dot-adds: the instruction, each pass's trace values by their stable names ``STAGE.VALUE``, the
operands' bits and the results' bits) to ``{bin name: bool array [R]}``: which dot-adds hit each bin.
It is vectorised so that every vector a run checked can be measured (golden.coverage.measure).

A point also says which of its bins an instruction can never hit, and why (``unreachable``), and may
say how to make operands that hit a bin (``directed``): golden.cover.directed solves with it.

:class:`Coverage` counts, per bin ``"point.bin"``, the dot-adds that hit it; it merges (two workers,
a resumed run), and reads and writes JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Bin", "Batch", "CoverPoint", "Coverage", "cross", "SUMMARY_FORMAT"]

SUMMARY_FORMAT = "coverage: {hit} of {reachable} reachable bins hit ({unreachable} unreachable)"


@dataclass(frozen=True)
class Bin:
    """One bin of a cover point: ``name`` (unique in its point) and what hitting it means."""

    name: str
    description: str


@dataclass(frozen=True)
class Batch:
    """R traced dot-adds as the cover points see them.

    Members
    -------
    instruction : golden.Instruction
    passes : tuple of dict
        Each pass's trace values ``{"STAGE.VALUE": array}`` (golden.stages.value_key), leading axis R;
        one dict per pass of a chain (one for an unchained instruction).  Stages after the last pass
        (a compiled path's final add of c, the NaN pattern) are in ``tail``.
    tail : dict
        Values of the stages that follow the chain (``c_last.*``, ``nan_bits.*``).
    d : numpy.ndarray
        The results' bit patterns, uint64 ``[R]``.
    a, b : numpy.ndarray
        The operands' bit patterns, uint64 ``[R, K]``.
    c : numpy.ndarray
        c's bit patterns, uint64 ``[R]``.
    scale_a, scale_b : numpy.ndarray or None
        The block scales' bit patterns ``[R, K / block]``, or None.
    """

    instruction: object
    passes: tuple
    tail: dict
    d: np.ndarray
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    scale_a: np.ndarray | None = None
    scale_b: np.ndarray | None = None

    @property
    def rows(self) -> int:
        return int(self.d.shape[0])

    def none(self) -> np.ndarray:
        """An all-False hit array of this batch's rows."""
        return np.zeros(self.rows, bool)


def _no_bins(instruction) -> dict:
    return {}


@dataclass(frozen=True)
class CoverPoint:
    """A named cover point.

    Members
    -------
    name : str
        Unique among an algorithm's points; a bin's full name is ``"point.bin"``.
    bins : tuple of Bin
    hits : callable
        ``hits(batch) -> {bin name: bool array [R]}``; a bin left out is hit by none of the rows.
    unreachable : callable
        ``unreachable(instruction) -> {bin name: reason}``: the bins this instruction can never hit.
    description : str
        What the point measures, for the reports.
    directed : callable or None
        ``directed(instruction, bin name, rng, n)`` -> operands ``(a [n, K], b [n, K], c [n], scale_a,
        scale_b)`` as bit patterns (uint64; scales None when unscaled) meant to hit that bin, or None
        when it has no construction for it (golden.cover.directed then searches).
    """

    name: str
    bins: tuple
    hits: Callable
    unreachable: Callable = _no_bins
    description: str = ""
    directed: Callable | None = None

    def __post_init__(self):
        names = [b.name for b in self.bins]
        if len(set(names)) != len(names):
            raise ValueError(f"cover point {self.name} names a bin twice: {names}")

    def bin_names(self) -> list[str]:
        return [f"{self.name}.{b.name}" for b in self.bins]

    def measure(self, batch: Batch) -> dict:
        """``{"point.bin": bool [R]}`` for every bin of this point (False where ``hits`` left it out)."""
        got = self.hits(batch)
        unknown = set(got) - {b.name for b in self.bins}
        if unknown:
            raise ValueError(f"cover point {self.name} hit bins it does not have: {sorted(unknown)}")
        out = {}
        for b in self.bins:
            h = got.get(b.name)
            out[f"{self.name}.{b.name}"] = batch.none() if h is None else np.broadcast_to(
                np.asarray(h, bool), (batch.rows,))
        return out


def cross(name: str, first: CoverPoint, second: CoverPoint, description: str = "") -> CoverPoint:
    """The cross of two points: a bin per pair of bins (``"a*b"``), hit where both are hit.  A pair is
    unreachable where either bin is."""
    bins = tuple(Bin(f"{x.name}*{y.name}", f"{x.description}, and {y.description}")
                 for x in first.bins for y in second.bins)

    def hits(batch):
        h1, h2 = first.hits(batch), second.hits(batch)
        return {f"{x}*{y}": np.asarray(h1[x], bool) & np.asarray(h2[y], bool) for x in h1 for y in h2}

    def unreachable(ins):
        u1, u2 = first.unreachable(ins), second.unreachable(ins)
        out = {}
        for x in first.bins:
            for y in second.bins:
                why = u1.get(x.name) or u2.get(y.name)
                if why:
                    out[f"{x.name}*{y.name}"] = why
        return out

    return CoverPoint(name, bins, hits, unreachable, description or f"{first.name} crossed with {second.name}")


@dataclass
class Coverage:
    """Hit counts per bin (``"point.bin"``) of one instruction's cover points.

    Members
    -------
    instruction : str
        ``"arch name"``.
    bins : dict
        ``{bin: description}``, in the points' order.
    hits : dict
        ``{bin: dot-adds that hit it}``.
    unreachable : dict
        ``{bin: reason}``: bins this instruction can never hit.
    dot_adds : int
        The dot-adds measured.
    offered : int
        The dot-adds the run checked (more than ``dot_adds`` where a sample was measured).
    points : dict
        ``{point: description}`` of the points measured.
    inapplicable : dict
        ``{point: reason}``: points of the algorithm that do not apply to this instruction at all (every
        bin unreachable for one reason: block scales on an unscaled instruction, a chain's intermediate
        roundings on one pass); their bins are not counted, reachable or unreachable.
    """

    instruction: str
    bins: dict
    hits: dict
    unreachable: dict = field(default_factory=dict)
    dot_adds: int = 0
    offered: int = 0
    points: dict = field(default_factory=dict)
    inapplicable: dict = field(default_factory=dict)

    @classmethod
    def empty(cls, instruction: str, points, ins=None) -> Coverage:
        """No hits yet on ``points``; ``ins`` (the golden.Instruction) names the unreachable bins."""
        bins, unreachable, inapplicable, measured = {}, {}, {}, {}
        for p in points:
            why = {} if ins is None else p.unreachable(ins)
            if len(why) == len(p.bins) and len(set(why.values())) == 1:
                inapplicable[p.name] = next(iter(why.values()))
                continue
            measured[p.name] = p.description
            for b in p.bins:
                bins[f"{p.name}.{b.name}"] = b.description
            unreachable.update({f"{p.name}.{name}": reason for name, reason in why.items()})
        return cls(instruction, bins, dict.fromkeys(bins, 0), unreachable, points=measured,
                   inapplicable=inapplicable)

    def add(self, hits: dict, rows: int, offered: int | None = None) -> None:
        """Count ``hits`` (``{bin: bool [R]}`` of ``rows`` measured dot-adds out of ``offered``); bins of
        inapplicable points are left out."""
        for b, h in hits.items():
            if b in self.hits:
                self.hits[b] += int(np.count_nonzero(h))
        self.dot_adds += int(rows)
        self.offered += int(rows if offered is None else offered)

    def reachable(self) -> list[str]:
        return [b for b in self.bins if b not in self.unreachable]

    def hit(self) -> list[str]:
        return [b for b in self.reachable() if self.hits.get(b, 0) > 0]

    def missed(self) -> list[str]:
        """The holes: reachable bins no dot-add hit."""
        return [b for b in self.reachable() if self.hits.get(b, 0) == 0]

    def closed(self) -> bool:
        return not self.missed()

    def merge(self, other: Coverage) -> Coverage:
        """The sum of two measurements of the same instruction and bins (two workers, a resumed run)."""
        if (other.instruction, list(other.bins), other.unreachable) != (self.instruction, list(self.bins),
                                                                          self.unreachable):
            raise ValueError(f"cannot merge coverage of {other.instruction} into {self.instruction}: "
                             "different instruction, bins or unreachable bins")
        return Coverage(self.instruction, dict(self.bins),
                        {b: self.hits.get(b, 0) + other.hits.get(b, 0) for b in self.bins},
                        dict(self.unreachable), self.dot_adds + other.dot_adds, self.offered + other.offered,
                        dict(self.points or other.points), dict(self.inapplicable or other.inapplicable))

    def summary(self) -> str:
        """``coverage: H of R reachable bins hit (U unreachable)``."""
        return SUMMARY_FORMAT.format(hit=len(self.hit()), reachable=len(self.reachable()),
                                     unreachable=len(self.unreachable))

    def to_dict(self) -> dict:
        return {"instruction": self.instruction, "bins": self.bins, "hits": self.hits,
                "unreachable": self.unreachable, "dot_adds": self.dot_adds, "offered": self.offered,
                "points": self.points, "inapplicable": self.inapplicable, "summary": self.summary(),
                "missed": self.missed()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, o: dict) -> Coverage:
        return cls(o["instruction"], dict(o["bins"]), {k: int(v) for k, v in o["hits"].items()},
                   dict(o["unreachable"]), int(o["dot_adds"]), int(o["offered"]), dict(o.get("points", {})),
                   dict(o.get("inapplicable", {})))

    @classmethod
    def from_json(cls, text: str) -> Coverage:
        return cls.from_dict(json.loads(text))
