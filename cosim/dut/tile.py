"""Tile devices: one transaction is a whole instruction, A, B, C (and scale) tiles in over beats, D out.

The harness moves one transaction per handshake.  The adapter (:mod:`cosim.dut.adapter`, tile part)
holds a transaction's payload, feeds it to the design beat by beat in each operand's layout, and
collects D's beats into one result payload.  Here: that payload's layout (:class:`TileLayout`), the
reference (golden's whole tile, :func:`golden.tile.tile_mma`), and the hooks that score and capture
whole tiles (:class:`TileScore`, :class:`TileCapture`).

Payload: ``A`` row-major (``M x k`` elements of a's storage bits), then ``B`` (``k x N``), ``C``
(``M x N``), ``scale_A`` (``M x k/block``) and ``scale_B`` (``k/block x N``), element 0 in the low
bits.  Result: ``D`` row-major, then one **framing bit**, set when the design's ``out_last`` marked
another beat than the transaction's last (always 0 without ``out_last``).
"""

from __future__ import annotations

import numpy as np

import golden
from golden.tile import slices, tile_mma

from ..payload import get_field, put_field
from ..session import OPERANDS, Hook, Score

TILE_OPERANDS = ("a", "b", "c", "scale_a", "scale_b")
FRAMING = "framing"


class TileLayout:
    """The payload of one transaction of a ``tile`` (:class:`cosim.dut.description.Tile`) for ``ins``."""

    lanes = 1                         # one transaction per harness beat

    def __init__(self, ins, tile):
        self.ins, self.tile = ins, tile
        self.slices = slices(ins, tile.k)
        fa, fb, fc, fd = ins.formats
        self.widths = {"a": fa.storage_bits, "b": fb.storage_bits, "c": fc.storage_bits, "d": fd.storage_bits}
        self.shapes = {name: tile.shape(name, ins.block_size) for name in ("a", "b", "c", "d")}
        names = ("a", "b", "c")
        if ins.scale_format:
            ws = golden.get_format(ins.scale_format).storage_bits
            self.widths["scale_a"] = self.widths["scale_b"] = ws
            for name in ("scale_a", "scale_b"):
                self.shapes[name] = tile.shape(name, ins.block_size)
            names += ("scale_a", "scale_b")
        self.inputs = names
        self.base, off = {}, 0
        for name in names:
            self.base[name] = off
            rows, cols = self.shapes[name]
            off += rows * cols * self.widths[name]
        self.in_width = off
        m, n = self.shapes["d"]
        self.out_elements = m * n
        self.framing_bit = m * n * self.widths["d"]
        self.out_width = self.framing_bit + 1
        self.in_words = (self.in_width + 63) // 64
        self.out_words = (self.out_width + 63) // 64
        self.dot_adds = m * n * self.slices              # dot-adds one transaction computes

    def __repr__(self) -> str:
        t = self.tile
        return f"TileLayout({self.ins.arch} {self.ins.name}, m{t.m}n{t.n}k{t.k}: in {self.in_width} bits)"

    def offset(self, name: str, row: int, col: int) -> int:
        """The payload bit of element ``(row, col)`` of ``name`` (d: of the result payload)."""
        cols = self.shapes[name][1]
        base = 0 if name == "d" else self.base[name]
        return base + (row * cols + col) * self.widths[name]

    def beats(self, n_vectors: int) -> int:
        return n_vectors

    def pack(self, A, B, C, scale_A=None, scale_B=None) -> np.ndarray:
        """Input payload words ``[t, in_words]`` of ``t`` transactions."""
        ops = dict(zip(TILE_OPERANDS, (A, B, C, scale_A, scale_B)))
        t = np.asarray(C).shape[0]
        words = np.zeros((t, self.in_words + 1), np.uint64)
        for name in self.inputs:
            x = np.asarray(ops[name], np.uint64)
            rows, cols = self.shapes[name]
            if x.shape != (t, rows, cols):
                raise ValueError(f"{name}: expected shape ({t}, {rows}, {cols}), got {x.shape}")
            flat = x.reshape(t, rows * cols)
            w = self.widths[name]
            for e in range(rows * cols):
                put_field(words, flat[:, e], self.base[name] + e * w, w)
        return words[:, :self.in_words]

    def unpack_out(self, words: np.ndarray) -> np.ndarray:
        """``[t, M*N + 1]``: each transaction's D (row-major bit patterns), then its framing bit."""
        words = np.asarray(words, np.uint64)
        w = self.widths["d"]
        out = np.empty((words.shape[0], self.out_elements + 1), np.uint64)
        for e in range(self.out_elements):
            out[:, e] = get_field(words, e * w, w)
        out[:, -1] = get_field(words, self.framing_bit, 1)
        return out


def reference(ins, tile):
    """The reference of a tile device's transactions: ``ref(ins, A, B, C, sA, sB) -> D [t, M*N]``."""
    def ref(_ins, A, B, C, scale_A=None, scale_B=None):
        D = tile_mma(ins, A, B, C, scale_A, scale_B)
        return D.reshape(D.shape[0], -1)
    return ref


def identities(D: np.ndarray) -> np.ndarray:
    """One number per transaction that tells different tiles apart (for the order diagnosis of
    :mod:`cosim.dut.order`, which compares one result per transfer)."""
    D = np.asarray(D, np.uint64)
    mult = (np.arange(D.shape[1], dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) | np.uint64(1)
    with np.errstate(over="ignore"):
        return (D * mult).sum(axis=1, dtype=np.uint64) ^ (D[:, 0] << np.uint64(7))


class TileScore(Score):
    """Score whole tiles: every element of D against golden's tile, counting elements; keeps the failing
    transactions, the first results (the X check), the batch around the first difference (the order
    diagnosis, on :func:`identities`) and the transactions whose framing bit is set."""

    def __init__(self, ins, tile, keep_first: int, max_saved: int = 100):
        super().__init__(ins, reference(ins, tile), max_saved=max_saved)
        self.first = np.zeros((0, tile.m * tile.n), np.uint64)
        self.keep_first = keep_first
        self.window = None
        self.bad_transactions = 0
        self.framing: list = []                     # stream indices of transactions with a wrong out_last

    def produced(self, batch) -> None:
        batch.expected = np.asarray(self.reference(self.ins, *batch.ops), np.uint64)

    def finished(self, batch, got) -> None:
        got, flags = got[:, :-1], got[:, -1]
        if len(self.first) < self.keep_first:
            self.first = np.concatenate([self.first, got[:self.keep_first - len(self.first)]])
        expected = batch.expected[:batch.used]
        bad = golden.mismatching(self.ins, got.reshape(-1), expected.reshape(-1))
        self.framing += [batch.start + int(i) for i in np.nonzero(flags)[0][:16 - len(self.framing)]]
        if not bad.size:
            return
        self.count += bad.size
        rows = np.unique(bad // got.shape[1])
        self.bad_transactions += rows.size
        if self.window is None:
            self.window = (identities(got), identities(expected), batch.start)
        keep = rows[:max(0, self.max_saved - self._kept_count)]
        if keep.size:
            rec = {name: None if x is None else x[keep] for name, x in zip(OPERANDS, batch.ops)}
            rec.update(expected=expected[keep], got=got[keep], index=batch.start + keep)
            self._kept.append(rec)
            self._kept_count += keep.size

    def partial(self, batch, got) -> None:
        if self.window is None and len(got):
            self.window = (identities(got[:, :-1]), identities(batch.expected[:batch.used]), batch.start)

    @property
    def failed(self) -> bool:
        return self.count > 0 or bool(self.framing)


class TileCapture(Hook):
    """Keep every transaction's D: ``d[t]`` (``[n, M*N]``) and the framing bits."""

    def __init__(self, n: int, elements: int):
        self.d = np.zeros((n, elements), np.uint64)
        self.framing = np.zeros(n, bool)
        self.filled = 0

    def finished(self, batch, got) -> None:
        self.d[batch.start:batch.start + len(got)] = got[:, :-1]
        self.framing[batch.start:batch.start + len(got)] = got[:, -1] != 0
        self.filled += len(got)
