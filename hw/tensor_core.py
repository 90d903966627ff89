"""One tensor core per architecture: every instruction of the architecture, chosen by an opcode,
on datapaths shared between instructions.

A GPU's matrix unit is not one circuit per instruction.  :class:`TensorCore` groups an
architecture's catalog instructions into *datapath groups* and builds each group once:

- instructions with the same algorithm parameters, K, c and d formats and scales share one
  datapath whatever their a and b formats, where the algorithm works on decoded values alone
  (FDA and its scaled and chained forms, FDRDA, GFDRDA): the operands enter through a
  :func:`hw.decode.union_format` decoder, so one multiplier array, exponent-max tree, alignment
  shifter, compressor tree and normaliser serve every format pair of the group (Blackwell's 25
  f8f6f4 combinations of one shape run on one datapath);
- the other algorithms (GDFS, GPS, SFMA), whose rules name the operand format, share a datapath
  only between instructions with identical formats (HGMMA's N variants, aliases, shapes).

The opcode of an instruction is its index in :attr:`TensorCore.instructions` (catalog order).
Every group's output waits in a delay line to the longest group latency, so the core has one
fixed latency and accepts one dot-add of any instruction per cycle, mixed freely.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth import Module, Signal
from amaranth.hdl import EnableInserter
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

import golden
from golden.catalog import Instruction, canonical_arch
from golden.descriptors import Part, parts
from golden.formats import get_format

from .decode import UnionFormat, union_format
from .lowered import is_lowered
from .pipeline import Checked, Delay
from .pipelining import Pipelining, as_pipelining
from .unit import datapath_class

__all__ = ["TensorCore", "DatapathGroup", "datapath_groups", "UNION_BASES"]

# Base algorithms whose datapath sees a and b only as decoded (sign, exponent, significand): the hw
# part of their descriptors (hw.unit.HW_PARTS)
UNION_BASES = tuple(name for name, union in parts(Part.HW_UNION).items() if union)


@dataclass
class DatapathGroup:
    """Instructions sharing one datapath: their common configuration and operand formats."""

    template: Instruction             # the first member; its params, K, c, d and scales build the datapath
    members: list                     # Instructions
    fa: object                        # Format or UnionFormat
    fb: object

    @property
    def datapath(self) -> golden.Datapath:
        """What the group's datapath is built from: the template's, with the (union) a/b formats."""
        return self.template.datapath.with_(a_format=self.fa, b_format=self.fb)

    @property
    def name(self) -> str:
        t = self.template
        scale = f" {t.scale_format}/{t.block_size}" if t.scale_format else ""
        return f"{t.algorithm} K={t.k} {_short(self.fa)} x {_short(self.fb)} + {t.c_format} -> {t.d_format}{scale}"


def _short(fmt) -> str:
    """A format's name; a union of more than three as first..last(count)."""
    if isinstance(fmt, UnionFormat) and len(fmt.members) > 3:
        return f"{fmt.members[0].name}..{fmt.members[-1].name}({len(fmt.members)})"
    return fmt.name


def _group_key(ins: Instruction) -> golden.Datapath:
    """The instruction's datapath; where a union decoder can take any a/b format, without them."""
    dp = ins.datapath
    # a compiled path converts its operands first, from their own formats: no union decoder
    union = ins.params.base in UNION_BASES and not is_lowered(ins.params)
    return dp.with_(a_format=None, b_format=None) if union else dp


def datapath_groups(instructions) -> list[DatapathGroup]:
    """Group instructions by the datapath they can share (see the module docstring)."""
    groups: dict = {}
    for ins in instructions:
        groups.setdefault(_group_key(ins), []).append(ins)
    out = []
    for members in groups.values():
        fa = union_format([i.a_format for i in members])
        fb = union_format([i.b_format for i in members])
        out.append(DatapathGroup(members[0], members, fa, fb))
    return out


class TensorCore(Checked, wiring.Component):
    """Every instruction of ``arch`` behind one opcode-selected, fully pipelined stream.

    Parameters
    ----------
    arch : str
        Architecture (any name or alias :func:`golden.catalog.canonical_arch` takes).
    instructions : list of Instruction, optional
        A subset of the architecture's catalog (default: all of it); the opcodes index this list.
    pipelining : Pipelining, int or str, optional
        Register stages of the datapaths' long stages (``None``: level 0).

    Members
    -------
    i : In(stream.Signature(StructLayout({opcode, a, b, c[, scale_a, scale_b]})))
        ``a``/``b``: K_max elements of the widest a/b storage, an instruction's K elements first,
        each in the instruction's own format, right-aligned; ``c``, scales likewise.
    o : Out(stream.Signature(widest d storage bits))
        The result in the instruction's d format, right-aligned.
    """

    @classmethod
    def check(cls, arch: str, instructions=None, pipelining=None) -> None:
        as_pipelining(pipelining)
        arch = canonical_arch(arch)
        instructions = cls._instructions(arch, instructions)
        if not instructions:
            raise ValueError(f"no instructions for a tensor core on {arch}")
        for ins in instructions:
            if ins.arch != arch:
                raise ValueError(f"{ins.arch} {ins.name} is not a {arch} instruction")
            datapath_class(ins.datapath, f"{ins.arch} {ins.name}")

    @staticmethod
    def _instructions(arch: str, instructions) -> list:
        return list(instructions) if instructions is not None else golden.instructions(arch)

    def __init__(self, arch: str, instructions=None, pipelining=None):
        self.arch = canonical_arch(arch)
        self.instructions = self._instructions(self.arch, instructions)
        self.pipelining: Pipelining = as_pipelining(pipelining)
        self.groups = datapath_groups(self.instructions)
        self.datapaths = [datapath_class(g.datapath)(g.datapath, self.pipelining) for g in self.groups]
        self.k_max = max(i.k for i in self.instructions)
        fmt = lambda attr: [get_format(getattr(i, attr)) for i in self.instructions]  # noqa: E731
        self.a_bits = max(f.storage_bits for f in fmt("a_format"))
        self.b_bits = max(f.storage_bits for f in fmt("b_format"))
        self.c_bits = max(f.storage_bits for f in fmt("c_format"))
        self.d_bits = max(f.storage_bits for f in fmt("d_format"))
        scaled = [i for i in self.instructions if i.scale_format]
        self.s_bits = max((get_format(i.scale_format).storage_bits for i in scaled), default=0)
        self.s_max = max((i.k // i.block_size for i in scaled), default=0)
        fields = {"opcode": max(1, (len(self.instructions) - 1).bit_length()),
                  "a": data.ArrayLayout(self.a_bits, self.k_max), "b": data.ArrayLayout(self.b_bits, self.k_max),
                  "c": self.c_bits}
        if scaled:
            fields["scale_a"] = data.ArrayLayout(self.s_bits, self.s_max)
            fields["scale_b"] = data.ArrayLayout(self.s_bits, self.s_max)
        self.payload_layout = data.StructLayout(fields)
        super().__init__({"i": In(stream.Signature(self.payload_layout)), "o": Out(stream.Signature(self.d_bits))})

    @property
    def latency(self) -> int:
        """Cycles from an accepted input to its result: the operand register (when
        ``pipelining.operands``) and the longest group's datapath."""
        return self.pipelining.operands + self.datapath_latency

    @property
    def datapath_latency(self) -> int:
        """The longest group's datapath latency, which every group's result waits for."""
        return max(dp.latency for dp in self.datapaths)

    @property
    def initiation_interval(self) -> int:
        return 1

    def opcode(self, instr) -> int:
        """The opcode of an instruction (an Instruction of this core, or its name)."""
        for n, ins in enumerate(self.instructions):
            if ins == instr or (isinstance(instr, str) and ins.name == instr):
                return n
        raise ValueError(f"{getattr(instr, 'name', instr)!r} is not an instruction of this {self.arch} core")

    def group_of(self, ins: Instruction) -> int:
        return next(n for n, g in enumerate(self.groups) if ins in g.members)

    def elaborate(self, platform):
        m = Module()
        # every datapath and delay line advances when the output is free (EnableInserter)
        advance = Signal()
        m.d.comb += [advance.eq(self.o.ready | ~self.o.valid), self.i.ready.eq(advance)]
        # the operand register (pipelining.operands): what feeds the core ends at a register
        operands = Delay(self.payload_layout, self.pipelining.operands)
        m.submodules.operands = EnableInserter(advance)(operands)
        m.d.comb += operands.i.eq(self.i.payload)
        p = operands.o
        valid = Delay(1, self.latency)
        m.submodules.valid = EnableInserter(advance)(valid)
        m.d.comb += [valid.i.eq(self.i.valid), self.o.valid.eq(valid.o)]
        # which group answers, and when
        gsel_shape = max(1, (len(self.groups) - 1).bit_length())
        gsel = Signal(gsel_shape)
        with m.Switch(p.opcode):
            for n, ins in enumerate(self.instructions):
                with m.Case(n):
                    m.d.comb += gsel.eq(self.group_of(ins))
            with m.Default():                  # unused opcodes: group 0, a result nobody asked for
                m.d.comb += gsel.eq(0)
        gwait = Delay(gsel_shape, self.datapath_latency)
        m.submodules.group_wait = EnableInserter(advance)(gwait)
        m.d.comb += gwait.i.eq(gsel)
        for g_no, (g, dp) in enumerate(zip(self.groups, self.datapaths)):
            m.submodules[f"group{g_no}"] = EnableInserter(advance)(dp)
            self._feed(m, g_no, g, dp, p)
            out = Delay(len(dp.d), self.datapath_latency - dp.latency)
            m.submodules[f"group{g_no}_wait"] = EnableInserter(advance)(out)
            m.d.comb += out.i.eq(dp.d)
            with m.If(gwait.o == g_no):
                m.d.comb += self.o.payload.eq(out.o)
        return m

    def _feed(self, m, g_no: int, g: DatapathGroup, dp, p):
        """Operands of a group's datapath: each element tagged with its format's index in a union."""
        t = g.template
        for name, fmt in (("a", g.fa), ("b", g.fb)):
            port, src = getattr(dp, name), getattr(p, name)
            if not isinstance(fmt, UnionFormat):
                for j in range(t.k):
                    m.d.comb += port[j].eq(src[j][:fmt.storage_bits])
                continue
            index = Signal(fmt.select_bits, name=f"group{g_no}_{name}_index")
            with m.Switch(p.opcode):
                for n, ins in enumerate(self.instructions):
                    if ins in g.members:
                        with m.Case(n):
                            m.d.comb += index.eq(fmt.members.index(get_format(getattr(ins, f"{name}_format"))))
                with m.Default():
                    m.d.comb += index.eq(0)
            for j in range(t.k):
                m.d.comb += port[j].eq(src[j][:fmt.member_bits] | (index << fmt.member_bits))
        m.d.comb += dp.c.eq(p.c[:get_format(t.c_format).storage_bits])
        if t.scale_format:
            sbits = get_format(t.scale_format).storage_bits
            for name in ("scale_a", "scale_b"):
                for j in range(t.k // t.block_size):
                    m.d.comb += getattr(dp, name)[j].eq(getattr(p, name)[j][:sbits])
