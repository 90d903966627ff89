"""The board's top level: the UART, the host link and the unit, on a platform's pins or as ports.

``amaranth.back.verilog.convert(BoardTop(config), name="board")`` gives a module ``board`` with
ports ``clk``, ``rst``, ``uart_rx`` and ``uart_tx`` (the Verilator board simulation); built for
an amaranth-boards platform it takes the platform's ``uart`` pins (``rx``, ``tx``, through
``amaranth.lib.io`` buffers), its default clock, and shows
activity and errors on LEDs 0 and 1 where the board has them.
"""

from __future__ import annotations

from amaranth import Module, Signal
from amaranth.build import ResourceError
from amaranth.lib import io, wiring
from amaranth.lib.wiring import In, Out

from .link import HostLink
from .uart import UARTRx, UARTTx, clocks_per_bit

__all__ = ["BoardTop"]

LED_HOLD_BITS = 20          # an activity blink lasts 2**20 cycles (42 ms at 25 MHz): visible


class BoardTop(wiring.Component):
    """UART + :class:`fpga.link.HostLink` + the unit of a :class:`fpga.config.BoardConfig`.

    Parameters
    ----------
    config : fpga.config.BoardConfig

    Members
    -------
    uart_rx : In(1)
        The serial input pin when elaborated without a platform (idle high).
    uart_tx : Out(1, init=1)
        The serial output pin when elaborated without a platform.
    clocks_per_bit : int
        Clock cycles per UART bit (``config.clock_hz / config.baud``, checked).
    """

    def __init__(self, config):
        self.config = config
        self.clocks_per_bit = clocks_per_bit(config.clock_hz, config.baud)
        super().__init__({"uart_rx": In(1), "uart_tx": Out(1, init=1)})

    def elaborate(self, platform):
        if platform is not None:
            self._check_clock(platform)
        m = Module()
        m.submodules.uart_rx = rx = UARTRx(self.clocks_per_bit)
        m.submodules.uart_tx = tx = UARTTx(self.clocks_per_bit)
        m.submodules.link = link = HostLink(self.config, self.clocks_per_bit)
        m.submodules.unit = unit = self.config.unit()
        wiring.connect(m, rx.o, link.rx)
        wiring.connect(m, link.tx, tx.i)
        wiring.connect(m, link.unit_i, unit.i)
        wiring.connect(m, unit.o, link.unit_o)
        m.d.comb += link.framing_error.eq(rx.framing_error)
        if platform is None:
            m.d.comb += [rx.rx.eq(self.uart_rx), self.uart_tx.eq(tx.tx)]
            return m
        uart = platform.request("uart", 0, dir="-")
        m.submodules.rx_pin = rx_pin = io.Buffer("i", uart.rx)
        m.submodules.tx_pin = tx_pin = io.Buffer("o", uart.tx)
        m.d.comb += [rx.rx.eq(rx_pin.i), tx_pin.o.eq(tx.tx)]
        self._leds(m, platform, link)
        return m

    def _check_clock(self, platform):
        board_hz = int(platform.default_clk_frequency)
        if board_hz != self.config.clock_hz:
            raise ValueError(f"{type(platform).__name__} runs at {board_hz} Hz but the configuration says "
                             f"clock_hz={self.config.clock_hz}; build with clock_hz={board_hz}")

    def _leds(self, m, platform, link):
        """LED 0 blinks on activity, LED 1 is lit while the last response was an error."""
        leds = []
        for n in range(2):
            try:
                pin = platform.request("led", n, dir="-")
            except ResourceError:
                break
            m.submodules[f"led{n}"] = buffer = io.Buffer("o", pin)
            leds.append(buffer)
        hold = Signal(LED_HOLD_BITS)
        with m.If(link.busy):
            m.d.sync += hold.eq((1 << LED_HOLD_BITS) - 1)
        with m.Elif(hold != 0):
            m.d.sync += hold.eq(hold - 1)
        for led, value in zip(leds, (hold != 0, link.error)):
            m.d.comb += led.o.eq(value)
