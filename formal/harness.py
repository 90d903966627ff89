"""The equivalence harness: a stage under free inputs beside a reference, compared ``latency`` cycles later.

:class:`Equivalence` drives every listed input port of the stage with a fresh ``AnySeq`` each
cycle, keeps each input's history for ``latency`` cycles, and asserts, at the step where the
first inputs come out, that each output equals the reference computed from those inputs.  A
stage is a feed-forward pipeline, so its output at step ``latency`` is a function of the inputs
of step 0 alone: a bounded check of ``latency + 1`` steps (:attr:`Equivalence.depth`) covers
every input sequence, registers taken from the wrong cycle included (the other cycles' inputs
are free and differ).  The ``sync`` reset is assumed low.
"""

from __future__ import annotations

from amaranth import Elaboratable, Module, ResetSignal, Signal, Value
from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Fragment

__all__ = ["Equivalence"]


class Equivalence(Elaboratable):
    """``dut``'s outputs against ``expect``'s reference values, ``latency`` cycles after the inputs.

    Parameters
    ----------
    dut : Elaboratable
        The stage (its ports are driven and read from here).
    latency : int
        Cycles from the inputs to the outputs.
    inputs : list
        The stage's input ports (Values or Views); each is driven by its own ``AnySeq``.
    expect : callable
        ``expect(past)`` returns ``[(actual, expected), ...]``: ``past(port)`` is the input as of
        ``latency`` cycles ago (a value of the port's shape), ``actual`` an output of the stage.
    assume : callable, optional
        ``assume(now)`` returns conditions the inputs meet every cycle (``now(port)`` is the port).
    """

    def __init__(self, dut, latency: int, inputs, expect, assume=None):
        self.dut, self.latency, self.inputs, self.expect, self.assume = dut, latency, list(inputs), expect, assume

    @property
    def depth(self) -> int:
        """Steps of the bounded check that cover every input sequence."""
        return self.latency + 1

    def elaborate(self, platform):
        m = self._m = Module()
        # the stage is elaborated here, first, so that ``expect`` may read what its elaboration
        # records (the compressor tree's rows of each level)
        m.submodules.dut = Fragment.get(self.dut, platform)
        m.d.comb += Assume(~ResetSignal("sync"))
        history = {}
        for n, port in enumerate(self.inputs):
            m.d.comb += Value.cast(port).eq(AnySeq(len(Value.cast(port))))
            value = port
            for cycle in range(self.latency):
                reg = Signal(port.shape(), name=f"in{n}_past{cycle + 1}")
                m.d.sync += reg.eq(value)
                value = reg
            history[id(port)] = value
        for condition in (self.assume(lambda port: port) if self.assume else ()):
            m.d.comb += Assume(condition)
        steps = Signal(range(self.latency + 1))
        with m.If(steps < self.latency):
            m.d.sync += steps.eq(steps + 1)
        for actual, expected in self.expect(lambda port: history[id(port)]):
            m.d.comb += Assert((steps < self.latency) | (Value.cast(actual) == expected))
        return m

    def let(self, value, name: str = "ref"):
        """A signal equal to ``value`` (for ``expect``, while elaborating): a value a reference
        uses twice is named once, so its expression is not copied into every use."""
        sig = Signal(Value.cast(value).shape(), name=name)
        self._m.d.comb += sig.eq(value)
        return sig

    def prev(self, value):
        """``value`` (any signal of the design) one cycle ago: for ``expect``, while elaborating."""
        reg = Signal(value.shape(), name="prev")
        self._m.d.sync += reg.eq(value)
        return reg
