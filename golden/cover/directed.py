"""Directed vectors (``VECTORS=cover``): operands solved for, bin by bin, until every reachable bin is hit.

:func:`solve` closes an instruction's cover points.  For each reachable bin not hit yet it asks the
bin's point for a construction (``CoverPoint.directed``: operands built to land in that bin, a few
random variants at a time), traces them with golden and keeps a row that hits it; bins without a
construction, or whose constructions missed, are searched for in draws of the other vector kinds
(structured, disputed, bits, normal), keeping the rows that hit a hole.  Every row kept was measured
to hit a bin no earlier row hit.  What is still missed at the end is a hole of the solver, reported as
one (never called unreachable): unreachable bins are only those a point names, with its reason.

:func:`cover_operands` is the ``cover`` kind of :func:`golden.vectors.random_operands`: the solved rows
first, then further constructions bin by bin (unmeasured variants: more chances for a fault in that
corner to show) up to the rows asked for.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..vectors import empty_operands, random_operands, register_kind
from .model import Coverage

__all__ = ["Solution", "solve", "cover_operands", "SEARCH_KINDS"]

SEARCH_KINDS = ("structured", "disputed", "bits", "normal")
TRIES = 6              # constructions asked of a point per bin before the search takes over
CANDIDATES = 64        # rows per construction
SEARCH_ROWS = 4096     # rows per search draw


@dataclass
class Solution:
    """What :func:`solve` found: ``operands`` ``(a, b, c, scale_a, scale_b)`` (uint64 bit patterns,
    one row per kept dot-add), their ``coverage``, the ``source`` of each row (the bin it was
    constructed for, or the vector kind it was drawn from) and the ``seconds`` it took."""

    operands: tuple
    coverage: Coverage
    source: list
    seconds: float

    @property
    def rows(self) -> int:
        return int(self.operands[0].shape[0])


def _take(ops, rows) -> tuple:
    return tuple(None if x is None else np.asarray(x, np.uint64)[rows] for x in ops)


def _concat(parts, ins) -> tuple:
    if not parts:
        return empty_operands(ins, 0)
    return tuple(None if parts[0][i] is None else np.concatenate([p[i] for p in parts]) for i in range(5))


class _Closer:
    """Keeps the rows that hit holes, greedily (the row hitting most holes first)."""

    def __init__(self, ins, points, cov: Coverage):
        self.ins, self.points, self.cov = ins, points, cov
        self.parts: list = []
        self.source: list = []

    def consider(self, ops, source: str) -> int:
        from ..coverage import row_hits
        hits = row_hits(self.ins, *ops, points=self.points)
        holes = [b for b in self.cov.missed() if b in hits]
        if not holes:
            return 0
        H = np.stack([hits[b] for b in holes], 1)
        kept = 0
        while True:
            gain = H.sum(1)
            r = int(np.argmax(gain))
            if gain[r] == 0:
                return kept
            self.cov.add({b: h[r:r + 1] for b, h in hits.items()}, 1)
            self.parts.append(_take(ops, slice(r, r + 1)))
            self.source.append(source)
            H[:, H[r]] = False
            kept += 1


def solve(ins, rng: np.random.Generator, *, seconds: float = 30.0, points=None) -> Solution:
    """Operands that hit every reachable bin of ``ins``'s cover points (``points``: those instead), found
    within about ``seconds``; the Solution's coverage names any hole left."""
    from ..coverage import cover_points
    start = time.monotonic()
    points = cover_points(ins) if points is None else points
    cov = Coverage.empty(f"{ins.arch} {ins.name}", points, ins)
    points = [p for p in points if p.name in cov.points]                  # inapplicable ones: not measured
    closer = _Closer(ins, points, cov)
    for p in points:
        if p.directed is None:
            continue
        for b in p.bins:
            full = f"{p.name}.{b.name}"
            for _ in range(TRIES):
                if full not in cov.missed() or time.monotonic() - start > seconds:
                    break
                ops = p.directed(ins, b.name, rng, CANDIDATES)
                if ops is None:
                    break
                closer.consider(ops, full)
    while cov.missed() and time.monotonic() - start < seconds:
        for kind in SEARCH_KINDS:
            closer.consider(random_operands(ins, SEARCH_ROWS, rng, kind), kind)
            if not cov.missed():
                break
    cov.offered = cov.dot_adds
    return Solution(_concat(closer.parts, ins), cov, closer.source, time.monotonic() - start)


def _constructions(ins, points, rng, n: int) -> tuple:
    """``n`` more rows, an equal share for each reachable bin's construction (unmeasured); draws of the
    search kinds where no point constructs anything."""
    cov = Coverage.empty("", points, ins)
    asks = [(p, b.name) for p in points if p.directed is not None for b in p.bins
            if f"{p.name}.{b.name}" in cov.bins and f"{p.name}.{b.name}" not in cov.unreachable]
    parts, have, draws = [], 0, 0
    while have < n:
        share = min(CANDIDATES, -(-(n - have) // max(len(asks), 1)))
        made = 0
        for p, name in asks:
            got = p.directed(ins, name, rng, min(share, n - have)) if have < n else None
            if got is not None:
                got = _take(got, slice(0, n - have))
                parts.append(got)
                have, made = have + got[0].shape[0], made + got[0].shape[0]
        if not made:                     # nothing constructed: the search kinds
            kind = SEARCH_KINDS[draws % len(SEARCH_KINDS)]
            parts.append(_take(random_operands(ins, min(SEARCH_ROWS, n - have), rng, kind), slice(None)))
            have, draws = have + parts[-1][0].shape[0], draws + 1
    return _concat(parts, ins)


def cover_operands(ins, n: int, rng: np.random.Generator, out, *, seconds: float = 30.0) -> tuple:
    """The ``cover`` vector kind: ``n`` rows in ``out`` (arrays as golden.vectors.empty_operands makes
    them): the :func:`solve` rows first (fewer than ``n``: the first ``n`` of them), then constructions."""
    from ..coverage import cover_points
    sol = solve(ins, rng, seconds=seconds)
    ops = _take(sol.operands, slice(0, n))
    if ops[0].shape[0] < n:
        more = _constructions(ins, cover_points(ins), rng, n - ops[0].shape[0])
        ops = _concat([ops, more], ins)
    for dst, src in zip(out, ops):
        if dst is not None:
            dst[...] = src.astype(dst.dtype)
    return out


register_kind("cover", cover_operands)
