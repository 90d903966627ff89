"""SFMA: ``K`` IEEE fused multiply-adds in order, ``d = c; d = fma(a_k, b_k, d)`` (DMMA, f64/f32 MFMA).

The chain is unrolled, one :class:`~hw.fma.FusedMultiplyAdd` per product, so
the unit accepts a dot-add every cycle (II = 1).  c joins an fma at its add
stage, so fma ``k``'s multiplier runs while fma ``k - 1`` is still adding and
rounding: its operands wait ``2k`` cycles in delay lines, and the latency is
``3 + 2 (K - 1)`` cycles (multiply, then align/add and normalise/round per
fma).
"""

from __future__ import annotations

from amaranth import Module

from golden.rules import Rounding

from .fma import FusedMultiplyAdd
from .pipeline import DatapathPipeline, delayed
from .pipelining import as_pipelining

__all__ = ["SFMAChain"]


class SFMAChain(DatapathPipeline):
    """``K`` fused multiply-adds in series, each rounding (``params.fma_rounding``, RNE by default) to
    the operand format.

    Parameters
    ----------
    datapath : golden.Datapath
        One IEEE format (binary64 or binary32) for a, b, c and d; ``k`` fmas.  SFMA reads
        ``fma_rounding`` (binary32 only) and ``nan_bits`` (the unit's output stage).
    pipelining : Pipelining, int or str, optional
        Register stages inside each fma (``None``: level 0).

    Members
    -------
    a, b, c, d : see :class:`hw.pipeline.DatapathPipeline`

    ``latency`` is ``2 k + 1`` at level 0: the first multiply, then 2 cycles per fma (deeper
    pipelining: the multiplier's latency, then :attr:`step` cycles per fma).
    """

    BASES = ("SFMA",)

    @classmethod
    def check(cls, datapath, pipelining=None) -> None:
        super().check(datapath, pipelining)
        names = [f.name for f in datapath.formats]
        if len(set(names)) != 1:
            raise ValueError(f"SFMA needs one format for a, b, c and d, not {', '.join(names)}")
        if datapath.params.fma_rounding != Rounding.RNE and names[0] != "f32":
            raise ValueError(f"SFMA rounds {names[0]} to nearest even only (golden has no other); "
                             f"fma_rounding={datapath.params.fma_rounding} is a binary32 design")

    def __init__(self, datapath, pipelining=None):
        self.fmt, self.k = datapath.a_format, datapath.k
        self.pipelining = as_pipelining(pipelining)
        self.fmas = [FusedMultiplyAdd(self.fmt, c_late=True, pipelining=self.pipelining,
                                      mode=datapath.params.fma_rounding) for _ in range(self.k)]
        super().__init__(datapath)

    @property
    def step(self) -> int:
        """Cycles each further fma adds: its align/add and normalise/round stages."""
        f = self.fmas[0]
        return f.add.latency + f.round.latency

    def named_stages(self):
        """The first multiplier, then each fma's add and round; later multipliers overlap the
        fma before them and add nothing."""
        out = [("fma0.FMAMultiply", self.fmas[0].mul)]
        for j, f in enumerate(self.fmas):
            out += [(f"fma{j}.FMAAlignAdd", f.add), (f"fma{j}.FMARound", f.round)]
        return out

    def elaborate(self, platform):
        m = Module()
        w = self.fmt.storage_bits
        # c meets fma 0's product after the multiplier
        c = delayed(m, "c_wait", w, self.fmas[0].mul.latency, self.c)
        for j, f in enumerate(self.fmas):
            m.submodules[f"fma{j}"] = f
            # operands of fma j wait for the j fmas before it
            for name in ("a", "b"):
                m.d.comb += getattr(f, name).eq(delayed(m, f"{name}{j}_wait", w, j * self.step,
                                                        getattr(self, name)[j]))
            m.d.comb += f.c.eq(c)
            c = f.d
        assert self.fmas[0].mul.latency + self.k * self.step == self.latency
        m.d.comb += self.d.eq(c)
        return m
