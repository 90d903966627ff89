"""Exponent-max tree over the products and c (FDA step 3, first half).

Latency: one register after every ``levels_per_stage`` comparator levels, so a
wide tree is pipelined: ``latency = ceil(ceil(log2(n)) / levels_per_stage)``
(at least 1).
"""

from __future__ import annotations

import math

from amaranth import Module, Mux, Signal
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from .decode import exp_shape
from .pipeline import Stage

__all__ = ["MaxExponentTree"]


class MaxExponentTree(Stage):
    """The maximum of ``n`` signed exponents.

    Parameters
    ----------
    n : int
        Number of exponents.
    levels_per_stage : int
        Comparator levels between registers.

    Members
    -------
    exps : In(ArrayLayout(exp_shape(), n))
    e_max : Out(exp_shape())
    """

    def __init__(self, n: int, levels_per_stage: int = 3):
        if n < 1 or levels_per_stage < 1:
            raise ValueError("need at least one exponent and one level per stage")
        self.n, self.levels_per_stage = n, levels_per_stage
        self.levels = max(math.ceil(math.log2(n)), 0) if n > 1 else 0
        super().__init__({"exps": In(data.ArrayLayout(exp_shape(), n)), "e_max": Out(exp_shape())})

    @property
    def latency(self) -> int:
        return max(1, math.ceil(self.levels / self.levels_per_stage))

    def elaborate(self, platform):
        m = Module()
        layer = [self.exps[i] for i in range(self.n)]
        level = 0
        stages = 0
        while len(layer) > 1:
            nxt = []
            for i in range(0, len(layer) - 1, 2):
                x, y = layer[i], layer[i + 1]
                w = Signal(exp_shape(), name=f"max_l{level}_{i // 2}")
                m.d.comb += w.eq(Mux(x > y, x, y))
                nxt.append(w)
            if len(layer) % 2:
                nxt.append(layer[-1])
            layer = nxt
            level += 1
            if level % self.levels_per_stage == 0 and len(layer) > 1:
                regs = []
                for i, v in enumerate(layer):
                    r = Signal(exp_shape(), name=f"max_r{stages}_{i}")
                    m.d.sync += r.eq(v)
                    regs.append(r)
                layer = regs
                stages += 1
        m.d.sync += self.e_max.eq(layer[0])
        assert stages + 1 == self.latency, "the tree's registers must match its declared latency"
        return m
