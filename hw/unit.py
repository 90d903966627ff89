"""The dot-add unit of one catalog instruction: lanes of a datapath behind valid/ready streams.

:func:`dot_add_unit` is the generator: it reads the instruction's algorithm
parameters from golden's catalog (the same :class:`golden.Instruction` the
golden model runs) and builds the datapath.  A custom design is one parameter
away: ``dot_add_unit(ins, params=ins.params.with_(F=27))``.
"""

from __future__ import annotations

from amaranth import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

import golden
from golden.algorithms import Params
from golden.catalog import Instruction
from golden.formats import get_format

from .fda import FDAChain
from .fdrda import FDRDAPass
from .gdfs import GDFS
from .gps import GPS
from .pipeline import Delay
from .sfma import SFMAChain

__all__ = ["DotAddUnit", "dot_add_unit", "lane_layout", "SUPPORTED", "DATAPATHS"]


def _fda(ins: Instruction, params: Params):
    fa, fb, fc, fd = ins.formats
    return FDAChain(fa, fb, fc, fd, ins.k, params, ins.scale_format, ins.block_size)


def _fdrda(ins: Instruction, params: Params):
    fa, fb, fc, fd = ins.formats
    return FDAChain(fa, fb, fc, fd, ins.k, params, pass_class=FDRDAPass)


def _sfma(ins: Instruction, params: Params):
    fa, fb, fc, fd = ins.formats
    return SFMAChain(fa, fb, fc, fd, ins.k, params)


def _gps(ins: Instruction, params: Params):
    fa, fb, fc, fd = ins.formats
    return GPS(fa, fb, fc, fd, ins.k, params)


# Datapath builders by base algorithm: each takes (instruction, params) and returns a Stage-like
# component with ports en, a, b, c, [scale_a, scale_b], d, a `latency` and `stage_latencies`.
DATAPATHS = {"FDA": _fda, "GDFS": GDFS, "FDRDA": _fdrda, "GFDRDA": _fdrda, "SFMA": _sfma, "GPS": _gps}
SUPPORTED = tuple(DATAPATHS)          # base algorithms with RTL so far


def lane_layout(ins: Instruction) -> data.StructLayout:
    """One dot-add's operands, LSB first: a[0..K-1], b[0..K-1], c, then scale_a, scale_b if scaled."""
    fa, fb, fc, _ = ins.formats
    fields = {"a": data.ArrayLayout(fa.storage_bits, ins.k), "b": data.ArrayLayout(fb.storage_bits, ins.k),
              "c": fc.storage_bits}
    if ins.scale_format:
        fs = get_format(ins.scale_format)
        fields["scale_a"] = data.ArrayLayout(fs.storage_bits, ins.k // ins.block_size)
        fields["scale_b"] = data.ArrayLayout(fs.storage_bits, ins.k // ins.block_size)
    return data.StructLayout(fields)


class DotAddUnit(wiring.Component):
    """``lanes`` dot-adds per cycle for one instruction, fully pipelined.

    The pipeline advances whenever the output register is free or being read
    (``en = o.ready | ~o.valid``), so backpressure holds every stage.

    Parameters
    ----------
    ins : golden.Instruction
        The instruction (formats, K, scales) ...
    params : golden.Params, optional
        ... and its algorithm parameters (default ``ins.params``).
    lanes : int
        Dot-adds accepted per cycle.

    Members
    -------
    i : In(stream.Signature(ArrayLayout(lane_layout(ins), lanes)))
    o : Out(stream.Signature(ArrayLayout(d bits, lanes)))
    """

    def __init__(self, ins: Instruction, params: Params | None = None, lanes: int = 1):
        self.ins = ins
        self.params = params or ins.params
        if self.params.base not in DATAPATHS:
            self._MustUse__silence = True                  # never built: no "unused" warning later
            raise NotImplementedError(f"no RTL for {self.params.base} yet ({ins.arch} {ins.name}); "
                                      f"RTL exists for: {', '.join(SUPPORTED)}")
        if self.params.floor_rounding != "RD" and self.params.base in ("FDRDA", "GFDRDA"):
            self._MustUse__silence = True
            raise NotImplementedError(f"the {self.params.base} RTL floors (floor_rounding='RD'); "
                                      f"floor_rounding={self.params.floor_rounding!r} exists in golden only")
        if lanes < 1:
            self._MustUse__silence = True
            raise ValueError("lanes must be at least 1")
        self.lanes = lanes
        fa, fb, fc, fd = ins.formats
        self.datapaths = [DATAPATHS[self.params.base](ins, self.params) for _ in range(lanes)]
        super().__init__({
            "i": In(stream.Signature(data.ArrayLayout(lane_layout(ins), lanes))),
            "o": Out(stream.Signature(data.ArrayLayout(fd.storage_bits, lanes))),
        })

    @property
    def latency(self) -> int:
        """Cycles from an accepted input to its result on ``o`` (no stalls)."""
        return self.datapaths[0].latency

    @property
    def initiation_interval(self) -> int:
        """Cycles between accepted inputs: 1 (chains are unrolled)."""
        return 1

    @property
    def stage_latencies(self) -> list[tuple[str, int]]:
        """(stage, cycles) of one lane, in order: what ``latency`` adds up."""
        return self.datapaths[0].stage_latencies

    def elaborate(self, platform):
        m = Module()
        assert sum(c for _, c in self.stage_latencies) == self.latency, "stages must add up to the unit latency"
        en = self.o.ready | ~self.o.valid
        m.d.comb += self.i.ready.eq(en)
        valid = m.submodules.valid = Delay(1, self.latency)
        m.d.comb += [valid.en.eq(en), valid.i.eq(self.i.valid), self.o.valid.eq(valid.o)]
        for n, dp in enumerate(self.datapaths):
            m.submodules[f"lane{n}"] = dp
            lane = self.i.payload[n]
            m.d.comb += [dp.en.eq(en), dp.a.eq(lane.a), dp.b.eq(lane.b), dp.c.eq(lane.c), self.o.payload[n].eq(dp.d)]
            if self.ins.scale_format:
                m.d.comb += [dp.scale_a.eq(lane.scale_a), dp.scale_b.eq(lane.scale_b)]
        return m


def dot_add_unit(instr, lanes: int = 1, params: Params | None = None, arch: str | None = None) -> DotAddUnit:
    """Build the dot-add unit of a catalog instruction (``Instruction`` or ``(arch, name)``)."""
    if not isinstance(instr, Instruction):
        if arch is None and isinstance(instr, tuple):
            arch, instr = instr
        instr = golden.lookup(arch, instr)
    return DotAddUnit(instr, params, lanes)
