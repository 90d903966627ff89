"""The significand multipliers (:func:`hw.multiply.significand_product`) against schoolbook
multiplication: the sum of ``x``'s set bits' shifted copies of ``y``.

Narrow products (a factor of at most 4 bits) are shift-and-add logic in the RTL and the 8x8 and
11x11 products Yosys's ``$mul``; both are proved here directly (Boolector).  The f32 and f64
significand products of the fma and GPS units (24x24, 53x53) are also a single ``*`` in the
RTL, so there are no partial products of the design's own to prove one by one: the check is
Yosys's multiplier against the schoolbook sum, the classic hard case for bit-level solvers; it is
run with its time limit and reported as it ends.
"""

from __future__ import annotations

from amaranth import Elaboratable, Module, Mux, Signal

from hw.multiply import significand_product

from .harness import Equivalence
from .property import Property

__all__ = ["ProductUnderTest", "multiply_property"]


class ProductUnderTest(Elaboratable):
    """``p = product(x, y)`` for ``a_bits`` x ``b_bits`` significands."""

    def __init__(self, a_bits, b_bits, product=significand_product):
        self.x, self.y, self.product = Signal(a_bits), Signal(b_bits), product
        self.p = Signal(a_bits + b_bits)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.p.eq(self.product(self.x, self.y))
        return m


def schoolbook(x, y):
    """``x * y`` as the sum of ``y << i`` for the set bits ``i`` of ``x``, one row at a time."""
    total = 0
    for i in range(len(x)):
        total = (total + Mux(x[i], y << i, 0))[:len(x) + len(y)]
    return total


def multiply_property(a_bits, b_bits, units=(), product=significand_product) -> Property:
    def build():
        dut = ProductUnderTest(a_bits, b_bits, product)
        h = Equivalence(dut, 0, [dut.x, dut.y], lambda past: [(dut.p, schoolbook(past(dut.x), past(dut.y)))])
        return h, h.depth
    return Property(f"multiply/{a_bits}x{b_bits}", "multiply", build, engine="boolector", units=tuple(units))
