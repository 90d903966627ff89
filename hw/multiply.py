"""Multiplier array: exact significand products and exponent sums (FDA step 2), plus special values.

Latency ``1 + pipelining.multiply``: decode and multiply are combinational and the products are
registered; ``multiply=1`` also registers the decoded operands, so each multiplier has registers
on both sides (an ECP5 DSP's input and output registers).
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from golden.formats import get_format

from .decode import Decoded, OperandDecode, exp_shape
from .pipeline import Stage, any_of
from .pipelining import Timeline, as_pipelining
from .specials import Specials, product_specials

__all__ = ["Product", "Specials", "ProductStage", "MultiplierArray", "significand_product", "LUT_PRODUCT_BITS"]

LUT_PRODUCT_BITS = 4        # a product with a factor this narrow is logic, not a DSP block


def significand_product(x, y):
    """``x * y``, exact, for significands.

    A product with a narrow factor (at most :data:`LUT_PRODUCT_BITS` bits: fp4, fp6 and fp8
    significands, one-bit scale significands) is written as shifts and adds, not ``*``: Yosys's
    ``synth_ecp5`` puts every ``*`` of two or more bits in a whole MULT18X18D, and the GDFS unit's
    64 e2m1 products took 64 of them, the routes to the DSP sites being most of its critical path
    at pipelining level 3 (55.6 MHz).  A 4x4 product is a handful of LUT4.
    """
    if min(len(x), len(y)) > LUT_PRODUCT_BITS:
        return x * y
    if len(y) > len(x):
        x, y = y, x
    return sum(Mux(y[i], x << i, 0) for i in range(len(y)))


def Product(fa, fb) -> data.StructLayout:
    """One exact product: ``(-1)**sign * sig * 2**(exp - frac)``, ``frac = man_a + man_b``; zeros carry e_zero."""
    return data.StructLayout({"sign": 1, "exp": exp_shape(), "sig": fa.man_bits + fb.man_bits + 2})


class ProductStage(Stage):
    """Base of the stages that decode operands and multiply them (:class:`MultiplierArray`,
    :class:`hw.fdrda.AMDProducts`, :class:`hw.gdfs.FP4Products`): latency ``1 + pipelining.multiply``,
    a register between the decoders and the multipliers when ``multiply`` is 1.  Subclasses set
    ``self.pipelining``."""

    @property
    def latency(self) -> int:
        return 1 + self.pipelining.multiply

    def _decode(self, m, tl, name, fmt, bits):
        """``bits`` decoded, as of the multipliers' cycle."""
        dec = m.submodules[name] = OperandDecode(fmt)
        m.d.comb += dec.bits.eq(bits)
        return tl.let(dec.out, Decoded(fmt), name)


class MultiplierArray(ProductStage):
    """Decode ``K`` operand pairs and c; form the exact products.

    A zero product takes the exponent ``e_zero`` (docs/spec.md §4.1), and so does a
    zero c.  With block scales the two scale exponents join each product's
    exponent and a NaN scale makes the result NaN.  The special-value rules of
    FDA step 1 are resolved here into three row flags.

    Parameters
    ----------
    fa, fb, fc : Format
        Formats of a, b and c.
    k : int
        Products per pass.
    e_zero : int
        Exponent of zero terms.
    fs : Format, optional
        Scale format; ``block`` products per scale.
    pipelining : Pipelining, optional
        ``multiply``: a register between the decoders and the multipliers.

    Members
    -------
    a, b : In(ArrayLayout(storage bits, k))
    c : In(fc.storage_bits)
    scale_a, scale_b : In(ArrayLayout(8, k // block)), when scaled
    products : Out(ArrayLayout(Product, k))
    c_term : Out(Decoded(fc))
    specials : Out(Specials)
    """

    def __init__(self, fa, fb, fc, k, e_zero, fs=None, block=None, pipelining=None):
        self.pipelining = as_pipelining(pipelining)
        self.fa, self.fb, self.fc = (get_format(f) for f in (fa, fb, fc))
        self.fs = get_format(fs) if fs else None
        self.k, self.e_zero, self.block = k, e_zero, block
        members = {
            "a": In(data.ArrayLayout(self.fa.storage_bits, k)),
            "b": In(data.ArrayLayout(self.fb.storage_bits, k)),
            "c": In(self.fc.storage_bits),
            "products": Out(data.ArrayLayout(Product(self.fa, self.fb), k)),
            "c_term": Out(Decoded(self.fc)),
            "specials": Out(Specials),
        }
        if self.fs:
            nblk = k // block
            members["scale_a"] = In(data.ArrayLayout(self.fs.storage_bits, nblk))
            members["scale_b"] = In(data.ArrayLayout(self.fs.storage_bits, nblk))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        tl = Timeline(m)
        xs = [self._decode(m, tl, f"dec_a{j}", self.fa, self.a[j]) for j in range(self.k)]
        ys = [self._decode(m, tl, f"dec_b{j}", self.fb, self.b[j]) for j in range(self.k)]
        if self.fs:
            scales = [(self._decode(m, tl, f"dec_sa{j}", self.fs, self.scale_a[j // self.block]),
                       self._decode(m, tl, f"dec_sb{j}", self.fs, self.scale_b[j // self.block]))
                      for j in range(self.k)]
        dc = self._decode(m, tl, "dec_c", self.fc, self.c)
        # each product's and c's special flags (NaN, +inf, -inf) beside the decoders, so that after
        # the multiply cut only their OR is left
        flags = []
        for j in range(self.k):
            bad, inf = product_specials(xs[j], ys[j])
            sign = xs[j].sign ^ ys[j].sign
            scale_nan = 0
            if self.fs and j % self.block == 0:
                scale_nan = scales[j][0].nan | scales[j][1].nan
            flags.append(tl.let(Cat(bad | scale_nan, inf & ~sign, inf & sign), 3, f"flags{j}"))
        flags.append(tl.let(Cat(dc.nan, dc.inf & ~dc.sign, dc.inf & dc.sign), 3, "flags_c"))
        tl.cut(self.pipelining.multiply)
        for j in range(self.k):
            x, y = tl(xs[j]), tl(ys[j])
            exp = x.exp + y.exp
            if self.fs:
                sa, sb = (tl(s) for s in scales[j])
                exp = exp + sa.exp + sb.exp
            zero = x.zero | y.zero
            p = self.products[j]
            m.d.sync += [
                p.sign.eq(x.sign ^ y.sign),
                p.sig.eq(Mux(zero, 0, significand_product(x.sig, y.sig))),
                p.exp.eq(Mux(zero, self.e_zero, exp)),
            ]
        c = tl(dc)
        flags = [tl(f) for f in flags]
        nan, pinf, ninf = ([f[i] for f in flags] for i in range(3))
        any_p, any_n = any_of(pinf), any_of(ninf)
        any_nan = any_of(nan) | (any_p & any_n)
        m.d.sync += [
            self.c_term.eq(c),
            self.c_term.exp.eq(Mux(c.zero, self.e_zero, c.exp)),
            self.specials.nan.eq(any_nan),
            self.specials.pinf.eq(any_p & ~any_nan),
            self.specials.ninf.eq(any_n & ~any_nan),
        ]
        assert tl.cycle + 1 == self.latency, "the multipliers' registers must match their declared latency"
        return m


