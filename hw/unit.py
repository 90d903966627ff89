"""The dot-add unit of one catalog instruction: lanes of a datapath behind valid/ready streams.

:func:`dot_add_unit` is the generator: it takes the instruction's :class:`golden.Datapath` (the
same description the golden model runs) and builds the datapath of its base algorithm.  A custom
design is one parameter away: ``dot_add_unit(ins, params=ins.params.with_(F=27))``.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal
from amaranth.hdl import EnableInserter
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

import golden
from golden.algorithms import Params, check_nan_bits
from golden.catalog import Instruction
from golden.descriptors import ALGORITHMS, Part, Unsupported, part, parts, register
from golden.formats import get_format
from golden.options import is_whole

from .fda import FDAChain
from .fdrda import FDRDAChain
from .gdfs import GDFS
from .gps import GPS
from .lowered import LoweredFDA, is_lowered
from .pipeline import Checked, Delay
from .pipelining import Pipelining, StageKind, as_pipelining
from .sfma import SFMAChain
from .specials import is_nan_word

__all__ = ["DotAddUnit", "dot_add_unit", "lane_layout", "SUPPORTED", "DATAPATHS", "datapath_class"]

# hw's part of each algorithm descriptor (golden.descriptors): the datapath class (it takes a
# golden.Datapath and is a DatapathPipeline: ports a, b, c, [scale_a, scale_b], d; `latency`,
# `stage_latencies`), whether it sees a and b only decoded (sign, exponent, significand) so that a
# tensor core shares it between format pairs through a union decoder, and the stage kinds
# (hw.pipelining.STAGE_KINDS) whose register placements it reads.  LOWERED: the datapath of an
# algorithm's compiled path (its descriptor's `lowering`, golden.Params' lowering fields), or none
_SHARED = (StageKind.OPERANDS, StageKind.MULTIPLY, StageKind.MAX_LEVELS, StageKind.ALIGN, StageKind.COMPRESS,
           StageKind.FINAL_ADD, StageKind.NORMALISE)
HW_PARTS = {
    "FDA": (FDAChain, True, _SHARED + (StageKind.FMA,)),      # FMA: a compiled path's c_last add
    "GDFS": (GDFS, False, _SHARED + (StageKind.GROUPS,)),
    "FDRDA": (FDRDAChain, True, _SHARED + (StageKind.MERGE, StageKind.OVERFLOW)),
    "GFDRDA": (FDRDAChain, True, _SHARED + (StageKind.MERGE, StageKind.OVERFLOW)),
    "SFMA": (SFMAChain, False, (StageKind.OPERANDS, StageKind.MULTIPLY, StageKind.NORMALISE, StageKind.FMA,
                                StageKind.PARTIALS, StageKind.DECODE)),
    "GPS": (GPS, False, (StageKind.OPERANDS, StageKind.MULTIPLY, StageKind.NORMALISE, StageKind.F32)),
}
LOWERED = {"FDA": LoweredFDA}
for _name, (_cls, _union, _kinds) in HW_PARTS.items():
    register(_name, Part.HW_DATAPATH, _cls)
    register(_name, Part.HW_LOWERED, LOWERED.get(_name))
    register(_name, Part.HW_UNION, _union)
    register(_name, Part.PIPELINING, _kinds)
DATAPATHS = parts(Part.HW_DATAPATH)     # base algorithm -> datapath class (the ones hw registers)
SUPPORTED = tuple(DATAPATHS)          # base algorithms with RTL so far


def datapath_class(datapath, who: str = ""):
    """The class that builds ``datapath``, its arguments checked (nothing is built).  An algorithm
    without a datapath: :class:`golden.descriptors.Unsupported` naming ``hw.datapath`` and it."""
    p = datapath.params
    try:
        cls = part(p.base, Part.HW_DATAPATH)
    except Unsupported as e:
        raise Unsupported(p.base, Part.HW_DATAPATH, f"no RTL for {p.base} yet{f', {who}' if who else ''}; RTL "
                          f"exists for: {', '.join(parts(Part.HW_DATAPATH))}") from e
    # a compiled path (golden.Params' lowering fields) wraps its base's chain
    if ALGORITHMS[p.base].lowering and is_lowered(p):
        cls = part(p.base, Part.HW_LOWERED)
    cls.check(datapath)
    return cls


def lane_layout(ins) -> data.StructLayout:
    """One dot-add's operands, LSB first: a[0..K-1], b[0..K-1], c, then scale_a, scale_b if scaled
    (``ins``: an Instruction or a Datapath)."""
    fa, fb, fc, _ = (get_format(f) for f in ins.formats)
    fields = {"a": data.ArrayLayout(fa.storage_bits, ins.k), "b": data.ArrayLayout(fb.storage_bits, ins.k),
              "c": fc.storage_bits}
    if ins.scale_format:
        fs = get_format(ins.scale_format)
        fields["scale_a"] = data.ArrayLayout(fs.storage_bits, ins.k // ins.block_size)
        fields["scale_b"] = data.ArrayLayout(fs.storage_bits, ins.k // ins.block_size)
    return data.StructLayout(fields)


def _datapath(ins: Instruction, params: Params | None):
    # with_params: golden's check of the Params against the instruction (golden.params.check_params_for),
    # so the RTL accepts exactly the values golden does, refused in the same words
    return ins.datapath if params is None else ins.with_params(params).datapath


class DotAddUnit(Checked, wiring.Component):
    """``lanes`` dot-adds per cycle for one instruction, fully pipelined.

    The datapaths run in a ``sync`` domain enabled (Amaranth's ``EnableInserter``) whenever the
    output register is free or being read (``o.ready | ~o.valid``), so backpressure holds every
    stage.

    Parameters
    ----------
    ins : golden.Instruction
        The instruction: its ``datapath`` (formats, K, scales, params) ...
    params : golden.Params, optional
        ... with these algorithm parameters instead of ``ins.params``.
    lanes : int
        Dot-adds accepted per cycle.
    pipelining : Pipelining, int or str, optional
        Register stages of the datapaths' long stages (``None``: level 0); every setting computes
        the same bits with II = 1, only ``latency`` changes.

    Members
    -------
    i : In(stream.Signature(ArrayLayout(lane_layout(ins), lanes)))
    o : Out(stream.Signature(ArrayLayout(d bits, lanes)))
    """

    @classmethod
    def check(cls, ins: Instruction, params: Params | None = None, lanes: int = 1, pipelining=None) -> None:
        check_lanes(lanes)
        as_pipelining(pipelining)
        dp = _datapath(ins, params)
        datapath_class(dp, f"{ins.arch} {ins.name}")
        if dp.params.nan_bits is not None:
            check_nan_bits(get_format(dp.d_format), dp.params.nan_bits)    # golden's check, same words

    def __init__(self, ins: Instruction, params: Params | None = None, lanes: int = 1, pipelining=None):
        check_lanes(lanes)                  # before any lane is built: 10**6 of them would build for minutes
        self.ins = ins
        self.datapath = _datapath(ins, params)
        self.params = self.datapath.params
        self.lanes = lanes
        self.pipelining: Pipelining = as_pipelining(pipelining)
        build = datapath_class(self.datapath, f"{ins.arch} {ins.name}")
        self.datapaths = [build(self.datapath, self.pipelining) for _ in range(lanes)]
        super().__init__({
            "i": In(stream.Signature(data.ArrayLayout(lane_layout(ins), lanes))),
            "o": Out(stream.Signature(data.ArrayLayout(self.datapath.d_format.storage_bits, lanes))),
        })

    @property
    def latency(self) -> int:
        """Cycles from an accepted input to its result on ``o`` (no stalls)."""
        return self.pipelining.operands + self.datapaths[0].latency

    @property
    def initiation_interval(self) -> int:
        """Cycles between accepted inputs: 1 (chains are unrolled)."""
        return 1

    @property
    def stage_latencies(self) -> list[tuple[str, int]]:
        """(stage, cycles) of one lane, in order: what ``latency`` adds up (the operand register
        first, when ``pipelining.operands``)."""
        return [("operands", 1)] * self.pipelining.operands + self.datapaths[0].stage_latencies

    def elaborate(self, platform):
        m = Module()
        assert sum(c for _, c in self.stage_latencies) == self.latency, "stages must add up to the unit latency"
        advance = Signal()
        m.d.comb += [advance.eq(self.o.ready | ~self.o.valid), self.i.ready.eq(advance)]
        valid = Delay(1, self.latency)
        m.submodules.valid = EnableInserter(advance)(valid)
        m.d.comb += [valid.i.eq(self.i.valid), self.o.valid.eq(valid.o)]
        # the operand register (pipelining.operands): the unit's inputs get a cycle of their own, so
        # whatever feeds the unit (a block RAM's slow read data on the FPGA) ends at a register
        operands = Delay(self.i.payload.shape(), self.pipelining.operands)
        m.submodules.operands = EnableInserter(advance)(operands)
        m.d.comb += operands.i.eq(self.i.payload)
        for n, dp in enumerate(self.datapaths):
            m.submodules[f"lane{n}"] = EnableInserter(advance)(dp)
            lane = operands.o[n]
            m.d.comb += [dp.a.eq(lane.a), dp.b.eq(lane.b), dp.c.eq(lane.c), self.o.payload[n].eq(self._nan(dp.d))]
            if self.datapath.scale_format:
                m.d.comb += [dp.scale_a.eq(lane.scale_a), dp.scale_b.eq(lane.scale_b)]
        return m

    def _nan(self, d):
        """``d``, or ``params.nan_bits`` where ``d`` is a NaN (golden.Params.nan_bits: one NaN pattern
        for every NaN the datapath makes); ``d`` itself when the field is None."""
        bits = self.params.nan_bits
        return d if bits is None else Mux(is_nan_word(self.datapath.d_format, d), bits, d)


MAX_LANES = 256     # far past any board (python -m fpga fit finds a handful on an ECP5-85F) or simulation


def check_lanes(lanes) -> None:
    """``lanes`` a whole number 1..:data:`MAX_LANES`; ValueError naming the range otherwise."""
    if not is_whole(lanes) or not 1 <= lanes <= MAX_LANES:
        raise ValueError(f"lanes must be a whole number 1..{MAX_LANES} (dot-adds per cycle of one unit), "
                         f"not {lanes!r}")


def dot_add_unit(instr, lanes: int = 1, params: Params | None = None, arch: str | None = None,
                 pipelining=None) -> DotAddUnit:
    """Build the dot-add unit of a catalog instruction (``Instruction`` or ``(arch, name)``);
    ``pipelining``: a :class:`hw.Pipelining`, a level or a spec such as ``"2,align=2"``."""
    if not isinstance(instr, Instruction):
        if arch is None and isinstance(instr, tuple):
            arch, instr = instr
        instr = golden.lookup(arch, instr)
    return DotAddUnit(instr, params, lanes, pipelining)
