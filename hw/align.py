"""Alignment shifters: each term to ``F`` fraction bits below ``2**e_max`` (FDA step 3).

Latency 1.  Bits shifted out are truncated, on the magnitude (RZ, NVIDIA);
the term is then made two's complement for the adder tree.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal, signed, unsigned
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from .decode import Decoded, exp_shape
from .multiply import Product
from .pipeline import Stage

__all__ = ["AlignShifters", "term_width"]


def term_width(F: int) -> int:
    """Signed width of an aligned term: F fraction bits, 2 integer bits (products < 4), sign."""
    return F + 3


class AlignShifters(Stage):
    """Shift ``k`` products and c right by ``e_max - e`` keeping ``F`` fraction bits.

    Parameters
    ----------
    fa, fb, fc : Format
        Operand formats (product significands carry ``man_a + man_b`` fraction bits).
    k : int
        Products per pass.
    F : int
        Fraction bits kept.

    Members
    -------
    en : In(1)
    products : In(ArrayLayout(Product, k))
    c_term : In(Decoded(fc))
    e_max : In(exp_shape())
    terms : Out(ArrayLayout(signed(F + 3), k + 1))   (the last one is c)
    """

    LATENCY = 1

    def __init__(self, fa, fb, fc, k, F):
        self.fa, self.fb, self.fc, self.k, self.F = fa, fb, fc, k, F
        super().__init__({
            "products": In(data.ArrayLayout(Product(fa, fb), k)),
            "c_term": In(Decoded(fc)),
            "e_max": In(exp_shape()),
            "terms": Out(data.ArrayLayout(signed(term_width(F)), k + 1)),
        })

    def _shift(self, m, name, sig, frac, exp, sign):
        F = self.F
        left = max(F - frac, 0)
        # e_max >= exp, so the distance is a non-negative shift; shifts past the width give 0
        dist = Signal(unsigned(exp_shape().width + 1), name=f"{name}_dist")
        m.d.comb += dist.eq((self.e_max - exp).as_unsigned())
        mag = Signal(unsigned(term_width(F)), name=f"{name}_mag")
        m.d.comb += mag.eq(((sig << left) >> max(frac - F, 0)) >> dist)
        term = Signal(signed(term_width(F)), name=f"{name}_term")
        m.d.comb += term.eq(Mux(sign, -mag, mag))
        return term

    def elaborate(self, platform):
        m = Module()
        frac_p = self.fa.man_bits + self.fb.man_bits
        for j in range(self.k):
            p = self.products[j]
            t = self._shift(m, f"p{j}", p.sig, frac_p, p.exp, p.sign)
            with m.If(self.en):
                m.d.sync += self.terms[j].eq(t)
        c = self.c_term
        t = self._shift(m, "c", c.sig, self.fc.man_bits, c.exp, c.sign)
        with m.If(self.en):
            m.d.sync += self.terms[self.k].eq(t)
        return m
