"""Stream protocol of the unit shell (:class:`hw.unit.DotAddUnit`) and the tensor core
(:class:`hw.tensor_core.TensorCore`), with the datapaths abstracted.

Each lane's (or group's) datapath is replaced by :class:`TagDatapath`: a delay line of the
datapath's own latency whose result is its first ``a`` element (a *tag*), under the same
``EnableInserter`` the shell puts around the real one.  The shell itself (valid delay line,
operand register, backpressure, the core's opcode decode, group delay lines and output select)
is the design's, unchanged.  Properties, with a fresh ``AnySeq`` for every input each cycle:

``ready``
    ``i.ready == o.ready | ~o.valid`` every cycle (the rule the shell documents), k-induction.
``latency``
    With ``o.ready`` always high, an input accepted at cycle t comes out at t + ``latency``
    with its tag, and ``o.valid`` is high exactly then, k-induction.
``order``
    Under any valid/ready pattern: one input (chosen by the solver: an ``AnySeq`` pick) comes
    out once, at its place in the order (after exactly the inputs accepted before it and not
    yet delivered), with its tag; nothing comes out that was not put in.  Bounded: BMC of
    ``latency + ORDER_MARGIN`` steps, room for inputs to be accepted, stalled for up to
    ``ORDER_MARGIN - 1`` cycles in flight, and delivered (a depth below the latency would see no
    result at all and prove nothing; twice the latency timed out at 120 s).  Not unbounded: a stalled
    shell keeps any state, reachable or
    not, for as long as the stall lasts, so k-induction needs invariants over the shell's
    private delay line.
"""

from __future__ import annotations

from amaranth import Elaboratable, Module, ResetSignal, Signal, Value
from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume

import golden
from hw.pipeline import DatapathPipeline, Stage, questions_only
from hw.tensor_core import TensorCore
from hw.unit import DotAddUnit

from .property import Property

__all__ = ["TagDatapath", "ShellHarness", "protocol_properties", "ORDER_MARGIN", "TAG_BITS"]

ORDER_MARGIN = 8
TAG_BITS = 8


class TagDatapath(Stage):
    """A datapath's ports and latency; ``d`` is ``a[0]``'s low :data:`TAG_BITS` bits (zero-extended)
    ``latency`` cycles later (only those bits travel: the solver's state stays small)."""

    def __init__(self, datapath, latency: int):
        self.cycles = latency
        super().__init__(DatapathPipeline.operand_members(datapath))

    @property
    def latency(self) -> int:
        return self.cycles

    @property
    def stage_latencies(self) -> list:
        return [("tag", self.cycles)]

    def elaborate(self, platform):
        m = Module()
        value = Value.cast(self.a[0])[:min(TAG_BITS, len(self.d))]
        for n in range(self.cycles):
            reg = Signal(len(value), name=f"tag{n}")
            m.d.sync += reg.eq(value)
            value = reg
        m.d.comb += self.d.eq(value)
        return m


def abstract_unit(ins, pipelining=None, lanes=1, dut_class=DotAddUnit):
    """The unit shell of ``ins`` with tag datapaths of the real lanes' latency."""
    with questions_only():
        unit = dut_class(ins, lanes=lanes, pipelining=pipelining)
        unit.datapaths = [TagDatapath(unit.datapath, dp.latency) for dp in unit.datapaths]
    return unit


def abstract_core(arch, instructions=None, pipelining=None, dut_class=TensorCore):
    """The tensor core of ``arch`` with tag datapaths of each group's real latency."""
    with questions_only():
        core = dut_class(arch, instructions, pipelining)
        core.datapaths = [TagDatapath(g.datapath, dp.latency) for g, dp in zip(core.groups, core.datapaths)]
    return core


class ShellHarness(Elaboratable):
    """``dut``'s streams under free inputs and one property (:data:`KINDS`).  ``tag_of(payload)``:
    the tag an input carries; ``tag_out(payload)``: the tag a result carries."""

    KINDS = ("ready", "latency", "order")

    def __init__(self, dut, kind, tag_of, tag_out):
        if kind not in self.KINDS:
            raise ValueError(f"unknown protocol property {kind!r}; valid: {', '.join(self.KINDS)}")
        self.dut, self.kind, self.tag_of, self.tag_out = dut, kind, tag_of, tag_out

    def elaborate(self, platform):
        m = Module()
        dut, L = self.dut, self.dut.latency
        m.submodules.dut = dut
        m.d.comb += Assume(~ResetSignal("sync"))
        i, o = dut.i, dut.o
        m.d.comb += [i.valid.eq(AnySeq(1)), Value.cast(i.payload).eq(AnySeq(len(Value.cast(i.payload)))),
                     o.ready.eq(AnySeq(1))]
        taken, given = i.valid & i.ready, o.valid & o.ready
        tag_in, tag_out = self.tag_of(i.payload), self.tag_out(o.payload)
        if self.kind == "ready":
            m.d.comb += Assert(i.ready == (o.ready | ~o.valid))
        elif self.kind == "latency":
            m.d.comb += Assume(o.ready)
            valid, tag = taken, tag_in
            for n in range(L):
                v, t = Signal(name=f"valid_past{n + 1}"), Signal(len(tag_in), name=f"tag_past{n + 1}")
                m.d.sync += [v.eq(valid), t.eq(tag)]
                valid, tag = v, t
            # the first L cycles hold the reset state: nothing has been accepted long enough ago
            m.d.comb += [Assert(o.valid == valid), Assert(~valid | (tag_out == tag))]
        else:
            self._order(m, L, taken, given, tag_in, tag_out)
        return m

    def _order(self, m, L, taken, given, tag_in, tag_out):
        in_flight = Signal(range(L + 3))           # accepted, not yet delivered
        m.d.sync += in_flight.eq(in_flight + taken - given)
        m.d.comb += [Assert(~given | (in_flight + taken > 0)), Assert(in_flight <= L + 1)]
        pick = AnySeq(1)
        picked, done = Signal(), Signal()
        ahead = Signal(range(L + 3))              # results to come out before the picked one
        tag = Signal(len(tag_in))
        with m.If(~picked & taken & pick):
            # in_flight counts the results before it (a result given this same cycle among them)
            m.d.sync += [picked.eq(1), tag.eq(tag_in), ahead.eq(in_flight - given)]
        with m.If(picked & ~done & given):
            with m.If(ahead == 0):
                m.d.comb += Assert(tag_out == tag)
                m.d.sync += done.eq(1)
            with m.Else():
                m.d.sync += ahead.eq(ahead - 1)


def _tag_in_unit(payload):
    return Value.cast(payload[0].a[0])[:TAG_BITS]


def _tag_out_unit(payload):
    return Value.cast(payload[0])[:TAG_BITS]


def _tag_in_core(payload):
    return Value.cast(payload.a[0])[:TAG_BITS]


def _tag_out_core(payload):
    return Value.cast(payload)[:TAG_BITS]


# (architecture, instruction or None for a tensor core, pipelining level): small, and both
# a one-cycle-datapath-free shell and a deep one
UNITS = (("hopper", "HGMMA.64xNx16.F32", 0), ("hopper", "HGMMA.64xNx16.F32", 3), ("cdna3", None, 0),
         ("volta", None, 3))


def unit_property(arch, name, kind, pipelining=0, dut_class=DotAddUnit) -> Property:
    ins = golden.lookup(arch, name)

    def build():
        unit = abstract_unit(ins, pipelining, dut_class=dut_class)
        return ShellHarness(unit, kind, _tag_in_unit, _tag_out_unit), _depth(kind, unit.latency)
    return Property(f"protocol/unit.{arch}.{name}.pl{pipelining}.{kind}", "protocol", build,
                    mode="bmc" if kind == "order" else "prove", units=((ins.arch, ins.name),))


def core_property(arch, kind, pipelining=0, dut_class=TensorCore) -> Property:
    members = tuple((i.arch, i.name) for i in golden.instructions(arch))

    def build():
        core = abstract_core(arch, pipelining=pipelining, dut_class=dut_class)
        return ShellHarness(core, kind, _tag_in_core, _tag_out_core), _depth(kind, core.latency)
    return Property(f"protocol/core.{arch}.pl{pipelining}.{kind}", "protocol", build,
                    mode="bmc" if kind == "order" else "prove", units=members)


def _depth(kind, latency):
    return latency + ORDER_MARGIN if kind == "order" else latency + 2


def protocol_properties() -> list:
    props = []
    for arch, name, level in UNITS:
        for kind in ShellHarness.KINDS:
            props.append(unit_property(arch, name, kind, level) if name else core_property(arch, kind, level))
    return props
