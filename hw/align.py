"""Alignment shifters: each term to ``F`` fraction bits below ``2**e_max`` (FDA step 3).

Latency ``1 + pipelining.align``.  Bits shifted out are truncated on the magnitude (RZ, as
NVIDIA does and as AMD aligns its products); the term is then made two's complement for the
adder tree.  ``align=1`` puts a register between the shift and the two's complement; ``align=2``
also splits the shift in two (the distance's upper bits, a register, its lower bits), which
truncates the same bits: ``floor(floor(x / 2**a) / 2**b) = floor(x / 2**(a + b))``.
"""

from __future__ import annotations

from amaranth import Module, Mux, Shape, Signal, Value, signed, unsigned
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from .decode import Decoded, exp_shape
from .pipeline import Stage
from .pipelining import Timeline, as_pipelining

__all__ = ["AlignShifters", "term_width", "align_magnitude"]


def term_width(F: int, int_bits: int = 2) -> int:
    """Signed width of an aligned term: F fraction bits, ``int_bits`` integer bits, a sign."""
    return F + int_bits + 1


def align_magnitude(tl: Timeline, name: str, sig, frac: int, exp, e_max, F: int, width: int, split: bool = False,
                    dist_cut: bool = False):
    """``floor(sig * 2**(exp - frac - e_max + F))`` for ``e_max >= exp``: the RZ alignment of a magnitude.

    ``split``: the shift in two halves with a register between them (one cut of ``tl``).
    ``dist_cut``: a register between the shift distance and the shift (one more cut): e_max fans
    out to every term, and at level 2 the scaled UTCQMMA unit's path e_max -> distance -> coarse
    shift (routing two thirds of it) held it at 96.6 MHz.
    """
    dist = tl.let((e_max - exp).as_unsigned(), unsigned(exp_shape().width + 1), f"{name}_dist")
    fixed = (sig << max(F - frac, 0)) >> max(frac - F, 0)
    if dist_cut:
        fixed = tl.let(fixed, Value.cast(fixed).shape(), f"{name}_fixed")
        tl.cut()
        fixed, dist = tl.let(tl(fixed), name=f"{name}_fixed_now"), tl.let(tl(dist), name=f"{name}_dist_now")
    if split:
        # shift by the distance's upper bits (past the width: 0), register, then by its lower bits
        low = (len(Signal(range(width + 1))) + 1) // 2
        fixed = tl.let(fixed >> (dist >> low << low), Value.cast(fixed).shape(), f"{name}_coarse")
        tl.cut()
        return tl.let(tl(fixed) >> tl(dist)[:low], unsigned(width), f"{name}_mag")
    # shifts past the width give 0
    return tl.let(fixed >> dist, unsigned(width), f"{name}_mag")


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
    pipelining : Pipelining, optional
        ``align``: registers inside the shifters (level 0: none).

    Members
    -------
    products : In(ArrayLayout(term, k))
    c_term : In(Decoded(fc)), if ``fc``
    e_max : In(exp_shape())
    terms : Out(ArrayLayout(signed(width), k (+ 1)))   (the last one is c)
    """

    def __init__(self, term, frac, k, F, fc=None, pipelining=None):
        self.term, self.frac, self.k, self.F, self.fc = term, frac, k, F, fc
        self.pipelining = as_pipelining(pipelining)
        self.int_bits = max(Shape.cast(term["sig"].shape).width - frac, 1)
        self.width = term_width(F, self.int_bits)
        members = {"products": In(data.ArrayLayout(term, k)), "e_max": In(exp_shape()),
                   "terms": Out(data.ArrayLayout(signed(self.width), k + (fc is not None)))}
        if fc is not None:
            members["c_term"] = In(Decoded(fc))
        super().__init__(members)

    @property
    def latency(self) -> int:
        return 1 + self.pipelining.align

    def _term(self, m, name, sig, frac, exp, sign, out):
        """Align one term into ``out`` (a register), through its own timeline of cut points."""
        tl = Timeline(m, f"{name}_")
        mag = align_magnitude(tl, name, sig, frac, exp, self.e_max, self.F, self.width,
                              split=self.pipelining.align >= 2, dist_cut=self.pipelining.align >= 3)
        tl.cut(self.pipelining.align >= 1)
        m.d.sync += out.eq(Mux(tl(sign), -tl(mag), tl(mag)))
        assert tl.cycle + 1 == self.latency, "the shifters' registers must match their declared latency"

    def elaborate(self, platform):
        m = Module()
        for j in range(self.k):
            p = self.products[j]
            self._term(m, f"p{j}", p.sig, self.frac, p.exp, p.sign, self.terms[j])
        if self.fc is not None:
            c = self.c_term
            self._term(m, "c", c.sig, self.fc.man_bits, c.exp, c.sign, self.terms[self.k])
        return m
