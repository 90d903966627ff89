"""The exponent-max tree (:class:`hw.maxexp.MaxExponentTree`) against a plain tree of maxima.

The reference pairs neighbours level by level (an odd one out goes up as it is), each node the
larger of its two, with no registers: a maximum whatever the pairing, since max is associative
and commutative.  What the proof checks is the RTL's comparisons (signed), its pairing (no
exponent dropped or taken twice) and its registers (each level's values from the same cycle).
Two references that do not pair like the RTL were tried and time out for 33 exponents (120 s,
Yices and Boolector): a running maximum (a chain of 32 compare-and-selects), and the definition
(at least every exponent, equal to one of them; 26 s already for 9).  A solver must rediscover
the associativity of max through every level."""

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
            layer = [past(dut.exps)[i] for i in range(n)]
            while len(layer) > 1:
                pairs = [h.let(Mux(x.as_signed() >= y.as_signed(), x, y), "max")
                         for x, y in zip(layer[0::2], layer[1::2])]
                layer = pairs + layer[len(pairs) * 2:]
            return [(dut.e_max, layer[0])]

        h = Equivalence(dut, dut.latency, [dut.exps], expect)
        return h, h.depth
    return Property(f"maxexp/n{n}.lv{levels_per_stage}", "maxexp", build, units=tuple(units))
