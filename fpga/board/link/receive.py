"""The host link's receiving part: UART bytes in, frames out (header, the first payload bytes, LOAD's
entries into the input buffer, the CRC checked), with the inter-byte timeout and the events the
counters count."""

from __future__ import annotations

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from ..protocol import REQUEST_SYNC, Command, Status
from .frame import PARAM_BYTES, CursorControl, CursorView, FrameSignature, LoadSignature, phases, times

__all__ = ["Receive", "FIXED_LENGTH", "SELFTEST_LENGTH"]

# exact request payload lengths (LOAD's: 2 + whole entries, checked as the bytes arrive)
FIXED_LENGTH = {Command.IDENTIFY: 0, Command.COUNTERS: 0, Command.RESET: 0, Command.RUN: 2, Command.READ: 4}
SELFTEST_LENGTH = {Command.SELFTEST: 18, Command.SELFTEST_CAPTURE: 16}


class Receive(wiring.Component):
    """Request bytes through a FIFO into frames (phases HUNT to CRC).

    Parameters
    ----------
    config : fpga.board.config.BoardConfig
    timeout_cycles : int
        Cycles without a byte within a frame before it is dropped (TIMEOUT).
    fifo_depth : int
        Request bytes held while the board is busy; more are dropped (rx_overflows).
    selftest : bool
        Whether the self-test commands exist (their lengths are checked).

    Members
    -------
    rx : In(stream.Signature(8, always_ready=True))
    framing_error : In(1)
    at : In(CursorView)
    cursor : Out(CursorControl)
    frame : Out(FrameSignature)
    load : Out(LoadSignature)
    """

    def __init__(self, config, timeout_cycles: int, fifo_depth: int, selftest: bool):
        self.config, self.timeout_cycles, self.fifo_depth, self.selftest = (config, timeout_cycles, fifo_depth,
                                                                            selftest)
        self.phases = phases(config)
        super().__init__({"rx": In(stream.Signature(8, always_ready=True)), "framing_error": In(1),
                          "at": In(CursorView(config)), "cursor": Out(CursorControl(config)),
                          "frame": Out(FrameSignature()), "load": Out(LoadSignature(config))})

    def elaborate(self, platform):
        m = Module()
        f, at, cur = self.frame, self.at, self.cursor
        m.submodules.rx_fifo = fifo = SyncFIFO(width=8, depth=self.fifo_depth)
        m.d.comb += [fifo.w_data.eq(self.rx.payload), fifo.w_en.eq(self.rx.valid)]
        self._byte, self._have, self._take = fifo.r_data, fifo.r_rdy, fifo.r_en
        overflow, lost = Signal(), Signal(name="lost")   # lost: a byte was dropped since the last response
        m.d.comb += [overflow.eq(self.rx.valid & ~fifo.w_rdy),
                     f.rx_overflows.eq(overflow), f.framing_errors.eq(self.framing_error)]
        with m.If(overflow):
            m.d.sync += lost.eq(1)
        with m.Elif(f.responding):
            m.d.sync += lost.eq(0)
        self._timer(m)
        header = Signal(24)                           # cmd, length:u16 as received
        crc_rx = Signal(16)
        # the frame's registers (the parts' ports are views of them)
        self._param = Signal(8 * PARAM_BYTES, name="param")
        self._bad, self._loaded = Signal(8, name="bad"), Signal(16, name="loaded")
        m.d.comb += [f.cmd.eq(header[0:8]), f.length.eq(header[8:24]), f.crc_bad.eq(crc_rx != at.crc),
                     f.lost.eq(lost), f.param.eq(self._param), f.bad.eq(self._bad), f.loaded.eq(self._loaded)]
        with m.Switch(at.phase):
            with m.Case(self.phases.HUNT):
                self._hunt(m)
            with m.Case(self.phases.HEADER):
                self._receive_or_time_out(m)
                with m.If(self._have):
                    self._crc(m)
                    m.d.sync += header.eq(Cat(header[8:], self._byte))
                    m.d.comb += cur.count_step.eq(1)
                    with m.If(at.count == 2):
                        self._goto(m, self.phases.CHECK_HEADER)
            with m.Case(self.phases.CHECK_HEADER):
                self._check_header(m)
            with m.Case(self.phases.PAYLOAD):
                self._payload(m)
            with m.Case(self.phases.LOAD_CHECK):            # the index is in: may the entries be written?
                self._load_check(m)
            with m.Case(self.phases.CRC):
                self._receive_or_time_out(m)
                with m.If(self._have):
                    m.d.sync += crc_rx.word_select(at.count[0], 8).eq(self._byte)
                    m.d.comb += cur.count_step.eq(1)
                    with m.If(at.count == 1):
                        self._goto(m, self.phases.EXEC)
        return m

    def _timer(self, m):
        """The inter-byte timeout within a frame."""
        self._timing, self._timed_out = Signal(), Signal()
        timer = Signal(range(self.timeout_cycles + 1))
        got = Signal()
        m.d.comb += got.eq(self._have & self._take)
        m.d.sync += timer.eq(Mux(got | ~self._timing, 0, timer + 1))
        m.d.comb += self._timed_out.eq(self._timing & ~self._have & (timer >= self.timeout_cycles - 1))

    def _goto(self, m, phase):
        m.d.comb += [self.cursor.goto.eq(1), self.cursor.next.eq(phase)]

    def _crc(self, m):
        m.d.comb += [self.cursor.crc_byte.eq(self._byte), self.cursor.crc_step.eq(1)]

    def _receive_or_time_out(self, m):
        m.d.comb += [self._take.eq(1), self._timing.eq(1)]
        with m.If(~self._have & self._timed_out):
            m.d.comb += self.frame.timeouts.eq(1)              # the executor answers TIMEOUT

    def _hunt(self, m):
        m.d.comb += self._take.eq(1)
        with m.If(self._have):
            with m.If(self._byte == REQUEST_SYNC):
                m.d.comb += [self.cursor.crc_init.eq(1), self.cursor.count_clear.eq(1)]
                self._goto(m, self.phases.HEADER)
            with m.Else():
                m.d.comb += self.frame.skipped_bytes.eq(1)

    def _check_header(self, m):
        """The status a header alone decides: a length over the maximum (answered now; the rest is
        skipped), an unknown command, a length the command never has."""
        f, cur = self.frame, self.cursor
        m.d.sync += [self._param.eq(0), self._loaded.eq(0), self._bad.eq(0)]
        m.d.comb += [cur.p_clear.eq(1), cur.entry_clear.eq(1), cur.count_clear.eq(1)]
        with m.If(f.length > self.config.max_length):
            m.d.comb += f.bad_header.eq(1)                     # the executor answers BAD_LENGTH
        with m.Else():
            fixed = {**FIXED_LENGTH, **(SELFTEST_LENGTH if self.selftest else {})}
            with m.Switch(f.cmd):
                for command, expected in fixed.items():
                    with m.Case(command):
                        with m.If(f.length != expected):
                            m.d.sync += self._bad.eq(Status.BAD_LENGTH)
                with m.Case(Command.LOAD):
                    with m.If(f.length < 2):
                        m.d.sync += self._bad.eq(Status.BAD_LENGTH)
                with m.Default():
                    m.d.sync += self._bad.eq(Status.BAD_COMMAND)
            self._goto(m, self.phases.PAYLOAD)
            with m.If(f.length == 0):
                self._goto(m, self.phases.CRC)

    def _payload(self, m):
        f, at = self.frame, self.at
        self._receive_or_time_out(m)
        with m.If(self._have):
            self._crc(m)
            m.d.comb += self.cursor.p_step.eq(1)
            with m.If(at.p < PARAM_BYTES):
                m.d.sync += self._param.word_select(at.p[:5], 8).eq(self._byte)
            with m.If((f.cmd == Command.LOAD) & (self._bad == 0) & (at.p >= 2)):
                self._write_entry_byte(m)
            with m.If((f.cmd == Command.LOAD) & (at.p == 1)):
                self._goto(m, self.phases.LOAD_CHECK)
            with m.Elif(at.p_inc == f.length):
                self._goto(m, self.phases.CRC)

    def _write_entry_byte(self, m):
        """One LOAD payload byte into its byte lane of the entry at the cursor."""
        in_bytes, at = self.config.in_bytes, self.at
        m.d.comb += [self.load.addr.eq(at.ptr), self.load.data.eq(self._byte.replicate(in_bytes)),
                     self.load.en.eq(C(1, in_bytes) << at.ebyte), self.cursor.entry_step.eq(1)]
        with m.If(at.ebyte == in_bytes - 1):
            m.d.sync += self._loaded.eq(self._loaded + 1)

    def _load_check(self, m):
        cfg, f, at = self.config, self.frame, self.at
        index = f.param[0:16]
        fits = times(index, cfg.in_bytes) + f.length <= cfg.depth * cfg.in_bytes + 2
        m.d.comb += [self.cursor.entry_set.eq(1), self.cursor.entry_at.eq(index)]
        with m.If(~fits):
            m.d.sync += self._bad.eq(Status.BAD_RANGE)
        self._goto(m, self.phases.PAYLOAD)
        with m.If(at.p == f.length):
            self._goto(m, self.phases.CRC)
