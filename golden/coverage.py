"""Functional coverage of the arithmetic's corners, measured on the vectors a run checked.

An instruction's cover points are its algorithm descriptor's ``golden.cover`` part (golden.cover.*).
:func:`measure` runs golden's numpy path with its trace over the dot-adds, a chunk at a time, and
counts every bin each dot-add hits: every vector, or a random sample of a stated size.  The model
(:class:`Bin`, :class:`CoverPoint`, :class:`Coverage`, :class:`Batch`) is :mod:`golden.cover.model`.
"""

from __future__ import annotations

import numpy as np

from . import (
    algorithms,
    cover,  # noqa: F401  (registers each algorithm's cover points)
)
from .api import _instruction, prepare_operands
from .cover.model import Batch, Bin, Coverage, CoverPoint, cross
from .descriptors import Part, part
from .stages import Stage, value_key

__all__ = ["Batch", "Bin", "CoverPoint", "Coverage", "cross", "cover_points", "batch_of", "row_hits",
           "measure", "empty", "CHUNK"]

CHUNK = 1 << 15          # dot-adds traced at once: the trace holds a few [R, K] float64 arrays per pass


def cover_points(instruction) -> tuple:
    """The cover points of ``instruction``'s algorithm (its descriptor's ``golden.cover`` part;
    :class:`golden.descriptors.Unsupported` for an algorithm without one)."""
    return part(instruction.params.base, Part.COVER)


def empty(instruction, *, arch=None) -> Coverage:
    """No hits yet on ``instruction``'s cover points (its unreachable bins named)."""
    ins = _instruction(instruction, arch)
    return Coverage.empty(f"{ins.arch} {ins.name}", cover_points(ins), ins)


def _split_passes(stages) -> tuple[tuple, dict]:
    """A trace's ``(label, values)`` list as ``(one dict per pass, the stages after the chain)``."""
    passes: list = [{}]
    tail: dict = {}
    for label, vals in stages:
        stage = getattr(label, "stage", None)
        if stage is None:
            continue
        if stage is Stage.PASS:
            if passes[-1]:
                passes.append({})
            continue
        into = tail if stage in (Stage.C_LAST, Stage.NAN_BITS) else passes[-1]
        for name, v in vals.items():
            into[value_key(stage, name)] = np.asarray(v)
    return tuple(p for p in passes if p), tail


def batch_of(ins, a, b, c, scale_a=None, scale_b=None) -> Batch:
    """Trace the dot-adds ``a [R, K]``, ``b [R, K]``, ``c [R]`` (bits, or values exact in their formats)
    of the golden.Instruction ``ins`` on golden's numpy path: a :class:`Batch`."""
    pr = prepare_operands(ins, a, b, c, scale_a, scale_b)
    fa, fb, fc, fd = ins.formats
    stages: list = []
    d = algorithms.run(ins.params, pr.a, pr.b, pr.c, fa, fb, fc, fd, pr.sa, pr.sb, ins.scale_format,
                       ins.block_size, trace=stages)
    passes, tail = _split_passes(stages)
    return Batch(ins, passes, tail, np.asarray(d, np.uint64).reshape(-1), pr.a, pr.b, pr.c.reshape(-1),
                 pr.sa, pr.sb)


def row_hits(ins, a, b, c, scale_a=None, scale_b=None, points=None) -> dict:
    """``{"point.bin": bool [R]}``: which of the dot-adds hit each bin (``points``: the instruction's)."""
    batch = batch_of(ins, a, b, c, scale_a, scale_b)
    out: dict = {}
    for p in cover_points(ins) if points is None else points:
        out.update(p.measure(batch))
    return out


def _rows(a, b, c, scale_a, scale_b, k: int):
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if a.ndim == 1:
        a, b, c = a[None], b[None], c.reshape(1)
        scale_a = None if scale_a is None else np.asarray(scale_a)[None]
        scale_b = None if scale_b is None else np.asarray(scale_b)[None]
    n = a.shape[0]
    if a.shape != (n, k) or b.shape != (n, k) or c.reshape(-1).shape[0] != n:
        raise ValueError(f"a and b must be [N, {k}] and c [N] with the same N: got {a.shape}, {b.shape}, "
                         f"{c.shape}")
    return a, b, c.reshape(-1), scale_a, scale_b, n


def measure(instruction, a, b, c, scale_a=None, scale_b=None, *, sample=None, seed=0, arch=None,
            into: Coverage | None = None, progress=None) -> Coverage:
    """The coverage of ``instruction``'s cover points over the dot-adds ``a [N, K]``, ``b [N, K]``,
    ``c [N]`` (bit patterns, or values exact in their formats).

    ``sample``: measure a random sample of that many dot-adds (without replacement, ``seed``) instead
    of all of them; the result's ``dot_adds`` is the number measured and ``offered`` is N.  ``into``:
    add to this Coverage (of the same instruction) rather than a new one.  ``progress(done, total)``
    is called after each chunk."""
    ins = _instruction(instruction, arch)
    a, b, c, scale_a, scale_b, n = _rows(a, b, c, scale_a, scale_b, ins.k)
    rows = np.arange(n)
    if sample is not None and int(sample) < n:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=int(sample), replace=False))
    cov = empty(ins) if into is None else into
    points = [p for p in cover_points(ins) if p.name in cov.points]      # inapplicable ones: not measured
    for lo in range(0, len(rows), CHUNK):
        r = rows[lo:lo + CHUNK]
        sa, sb = (None if x is None else np.asarray(x)[r] for x in (scale_a, scale_b))
        cov.add(row_hits(ins, a[r], b[r], c[r], sa, sb, points), len(r), 0)
        if progress is not None:
            progress(min(lo + CHUNK, len(rows)), len(rows))
    cov.offered += n
    return cov
