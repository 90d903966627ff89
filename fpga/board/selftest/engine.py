"""The self-test engine: generated operands through the unit at full rate, results folded into
per-block, per-lane CRC-32 signatures (or handed to the output buffer, to rerun a block).

The signatures are :func:`fpga.board.selftest.model.signatures` (CRC-32/MPEG-2 of each lane's results
of a block, NaNs canonical where the instruction does not specify their bits); a test shows the
gateware equal to the model.  :class:`fpga.board.link.HostLink` starts it for the SELFTEST and
SELFTEST_CAPTURE commands and streams the signatures back while it runs.
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal
from amaranth.hdl import EnableInserter
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from golden.formats import special_bits

from .crc import CRC_BITS, SplitCRC
from .generator import SelfTestGenerator

__all__ = ["SelfTestEngine", "SIGNATURE_BITS"]

SIGNATURE_BITS = CRC_BITS
SIGNATURE_FIFO_DEPTH = 4       # signatures waiting for the link; a block starts only when its has room


class SelfTestEngine(wiring.Component):
    """Blocks of generated entries through a dot-add unit; a signature per block and lane.

    A run issues ``blocks`` blocks of ``block_len`` entries from entry ``first`` (mod 2**32), one
    entry a cycle while the unit takes them; a block starts only when the signature FIFO has room
    for it and the blocks in flight, so a slow link stalls the run instead of losing signatures.
    In capture mode (one block) no signature is made: the results are for the link's output buffer.

    Parameters
    ----------
    config : fpga.board.config.BoardConfig
        A dot-add unit's board (one instruction, ``lanes`` lanes).

    Members
    -------
    start : In(1)
        A pulse: latch the run's parameters below and begin.
    capture, seed, kind, first, blocks, block_len : In
        The run: capture mode (1 bit), the 64-bit seed, the kind (0 bits, 1 normal), the first
        entry (32 bits), blocks and entries per block (16 bits each, at least 1).
    busy : Out(1)
        From ``start`` until the last signature is in the FIFO (capture: the last result is out).
    cycles : Out(32)
        Cycles from the first entry into the unit to the last result.
    vectors : Out(32)
        Dot-adds whose results came back (entries times lanes).
    unit_i : Out(stream.Signature(config.in_shape))
        To the unit (the link selects it while the engine is busy).
    results : In(stream.Signature(config.out_shape, always_ready=True))
        The unit's results (the link always takes them).
    sigs : Out(stream.Signature(lanes * 32))
        One block's signatures, lane 0 in the low 32 bits.
    """

    def __init__(self, config):
        if config.core:
            raise ValueError("the self-test engine drives a dot-add unit; a tensor core is not supported yet")
        self.config = config
        self.ins = config.instruction_objects[0]
        self.lanes = config.lanes
        self.generator = SelfTestGenerator(self.ins, self.lanes)
        super().__init__({
            "start": In(1), "capture": In(1), "seed": In(64), "kind": In(1), "first": In(32),
            "blocks": In(16), "block_len": In(16),
            "busy": Out(1), "cycles": Out(32), "vectors": Out(32),
            "unit_i": Out(stream.Signature(config.in_shape)),
            "results": In(stream.Signature(config.out_shape, always_ready=True)),
            "sigs": Out(stream.Signature(self.lanes * SIGNATURE_BITS)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = fifo = SyncFIFO(width=self.lanes * SIGNATURE_BITS, depth=SIGNATURE_FIFO_DEPTH)
        m.d.comb += [self.sigs.valid.eq(fifo.r_rdy), self.sigs.payload.eq(fifo.r_data), fifo.r_en.eq(self.sigs.ready)]

        capture, seed, kind = Signal(), Signal(64), Signal()
        # a block's last entry index, registered at the start (the link refuses block_len 0): the
        # counters below compare with a register rather than through a subtractor, which was the
        # fast domain's critical path at 100 MHz (block_len -> to_issue, 88.6 MHz)
        block_end = Signal(16)
        with m.If(self.start):
            m.d.sync += [capture.eq(self.capture), seed.eq(self.seed), kind.eq(self.kind),
                         block_end.eq(self.block_len - 1), self.busy.eq(1)]

        # ---- issue: the entry counter through the generator into the unit ----
        advance = Signal()
        m.d.comb += advance.eq(self.unit_i.ready | ~self.unit_i.valid)
        m.submodules.generator = gen = EnableInserter(advance)(self.generator)
        entry, in_block, to_issue = Signal(32), Signal(16), Signal(16)
        pending = Signal(range(SIGNATURE_FIFO_DEPTH + 2))          # blocks started, signature not yet pushed
        # room for one more block's signature, and blocks left to issue, both registered: the FIFO's
        # level plus the pending count, its compare and the 16-bit test of to_issue in front of
        # to_issue's own update were the fast domain's critical path (HGMMA F32 at 100 MHz: 97.51
        # MHz).  room_after is true a cycle late, so it asks for room for one more block than the
        # count then held: level + pending grows by at most one block a cycle.
        room_after, more = Signal(), Signal()
        m.d.sync += room_after.eq(fifo.level + pending + 1 < SIGNATURE_FIFO_DEPTH)
        room = capture | room_after
        issuing = more & ((in_block != 0) | room)
        m.d.comb += [gen.seed.eq(seed), gen.kind.eq(kind), gen.index.eq(entry), gen.valid.eq(issuing),
                     self.unit_i.valid.eq(gen.o_valid), self.unit_i.payload.eq(gen.payload)]
        starts_block = advance & issuing & (in_block == 0)
        with m.If(self.start):
            m.d.sync += [entry.eq(self.first), in_block.eq(0), to_issue.eq(self.blocks), more.eq(self.blocks != 0)]
        with m.Elif(advance & issuing):
            m.d.sync += entry.eq(entry + 1)
            with m.If(in_block == block_end):
                m.d.sync += [in_block.eq(0), to_issue.eq(to_issue - 1), more.eq(to_issue != 1)]
            with m.Else():
                m.d.sync += in_block.eq(in_block + 1)

        # ---- results: a CRC per lane, a signature per block ----
        # the unit's results reach the CRCs through two registers, the NaN canonicalisation between
        # them: the route from the unit's output register across the chip (CDNA3 CoGFDRDA at 75 MHz:
        # 71.42 MHz, 4.8 ns of routing before the CRC's XOR tree) and then the NaN test in front of the
        # XOR tree (HGMMA F32 at 100 MHz: 96.67 MHz, eight LUT levels) were each the fast domain's
        # critical path.  A start empties both (what is in them then is a RUN's, not the engine's).
        arrived_valid, arrived = Signal(), Signal.like(self.results.payload)
        m.d.sync += [arrived_valid.eq(self.results.valid & ~self.start), arrived.eq(self.results.payload)]
        results_valid, results = Signal(), Signal.like(self.results.payload)
        m.d.sync += [results_valid.eq(arrived_valid & ~self.start)] + \
            [results[lane].eq(self._canonical(arrived[lane])) for lane in range(self.lanes)]
        # only the engine's own results count: the unit's results of a RUN (the unit is shared) must
        # not advance the block counter or push a signature (a RUN between two self-tests did)
        got, to_finish = Signal(16), Signal(16)
        last, counted = Signal(), Signal()
        m.d.comb += [counted.eq(results_valid & self.busy), last.eq(counted & (got == block_end))]
        with m.If(self.start):
            m.d.sync += [got.eq(0), to_finish.eq(self.blocks)]
        with m.Elif(counted):
            m.d.sync += got.eq(Mux(last, 0, got + 1))
            with m.If(last):
                m.d.sync += to_finish.eq(to_finish - 1)
        crcs = []
        for lane in range(self.lanes):
            m.submodules[f"crc{lane}"] = crc = SplitCRC(self.ins.formats[3].storage_bits)
            m.d.comb += [crc.first.eq(got == 0), crc.valid.eq(counted & ~capture), crc.data.eq(results[lane])]
            crcs.append(crc.crc)
        # the block's last result is in the CRCs two cycles after it came (SplitCRC's two stages)
        last_in, push = Signal(), Signal()
        m.d.sync += [last_in.eq(last & ~capture), push.eq(last_in)]
        m.d.comb += [fifo.w_en.eq(push), fifo.w_data.eq(Cat(*crcs))]
        with m.If(self.start):
            m.d.sync += pending.eq(0)
        with m.Else():
            m.d.sync += pending.eq(pending + (starts_block & ~capture) - push)
        with m.If(self.busy & ~self.start & (to_finish == 0) & ~last_in & ~push):
            m.d.sync += self.busy.eq(0)

        # ---- counters ----
        counting = Signal()
        issued = self.unit_i.valid & self.unit_i.ready
        with m.If(self.start):
            m.d.sync += [counting.eq(0), self.cycles.eq(0), self.vectors.eq(0)]
        with m.Else():
            with m.If(issued):
                m.d.sync += counting.eq(1)
            with m.If((counting | issued) & (to_finish != 0)):
                m.d.sync += self.cycles.eq(self.cycles + 1)
            with m.If(results_valid):
                m.d.sync += self.vectors.eq(self.vectors + self.lanes)
        return m

    def _canonical(self, d):
        """A result as the signature folds it: NaNs canonical unless the instruction specifies them."""
        fd = self.ins.formats[3]
        if self.ins.params.exact_nan:
            return d
        if fd.nan != "ieee":
            raise NotImplementedError(f"a self-test signature of {fd.name} results with unspecified NaN bits")
        exp, man = d[fd.man_bits:fd.man_bits + fd.exp_bits], d[:fd.man_bits]
        return Mux((exp == (1 << fd.exp_bits) - 1) & (man != 0), int(special_bits(fd, "nan")), d)
