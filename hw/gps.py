"""GPS: group pairwise sums in binary32 with subnormal flushing (CDNA2 f16/bf16 MFMA; docs/spec.md §3).

Every step is one IEEE binary32 operation, RNE, followed by the flush rule:

* :class:`F32Multiply`: a and b (f16 or bf16) with subnormal inputs (in their
  own format) and zeros read as +0; the binary32 product, RNE; a product
  below ``2**-126`` becomes a zero of its sign.  Latency 1 at level 0.
* :class:`F32Add`: binary32 addition, RNE; a sum below ``2**-126`` becomes a
  zero of its sign (an exact cancellation is +0, ``(-0) + (-0)`` is -0).
  Latency 1 at level 0.
* :class:`GPS`: ``K`` multipliers; a pairwise adder tree per group of ``G``
  products (G = 4: ``(p0 + p1) + (p2 + p3)``); then ``d = c`` (a subnormal or
  zero c read as +0) and ``d = d + gamma_j`` group after group.  All unrolled
  (II = 1): every group's tree runs in parallel and the group sums wait in
  delay lines for their turn in the accumulation.  Latency
  ``1 + log2(G) + K / G`` at level 0 (deeper pipelining: the multiplier's and the adders' latencies
  in place of the ones).

NaN results are the canonical quiet NaN 0x7FC00000 (the hardware's payloads
are not modelled; docs/spec.md §4.3).
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal, signed
from amaranth.lib.wiring import In, Out

from golden.formats import NanKind, get_format
from golden.rules import Overflow, Rounding

from .bitscan import trailing_zeros
from .decode import Decoded, OperandDecode
from .pipeline import DatapathPipeline, Stage, delayed
from .pipelining import Timeline, as_pipelining
from .round import WIDE_EXP, Rounder
from .specials import inf_word, product_specials, quiet_nan, sign_bit

__all__ = ["F32Multiply", "F32Add", "GPS"]

F32 = get_format("f32")
_INF = inf_word(F32)
_SIGN = sign_bit(F32)


def _ieee_with_subnormals(f):
    if f.nan != NanKind.IEEE or not f.subnormals:
        raise ValueError(f"GPS needs IEEE-style operands with subnormals, not {f.name}")
    return f


class F32Multiply(Stage):
    """binary32 product of two flushed operands, RNE, subnormal products flushed to a signed zero.

    Latency ``1 + multiply`` (a register between the decoders and the multiplier), plus the
    rounder's cut points where the product needs rounding (f32 operands).

    Products of significands of 12 bits or fewer (f16, bf16) are exact in
    binary32, so only the exponent range decides (below ``2**-126``: zero of
    the product's sign; ``2**128`` and up: infinity); wider operands (f32)
    go through the RNE rounder, then the flush.

    Parameters
    ----------
    fa, fb : Format
        Operand formats (f16, bf16 or f32).
    pipelining : Pipelining, optional

    Members
    -------
    a : In(fa.storage_bits)
    b : In(fb.storage_bits)
    p : Out(32)
    """

    def __init__(self, fa, fb, pipelining=None):
        self.fa, self.fb = (_ieee_with_subnormals(get_format(f)) for f in (fa, fb))
        self.pipelining = as_pipelining(pipelining)
        super().__init__({"a": In(self.fa.storage_bits), "b": In(self.fb.storage_bits), "p": Out(32)})

    @property
    def exact(self) -> bool:
        """Products of significands of 12 bits or fewer are exact in binary32: no rounder."""
        return self.fa.man_bits + self.fb.man_bits + 2 <= F32.man_bits + 1

    @property
    def latency(self) -> int:
        return 1 + self.pipelining.multiply + (0 if self.exact else len(self.pipelining.rounder_cuts))

    def elaborate(self, platform):
        m = Module()
        tl = Timeline(m)
        ops = []
        for name, f in (("a", self.fa), ("b", self.fb)):
            dec = m.submodules[f"dec_{name}"] = OperandDecode(f)
            m.d.comb += dec.bits.eq(getattr(self, name))
            ops.append(tl.let(dec.out, Decoded(f), f"dec_{name}_out"))
        tl.cut(self.pipelining.multiply)
        decoded = []
        for x, f in zip(ops, (self.fa, self.fb)):
            x = tl(x)
            zero = ~x.sig[f.man_bits]                 # zero or subnormal: read as +0
            decoded.append((x, zero, Mux(zero, 0, x.sign)))
        (x, xz, xs), (y, yz, ys) = decoded
        wa, wb = self.fa.man_bits + 1, self.fb.man_bits + 1
        n = wa + wb
        sign = xs ^ ys
        prod = Signal(n)
        m.d.comb += prod.eq(x.sig * y.sig)
        word = Signal(32)
        # exact products need no rounding: normalise by one place and check the range (the shared
        # rounder would cost a shifter per multiplier for the same bits)
        if self.exact:
            top = prod[n - 1]
            e = Signal(WIDE_EXP)
            m.d.comb += e.eq(x.exp + y.exp + top)
            man = Signal(F32.man_bits)
            m.d.comb += man.eq(Mux(top, prod[:n - 1] << (F32.man_bits - (n - 1)),
                                   prod[:n - 2] << (F32.man_bits - (n - 2))))
            with m.If(e < F32.emin):
                m.d.comb += word.eq(sign << _SIGN)
            with m.Elif(e > F32.emax):
                m.d.comb += word.eq(_INF | (sign << _SIGN))
            with m.Else():
                m.d.comb += word.eq(man | ((e + F32.bias)[:F32.exp_bits] << F32.man_bits) | (sign << _SIGN))
        nan, inf = product_specials(x, y, xz, yz)
        flags = tl.let(Cat(nan, inf, xz | yz, sign), 4, "flags")
        if not self.exact:
            rnd = m.submodules.rnd = Rounder(F32, n, mode=Rounding.RNE, overflow=Overflow.IEEE, flush=True,
                                             sticky="trailing_zeros",
                                             lod="flags", cuts=self.pipelining.rounder_cuts)
            m.d.comb += [rnd.mag.eq(prod), rnd.e0.eq(x.exp + y.exp - (wa - 1) - (wb - 1)), rnd.sign.eq(sign)]
            for _ in range(rnd.latency):
                tl.cut()
            m.d.comb += word.eq(rnd.word)
        nan, inf, zero, sign = tl(flags)
        m.d.sync += self.p.eq(Mux(nan, quiet_nan(F32), Mux(inf, _INF | (sign << _SIGN),
                                                          Mux(zero, sign << _SIGN, word))))
        assert tl.cycle + 1 == self.latency, "the multiplier's registers must match its declared latency"
        return m


class F32Add(Stage):
    """binary32 addition, RNE; with ``flush``, a result below ``2**-126`` becomes a zero of its sign.

    Latency ``1 + f32`` (1: a register between the alignment and the add; 2: also one between
    the exponent compare and the alignment shift) plus the normaliser's cut points
    (``normalise``: the magnitude, and the rounder's).

    The smaller operand is aligned in a 27-bit window (3 bits below the
    larger one's last place, the bits shifted out jammed into a sticky bit),
    added or subtracted, then rounded by the shared :class:`hw.round.Rounder`.
    Subnormal inputs are read as IEEE subnormals (GPS never produces one).

    Parameters
    ----------
    flush : bool
        Flush subnormal results (GPS); ``False`` gives a plain IEEE adder.
    pipelining : Pipelining, optional

    Members
    -------
    x, y : In(32)
    s : Out(32)
    """

    GUARD = 3

    def __init__(self, flush: bool = True, pipelining=None):
        self.flush = flush
        self.pipelining = as_pipelining(pipelining)
        super().__init__({"x": In(32), "y": In(32), "s": Out(32)})

    @staticmethod
    def latency_for(pipelining) -> int:
        """The latency of an adder built with ``pipelining`` (known before it is built)."""
        pl = as_pipelining(pipelining)
        return 1 + pl.f32 + len(pl.normalise_cuts)

    @property
    def latency(self) -> int:
        return self.latency_for(self.pipelining)

    def elaborate(self, platform):
        m = Module()
        tl = Timeline(m)
        decs = []
        for name in ("x", "y"):
            dec = m.submodules[f"dec_{name}"] = OperandDecode(F32)
            m.d.comb += dec.bits.eq(getattr(self, name))
            decs.append(dec.out)
        x, y = decs
        p, g = F32.man_bits + 1, self.GUARD
        W = p + g
        # both exponent differences at once: the sign of one says which operand is larger, and the
        # distance is the other or it (no compare, then subtract, in series)
        x_minus_y = tl.let(x.exp - y.exp, signed(len(x.exp) + 1), "x_minus_y")
        y_minus_x = tl.let(y.exp - x.exp, signed(len(x.exp) + 1), "y_minus_x")
        swap = x_minus_y < 0                                     # y.exp > x.exp
        big_sig, big_exp, big_sign = Mux(swap, y.sig, x.sig), Mux(swap, y.exp, x.exp), Mux(swap, y.sign, x.sign)
        small_sig = Mux(swap, x.sig, y.sig)
        dist = tl.let(Mux(swap, y_minus_x, x_minus_y), range(256), "dist")
        sh = tl.let(Mux(dist > W, W, dist), range(W + 1), "sh")
        small_top = tl.let(small_sig << g, W, "small_top")
        # both operands' trailing zeros, chosen by the swap: counting them after the swap put the
        # exponent subtract, the swap and the count in series (GPS level 3: 72 MHz)
        tz = tl.let(Mux(swap, trailing_zeros(x.sig), trailing_zeros(y.sig)), range(p), "tz")
        small_nonzero = tl.let(Mux(swap, x.sig != 0, y.sig != 0), 1, "small_nonzero")
        xw = tl.let(big_sig << g, W, "xw")
        sub = tl.let(x.sign ^ y.sign, 1, "sub")
        both_neg = tl.let(x.sign & y.sign, 1, "both_neg")
        big_sign = tl.let(big_sign, 1, "big_sign")
        e0 = tl.let(big_exp - (p - 1) - g, WIDE_EXP, "e0")
        nan = x.nan | y.nan | (x.inf & y.inf & (x.sign ^ y.sign))
        flags = tl.let(Cat(nan, x.inf | y.inf, Mux(x.inf, x.sign, y.sign)), 3, "flags")
        tl.cut(self.pipelining.f32 >= 2)                         # the exponent compare before the shift

        sh = tl(sh)
        jam = tl(small_nonzero) & (sh > tl(tz) + g)              # the smaller's lowest set bit shifted out
        yw = tl.let((tl(small_top) >> sh) | jam, W, "yw")
        tl.cut(self.pipelining.f32 >= 1)

        xw, yw = tl(xw), tl(yw)
        total = tl.let(Mux(tl(sub), xw - yw, xw + yw), signed(W + 2), "total")
        neg = total < 0
        # the sum's sign; an exact zero is +0 unless both operands are -0
        sign = tl.let(Mux(total == 0, tl(both_neg), tl(big_sign) ^ neg), 1, "sign")
        mag = tl.let(Mux(neg, -total, total), W + 1, "mag")
        tl.cut("magnitude" in self.pipelining.normalise_cuts)
        rnd = m.submodules.rnd = Rounder(F32, W + 1, mode=Rounding.RNE, overflow=Overflow.IEEE, flush=self.flush,
                                         sticky="trailing_zeros", lod="flags", cuts=self.pipelining.rounder_cuts)
        m.d.comb += [rnd.mag.eq(tl(mag)), rnd.e0.eq(tl(e0)), rnd.sign.eq(tl(sign))]
        for _ in range(rnd.latency):
            tl.cut()
        nan, inf, inf_sign = tl(flags)
        m.d.sync += self.s.eq(Mux(nan, quiet_nan(F32), Mux(inf, _INF | (inf_sign << _SIGN), rnd.word)))
        assert tl.cycle + 1 == self.latency, "the adder's registers must match its declared latency"
        return m


def _depth(n: int) -> int:
    """Adder levels of the pairwise sum of ``n`` terms (split ``n // 2`` + the rest, as golden does)."""
    return 0 if n == 1 else 1 + max(_depth(n // 2), _depth(n - n // 2))


class GPS(DatapathPipeline):
    """The GPS dot-add: f32 products, pairwise group sums, sequential accumulation from c.

    Parameters
    ----------
    datapath : golden.Datapath
        f16 or bf16 a and b, f32 c and d, ``k`` products; ``params.group`` (G, 2 or 4) is
        the only parameter GPS reads.
    pipelining : Pipelining, int or str, optional
        Register stages inside the multipliers and adders (``None``: level 0).

    Members
    -------
    a, b, c, d : see :class:`hw.pipeline.DatapathPipeline`

    ``latency`` is ``1 + depth(G) + ceil(K / G)`` at level 0: multiply, the group trees, one add
    per group (each counting its own latency when pipelined deeper).
    """

    BASES = ("GPS",)

    @classmethod
    def check(cls, datapath, pipelining=None) -> None:
        super().check(datapath, pipelining)
        fa, fb, fc, fd = datapath.formats
        if fc.name != "f32" or fd.name != "f32":
            raise ValueError(f"GPS accumulates in f32, not {fc.name} -> {fd.name}")
        for f in (fa, fb):
            _ieee_with_subnormals(f)

    def __init__(self, datapath, pipelining=None):
        self.fa, self.fb, self.fc, self.fd = datapath.formats
        self.pipelining = as_pipelining(pipelining)
        k, params = datapath.k, datapath.params
        self.k, self.params, self.G = k, params, params.group
        self.groups = [list(range(j, min(j + self.G, k))) for j in range(0, k, self.G)]
        self.muls = [F32Multiply(self.fa, self.fb, self.pipelining) for _ in range(k)]
        self.tree_depth = _depth(len(self.groups[0]))
        self.add_latency = F32Add.latency_for(self.pipelining)
        super().__init__(datapath)

    def named_stages(self):
        """Multiply, the pairwise levels of a group, one accumulation add per group (the adders
        are built at elaboration: their cycles stand for them)."""
        return ([("F32Multiply", self.muls[0])]
                + [(f"pairwise{lv}.F32Add", self.add_latency) for lv in range(self.tree_depth)]
                + [(f"accumulate{j}.F32Add", self.add_latency) for j in range(len(self.groups))])

    @staticmethod
    def _wait(m, name, value, cycles):
        """``value`` delayed by ``cycles``."""
        return delayed(m, name, 32, cycles, value) if cycles else value

    def _adder(self, m, name, x, y):
        add = m.submodules[name] = F32Add(flush=True, pipelining=self.pipelining)
        assert add.latency == self.add_latency, "an adder's registers must match its declared latency"
        m.d.comb += [add.x.eq(x), add.y.eq(y)]
        return add.s

    def _pairwise(self, m, name, terms):
        """Pairwise sum of ``[(value, ready cycle)]``, halves first; returns ``(sum, ready cycle)``."""
        if len(terms) == 1:
            return terms[0]
        h = len(terms) // 2
        (lo, t_lo), (hi, t_hi) = self._pairwise(m, name + "l", terms[:h]), self._pairwise(m, name + "h", terms[h:])
        t = max(t_lo, t_hi)
        lo = self._wait(m, f"{name}_lo_wait", lo, t - t_lo)
        hi = self._wait(m, f"{name}_hi_wait", hi, t - t_hi)
        return self._adder(m, name, lo, hi), t + self.add_latency

    def elaborate(self, platform):
        m = Module()
        products = []
        for j, mul in enumerate(self.muls):
            m.submodules[f"mul{j}"] = mul
            m.d.comb += [mul.a.eq(self.a[j]), mul.b.eq(self.b[j])]
            products.append((mul.p, mul.latency))
        sums = [self._pairwise(m, f"group{g}_add", [products[j] for j in idx]) for g, idx in enumerate(self.groups)]
        # c, a subnormal or zero one read as +0, waits for the first group sum
        t = sums[0][1]
        c_flushed = Mux(self.c[F32.man_bits:_SIGN] == 0, 0, self.c)
        d = self._wait(m, "c_wait", c_flushed, t)
        for g, (gamma, t_g) in enumerate(sums):
            d = self._adder(m, f"accumulate{g}", d, self._wait(m, f"gamma{g}_wait", gamma, t - t_g))
            t += self.add_latency
        assert t == self.latency
        m.d.comb += self.d.eq(d)
        return m
