"""The rounder (:class:`hw.round.Rounder`) against a plain reference rounder.

The reference rounds ``(-1)**sign * mag * 2**e0`` the textbook way: the result's last place
``q = max(e0 + top, emin) - p`` (``top`` the highest set bit, found by a plain scan,
:func:`formal.bitscan.highest`), the kept integer
``floor(mag / 2**(q - e0))`` and the remainder ``mag - kept * 2**(q - e0)`` compared with half a
place, the mode's increment, one renormalisation, then the word: overflow (infinity, or the
largest finite value where the mode rounds toward zero under the IEEE rule), normal, subnormal
or zero (flush and +0 rules).  Nothing in it is shared with the RTL (no bit scan, no sticky
OR, no pre-shift guard bits, no special-word helper).

Assumed: ``-8192 <= e0 < 8192`` (every call site's exponents lie well inside; the rounder's
16-bit exponent arithmetic is only claimed there).
"""

from __future__ import annotations

from amaranth import Const, Mux, signed

from golden.formats import NanKind
from golden.rules import Overflow, Rounding
from hw.round import Rounder

from .bitscan import highest
from .harness import Equivalence
from .property import Property

__all__ = ["reference_round", "rounder_property", "E0_BITS"]

E0_BITS = 14                       # e0 in -2**13 .. 2**13 - 1
WIDE = signed(24)                  # the reference's exponent arithmetic: no overflow possible


def reference_round(mag, e0, sign, fmt, p, mode, overflow, flush, positive_zero, let=lambda value, name: value):
    """The rounded word of ``(-1)**sign * mag * 2**e0`` (an Amaranth expression); ``let`` names a
    value used more than once (:meth:`formal.harness.Equivalence.let`)."""
    if fmt.nan != NanKind.IEEE:
        raise ValueError(f"the reference rounder packs IEEE-style formats, not {fmt.name} ({fmt.nan} NaN)")
    W = len(mag)
    e0 = e0.as_signed()
    e_top = let(e0 + highest(mag), "e_top")
    lead = let(Mux(e_top > fmt.emin, e_top, fmt.emin), "lead")           # the result's leading place
    d = let((lead - p - e0).as_signed(), "d")                             # last place relative to mag's bit 0
    # d <= 0: the value is exact at p fraction bits; the kept integer is mag * 2**-d (-d <= p + 1)
    exact = (mag << Mux(d < 0, -d, 0)[:max(p + 2, 1).bit_length() + 1])[:p + 2]
    # d > 0: kept = floor(mag / 2**d), rem = mag - kept * 2**d, half = 2**(d - 1); d past W keeps nothing
    dd = let(Mux(d > W + 1, W + 1, Mux(d < 1, 1, d))[:(W + 1).bit_length() + 1], "dd")
    kept_hi = let(mag >> dd, "kept_hi")
    rem = let((mag - (kept_hi << dd))[:W], "rem")
    half = let(Const(1, W + 2) << (dd - 1)[:len(dd)], "half")
    kept = let(Mux(d > 0, kept_hi, exact)[:p + 1], "kept")
    more, tie, inexact = (d > 0) & (rem > half), (d > 0) & (rem == half), (d > 0) & (rem != 0)
    up = {Rounding.RZ: Const(0, 1), Rounding.RNE: more | (tie & kept[0]),
          Rounding.RU: inexact & ~sign, Rounding.RD: inexact & sign}[mode]
    rounded = let((kept + up)[:p + 2], "rounded")
    carry = rounded == (1 << (p + 1))
    sig = let(Mux(carry, 1 << p, rounded)[:p + 1], "sig")
    res_lead = let((lead + carry).as_signed(), "res_lead")
    normal = sig >= (1 << p)
    sb = fmt.exp_bits + fmt.man_bits
    inf = ((1 << fmt.exp_bits) - 1) << fmt.man_bits
    biggest = inf - 1
    away = {Rounding.RZ: Const(0, 1), Rounding.RNE: Const(1, 1), Rounding.RU: ~sign, Rounding.RD: sign}[mode]
    over_mag = inf if overflow == Overflow.INF else Mux(away, inf, biggest)
    frac = ((sig - (1 << p)) << (fmt.man_bits - p))[:fmt.man_bits]
    normal_word = (((res_lead + fmt.bias)[:fmt.exp_bits]) << fmt.man_bits) | frac
    small = Const(0, fmt.man_bits) if flush else (sig << (fmt.man_bits - p))[:fmt.man_bits]
    is_zero = small == 0
    small_sign = Mux(is_zero, 0, sign) if positive_zero else sign
    return Mux(normal & (res_lead > fmt.emax), over_mag | (sign << sb),
               Mux(normal, normal_word | (sign << sb), small | (small_sign << sb)))


def rounder_property(fmt, mag_bits, mode=Rounding.RNE, frac_bits=None, overflow=Overflow.IEEE, flush=False,
                     positive_zero=False, sticky="trailing_zeros", lod="flags", cuts=(), units=(),
                     dut_class=Rounder) -> Property:
    """The rounder at these parameters equals :func:`reference_round`.  ``dut_class``: a subclass
    with a planted bug (the tests)."""
    def build():
        dut = dut_class(fmt, mag_bits, mode=mode, frac_bits=frac_bits, overflow=overflow, flush=flush,
                        positive_zero=positive_zero, sticky=sticky, lod=lod, cuts=cuts)
        f, p = dut.fmt, dut.frac_bits

        def expect(past):
            return [(dut.word, reference_round(past(dut.mag), past(dut.e0), past(dut.sign), f, p, mode, overflow,
                                               flush, positive_zero, h.let))]

        def assume(now):
            e0 = now(dut.e0)
            return [(e0 >= -(1 << (E0_BITS - 1))) & (e0 < (1 << (E0_BITS - 1)))]

        h = Equivalence(dut, dut.latency, [dut.mag, dut.e0, dut.sign], expect, assume)
        return h, h.depth
    from golden.formats import get_format
    f = get_format(fmt)
    p = f.man_bits if frac_bits is None else frac_bits
    flags = "".join(x for x, on in (("flush.", flush), ("pz.", positive_zero)) if on)
    name = (f"round/{f.name}.W{mag_bits}.p{p}.{mode}.{overflow}.{flags}{sticky}.{lod}"
            + (f".cuts={'+'.join(sorted(cuts))}" if cuts else ""))
    return Property(name, "round", build, engine="boolector", units=tuple(units))
