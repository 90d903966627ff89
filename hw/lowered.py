"""A compiled FDA path: what a compiler lowers an instruction to when the GPU has no native one.

Hopper and Blackwell have no warp-level fp8 MMA; ptxas lowers ``mma.sync`` m16n8k32 fp8 to
conversions to f16, two ``HMMA.16816`` over the byte pairs of each fragment register (the first from
a zero accumulator) and one IEEE add of c (``golden.Params.operand_format``, ``pass_interleave``,
``c_last``; docs/gpu/unresolved_fp8.md).  :class:`LoweredFDA` is that, from the stage library:

=======================  ===================================================================  ========
stage                    work                                                                 latency
=======================  ===================================================================  ========
operand conversion       each a and b element to ``operand_format`` (a table from golden's    0
                         exact conversion: 256 entries for fp8)
:class:`FDAChain`        the passes on the converted operands, taken in the interleaved        chain's
                         order (wiring), from +0
:class:`FusedMultiplyAdd`  ``chain * 1 + c``: the IEEE add, RNE; then the canonical NaN and   3
                         +0 of NVIDIA's results (wiring)
=======================  ===================================================================  ========
"""

from __future__ import annotations

import numpy as np
from amaranth import Module, Mux, Signal

from golden.algorithms import convert_exactly, pass_order
from golden.formats import get_format, special_bits
from golden.rules import ZeroSign

from .fda import FDAChain
from .fma import FusedMultiplyAdd
from .pipeline import DatapathPipeline, delayed
from .pipelining import as_pipelining

__all__ = ["LoweredFDA", "is_lowered"]


def is_lowered(params) -> bool:
    """Whether ``params`` describe a compiled path (any of the three lowering fields set)."""
    return params.operand_format is not None or params.pass_interleave is not None or params.c_last


class LoweredFDA(DatapathPipeline):
    """A compiled FDA path (see the module docstring).

    Parameters
    ----------
    datapath : golden.Datapath
        FDA with ``params.operand_format``, ``pass_interleave`` and/or ``c_last``; with ``c_last``
        the result format is f16 or f32 and c has it too.
    pipelining : Pipelining, int or str, optional
        Register stages of the chain's and the adder's long stages (``None``: level 0).

    Members
    -------
    a, b, c, d : see :class:`hw.pipeline.DatapathPipeline`
    """

    BASES = ("FDA",)

    @classmethod
    def check(cls, datapath, pipelining=None) -> None:
        super().check(datapath, pipelining)
        p = datapath.params
        if p.c_last and (datapath.c_format.name != datapath.d_format.name
                         or datapath.d_format.name not in ("f16", "f32")):
            raise ValueError(f"c_last adds c in the result format, f16 or f32; got c {datapath.c_format.name}, "
                             f"d {datapath.d_format.name}")
        FDAChain.check(cls._inner(datapath), pipelining)

    @staticmethod
    def _inner(datapath):
        """The chain's datapath: the converted operands, c in the result format when it comes last."""
        p = datapath.params
        fo = get_format(p.operand_format) if p.operand_format else None
        inner = p.with_(operand_format=None, pass_interleave=None, c_last=False)
        return datapath.with_(params=inner, a_format=fo or datapath.a_format, b_format=fo or datapath.b_format,
                              c_format=datapath.d_format if p.c_last else datapath.c_format)

    def __init__(self, datapath, pipelining=None):
        self.pipelining = as_pipelining(pipelining)
        p = self.params = datapath.params
        self.fa, self.fb, self.fc, self.fd = datapath.formats
        self.chain = FDAChain(self._inner(datapath), self.pipelining)
        self.order = (pass_order(datapath.k, p.pass_size, p.pass_interleave) if p.pass_interleave
                      else np.arange(datapath.k))
        self.adder = FusedMultiplyAdd(self.fd, pipelining=self.pipelining) if p.c_last else None
        super().__init__(datapath)

    def named_stages(self):
        out = [("chain." + name, s) for name, s in self.chain.named_stages()]
        if self.adder is not None:
            out += [("add_c." + type(s).__name__, s) for s in self.adder.stages]
        return out

    def _converted(self, m, name, fmt, bits, tables):
        """``bits`` of ``fmt`` as the chain's operand format, through golden's conversion table
        (made once per format: ``tables``)."""
        to = self.chain.fa
        if not self.params.operand_format or fmt.name == to.name:
            return bits
        if fmt.name not in tables:
            codes = np.arange(1 << fmt.storage_bits, dtype=np.uint64)
            tables[fmt.name] = [int(w) for w in convert_exactly(fmt, codes, to)]
        out = Signal(to.storage_bits, name=name)
        with m.Switch(bits):
            for code, word in enumerate(tables[fmt.name]):
                with m.Case(code):
                    m.d.comb += out.eq(word)
        return out

    def elaborate(self, platform):
        m = Module()
        m.submodules.chain = chain = self.chain
        tables: dict = {}
        for name, fmt in (("a", self.fa), ("b", self.fb)):
            src, dst = getattr(self, name), getattr(chain, name)
            for j, k in enumerate(self.order):         # pass order: wiring
                m.d.comb += dst[j].eq(self._converted(m, f"{name}{k}_conv", fmt, src[int(k)], tables))
        if self.adder is None:
            m.d.comb += [chain.c.eq(self.c), self.d.eq(chain.d)]
            assert chain.latency == self.latency
            return m
        m.submodules.add_c = add = self.adder
        one = _one(self.fd)
        c_wait = delayed(m, "c_wait", self.fd.storage_bits, chain.latency, self.c)
        m.d.comb += [chain.c.eq(0), add.a.eq(chain.d), add.b.eq(one), add.c.eq(c_wait)]
        d = add.d
        fd = self.fd
        exp = d[fd.man_bits:fd.man_bits + fd.exp_bits]
        is_nan = (exp == (1 << fd.exp_bits) - 1) & (d[:fd.man_bits] != 0)
        negative_zero = d == int(special_bits(fd, "zero", 1))
        canonical = int(special_bits(fd, "nan"))
        positive_zero = self.params.zero_sign == ZeroSign.POSITIVE
        m.d.comb += self.d.eq(Mux(is_nan, canonical, Mux(negative_zero & positive_zero, 0, d)))
        assert chain.latency + add.latency == self.latency, "the chain and the adder make the latency"
        return m


def _one(fmt) -> int:
    """The bit pattern of 1.0 in an IEEE format."""
    return ((1 << (fmt.exp_bits - 1)) - 1) << fmt.man_bits
