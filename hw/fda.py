"""The fused dot-add pass (FDA) and its chain (CoFDA), built from the stage library.

One :class:`FDAPass` is multiplier array -> exponent-max tree -> alignment
shifters -> carry-save tree -> normaliser, with delay lines carrying the
products, c, the special-value flags and e_max alongside.  :class:`FDAChain`
runs ``K / L`` passes in series (unrolled, so the initiation interval stays
1), each pass taking the previous result as its c, exactly as docs/spec.md's
"chain of L" rounds the intermediate to the output format.
"""

from __future__ import annotations

from amaranth import Cat, Module, Signal
from amaranth.lib import data

from golden.algorithms import exact_window
from golden.params import EXACT
from golden.rules import ZeroSign

from .align import AlignShifters
from .compress import CompressorTree
from .decode import Decoded, exp_shape
from .maxexp import MaxExponentTree
from .multiply import MultiplierArray, Product
from .normalise import NormaliseRound
from .pipeline import DatapathPipeline, Delay, delayed
from .pipelining import as_pipelining
from .specials import Specials, ZeroTerms

__all__ = ["FDAPass", "FDAChain"]


class FDAPass(DatapathPipeline):
    """One FDA pass of ``k`` products: multiplier array -> max tree -> align -> compress -> normalise.

    Parameters
    ----------
    datapath : golden.Datapath
        The pass: its formats, ``k`` (L), block scales (FDA with scales) and ``params``
        (``F``, ``e_zero``, ``out_rounding``, ``out_frac_bits``, ``overflow``, ``zero_sign``).
    pipelining : Pipelining, int or str, optional
        Register stages of the long stages (``None``: level 0).

    Members
    -------
    a, b, c, scale_a, scale_b, d : see :class:`hw.pipeline.DatapathPipeline`
    """

    BASES = ("FDA",)
    SCALES = "optional"

    def __init__(self, datapath, pipelining=None):
        self.fa, self.fb, self.fc, self.fd = datapath.formats
        self.fs, self.k, self.block, p = datapath.scale_format, datapath.k, datapath.block_size, datapath.params
        self.pipelining = pl = as_pipelining(pipelining)
        # F="exact": a window that holds every term whole (golden.algorithms.exact_window), so the sum is exact
        F = exact_window(datapath) if p.F == EXACT else p.F
        self.ieee754_zeros = p.zero_sign == ZeroSign.IEEE754
        self.mul = MultiplierArray(self.fa, self.fb, self.fc, self.k, p.e_zero, self.fs, self.block, pl)
        self.tree = MaxExponentTree(self.k + 1, pl.max_levels)
        self.align = AlignShifters(Product(self.fa, self.fb), self.fa.man_bits + self.fb.man_bits, self.k, F,
                                   self.fc, pl)
        self.csa = CompressorTree(self.align.width, self.k + 1, pl)
        self.norm = NormaliseRound(self.csa.width, F, self.fd, p.out_frac_bits, p.out_rounding, p.overflow,
                                   positive_zero=p.zero_sign == ZeroSign.POSITIVE, pipelining=pl,
                                   ieee754_zeros=self.ieee754_zeros)
        self.stages = [self.mul, self.tree, self.align, self.csa, self.norm]
        super().__init__(datapath)

    def elaborate(self, platform):
        m = Module()
        mul, tree, align, csa, norm = self.stages
        m.submodules.multiply, m.submodules.max_exponent = mul, tree
        m.submodules.align, m.submodules.compress, m.submodules.normalise = align, csa, norm
        m.d.comb += [mul.a.eq(self.a), mul.b.eq(self.b), mul.c.eq(self.c)]
        if self.fs:
            m.d.comb += [mul.scale_a.eq(self.scale_a), mul.scale_b.eq(self.scale_b)]

        # exponent-max tree over the products' and c's exponents
        for j in range(self.k):
            m.d.comb += tree.exps[j].eq(mul.products[j].exp)
        m.d.comb += tree.exps[self.k].eq(mul.c_term.exp)

        # products and c wait for e_max
        prods = delayed(m, "products_wait", data.ArrayLayout(Product(self.fa, self.fb), self.k), tree.latency,
                        mul.products)
        cterm = delayed(m, "c_wait", Decoded(self.fc), tree.latency, mul.c_term)
        m.d.comb += [align.products.eq(prods), align.c_term.eq(cterm), align.e_max.eq(tree.e_max)]

        m.d.comb += csa.terms.eq(align.terms)

        # e_max and the special flags wait for the sum
        emax = delayed(m, "emax_wait", exp_shape(), align.latency + csa.latency, tree.e_max)
        spec = delayed(m, "specials_wait", Specials, tree.latency + align.latency + csa.latency, mul.specials)
        m.d.comb += [norm.total.eq(csa.total), norm.e_max.eq(emax), norm.specials.eq(spec), self.d.eq(norm.d)]
        if self.ieee754_zeros:          # the terms' zero signs, read beside the alignment, wait for the sum
            zero = [prods[j].sig == 0 for j in range(self.k)]
            neg = Cat(*(z & prods[j].sign for j, z in enumerate(zero)), cterm.zero & cterm.sign).all()
            pos = Cat(*(z & ~prods[j].sign for j, z in enumerate(zero)), cterm.zero & ~cterm.sign).all()
            flags = Signal(ZeroTerms)
            m.d.comb += [flags.all_neg.eq(neg), flags.all_pos.eq(pos)]
            m.d.comb += norm.zeros.eq(delayed(m, "zeros_wait", ZeroTerms, align.latency + csa.latency, flags))
        return m


class FDAChain(DatapathPipeline):
    """``K / L`` passes in series (CoFDA); one when ``K == L``.  :class:`hw.fdrda.FDRDAChain`
    chains FDRDA and GFDRDA passes the same way.

    Parameters
    ----------
    datapath : golden.Datapath
        ``params.pass_size`` is L (``None``: one pass of K).
    pipelining : Pipelining, int or str, optional
        Register stages of the long stages (``None``: level 0).

    Members
    -------
    a, b, c, scale_a, scale_b, d : see :class:`hw.pipeline.DatapathPipeline`
    """

    BASES = ("FDA",)
    SCALES = "optional"
    PASS = FDAPass

    @classmethod
    def check(cls, datapath, pipelining=None) -> None:
        super().check(datapath, pipelining)
        L = cls.pass_size(datapath)
        if datapath.k % L:
            raise ValueError(f"K={datapath.k} is not a multiple of the pass size L={L}")
        if datapath.scale_format is not None and L % datapath.block_size:
            raise ValueError(f"the pass size L={L} is not a multiple of the block size {datapath.block_size}")

    @staticmethod
    def pass_size(datapath) -> int:
        return datapath.params.pass_size or datapath.k

    def __init__(self, datapath, pipelining=None):
        self.fa, self.fb, self.fc, self.fd = datapath.formats
        self.pipelining = as_pipelining(pipelining)
        self.fs, self.k, self.block = datapath.scale_format, datapath.k, datapath.block_size
        self.L = L = self.pass_size(datapath)
        # pass j takes the previous result as its c (in the output format)
        self.passes = [self.PASS(datapath.with_(k=L, c_format=self.fc if j == 0 else self.fd), self.pipelining)
                       for j in range(self.k // L)]
        super().__init__(datapath)

    def named_stages(self):
        """Every pass's stages, in order (``pass{j}.`` in front when there are several)."""
        prefix = (lambda j: f"pass{j}.") if len(self.passes) > 1 else (lambda j: "")
        return [(prefix(j) + name, s) for j, ps in enumerate(self.passes) for name, s in ps.named_stages()]

    def elaborate(self, platform):
        m = Module()
        L, lat = self.L, self.passes[0].latency
        c = self.c
        for j, ps in enumerate(self.passes):
            m.submodules[f"pass{j}"] = ps
            # operands of pass j wait for the j passes before it
            for name, fmt in (("a", self.fa), ("b", self.fb)):
                self._slice_wait(m, f"{name}{j}_wait", getattr(self, name), getattr(ps, name), fmt.storage_bits,
                                 j, L, j * lat)
            if self.fs:
                for name in ("scale_a", "scale_b"):
                    self._slice_wait(m, f"{name}{j}_wait", getattr(self, name), getattr(ps, name),
                                     self.fs.storage_bits, j, L // self.block, j * lat)
            m.d.comb += ps.c.eq(c)
            c = ps.d
        m.d.comb += self.d.eq(c)
        return m

    @staticmethod
    def _slice_wait(m, name, src, dst, bits, j, n, cycles):
        """Elements ``j*n .. j*n+n-1`` of ``src`` into ``dst`` through a delay of ``cycles``."""
        wait = m.submodules[name] = Delay(data.ArrayLayout(bits, n), cycles)
        for i in range(n):
            m.d.comb += wait.i[i].eq(src[j * n + i])
        m.d.comb += dst.eq(wait.o)
