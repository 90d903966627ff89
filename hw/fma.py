"""IEEE 754 fused multiply-add (binary64 and binary32): ``d = RNE(a * b + c)``, one rounding
(or RZ, RD, RU: ``mode``, golden's ``Params.fma_rounding``).

Three stages, one register each at level 0 (latency 3); the pipelining knob adds registers
inside them: ``multiply`` (between the decoders with the subnormal normalisation and the
multiplier), ``fma`` (between the alignment and the add) and ``normalise`` (the rounder's cut
points):

=====================  ===========================================================  =======
stage                  work                                                         latency
=====================  ===========================================================  =======
:class:`FMAMultiply`   decode a and b, normalise subnormal significands (leading-    1
                       one detect and left shift), exact ``p x p`` significand
                       product, exponent sum, product special flags
:class:`FMAAlignAdd`   decode c, align c against the product in a ``3p + 3``-bit      1
                       window (bits shifted out jammed into a sticky bit), add or
                       subtract, NaN/infinity rules, sign of an exact zero
:class:`FMARound`      leading-one detect, denormalising shift, RNE with gradual      1
                       underflow, overflow to infinity, canonical quiet NaN
=====================  ===========================================================  =======

c joins in the second stage, so in an accumulation chain (:mod:`hw.sfma`) a
multiply overlaps the previous fma and each further fma costs 2 cycles.

The alignment window (``p`` = significand bits, ``g = 2`` guard bits): the
product ``P`` (``2p`` bits, normalised, so its top bit is at ``2p-1`` or
``2p-2``) sits at window bits ``[g, g + 2p)``; c's ``p`` bits sit at
``[g + 2p + 1, g + 3p + 1)`` and are shifted right by ``p + 2 - (e_c - e_p)``.

* c more than ``p + 2`` binades above the product: the product lies below a
  quarter of c's last place, so ``c + a*b`` is within a quarter ulp of c and
  not a tie: RNE returns c, and the product is dropped; a directed rounding
  mode takes it as a sticky bit at the window's bottom.
* c far below the product: the bits of c shifted out of the window are jammed
  (OR-ed) into bit 0 -- round to odd at a position well below the result's
  round bit, because the normalised product keeps the result's top bit
  within two places of its own.  When the two are close (where cancellation happens)
  nothing is jammed: the window holds both exactly.

A zero product anchors the window on c, a zero c on the product.  Subnormal
inputs a and b are normalised first (that is what keeps the product's top bit
fixed); a subnormal c needs nothing, its exponent is the format's minimum.
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Shape, Signal, signed
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from golden.formats import get_format
from golden.rules import Overflow, Rounding

from .bitscan import leading_one, trailing_zeros
from .decode import Decoded, OperandDecode
from .pipeline import Pipeline, Stage, delayed
from .pipelining import Timeline, as_pipelining
from .round import MODES, WIDE_EXP, Rounder
from .specials import inf_word, product_specials, quiet_nan, sign_bit

PIECE_BITS = 18      # partials=1: significands cut into pieces of an ECP5 MULT18X18D's width

__all__ = ["FMAProduct", "FMASum", "FMAMultiply", "FMAAlignAdd", "FMARound", "FusedMultiplyAdd"]

GUARD = 2                  # window bits below the product


def FMAProduct(fmt) -> data.StructLayout:
    """The exact product: ``(-1)**sign * sig * 2**(exp - 2*man_bits)``; ``sig`` normalised (top bit 2p-1 or 2p-2)."""
    f = get_format(fmt)
    return data.StructLayout({"sign": 1, "exp": WIDE_EXP, "sig": 2 * (f.man_bits + 1),
                              "zero": 1, "inf": 1, "nan": 1})


def window_bits(fmt) -> int:
    """Width of the alignment window: ``g + 3p + 1``."""
    return GUARD + 3 * (get_format(fmt).man_bits + 1) + 1


def FMASum(fmt) -> data.StructLayout:
    """The aligned sum: ``(-1)**sign * mag * 2**exp``; ``sign`` is also the zero's and the infinity's sign."""
    return data.StructLayout({"mag": window_bits(fmt) + 1, "exp": WIDE_EXP, "sign": 1, "inf": 1, "nan": 1})


class FMAMultiply(Stage):
    """Decode a and b, normalise subnormals, exact significand product.  Latency ``1 + multiply``.

    Parameters
    ----------
    fmt : Format
        binary64 or binary32 (any IEEE format of ``golden.formats``).
    pipelining : Pipelining, optional
        ``decode``: a register on a and b before the decoders; ``multiply``: a register between the
        normalised significands and the multiplier; ``partials``: a register between the products
        of the significands' pieces and their sum.

    Members
    -------
    a, b : In(fmt.storage_bits)
    product : Out(FMAProduct(fmt))
    """

    def __init__(self, fmt, pipelining=None):
        self.fmt = get_format(fmt)
        self.pipelining = as_pipelining(pipelining)
        super().__init__({"a": In(self.fmt.storage_bits), "b": In(self.fmt.storage_bits),
                          "product": Out(FMAProduct(self.fmt))})

    @property
    def latency(self) -> int:
        return 1 + self.pipelining.decode + self.pipelining.multiply + self.pipelining.partials

    def elaborate(self, platform):
        m = Module()
        tl = Timeline(m)
        f = self.fmt
        p = f.man_bits + 1
        # decode=1: the operands registered first (in an SFMA chain the later fmas' operands come
        # from delay lines placed far from their multiplier: the decode and subnormal normalise
        # after that route was the CDNA3 SFMA board top's critical path, 63.93 MHz)
        tl.cut(self.pipelining.decode)
        ops = []
        for name in ("a", "b"):
            dec = m.submodules[f"dec_{name}"] = OperandDecode(f)
            m.d.comb += dec.bits.eq(tl(getattr(self, name)))
            x = tl.let(dec.out, Decoded(f), f"dec_{name}_out")
            # a subnormal significand is shifted up to the hidden-bit position, its exponent down
            lz = tl.let((p - 1) - leading_one(x.sig, "flags"), range(p), f"{name}_lz")
            sig = tl.let(x.sig << lz, p, f"{name}_sig")
            exp = tl.let(x.exp - lz, WIDE_EXP, f"{name}_exp")
            ops.append((x, sig, exp))
        tl.cut(self.pipelining.multiply)
        (x, sx, ex), (y, sy, ey) = ((tl(v) for v in op) for op in ops)
        if self.pipelining.partials:
            # partials=1: the pieces' products (each one DSP block) registered before their sum (the
            # binary32 multiplier and the carry chains adding its parts in one cycle were the CDNA3
            # SFMA board top's critical path, 67.20 MHz)
            pieces = [(i, j, tl.let(sx[i:i + PIECE_BITS] * sy[j:j + PIECE_BITS], 2 * PIECE_BITS, f"part_{i}_{j}"))
                      for i in range(0, p, PIECE_BITS) for j in range(0, p, PIECE_BITS)]
            tl.cut()
            product = sum(tl(part) << (i + j) for i, j, part in pieces)
            (x, _, ex), (y, _, ey) = ((tl(v) for v in op) for op in ops)     # the rest, as of the sum
        else:
            product = sx * sy
        zero = x.zero | y.zero
        nan, inf = product_specials(x, y)
        o = self.product
        m.d.sync += [
            o.sign.eq(x.sign ^ y.sign),
            o.exp.eq(ex + ey),
            o.sig.eq(product),
            o.zero.eq(zero),
            o.nan.eq(nan),
            o.inf.eq(inf),
        ]
        assert tl.cycle + 1 == self.latency, "the multiplier's registers must match its declared latency"
        return m


class FMAAlignAdd(Stage):
    """Decode c, align it against the product, add; special values.  Latency ``1 + min(fma, 2)``
    (1: a register between the alignment and the add; 2: also one between the exponent
    difference and the shift; 3: as 2, the product's placement in the window chosen after that
    register instead of before it), plus one between the add and the magnitude where
    ``pipelining.normalise`` has the ``"magnitude"`` cut.

    Parameters
    ----------
    fmt : Format
    pipelining : Pipelining, optional
        ``fma``: the registers above.

    Members
    -------
    product : In(FMAProduct(fmt))
    c : In(fmt.storage_bits)
    sum : Out(FMASum(fmt))
    """

    def __init__(self, fmt, pipelining=None, mode: Rounding = Rounding.RNE):
        self.fmt = get_format(fmt)
        self.pipelining = as_pipelining(pipelining)
        _check_mode(mode)
        self.mode = mode
        super().__init__({"product": In(FMAProduct(self.fmt)), "c": In(self.fmt.storage_bits),
                          "sum": Out(FMASum(self.fmt))})

    @property
    def latency(self) -> int:
        return 1 + min(self.pipelining.fma, 2) + ("magnitude" in self.pipelining.normalise_cuts)

    def elaborate(self, platform):
        m = Module()
        tl = Timeline(m)
        f = self.fmt
        p, g, W = f.man_bits + 1, GUARD, window_bits(f)
        d_max = p + 2                                  # c's place at the top of the window
        dec = m.submodules.dec_c = OperandDecode(f)
        m.d.comb += dec.bits.eq(self.c)
        c, pr = dec.out, self.product

        d = Signal(WIDE_EXP)                           # e_c - e_p
        m.d.comb += d.eq(c.exp - pr.exp)
        # window anchored on c: product zero or far below c (dropped)
        anchor_c = tl.let(pr.zero | (~c.zero & (d > d_max)), 1, "anchor_c")
        sh_raw = Signal(WIDE_EXP)
        m.d.comb += sh_raw.eq(d_max - d)
        sh = tl.let(Mux(sh_raw > W, W, sh_raw[:Shape.cast(range(W + 1)).width]), range(W + 1), "sh")
        c_top = tl.let(c.sig << (W - p), W, "c_top")
        # bits shifted out: c's lowest set bit (at W - p + its trailing zeros) falls below bit 0
        c_tz = tl.let(trailing_zeros(c.sig), range(p), "c_tz")
        c_nonzero = tl.let(c.sig != 0, 1, "c_nonzero")
        # fma=3: the product's placement after the exponent difference's register (c's decode, the
        # difference, its compare and that one bit's fan-out to the window in one cycle were the
        # CDNA3 SFMA board top's critical path at 3,partials=1,decode=1: 71.14 MHz)
        late_pw = self.pipelining.fma >= 3
        if not late_pw:
            pw = self._product_in_window(anchor_c, pr.zero, pr.sig, tl)
        sub = tl.let(pr.sign ^ c.sign, 1, "sub")
        nan = tl.let(pr.nan | c.nan | (pr.inf & c.inf & sub), 1, "nan")
        inf = tl.let((pr.inf | c.inf) & ~nan, 1, "inf")
        # what the sign and the exponent need of the operands
        facts = {name: tl.let(v, 1, name) for name, v in (
            ("p_inf", pr.inf), ("p_sign", pr.sign), ("c_inf", c.inf), ("c_sign", c.sign),
            ("both_neg_zero", pr.zero & c.zero & pr.sign & c.sign))}
        if self.mode == Rounding.RD:
            facts["both_pos_zero"] = tl.let(pr.zero & c.zero & ~pr.sign & ~c.sign, 1, "both_pos_zero")
        exp = tl.let(Mux(anchor_c, c.exp - (g + 3 * p), pr.exp - (g + 2 * p - 2)), WIDE_EXP, "exp")
        tl.cut(self.pipelining.fma >= 2)                # the exponent difference before the shift
        if late_pw:
            pw = self._product_in_window(tl(anchor_c), tl(pr.zero), tl(pr.sig), tl)

        sh = tl(sh)
        c_jam = tl(c_nonzero) & (sh > tl(c_tz) + (W - p))
        cw = tl.let(Mux(tl(anchor_c), tl(c_top), (tl(c_top) >> sh) | c_jam), W, "cw")
        tl.cut(self.pipelining.fma >= 1)

        cw, pw = tl(cw), tl(pw)
        total = tl.let(Mux(tl(sub), cw - pw, cw + pw), signed(W + 2), "total")
        tl.cut("magnitude" in self.pipelining.normalise_cuts)   # the add, then the magnitude
        total = tl(total)
        neg = total < 0
        fx = {name: tl(v) for name, v in facts.items()}
        # sign: of the infinity; of the sum; of an exact zero (-0 only for (-0) + (-0); rounding
        # down, -0 for every exact zero but (+0) + (+0): IEEE 754 6.3)
        zero_sign = fx["both_neg_zero"] if self.mode != Rounding.RD else ~fx["both_pos_zero"]
        sign = Mux(fx["p_inf"], fx["p_sign"], Mux(fx["c_inf"], fx["c_sign"],
                   Mux(total == 0, zero_sign, fx["c_sign"] ^ neg)))
        o = self.sum
        m.d.sync += [
            o.mag.eq(Mux(neg, -total, total)),
            o.exp.eq(tl(exp)),
            o.sign.eq(sign),
            o.nan.eq(tl(nan)),
            o.inf.eq(tl(inf)),
        ]
        assert tl.cycle + 1 == self.latency, "the align/add stage's registers must match its declared latency"
        return m

    def _product_in_window(self, anchor_c, zero, sig, tl):
        """The product's significand at the window's bottom guard bits, or (c anchors the window,
        the product zero or far below c) nothing."""
        W = window_bits(self.fmt)
        if self.mode == Rounding.RNE:
            return tl.let(Mux(anchor_c, 0, sig << GUARD), W, "pw")
        # a directed mode needs a product far below c as a sticky bit: one unit at the window's
        # bottom, far below c's round bit, is strictly between 0 and c's last place as the product is
        return tl.let(Mux(anchor_c, ~zero, sig << GUARD), W, "pw")


class FMARound(Stage):
    """Normalise and round the sum to the format (RNE, gradual underflow, overflow to inf).

    Latency ``1 +`` the rounder's cut points (``pipelining.rounder_cuts``).

    Parameters
    ----------
    fmt : Format
    pipelining : Pipelining, optional

    Members
    -------
    sum : In(FMASum(fmt))
    d : Out(fmt.storage_bits)
    """

    def __init__(self, fmt, pipelining=None, mode: Rounding = Rounding.RNE):
        self.fmt = get_format(fmt)
        self.pipelining = as_pipelining(pipelining)
        _check_mode(mode)
        self.mode = mode
        super().__init__({"sum": In(FMASum(self.fmt)), "d": Out(self.fmt.storage_bits)})

    @property
    def latency(self) -> int:
        return 1 + len(self.pipelining.rounder_cuts)

    def elaborate(self, platform):
        m = Module()
        tl = Timeline(m)
        f, s = self.fmt, self.sum
        rnd = m.submodules.rnd = Rounder(f, len(s.mag), mode=self.mode, overflow=Overflow.IEEE, sticky="trailing_zeros",
                                         lod="flags", cuts=self.pipelining.rounder_cuts)
        m.d.comb += [rnd.mag.eq(s.mag), rnd.e0.eq(s.exp), rnd.sign.eq(s.sign)]
        flags = tl.let(Cat(s.nan, s.inf, s.sign), 3, "flags")
        for _ in range(rnd.latency):
            tl.cut()
        nan, inf, sign = tl(flags)
        m.d.sync += self.d.eq(Mux(nan, quiet_nan(f), Mux(inf, inf_word(f) | (sign << sign_bit(f)), rnd.word)))
        assert tl.cycle + 1 == self.latency, "the rounding stage's registers must match its declared latency"
        return m


class FusedMultiplyAdd(Pipeline):
    """One IEEE fused multiply-add unit: multiply -> align and add -> normalise and round.

    Parameters
    ----------
    fmt : Format or str
        ``"f64"`` or ``"f32"``.
    c_late : bool
        c is presented the multiplier's latency after a and b (it joins at the add stage, as
        in an accumulation chain); otherwise it is delayed inside.
    mode : Rounding
        The one rounding (golden.Params.fma_rounding).
    pipelining : Pipelining, int or str, optional
        Register stages inside the three stages (``None``: level 0).

    Members
    -------
    a, b, c : In(fmt.storage_bits)
    d : Out(fmt.storage_bits)

    ``latency`` is 3 from a and b at level 0 (2 from c when ``c_late``): the stages' sum.
    """

    def __init__(self, fmt, c_late: bool = False, pipelining=None, mode: Rounding = Rounding.RNE):
        self.fmt = get_format(fmt)
        self.c_late = c_late
        pl = self.pipelining = as_pipelining(pipelining)
        self.mul = FMAMultiply(self.fmt, pl)
        self.add, self.round = FMAAlignAdd(self.fmt, pl, mode), FMARound(self.fmt, pl, mode)
        self.stages = [self.mul, self.add, self.round]
        w = self.fmt.storage_bits
        super().__init__({"a": In(w), "b": In(w), "c": In(w), "d": Out(w)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.multiply, m.submodules.align_add, m.submodules.round = self.stages
        m.d.comb += [self.mul.a.eq(self.a), self.mul.b.eq(self.b), self.add.product.eq(self.mul.product)]
        c_wait = 0 if self.c_late else self.mul.latency
        m.d.comb += self.add.c.eq(delayed(m, "c_wait", self.fmt.storage_bits, c_wait, self.c))
        m.d.comb += [self.round.sum.eq(self.add.sum), self.d.eq(self.round.d)]
        return m


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown fma rounding mode {mode!r}; valid: {', '.join(MODES)}")
