"""Where each element of a tile sits in a sequence: the element orders a tile device states.

A tile device (docs/your-rtl.md, "Tile devices") takes A, B, C and gives D over beats; each operand's
elements travel as one flat sequence, ``lanes`` of them per beat, and its **layout** says which tile
element position ``p`` of that sequence holds.  :func:`positions` gives the ``(row, col)`` of every
position for a ``rows x cols`` tile.

Layouts:

``row_major``, ``col_major``
    the whole tile row after row, or column after column.
``mma.<shape>.<operand>.<types>``
    the warp fragment layouts the PTX ISA documents for ``mma.sync`` (PTX ISA, section 9.7.14.5,
    "Matrix Fragments for mma.m16n8k16" and its siblings): 32 threads (lane ids) hold ``E`` elements
    each, thread ``t`` element ``i`` at the row and column its formula gives (``groupID = t >> 2``,
    ``threadID_in_group = t % 4``).  The sequence goes thread by thread (``t * E + i``), or register
    by register (``i * 32 + t``) with ``fragment_order = "register"``.

One fact of the PTX ISA, one place: the fragment formulas are the table :data:`FRAGMENTS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Fragment", "FRAGMENTS", "LAYOUTS", "ORDERS", "positions", "check_layout", "LayoutError"]

THREADS = 32
ORDERS = ("thread", "register")          # fragment_order: thread t's elements together, or register i's


class LayoutError(ValueError):
    """A layout that does not exist or does not fit the tile (one line, naming what is valid)."""


@dataclass(frozen=True)
class Fragment:
    """One operand's fragment layout of one ``mma.sync`` shape (the PTX ISA, section 9.7.14.5).

    Members
    -------
    rows, cols : int
        The operand's tile (A: M x K, B: K x N, C/D: M x N).
    per_thread : int
        Elements each of the 32 threads holds.
    bits : tuple of int
        Element storage widths the layout is for (16: f16/bf16, 32: tf32/f32, 8: fp8).
    place : callable
        ``place(g, tig, i) -> (row, col)`` with ``g = lane >> 2``, ``tig = lane % 4``.
    """

    rows: int
    cols: int
    per_thread: int
    bits: tuple
    place: Callable


def _a16_k16(g, t, i):
    return g + 8 * ((i >> 1) & 1), t * 2 + (i & 1) + 8 * (i >> 2)


def _b16_k16(g, t, i):
    return t * 2 + (i & 1) + 8 * (i >> 1), g


def _acc(g, t, i):
    return g + 8 * (i >> 1), t * 2 + (i & 1)


def _a16_k8(g, t, i):
    return g + 8 * (i >> 1), t * 2 + (i & 1)


def _b16_k8(g, t, i):
    return t * 2 + i, g


def _a32_k8(g, t, i):
    return g + 8 * (i & 1), t + 4 * (i >> 1)


def _b32_k8(g, t, i):
    return t + 4 * i, g


def _a32_k4(g, t, i):
    return g + 8 * i, t


def _b32_k4(g, t, i):
    return t, g


def _a8_k32(g, t, i):
    return g + 8 * ((i >> 2) & 1), t * 4 + (i & 3) + 16 * (i >> 3)


def _b8_k32(g, t, i):
    return t * 4 + (i & 3) + 16 * (i >> 2), g


FRAGMENTS = {
    "mma.m16n8k16.a.f16": Fragment(16, 16, 8, (16,), _a16_k16),
    "mma.m16n8k16.b.f16": Fragment(16, 8, 4, (16,), _b16_k16),
    "mma.m16n8k16.c": Fragment(16, 8, 4, (16, 32), _acc),
    "mma.m16n8k8.a.f16": Fragment(16, 8, 4, (16,), _a16_k8),
    "mma.m16n8k8.b.f16": Fragment(8, 8, 2, (16,), _b16_k8),
    "mma.m16n8k8.c": Fragment(16, 8, 4, (16, 32), _acc),
    "mma.m16n8k8.a.tf32": Fragment(16, 8, 4, (32,), _a32_k8),
    "mma.m16n8k8.b.tf32": Fragment(8, 8, 2, (32,), _b32_k8),
    "mma.m16n8k4.a.tf32": Fragment(16, 4, 2, (32,), _a32_k4),
    "mma.m16n8k4.b.tf32": Fragment(4, 8, 1, (32,), _b32_k4),
    "mma.m16n8k4.c": Fragment(16, 8, 4, (32,), _acc),
    "mma.m16n8k32.a.f8": Fragment(16, 32, 16, (8,), _a8_k32),
    "mma.m16n8k32.b.f8": Fragment(32, 8, 8, (8,), _b8_k32),
    "mma.m16n8k32.c": Fragment(16, 8, 4, (16, 32), _acc),
}
LAYOUTS = ("row_major", "col_major") + tuple(FRAGMENTS)


def check_layout(name: str, rows: int, cols: int, order: str = "thread") -> None:
    """:class:`LayoutError` unless ``name`` lays out a ``rows x cols`` tile."""
    if name not in LAYOUTS:
        raise LayoutError(f"layout {name!r}; valid: {', '.join(LAYOUTS)}")
    if order not in ORDERS:
        raise LayoutError(f"fragment_order {order!r}; valid: {', '.join(ORDERS)}")
    frag = FRAGMENTS.get(name)
    if frag is not None and (frag.rows, frag.cols) != (rows, cols):
        raise LayoutError(f"layout {name} is a {frag.rows} x {frag.cols} fragment; this operand's tile is "
                          f"{rows} x {cols}")


def positions(name: str, rows: int, cols: int, order: str = "thread") -> np.ndarray:
    """``[(row, col)]`` of each position of the flat sequence (``rows * cols`` of them, an ``int64``
    array of shape ``[rows * cols, 2]``)."""
    check_layout(name, rows, cols, order)
    if name == "row_major":
        r, c = np.divmod(np.arange(rows * cols), cols)
    elif name == "col_major":
        c, r = np.divmod(np.arange(rows * cols), rows)
    else:
        frag = FRAGMENTS[name]
        lane, i = np.meshgrid(np.arange(THREADS), np.arange(frag.per_thread), indexing="ij")
        if order == "register":
            lane, i = lane.T, i.T
        r, c = frag.place(lane.reshape(-1) >> 2, lane.reshape(-1) % 4, i.reshape(-1))
    out = np.stack([np.asarray(r), np.asarray(c)], axis=1).astype(np.int64)
    seen = np.unique(out[:, 0] * cols + out[:, 1])
    assert seen.size == rows * cols, f"{name}: not a permutation of the tile"      # the table's own check
    return out
