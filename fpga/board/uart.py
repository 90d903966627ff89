"""UART physical layer: 8N1 frames (one start bit, eight data bits LSB first, one stop bit).

:func:`clocks_per_bit` turns a clock frequency and a baud rate into the bit period in clock
cycles, refusing rates the receiver could not follow; :class:`UARTRx` and :class:`UARTTx` are
the receiver and the transmitter for that period.  Both run in the ``sync`` domain.

The receiver samples each bit in its middle, timed from the falling edge of the start bit, and
re-arms in the middle of the stop bit, so it follows back-to-back frames from a sender whose
rate is off by a few per cent (with :data:`MAX_RATE_ERROR` for the clock divider and as much
again for the sender, the stop bit is sampled at most 0.38 bit from its middle).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from hw.pipeline import Checked

__all__ = ["MAX_RATE_ERROR", "MIN_CLOCKS_PER_BIT", "FRAME_BITS", "clocks_per_bit", "UARTRx", "UARTTx"]

MAX_RATE_ERROR = 0.02        # the clock divider's rate error we accept (the sender may add as much)
MIN_CLOCKS_PER_BIT = 4       # below this the mid-bit sampling point is off by a quarter bit or more
DATA_BITS = 8
FRAME_BITS = 1 + DATA_BITS + 1    # start, data, stop


def _check_int(name: str, value, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


def _nearby_bauds(clock_hz: int, baud: int) -> list[int]:
    """The exact bauds (``clock_hz / n``, rounded) of the dividers just below and above the request."""
    below = max(clock_hz // baud, MIN_CLOCKS_PER_BIT)
    dividers = sorted({below, below + 1} if below * baud != clock_hz else {below})
    return [round(clock_hz / n) for n in reversed(dividers)]   # slowest first


def clocks_per_bit(clock_hz: int, baud: int) -> int:
    """The bit period in cycles of ``clock_hz``: ``round(clock_hz / baud)``.

    Parameters
    ----------
    clock_hz : int
        Frequency of the ``sync`` clock, in Hz.
    baud : int
        Line rate, in bits per second.

    Returns
    -------
    int
        Clock cycles per bit, at least :data:`MIN_CLOCKS_PER_BIT`.

    Raises
    ------
    ValueError
        When an argument is not a positive int, when the bit would be shorter than
        :data:`MIN_CLOCKS_PER_BIT` cycles (the message names the highest baud), or when the
        rounded divider misses ``baud`` by more than :data:`MAX_RATE_ERROR` (the message names the
        rate error and the nearby bauds that this clock makes exactly).
    """
    _check_int("clock_hz", clock_hz, 1)
    _check_int("baud", baud, 1)
    n = round(clock_hz / baud)
    if n < MIN_CLOCKS_PER_BIT:
        raise ValueError(f"baud {baud} is too fast for a {clock_hz} Hz clock: {clock_hz / baud:.2f} clocks per bit, "
                         f"need >= {MIN_CLOCKS_PER_BIT}; valid bauds are up to {clock_hz // MIN_CLOCKS_PER_BIT}")
    error = clock_hz / n / baud - 1
    if abs(error) > MAX_RATE_ERROR:
        nearby = ", ".join(str(b) for b in _nearby_bauds(clock_hz, baud))
        raise ValueError(f"baud {baud} with a {clock_hz} Hz clock: {n} clocks per bit give {clock_hz / n:.0f} baud, "
                         f"a rate error of {error:+.2%} (at most {MAX_RATE_ERROR:.0%} allowed); "
                         f"nearby valid bauds: {nearby}")
    return n


def _check_clocks_per_bit(value) -> int:
    _check_int("clocks_per_bit", value, MIN_CLOCKS_PER_BIT)
    return value


class UARTRx(Checked, wiring.Component):
    """8N1 receiver.

    The pin goes through a two-flip-flop synchroniser.  A low level in idle starts a frame; it is
    checked again half a bit later, and a line that is high again by then was a glitch (ignored).
    Each data bit is sampled one bit period after the previous one; the stop bit, sampled in its
    middle, ends the frame: high gives the byte, low gives a framing error pulse (the byte is
    dropped) and the receiver waits for the line to go high before it looks for a start bit.

    Parameters
    ----------
    clocks_per_bit : int
        Bit period in ``sync`` cycles (see :func:`clocks_per_bit`), at least
        :data:`MIN_CLOCKS_PER_BIT`.

    Members
    -------
    rx : In(1, init=1)
        The serial pin, idle high; asynchronous.  (``init=1``: an undriven pin in simulation is idle.)
    o : Out(stream.Signature(8, always_ready=True))
        One byte per good frame, valid for one cycle.
    framing_error : Out(1)
        One-cycle pulse for a frame whose stop bit was low.
    """

    @classmethod
    def check(cls, clocks_per_bit: int) -> None:
        _check_clocks_per_bit(clocks_per_bit)

    def __init__(self, clocks_per_bit: int):
        self._clocks_per_bit = clocks_per_bit
        super().__init__({
            "rx": In(1, init=1),
            "o": Out(stream.Signature(DATA_BITS, always_ready=True)),
            "framing_error": Out(1),
        })

    @property
    def clocks_per_bit(self) -> int:
        return self._clocks_per_bit

    def elaborate(self, platform):
        m = Module()
        n = self._clocks_per_bit
        line = Signal(init=1)
        m.submodules.sync = FFSynchronizer(self.rx, line, init=1)

        countdown = Signal(range(n))        # cycles to the next sampling point
        shift = Signal(DATA_BITS)
        bits_left = Signal(range(DATA_BITS + 1))
        at_sample = countdown == 0
        with m.If(~at_sample):
            m.d.sync += countdown.eq(countdown - 1)

        with m.FSM():
            with m.State("IDLE"):
                with m.If(~line):
                    m.d.sync += countdown.eq(n // 2 - 1)     # to the middle of the start bit
                    m.next = "START"
            with m.State("START"):
                with m.If(at_sample):
                    m.d.sync += [countdown.eq(n - 1), bits_left.eq(DATA_BITS)]
                    m.next = "DATA"
                    with m.If(line):                          # high again: it was a glitch
                        m.next = "IDLE"
            with m.State("DATA"):
                with m.If(at_sample):
                    m.d.sync += [shift.eq(Cat(shift[1:], line)), bits_left.eq(bits_left - 1),
                                 countdown.eq(n - 1)]
                    with m.If(bits_left == 1):
                        m.next = "STOP"
            with m.State("STOP"):
                with m.If(at_sample):
                    # re-armed in the middle of the stop bit: a sender a little fast starts its
                    # next frame before our bit period ends
                    m.d.comb += [self.o.valid.eq(line), self.framing_error.eq(~line)]
                    m.next = "IDLE"
                    with m.If(~line):
                        m.next = "BREAK"
            with m.State("BREAK"):
                with m.If(line):
                    m.next = "IDLE"
        m.d.comb += self.o.payload.eq(shift)
        return m


class UARTTx(Checked, wiring.Component):
    """8N1 transmitter.

    A byte is taken from ``i`` only while the transmitter is idle; its frame starts on the next
    cycle.  The last cycle of a stop bit counts as idle, so a byte waiting in ``i`` follows the
    previous frame with no gap (one frame every ``10 * clocks_per_bit`` cycles).  ``tx`` comes
    straight from a flip-flop (no glitches on the pin).

    Parameters
    ----------
    clocks_per_bit : int
        Bit period in ``sync`` cycles (see :func:`clocks_per_bit`), at least
        :data:`MIN_CLOCKS_PER_BIT`.

    Members
    -------
    i : In(stream.Signature(8))
        Bytes to send.
    tx : Out(1, init=1)
        The serial pin, idle high.
    """

    @classmethod
    def check(cls, clocks_per_bit: int) -> None:
        _check_clocks_per_bit(clocks_per_bit)

    def __init__(self, clocks_per_bit: int):
        self._clocks_per_bit = clocks_per_bit
        super().__init__({
            "i": In(stream.Signature(DATA_BITS)),
            "tx": Out(1, init=1),
        })

    @property
    def clocks_per_bit(self) -> int:
        return self._clocks_per_bit

    @property
    def frame_cycles(self) -> int:
        """Cycles per frame when bytes follow each other with no gap."""
        return FRAME_BITS * self._clocks_per_bit

    def elaborate(self, platform):
        m = Module()
        n = self._clocks_per_bit
        frame = Signal(FRAME_BITS, init=(1 << FRAME_BITS) - 1)   # bit 0 is on the pin; ones shift in behind
        countdown = Signal(range(n))
        shifts_left = Signal(range(FRAME_BITS))
        busy = Signal()
        m.d.comb += [self.tx.eq(frame[0]), self.i.ready.eq(~busy)]

        with m.If(~busy):
            with m.If(self.i.valid):
                m.d.sync += [frame.eq(Cat(Const(0, 1), self.i.payload, Const(1, 1))),
                             countdown.eq(n - 1), shifts_left.eq(FRAME_BITS - 1), busy.eq(1)]
        with m.Elif(countdown != 0):
            m.d.sync += countdown.eq(countdown - 1)
        with m.Elif(shifts_left != 0):
            m.d.sync += [frame.eq(Cat(frame[1:], Const(1, 1))), shifts_left.eq(shifts_left - 1),
                         # the stop bit's last cycle is spent idle (ready for the next byte)
                         countdown.eq(Mux(shifts_left == 1, n - 2, n - 1))]
        with m.Else():
            m.d.sync += busy.eq(0)
        return m
