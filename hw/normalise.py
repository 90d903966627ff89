"""Normaliser and rounder: exact fixed-point sum to the output format (FDA step 5).

Latency ``1 + pipelining.normalise`` (the cut points of :attr:`Pipelining.normalise_cuts`: the
magnitude here, the rest inside the rounder).  Two's complement to sign and magnitude, then the shared
:class:`hw.round.Rounder` (RZ or RNE at ``p`` fraction bits: 23 for f32, 13 for the
E8M13 result, 10 for f16; the overflow rule; the +0 rule for zero results), then
the special-value override (canonical NaN, infinities) computed by the multiplier
stage.
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal, signed, unsigned
from amaranth.lib.wiring import In, Out

from golden.formats import get_format
from golden.rules import Overflow, Rounding

from .decode import exp_shape
from .pipeline import Stage
from .pipelining import Timeline, as_pipelining
from .round import MODES, OVERFLOWS, WIDE_EXP, Rounder
from .specials import Specials, ZeroTerms, inf_word, nan_word, sign_bit

__all__ = ["NormaliseRound"]



class NormaliseRound(Stage):
    """Round ``total * 2**(e_max - F)`` to the output format.

    Parameters
    ----------
    sum_bits : int
        Signed width of ``total``.
    F : int
        Fraction bits of ``total`` below ``2**e_max``.
    fd : Format
        Output format.
    frac_bits : int, optional
        Round at this many fraction bits (default: the format's mantissa).
    rounding : Rounding
    overflow : Overflow
        ``"inf"``: every overflow is infinity; ``"ieee"``: the rounding direction decides.
    positive_zero : bool
        Zero results are +0 whatever the sum's sign (NVIDIA).
    ieee754_zeros : bool
        golden's ``zero_sign="ieee754"``: a zero sum takes IEEE 754's sign from the ``zeros`` flags.
    pipelining : Pipelining, optional
        ``normalise``: cut points (level 0: none).

    Members
    -------
    total : In(signed(sum_bits))
    e_max : In(exp_shape())
    specials : In(Specials)
    zeros : In(ZeroTerms), when ``ieee754_zeros``
    d : Out(fd.storage_bits)
    """

    def __init__(self, sum_bits, F, fd, frac_bits=None, rounding=Rounding.RZ, overflow=Overflow.INF, positive_zero=True,
                 pipelining=None, ieee754_zeros=False):
        self.pipelining = as_pipelining(pipelining)
        if rounding not in MODES or overflow not in OVERFLOWS:
            raise ValueError(f"rounding {rounding!r}, overflow {overflow!r}: valid roundings are {', '.join(MODES)}, "
                             f"overflow rules {', '.join(OVERFLOWS)}")
        self.fd = get_format(fd)
        self.sum_bits, self.F = sum_bits, F
        self.p = self.fd.man_bits if frac_bits is None else frac_bits
        self.rounding, self.overflow, self.positive_zero = rounding, overflow, positive_zero
        self.ieee754_zeros = ieee754_zeros
        members = {"total": In(signed(sum_bits)), "e_max": In(exp_shape()), "specials": In(Specials),
                   "d": Out(self.fd.storage_bits)}
        if ieee754_zeros:
            members["zeros"] = In(ZeroTerms)
        super().__init__(members)

    @property
    def latency(self) -> int:
        return 1 + len(self.pipelining.normalise_cuts)

    def elaborate(self, platform):
        m = Module()
        fd, cuts = self.fd, self.pipelining.normalise_cuts
        tl = Timeline(m)
        neg = tl.let(self.total < 0, 1, "neg")
        mag = tl.let(Mux(neg, -self.total, self.total), unsigned(self.sum_bits), "mag")
        e_lsb = tl.let(self.e_max - self.F, WIDE_EXP, "e_lsb")
        specials = tl.let(self.specials, Specials, "specials")
        if self.ieee754_zeros:
            # IEEE 754 on a zero sum: -0 when every term is -0, else +0 (-0 rounding down)
            neg_zero = self.zeros.all_neg | ((self.rounding == Rounding.RD) & ~self.zeros.all_pos)
            zero_sum = tl.let(Cat(self.total == 0, neg_zero), 2, "zero_sum")
        tl.cut("magnitude" in cuts)
        rnd = m.submodules.round = Rounder(fd, self.sum_bits, mode=self.rounding, frac_bits=self.p,
                                           overflow=self.overflow, positive_zero=self.positive_zero, sticky="mask",
                                           lod="halves", cuts=self.pipelining.rounder_cuts)
        m.d.comb += [rnd.mag.eq(tl(mag)), rnd.e0.eq(tl(e_lsb)), rnd.sign.eq(tl(neg))]
        for _ in range(rnd.latency):
            tl.cut()
        word = tl.let(rnd.word, fd.storage_bits, "word")
        result = Signal(fd.storage_bits)
        sp = tl(specials)
        with m.If(sp.nan):
            m.d.comb += result.eq(nan_word(fd))
        with m.Elif(sp.pinf):
            m.d.comb += result.eq(inf_word(fd))
        with m.Elif(sp.ninf):
            m.d.comb += result.eq(inf_word(fd) | (1 << sign_bit(fd)))
        if self.ieee754_zeros:
            is_zero, neg_zero = tl(zero_sum)
            with m.Elif(is_zero):
                m.d.comb += result.eq(neg_zero << sign_bit(fd))
        with m.Else():
            m.d.comb += result.eq(word)
        m.d.sync += self.d.eq(result)
        assert tl.cycle + 1 == self.latency, "the normaliser's registers must match its declared latency"
        return m
