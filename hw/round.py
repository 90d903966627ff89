"""The one rounder: an exact value to a floating-point format, as cvfpu's ``fpnew_rounding``.

Every datapath that rounds a value to a format uses :class:`Rounder`: the FDA/GDFS/FDRDA
normaliser (:class:`hw.normalise.NormaliseRound`), the fused multiply-add
(:class:`hw.fma.FMARound`) and the GPS binary32 multiplier and adder (:mod:`hw.gps`).
It is combinational by default (latency 0); optional cut points (:data:`CUTS`) add registers
inside it and the stage that holds it adds its ``latency`` up and registers its output.

The value is ``(-1)**sign * mag * 2**e0`` with ``mag`` an unsigned integer.  The rounder finds
the leading one, places the result's last place at ``max(e_top, emin) - frac_bits`` (which also
denormalises a subnormal result), shifts once to that place keeping a round bit, adds the
increment of the rounding mode, renormalises a carry out, and packs the format's word:
overflow (infinity or the largest finite value), normal, subnormal, zero.  NaN and infinite
operands are the caller's business (each datapath has its own NaN).
"""

from __future__ import annotations

from amaranth import Const, Module, Mux, Shape, signed, unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.formats import get_format
from golden.params import OVERFLOWS, ROUNDING_MODES
from golden.rules import Overflow, Rounding

from .bitscan import LOD_TREES, leading_one, trailing_zeros
from .pipelining import Timeline
from .specials import inf_word, max_word, sign_bit

__all__ = ["Rounder", "MODES", "WIDE_EXP", "CUTS"]

WIDE_EXP = signed(16)      # binary64 product exponents reach -2148; every intermediate fits in 16 bits
MODES = ROUNDING_MODES     # golden's words: a Params golden accepts is one the RTL accepts (golden.params)
STICKIES = ("mask", "trailing_zeros")
CUTS = ("amount", "shift", "increment", "lod")     # the rounder's optional registers (see Rounder)


class Rounder(wiring.Component):
    """Round ``(-1)**sign * mag * 2**e0`` to ``fmt``.  Latency: the number of ``cuts`` (default 0).

    Parameters
    ----------
    fmt : Format or str
        Result format.
    mag_bits : int
        Width of ``mag``.
    mode : Rounding
    frac_bits : int, optional
        Round at this many fraction bits (default the format's mantissa; 13 for E8M13 in f32).
    overflow : Overflow
        ``"inf"``: every overflow is infinity (NVIDIA); ``"ieee"``: the mode decides (RZ, and
        RD/RU toward zero, saturate at the largest finite value).
    flush : bool
        A subnormal result becomes a zero of its sign (GPS: IEEE rounding first, then flush).
    positive_zero : bool
        Every zero result is +0 (NVIDIA); otherwise a zero keeps ``sign``.
    sticky : {"mask", "trailing_zeros"}
        How the bits below the round bit are ORed: a mask of the shifted word, or the trailing-
        zero count of ``mag`` compared with the shift.  Both give the same bit; each call site
        keeps the one it had, which keeps its Yosys/ABC cell count (mask for the wide sums of the
        fused normalisers, trailing zeros for the narrow significands of the fma and GPS).
    cuts : iterable of str
        Registers at these points of :data:`CUTS`: after the shift amount (leading-one detector
        and exponent arithmetic), after the shift and sticky bit, after the rounding increment,
        between the leading-one detector and the shift amount.  ``latency`` is their number.
        With any cut the shift amount comes from a shorter formula of the same value.

    Members
    -------
    mag : In(mag_bits)
    e0 : In(WIDE_EXP)
        Exponent of ``mag``'s bit 0.
    sign : In(1)
    word : Out(fmt.storage_bits)
    """

    def __init__(self, fmt, mag_bits: int, mode: Rounding = Rounding.RNE, frac_bits: int | None = None,
                 overflow: Overflow = Overflow.IEEE, flush: bool = False, positive_zero: bool = False,
                 sticky: str = "trailing_zeros", lod: str = "flags", cuts=()):
        self.fmt = get_format(fmt)
        self.frac_bits = self.fmt.man_bits if frac_bits is None else frac_bits
        _check("rounding mode", mode, MODES)
        _check("overflow rule", overflow, OVERFLOWS)
        _check("sticky", sticky, STICKIES)
        _check("leading-one tree", lod, LOD_TREES)
        for cut in cuts:
            _check("rounder cut point", cut, CUTS)
        self.cuts = frozenset(cuts)
        if not 1 <= self.frac_bits <= self.fmt.man_bits:
            raise ValueError(f"frac_bits must be 1..{self.fmt.man_bits} for {self.fmt.name}, not {self.frac_bits}")
        self.mag_bits, self.mode, self.overflow = mag_bits, mode, overflow
        self.flush, self.positive_zero, self.sticky, self.lod = flush, positive_zero, sticky, lod
        super().__init__({"mag": In(mag_bits), "e0": In(WIDE_EXP), "sign": In(1),
                          "word": Out(self.fmt.storage_bits)})

    @property
    def latency(self) -> int:
        """Registers at the enabled cut points (0: combinational)."""
        return len(self.cuts)

    def _increment(self, kept_lsb, rbit, sticky, sign):
        """1 where the mode rounds the magnitude up."""
        inexact = rbit | sticky
        return {Rounding.RZ: 0, Rounding.RNE: rbit & (sticky | kept_lsb),
                Rounding.RU: inexact & ~sign, Rounding.RD: inexact & sign}[self.mode]

    def _overflow_word(self, sign):
        """The magnitude an overflow gives: infinity, or the largest finite value where the mode
        rounds toward zero under the IEEE rule."""
        inf, big = inf_word(self.fmt), max_word(self.fmt)
        if self.overflow == Overflow.INF or self.mode == Rounding.RNE:
            return inf
        return {Rounding.RZ: big, Rounding.RD: Mux(sign, inf, big), Rounding.RU: Mux(sign, big, inf)}[self.mode]

    def elaborate(self, platform):
        m = Module()
        f, p, W = self.fmt, self.frac_bits, self.mag_bits
        tl = Timeline(m)
        mag, e0 = self.mag, self.e0
        top = tl.let(leading_one(mag, self.lod), range(max(W, 2)), "top")
        # shift the magnitude right to the result's last place 2**(lead - p); G zero bits below it
        # keep the shift non-negative when the value needs no rounding at all
        G = p + 1
        cap = W + G + 1
        if self.sticky == "trailing_zeros":
            tz = tl.let(trailing_zeros(mag), range(max(W, 2)), "tz")
        if not self.cuts:
            e_top = tl.let(e0 + top, WIDE_EXP, "e_top")
            lead = tl.let(Mux(e_top > f.emin, e_top, f.emin), WIDE_EXP, "lead")   # the result's leading place
            s_raw = tl.let(lead - p - e0 + G, WIDE_EXP, "s_raw")                   # >= 1 by construction
            s = tl.let(Mux(s_raw > cap, cap, s_raw[:Shape.cast(range(cap + 1)).width]), range(cap + 1), "s")
            s1 = tl.let(s - 1, range(cap), "s1")                                    # position of the round bit
        else:
            # pipelined: the same s1 in fewer carry chains after the leading-one detector.  With
            # G = p + 1, s1 = min(lead - e0, cap - 1) = min(max(top, emin - e0), cap - 1), and
            # emin - e0 (clamped to 0 .. cap - 1) is ready beside the detector
            below = tl.let(f.emin - e0, WIDE_EXP, "below")
            floor_d = tl.let(Mux(below < 0, 0, Mux(below > cap - 1, cap - 1, below[:Shape.cast(range(cap)).width])),
                             range(cap), "floor_d")
            tl.cut("lod" in self.cuts)
            top_now, floor_now = tl(top), tl(floor_d)
            s1 = tl.let(Mux(top_now > floor_now, top_now, floor_now), range(cap), "s1")
            e_top = tl.let(tl(e0) + top_now, WIDE_EXP, "e_top")
            lead = tl.let(Mux(e_top > f.emin, e_top, f.emin), WIDE_EXP, "lead")   # the result's leading place
        tl.cut("amount" in self.cuts)

        V = tl.let(tl(mag) << G, unsigned(W + G), "V")
        shifted = tl.let(V >> tl(s1), unsigned(p + 3), "shifted")             # kept bits and the round bit
        if self.sticky == "mask":
            sticky = tl.let((V & ((Const(1, W + G + 1) << tl(s1)) - 1)) != 0, 1, "sticky")
        else:                                                                   # a set bit of mag below s1 - G
            sticky = tl.let((tl(mag) != 0) & (tl(tz) + G < tl(s1)), 1, "sticky")
        tl.cut("shift" in self.cuts)

        kept, rbit = tl(shifted)[1:], tl(shifted)[0]
        rounded = tl.let(kept + self._increment(kept[0], rbit, tl(sticky), tl(self.sign)), unsigned(p + 2),
                         "rounded")
        tl.cut("increment" in self.cuts)

        rounded = tl(rounded)
        carry = rounded[p + 1]
        sig = tl.let(Mux(carry, rounded[1:], rounded), unsigned(p + 1), "sig")
        res_lead = tl.let(tl(lead) + carry, WIDE_EXP, "res_lead")
        normal = sig[p]
        man = sig[:p] << (f.man_bits - p)
        sign = tl(self.sign) << sign_bit(f)
        # a zero (or a flushed subnormal) is +0 under the positive-zero rule
        zero_sign = 0 if self.positive_zero and self.flush else (
            Mux(sig == 0, 0, sign) if self.positive_zero else sign)
        with m.If(normal & (res_lead > f.emax)):
            m.d.comb += self.word.eq(self._overflow_word(tl(self.sign)) | sign)
        with m.Elif(normal):
            m.d.comb += self.word.eq(man | ((res_lead + f.bias)[:f.exp_bits] << f.man_bits) | sign)
        with m.Else():                                          # subnormal or zero
            m.d.comb += self.word.eq((0 if self.flush else man) | zero_sign)
        assert tl.cycle == self.latency, "the rounder's registers must match its declared latency"
        return m


def _check(what: str, value, valid) -> None:
    if value not in valid:
        raise ValueError(f"unknown {what} {value!r}; valid: {', '.join(valid)}")
