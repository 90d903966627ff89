"""Operand decode and classification, driven by golden's format table.

Latency 0 (combinational): it sits at the front of the multiplier stage.

A :func:`union_format` lets one datapath take operands of several formats (the
tensor core's shared multiplier array): each element carries its format's
index above its bits, and the decoder widens the significand to the widest
member's, keeping the value and the (unnormalised) exponent as they are.
"""

from __future__ import annotations

import dataclasses

from amaranth import Module, Mux, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.formats import Format, NanKind, get_format

__all__ = ["Decoded", "OperandDecode", "UnionFormat", "union_format", "exp_shape"]

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


@dataclasses.dataclass(frozen=True)
class UnionFormat(Format):
    """Several formats behind one port: ``storage_bits`` holds the widest member's bits and, above
    them, the member's index; ``man_bits`` is the widest member's.  Built by :func:`union_format`."""

    members: tuple = ()

    @property
    def select_bits(self) -> int:
        return _index_bits(len(self.members))

    @property
    def member_bits(self) -> int:
        return max(f.storage_bits for f in self.members)

    def encode(self, index: int, bits: int) -> int:
        """The element word for ``bits`` of member ``index``."""
        return (index << self.member_bits) | bits


def union_format(formats) -> Format:
    """One format when all are the same, else a :class:`UnionFormat` of the distinct ones (in order)."""
    members = tuple(dict.fromkeys(get_format(f) for f in formats))
    if len(members) == 1:
        return members[0]
    width = max(f.storage_bits for f in members) + _index_bits(len(members))
    return UnionFormat(name="|".join(f.name for f in members), exp_bits=max(f.exp_bits for f in members),
                       man_bits=max(f.man_bits for f in members), bias=0, storage_bits=width, members=members)


def _index_bits(n: int) -> int:
    """Bits of an index into ``n`` members."""
    return max(1, (n - 1).bit_length())


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
        if isinstance(self.fmt, UnionFormat):
            return self._elaborate_union()
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
        if f.nan == NanKind.IEEE:
            m.d.comb += [o.inf.eq((efield == top) & (man == 0)), o.nan.eq((efield == top) & (man != 0))]
        elif f.nan == NanKind.ALL_ONES:
            m.d.comb += o.nan.eq((efield == top) & (man == (1 << f.man_bits) - 1))
        elif f.nan == NanKind.NEGATIVE_ZERO:
            m.d.comb += o.nan.eq(sign & (efield == 0) & (man == 0))
            m.d.comb += o.zero.eq((efield == 0) & (man == 0) & ~sign)
        elif f.nan == NanKind.MAX_EXPONENT:
            m.d.comb += o.nan.eq(efield == top)
        return m

    def _elaborate_union(self):
        """Decode every member; the element's index picks one, its significand widened to ``man_bits``."""
        m = Module()
        u = self.fmt
        index = self.bits[u.member_bits:]
        for n, f in enumerate(u.members):
            dec = m.submodules[f"dec_{f.name}"] = OperandDecode(f)
            m.d.comb += dec.bits.eq(self.bits[:f.storage_bits])
            with m.If(index == n):
                m.d.comb += [self.out.sign.eq(dec.out.sign), self.out.exp.eq(dec.out.exp),
                             self.out.sig.eq(dec.out.sig << (u.man_bits - f.man_bits)),
                             self.out.zero.eq(dec.out.zero), self.out.inf.eq(dec.out.inf),
                             self.out.nan.eq(dec.out.nan)]
        return m
