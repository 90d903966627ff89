"""A stand-in board top: a unit fed by an LFSR, its results folded onto an LED.

For building and timing a unit on a board without the host link (``fpga.board.top.BoardTop``): the
unit's input is a shift register of pseudo-random bits (a 31-bit LFSR shifts one new bit in per
cycle), every input is valid and every output is taken, and the XOR of all result bits drives
LED 0, so synthesis keeps the whole datapath.  The UART's receive pin is looped back to its
transmit pin, so the build places the same pins as the real top.
"""

from __future__ import annotations

from amaranth import Cat, Elaboratable, Module, Signal, Value
from amaranth.lib import io

import hw

LFSR_BITS = 31
LFSR_TAPS = (31, 28)          # x^31 + x^28 + 1: maximal length


class StandInTop(Elaboratable):
    """A unit on a board, driven by an LFSR (see the module docstring).

    Parameters
    ----------
    unit : wiring.Component
        Any component with an input stream ``i`` and an output stream ``o`` (a
        ``hw.dot_add_unit`` or a ``hw.TensorCore``).
    """

    def __init__(self, unit):
        self.unit = unit

    @classmethod
    def dot_add(cls, ins, lanes: int = 1) -> StandInTop:
        """The stand-in around ``hw.dot_add_unit(ins, lanes)``."""
        return cls(hw.dot_add_unit(ins, lanes))

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = self.unit
        in_bits = len(Value.cast(unit.i.payload))

        lfsr = Signal(LFSR_BITS, init=1)
        feedback = lfsr[LFSR_TAPS[0] - 1] ^ lfsr[LFSR_TAPS[1] - 1]
        m.d.sync += lfsr.eq(Cat(feedback, lfsr[:-1]))
        operands = Signal(in_bits)
        m.d.sync += operands.eq(Cat(lfsr[0], operands[:-1]))

        folded = Signal()
        m.d.comb += [unit.i.payload.eq(operands), unit.i.valid.eq(1), unit.o.ready.eq(1)]
        m.d.sync += folded.eq(unit.o.valid & Value.cast(unit.o.payload).xor())

        if platform is not None:
            m.submodules.led = led = io.Buffer("o", platform.request("led", 0, dir="-"))
            uart = platform.request("uart", 0, dir="-")
            m.submodules.uart_rx = rx = io.Buffer("i", uart.rx)
            m.submodules.uart_tx = tx = io.Buffer("o", uart.tx)
            m.d.comb += [led.o.eq(folded), tx.o.eq(rx.i)]
        return m
