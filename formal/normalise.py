"""The normaliser (:class:`hw.normalise.NormaliseRound`): two's complement sum to sign and
magnitude, the shared rounder, the special-value override, against the reference rounder of
:mod:`formal.round` and the special words written out from the format's fields."""

from __future__ import annotations

from amaranth import Mux

from golden.formats import get_format
from hw.normalise import NormaliseRound

from .harness import Equivalence
from .property import Property
from .round import reference_round

__all__ = ["normalise_property"]


def normalise_property(sum_bits, F, fd, frac_bits, rounding, overflow, positive_zero, pipelining=None, units=(),
                       dut_class=NormaliseRound) -> Property:
    f = get_format(fd)

    def build():
        dut = dut_class(sum_bits, F, f, frac_bits, rounding, overflow, positive_zero, pipelining)

        def expect(past):
            total, sp = past(dut.total), past(dut.specials)
            neg = total < 0
            mag = Mux(neg, -total, total)[:sum_bits]
            word = reference_round(h.let(mag, "mag"), past(dut.e_max).as_signed() - F, neg, f, dut.p, rounding,
                                   overflow, False, positive_zero, h.let)
            sb = f.exp_bits + f.man_bits
            inf = ((1 << f.exp_bits) - 1) << f.man_bits
            nan = (1 << sb) - 1                          # NVIDIA's canonical NaN: all ones below the sign
            return [(dut.d, Mux(sp.nan, nan, Mux(sp.pinf, inf, Mux(sp.ninf, inf | (1 << sb), word))))]

        h = Equivalence(dut, dut.latency, [dut.total, dut.e_max, dut.specials], expect)
        return h, h.depth
    name = (f"normalise/{f.name}.S{sum_bits}.F{F}.p{frac_bits}.{rounding}.{overflow}" + (".pz" if positive_zero else "")
            + (f".pl={pipelining}" if pipelining is not None else ""))
    return Property(name, "normalise", build, engine="boolector", units=tuple(units))
