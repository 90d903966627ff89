"""The board's frame controller: host-link frames on byte streams in and out, buffers, and the unit.

:class:`HostLink` speaks :mod:`fpga.board.protocol` version 2.  Request bytes wait in a small FIFO (so
the board keeps receiving while it runs or answers), are checked against their CRC as they
arrive, and LOAD payload bytes go straight into the input buffer (block RAM with byte enables,
no wide shift register).  RUN streams the input buffer through the unit into the output buffer;
READ, IDENTIFY and COUNTERS answer from the output buffer, a ROM and the counters.  SELFTEST
starts the self-test engine (:class:`fpga.board.selftest.engine.SelfTestEngine`, a dot-add unit's
board only) and streams its signatures back as its blocks finish; SELFTEST_CAPTURE reruns one
window of it into the output buffer.

The link is three components joined here: :class:`fpga.board.link.receive.Receive` (UART bytes to frames:
the FIFO, the CRC check, the timeout), :class:`fpga.board.link.execute.Execute` (the commands, the buffers
and the ROM, RUN and the self-test, the counters) and :class:`fpga.board.link.transmit.Transmit` (response
frames: the payload's source, the CRC, to the UART), with the frame's phase and position in
:class:`fpga.board.link.frame.FrameCursor`: the link is half-duplex, so one phase register and one set of
byte counters serve all three.
"""

from __future__ import annotations

from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..crossing import PLANTS
from .execute import Execute
from .frame import FrameCursor, crc16_step, phases
from .receive import Receive
from .transmit import Transmit

__all__ = ["HostLink", "crc16_step"]


class HostLink(wiring.Component):
    """Host-link frames in and out, the input and output buffers, and the unit's streams.

    Parameters
    ----------
    config : fpga.board.config.BoardConfig
        The unit's payload shapes, the buffer depth, the identify blob and the timeout.
    clocks_per_bit : int
        Clock cycles per UART bit: the inter-byte timeout is ``config.timeout_bytes * 10 *
        clocks_per_bit`` cycles.
    fifo_depth : int
        Request bytes held while the board is busy; more are dropped and counted (rx_overflows).
    two_domains : bool
        The link on ``sync`` and the compute (RUN, the self-test engine, the unit's streams, the
        buffers' compute-side ports) on ``fast``, through :class:`fpga.board.crossing.ComputeBridge`.
    plant : str, optional
        Two domains only: a crossing without its synchroniser (:data:`fpga.board.crossing.PLANTS`).

    Members
    -------
    rx : In(stream.Signature(8, always_ready=True))
        Received bytes.
    framing_error : In(1)
        A pulse per byte the UART dropped (counted).
    tx : Out(stream.Signature(8))
        Bytes to send.
    unit_i : Out(stream.Signature(config.in_shape))
    unit_o : In(stream.Signature(config.out_shape))
    busy : Out(1)
        A frame is under way or a self-test runs (an activity LED).
    error : Out(1)
        The last response was an error.
    """

    def __init__(self, config, clocks_per_bit: int, *, fifo_depth: int = 16, two_domains: bool = False,
                 plant: str | None = None):
        problem = _refusal(config, clocks_per_bit, fifo_depth, two_domains, plant)
        if problem is not None:
            self._MustUse__silence = True       # refused, not forgotten: no "never used" warning
            raise ValueError(problem)
        self.config = config
        self.timeout_cycles = config.timeout_bytes * 10 * clocks_per_bit
        self.fifo_depth = fifo_depth
        self.two_domains, self.plant = two_domains, plant
        self.selftest = not config.core           # the self-test engine drives dot-add units only
        self.phases = phases(config)
        super().__init__({
            "rx": In(stream.Signature(8, always_ready=True)),
            "framing_error": In(1),
            "tx": Out(stream.Signature(8)),
            "unit_i": Out(stream.Signature(config.in_shape)),
            "unit_o": In(stream.Signature(config.out_shape)),
            "busy": Out(1),
            "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.cursor = cursor = FrameCursor(self.config)
        m.submodules.receive = rx = Receive(self.config, self.timeout_cycles, self.fifo_depth, self.selftest)
        m.submodules.execute = ex = Execute(self.config, two_domains=self.two_domains, plant=self.plant)
        m.submodules.transmit = tx = Transmit(self.config, self.selftest)
        for part, control in ((rx, cursor.rx), (ex, cursor.ex), (tx, cursor.tx)):
            wiring.connect(m, part.cursor, control)
            wiring.connect(m, cursor.view, part.at)
        wiring.connect(m, rx.frame, ex.frame)
        wiring.connect(m, rx.load, ex.load)
        wiring.connect(m, ex.answer, tx.answer)
        wiring.connect(m, wiring.flipped(self.rx), rx.rx)
        wiring.connect(m, tx.tx, wiring.flipped(self.tx))
        wiring.connect(m, ex.unit_i, wiring.flipped(self.unit_i))
        wiring.connect(m, wiring.flipped(self.unit_o), ex.unit_o)
        engine_busy = ex.answer.engine_busy if self.selftest else 0
        m.d.comb += [rx.framing_error.eq(self.framing_error), self.error.eq(ex.error),
                     self.busy.eq((cursor.view.phase != self.phases.HUNT) | engine_busy)]
        return m


def _refusal(config, clocks_per_bit: int, fifo_depth: int, two_domains: bool, plant: str | None) -> str | None:
    """Why a :class:`HostLink` of these arguments cannot be built, or None."""
    if clocks_per_bit < 1:
        return f"clocks_per_bit must be at least 1, not {clocks_per_bit}"
    if fifo_depth < 2:
        return f"fifo_depth must be at least 2, not {fifo_depth}"
    if plant is not None and not two_domains:
        return "a planted clock-domain fault needs two_domains=True"
    if plant is not None and plant not in PLANTS:
        return f"plant must be one of {', '.join(PLANTS)}, not {plant!r}"
    return None
