"""Operand decode and classification, driven by golden's format table.

Latency 0 (combinational): it sits at the front of the multiplier stage.
"""

from __future__ import annotations

from amaranth import Module, Mux, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.formats import Format, get_format

__all__ = ["Decoded", "OperandDecode", "exp_shape"]

EXP_BITS = 12          # signed exponents of every format, product and scale sum fit in 12 bits


def exp_shape():
    return signed(EXP_BITS)


def Decoded(fmt: Format) -> data.StructLayout:
    """Layout of one decoded element: ``value = (-1)**sign * sig * 2**(exp - man_bits)``."""
    return data.StructLayout({
        "sign": 1,
        "exp": exp_shape(),               # exponent of the hidden-bit position (subnormal: emin)
        "sig": fmt.man_bits + 1,          # significand with its hidden bit
        "zero": 1,
        "inf": 1,
        "nan": 1,
    })


class OperandDecode(wiring.Component):
    """Split a bit pattern into sign, exponent, significand and class.

    TF32's low 13 bits and UE4M3's top bit are ignored, as the hardware does.

    Parameters
    ----------
    fmt : Format or str
        Operand format (an entry of :data:`golden.formats.FORMATS`).

    Members
    -------
    bits : In(fmt.storage_bits)
    out : Out(Decoded(fmt))
    """

    latency = 0

    def __init__(self, fmt):
        self.fmt = get_format(fmt)
        super().__init__({"bits": In(self.fmt.storage_bits), "out": Out(Decoded(self.fmt))})

    def elaborate(self, platform):
        m = Module()
        f = self.fmt
        v = self.bits[f.ignored_low_bits:f.ignored_low_bits + f.value_bits]
        man = v[:f.man_bits] if f.man_bits else 0
        efield = v[f.man_bits:f.man_bits + f.exp_bits]
        sign = v[-1] if f.signed else 0
        top = (1 << f.exp_bits) - 1
        o = self.out
        m.d.comb += o.sign.eq(sign)
        if f.subnormals:
            sub = efield == 0
            m.d.comb += [
                o.exp.eq(Mux(sub, f.emin, efield - f.bias)),
                o.sig.eq(Mux(sub, man, man | (1 << f.man_bits))),
                o.zero.eq(sub & (man == 0)),
            ]
        else:                               # ue8m0: every field is a normal power of two
            m.d.comb += [o.exp.eq(efield - f.bias), o.sig.eq(1 << f.man_bits), o.zero.eq(0)]
        if f.nan == "ieee":
            m.d.comb += [o.inf.eq((efield == top) & (man == 0)), o.nan.eq((efield == top) & (man != 0))]
        elif f.nan == "all_ones":
            m.d.comb += o.nan.eq((efield == top) & (man == (1 << f.man_bits) - 1))
        elif f.nan == "negative_zero":
            m.d.comb += o.nan.eq(sign & (efield == 0) & (man == 0))
            m.d.comb += o.zero.eq((efield == 0) & (man == 0) & ~sign)
        elif f.nan == "max_exponent":
            m.d.comb += o.nan.eq(efield == top)
        return m
