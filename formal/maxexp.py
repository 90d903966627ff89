"""The exponent-max tree (:class:`hw.maxexp.MaxExponentTree`) against a running maximum."""

from __future__ import annotations

from amaranth import Mux

from hw.maxexp import MaxExponentTree

from .harness import Equivalence
from .property import Property

__all__ = ["maxexp_property"]


def maxexp_property(n, levels_per_stage=3, units=(), dut_class=MaxExponentTree) -> Property:
    def build():
        dut = dut_class(n, levels_per_stage)

        def expect(past):
            exps = past(dut.exps)
            best = exps[0]
            for i in range(1, n):                         # left to right, keep the larger
                best = Mux(exps[i] > best, exps[i], best)
            return [(dut.e_max, best)]

        h = Equivalence(dut, dut.latency, [dut.exps], expect)
        return h, h.depth
    return Property(f"maxexp/n{n}.lv{levels_per_stage}", "maxexp", build, units=tuple(units))
