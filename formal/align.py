"""The alignment shifters (:class:`hw.align.AlignShifters`) against a plain truncating alignment.

Each term ``(-1)**sign * sig * 2**(exp - frac)`` must come out as ``(-1)**sign * floor(|term| *
2**(F - e_max))``: the magnitude truncated (RZ; the bits shifted out are lost, whatever their
count, a shift of the window's whole width and past it included), then negated.  The reference
shifts once, by ``exp - frac - e_max + F`` (left when non-negative, else right), in a word wide
enough to keep every bit.  The stage is built with one product and c (every term is the same
``_term`` code); assumed, as the stage documents: ``e_max >= exp`` of each term.
"""

from __future__ import annotations

from amaranth import Mux
from amaranth.lib import data

from golden.formats import get_format
from hw.align import AlignShifters
from hw.decode import exp_shape

from .harness import Equivalence
from .property import Property

__all__ = ["align_property", "reference_align"]


def reference_align(sig, exp, sign, frac: int, e_max, F: int, width: int):
    """``(-1)**sign * floor(sig * 2**(exp - frac - e_max + F))`` as a ``signed(width)`` value."""
    sh = (exp.as_signed() - e_max.as_signed() + (F - frac)).as_signed()     # <= F - frac when e_max >= exp
    wide = len(sig) + max(F - frac, 0) + 1
    left = sig << Mux(sh > 0, sh, 0)[:max(F - frac, 0).bit_length() + 1]
    right_by = Mux(sh < 0, -sh, 0)
    right = Mux(right_by >= wide, 0, sig >> right_by[:wide.bit_length() + 1])
    mag = Mux(sh >= 0, left, right)[:wide]
    return Mux(sign, -mag, mag).as_signed()[:width].as_signed()


def align_property(sig_bits, frac, F, fc=None, pipelining=None, units=(), dut_class=AlignShifters) -> Property:
    fc_fmt = get_format(fc) if fc else None

    def build():
        term = data.StructLayout({"sign": 1, "exp": exp_shape(), "sig": sig_bits})
        dut = dut_class(term, frac, 1, F, fc_fmt, pipelining)
        # (the port, the term in it, its fraction bits)
        terms = [(dut.products, lambda v: v[0], frac)] + \
            ([(dut.c_term, lambda v: v, fc_fmt.man_bits)] if fc_fmt else [])
        ports = [dut.products, dut.e_max] + ([dut.c_term] if fc_fmt else [])

        def expect(past):
            e_max = past(dut.e_max)
            out = []
            for n, (port, pick, fr) in enumerate(terms):
                t = pick(past(port))
                out.append((dut.terms[n], reference_align(t.sig, t.exp, t.sign, fr, e_max, F, dut.width)))
            return out

        def assume(now):
            return [pick(now(port)).exp.as_signed() <= now(dut.e_max).as_signed() for port, pick, _ in terms]

        h = Equivalence(dut, dut.latency, ports, expect, assume)
        return h, h.depth
    name = f"align/sig{sig_bits}.frac{frac}.F{F}.c={fc_fmt.name if fc_fmt else 'none'}" + (
        f".pl={pipelining}" if pipelining is not None else "")
    return Property(name, "align", build, units=tuple(units))
