"""The unit's payload layout and its fast, vectorised packing to and from hex files.

Input payload of one beat (one handshake), LSB first, for each lane:
``a[0..K-1]`` (``fa.storage_bits`` each, golden bit patterns as they are),
``b[0..K-1]``, ``c`` (``fc.storage_bits``), then, if the instruction is
block-scaled, ``scale_a[0..K/block-1]`` and ``scale_b[...]`` (8 bits each).
Lane 0 sits in the low bits.  Output payload: ``d`` of each lane
(``fd.storage_bits`` each), lane 0 in the low bits.

Vector ``v`` of a run travels in beat ``v // lanes``, lane ``v % lanes``.

Payloads are held as little-endian arrays of 64-bit words (``[beats, words]``)
and travel to and from the harness as raw little-endian 32-bit words
(:func:`tb.protocol.to_words32`, :func:`tb.protocol.from_words32`); hex helpers
for ``$readmemh`` / ``$writememh`` files are here.
Everything is numpy: no Python loop runs per vector.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from golden import Instruction, get_format

_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", np.uint8)
_HEX_VALUE = np.full(256, 255, np.uint8)
for _i, _ch in enumerate(b"0123456789abcdef"):
    _HEX_VALUE[_ch] = _i
for _i, _ch in enumerate(b"ABCDEF"):
    _HEX_VALUE[_ch] = 10 + _i
_HEX_VALUE[ord("x")] = _HEX_VALUE[ord("X")] = _HEX_VALUE[ord("z")] = _HEX_VALUE[ord("Z")] = 254   # unknown bits


@dataclass(frozen=True)
class Field:
    """One operand element in the payload: ``name`` is a, b, c, scale_a or scale_b."""

    name: str
    lane: int
    index: int
    offset: int
    width: int


class PayloadLayout:
    """Bit layout of the input and output payloads of a ``lanes``-wide unit for ``ins``."""

    def __init__(self, ins: Instruction, lanes: int = 1):
        if lanes < 1:
            raise ValueError(f"lanes must be >= 1, got {lanes}")
        self.ins = ins
        self.lanes = lanes
        fa, fb, fc, fd = ins.formats
        k = ins.k
        nblk = k // ins.block_size if ins.scale_format else 0
        ws = get_format(ins.scale_format).storage_bits if ins.scale_format else 0
        self.widths = {"a": fa.storage_bits, "b": fb.storage_bits, "c": fc.storage_bits,
                       "scale_a": ws, "scale_b": ws, "d": fd.storage_bits}
        self.counts = {"a": k, "b": k, "c": 1, "scale_a": nblk, "scale_b": nblk}
        fields = []
        off = 0
        for lane in range(lanes):
            for name in ("a", "b", "c", "scale_a", "scale_b"):
                for j in range(self.counts[name]):
                    fields.append(Field(name, lane, j, off, self.widths[name]))
                    off += self.widths[name]
        self.fields = tuple(fields)
        self.in_width = off
        self.lane_in_width = off // lanes
        self.out_width = lanes * fd.storage_bits
        self.in_words = (self.in_width + 63) // 64
        self.out_words = (self.out_width + 63) // 64

    def __repr__(self) -> str:
        return (f"PayloadLayout({self.ins.arch} {self.ins.name}, lanes={self.lanes}: "
                f"in {self.in_width} bits, out {self.out_width} bits)")

    # ---- packing -----------------------------------------------------------------------------------

    def beats(self, n_vectors: int) -> int:
        return -(-n_vectors // self.lanes)

    def pack(self, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
        """Input payload words ``[beats, in_words]`` of ``n`` dot-adds (a, b: ``[n, K]``; c: ``[n]``).

        ``n`` must be a multiple of ``lanes``.
        """
        ops = {"a": np.asarray(a, np.uint64), "b": np.asarray(b, np.uint64),
               "c": np.asarray(c, np.uint64).reshape(-1, 1)}
        n = ops["c"].shape[0]
        if n % self.lanes:
            raise ValueError(f"{n} vectors do not fill {self.lanes} lanes; pad to a multiple")
        if self.counts["scale_a"]:
            if scale_a is None or scale_b is None:
                raise ValueError(f"{self.ins.name} is block-scaled: pack needs scale_a and scale_b")
            ops["scale_a"] = np.asarray(scale_a, np.uint64)
            ops["scale_b"] = np.asarray(scale_b, np.uint64)
        for name, x in ops.items():
            if x.shape != (n, self.counts[name]):
                raise ValueError(f"{name}: expected shape ({n}, {self.counts[name]}), got {x.shape}")
            if self.widths[name] < 64 and (x >> np.uint64(self.widths[name])).any():
                raise ValueError(f"{name}: a bit pattern is wider than {self.widths[name]} bits")
        beats = n // self.lanes
        words = np.zeros((beats, self.in_words + 1), np.uint64)     # one spare word for spills
        lane_ops = {name: x.reshape(beats, self.lanes, -1) for name, x in ops.items()}
        for f in self.fields:
            put_field(words, lane_ops[f.name][:, f.lane, f.index], f.offset, f.width)
        return words[:, :self.in_words]

    def pack_out(self, d) -> np.ndarray:
        """Output payload words ``[beats, out_words]`` of ``n`` results (the expected stream)."""
        d = np.asarray(d, np.uint64).reshape(-1, self.lanes)
        words = np.zeros((d.shape[0], self.out_words + 1), np.uint64)
        w = self.widths["d"]
        for lane in range(self.lanes):
            put_field(words, d[:, lane], lane * w, w)
        return words[:, :self.out_words]

    def unpack_out(self, words: np.ndarray) -> np.ndarray:
        """Results ``d [beats * lanes]`` (uint64 bit patterns) from output payload words."""
        words = np.asarray(words, np.uint64)
        w = self.widths["d"]
        d = np.empty((words.shape[0], self.lanes), np.uint64)
        for lane in range(self.lanes):
            d[:, lane] = get_field(words, lane * w, w)
        return d.reshape(-1)

    def unpack_in(self, words: np.ndarray):
        """``(a, b, c, scale_a, scale_b)`` from input payload words (the inverse of :meth:`pack`)."""
        words = np.asarray(words, np.uint64)
        beats = words.shape[0]
        out = {name: np.zeros((beats, self.lanes, cnt), np.uint64) for name, cnt in self.counts.items() if cnt}
        for f in self.fields:
            out[f.name][:, f.lane, f.index] = get_field(words, f.offset, f.width)
        res = {name: x.reshape(beats * self.lanes, -1) for name, x in out.items()}
        c = res["c"][:, 0]
        return res["a"], res["b"], c, res.get("scale_a"), res.get("scale_b")


def put_field(words: np.ndarray, x: np.ndarray, offset: int, width: int) -> None:
    """OR ``x`` (one value per row, ``width`` bits) into rows of 64-bit words at bit ``offset``.

    ``words`` needs one spare word at the end where a field may spill over.
    """
    wi, sh = divmod(offset, 64)
    x = x.astype(np.uint64, copy=False)
    words[:, wi] |= x << np.uint64(sh)
    if sh + width > 64:
        words[:, wi + 1] |= x >> np.uint64(64 - sh)


def get_field(words: np.ndarray, offset: int, width: int) -> np.ndarray:
    """The ``width``-bit field at bit ``offset`` of each row of 64-bit words (the inverse of :func:`put_field`)."""
    wi, sh = divmod(offset, 64)
    x = words[:, wi] >> np.uint64(sh)
    if sh + width > 64:
        x = x | (words[:, wi + 1] << np.uint64(64 - sh))
    if width < 64:
        x = x & np.uint64((1 << width) - 1)
    return x


# ---- hex files ($readmemh / $writememh) ------------------------------------------------------------

def to_hex(words: np.ndarray, width: int) -> bytes:
    """One line per row, ``ceil(width / 4)`` hex digits, most significant first."""
    words = np.ascontiguousarray(words, np.uint64)
    rows, nw = words.shape
    digits = -(-width // 4)
    be = words[:, ::-1].astype(">u8").view(np.uint8).reshape(rows, nw * 8)
    nib = np.empty((rows, nw * 16 + 1), np.uint8)
    nib[:, 0:-1:2] = _HEX_DIGITS[be >> 4]
    nib[:, 1:-1:2] = _HEX_DIGITS[be & 15]
    nib[:, -1] = ord("\n")
    return nib[:, nw * 16 - digits:].tobytes()


class HexError(ValueError):
    pass


def from_hex(data: bytes, width: int, rows: int | None = None) -> np.ndarray:
    """Rows of 64-bit words from ``$writememh`` text (comments and blank lines are skipped).

    Unknown digits (x, z) raise :class:`HexError`.
    """
    digits = -(-width // 4)
    nw = (width + 63) // 64
    buf = np.frombuffer(data, np.uint8)
    fixed = buf.size % (digits + 1) == 0 and (buf.size == 0 or (buf[digits::digits + 1] == ord("\n")).all())
    if fixed and not (buf.size and buf[0] == ord("/")):
        lines = buf.reshape(-1, digits + 1)[:, :digits]
    else:                                           # general text: comments, @addresses, other widths
        texts = [ln.split("//")[0].strip() for ln in data.decode("ascii").splitlines()]
        texts = [t for t in texts if t and not t.startswith("@")]
        if any(len(t) > digits for t in texts):
            raise HexError(f"hex line wider than {digits} digits")
        lines = np.frombuffer("".join(t.rjust(digits, "0") for t in texts).encode(), np.uint8)
        lines = lines.reshape(-1, digits)
    if rows is not None and lines.shape[0] != rows:
        raise HexError(f"expected {rows} hex lines, found {lines.shape[0]}")
    nib = _HEX_VALUE[lines]
    if (nib >= 254).any():
        r = int(np.nonzero((nib >= 254).any(axis=1))[0][0])
        raise HexError(f"line {r + 1} holds unknown (x/z) bits: {lines[r].tobytes().decode()}")
    if (nib == 255).any():
        raise HexError("not a hex file")
    pad = nw * 16 - digits
    if pad:
        nib = np.concatenate([np.zeros((nib.shape[0], pad), np.uint8), nib], axis=1)
    nib = nib.reshape(-1, nw, 16).astype(np.uint64)
    shifts = np.arange(60, -1, -4, dtype=np.uint64)
    words_be = (nib << shifts).sum(axis=2, dtype=np.uint64)      # disjoint bits: sum == or
    return np.ascontiguousarray(words_be[:, ::-1])
