"""Building probe vectors from the values of the summands, and running them on a backend.

A probe thinks in *summands*: the ``K`` products ``p_k = a_k * b_k`` (times the block
scales) and ``c``, numbered ``0..K-1`` and ``K``.  :class:`Rig` turns a wanted value of
each summand into operand bit patterns (every product exact: ``b_k`` a power of two and
``a_k = p_k / b_k``, or the other way round), runs a batch of such rows on the backend in
one call and decodes the results.  A value that the instruction's formats cannot hold
makes the row *infeasible*; its result is ``None`` and the probe says the property is not
observable with these formats.  Only the interface is used: operand formats, K, scale
format and block size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from golden import Instruction
from golden.device import check_output
from golden.formats import from_float, get_format, to_float
from golden.rules import Rounding

C = "c"


@dataclass
class Row:
    """One dot-add: wanted product values by index, c's value, and raw bit overrides."""

    prods: dict = field(default_factory=dict)         # k -> exact value
    c: float = 0.0
    raw: dict = field(default_factory=dict)           # ("a", k) / ("b", k) / "c" -> bit pattern


def representable(fmt, v: float) -> bool:
    """Whether the finite or infinite value ``v`` is exactly a value of ``fmt`` (fast, no numpy)."""
    if math.isnan(v):
        return False
    if math.isinf(v):
        return fmt.inf and (v > 0 or fmt.signed)
    if v < 0 and not fmt.signed:
        return False
    if v == 0.0:
        if not fmt.subnormals:          # ue8m0 has no zero
            return False
        return fmt.signed or math.copysign(1.0, v) > 0
    if abs(v) > fmt.max_finite:
        return False
    m, e = math.frexp(abs(v))
    lead = e - 1
    if lead < fmt.emin and not fmt.subnormals:
        return False
    low = max(lead, fmt.emin) - fmt.man_bits
    x = math.ldexp(abs(v), -low)
    return x == int(x)


_BITS: dict = {}


def exact_in(fmt, v: float) -> int | None:
    """Bit pattern of ``v`` in ``fmt`` if exactly representable (signed zeros, infinities included)."""
    fmt = get_format(fmt)
    if not representable(fmt, v):
        return None
    key = (fmt.name, v, math.copysign(1.0, v))
    if key not in _BITS:
        bits = int(from_float(fmt, np.float64(v), Rounding.RNE))
        if fmt.nan == "negative_zero" and v == 0.0:
            bits = 0
        _BITS[key] = bits
    return _BITS[key]


class Rig:
    """Builds rows for one instruction and evaluates them on one backend."""

    def __init__(self, ins: Instruction, backend, name: str | None = None):
        self.ins, self.backend = ins, backend
        self.name = name or getattr(backend, "name", None) or getattr(backend, "__name__", "backend")
        self.fa, self.fb, self.fc, self.fd = ins.formats
        self.K = ins.k
        self.fs = get_format(ins.scale_format) if ins.scale_format else None
        self.block = ins.block_size
        self._prod: dict = {}
        self._pow2_a = self._pow2s(self.fa)
        self._pow2_b = self._pow2s(self.fb)
        self.calls = 0
        self.rows = 0
        self.unit_scale = exact_in(self.fs, 1.0) if self.fs else None
        self.normal_only = True      # products from normal operands only (until subnormals are known to work)

    # ---- values ---------------------------------------------------------------------------------

    @staticmethod
    def _pow2s(fmt) -> list:
        lo = fmt.emin - fmt.man_bits if fmt.subnormals else fmt.emin
        es = [e for e in range(lo, fmt.emax + 1)]
        return sorted(es, key=lambda e: (abs(e), e))

    def prod(self, v: float):
        """``(a_bits, b_bits)`` with ``a * b == v`` exactly (normal operands preferred), or None."""
        if v in self._prod:
            best, fallback = self._prod[v]
            return best if best is not None or self.normal_only else fallback
        best = fallback = None
        if v == 0.0:
            best = (exact_in(self.fa, 0.0), exact_in(self.fb, 0.0))
        elif math.isfinite(v):
            for a_side in (False, True):          # b a power of two first, then a
                pows = self._pow2_a if a_side else self._pow2_b
                fo, fp = (self.fb, self.fa) if a_side else (self.fa, self.fb)
                for e in pows:
                    x = math.ldexp(v, -e)
                    xb = exact_in(fo, x)
                    if xb is None:
                        continue
                    pb = exact_in(fp, math.ldexp(1.0, e))
                    if pb is None:
                        continue
                    cand = (pb, xb) if a_side else (xb, pb)
                    if abs(x) >= math.ldexp(1.0, fo.emin) and e >= fp.emin:
                        best = cand
                        break
                    fallback = fallback or cand
                if best is not None:
                    break
            self._prod[v] = (best, fallback)
        return best if best is not None or self.normal_only else fallback

    @staticmethod
    def _is_normal(fmt, bits) -> bool:
        val = abs(float(to_float(fmt, np.array([bits], np.uint64))[0]))
        return val >= math.ldexp(1.0, fmt.emin) or val == 0.0

    def has_prod(self, v: float) -> bool:
        return self.prod(v) is not None

    def c_ok(self, v: float) -> bool:
        return exact_in(self.fc, v) is not None

    def pow2_range(self, need_c: bool = False, need_neg: bool = True):
        """Exponents e with 2**e (and -2**e) available as a product (and as c when asked)."""
        out = []
        lo = min(self._pow2_a) + min(self._pow2_b) - 2
        hi = max(self._pow2_a) + max(self._pow2_b) + 2
        for e in range(max(lo, -1100), min(hi, 1100)):
            try:
                v = math.ldexp(1.0, e)
            except OverflowError:
                continue
            if v == 0.0 or math.isinf(v):
                continue
            if not self.has_prod(v) or (need_neg and not self.has_prod(-v)):
                continue
            if need_c and not (self.c_ok(v) and (not need_neg or self.c_ok(-v))):
                continue
            out.append(e)
        return out

    # ---- running --------------------------------------------------------------------------------

    def _scale_bits(self, t: int):
        """Scale bit patterns (sa, sb) whose product is 2**t, or None."""
        h = t // 2
        for ta in (h, t - h, h - 1, h + 1):
            sa = exact_in(self.fs, math.ldexp(1.0, ta))
            sb = exact_in(self.fs, math.ldexp(1.0, t - ta))
            if sa is not None and sb is not None:
                return sa, sb
        return None

    def _block_scale(self, vals):
        """Total scale exponent t for one block so that every value / 2**t is a product (0 first)."""
        nz = [v for v in vals if v != 0.0 and math.isfinite(v)]
        if not nz:
            return 0
        top = max(math.frexp(abs(v))[1] for v in nz)
        # elements in [1, 2) first: the block-scale exponent is then the value's exponent
        cands = [0, top - 1] + sorted({top - e for e in range(-8, 9)} - {0, top - 1}, key=abs) + \
            sorted(set(range(-300, 300)) - {0}, key=abs)
        for t in cands:
            if self._scale_bits(t) is None:
                continue
            if all(self.has_prod(math.ldexp(v, -t)) for v in nz):
                return t
        return None

    def build(self, rows):
        """Operand arrays for ``rows`` and the feasibility mask."""
        R, K = len(rows), self.K
        a = np.zeros((R, K), np.uint64)
        b = np.zeros((R, K), np.uint64)
        c = np.zeros(R, np.uint64)
        ok = np.ones(R, bool)
        sa = sb = None
        if self.fs is not None:
            nblk = K // self.block
            sa = np.full((R, nblk), self.unit_scale, np.uint64)
            sb = np.full((R, nblk), self.unit_scale, np.uint64)
        zero_a, zero_b = exact_in(self.fa, 0.0), exact_in(self.fb, 0.0)
        a[:] = zero_a
        b[:] = zero_b
        for r, row in enumerate(rows):
            cb = exact_in(self.fc, row.c) if isinstance(row.c, float) or isinstance(row.c, int) else None
            if "c" in row.raw:
                cb = row.raw["c"]
            if cb is None:
                ok[r] = False
                continue
            c[r] = cb
            prods = row.prods
            if self.fs is not None:
                for blk in range(K // self.block):
                    ks = [k for k in prods if blk * self.block <= k < (blk + 1) * self.block]
                    t = self._block_scale([prods[k] for k in ks])
                    if t is None:
                        ok[r] = False
                        break
                    if t:
                        sa[r, blk], sb[r, blk] = self._scale_bits(t)
                        prods = {**prods, **{k: math.ldexp(prods[k], -t) for k in ks}}
                if not ok[r]:
                    continue
            for k, v in prods.items():
                p = self.prod(float(v))
                if p is None:
                    ok[r] = False
                    break
                a[r, k], b[r, k] = p
            for key, bits in row.raw.items():
                if key == "c":
                    continue
                which, k = key
                (a if which == "a" else b)[r, k] = bits
        return a, b, c, sa, sb, ok

    def run(self, rows):
        """Results of ``rows``: ``(values, bits)``; infeasible or unsupported rows give None / -1."""
        if not rows:
            return [], np.zeros(0, np.int64)
        a, b, c, sa, sb, ok = self.build(rows)
        unsup = getattr(self.backend, "unsupported", None)
        if unsup is not None:
            ok &= ~np.asarray(unsup(self.ins, a, b, c, sa, sb), bool)
        idx = np.nonzero(ok)[0]
        vals = [None] * len(rows)
        bits = [None] * len(rows)
        if idx.size:
            args = (a[idx], b[idx], c[idx], None if sa is None else sa[idx], None if sb is None else sb[idx])
            d = check_output(self.ins, self.backend(self.ins, *args), idx.size, self.name)
            self.calls += 1
            self.rows += int(idx.size)
            fv = to_float(self.fd, d)
            for j, i in enumerate(idx):
                vals[i] = float(fv[j])
                bits[i] = int(d[j])
        return vals, bits

    def run_operands(self, a, b, c, sa=None, sb=None):
        """Raw operand rows on the backend: ``(d bits, ok)``; rows the backend does not support are
        left out (``ok`` False, ``d`` 0 there)."""
        ok = np.ones(len(c), bool)
        unsup = getattr(self.backend, "unsupported", None)
        if unsup is not None:
            ok &= ~np.asarray(unsup(self.ins, a, b, c, sa, sb), bool)
        d = np.zeros(len(c), np.uint64)
        idx = np.nonzero(ok)[0]
        if idx.size:
            args = (a[idx], b[idx], c[idx], None if sa is None else sa[idx], None if sb is None else sb[idx])
            d[idx] = check_output(self.ins, self.backend(self.ins, *args), idx.size, self.name)
            self.calls += 1
            self.rows += int(idx.size)
        return d, ok

    def out_bits(self, v: float) -> int | None:
        return exact_in(self.fd, v)
