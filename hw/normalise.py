"""Normaliser and rounder: exact fixed-point sum to the output format (FDA step 5).

Latency 1.  Leading-zero count, one right shift to the result's last place
(which also denormalises subnormal results), RZ or RNE at ``p`` fraction bits
(23 for f32, 13 for the E8M13 result, 10 for f16), overflow to infinity,
the +0 rule for zero results, and the special-value override (canonical NaN,
infinities) computed by the multiplier stage.
"""

from __future__ import annotations

from amaranth import Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib.wiring import In, Out

from golden.formats import get_format

from .decode import exp_shape
from .multiply import Specials
from .pipeline import Stage

__all__ = ["NormaliseRound"]


def _leading_one(v, lo: int, hi: int):
    """Index of the highest set bit of ``v[lo:hi]`` (``lo`` if none), as a mux tree."""
    if hi - lo == 1:
        return Const(lo, range(lo + 1))
    mid = (lo + hi) // 2
    return Mux(v[mid:hi].any(), _leading_one(v, mid, hi), _leading_one(v, lo, mid))

WIDE_EXP = signed(16)


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
    rounding : {"RZ", "RNE"}
    overflow : {"inf", "ieee"}
        ``"inf"``: every overflow is infinity; ``"ieee"``: RZ saturates.
    positive_zero : bool
        Zero results are +0 whatever the sum's sign (NVIDIA).

    Members
    -------
    en : In(1)
    total : In(signed(sum_bits))
    e_max : In(exp_shape())
    specials : In(Specials)
    d : Out(fd.storage_bits)
    """

    LATENCY = 1

    def __init__(self, sum_bits, F, fd, frac_bits=None, rounding="RZ", overflow="inf", positive_zero=True):
        if rounding not in ("RZ", "RNE"):
            raise ValueError(f"the normaliser rounds RZ or RNE, not {rounding!r}")
        self.fd = get_format(fd)
        self.sum_bits, self.F = sum_bits, F
        self.p = self.fd.man_bits if frac_bits is None else frac_bits
        self.rounding, self.overflow, self.positive_zero = rounding, overflow, positive_zero
        super().__init__({"total": In(signed(sum_bits)), "e_max": In(exp_shape()), "specials": In(Specials),
                          "d": Out(self.fd.storage_bits)})

    def elaborate(self, platform):
        m = Module()
        fd, p, W = self.fd, self.p, self.sum_bits
        neg = self.total < 0
        mag = Signal(unsigned(W))
        m.d.comb += mag.eq(Mux(neg, -self.total, self.total))

        # position of the leading one: a balanced priority encoder, log2(W) levels of muxes
        top = Signal(range(W))
        m.d.comb += top.eq(_leading_one(mag, 0, W))

        e_lsb = Signal(WIDE_EXP)
        e_top = Signal(WIDE_EXP)
        m.d.comb += [e_lsb.eq(self.e_max - self.F), e_top.eq(e_lsb + top)]
        # the result's last place: q = max(e_top, emin) - p; shift the magnitude right by q - e_lsb,
        # padded by G zeros so the shift is never negative
        G = p + 1
        V = Signal(unsigned(W + G))
        m.d.comb += V.eq(mag << G)
        lead = Signal(WIDE_EXP)
        m.d.comb += lead.eq(Mux(e_top > fd.emin, e_top, fd.emin))
        s_raw = Signal(WIDE_EXP)
        m.d.comb += s_raw.eq(lead - p - e_lsb + G)             # >= 1 by construction
        cap = W + G + 1
        s = Signal(range(cap + 1))
        m.d.comb += s.eq(Mux(s_raw > cap, cap, s_raw[:s.shape().width]))
        s1 = Signal(range(cap))                                  # position of the round bit
        m.d.comb += s1.eq(s - 1)
        kept = Signal(unsigned(p + 2))
        m.d.comb += kept.eq(V >> s)
        rbit = Signal()
        m.d.comb += rbit.eq((V >> s1)[0])
        below = Signal(unsigned(W + G))
        m.d.comb += below.eq(V & ((Const(1, W + G + 1) << s1) - 1))
        sticky = below != 0
        inc = (rbit & (sticky | kept[0])) if self.rounding == "RNE" else 0
        rounded = Signal(unsigned(p + 2))
        m.d.comb += rounded.eq(kept + inc)
        carry = rounded[p + 1]
        sig = Signal(unsigned(p + 1))
        m.d.comb += sig.eq(Mux(carry, rounded[1:], rounded))
        res_lead = Signal(WIDE_EXP)
        m.d.comb += res_lead.eq(lead + carry)
        normal = sig[p]
        field = Signal(fd.exp_bits)
        m.d.comb += field.eq(Mux(normal, res_lead + fd.bias, 0))
        man = Signal(fd.man_bits)
        m.d.comb += man.eq(sig[:p] << (fd.man_bits - p))
        over = normal & (res_lead > fd.emax)
        sign_bit = fd.exp_bits + fd.man_bits
        word = Signal(fd.storage_bits)
        m.d.comb += word.eq(man | (field << fd.man_bits) | (neg << sign_bit))

        inf_word = ((1 << fd.exp_bits) - 1) << fd.man_bits
        max_word = ((fd.emax + fd.bias) << fd.man_bits) | fd.max_mantissa
        big = inf_word if (self.overflow == "inf" or self.rounding == "RNE") else max_word
        nan_word = (1 << sign_bit) - 1                          # canonical NVIDIA NaN
        result = Signal(fd.storage_bits)
        sp = self.specials
        with m.If(sp.nan):
            m.d.comb += result.eq(nan_word)
        with m.Elif(sp.pinf):
            m.d.comb += result.eq(inf_word)
        with m.Elif(sp.ninf):
            m.d.comb += result.eq(inf_word | (1 << sign_bit))
        with m.Elif(over):
            m.d.comb += result.eq(big | (neg << sign_bit))
        with m.Elif((sig == 0) & self.positive_zero):
            m.d.comb += result.eq(0)
        with m.Else():
            m.d.comb += result.eq(word)
        with m.If(self.en):
            m.d.sync += self.d.eq(result)
        return m
