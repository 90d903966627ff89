"""The host link's transmitting part: a response frame out (phases SEND_HEADER, SEND_PAYLOAD and
SEND_CRC), its payload bytes from the source the executor named, its CRC, to the UART."""

from __future__ import annotations

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..protocol import RESPONSE_SYNC, SELFTEST_TRAILER_BYTES
from .frame import AnswerSignature, CursorControl, CursorView, Source, phases

__all__ = ["Transmit"]


class Transmit(wiring.Component):
    """Response frames to the UART.

    Parameters
    ----------
    config : fpga.board.config.BoardConfig
    selftest : bool
        Whether SELFTEST's signatures are a source.

    Members
    -------
    at : In(CursorView)
    cursor : Out(CursorControl)
    answer : In(AnswerSignature)
    tx : Out(stream.Signature(8))
    """

    def __init__(self, config, selftest: bool):
        self.config, self.selftest = config, selftest
        self.phases = phases(config)
        super().__init__({"at": In(CursorView(config)), "cursor": Out(CursorControl(config)),
                          "answer": In(AnswerSignature(config, selftest)), "tx": Out(stream.Signature(8))})

    def elaborate(self, platform):
        m, a, at = Module(), self.answer, self.at
        status, resp_len, source = a.status, a.length, a.source
        # where SELFTEST's answer turns from signatures to its trailer, and whether p is before it,
        # from registers: resp_len and p are set thousands of cycles before the first payload byte
        # and p moves only when a byte goes out, three cycles apart (the subtract and compare in
        # front of the signature FIFO's pop limited the board top to 84 MHz)
        trailer_at, in_sigs = Signal(16, name="trailer_at"), Signal(name="in_sigs")
        m.d.sync += [trailer_at.eq(resp_len - SELFTEST_TRAILER_BYTES), in_sigs.eq(at.p < trailer_at)]
        tx_step = Signal()                            # a response payload byte goes out this cycle
        with m.Switch(at.phase):
            with m.Case(self.phases.SEND_HEADER):
                self._header(m, status, resp_len)
            with m.Case(self.phases.SEND_PAYLOAD):
                self._payload(m, source, tx_step, trailer_at, in_sigs)
                with m.If(tx_step & (at.p_inc == resp_len)):
                    self._goto(m, self.phases.SEND_CRC)
            with m.Case(self.phases.SEND_CRC):
                m.d.comb += [self.tx.valid.eq(1), self.tx.payload.eq(at.crc.word_select(at.count[0], 8))]
                with m.If(self.tx.ready):
                    m.d.comb += self.cursor.count_step.eq(1)
                    with m.If(at.count == 1):
                        self._goto(m, self.phases.HUNT)
        # sync read ports see the address one cycle ahead: the next byte's entry when one goes out
        last_byte = tx_step & (at.ebyte == self.config.out_bytes - 1)
        m.d.comb += [a.rom_addr.eq(Mux(tx_step, at.p_inc, at.p)), a.out_addr.eq(Mux(last_byte, at.ptr + 1, at.ptr))]
        return m

    def _goto(self, m, phase):
        m.d.comb += [self.cursor.goto.eq(1), self.cursor.next.eq(phase)]

    def _header(self, m, status, resp_len):
        at, cur = self.at, self.cursor
        m.d.comb += [self.tx.valid.eq(1),
                     self.tx.payload.eq(Cat(C(RESPONSE_SYNC, 8), status, resp_len).word_select(at.count, 8))]
        with m.If(self.tx.ready):
            m.d.comb += [cur.crc_byte.eq(self.tx.payload), cur.crc_step.eq(at.count != 0), cur.count_step.eq(1)]
            with m.If(at.count == 3):
                self._goto(m, self.phases.SEND_PAYLOAD)
                with m.If(resp_len == 0):
                    self._goto(m, self.phases.SEND_CRC)

    def _payload(self, m, source, tx_step, trailer_at, in_sigs):
        """A payload byte: selected, registered, offered, and when taken the cursor steps on."""
        cfg, a, at = self.config, self.answer, self.at
        payload, byte_ok = Signal(8), Signal(init=1)   # a signature byte may not be there yet
        with m.Switch(source):
            with m.Case(Source.SMALL):
                m.d.comb += payload.eq(a.small.word_select(at.p[:2], 8))
            with m.Case(Source.ROM):
                m.d.comb += payload.eq(a.rom_data)
            with m.Case(Source.OUTBUF):
                padded = Cat(a.out_data, C(0, cfg.out_bytes * 8 - cfg.out_bits))
                m.d.comb += payload.eq(padded.word_select(at.ebyte, 8))
            with m.Case(Source.COUNTERS):
                m.d.comb += payload.eq(a.counters.word_select(at.p[:5], 8))
            if self.selftest:
                with m.Case(Source.SIGS):
                    self._signature_byte(m, payload, byte_ok, tx_step, trailer_at, in_sigs)
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
            m.d.comb += [self.cursor.crc_byte.eq(payload_q), self.cursor.crc_step.eq(1),
                         self.cursor.p_step.eq(1), self.cursor.entry_step.eq(1)]

    def _signature_byte(self, m, payload, byte_ok, tx_step, trailer_at, in_sigs):
        """SELFTEST's answer: the signatures as the FIFO has them, then cycles and vectors once done."""
        a = self.answer
        word_bytes = 4 * self.config.lanes
        sbyte = Signal(range(word_bytes), name="sbyte")
        with m.If(in_sigs):
            m.d.comb += [payload.eq(a.sigs.payload.word_select(sbyte, 8)), byte_ok.eq(a.sigs.valid)]
            last = sbyte == word_bytes - 1
            m.d.comb += a.sigs.ready.eq(tx_step & last)
            with m.If(tx_step):
                m.d.sync += sbyte.eq(Mux(last, 0, sbyte + 1))
        with m.Else():
            m.d.comb += [payload.eq(Cat(a.cycles, a.vectors).word_select((self.at.p - trailer_at)[:3], 8)),
                         byte_ok.eq(~a.engine_busy)]
