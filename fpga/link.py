"""The board's frame controller: host-link frames on byte streams in and out, buffers, and the unit.

:class:`HostLink` speaks :mod:`fpga.protocol` version 2.  Request bytes wait in a small FIFO (so
the board keeps receiving while it runs or answers), are checked against their CRC as they
arrive, and LOAD payload bytes go straight into the input buffer (block RAM with byte enables,
no wide shift register).  RUN streams the input buffer through the unit into the output buffer;
READ, IDENTIFY and COUNTERS answer from the output buffer, a ROM and the counters.  SELFTEST
starts the self-test engine (:class:`fpga.selftest_engine.SelfTestEngine`, a dot-add unit's
board only) and streams its signatures back as its blocks finish; SELFTEST_CAPTURE reruns one
window of it into the output buffer.
"""

from __future__ import annotations

from amaranth import C, Cat, Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .crossing import FAST, PLANTS, ComputeBridge
from .protocol import (COUNTER_NAMES, REQUEST_SYNC, RESPONSE_SYNC, SELFTEST_TRAILER_BYTES, Command, Status,
                       selftest_max_blocks)
from .selftest_engine import SelfTestEngine
from .selftest_model import KINDS

__all__ = ["HostLink", "crc16_step"]

# what a response's payload bytes come from
_SMALL, _ROM, _OUTBUF, _COUNTERS, _SIGS = range(5)
# exact request payload lengths (LOAD's: 2 + whole entries, checked as the bytes arrive)
_FIXED_LENGTH = {Command.IDENTIFY: 0, Command.COUNTERS: 0, Command.RESET: 0, Command.RUN: 2, Command.READ: 4}
_SELFTEST_LENGTH = {Command.SELFTEST: 18, Command.SELFTEST_CAPTURE: 16}
_PARAM_BYTES = 18           # the longest fixed payload kept (SELFTEST's)


def _crc16_int(crc: int, byte: int) -> int:
    crc ^= byte << 8
    for _ in range(8):
        crc = ((crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
    return crc


# The update is linear over GF(2): bit i of the new CRC is the XOR of the (crc, byte) input bits
# whose column has bit i set.  A flat XOR per bit, not eight nested multiplexers.
_CRC_COLUMNS = [_crc16_int(1 << j, 0) for j in range(16)] + [_crc16_int(0, 1 << j) for j in range(8)]


def crc16_step(crc, byte):
    """CRC-16/CCITT-FALSE (:func:`fpga.protocol.crc16`) after one more byte: 16 XORs of input bits."""
    bits = Cat(crc, byte)
    return Cat(*[_xor([bits[j] for j, col in enumerate(_CRC_COLUMNS) if col >> i & 1]) for i in range(16)])


def _xor(values):
    total = values[0]
    for v in values[1:]:
        total = total ^ v
    return total


def _times(value, k: int):
    """``value * k`` for a constant ``k`` as shifts and adds (no multiplier, no DSP block)."""
    terms = [value << n for n in range(k.bit_length()) if k >> n & 1]
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


class HostLink(wiring.Component):
    """Host-link frames in and out, the input and output buffers, and the unit's streams.

    Parameters
    ----------
    config : fpga.config.BoardConfig
        The unit's payload shapes, the buffer depth, the identify blob and the timeout.
    clocks_per_bit : int
        Clock cycles per UART bit: the inter-byte timeout is ``config.timeout_bytes * 10 *
        clocks_per_bit`` cycles.
    fifo_depth : int
        Request bytes held while the board is busy; more are dropped and counted (rx_overflows).
    two_domains : bool
        The link on ``sync`` and the compute (RUN, the self-test engine, the unit's streams, the
        buffers' compute-side ports) on ``fast``, through :class:`fpga.crossing.ComputeBridge`.
    plant : str, optional
        Two domains only: a crossing without its synchroniser (:data:`fpga.crossing.PLANTS`).

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
        if clocks_per_bit < 1:
            raise ValueError(f"clocks_per_bit must be at least 1, not {clocks_per_bit}")
        if fifo_depth < 2:
            raise ValueError(f"fifo_depth must be at least 2, not {fifo_depth}")
        self.config = config
        self.timeout_cycles = config.timeout_bytes * 10 * clocks_per_bit
        self.fifo_depth = fifo_depth
        if plant is not None and not two_domains:
            raise ValueError("a planted clock-domain fault needs two_domains=True")
        if plant is not None and plant not in PLANTS:
            raise ValueError(f"plant must be one of {', '.join(PLANTS)}, not {plant!r}")
        self.two_domains, self.plant = two_domains, plant
        self.selftest = not config.core           # the self-test engine drives dot-add units only
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
        cfg = self.config
        m = Module()

        # ---- request bytes: a FIFO, overflows and framing errors counted ----
        m.submodules.rx_fifo = fifo = SyncFIFO(width=8, depth=self.fifo_depth)
        m.d.comb += [fifo.w_data.eq(self.rx.payload), fifo.w_en.eq(self.rx.valid)]
        byte, have, take = fifo.r_data, fifo.r_rdy, fifo.r_en
        got = Signal()
        m.d.comb += got.eq(have & take)
        overflow = Signal()
        m.d.comb += overflow.eq(self.rx.valid & ~fifo.w_rdy)

        # ---- counters: one increment (or the RESET clear) per counter per cycle ----
        counters = {name: Signal(32, name=name) for name in COUNTER_NAMES}
        inc = {name: Signal(name=f"inc_{name}") for name in COUNTER_NAMES}
        clear_counters = Signal()
        for name, counter in counters.items():
            with m.If(clear_counters):
                m.d.sync += counter.eq(0)
            with m.Elif(inc[name]):
                m.d.sync += counter.eq(counter + 1)
        m.d.comb += [inc["rx_overflows"].eq(overflow), inc["framing_errors"].eq(self.framing_error)]
        lost, clear_lost = Signal(), Signal()         # a byte was dropped since the last response
        with m.If(overflow):
            m.d.sync += lost.eq(1)
        with m.Elif(clear_lost):
            m.d.sync += lost.eq(0)

        # ---- CRC, one register for both directions ----
        crc, crc_byte, crc_update, crc_init = Signal(16), Signal(8), Signal(), Signal()
        with m.If(crc_init):
            m.d.sync += crc.eq(0xFFFF)
        with m.Elif(crc_update):
            m.d.sync += crc.eq(crc16_step(crc, crc_byte))

        # ---- inter-byte timeout within a frame ----
        timing = Signal()
        timer = Signal(range(self.timeout_cycles + 1))
        timed_out = Signal()
        m.d.sync += timer.eq(Mux(got | ~timing, 0, timer + 1))
        m.d.comb += timed_out.eq(timing & ~have & (timer >= self.timeout_cycles - 1))

        # ---- buffers and the identify ROM ----
        in_width, out_bits = cfg.in_bytes * 8, cfg.out_bits
        m.submodules.inbuf = inbuf = Memory(shape=unsigned(in_width), depth=cfg.depth, init=[])
        m.submodules.outbuf = outbuf = Memory(shape=unsigned(out_bits), depth=cfg.depth, init=[])
        blob = cfg.identify_blob
        m.submodules.identify = rom = Memory(shape=unsigned(8), depth=len(blob), init=list(blob))
        compute = FAST if self.two_domains else "sync"     # the buffers' compute-side ports
        in_write, in_read = inbuf.write_port(granularity=8), inbuf.read_port(domain=compute)
        out_write, out_read = outbuf.write_port(domain=compute), outbuf.read_port()
        rom_read = rom.read_port()
        # the read ports' data registered (see SEND_PAYLOAD)
        out_data, rom_data = (Signal.like(out_read.data, name="out_data_q"),
                              Signal.like(rom_read.data, name="rom_data_q"))
        m.d.sync += [out_data.eq(out_read.data), rom_data.eq(rom_read.data)]

        # ---- frame state ----
        header = Signal(24)                           # cmd, length:u16 as received
        cmd, length = header[0:8], header[8:24]
        count = Signal(2)                             # header / CRC bytes so far
        p = Signal(16)                                # payload bytes so far (either direction)
        # p + 1 kept in a register beside p: comparing it with a length is an equality, not an
        # adder and then an equality (p -> p + 1 == length -> next state limited the top to 88 MHz)
        p_inc = Signal(16, init=1)
        param = Signal(8 * _PARAM_BYTES)              # the first payload bytes
        index, count16 = param[0:16], param[16:32]   # LOAD/READ index (RUN's count), READ's count
        bad = Signal(8)                               # status decided before the payload ends
        crc_rx = Signal(16)
        ptr = Signal(range(cfg.depth + 1))            # entry: LOAD writes, READ reads
        ebyte = Signal(range(max(cfg.in_bytes, cfg.out_bytes)))   # byte within the entry
        loaded = Signal(16)
        status, resp_len, source = Signal(8), Signal(16), Signal(3)
        small = Signal(32)                            # LOAD's count, RUN's cycles
        issue, done = Signal(range(cfg.depth + 1)), Signal(range(cfg.depth + 1))
        holding, counting, cycles = Signal(), Signal(), Signal(32)
        # done + 1 kept in a register beside done, as p_inc beside p: RUN's "last result" check is then
        # an equality of two registers (done -> + 1 -> compare -> respond limited the top to 87 MHz)
        done_inc = Signal(len(done) + 1, init=1)
        tx_step = Signal()                            # a response payload byte goes out this cycle
        # RUN's and READ's range checks from registers: the parameters are complete at least the
        # CRC's two bytes before EXEC reads them (index -> add -> compare -> response length was
        # the board top's critical path at 74 MHz)
        range_ok = {"run": Signal(), "read": Signal()}
        m.d.sync += [range_ok["run"].eq((index != 0) & (index <= cfg.depth)),
                     range_ok["read"].eq(index + count16 <= cfg.depth)]
        bridge = self._bridge(m, in_read, out_write) if self.two_domains else None
        engine = self._engine(m, bridge)

        def start_run():
            if bridge is not None:
                m.d.comb += [bridge.run.eq(1), bridge.run_count.eq(index)]
            else:
                m.d.sync += [r.eq(0) for r in (issue, done, holding, counting, cycles)] + [done_inc.eq(1)]
        # where SELFTEST's answer turns from signatures to its trailer, and whether p is before it,
        # from registers: resp_len and p are set thousands of cycles before the first payload byte
        # and p moves only when a byte goes out, three cycles apart (the subtract and compare in
        # front of the signature FIFO's pop limited the board top to 84 MHz)
        trailer_at, in_sigs = Signal(16), Signal()
        m.d.sync += [trailer_at.eq(resp_len - SELFTEST_TRAILER_BYTES), in_sigs.eq(p < trailer_at)]

        def respond(code, nbytes=0, src=_SMALL):
            m.d.sync += [status.eq(code), resp_len.eq(nbytes), source.eq(src), count.eq(0),
                         p.eq(0), p_inc.eq(1),
                         self.error.eq(code != Status.OK)]
            m.d.comb += [crc_init.eq(1), clear_lost.eq(1)]
            m.next = "SEND_HEADER"

        def receive_or_time_out():
            m.d.comb += [take.eq(1), timing.eq(1)]
            with m.If(~have & timed_out):
                m.d.comb += inc["timeouts"].eq(1)
                respond(Status.TIMEOUT)

        def rx_crc():
            m.d.comb += [crc_byte.eq(byte), crc_update.eq(1)]

        with m.FSM(name="link") as fsm:
            with m.State("HUNT"):
                m.d.comb += take.eq(1)
                with m.If(have):
                    with m.If(byte == REQUEST_SYNC):
                        m.d.comb += crc_init.eq(1)
                        m.d.sync += count.eq(0)
                        m.next = "HEADER"
                    with m.Else():
                        m.d.comb += inc["skipped_bytes"].eq(1)

            with m.State("HEADER"):
                receive_or_time_out()
                with m.If(have):
                    rx_crc()
                    m.d.sync += [header.eq(Cat(header[8:], byte)), count.eq(count + 1)]
                    with m.If(count == 2):
                        m.next = "CHECK_HEADER"

            with m.State("CHECK_HEADER"):
                m.d.sync += [p.eq(0), p_inc.eq(1), param.eq(0), ebyte.eq(0), loaded.eq(0), count.eq(0), bad.eq(0)]
                with m.If(length > cfg.max_length):     # answered now; the rest is skipped
                    m.d.comb += inc["bad_frames"].eq(1)
                    respond(Status.BAD_LENGTH)
                with m.Else():
                    self._check_header(m, cmd, length, bad)
                    m.next = "PAYLOAD"
                    with m.If(length == 0):
                        m.next = "CRC"

            with m.State("PAYLOAD"):
                receive_or_time_out()
                with m.If(have):
                    rx_crc()
                    m.d.sync += [p.eq(p_inc), p_inc.eq(p_inc + 1)]
                    with m.If(p < _PARAM_BYTES):
                        m.d.sync += param.word_select(p[:5], 8).eq(byte)
                    loading = (cmd == Command.LOAD) & (bad == 0) & (p >= 2)
                    with m.If(loading):
                        self._write_entry_byte(m, in_write, byte, ptr, ebyte, loaded)
                    with m.If((cmd == Command.LOAD) & (p == 1)):
                        m.next = "LOAD_CHECK"
                    with m.Elif(p_inc == length):
                        m.next = "CRC"

            with m.State("LOAD_CHECK"):               # the index is in: may the entries be written?
                fits = _times(index, cfg.in_bytes) + length <= cfg.depth * cfg.in_bytes + 2
                m.d.sync += ptr.eq(index)
                with m.If(~fits):
                    m.d.sync += bad.eq(Status.BAD_RANGE)
                m.next = "PAYLOAD"
                with m.If(p == length):
                    m.next = "CRC"

            with m.State("CRC"):
                receive_or_time_out()
                with m.If(have):
                    m.d.sync += [crc_rx.word_select(count[0], 8).eq(byte), count.eq(count + 1)]
                    with m.If(count == 1):
                        m.next = "EXEC"

            with m.State("EXEC"):
                with m.If(lost):                       # counted as rx_overflows already
                    respond(Status.OVERFLOW)
                with m.Elif(crc_rx != crc):
                    m.d.comb += inc["crc_errors"].eq(1)
                    respond(Status.BAD_CRC)
                with m.Elif(bad != 0):
                    m.d.comb += inc["bad_frames"].eq(1)
                    respond(bad)
                with m.Else():
                    self._execute(m, respond, inc, clear_counters, cmd, index, count16, ebyte, ptr, loaded, small,
                                  start_run, len(blob), range_ok)
                    if engine is not None:
                        self._start_selftest(m, respond, inc, cmd, param, engine, done, done_inc)

            with m.State("RUN"):
                if bridge is not None:                  # the fast side runs it; its cycles when done
                    with m.If(~bridge.busy):
                        m.d.sync += small.eq(bridge.cycles)
                        m.d.comb += inc["frames_ok"].eq(1)
                        respond(Status.OK, 4)
                else:
                    run_count = index
                    advance = ~holding | self.unit_i.ready
                    m.d.comb += [in_read.addr.eq(issue), in_read.en.eq(advance),
                                 self.unit_i.valid.eq(holding), self.unit_i.payload.eq(in_read.data[:cfg.in_bits])]
                    with m.If(advance):
                        m.d.sync += holding.eq(issue < run_count)
                        with m.If(issue < run_count):
                            m.d.sync += issue.eq(issue + 1)
                    issued = holding & self.unit_i.ready
                    m.d.sync += counting.eq(counting | issued)
                    with m.If(counting | issued):
                        m.d.sync += cycles.eq(cycles + 1)
                    m.d.comb += [out_write.addr.eq(done), out_write.data.eq(self.unit_o.payload),
                                 out_write.en.eq(self.unit_o.valid)]
                    with m.If(self.unit_o.valid):
                        m.d.sync += [done.eq(done_inc), done_inc.eq(done_inc + 1)]
                        with m.If(done_inc == run_count):
                            m.d.sync += small.eq(cycles + 1)
                            m.d.comb += inc["frames_ok"].eq(1)
                            respond(Status.OK, 4)

            if engine is not None:
                with m.State("CAPTURE"):              # the engine's results into the output buffer
                    if bridge is None:                # (with two domains the fast side writes them)
                        m.d.comb += [out_write.addr.eq(done), out_write.data.eq(self.unit_o.payload),
                                     out_write.en.eq(self.unit_o.valid)]
                        with m.If(self.unit_o.valid):
                            m.d.sync += [done.eq(done_inc), done_inc.eq(done_inc + 1)]
                    with m.If(~engine.busy):
                        m.d.sync += small.eq(engine.cycles)
                        m.d.comb += inc["frames_ok"].eq(1)
                        respond(Status.OK, 4)

            with m.State("SEND_HEADER"):
                m.d.comb += [self.tx.valid.eq(1),
                             self.tx.payload.eq(Cat(C(RESPONSE_SYNC, 8), status, resp_len).word_select(count, 8))]
                with m.If(self.tx.ready):
                    m.d.comb += [crc_byte.eq(self.tx.payload), crc_update.eq(count != 0)]
                    m.d.sync += count.eq(count + 1)
                    with m.If(count == 3):
                        m.next = "SEND_PAYLOAD"
                        with m.If(resp_len == 0):
                            m.next = "SEND_CRC"

            with m.State("SEND_PAYLOAD"):
                payload, byte_ok = Signal(8), Signal(init=1)   # a signature byte may not be there yet
                with m.Switch(source):
                    with m.Case(_SMALL):
                        m.d.comb += payload.eq(small.word_select(p[:2], 8))
                    with m.Case(_ROM):
                        m.d.comb += payload.eq(rom_data)
                    with m.Case(_OUTBUF):
                        padded = Cat(out_data, C(0, cfg.out_bytes * 8 - out_bits))
                        m.d.comb += payload.eq(padded.word_select(ebyte, 8))
                    with m.Case(_COUNTERS):
                        m.d.comb += payload.eq(Cat(*counters.values()).word_select(p[:5], 8))
                    if engine is not None:
                        with m.Case(_SIGS):
                            self._signature_byte(m, engine, payload, byte_ok, p, trailer_at, in_sigs, tx_step)
                # the byte goes out from a register, offered the cycle after it was selected, and the
                # block RAMs' read data are registered before the byte select: the block RAM's
                # clock-to-out -> byte select -> source mux path would otherwise limit the clock
                # (78 MHz, then 81 MHz on the ECP5-85F); so a byte is offered three cycles after the
                # one before it went (new address, read data, selected byte), nothing next to the
                # UART's thousand.  Whether the byte is there (a signature may not be yet) is
                # registered with it.
                payload_q, ok_q = Signal(8, name="payload_q"), Signal(name="byte_ok_q")
                settling, fresh = Signal(name="byte_settling"), Signal(name="byte_fresh")
                m.d.sync += [payload_q.eq(payload), ok_q.eq(byte_ok),
                             settling.eq(~tx_step), fresh.eq(settling & ~tx_step)]
                m.d.comb += [self.tx.valid.eq(fresh & ok_q), self.tx.payload.eq(payload_q),
                             tx_step.eq(fresh & ok_q & self.tx.ready)]
                with m.If(tx_step):
                    m.d.comb += [crc_byte.eq(payload_q), crc_update.eq(1)]
                    m.d.sync += [p.eq(p_inc), p_inc.eq(p_inc + 1)]
                    with m.If(ebyte == cfg.out_bytes - 1):
                        m.d.sync += [ebyte.eq(0), ptr.eq(ptr + 1)]
                    with m.Else():
                        m.d.sync += ebyte.eq(ebyte + 1)
                    with m.If(p_inc == resp_len):
                        m.next = "SEND_CRC"

            with m.State("SEND_CRC"):
                m.d.comb += [self.tx.valid.eq(1), self.tx.payload.eq(crc.word_select(count[0], 8))]
                with m.If(self.tx.ready):
                    m.d.sync += count.eq(count + 1)
                    with m.If(count == 1):
                        m.next = "HUNT"

        # sync read ports see the address one cycle ahead: the next byte's entry when one goes out
        last_byte = tx_step & (ebyte == cfg.out_bytes - 1)
        m.d.comb += [rom_read.addr.eq(Mux(tx_step, p_inc, p)),
                     out_read.addr.eq(Mux(last_byte, ptr + 1, ptr)),
                     self.busy.eq(~fsm.ongoing("HUNT") | (engine.busy if engine is not None else 0))]
        if bridge is None:
            m.d.comb += self.unit_o.ready.eq(1)
        return m

    # ---- the self-test --------------------------------------------------------------------------

    def _bridge(self, m, in_read, out_write):
        """Two domains: the compute side behind :class:`fpga.crossing.ComputeBridge`, driving the unit
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
        if bridge is not None:
            return bridge
        m.submodules.selftest = engine = SelfTestEngine(self.config)
        m.d.comb += [engine.results.valid.eq(self.unit_o.valid), engine.results.payload.eq(self.unit_o.payload),
                     engine.unit_i.ready.eq(self.unit_i.ready)]
        with m.If(engine.busy):
            m.d.comb += [self.unit_i.valid.eq(engine.unit_i.valid), self.unit_i.payload.eq(engine.unit_i.payload)]
        return engine

    def _start_selftest(self, m, respond, inc, cmd, param, engine, done, done_inc):
        """SELFTEST: start the engine and answer at once (the signatures follow as blocks finish);
        SELFTEST_CAPTURE: start it on one window and answer when its results are in the buffer."""
        seed, kind, opcode = param[0:64], param[64:72], param[72:80]
        first, blocks, block_len = param[80:112], param[112:128], param[128:144]
        capture = cmd == Command.SELFTEST_CAPTURE
        m.d.comb += [engine.seed.eq(seed), engine.kind.eq(kind[0]), engine.first.eq(first),
                     engine.capture.eq(capture), engine.blocks.eq(Mux(capture, 1, blocks)),
                     engine.block_len.eq(Mux(capture, blocks, block_len))]
        valid = (kind < len(KINDS)) & (opcode == 0) & (blocks != 0)
        lanes_bytes = 4 * self.config.lanes
        with m.If(cmd == Command.SELFTEST):
            with m.If(~valid | (block_len == 0) | (blocks > selftest_max_blocks(self.config.lanes))):
                m.d.comb += inc["bad_frames"].eq(1)
                respond(Status.BAD_RANGE)
            with m.Else():
                m.d.comb += [engine.start.eq(1), inc["frames_ok"].eq(1)]
                respond(Status.OK, (_times(blocks, lanes_bytes) + SELFTEST_TRAILER_BYTES)[:16], _SIGS)
        with m.If(capture):
            with m.If(~valid | (blocks > self.config.depth)):
                m.d.comb += inc["bad_frames"].eq(1)
                respond(Status.BAD_RANGE)
            with m.Else():
                m.d.comb += engine.start.eq(1)
                m.d.sync += [done.eq(0), done_inc.eq(1)]
                m.next = "CAPTURE"

    def _signature_byte(self, m, engine, payload, byte_ok, p, trailer_at, in_sigs, tx_step):
        """SELFTEST's answer: the signatures as the FIFO has them, then cycles and vectors once done."""
        word_bytes = 4 * self.config.lanes
        sbyte = Signal(range(word_bytes))
        with m.If(in_sigs):
            m.d.comb += [payload.eq(engine.sigs.payload.word_select(sbyte, 8)), byte_ok.eq(engine.sigs.valid)]
            last = sbyte == word_bytes - 1
            m.d.comb += engine.sigs.ready.eq(tx_step & last)
            with m.If(tx_step):
                m.d.sync += sbyte.eq(Mux(last, 0, sbyte + 1))
        with m.Else():
            m.d.comb += [payload.eq(Cat(engine.cycles, engine.vectors).word_select((p - trailer_at)[:3], 8)),
                         byte_ok.eq(~engine.busy)]

    def _check_header(self, m, cmd, length, bad):
        """The status a header alone decides: unknown command, a length the command never has."""
        fixed = {**_FIXED_LENGTH, **(_SELFTEST_LENGTH if self.selftest else {})}
        with m.Switch(cmd):
            for command, expected in fixed.items():
                with m.Case(command):
                    with m.If(length != expected):
                        m.d.sync += bad.eq(Status.BAD_LENGTH)
            with m.Case(Command.LOAD):
                with m.If(length < 2):
                    m.d.sync += bad.eq(Status.BAD_LENGTH)
            with m.Default():
                m.d.sync += bad.eq(Status.BAD_COMMAND)

    def _write_entry_byte(self, m, port, byte, ptr, ebyte, loaded):
        """One LOAD payload byte into its byte lane of the entry at ``ptr``."""
        in_bytes = self.config.in_bytes
        m.d.comb += [port.addr.eq(ptr), port.data.eq(byte.replicate(in_bytes)),
                     port.en.eq(C(1, in_bytes) << ebyte)]
        with m.If(ebyte == in_bytes - 1):
            m.d.sync += [ebyte.eq(0), ptr.eq(ptr + 1), loaded.eq(loaded + 1)]
        with m.Else():
            m.d.sync += ebyte.eq(ebyte + 1)

    def _execute(self, m, respond, inc, clear_counters, cmd, index, count16, ebyte, ptr, loaded, small, start_run,
                 blob_len, range_ok):
        """An intact, well-formed request: answer it, or start the run."""
        out_bytes = self.config.out_bytes
        ok = inc["frames_ok"]
        with m.Switch(cmd):
            with m.Case(Command.IDENTIFY):
                m.d.comb += ok.eq(1)
                respond(Status.OK, blob_len, _ROM)
            with m.Case(Command.LOAD):
                with m.If(ebyte != 0):                  # a partial entry at the end
                    m.d.comb += inc["bad_frames"].eq(1)
                    respond(Status.BAD_LENGTH)
                with m.Else():
                    m.d.sync += small.eq(loaded)
                    m.d.comb += ok.eq(1)
                    respond(Status.OK, 2)
            with m.Case(Command.RUN):
                with m.If(~range_ok["run"]):
                    m.d.comb += inc["bad_frames"].eq(1)
                    respond(Status.BAD_RANGE)
                with m.Else():
                    start_run()
                    m.next = "RUN"
            with m.Case(Command.READ):
                with m.If(~range_ok["read"]):
                    m.d.comb += inc["bad_frames"].eq(1)
                    respond(Status.BAD_RANGE)
                with m.Else():
                    m.d.sync += [ptr.eq(index), ebyte.eq(0)]
                    m.d.comb += ok.eq(1)
                    respond(Status.OK, _times(count16, out_bytes)[:16], _OUTBUF)
            with m.Case(Command.COUNTERS):
                m.d.comb += ok.eq(1)
                respond(Status.OK, 4 * len(COUNTER_NAMES), _COUNTERS)
            with m.Case(Command.RESET):
                m.d.comb += clear_counters.eq(1)
                respond(Status.OK)
