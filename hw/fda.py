"""The fused dot-add pass (FDA) and its chain (CoFDA), built from the stage library.

One :class:`FDAPass` is multiplier array -> exponent-max tree -> alignment
shifters -> carry-save tree -> normaliser, with delay lines carrying the
products, c, the special-value flags and e_max alongside.  :class:`FDAChain`
runs ``K / L`` passes in series (unrolled, so the initiation interval stays
1), each pass taking the previous result as its c, exactly as ISA.md's
"chain of L" rounds the intermediate to the output format.
"""

from __future__ import annotations

from amaranth import Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.algorithms import Params
from golden.formats import get_format

from .align import AlignShifters
from .compress import CompressorTree
from .decode import Decoded, exp_shape
from .maxexp import MaxExponentTree
from .multiply import MultiplierArray, Product
from .normalise import NormaliseRound
from .pipeline import Delay, Stage
from .specials import Specials

__all__ = ["FDAPass", "FDAChain"]


class FDAPass(Stage):
    """One FDA pass of ``k`` products.

    Parameters
    ----------
    fa, fb, fc, fd : Format
        Operand, accumulator and result formats.
    k : int
        Products in this pass (L).
    params : golden.Params
        ``F``, ``e_zero``, ``out_rounding``, ``out_frac_bits``, ``overflow``, ``zero_sign``.
    fs, block : optional
        Block-scale format and block size (FDA with scales).
    max_levels_per_stage : int
        Comparator levels between registers in the exponent-max tree.

    Members
    -------
    en : In(1)
    a, b : In(ArrayLayout(storage bits, k))
    c : In(fc.storage_bits)
    scale_a, scale_b : In(ArrayLayout(8, k // block)), when scaled
    d : Out(fd.storage_bits)
    """

    def __init__(self, fa, fb, fc, fd, k, params: Params, fs=None, block=None, max_levels_per_stage=3):
        self.fa, self.fb, self.fc, self.fd = (get_format(f) for f in (fa, fb, fc, fd))
        self.fs = get_format(fs) if fs else None
        self.k, self.params, self.block = k, params, block
        p = params
        self.mul = MultiplierArray(self.fa, self.fb, self.fc, k, p.e_zero, self.fs, block)
        self.tree = MaxExponentTree(k + 1, max_levels_per_stage)
        self.align = AlignShifters(Product(self.fa, self.fb), self.fa.man_bits + self.fb.man_bits, k, p.F, self.fc)
        self.csa = CompressorTree(self.align.width, k + 1)
        self.norm = NormaliseRound(self.csa.width, p.F, self.fd, p.out_frac_bits, p.out_rounding, p.overflow,
                                   positive_zero=p.zero_sign == "positive")
        self.stages = [self.mul, self.tree, self.align, self.csa, self.norm]
        members = {"a": In(data.ArrayLayout(self.fa.storage_bits, k)),
                   "b": In(data.ArrayLayout(self.fb.storage_bits, k)),
                   "c": In(self.fc.storage_bits), "d": Out(self.fd.storage_bits)}
        if self.fs:
            members["scale_a"] = In(data.ArrayLayout(self.fs.storage_bits, k // block))
            members["scale_b"] = In(data.ArrayLayout(self.fs.storage_bits, k // block))
        super().__init__(members)

    @property
    def latency(self) -> int:
        """Sum of the stage latencies: multiply + max tree + align + compress + normalise."""
        return sum(s.latency for s in self.stages)

    def elaborate(self, platform):
        m = Module()
        mul, tree, align, csa, norm = self.stages
        m.submodules.multiply, m.submodules.max_exponent = mul, tree
        m.submodules.align, m.submodules.compress, m.submodules.normalise = align, csa, norm
        for s in self.stages:
            m.d.comb += s.en.eq(self.en)
        m.d.comb += [mul.a.eq(self.a), mul.b.eq(self.b), mul.c.eq(self.c)]
        if self.fs:
            m.d.comb += [mul.scale_a.eq(self.scale_a), mul.scale_b.eq(self.scale_b)]

        # exponent-max tree over the products' and c's exponents
        for j in range(self.k):
            m.d.comb += tree.exps[j].eq(mul.products[j].exp)
        m.d.comb += tree.exps[self.k].eq(mul.c_term.exp)

        # products and c wait for e_max
        prods = m.submodules.products_wait = Delay(data.ArrayLayout(Product(self.fa, self.fb), self.k), tree.latency)
        cterm = m.submodules.c_wait = Delay(Decoded(self.fc), tree.latency)
        m.d.comb += [prods.en.eq(self.en), cterm.en.eq(self.en), prods.i.eq(mul.products), cterm.i.eq(mul.c_term)]
        m.d.comb += [align.products.eq(prods.o), align.c_term.eq(cterm.o), align.e_max.eq(tree.e_max)]

        m.d.comb += csa.terms.eq(align.terms)

        # e_max and the special flags wait for the sum
        emax = m.submodules.emax_wait = Delay(exp_shape(), align.latency + csa.latency)
        spec = m.submodules.specials_wait = Delay(Specials, tree.latency + align.latency + csa.latency)
        m.d.comb += [emax.en.eq(self.en), spec.en.eq(self.en), emax.i.eq(tree.e_max), spec.i.eq(mul.specials)]
        m.d.comb += [norm.total.eq(csa.total), norm.e_max.eq(emax.o), norm.specials.eq(spec.o),
                     self.d.eq(norm.d)]
        return m


class FDAChain(Stage):
    """``K / L`` passes in series (CoFDA, and CoFDRDA / CoGFDRDA with ``pass_class``); one when ``K == L``.

    Members
    -------
    en : In(1)
    a, b : In(ArrayLayout(storage bits, K))
    c : In(fc.storage_bits)
    scale_a, scale_b : In(ArrayLayout(8, K // block)), when scaled
    d : Out(fd.storage_bits)
    """

    def __init__(self, fa, fb, fc, fd, k, params: Params, fs=None, block=None, max_levels_per_stage=3,
                 pass_class=None):
        self.fa, self.fb, self.fc, self.fd = (get_format(f) for f in (fa, fb, fc, fd))
        self.fs = get_format(fs) if fs else None
        pass_class = pass_class or FDAPass
        L = params.pass_size or k
        if k % L:
            raise ValueError(f"K={k} is not a multiple of the pass size L={L}")
        self.k, self.L, self.block = k, L, block
        self.passes = [pass_class(self.fa, self.fb, self.fc if j == 0 else self.fd, self.fd, L, params, self.fs, block,
                                  max_levels_per_stage) for j in range(k // L)]
        members = {"a": In(data.ArrayLayout(self.fa.storage_bits, k)),
                   "b": In(data.ArrayLayout(self.fb.storage_bits, k)),
                   "c": In(self.fc.storage_bits), "d": Out(self.fd.storage_bits)}
        if self.fs:
            members["scale_a"] = In(data.ArrayLayout(self.fs.storage_bits, k // block))
            members["scale_b"] = In(data.ArrayLayout(self.fs.storage_bits, k // block))
        super().__init__(members)

    @property
    def latency(self) -> int:
        return sum(p.latency for p in self.passes)

    @property
    def stage_latencies(self) -> list[tuple[str, int]]:
        """(stage, cycles) in order, pass by pass."""
        out = []
        for j, ps in enumerate(self.passes):
            prefix = f"pass{j}." if len(self.passes) > 1 else ""
            out += [(prefix + type(s).__name__, s.latency) for s in ps.stages]
        return out

    def elaborate(self, platform):
        m = Module()
        L, lat = self.L, self.passes[0].latency
        c = self.c
        for j, ps in enumerate(self.passes):
            m.submodules[f"pass{j}"] = ps
            m.d.comb += ps.en.eq(self.en)
            # operands of pass j wait for the j passes before it
            for name, fmt in (("a", self.fa), ("b", self.fb)):
                src = getattr(self, name)
                wait = m.submodules[f"{name}{j}_wait"] = Delay(data.ArrayLayout(fmt.storage_bits, L), j * lat)
                m.d.comb += wait.en.eq(self.en)
                for i in range(L):
                    m.d.comb += wait.i[i].eq(src[j * L + i])
                m.d.comb += getattr(ps, name).eq(wait.o)
            if self.fs:
                nb = L // self.block
                for name in ("scale_a", "scale_b"):
                    src = getattr(self, name)
                    wait = m.submodules[f"{name}{j}_wait"] = Delay(data.ArrayLayout(self.fs.storage_bits, nb), j * lat)
                    m.d.comb += wait.en.eq(self.en)
                    for i in range(nb):
                        m.d.comb += wait.i[i].eq(src[j * nb + i])
                    m.d.comb += getattr(ps, name).eq(wait.o)
            m.d.comb += ps.c.eq(c)
            c = ps.d
        m.d.comb += self.d.eq(c)
        return m
