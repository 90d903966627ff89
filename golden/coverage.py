"""Functional coverage of the arithmetic's corners, measured from golden's own trace.

The model (:class:`Bin`, :class:`CoverPoint`, :class:`Coverage`) and FDA's cover points live in
:mod:`golden.cover_points` (below golden.algorithms, which attaches them to the FDA descriptor as
``cover_points``); this module re-exports them and adds :func:`measure`.
"""

from __future__ import annotations

import numpy as np

from .api import _instruction, trace
from .cover_points import FDA_COVER_POINTS, Bin, Coverage, CoverPoint, Sample
from .descriptors import ALGORITHMS
from .stages import Stage, value_key

__all__ = ["Bin", "CoverPoint", "Coverage", "Sample", "FDA_COVER_POINTS", "cover_points", "measure", "sample_of"]


def cover_points(instruction) -> tuple:
    """The cover points of ``instruction``'s algorithm (its descriptor's ``cover_points``; may be empty)."""
    return ALGORITHMS[instruction.params.base].cover_points


def sample_of(tr) -> Sample:
    """A :class:`golden.Trace` as a :class:`Sample`: each pass's values by ``STAGE.VALUE``."""
    passes: list = [{}]
    for label, vals in tr.stages:
        stage = getattr(label, "stage", None)
        if stage is None:
            continue
        if stage is Stage.PASS:
            if passes[-1]:
                passes.append({})
            continue
        for name, v in vals.items():
            arr = np.asarray(v)
            passes[-1][value_key(stage, name)] = arr[0] if arr.ndim and arr.shape[0] == 1 else arr
    return Sample(tr.instruction, tuple(p for p in passes if p), tr.d)


def measure(instruction, a, b, c, sample=None, *, seed=0, arch=None) -> Coverage:
    """The coverage of ``instruction``'s cover points over the dot-adds ``a [N, K]``, ``b [N, K]``,
    ``c [N]`` (values exact in their formats, or bit patterns, as :func:`golden.trace` takes them).

    ``sample``: measure a random sample of that many dot-adds (without replacement, ``seed``) instead
    of all of them; the result's ``dot_adds`` is the number measured and ``offered`` is N."""
    ins = _instruction(instruction, arch)
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if a.ndim == 1:
        a, b, c = a[None], b[None], c.reshape(1)
    n = a.shape[0]
    if b.shape[0] != n or c.reshape(-1).shape[0] != n:
        raise ValueError(f"a, b and c must hold the same number of dot-adds: {a.shape}, {b.shape}, {c.shape}")
    c = c.reshape(-1)
    rows = np.arange(n)
    if sample is not None and sample < n:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=int(sample), replace=False))
    points = cover_points(ins)
    cov = Coverage.empty(f"{ins.arch} {ins.name}", points, ins)
    for i in rows.tolist():
        s = sample_of(trace(ins, a[i], b[i], c[i]))
        for p in points:
            for name in p.hits(s):
                cov.hits[f"{p.name}.{name}"] += 1
    cov.dot_adds, cov.offered = len(rows), n
    return cov
