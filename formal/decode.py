"""The union-format decoder (:class:`hw.decode.OperandDecode` of a :func:`hw.decode.union_format`)
against its members' own decoders: for an element of member ``n`` (its index above its bits) the
union's output is member ``n``'s decoded value, the significand widened to the widest member's
(``sig << (man_bits - member's man_bits)``), sign, exponent and class flags unchanged."""

from __future__ import annotations

from amaranth import Elaboratable, Module

from golden.formats import get_format
from hw.decode import OperandDecode, union_format

from .harness import Equivalence
from .property import Property

__all__ = ["decode_property"]


class _Decoders(Elaboratable):
    """The union decoder under test and one plain decoder per member, fed the same bits."""

    def __init__(self, members, dut_class):
        self.fmt = union_format(members)
        self.dut = dut_class(self.fmt)
        self.refs = [OperandDecode(f) for f in self.fmt.members]

    def elaborate(self, platform):
        m = Module()
        m.submodules.union = self.dut
        for n, ref in enumerate(self.refs):
            m.submodules[f"ref{n}"] = ref
            m.d.comb += ref.bits.eq(self.dut.bits[:ref.fmt.storage_bits])
        return m


def decode_property(members, units=(), dut_class=OperandDecode) -> Property:
    members = [get_format(f) for f in members]
    if len(members) < 2:
        raise ValueError("a union decoder has at least two member formats")

    def build():
        top = _Decoders(members, dut_class)
        u, out = top.fmt, top.dut.out
        index = top.dut.bits[u.member_bits:]

        def expect(past):
            checks = []
            for n, ref in enumerate(top.refs):
                r, sel = ref.out, index != n
                widened = r.sig << (u.man_bits - ref.fmt.man_bits)
                for mine, theirs in ((out.sign, r.sign), (out.exp, r.exp), (out.sig, widened), (out.zero, r.zero),
                                     (out.inf, r.inf), (out.nan, r.nan)):
                    checks.append((sel | (mine == theirs), 1))
            return checks

        h = Equivalence(top, 0, [top.dut.bits], expect, lambda now: [index < len(members)])
        return h, h.depth
    return Property(f"decode/{'|'.join(f.name for f in members)}", "decode", build, units=tuple(units))
