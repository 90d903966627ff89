"""The on-board self-test's numpy model: its operand generator and its signatures, bit for bit.

The board's generator (:class:`fpga.board.selftest.generator.SelfTestGenerator`) and signature folding
(:class:`fpga.board.selftest.engine.SelfTestEngine`) are the gateware of the functions here; tests show
they agree bit for bit.  This module imports no Amaranth: a host (or a campaign shard) computes any
block of any run from ``(seed, kind, entry index)`` alone.

Generator
    Counter-based, stateless.  Entry ``v`` (the unit's input beat, a 32-bit counter) holds
    ``lanes`` dot-adds; lane ``l`` is ``words`` 64-bit words (``words = ceil(lane_bits / 64)``),
    word ``w`` of it is ``arx(v, l * words + w, seed)``: :data:`ROUNDS` rounds of a Speck-like
    add-rotate-xor mix of two 32-bit halves, ``x = (ror(x, 8) + y) ^ k_r``, ``y = rol(y, 3) ^ x``,
    from ``x = v``, ``y = l * words + w``, round keys ``k_r = seed half (r even: low, odd: high)
    + r * 0x9E3779B9`` (mod 2**32), the word ``x << 32 | y``.  No multipliers; one register per
    round in gateware.  The lane's bits are cut into :func:`hw.unit.lane_layout`'s order
    (``a[0..K-1], b[0..K-1], c[, scale_a, scale_b]``, LSB first; :class:`cosim.payload.PayloadLayout`
    with one lane), the words' bits above the layout unused.
Kinds
    ``bits`` (0): the bits as they come: NaN, infinities, subnormals, every exponent.
    ``normal`` (1): each element's exponent field forced into a window of ``2**wb`` consecutive
    values around the bias (:func:`exponent_window`): finite, normal values whose exponents are
    near each other (a random sign and mantissa kept); scale formats (ue8m0, ue4m3) stay near the
    bias too, never their NaN.
Signature
    Per lane and block, CRC-32/MPEG-2 (poly 0x04C11DB7, init 0xFFFFFFFF, MSB first, no reflection,
    no final xor; ``amaranth.lib.crc.catalog.CRC32_MPEG_2`` with ``data_width`` = the result's
    width) of the block's ``block_len`` results in order.  Two different result sequences of a
    block give the same signature with probability about 2**-32 per lane and block (a CRC with a
    primitive-degree polynomial: every error of up to 32 consecutive bits is caught outright).
    For instructions whose NaN bits are not specified (``golden.Params.exact_nan`` False) every
    NaN result is folded as the format's canonical NaN (:func:`canonical_results`), on the board
    and here, so the signature compares under the instruction's NaN rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim.payload import PayloadLayout, get_field
from golden.catalog import Instruction
from golden.formats import Format, get_format, special_bits

__all__ = ["ROUNDS", "KINDS", "CRC_POLY", "CRC_INIT", "KEY_STEP", "arx_words", "exponent_window", "lane_words",
           "operands", "canonical_results", "crc_word", "crc32", "signatures", "block_entries", "check_request",
           "SelfTestSpec"]

ROUNDS = 6                    # ARX rounds per word (a register each): full diffusion of the 64-bit state
KEY_STEP = 0x9E3779B9         # round key r adds r * this to the seed half (the golden ratio, as in TEA)
KINDS = {"bits": 0, "normal": 1}
CRC_POLY = 0x04C11DB7
CRC_INIT = 0xFFFFFFFF
_M32 = np.uint64(0xFFFFFFFF)


def _rol(x, n: int):
    return ((x << np.uint64(n)) | (x >> np.uint64(32 - n))) & _M32


def round_keys(seed: int) -> list[int]:
    """The :data:`ROUNDS` 32-bit round keys of a 64-bit seed."""
    if not 0 <= int(seed) < 1 << 64:
        raise ValueError(f"seed must be an integer in 0..2**64-1, not {seed!r}")
    halves = (int(seed) & 0xFFFFFFFF, int(seed) >> 32)
    return [(halves[r % 2] + r * KEY_STEP) & 0xFFFFFFFF for r in range(ROUNDS)]


def arx_words(v, j, seed: int) -> np.ndarray:
    """The generator's 64-bit word for entry ``v`` and word ``j`` (arrays broadcast; uint64)."""
    x = np.asarray(v, np.uint64) & _M32
    y = np.asarray(j, np.uint64) & _M32
    x, y = np.broadcast_arrays(x, y)
    for k in round_keys(seed):
        x = (((_rol(x, 24)) + y) & _M32) ^ np.uint64(k)        # ror 8 == rol 24
        y = _rol(y, 3) ^ x
    return (x << np.uint64(32)) | y


def lane_words(ins: Instruction) -> int:
    """64-bit generator words per lane: enough for one lane's operand bits."""
    return -(-PayloadLayout(ins, 1).in_width // 64)


@dataclass(frozen=True)
class Window:
    """Where an element's exponent field sits and the window the ``normal`` kind forces it into:
    ``field = lo + (field's own low wb bits)``."""

    offset: int
    width: int
    lo: int
    wb: int


def exponent_window(fmt: Format | str) -> Window:
    """The ``normal`` kind's exponent window of a format: ``2**wb`` values (``wb = min(2,
    exp_bits - 1)``) starting at ``bias - 2**wb / 2``, moved up to 1 (no zeros or subnormals) and
    down below the first exponent field that holds a NaN or infinity."""
    fmt = get_format(fmt)
    wb = min(2, fmt.exp_bits - 1)
    size = 1 << wb
    top = (1 << fmt.exp_bits) - 1                      # the largest field whose every mantissa is finite
    if fmt.inf or fmt.nan in ("ieee", "all_ones", "max_exponent"):
        top -= 1
    lo = min(max(fmt.bias - size // 2, 1), top - size + 1)
    return Window(fmt.ignored_low_bits + fmt.man_bits, fmt.exp_bits, lo, wb)


def _normalise(fmt: Format, x: np.ndarray) -> np.ndarray:
    win = exponent_window(fmt)
    field = (x >> np.uint64(win.offset)) & np.uint64((1 << win.width) - 1)
    forced = np.uint64(win.lo) + (field & np.uint64((1 << win.wb) - 1))
    mask = np.uint64(((1 << win.width) - 1) << win.offset)
    return (x & ~mask) | (forced << np.uint64(win.offset))


def check_request(seed: int, kind, first: int, blocks: int, block_len: int) -> int:
    """A SELFTEST request's fields (``first``: its first entry), checked before they are packed (a bad
    seed would be a ``struct.error``, a bad kind or length a buffer error from the board); returns the
    kind's code."""
    round_keys(seed)
    block_entries(0, block_len, blocks)
    if not 0 <= first or first + blocks * block_len > 1 << 32:
        raise ValueError(f"entries {first}..{first + blocks * block_len - 1} do not fit the self-test's 32-bit "
                         f"entry counter (entries 0..2**32-1)")
    return _check_kind(kind)


def _check_kind(kind) -> int:
    if isinstance(kind, str):
        if kind not in KINDS:
            raise ValueError(f"unknown self-test kind {kind!r}; valid kinds: {', '.join(KINDS)}")
        return KINDS[kind]
    if kind not in KINDS.values():
        raise ValueError(f"unknown self-test kind {kind!r}; valid kinds: {', '.join(KINDS)} ({list(KINDS.values())})")
    return int(kind)


def operands(ins: Instruction, lanes: int, seed: int, kind, first: int, entries: int):
    """The generator's dot-adds of entries ``first .. first + entries - 1`` (mod 2**32) as golden
    bit-API operands ``(a [R, K], b [R, K], c [R], scale_a, scale_b)``, ``R = entries * lanes``,
    row ``e * lanes + l`` for entry ``first + e``, lane ``l`` (the board's order)."""
    kind = _check_kind(kind)
    layout = PayloadLayout(ins, 1)
    nw = -(-layout.in_width // 64)
    v = (np.uint64(first) + np.arange(entries, dtype=np.uint64)) & _M32
    j = np.arange(lanes * nw, dtype=np.uint64)
    words = arx_words(v[:, None], j[None, :], seed).reshape(entries * lanes, nw)
    words = np.concatenate([words, np.zeros((words.shape[0], 1), np.uint64)], axis=1)   # spill word
    fmts = {"a": ins.formats[0], "b": ins.formats[1], "c": ins.formats[2]}
    if ins.scale_format:
        fmts["scale_a"] = fmts["scale_b"] = get_format(ins.scale_format)
    out = {name: np.zeros((entries * lanes, layout.counts[name]), np.uint64) for name in fmts}
    for f in layout.fields:
        x = get_field(words, f.offset, f.width)
        out[f.name][:, f.index] = _normalise(fmts[f.name], x) if kind == KINDS["normal"] else x
    return (out["a"], out["b"], out["c"][:, 0], out.get("scale_a"), out.get("scale_b"))


def canonical_results(ins: Instruction, d) -> np.ndarray:
    """Results as the signature folds them: every NaN as the canonical NaN where the instruction's
    NaN bits are not specified (``exact_nan`` False), else unchanged (uint64)."""
    d = np.asarray(d, np.uint64)
    if ins.params.exact_nan:
        return d
    fd = ins.formats[3]
    if fd.nan != "ieee":
        raise NotImplementedError(f"a self-test signature of {fd.name} results with unspecified NaN bits")
    exp = (d >> np.uint64(fd.man_bits)) & np.uint64((1 << fd.exp_bits) - 1)
    nan = (exp == np.uint64((1 << fd.exp_bits) - 1)) & ((d & np.uint64((1 << fd.man_bits) - 1)) != 0)
    return np.where(nan, np.uint64(special_bits(fd, "nan")), d)


def crc_word(crc: int, word: int, width: int) -> int:
    """The CRC register after one ``width``-bit word, MSB first, bit by bit: the definition the byte
    table below and the gateware's update matrices (:mod:`fpga.board.selftest.crc`) are made from."""
    for bit in range(width - 1, -1, -1):
        feedback = (crc >> 31 ^ word >> bit) & 1
        crc = (crc << 1 & 0xFFFFFFFF) ^ (CRC_POLY if feedback else 0)
    return crc


def _byte_table() -> np.ndarray:
    return np.array([crc_word(byte << 24, 0, 8) for byte in range(256)], np.uint64)


_TABLE = _byte_table()


def crc32(words, width: int) -> np.ndarray:
    """CRC-32/MPEG-2 of ``width``-bit words, MSB first, along the last axis (uint64 [...]): what
    ``amaranth.lib.crc.catalog.CRC32_MPEG_2(data_width=width).compute`` gives, vectorised over the
    other axes."""
    words = np.asarray(words, np.uint64)
    crc = np.full(words.shape[:-1], CRC_INIT, np.uint64)
    for n in range(words.shape[-1]):
        word = words[..., n]
        if width % 8 == 0:
            for shift in range(width - 8, -1, -8):
                byte = (word >> np.uint64(shift)) & np.uint64(0xFF)
                crc = ((crc << np.uint64(8)) & _M32) ^ _TABLE[(crc >> np.uint64(24)) ^ byte]
        else:
            for bit in range(width - 1, -1, -1):
                feedback = ((crc >> np.uint64(31)) ^ (word >> np.uint64(bit))) & np.uint64(1)
                crc = ((crc << np.uint64(1)) & _M32) ^ (feedback * np.uint64(CRC_POLY))
    return crc


def signatures(ins: Instruction, lanes: int, d, block_len: int) -> np.ndarray:
    """Per block and lane, the signature of results ``d`` (rows in the board's order, a whole
    number of blocks of ``block_len`` entries): uint64 ``[blocks, lanes]``."""
    d = canonical_results(ins, d).reshape(-1, block_len, lanes)
    return crc32(np.moveaxis(d, 1, 2), ins.formats[3].storage_bits)


def block_entries(first_block: int, block_len: int, blocks: int = 1) -> tuple[int, int]:
    """``(first entry, entries)`` of ``blocks`` blocks from ``first_block``: ValueError unless they
    fit the generator's 32-bit entry counter."""
    if blocks < 1:
        raise ValueError(f"the self-test checks at least one block, not {blocks} (--blocks, BLOCKS=)")
    if not 1 <= block_len <= 0xFFFF:
        raise ValueError(f"block_len must be 1..65535 entries, not {block_len!r} (--block-len, BLOCK=)")
    first, n = first_block * block_len, blocks * block_len
    if first_block < 0 or first + n > 1 << 32:
        raise ValueError(f"blocks {first_block}..{first_block + blocks - 1} of {block_len} entries do not fit "
                         f"the self-test's 32-bit entry counter (entries 0..2**32-1)")
    return first, n


@dataclass(frozen=True)
class SelfTestSpec:
    """What one self-test run checks: an instruction, lanes, seed, kind, block length."""

    ins: Instruction
    lanes: int
    seed: int
    kind: str
    block_len: int

    def __post_init__(self):
        _check_kind(self.kind)
        round_keys(self.seed)
        if not isinstance(self.block_len, int) or not 1 <= self.block_len <= 0xFFFF:
            raise ValueError(f"block_len must be 1..65535 entries, not {self.block_len!r}")

    def operands(self, first_block: int, blocks: int = 1):
        first, n = block_entries(first_block, self.block_len, blocks)
        return operands(self.ins, self.lanes, self.seed, self.kind, first, n)

    def signatures(self, d) -> np.ndarray:
        return signatures(self.ins, self.lanes, d, self.block_len)
