"""Group-dot-fused-sum (GDFS): block-scaled FP4 (UTCOMMA, OMMA), docs/spec.md §3.

Stages: e2m1 product array (exact integers) -> exact group-of-16 adders ->
scale significand multiply (group term = sigma * s_a * s_b, exponent = sum of
the scale exponents, -139 for an all-zero group or zero scales) ->
exponent-max tree -> alignment at F = 35 -> carry-save tree -> RZ to f32.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal, signed
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from golden.rules import ZeroSign

from .align import AlignShifters
from .compress import CompressorTree, sum_width
from .decode import Decoded, exp_shape
from .maxexp import MaxExponentTree
from .multiply import ProductStage, significand_product
from .normalise import NormaliseRound
from .pipeline import DatapathPipeline, Stage, any_of, delayed
from .pipelining import Timeline, as_pipelining
from .specials import Specials

__all__ = ["GDFS"]


class FP4Products(ProductStage):
    """Exact e2m1 products as signed integers in units of 2**-2 (|p| <= 36), with zero flags.

    Latency ``1 + pipelining.multiply`` (a register between the decoders and the multipliers).

    Members
    -------
    a, b : In(ArrayLayout(4, k))
    scale_a, scale_b : In(ArrayLayout(8, blocks))
    c : In(32)
    products : Out(ArrayLayout(signed(9), k))
    zero : Out(k)
    scales : Out(ArrayLayout(StructLayout(sign, exp, sig, zero, inf, nan) of the scale, 2 * blocks))
    c_term : Out(Decoded(f32))
    specials : Out(Specials)
    """

    def __init__(self, fa, fb, fc, fs, k, blocks, pipelining=None):
        self.fa, self.fb, self.fc, self.fs, self.k, self.blocks = fa, fb, fc, fs, k, blocks
        self.pipelining = as_pipelining(pipelining)
        super().__init__({
            "a": In(data.ArrayLayout(fa.storage_bits, k)), "b": In(data.ArrayLayout(fb.storage_bits, k)),
            "scale_a": In(data.ArrayLayout(fs.storage_bits, blocks)),
            "scale_b": In(data.ArrayLayout(fs.storage_bits, blocks)),
            "c": In(fc.storage_bits),
            "products": Out(data.ArrayLayout(signed(9), k)), "zero": Out(k),
            "scales": Out(data.ArrayLayout(Decoded(fs), 2 * blocks)),
            "c_term": Out(Decoded(fc)), "specials": Out(Specials),
        })

    def elaborate(self, platform):
        m = Module()
        tl = Timeline(m)
        base = self.fa.emin + self.fb.emin
        xs = [self._decode(m, tl, f"dec_a{j}", self.fa, self.a[j]) for j in range(self.k)]
        ys = [self._decode(m, tl, f"dec_b{j}", self.fb, self.b[j]) for j in range(self.k)]
        scales = [self._decode(m, tl, f"dec_s{n}_{i}", self.fs, src[i])
                  for i in range(self.blocks) for n, src in enumerate((self.scale_a, self.scale_b))]
        dc = self._decode(m, tl, "dec_c", self.fc, self.c)
        tl.cut(self.pipelining.multiply)
        for j in range(self.k):
            x, y = tl(xs[j]), tl(ys[j])
            mag = Signal(8, name=f"p{j}_mag")
            m.d.comb += mag.eq(significand_product(x.sig, y.sig) << (x.exp + y.exp - base).as_unsigned()[:3])
            m.d.sync += [self.products[j].eq(Mux(x.sign ^ y.sign, -mag, mag)),
                         self.zero[j].eq(x.zero | y.zero)]
        nan = []
        for i, s in enumerate(scales):
            nan.append(tl(s).nan)
            m.d.sync += self.scales[i].eq(tl(s))
        c = tl(dc)
        any_nan = any_of(nan) | c.nan
        m.d.sync += [self.c_term.eq(c),
                     self.specials.nan.eq(any_nan),
                     self.specials.pinf.eq(c.inf & ~c.sign & ~any_nan),
                     self.specials.ninf.eq(c.inf & c.sign & ~any_nan)]
        assert tl.cycle + 1 == self.latency, "the multipliers' registers must match their declared latency"
        return m


def GroupTerm(fs) -> data.StructLayout:
    """sigma * s_a * s_b: 12-bit |sigma| times two scale significands; fraction bits 2 + 2 * man_bits."""
    return data.StructLayout({"sign": 1, "exp": exp_shape(), "sig": 12 + 2 * (fs.man_bits + 1)})


def _tree_sum(terms):
    """The sum of ``terms`` as a balanced tree of adders (a ``sum()`` is a chain: GDFS level 3 at
    69 MHz had a 16-term chain on its critical path)."""
    while len(terms) > 1:
        terms = [terms[i] + terms[i + 1] for i in range(0, len(terms) - 1, 2)] + terms[len(terms) - len(terms) % 2:]
    return terms[0]


class ScaledGroups(Stage):
    """Exact group sums of 16 products, times the scale significands (docs/spec.md §4.1 and 5).

    Latency ``1 + pipelining.groups``: the group adders and the scale multipliers, with a register
    between them when ``groups`` is 1, and one more between the group sums and their magnitudes
    when it is 2.

    Members
    -------
    products : In(ArrayLayout(signed(9), k))
    zero : In(k)
    scales : In(ArrayLayout(Decoded(fs), 2 * blocks))
    terms : Out(ArrayLayout(GroupTerm(fs), k // 16))
    """

    def __init__(self, fs, k, block, e_zero, group=16, pipelining=None):
        self.fs, self.k, self.block, self.e_zero, self.group = fs, k, block, e_zero, group
        self.pipelining = as_pipelining(pipelining)
        self.blocks = k // block
        super().__init__({
            "products": In(data.ArrayLayout(signed(9), k)), "zero": In(k),
            "scales": In(data.ArrayLayout(Decoded(fs), 2 * self.blocks)),
            "terms": Out(data.ArrayLayout(GroupTerm(fs), k // group)),
        })

    @property
    def latency(self) -> int:
        return 1 + self.pipelining.groups

    def elaborate(self, platform):
        m = Module()
        g = self.group
        for n in range(self.k // g):
            tl = Timeline(m, f"g{n}_")
            sigma = tl.let(_tree_sum([self.products[n * g + i] for i in range(g)]), signed(sum_width(9, g)),
                           f"sigma{n}")
            all_zero = self.zero[n * g:(n + 1) * g].all()
            blk = (n * g) // self.block
            sa, sb = self.scales[2 * blk], self.scales[2 * blk + 1]
            zero_term = tl.let(all_zero | sa.zero | sb.zero, 1, "zero_term")
            sa_sig, sb_sig = tl.let(sa.sig, name="sa_sig"), tl.let(sb.sig, name="sb_sig")
            exp = tl.let(sa.exp + sb.exp, name="exp")
            tl.cut(self.pipelining.groups >= 2)                 # the group sum before its magnitude
            s = tl(sigma)
            mag = tl.let(Mux(s < 0, -s, s), 12, f"sigma{n}_mag")
            neg = tl.let(s < 0, 1, "neg")
            tl.cut(self.pipelining.groups >= 1)                 # the magnitude before the scale products
            t = self.terms[n]
            m.d.sync += [t.sign.eq(tl(neg)),
                         t.sig.eq(significand_product(significand_product(tl(mag), tl(sa_sig)), tl(sb_sig))),
                         t.exp.eq(Mux(tl(zero_term), self.e_zero, tl(exp)))]
            assert tl.cycle + 1 == self.latency, "the group stage's registers must match its declared latency"
        return m


class GDFS(DatapathPipeline):
    """The GDFS datapath of one lane.

    Parameters
    ----------
    datapath : golden.Datapath
        e2m1 operands, ue8m0 or ue4m3 scales, f32 c and d; ``params``: ``F`` (35), ``e_zero``
        (-139), ``group`` (16), ``out_rounding``, ``out_frac_bits``, ``overflow``, ``zero_sign``.
    pipelining : Pipelining, int or str, optional
        Register stages of the long stages (``None``: level 0).

    Members
    -------
    a, b, scale_a, scale_b, c, d : see :class:`hw.pipeline.DatapathPipeline`
    """

    BASES = ("GDFS",)
    SCALES = "required"

    @classmethod
    def check(cls, datapath, pipelining=None) -> None:
        super().check(datapath, pipelining)
        p, k = datapath.params, datapath.k
        g = p.group or 16
        if p.pass_size is not None and p.pass_size < k:
            raise NotImplementedError(f"no RTL for a GDFS chain (pass size {p.pass_size} < K={k})")
        if p.zero_sign == ZeroSign.IEEE754:
            raise NotImplementedError("no RTL for zero_sign='ieee754' in GDFS (FDA has it); golden has it")
        if k % g or datapath.block_size % g:
            raise ValueError(f"the GDFS group {g} must divide K={k} and the block size {datapath.block_size}")

    def __init__(self, datapath, pipelining=None):
        fa, fb, fc, fd = datapath.formats
        self.pipelining = pl = as_pipelining(pipelining)
        fs, params = datapath.scale_format, datapath.params
        self.fa, self.fb, self.fc, self.fd, self.fs = fa, fb, fc, fd, fs
        k, block, g = datapath.k, datapath.block_size, params.group or 16
        self.k, self.block, self.params = k, block, params
        self.mul = FP4Products(fa, fb, fc, fs, k, k // block, pl)
        self.groups = ScaledGroups(fs, k, block, params.e_zero, g, pl)
        self.tree = MaxExponentTree(k // g + 1, pl.max_levels)
        self.align = AlignShifters(GroupTerm(fs), 2 + 2 * fs.man_bits, k // g, params.F, fc, pl)
        self.csa = CompressorTree(self.align.width, k // g + 1, pl)
        self.norm = NormaliseRound(self.csa.width, params.F, fd, params.out_frac_bits, params.out_rounding,
                                   params.overflow, positive_zero=params.zero_sign == ZeroSign.POSITIVE, pipelining=pl)
        self.stages = [self.mul, self.groups, self.tree, self.align, self.csa, self.norm]
        super().__init__(datapath)

    def elaborate(self, platform):
        m = Module()
        mul, groups, tree, align, csa, norm = self.stages
        for name, s in zip(("products", "groups", "max_exponent", "align", "compress", "normalise"), self.stages):
            m.submodules[name] = s
        m.d.comb += [mul.a.eq(self.a), mul.b.eq(self.b), mul.c.eq(self.c),
                     mul.scale_a.eq(self.scale_a), mul.scale_b.eq(self.scale_b)]
        m.d.comb += [groups.products.eq(mul.products), groups.zero.eq(mul.zero), groups.scales.eq(mul.scales)]
        n = self.k // (self.params.group or 16)

        # c waits for the group stage, then c and the group terms wait for the max tree
        c1 = delayed(m, "c_wait1", Decoded(self.fc), groups.latency, mul.c_term)
        for j in range(n):
            m.d.comb += tree.exps[j].eq(groups.terms[j].exp)
        m.d.comb += tree.exps[n].eq(Mux(c1.zero, self.params.e_zero, c1.exp))
        terms = delayed(m, "terms_wait", data.ArrayLayout(GroupTerm(self.fs), n), tree.latency, groups.terms)
        c2 = delayed(m, "c_wait2", Decoded(self.fc), tree.latency, c1)
        m.d.comb += [align.products.eq(terms), align.c_term.eq(c2), align.e_max.eq(tree.e_max)]
        # a zero c aligns to nothing whatever its exponent; the tree saw e_zero for it
        m.d.comb += csa.terms.eq(align.terms)
        emax = delayed(m, "emax_wait", exp_shape(), align.latency + csa.latency, tree.e_max)
        spec = delayed(m, "specials_wait", Specials,
                       groups.latency + tree.latency + align.latency + csa.latency, mul.specials)
        m.d.comb += [norm.total.eq(csa.total), norm.e_max.eq(emax), norm.specials.eq(spec), self.d.eq(norm.d)]
        return m
