"""The board's top level: the UART, the host link and the unit, on a platform's pins or as ports.

``amaranth.back.verilog.convert(BoardTop(config), name="board")`` gives a module ``board`` with
ports ``clk``, ``rst``, ``uart_rx`` and ``uart_tx`` (the Verilator board simulation); built for
an amaranth-boards platform it takes the platform's ``uart`` pins (``rx``, ``tx``, through
``amaranth.lib.io`` buffers) and shows activity and errors on LEDs 0 and 1 where the board has
them.  Its ``sync`` clock is the board's oscillator when ``config.clock_hz`` is the oscillator's
frequency (the platform makes the domain), and otherwise the board's FPGA family makes it
(:meth:`fpga.toolchain.families.base.Family.clock_domain`; ECP5: an EHXPLLL,
:class:`fpga.toolchain.families.ecp5_pll.ECP5PLL`, fed by the oscillator): ``sync`` is held in
reset until the PLL locks, and nextpnr is told the new clock's frequency, so its timing report
judges the design clock.  That lets a design that cannot
meet the oscillator's frequency run slower on the same board.

Two clock domains (the default where the family makes the design clock with a PLL): the UART, the
host link and the buffers' host-facing ports stay on ``sync``, the board's oscillator (so the
link's timing is the oscillator's, whatever the design clock), and the unit, RUN's sequencer, the
self-test engine and the buffers' compute-side ports run on ``fast``, the PLL's ``config.clock_hz``,
joined by :mod:`fpga.board.crossing`.  Without a platform, ``two_domains=True`` gives the ports
``fast_clk`` and ``fast_rst`` besides ``clk`` and ``rst``.
"""

from __future__ import annotations

from amaranth import Module, Signal
from amaranth.build import ResourceError
from amaranth.hdl import DomainRenamer
from amaranth.lib import io, wiring
from amaranth.lib.wiring import In, Out

import hw

from ..toolchain.families import FAMILIES
from .crossing import FAST
from .domains import Domain
from .link import HostLink
from .uart import UARTRx, UARTTx, clocks_per_bit

__all__ = ["BoardTop"]

LED_HOLD_BITS = 20          # an activity blink lasts 2**20 cycles (42 ms at 25 MHz): visible


class BoardTop(wiring.Component):
    """UART + :class:`fpga.board.link.HostLink` + the unit of a :class:`fpga.board.config.BoardConfig`.

    Parameters
    ----------
    config : fpga.board.config.BoardConfig
        Its ``clock_hz`` is the design (``sync``) clock: on a platform whose oscillator runs at
        another frequency, an ECP5 PLL makes it exactly (ValueError naming the nearest frequencies
        the PLL makes, when it cannot).
    params : golden.Params, optional
        A planted fault: the dot-add unit is built with these algorithm parameters instead of the
        catalog's, while the board still identifies as ``config`` (what a bitstream with a wrong
        datapath would do).  The self-test must catch it (``python -m fpga selftest --plant F+1``).

    unit : amaranth.lib.wiring.Component, optional
        The unit instead of the config's (a design of one's own: :class:`fpga.board.dut.DutUnit`).
    two_domains : bool, optional
        The link on ``sync`` and the compute on ``fast`` (:mod:`fpga.board.crossing`).  None (the
        default): two domains exactly when a platform's family makes the design clock with a PLL.
    plant : str, optional
        Two domains only: a crossing without its synchroniser (:data:`fpga.board.crossing.PLANTS`).

    Members
    -------
    uart_rx : In(1)
        The serial input pin when elaborated without a platform (idle high).
    uart_tx : Out(1, init=1)
        The serial output pin when elaborated without a platform.
    clocks_per_bit : int
        Clock cycles per UART bit (``config.clock_hz / config.baud``, checked).
    """

    def __init__(self, config, params=None, unit=None, *, two_domains=None, plant=None):
        if params is not None and config.core:
            raise ValueError("a planted fault (params) needs a dot-add unit's board, not a tensor core")
        self.config = config
        self.params = params
        self.custom_unit = unit          # a unit of the caller's (fpga.board.dut.DutUnit: a design of one's own)
        self.clocks_per_bit = config.clocks_per_bit
        self.two_domains, self.plant = two_domains, plant
        super().__init__({"uart_rx": In(1), "uart_tx": Out(1, init=1)})

    def elaborate(self, platform):
        family = None if platform is None else self._family(platform)   # a clock it cannot make: refused first
        m = Module()
        two = self.two_domains if self.two_domains is not None else family is not None
        bit = self.clocks_per_bit
        if family is not None and two:
            family.clock_domain(m, platform, self.config.clock_hz, domain=FAST, link_domain=Domain.SYNC)
            bit = clocks_per_bit(int(platform.default_clk_frequency), self.config.baud)   # the link's clock
        elif family is not None:
            family.clock_domain(m, platform, self.config.clock_hz)
        m.submodules.uart_rx = rx = UARTRx(bit)
        m.submodules.uart_tx = tx = UARTTx(bit)
        m.submodules.link = link = HostLink(self.config, bit, two_domains=two, plant=self.plant)
        m.submodules.unit = unit = DomainRenamer(FAST)(self._unit()) if two else self._unit()
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

    def _unit(self):
        if self.custom_unit is not None:
            return self.custom_unit
        if self.params is None:
            return self.config.unit()
        cfg = self.config
        return hw.dot_add_unit(cfg.instruction_objects[0], lanes=cfg.lanes, params=self.params,
                               pipelining=cfg.pipelining)

    def _family(self, platform):
        """The family that makes the design clock from the oscillator (its clock checked); None when
        they are the same clock."""
        board_hz = int(platform.default_clk_frequency)
        if board_hz == self.config.clock_hz:
            return None
        family = platform_family(platform)
        if family is None:
            raise ValueError(f"{type(platform).__name__} runs at {board_hz} Hz and has no PLL support here "
                             f"(ECP5 boards only); build with clock_hz={board_hz}")
        family.check_clock(board_hz, self.config.clock_hz)
        return family

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


def platform_family(platform):
    """The family of :mod:`fpga.toolchain.families` an Amaranth platform instance belongs to, or None."""
    from amaranth.vendor import GowinPlatform, LatticeECP5Platform
    if isinstance(platform, LatticeECP5Platform):
        return FAMILIES["ecp5"]
    if isinstance(platform, GowinPlatform) and str(getattr(platform, "part", "")).startswith("GW5A"):
        return FAMILIES["gowin-gw5a"]
    return None
