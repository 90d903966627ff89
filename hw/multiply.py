"""Multiplier array: exact significand products and exponent sums (FDA step 2), plus special values.

Latency 1: decode and multiply are combinational, the products are registered.
"""

from __future__ import annotations

from amaranth import Module, Mux
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from golden.formats import get_format

from .decode import Decoded, OperandDecode, exp_shape
from .pipeline import Stage, any_of
from .specials import Specials, product_specials

__all__ = ["Product", "Specials", "MultiplierArray"]


def Product(fa, fb) -> data.StructLayout:
    """One exact product: ``(-1)**sign * sig * 2**(exp - frac)``, ``frac = man_a + man_b``; zeros carry e_zero."""
    return data.StructLayout({"sign": 1, "exp": exp_shape(), "sig": fa.man_bits + fb.man_bits + 2})


class MultiplierArray(Stage):
    """Decode ``K`` operand pairs and c; form the exact products.

    A zero product takes the exponent ``e_zero`` (ISA.md fact 1), and so does a
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

    Members
    -------
    a, b : In(ArrayLayout(storage bits, k))
    c : In(fc.storage_bits)
    scale_a, scale_b : In(ArrayLayout(8, k // block)), when scaled
    products : Out(ArrayLayout(Product, k))
    c_term : Out(Decoded(fc))
    specials : Out(Specials)
    """

    LATENCY = 1

    def __init__(self, fa, fb, fc, k, e_zero, fs=None, block=None):
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
        nan = []
        pinf = []
        ninf = []
        for j in range(self.k):
            da = m.submodules[f"dec_a{j}"] = OperandDecode(self.fa)
            db = m.submodules[f"dec_b{j}"] = OperandDecode(self.fb)
            m.d.comb += [da.bits.eq(self.a[j]), db.bits.eq(self.b[j])]
            x, y = da.out, db.out
            exp = x.exp + y.exp
            if self.fs:
                blk = j // self.block
                sa = m.submodules[f"dec_sa{j}"] = OperandDecode(self.fs)
                sb = m.submodules[f"dec_sb{j}"] = OperandDecode(self.fs)
                m.d.comb += [sa.bits.eq(self.scale_a[blk]), sb.bits.eq(self.scale_b[blk])]
                exp = exp + sa.out.exp + sb.out.exp
                if j % self.block == 0:
                    nan.append(sa.out.nan | sb.out.nan)
            zero = x.zero | y.zero
            p = self.products[j]
            m.d.sync += [
                p.sign.eq(x.sign ^ y.sign),
                p.sig.eq(Mux(zero, 0, x.sig * y.sig)),
                p.exp.eq(Mux(zero, self.e_zero, exp)),
            ]
            bad, inf = product_specials(x, y)
            nan.append(bad)
            pinf.append(inf & ~(x.sign ^ y.sign))
            ninf.append(inf & (x.sign ^ y.sign))
        dc = m.submodules.dec_c = OperandDecode(self.fc)
        m.d.comb += dc.bits.eq(self.c)
        nan.append(dc.out.nan)
        pinf.append(dc.out.inf & ~dc.out.sign)
        ninf.append(dc.out.inf & dc.out.sign)
        any_p, any_n = any_of(pinf), any_of(ninf)
        any_nan = any_of(nan) | (any_p & any_n)
        m.d.sync += [
            self.c_term.eq(dc.out),
            self.c_term.exp.eq(Mux(dc.out.zero, self.e_zero, dc.out.exp)),
            self.specials.nan.eq(any_nan),
            self.specials.pinf.eq(any_p & ~any_nan),
            self.specials.ninf.eq(any_n & ~any_nan),
        ]
        return m


