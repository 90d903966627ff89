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
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from golden.algorithms import Params
from golden.formats import get_format

from .fma import FusedMultiplyAdd
from .pipeline import Delay, Stage

__all__ = ["SFMAChain"]


class SFMAChain(Stage):
    """``K`` fused multiply-adds in series, each rounding (RNE) to the operand format.

    Parameters
    ----------
    fa, fb, fc, fd : Format
        All the same IEEE format, binary64 or binary32.
    k : int
        Products (fmas) per dot-add.
    params : golden.Params, optional
        The SFMA parameters (nothing in them changes the datapath).

    Members
    -------
    en : In(1)
    a, b : In(ArrayLayout(storage bits, k))
    c : In(fc.storage_bits)
    d : Out(fd.storage_bits)

    ``latency`` is ``2 k + 1``: the first multiply, then 2 cycles per fma.
    """

    def __init__(self, fa, fb, fc, fd, k: int, params: Params | None = None):
        fmts = [get_format(f) for f in (fa, fb, fc, fd)]
        if len({f.name for f in fmts}) != 1:
            raise ValueError(f"SFMA needs one format for a, b, c and d, not {', '.join(f.name for f in fmts)}")
        if k < 1:
            raise ValueError("SFMA needs at least one product")
        self.fmt, self.k, self.params = fmts[0], k, params
        self.fmas = [FusedMultiplyAdd(self.fmt, c_late=True) for _ in range(k)]
        w = self.fmt.storage_bits
        super().__init__({"a": In(data.ArrayLayout(w, k)), "b": In(data.ArrayLayout(w, k)),
                          "c": In(w), "d": Out(w)})

    @property
    def step(self) -> int:
        """Cycles each further fma adds: its align/add and normalise/round stages."""
        f = self.fmas[0]
        return f.add.latency + f.round.latency

    @property
    def latency(self) -> int:
        return self.fmas[0].mul.latency + self.k * self.step

    @property
    def stage_latencies(self) -> list[tuple[str, int]]:
        """(stage, cycles) in order; later multipliers overlap the fma before them and add nothing."""
        out = [("fma0.FMAMultiply", self.fmas[0].mul.latency)]
        for j, f in enumerate(self.fmas):
            out += [(f"fma{j}.FMAAlignAdd", f.add.latency), (f"fma{j}.FMARound", f.round.latency)]
        return out

    def elaborate(self, platform):
        m = Module()
        w = self.fmt.storage_bits
        # c meets fma 0's product after the multiplier
        c_wait = m.submodules.c_wait = Delay(w, self.fmas[0].mul.latency)
        m.d.comb += [c_wait.en.eq(self.en), c_wait.i.eq(self.c)]
        c = c_wait.o
        for j, f in enumerate(self.fmas):
            m.submodules[f"fma{j}"] = f
            m.d.comb += f.en.eq(self.en)
            # operands of fma j wait for the j fmas before it
            for name in ("a", "b"):
                wait = m.submodules[f"{name}{j}_wait"] = Delay(w, j * self.step)
                m.d.comb += [wait.en.eq(self.en), wait.i.eq(getattr(self, name)[j]), getattr(f, name).eq(wait.o)]
            m.d.comb += f.c.eq(c)
            c = f.d
        m.d.comb += self.d.eq(c)
        return m
