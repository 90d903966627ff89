"""A stand-in dot-add unit: same ports and properties as ``hw.dot_add_unit``, a trivial function.

For testing the co-simulation machinery without the real datapath.  Each lane
computes ``d = (c + a[0] + b[0]) mod 2**fd_bits`` (:func:`reference` is the
same in numpy), through ``latency`` pipeline registers, accepting one input
every ``initiation_interval`` cycles, stalled by backpressure.  ``bug=True``
flips bit 0 of ``d`` whenever the low byte of ``c`` is ``0x5a`` (about one
vector in 256 on random bits): a planted mismatch.
"""

from __future__ import annotations

import numpy as np
from amaranth import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .payload import PayloadLayout

BUG_BYTE = 0x5A


class StandInUnit(wiring.Component):
    """Pipelined stand-in for one instruction's dot-add unit (see the module docstring)."""

    def __init__(self, ins, lanes: int = 1, latency: int = 3, initiation_interval: int = 1, bug: bool = False):
        if latency < 0 or initiation_interval < 1:
            raise ValueError("latency >= 0 and initiation_interval >= 1")
        self.layout = PayloadLayout(ins, lanes)
        self._latency = latency
        self._ii = initiation_interval
        self.bug = bug
        super().__init__({
            "i": In(stream.Signature(self.layout.in_width)),
            "o": Out(stream.Signature(self.layout.out_width)),
        })

    @property
    def latency(self) -> int:
        """Cycles from an accepted input to its output (no stalls)."""
        return self._latency

    @property
    def initiation_interval(self) -> int:
        """Cycles between accepted inputs at full rate."""
        return self._ii

    def _function(self, m, payload):
        lay = self.layout
        wd = lay.widths["d"]
        outs = []
        for lane in range(lay.lanes):
            fld = {(f.name, f.index): f for f in lay.fields if f.lane == lane}
            a0, b0, c = (payload[f.offset:f.offset + f.width] for f in (fld["a", 0], fld["b", 0], fld["c", 0]))
            d = Signal(wd, name=f"d{lane}")
            m.d.comb += d.eq(c + a0 + b0)
            if self.bug:
                flip = Signal(name=f"bug{lane}")
                m.d.comb += flip.eq(c[:8] == BUG_BYTE)
                d2 = Signal(wd, name=f"dbug{lane}")
                m.d.comb += d2.eq(d ^ flip)
                d = d2
            outs.append(d)
        return Cat(*outs)

    def elaborate(self, platform):
        m = Module()
        lay = self.layout
        result = self._function(m, self.i.payload)
        # the II counter: after an accepted input, refuse inputs for II-1 cycles
        can_take = Signal(init=1)
        if self._ii > 1:
            wait = Signal(range(self._ii))
            with m.If(self.i.valid & self.i.ready):
                m.d.sync += wait.eq(self._ii - 1)
            with m.Elif(wait != 0):
                m.d.sync += wait.eq(wait - 1)
            m.d.comb += can_take.eq(wait == 0)
        if self._latency == 0:
            m.d.comb += [
                self.o.payload.eq(result),
                self.o.valid.eq(self.i.valid & can_take),
                self.i.ready.eq(self.o.ready & can_take),
            ]
            return m
        valid = [Signal(name=f"v{s}") for s in range(self._latency)]
        data = [Signal(lay.out_width, name=f"p{s}") for s in range(self._latency)]
        advance = Signal()
        m.d.comb += [
            advance.eq(self.o.ready | ~valid[-1]),
            self.i.ready.eq(advance & can_take),
            self.o.valid.eq(valid[-1]),
            self.o.payload.eq(data[-1]),
        ]
        with m.If(advance):
            m.d.sync += [valid[0].eq(self.i.valid & can_take), data[0].eq(result)]
            for s in range(1, self._latency):
                m.d.sync += [valid[s].eq(valid[s - 1]), data[s].eq(data[s - 1])]
        return m


def reference(ins, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
    """What :class:`StandInUnit` (without the bug) computes, in numpy."""
    wd = ins.formats[3].storage_bits
    a, b, c = (np.asarray(x, np.uint64) for x in (a, b, c))
    d = c + a[..., 0] + b[..., 0]
    return d & np.uint64((1 << wd) - 1) if wd < 64 else d
