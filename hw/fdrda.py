"""AMD CDNA3 round-down dot-adds: FDRDA (tf32/f16/bf16) and GFDRDA (fp8/bf8), docs/spec.md §3.

Stages of one pass: product array with overflow to infinity -> exponent-max
tree over the non-zero products (two trees, even and odd, for GFDRDA) ->
alignment at F = 24 (RZ) -> carry-save tree [-> GFDRDA round-down merge of
the two sums] -> round-down merge with c (dot floored at 32 fraction bits
below 2**e_max, c at 24, c dropped below e_max - 25 for GFDRDA) -> floor to
31 fraction bits after normalising (exponent >= -126) -> RNE to f32.
``params.specials`` picks CDNA3's disputed special-value rules (golden.Params.specials):
the paper's step order, or the later model's (one IEEE sum of the infinities; a NaN or
infinite c dropped by GFDRDA's small-c test).
Arithmetic right shifts of two's complement values are the floors (RD).
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from golden import rules
from golden.algorithms import NONFINITE_C_EXP, SPECIALS, Params

from .align import AlignShifters
from .bitscan import leading_one
from .compress import CompressorTree
from .decode import Decoded, exp_shape
from .fda import FDAChain
from .maxexp import MaxExponentTree
from .multiply import Product, ProductStage, significand_product
from .normalise import NormaliseRound
from .pipeline import DatapathPipeline, Pipeline, Stage, any_of, delayed
from .pipelining import Timeline, as_pipelining
from .specials import Specials, product_specials

# merge=3: the floor's fine shift takes the amount's low bits, its coarse shift the rest
FINE_SHIFT_BITS = 3

__all__ = ["FDRDAPass", "FDRDAChain", "EXCLUDED", "drops_nonfinite_c"]

EXCLUDED = -(1 << (exp_shape().width - 1))      # exponent of a zero product: left out of every maximum
WIDE = signed(16)


class AMDProducts(ProductStage):
    """Exact products; ``|p| >= 2**128`` overflows to infinity; special values by ``specials``.

    Latency ``1 + pipelining.multiply + pipelining.overflow`` (a register between the decoders and
    the multipliers; one between the multipliers and the overflow test, which reads the product's
    top bit).  ``specials="paper"``: step 1 decides on the inputs' NaN and infinities (c included) before
    step 3 looks at overflowed products (paper IV-F).  ``"later_model"``: input and overflowed
    infinities meet as in one IEEE sum (golden.Params.specials).

    Parameters
    ----------
    fa, fb, fc : Format
    k : int
    product_overflow : bool
    pipelining : Pipelining, optional
    specials : {"paper", "later_model"}
    dot_specials : bool
        Also output the products' own special outcome (c left out), for a merge that can drop
        a NaN or infinite c (the later model's GFDRDA).

    Members
    -------
    a, b : In(ArrayLayout(storage bits, k))
    c : In(fc.storage_bits)
    products : Out(ArrayLayout(Product, k))      (zeros carry the EXCLUDED exponent)
    c_term : Out(Decoded(fc))
    specials : Out(Specials)
    dot_specials : Out(Specials)                  (with ``dot_specials``)
    """

    def __init__(self, fa, fb, fc, k, product_overflow=True, pipelining=None, specials=rules.Specials.PAPER,
                 dot_specials=False):
        if specials not in SPECIALS:
            raise ValueError(f"specials must be one of {', '.join(SPECIALS)}, got {specials!r}")
        self.fa, self.fb, self.fc, self.k, self.product_overflow = fa, fb, fc, k, product_overflow
        self.specials_rule, self.with_dot_specials = specials, dot_specials
        self.pipelining = as_pipelining(pipelining)
        super().__init__({
            "a": In(data.ArrayLayout(fa.storage_bits, k)), "b": In(data.ArrayLayout(fb.storage_bits, k)),
            "c": In(fc.storage_bits), "products": Out(data.ArrayLayout(Product(fa, fb), k)),
            "c_term": Out(Decoded(fc)), "specials": Out(Specials),
            **({"dot_specials": Out(Specials)} if dot_specials else {}),
        })

    @property
    def latency(self) -> int:
        return 1 + self.pipelining.multiply + self.pipelining.overflow

    def elaborate(self, platform):
        m = Module()
        tl = Timeline(m)
        frac = self.fa.man_bits + self.fb.man_bits
        xs = [self._decode(m, tl, f"dec_a{j}", self.fa, self.a[j]) for j in range(self.k)]
        ys = [self._decode(m, tl, f"dec_b{j}", self.fb, self.b[j]) for j in range(self.k)]
        dc = self._decode(m, tl, "dec_c", self.fc, self.c)
        tl.cut(self.pipelining.multiply)
        made = []
        for j in range(self.k):
            x, y = tl(xs[j]), tl(ys[j])
            bad, inf = product_specials(x, y)
            made.append([tl.let(significand_product(x.sig, y.sig), frac + 2, f"p{j}_sig"),
                         tl.let(x.exp + y.exp, exp_shape(), f"p{j}_exp"), tl.let(x.zero | y.zero, 1, f"p{j}_zero"),
                         tl.let(x.sign ^ y.sign, 1, f"p{j}_sign"),
                         tl.let(x.nan | y.nan | x.inf | y.inf, 1, f"p{j}_special"),
                         tl.let(bad, 1, f"p{j}_bad"), tl.let(inf, 1, f"p{j}_inf")])
        # overflow=1: the products are registered before the overflow test reads their top bit (the
        # multiplier, an adder and the test in one cycle were the CDNA3 CoFDRDA top's critical path)
        tl.cut(self.pipelining.overflow)
        nan, pinf, ninf, pover, nover = [], [], [], [], []
        for j in range(self.k):
            sig, exp, zero, sign, special, bad, inf = (tl(v) for v in made[j])
            over = 0
            if self.product_overflow:
                # |s| >= 2 counts one more in the exponent; e >= 128 is infinity (docs/spec.md §4.4)
                over = ~zero & ~special & ((exp + (sig >> (frac + 1) != 0)) >= 128)
            p = self.products[j]
            m.d.sync += [p.sign.eq(sign), p.sig.eq(Mux(zero, 0, sig)),
                         p.exp.eq(Mux(zero, EXCLUDED, exp))]
            nan.append(bad)
            pinf.append(inf & ~sign)
            ninf.append(inf & sign)
            pover.append(over & ~sign)
            nover.append(over & sign)
        c = tl(dc)
        p3, n3 = any_of(pover), any_of(nover)
        if self.with_dot_specials:                      # the products alone, one IEEE sum
            self._one_sum(m, self.dot_specials, any_of(nan), any_of(pinf) | p3, any_of(ninf) | n3)
        nan.append(c.nan)
        pinf.append(c.inf & ~c.sign)
        ninf.append(c.inf & c.sign)
        p1, n1 = any_of(pinf), any_of(ninf)
        m.d.sync += self.c_term.eq(c)
        sp = self.specials
        if self.specials_rule == rules.Specials.LATER_MODEL:
            # inputs' and overflowed infinities together: +inf meeting -inf is NaN whichever overflowed
            self._one_sum(m, sp, any_of(nan), p1 | p3, n1 | n3)
        else:
            nan1 = any_of(nan) | (p1 & n1)              # step 1: inputs alone
            step1 = nan1 | p1 | n1
            m.d.sync += [sp.nan.eq(nan1 | (~step1 & p3 & n3)),
                         sp.pinf.eq(Mux(step1, p1 & ~nan1, p3 & ~n3)),
                         sp.ninf.eq(Mux(step1, n1 & ~nan1, n3 & ~p3))]
        assert tl.cycle + 1 == self.latency, "the multipliers' registers must match their declared latency"
        return m

    @staticmethod
    def _one_sum(m, sp, nan, pinf, ninf):
        """Register the special outcome of one IEEE sum: NaN, or +-inf meeting -+inf, is NaN."""
        bad = nan | (pinf & ninf)
        m.d.sync += [sp.nan.eq(bad), sp.pinf.eq(pinf & ~bad), sp.ninf.eq(ninf & ~bad)]


def DotSum(width: int) -> data.StructLayout:
    """A products-only sum ``s * 2**(e - F)``; ``has`` is false when every product was zero."""
    return data.StructLayout({"s": signed(width), "e": exp_shape(), "has": 1})


class SetDot(Pipeline):
    """Align a set of products to its own maximum (F, RZ) and sum them: max tree + shifters + adder tree.

    Latency: the tree's, the shifters' and the compressor tree's.

    Members
    -------
    products : In(ArrayLayout(Product, n))
    dot : Out(DotSum(width))
    """

    def __init__(self, fa, fb, n, F, pipelining=None):
        self.fa, self.fb, self.n, self.F = fa, fb, n, F
        pl = as_pipelining(pipelining)
        self.tree = MaxExponentTree(n, pl.max_levels)
        self.align = AlignShifters(Product(fa, fb), fa.man_bits + fb.man_bits, n, F, pipelining=pl)
        self.csa = CompressorTree(self.align.width, n, pl)
        self.stages = [self.tree, self.align, self.csa]
        self.width = self.csa.width
        super().__init__({"products": In(data.ArrayLayout(Product(fa, fb), n)), "dot": Out(DotSum(self.width))})

    def elaborate(self, platform):
        m = Module()
        tree, align, csa = m.submodules.max_exponent, m.submodules.align, m.submodules.compress = \
            self.tree, self.align, self.csa
        for j in range(self.n):
            m.d.comb += tree.exps[j].eq(self.products[j].exp)
        products = delayed(m, "products_wait", data.ArrayLayout(Product(self.fa, self.fb), self.n), tree.latency,
                           self.products)
        m.d.comb += [align.products.eq(products), align.e_max.eq(tree.e_max), csa.terms.eq(align.terms)]
        e = delayed(m, "e_wait", exp_shape(), align.latency + csa.latency, tree.e_max)
        m.d.comb += [self.dot.s.eq(csa.total), self.dot.e.eq(e), self.dot.has.eq(e != EXCLUDED)]
        return m


class EvenOddMerge(Stage):
    """GFDRDA: the even and odd sums aligned to their maximum, rounded down at F bits, added.

    Latency ``1 + min(pipelining.merge, 2)``: ``merge=1`` a register between the shifts and the add,
    ``merge=2`` (and 3) also one between the shift distances and the shifts.

    Members
    -------
    even, odd : In(DotSum(width))
    dot : Out(DotSum(width + 1))
    """

    def __init__(self, width, pipelining=None):
        self.width = width
        self.pipelining = as_pipelining(pipelining)
        super().__init__({"even": In(DotSum(width)), "odd": In(DotSum(width)), "dot": Out(DotSum(width + 1))})

    @property
    def latency(self) -> int:
        return 1 + min(self.pipelining.merge, 2)

    def elaborate(self, platform):
        m = Module()
        tl = Timeline(m)
        ev, od = self.even, self.odd
        e = tl.let(Mux(ev.e > od.e, ev.e, od.e), exp_shape(), "e")
        dist_e = tl.let((e - ev.e).as_unsigned(), name="dist_e")
        dist_o = tl.let((e - od.e).as_unsigned(), name="dist_o")
        has = tl.let(ev.has | od.has, 1, "has")
        tl.cut(self.pipelining.merge >= 2)
        # an empty set's sum is 0, and 0 floors to 0 at any shift
        se = tl.let(tl(ev.s) >> tl(dist_e), signed(self.width), "se")
        so = tl.let(tl(od.s) >> tl(dist_o), signed(self.width), "so")
        tl.cut(self.pipelining.merge >= 1)
        m.d.sync += [self.dot.s.eq(tl(se) + tl(so)), self.dot.e.eq(tl(e)), self.dot.has.eq(tl(has))]
        assert tl.cycle + 1 == self.latency, "the merge's registers must match its declared latency"
        return m


def _grouped(params: Params) -> bool:
    """Whether the algorithm sums even and odd sets and merges them (its descriptor reads merge_floor_bits)."""
    return "merge_floor_bits" in params.fields_read


def drops_nonfinite_c(params: Params) -> bool:
    """Whether the merge can drop a NaN or infinite c (the later model's GFDRDA small-c test)."""
    return params.specials == rules.Specials.LATER_MODEL and params.c_drop is not None


class RoundDownMerge(Stage):
    """Align the dot sum and c to ``e_max = max(e_dot, e_c)`` with round-down floors, and add (docs/spec.md §4.4).

    Latency ``1 + min(pipelining.merge, 2)``: ``merge=1`` a register between the shifts and the add,
    ``merge=2`` (and 3) also one between the shift distances and the shifts.  The dot part
    keeps ``dot_floor_bits`` (32) fraction bits below
    ``2**e_max``, c keeps ``c_floor_bits`` (24); with ``c_drop`` c becomes 0
    when ``e_c < e_max - c_drop`` (GFDRDA).

    With ``params.specials == "later_model"`` and ``c_drop``, a NaN or infinite c counts
    exponent -1 (``golden.algorithms.NONFINITE_C_EXP``, the later model's) and is dropped like a
    small c; ``c_dropped`` says
    so, for the special-value override downstream.

    Members
    -------
    dot : In(DotSum(width))
    c_term : In(Decoded(fc))
    total : Out(signed(...))     (dot_floor_bits fraction bits below 2**e_max)
    e_max : Out(exp_shape())
    c_dropped : Out(1)           (only when a NaN or infinite c can be dropped)
    """

    def __init__(self, width, dot_frac, fc, params: Params, pipelining=None):
        self.width, self.dot_frac, self.fc, self.p = width, dot_frac, fc, params
        self.pipelining = as_pipelining(pipelining)
        p = params
        self.total_bits = max(width + p.dot_floor_bits - dot_frac, 2 + p.dot_floor_bits + 1) + 2
        self.drops_nonfinite_c = drops_nonfinite_c(params)
        super().__init__({"dot": In(DotSum(width)), "c_term": In(Decoded(fc)),
                          "total": Out(signed(self.total_bits)), "e_max": Out(exp_shape()),
                          **({"c_dropped": Out(1)} if self.drops_nonfinite_c else {})})

    @property
    def latency(self) -> int:
        return 1 + min(self.pipelining.merge, 2)

    def elaborate(self, platform):
        m = Module()
        tl = Timeline(m)
        p, W = self.p, self.total_bits
        dot, c = self.dot, self.c_term
        e_c = c.exp                                    # a zero c keeps its minimum exponent (-126)
        if self.drops_nonfinite_c:
            nonfinite = tl.let(c.nan | c.inf, 1, "c_nonfinite")
            e_c = tl.let(Mux(nonfinite, NONFINITE_C_EXP, c.exp), exp_shape(), "e_c")
        e_max = tl.let(Mux(dot.has & (dot.e > e_c), dot.e, e_c), exp_shape(), "e_max")
        dist_d = tl.let((e_max - dot.e).as_unsigned(), name="dist_d")
        dist_c = tl.let((e_max - e_c).as_unsigned(), name="dist_c")
        keep_c = tl.let(1 if p.c_drop is None else ~(e_c < e_max - p.c_drop), 1, "keep_c")
        sc = tl.let(Mux(c.sign, -c.sig, c.sig), signed(self.fc.man_bits + 3), "sc")
        tl.cut(self.pipelining.merge >= 2)
        D = tl.let(Mux(tl(dot.has), (tl(dot.s) << (p.dot_floor_bits - self.dot_frac)) >> tl(dist_d), 0),
                   signed(W), "D")
        C = tl.let(Mux(tl(keep_c), (tl(sc) << (p.c_floor_bits - self.fc.man_bits)) >> tl(dist_c), 0), signed(W), "C")
        tl.cut(self.pipelining.merge >= 1)
        m.d.sync += [self.total.eq(tl(D) + (tl(C) << (p.dot_floor_bits - p.c_floor_bits))), self.e_max.eq(tl(e_max))]
        if self.drops_nonfinite_c:
            m.d.sync += self.c_dropped.eq(~tl(keep_c) & tl(nonfinite))
        assert tl.cycle + 1 == self.latency, "the merge's registers must match its declared latency"
        return m


class FloorNormalise(Stage):
    """Normalise (exponent floor -126) and floor to ``final_floor_bits`` fraction bits.

    Latency ``1 + min(merge, 1) + (merge == 3)`` (a register between the shift amount and the shift;
    ``merge=3`` also splits the shift in two, by the amount's high bits and then its low three), plus the
    normaliser cut points ``"magnitude"`` (after the magnitude) and ``"lod"`` (after the
    leading-one detector) where ``pipelining.normalise`` has them.
    Not the shared :class:`hw.round.Rounder`: the result is no format's word but a
    two's complement significand and exponent for the RNE that follows (the floor is the
    arithmetic right shift of the signed sum, RD on the value, where the Rounder works on sign
    and magnitude); it shares the leading-one detector (:mod:`hw.bitscan`).

    Members
    -------
    total : In(signed(width))     (``dot_floor_bits`` fraction bits below ``2**e_max``)
    e_max : In(exp_shape())
    sig : Out(signed(final_floor_bits + 2))
    e_n : Out(exp_shape())
    """

    def __init__(self, width, params: Params, pipelining=None):
        self.width, self.p = width, params
        self.pipelining = as_pipelining(pipelining)
        super().__init__({"total": In(signed(width)), "e_max": In(exp_shape()),
                          "sig": Out(signed(params.final_floor_bits + 3)), "e_n": Out(exp_shape())})

    @property
    def latency(self) -> int:
        cuts = self.pipelining.normalise_cuts
        merge = self.pipelining.merge
        return 1 + min(merge, 1) + (merge >= 3) + ("magnitude" in cuts) + ("lod" in cuts)

    def elaborate(self, platform):
        m = Module()
        tl = Timeline(m)
        p, W, ff = self.p, self.width, self.p.final_floor_bits
        cuts = self.pipelining.normalise_cuts
        mag = tl.let(Mux(self.total < 0, -self.total, self.total), W, "mag")
        lsb = tl.let(self.e_max - p.dot_floor_bits, WIDE, "lsb")
        # the shift is e_n - lsb = max(lsb + lod, -126) - lsb = max(lod, -126 - lsb): the floor's
        # distance (-126 - lsb, at least 0) is ready beside the leading-one detector
        below = tl.let(-126 - lsb, WIDE, "below")
        floor_d = tl.let(Mux(below < 0, 0, below), unsigned(WIDE.width), "floor_d")
        tl.cut("magnitude" in cuts)
        lod = tl.let(leading_one(tl(mag), "halves"), range(max(W, 2)), "lod")
        tl.cut("lod" in cuts)
        amount = tl.let(Mux(tl(lod) > tl(floor_d), tl(lod), tl(floor_d)), unsigned(WIDE.width), "amount")
        tl.cut(self.pipelining.merge >= 1)
        shifted = tl.let(tl(self.total) << ff, signed(W + ff), "shifted")
        if self.pipelining.merge >= 3:
            # the arithmetic shift in two: by the amount's high bits, a register, then its low bits (the
            # one shift was the CDNA3 CoGFDRDA board top's critical path at 75 MHz, 73.50 MHz)
            coarse = tl.let(shifted >> Cat(Const(0, FINE_SHIFT_BITS), tl(amount)[FINE_SHIFT_BITS:]),
                            signed(W + ff), "coarse")
            tl.cut()
            shifted = tl(coarse) >> tl(amount)[:FINE_SHIFT_BITS]
        else:
            shifted = shifted >> tl(amount)
        m.d.sync += [self.sig.eq(shifted), self.e_n.eq(tl(lsb) + tl(amount))]
        assert tl.cycle + 1 == self.latency, "the floor's registers must match its declared latency"
        return m


class FDRDAPass(DatapathPipeline):
    """One FDRDA or GFDRDA pass of ``k`` products (``params.base`` decides).

    Parameters
    ----------
    datapath : golden.Datapath
        The pass: formats, ``k``, ``params``.
    pipelining : Pipelining, int or str, optional
        Register stages of the long stages (``None``: level 0).

    Members
    -------
    a, b, c, d : see :class:`hw.pipeline.DatapathPipeline`
    """

    BASES = ("FDRDA", "GFDRDA")

    @classmethod
    def check(cls, datapath, pipelining=None) -> None:
        super().check(datapath, pipelining)
        p = datapath.params
        if p.floor_rounding != rules.FloorRounding.RD:
            raise NotImplementedError(f"the {p.base} RTL floors (floor_rounding='RD'); "
                                      f"floor_rounding={p.floor_rounding!r} exists in golden only")
        if p.zero_sign == rules.ZeroSign.IEEE754:
            raise NotImplementedError(f"no RTL for zero_sign='ieee754' in {p.base} (FDA has it); golden has it")
        # what the RTL builds of golden's round-down merge (golden.params.check_params_for has checked
        # the ranges golden computes exactly): the even/odd merge keeps F bits, c and the dot are
        # shifted left into place, the result is rounded at the full fraction
        if p.out_frac_bits is not None:
            raise NotImplementedError(f"no RTL for out_frac_bits in {p.base} (it rounds to the full "
                                      f"{datapath.d_format.name} fraction); golden has it")
        if _grouped(p) and p.merge_floor_bits != p.F:
            raise NotImplementedError(f"no RTL for merge_floor_bits={p.merge_floor_bits} other than F={p.F} "
                                      "(the merge keeps the sets' F bits); golden has it")
        fc = datapath.c_format
        if p.c_floor_bits < fc.man_bits or p.dot_floor_bits < p.F:
            raise NotImplementedError(f"no RTL for c_floor_bits={p.c_floor_bits} below the {fc.name} c's "
                                      f"{fc.man_bits} fraction bits, or dot_floor_bits={p.dot_floor_bits} below "
                                      f"F={p.F} (the RTL shifts them left into place); golden has it")

    def __init__(self, datapath, pipelining=None):
        self.fa, self.fb, self.fc, self.fd = datapath.formats
        k, params = datapath.k, datapath.params
        self.k, self.params = k, params
        self.pipelining = pl = as_pipelining(pipelining)
        self.grouped = _grouped(params)
        self.mul = AMDProducts(self.fa, self.fb, self.fc, k, params.product_overflow, pl, params.specials,
                               dot_specials=drops_nonfinite_c(params))
        if self.grouped:
            self.sets = [SetDot(self.fa, self.fb, len(range(i, k, 2)), params.F, pl) for i in (0, 1)]
            self.merge2 = EvenOddMerge(max(s.width for s in self.sets), pl)
            dot_width, dot_frac = self.merge2.width + 1, params.merge_floor_bits
            dot_stages = [self.sets[0], self.merge2]          # the odd set runs beside the even one
        else:
            self.sets = [SetDot(self.fa, self.fb, k, params.F, pl)]
            dot_width, dot_frac = self.sets[0].width, params.F
            dot_stages = [self.sets[0]]
        self.merge = RoundDownMerge(dot_width, dot_frac, self.fc, params, pl)
        self.floor = FloorNormalise(self.merge.total_bits, params, pl)
        self.norm = NormaliseRound(params.final_floor_bits + 3, params.final_floor_bits, self.fd, None,
                                   rules.Rounding.RNE, params.overflow,
                                   positive_zero=params.zero_sign == rules.ZeroSign.POSITIVE, pipelining=pl)
        self.stages = [self.mul, *dot_stages, self.merge, self.floor, self.norm]
        super().__init__(datapath)

    def elaborate(self, platform):
        m = Module()
        mul, merge, floor, norm = self.mul, self.merge, self.floor, self.norm
        m.submodules.products, m.submodules.merge_c = mul, merge
        m.submodules.floor, m.submodules.normalise = floor, norm
        m.d.comb += [mul.a.eq(self.a), mul.b.eq(self.b), mul.c.eq(self.c)]
        dot_latency = self.sets[0].latency
        if self.grouped:
            m.submodules.even, m.submodules.odd, m.submodules.merge_even_odd = *self.sets, self.merge2
            for i, s in enumerate(self.sets):
                for n, j in enumerate(range(i, self.k, 2)):
                    m.d.comb += s.products[n].eq(mul.products[j])
            for name, s in (("even", self.sets[0]), ("odd", self.sets[1])):
                getattr_dot = getattr(self.merge2, name)
                m.d.comb += [getattr_dot.s.eq(s.dot.s), getattr_dot.e.eq(s.dot.e), getattr_dot.has.eq(s.dot.has)]
            dot = self.merge2.dot
            dot_latency += self.merge2.latency
        else:
            m.submodules.dot = self.sets[0]
            m.d.comb += self.sets[0].products.eq(mul.products)
            dot = self.sets[0].dot

        c = delayed(m, "c_wait", Decoded(self.fc), dot_latency, mul.c_term)
        m.d.comb += [merge.dot.eq(dot), merge.c_term.eq(c)]
        m.d.comb += [floor.total.eq(merge.total), floor.e_max.eq(merge.e_max)]
        to_merge = dot_latency + merge.latency
        spec = delayed(m, "specials_wait", Specials, to_merge + (0 if merge.drops_nonfinite_c else floor.latency),
                       mul.specials)
        if merge.drops_nonfinite_c:          # a dropped NaN/infinite c: the products' own outcome decides
            dot_spec = delayed(m, "dot_specials_wait", Specials, to_merge, mul.dot_specials)
            chosen = Signal(Specials)
            m.d.comb += chosen.eq(Mux(merge.c_dropped, dot_spec.as_value(), spec.as_value()))
            spec = delayed(m, "specials_floor_wait", Specials, floor.latency, chosen)
        m.d.comb += [norm.total.eq(floor.sig), norm.e_max.eq(floor.e_n), norm.specials.eq(spec),
                     self.d.eq(norm.d)]
        return m


class FDRDAChain(FDAChain):
    """FDRDA and GFDRDA, one pass or a chain of them (CoFDRDA, CoGFDRDA): :class:`FDAChain` of
    :class:`FDRDAPass`.  No block scales."""

    BASES = ("FDRDA", "GFDRDA")
    SCALES = "never"
    PASS = FDRDAPass

    @classmethod
    def check(cls, datapath, pipelining=None) -> None:
        super().check(datapath, pipelining)
        FDRDAPass.check(datapath, pipelining)
