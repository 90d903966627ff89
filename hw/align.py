"""Alignment shifters: each term to ``F`` fraction bits below ``2**e_max`` (FDA step 3).

Latency 1.  Bits shifted out are truncated on the magnitude (RZ, as NVIDIA
does and as AMD aligns its products); the term is then made two's
complement for the adder tree.
"""

from __future__ import annotations

from amaranth import Module, Mux, Shape, Signal, signed, unsigned
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from .decode import Decoded, exp_shape
from .pipeline import Stage

__all__ = ["AlignShifters", "term_width", "align_magnitude"]


def term_width(F: int, int_bits: int = 2) -> int:
    """Signed width of an aligned term: F fraction bits, ``int_bits`` integer bits, a sign."""
    return F + int_bits + 1


def align_magnitude(m: Module, name: str, sig, frac: int, exp, e_max, F: int, width: int):
    """``floor(sig * 2**(exp - frac - e_max + F))`` for ``e_max >= exp``: the RZ alignment of a magnitude."""
    dist = Signal(unsigned(exp_shape().width + 1), name=f"{name}_dist")
    m.d.comb += dist.eq((e_max - exp).as_unsigned())
    mag = Signal(unsigned(width), name=f"{name}_mag")
    # shifts past the width give 0
    m.d.comb += mag.eq(((sig << max(F - frac, 0)) >> max(frac - F, 0)) >> dist)
    return mag


class AlignShifters(Stage):
    """Shift ``k`` terms and (optionally) c right by ``e_max - e`` keeping ``F`` fraction bits.

    Parameters
    ----------
    term : StructLayout
        Layout of one term, with fields ``sign``, ``exp`` and ``sig``.
    frac : int
        Fraction bits of a term's ``sig``.
    k : int
        Number of terms.
    F : int
        Fraction bits kept.
    fc : Format, optional
        Format of c, aligned as one more term (None: no c).

    Members
    -------
    products : In(ArrayLayout(term, k))
    c_term : In(Decoded(fc)), if ``fc``
    e_max : In(exp_shape())
    terms : Out(ArrayLayout(signed(width), k (+ 1)))   (the last one is c)
    """

    LATENCY = 1

    def __init__(self, term, frac, k, F, fc=None):
        self.term, self.frac, self.k, self.F, self.fc = term, frac, k, F, fc
        self.int_bits = max(Shape.cast(term["sig"].shape).width - frac, 1)
        self.width = term_width(F, self.int_bits)
        members = {"products": In(data.ArrayLayout(term, k)), "e_max": In(exp_shape()),
                   "terms": Out(data.ArrayLayout(signed(self.width), k + (fc is not None)))}
        if fc is not None:
            members["c_term"] = In(Decoded(fc))
        super().__init__(members)

    def _term(self, m, name, sig, frac, exp, sign):
        mag = align_magnitude(m, name, sig, frac, exp, self.e_max, self.F, self.width)
        t = Signal(signed(self.width), name=f"{name}_term")
        m.d.comb += t.eq(Mux(sign, -mag, mag))
        return t

    def elaborate(self, platform):
        m = Module()
        for j in range(self.k):
            p = self.products[j]
            t = self._term(m, f"p{j}", p.sig, self.frac, p.exp, p.sign)
            m.d.sync += self.terms[j].eq(t)
        if self.fc is not None:
            c = self.c_term
            t = self._term(m, "c", c.sig, self.fc.man_bits, c.exp, c.sign)
            m.d.sync += self.terms[self.k].eq(t)
        return m
