"""The self-test's CRC in two register stages: the data's part of the update, then the state's.

A CRC register after one ``w``-bit word is linear over GF(2) in the register and the word:
``crc' = A crc ^ B word`` (no constant: CRC-32/MPEG-2 has no final xor, and the initial value is
only where a chain starts).  ``amaranth.lib.crc.Processor`` computes both parts and their XOR in one
cycle, a tree about 64 inputs deep in front of each state bit, from the results' register across
the chip: the HGMMA F32 board top's critical path at 100 MHz (85.42 MHz, 9.29 ns of it routing).
Here ``B word`` is registered first (it needs only the word) and the state register takes
``A crc ^ that``: each cycle's tree is half as deep, the signature the same, one cycle later.
"""

from __future__ import annotations

from functools import cache

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .model import CRC_INIT, crc_word

__all__ = ["SplitCRC", "CRC_BITS", "update_matrices"]

CRC_BITS = 32


@cache
def update_matrices(width: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(state_taps, data_taps)``: for each CRC bit ``k``, the mask of register bits and the mask
    of word bits whose XOR is bit ``k`` after one word (the columns of ``A`` and ``B``, by linearity)."""
    state, data = [0] * CRC_BITS, [0] * CRC_BITS
    for j in range(CRC_BITS):
        column = crc_word(1 << j, 0, width)
        for k in range(CRC_BITS):
            state[k] |= (column >> k & 1) << j
    for i in range(width):
        column = crc_word(0, 1 << i, width)
        for k in range(CRC_BITS):
            data[k] |= (column >> k & 1) << i
    return tuple(state), tuple(data)


def _xor_of(value, mask: int):
    taps = [value[i] for i in range(len(value)) if mask >> i & 1]
    return Cat(*taps).xor() if taps else 0


class SplitCRC(wiring.Component):
    """CRC-32/MPEG-2 of a stream of ``width``-bit words, the update split over two registers.

    Parameters
    ----------
    width : int
        Bits per word (the result format's storage bits).

    Members
    -------
    first : In(1)
        With ``valid``: this word starts a new CRC (from the initial value).
    valid : In(1)
        ``data`` is a word of the current CRC.
    data : In(width)
        The word.
    crc : Out(32)
        The register: the CRC through the word given two cycles before (``valid`` then).
    """

    def __init__(self, width: int):
        if not isinstance(width, int) or width < 1:
            raise ValueError(f"a CRC word has at least one bit, not {width!r}")
        self.width = width
        super().__init__({"first": In(1), "valid": In(1), "data": In(width), "crc": Out(CRC_BITS)})

    def elaborate(self, platform):
        m = Module()
        state_taps, data_taps = update_matrices(self.width)
        part, part_valid, part_first = Signal(CRC_BITS), Signal(), Signal()
        m.d.sync += [part_valid.eq(self.valid), part_first.eq(self.first)]
        with m.If(self.valid):
            m.d.sync += part.eq(Cat(*[_xor_of(self.data, taps) for taps in data_taps]))
        # the chain's start: A applied to the initial value is a constant
        from_init = crc_word(CRC_INIT, 0, self.width)
        from_state = Cat(*[_xor_of(self.crc, taps) for taps in state_taps])
        with m.If(part_valid):
            m.d.sync += self.crc.eq(Mux(part_first, from_init, from_state) ^ part)
        return m
