"""The host link's executing part: a received frame's command carried out (phases EXEC, RUN and
CAPTURE), the buffers and the identify ROM, RUN's sequencer or the compute side across the clocks,
the self-test engine, the counters, and the response each frame gets."""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..crossing import FAST, ComputeBridge
from ..domains import Domain
from ..protocol import COUNTER_NAMES, SELFTEST_TRAILER_BYTES, Command, Status, selftest_max_blocks
from ..selftest.engine import SelfTestEngine
from ..selftest.model import KINDS
from .frame import AnswerSignature, CursorControl, CursorView, FrameSignature, LoadSignature, Source, phases, times

__all__ = ["Execute"]

# the counters the receiving part's events count
_RX_EVENTS = ("skipped_bytes", "timeouts", "rx_overflows", "framing_errors")


class Execute(wiring.Component):
    """Commands of intact frames, the buffers and the unit's streams; every response starts here.

    Parameters
    ----------
    config : fpga.board.config.BoardConfig
    two_domains : bool
        RUN and the self-test engine on ``fast`` behind :class:`fpga.board.crossing.ComputeBridge`.
    plant : str, optional
        A crossing without its synchroniser (:data:`fpga.board.crossing.PLANTS`).

    Members
    -------
    at : In(CursorView)
    cursor : Out(CursorControl)
    frame : In(FrameSignature)
    load : In(LoadSignature)
    answer : Out(AnswerSignature)
    unit_i : Out(stream.Signature(config.in_shape))
    unit_o : In(stream.Signature(config.out_shape))
    error : Out(1)
        The last response was an error.
    """

    def __init__(self, config, *, two_domains: bool = False, plant: str | None = None):
        self.config, self.two_domains, self.plant = config, two_domains, plant
        self.phases = phases(config)
        self.selftest = not config.core           # the self-test engine drives dot-add units only
        super().__init__({
            "at": In(CursorView(config)), "cursor": Out(CursorControl(config)),
            "frame": In(FrameSignature()), "load": In(LoadSignature(config)),
            "answer": Out(AnswerSignature(config, self.selftest)),
            "unit_i": Out(stream.Signature(config.in_shape)), "unit_o": In(stream.Signature(config.out_shape)),
            "error": Out(1),
        })

    def elaborate(self, platform):
        cfg, m = self.config, Module()
        self._m = m
        self._counters(m)
        in_read, out_write = self._buffers(m)
        # RUN's and READ's range checks from registers: the parameters are complete at least the
        # CRC's two bytes before EXEC reads them (index -> add -> compare -> response length was
        # the board top's critical path at 74 MHz)
        index, count16 = self.frame.param[0:16], self.frame.param[16:32]
        self._run_ok, self._read_ok = Signal(name="run_ok"), Signal(name="read_ok")
        m.d.sync += [self._run_ok.eq((index != 0) & (index <= cfg.depth)),
                     self._read_ok.eq(index + count16 <= cfg.depth)]
        self._small = Signal(32, name="small")       # LOAD's count, RUN's cycles
        m.d.comb += self.answer.small.eq(self._small)
        self._run = _Run(cfg, m, in_read, out_write, self.unit_i, self.unit_o, index)
        bridge = self._bridge(m, in_read, out_write) if self.two_domains else None
        engine = self._engine(m, bridge)
        self._response = (Signal(8, name="status"), Signal(16, name="resp_len"), Signal(Source, name="source"))
        m.d.comb += [port.eq(reg) for port, reg in zip((self.answer.status, self.answer.length, self.answer.source),
                                                         self._response)]
        with m.Switch(self.at.phase):
            with m.Case(self.phases.HEADER, self.phases.PAYLOAD, self.phases.CRC):
                with m.If(self.frame.timeouts):        # the receiving part timed the frame out
                    self._respond(Status.TIMEOUT)
            with m.Case(self.phases.CHECK_HEADER):
                with m.If(self.frame.bad_header):      # a length over the maximum: answered at once
                    self._respond(Status.BAD_LENGTH)
            with m.Case(self.phases.EXEC):
                self._exec(engine, bridge)
            with m.Case(self.phases.RUN):
                if bridge is not None:                  # the fast side runs it; its cycles when done
                    with m.If(~bridge.busy):
                        self._done(bridge.cycles)
                else:
                    self._run.step(self._done)
            if engine is not None:
                with m.Case(self.phases.CAPTURE):           # the engine's results into the output buffer
                    if bridge is None:                # (with two domains the fast side writes them)
                        self._run.capture()
                    with m.If(~engine.busy):
                        self._done(engine.cycles)
        if bridge is None:
            m.d.comb += self.unit_o.ready.eq(1)
        return m

    # ---- responses and counters -----------------------------------------------------------------

    def _respond(self, code, nbytes=0, src=Source.SMALL):
        """Start the response: its header's registers set, the cursor back to the frame's start."""
        cur, (status, resp_len, source) = self.cursor, self._response
        self._m.d.sync += [status.eq(code), resp_len.eq(nbytes), source.eq(src), self.error.eq(code != Status.OK)]
        self._m.d.comb += [cur.count_clear.eq(1), cur.p_clear.eq(1), cur.crc_init.eq(1),
                           cur.goto.eq(1), cur.next.eq(self.phases.SEND_HEADER), self.frame.responding.eq(1)]

    def _done(self, cycles):
        """RUN or SELFTEST_CAPTURE over: answer with its cycles."""
        self._m.d.sync += self._small.eq(cycles)
        self._m.d.comb += self._inc["frames_ok"].eq(1)
        self._respond(Status.OK, 4)

    def _counters(self, m):
        """One increment (or the RESET clear) per counter per cycle."""
        self._inc = {name: Signal(name=f"inc_{name}") for name in COUNTER_NAMES}
        self._clear = Signal()
        counters = [Signal(32, name=name) for name in COUNTER_NAMES]
        for name, counter in zip(COUNTER_NAMES, counters):
            with m.If(self._clear):
                m.d.sync += counter.eq(0)
            with m.Elif(self._inc[name]):
                m.d.sync += counter.eq(counter + 1)
        f = self.frame
        m.d.comb += [self._inc[name].eq(getattr(f, name)) for name in _RX_EVENTS]
        m.d.comb += [self._inc["bad_frames"].eq(f.bad_header), self.answer.counters.eq(Cat(*counters))]

    # ---- buffers --------------------------------------------------------------------------------

    def _buffers(self, m):
        """The input and output buffers and the identify ROM; the read data for the response
        registered (see :mod:`fpga.board.link.transmit`)."""
        cfg, a = self.config, self.answer
        m.submodules.inbuf = inbuf = Memory(shape=unsigned(cfg.in_bytes * 8), depth=cfg.depth, init=[])
        m.submodules.outbuf = outbuf = Memory(shape=unsigned(cfg.out_bits), depth=cfg.depth, init=[])
        blob = cfg.identify_blob
        m.submodules.identify = rom = Memory(shape=unsigned(8), depth=len(blob), init=list(blob))
        compute = FAST if self.two_domains else Domain.SYNC     # the buffers' compute-side ports
        in_write, in_read = inbuf.write_port(granularity=8), inbuf.read_port(domain=compute)
        out_write, out_read = outbuf.write_port(domain=compute), outbuf.read_port()
        rom_read = rom.read_port()
        m.d.comb += [in_write.addr.eq(self.load.addr), in_write.data.eq(self.load.data),
                     in_write.en.eq(self.load.en), rom_read.addr.eq(a.rom_addr), out_read.addr.eq(a.out_addr)]
        out_data, rom_data = (Signal.like(out_read.data, name="out_data_q"),
                              Signal.like(rom_read.data, name="rom_data_q"))
        m.d.sync += [out_data.eq(out_read.data), rom_data.eq(rom_read.data)]
        m.d.comb += [a.out_data.eq(out_data), a.rom_data.eq(rom_data)]
        return in_read, out_write

    # ---- EXEC -----------------------------------------------------------------------------------

    def _exec(self, engine, bridge):
        """A whole frame is in: refuse it (overflow, CRC, a status decided while receiving), or
        carry out its command."""
        m, f = self._m, self.frame
        with m.If(f.lost):                              # counted as rx_overflows already
            self._respond(Status.OVERFLOW)
        with m.Elif(f.crc_bad):
            m.d.comb += self._inc["crc_errors"].eq(1)
            self._respond(Status.BAD_CRC)
        with m.Elif(f.bad != 0):
            m.d.comb += self._inc["bad_frames"].eq(1)
            self._respond(f.bad)
        with m.Else():
            self._command(bridge)
            if engine is not None:
                self._start_selftest(engine)

    def _refuse(self, status):
        self._m.d.comb += self._inc["bad_frames"].eq(1)
        self._respond(status)

    def _command(self, bridge):
        """An intact, well-formed request: answer it, or start the run."""
        m, f, cfg = self._m, self.frame, self.config
        index, count16 = f.param[0:16], f.param[16:32]
        ok = self._inc["frames_ok"]
        with m.Switch(f.cmd):
            with m.Case(Command.IDENTIFY):
                m.d.comb += ok.eq(1)
                self._respond(Status.OK, len(cfg.identify_blob), Source.ROM)
            with m.Case(Command.LOAD):
                with m.If(self.at.ebyte != 0):          # a partial entry at the end
                    self._refuse(Status.BAD_LENGTH)
                with m.Else():
                    m.d.sync += self._small.eq(f.loaded)
                    m.d.comb += ok.eq(1)
                    self._respond(Status.OK, 2)
            with m.Case(Command.RUN):
                with m.If(~self._run_ok):
                    self._refuse(Status.BAD_RANGE)
                with m.Else():
                    if bridge is not None:
                        m.d.comb += [bridge.run.eq(1), bridge.run_count.eq(index)]
                    else:
                        self._run.start()
                    m.d.comb += [self.cursor.goto.eq(1), self.cursor.next.eq(self.phases.RUN)]
            with m.Case(Command.READ):
                with m.If(~self._read_ok):
                    self._refuse(Status.BAD_RANGE)
                with m.Else():
                    m.d.comb += [self.cursor.entry_set.eq(1), self.cursor.entry_at.eq(index),
                                 self.cursor.entry_clear.eq(1), ok.eq(1)]
                    self._respond(Status.OK, times(count16, cfg.out_bytes)[:16], Source.OUTBUF)
            with m.Case(Command.COUNTERS):
                m.d.comb += ok.eq(1)
                self._respond(Status.OK, 4 * len(COUNTER_NAMES), Source.COUNTERS)
            with m.Case(Command.RESET):
                m.d.comb += self._clear.eq(1)
                self._respond(Status.OK)

    # ---- the self-test --------------------------------------------------------------------------

    def _bridge(self, m, in_read, out_write):
        """Two domains: the compute side behind :class:`fpga.board.crossing.ComputeBridge`, driving the unit
        and the buffers' fast ports."""
        m.submodules.bridge = bridge = ComputeBridge(self.config, plant=self.plant)
        m.d.comb += [in_read.addr.eq(bridge.in_addr), in_read.en.eq(bridge.in_en), bridge.in_data.eq(in_read.data),
                     out_write.addr.eq(bridge.out_addr), out_write.data.eq(bridge.out_data),
                     out_write.en.eq(bridge.out_en)]
        wiring.connect(m, bridge.unit_i, wiring.flipped(self.unit_i))
        wiring.connect(m, wiring.flipped(self.unit_o), bridge.unit_o)
        return bridge

    def _engine(self, m, bridge):
        """The self-test engine, fed the unit's results and driving its input while it runs (with two
        domains the bridge, which shows the link the engine's members); None on a tensor core's
        board."""
        if not self.selftest:
            return None
        if bridge is None:
            m.submodules.selftest = engine = SelfTestEngine(self.config)
            m.d.comb += [engine.results.valid.eq(self.unit_o.valid), engine.results.payload.eq(self.unit_o.payload),
                         engine.unit_i.ready.eq(self.unit_i.ready)]
            with m.If(engine.busy):
                m.d.comb += [self.unit_i.valid.eq(engine.unit_i.valid), self.unit_i.payload.eq(engine.unit_i.payload)]
        else:
            engine = bridge
        a = self.answer
        wiring.connect(m, engine.sigs, wiring.flipped(a.sigs))
        m.d.comb += [a.cycles.eq(engine.cycles), a.vectors.eq(engine.vectors), a.engine_busy.eq(engine.busy)]
        return engine

    def _start_selftest(self, engine):
        """SELFTEST: start the engine and answer at once (the signatures follow as blocks finish);
        SELFTEST_CAPTURE: start it on one window and answer when its results are in the buffer."""
        m, f, cfg = self._m, self.frame, self.config
        seed, kind, opcode = f.param[0:64], f.param[64:72], f.param[72:80]
        first, blocks, block_len = f.param[80:112], f.param[112:128], f.param[128:144]
        capture = f.cmd == Command.SELFTEST_CAPTURE
        m.d.comb += [engine.seed.eq(seed), engine.kind.eq(kind[0]), engine.first.eq(first),
                     engine.capture.eq(capture), engine.blocks.eq(Mux(capture, 1, blocks)),
                     engine.block_len.eq(Mux(capture, blocks, block_len))]
        valid = (kind < len(KINDS)) & (opcode == 0) & (blocks != 0)
        with m.If(f.cmd == Command.SELFTEST):
            with m.If(~valid | (block_len == 0) | (blocks > selftest_max_blocks(cfg.lanes))):
                self._refuse(Status.BAD_RANGE)
            with m.Else():
                m.d.comb += [engine.start.eq(1), self._inc["frames_ok"].eq(1)]
                self._respond(Status.OK, (times(blocks, 4 * cfg.lanes) + SELFTEST_TRAILER_BYTES)[:16], Source.SIGS)
        with m.If(capture):
            with m.If(~valid | (blocks > cfg.depth)):
                self._refuse(Status.BAD_RANGE)
            with m.Else():
                m.d.comb += engine.start.eq(1)
                self._run.restart_results()
                m.d.comb += [self.cursor.goto.eq(1), self.cursor.next.eq(self.phases.CAPTURE)]


class _Run:
    """RUN on one clock: the input buffer through the unit into the output buffer, its cycles
    counted (with two domains :class:`fpga.board.crossing.Executor` does this on the fast side)."""

    def __init__(self, cfg, m, in_read, out_write, unit_i, unit_o, run_count):
        self.cfg, self.m, self.in_read, self.out_write = cfg, m, in_read, out_write
        self.unit_i, self.unit_o, self.run_count = unit_i, unit_o, run_count
        depth = range(cfg.depth + 1)
        self.issue, self.done = Signal(depth, name="issue"), Signal(depth, name="done")
        self.holding, self.counting = Signal(name="holding"), Signal(name="counting")
        self.cycles = Signal(32, name="cycles")
        # done + 1 kept in a register beside done, as p_inc beside p: RUN's "last result" check is then
        # an equality of two registers (done -> + 1 -> compare -> respond limited the top to 87 MHz)
        self.done_inc = Signal(len(self.done) + 1, init=1, name="done_inc")

    def start(self):
        self.m.d.sync += [r.eq(0) for r in (self.issue, self.done, self.holding, self.counting, self.cycles)]
        self.m.d.sync += self.done_inc.eq(1)

    def restart_results(self):
        self.m.d.sync += [self.done.eq(0), self.done_inc.eq(1)]

    def capture(self):
        """The unit's results into the output buffer, one a cycle as they come."""
        m, o = self.m, self.unit_o
        m.d.comb += [self.out_write.addr.eq(self.done), self.out_write.data.eq(o.payload),
                     self.out_write.en.eq(o.valid)]
        with m.If(o.valid):
            m.d.sync += [self.done.eq(self.done_inc), self.done_inc.eq(self.done_inc + 1)]

    def step(self, done):
        """One cycle of RUN: issue the next entry, take a result; ``done(cycles)`` at the last."""
        m, cfg, i, run_count = self.m, self.cfg, self.unit_i, self.run_count
        advance = ~self.holding | i.ready
        m.d.comb += [self.in_read.addr.eq(self.issue), self.in_read.en.eq(advance),
                     i.valid.eq(self.holding), i.payload.eq(self.in_read.data[:cfg.in_bits])]
        with m.If(advance):
            m.d.sync += self.holding.eq(self.issue < run_count)
            with m.If(self.issue < run_count):
                m.d.sync += self.issue.eq(self.issue + 1)
        issued = self.holding & i.ready
        m.d.sync += self.counting.eq(self.counting | issued)
        with m.If(self.counting | issued):
            m.d.sync += self.cycles.eq(self.cycles + 1)
        self.capture()
        with m.If(self.unit_o.valid & (self.done_inc == run_count)):
            done(self.cycles + 1)
