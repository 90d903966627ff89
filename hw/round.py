"""The one rounder: an exact value to a floating-point format, as cvfpu's ``fpnew_rounding``.

Every datapath that rounds a value to a format uses :class:`Rounder`: the FDA/GDFS/FDRDA
normaliser (:class:`hw.normalise.NormaliseRound`), the fused multiply-add
(:class:`hw.fma.FMARound`) and the GPS binary32 multiplier and adder (:mod:`hw.gps`).
It is combinational (latency 0): the stage that holds it registers its output.

The value is ``(-1)**sign * mag * 2**e0`` with ``mag`` an unsigned integer.  The rounder finds
the leading one, places the result's last place at ``max(e_top, emin) - frac_bits`` (which also
denormalises a subnormal result), shifts once to that place keeping a round bit, adds the
increment of the rounding mode, renormalises a carry out, and packs the format's word:
overflow (infinity or the largest finite value), normal, subnormal, zero.  NaN and infinite
operands are the caller's business (each datapath has its own NaN).
"""

from __future__ import annotations

from amaranth import Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.formats import get_format

from .bitscan import LOD_TREES, leading_one, trailing_zeros
from .specials import inf_word, max_word, sign_bit

__all__ = ["Rounder", "round_to_format", "MODES", "WIDE_EXP"]

WIDE_EXP = signed(16)      # binary64 product exponents reach -2148; every intermediate fits in 16 bits
MODES = ("RZ", "RD", "RU", "RNE")
OVERFLOWS = ("inf", "ieee")
STICKIES = ("mask", "trailing_zeros")


class Rounder(wiring.Component):
    """Round ``(-1)**sign * mag * 2**e0`` to ``fmt``.  Combinational (latency 0).

    Parameters
    ----------
    fmt : Format or str
        Result format.
    mag_bits : int
        Width of ``mag``.
    mode : {"RZ", "RD", "RU", "RNE"}
    frac_bits : int, optional
        Round at this many fraction bits (default the format's mantissa; 13 for E8M13 in f32).
    overflow : {"inf", "ieee"}
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

    Members
    -------
    mag : In(mag_bits)
    e0 : In(WIDE_EXP)
        Exponent of ``mag``'s bit 0.
    sign : In(1)
    word : Out(fmt.storage_bits)
    """

    latency = 0

    def __init__(self, fmt, mag_bits: int, mode: str = "RNE", frac_bits: int | None = None,
                 overflow: str = "ieee", flush: bool = False, positive_zero: bool = False,
                 sticky: str = "trailing_zeros", lod: str = "flags"):
        self.fmt = get_format(fmt)
        self.frac_bits = self.fmt.man_bits if frac_bits is None else frac_bits
        _check("rounding mode", mode, MODES)
        _check("overflow rule", overflow, OVERFLOWS)
        _check("sticky", sticky, STICKIES)
        _check("leading-one tree", lod, LOD_TREES)
        if not 1 <= self.frac_bits <= self.fmt.man_bits:
            raise ValueError(f"frac_bits must be 1..{self.fmt.man_bits} for {self.fmt.name}, not {self.frac_bits}")
        self.mag_bits, self.mode, self.overflow = mag_bits, mode, overflow
        self.flush, self.positive_zero, self.sticky, self.lod = flush, positive_zero, sticky, lod
        super().__init__({"mag": In(mag_bits), "e0": In(WIDE_EXP), "sign": In(1),
                          "word": Out(self.fmt.storage_bits)})

    def _increment(self, kept_lsb, rbit, sticky):
        """1 where the mode rounds the magnitude up."""
        inexact = rbit | sticky
        return {"RZ": 0, "RNE": rbit & (sticky | kept_lsb),
                "RU": inexact & ~self.sign, "RD": inexact & self.sign}[self.mode]

    def _overflow_word(self):
        """The magnitude an overflow gives: infinity, or the largest finite value where the mode
        rounds toward zero under the IEEE rule."""
        inf, big = inf_word(self.fmt), max_word(self.fmt)
        if self.overflow == "inf" or self.mode == "RNE":
            return inf
        return {"RZ": big, "RD": Mux(self.sign, inf, big), "RU": Mux(self.sign, big, inf)}[self.mode]

    def elaborate(self, platform):
        m = Module()
        f, p, W = self.fmt, self.frac_bits, self.mag_bits
        mag, e0 = self.mag, self.e0
        top = Signal(range(max(W, 2)))
        m.d.comb += top.eq(leading_one(mag, self.lod))
        e_top = Signal(WIDE_EXP)
        m.d.comb += e_top.eq(e0 + top)
        lead = Signal(WIDE_EXP)                                 # exponent of the result's leading place
        m.d.comb += lead.eq(Mux(e_top > f.emin, e_top, f.emin))
        # shift the magnitude right to the result's last place 2**(lead - p); G zero bits below it
        # keep the shift non-negative when the value needs no rounding at all
        G = p + 1
        V = Signal(unsigned(W + G))
        m.d.comb += V.eq(mag << G)
        s_raw = Signal(WIDE_EXP)
        m.d.comb += s_raw.eq(lead - p - e0 + G)                 # >= 1 by construction
        cap = W + G + 1
        s = Signal(range(cap + 1))
        m.d.comb += s.eq(Mux(s_raw > cap, cap, s_raw[:len(s)]))
        s1 = Signal(range(cap))                                 # position of the round bit
        m.d.comb += s1.eq(s - 1)
        shifted = Signal(unsigned(p + 3))                       # kept bits and the round bit
        m.d.comb += shifted.eq(V >> s1)
        kept, rbit = shifted[1:], shifted[0]
        sticky = Signal()
        if self.sticky == "mask":
            m.d.comb += sticky.eq((V & ((Const(1, W + G + 1) << s1) - 1)) != 0)
        else:                                                   # a set bit of mag below s1 - G
            tz = Signal(range(max(W, 2)))
            m.d.comb += tz.eq(trailing_zeros(mag))
            m.d.comb += sticky.eq((mag != 0) & (tz + G < s1))
        rounded = Signal(unsigned(p + 2))
        m.d.comb += rounded.eq(kept + self._increment(kept[0], rbit, sticky))
        carry = rounded[p + 1]
        sig = Signal(unsigned(p + 1))
        m.d.comb += sig.eq(Mux(carry, rounded[1:], rounded))
        res_lead = Signal(WIDE_EXP)
        m.d.comb += res_lead.eq(lead + carry)
        normal = sig[p]
        man = sig[:p] << (f.man_bits - p)
        sign = self.sign << sign_bit(f)
        # a zero (or a flushed subnormal) is +0 under the positive-zero rule
        zero_sign = 0 if self.positive_zero and self.flush else (
            Mux(sig == 0, 0, sign) if self.positive_zero else sign)
        with m.If(normal & (res_lead > f.emax)):
            m.d.comb += self.word.eq(self._overflow_word() | sign)
        with m.Elif(normal):
            m.d.comb += self.word.eq(man | ((res_lead + f.bias)[:f.exp_bits] << f.man_bits) | sign)
        with m.Else():                                          # subnormal or zero
            m.d.comb += self.word.eq((0 if self.flush else man) | zero_sign)
        return m


def _check(what: str, value, valid) -> None:
    if value not in valid:
        raise ValueError(f"unknown {what} {value!r}; valid: {', '.join(valid)}")


def round_to_format(m: Module, name: str, mag, e0, sign, fmt, **options):
    """Add a :class:`Rounder` of ``mag``'s width to ``m`` as submodule ``name``, driven by
    ``mag``, ``e0`` and ``sign``; returns its ``word`` (``options``: the Rounder's parameters)."""
    r = m.submodules[name] = Rounder(fmt, len(mag), **options)
    m.d.comb += [r.mag.eq(mag), r.e0.eq(e0), r.sign.eq(sign)]
    return r.word
