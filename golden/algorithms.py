"""The nine dot-add algorithms of ISA.md section 3, vectorised over many dot-adds.

Every algorithm takes bit patterns ``a, b`` of shape ``[R, K]``, ``c`` of shape
``[R]`` (and block scales ``[R, K // block]`` where the instruction has them)
and returns the bit patterns of ``d``, shape ``[R]``.  The six base algorithms
are SFMA, GPS, FDA, GDFS, FDRDA and GFDRDA; the three "Co" variants are chains
of passes (:func:`run`), selected by ``Params.pass_size < K``.

A hardware team can describe a design of its own with the same parameters:
``Params(base="FDA", F=27, pass_size=16, e_zero=-133)`` is one line.

Fixed-point conventions: an aligned significand is an integer ``A`` with ``F``
fraction bits relative to ``2**e_max``, i.e. the term's value is
``A * 2**(e_max - F)``.  Truncation of a signed term is on its magnitude (RZ)
in the NVIDIA algorithms and an arithmetic shift, i.e. a floor (RD), in the
AMD ones.  When a design's widths could overflow 64-bit integers the
arithmetic switches to Python integers (slow, exact).

Each function can fill a ``trace`` list with ``(stage, {name: array})`` pairs;
:func:`golden.trace` turns that into the stage-by-stage report.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np

from .formats import (INF, NAN, NORMAL, SUBNORMAL, ZERO, Format, bit_length, decode, get_format,
                      round_to_format, special_bits)

BASES = ("SFMA", "GPS", "FDA", "GDFS", "FDRDA", "GFDRDA")
EXCLUDED = -(1 << 40)          # exponent of a term left out of a maximum


@dataclass(frozen=True)
class Params:
    """Algorithm parameters of one dot-add design.

    Parameters
    ----------
    base : str
        One of ``SFMA, GPS, FDA, GDFS, FDRDA, GFDRDA``.
    pass_size : int, optional
        Products per fused pass (L).  ``K > L`` runs a chain of ``K / L``
        passes, each result rounded to the output format and fed back as c.
    F : int, optional
        Fraction bits kept after alignment (FDA, GDFS, FDRDA, GFDRDA).
    e_zero : int, optional
        Exponent a zero product / zero c takes in the maximum (FDA, GDFS).
    out_rounding : str
        Rounding of the final normalisation: ``RZ`` (NVIDIA f32), ``RNE``.
    out_frac_bits : int, optional
        Fraction bits of the result if narrower than the output format
        (13 for the "E8M13" result of Ada QMMA and Hopper QGMMA).
    overflow : str
        ``"inf"``: any result of magnitude ``>= 2**(emax+1)`` is infinity;
        ``"ieee"``: the rounding direction decides.
    group : int, optional
        GPS pairwise group size G, or the GDFS product group (16).
    dot_floor_bits, c_floor_bits, final_floor_bits : int
        FDRDA/GFDRDA: the dot part is floored to ``dot_floor_bits`` fraction
        bits relative to ``2**e_max``, c to ``c_floor_bits``, and their
        normalised sum to ``final_floor_bits`` before RNE (ISA.md fact 4).
    merge_floor_bits : int
        GFDRDA: fraction bits kept when the even and odd sums are merged.
    c_drop : int, optional
        GFDRDA: c becomes zero when ``e_c < e_max - c_drop``.
    product_overflow : bool
        Products of magnitude ``>= 2**128`` become infinities (AMD).
    flush_subnormals : bool
        GPS: subnormal inputs flushed to +0, subnormal products and sums to
        signed zero.
    """

    base: str
    pass_size: int | None = None
    F: int | None = None
    e_zero: int | None = None
    out_rounding: str = "RZ"
    out_frac_bits: int | None = None
    overflow: str = "inf"
    group: int | None = None
    dot_floor_bits: int = 32
    c_floor_bits: int = 24
    final_floor_bits: int = 31
    merge_floor_bits: int = 24
    c_drop: int | None = None
    product_overflow: bool = False
    flush_subnormals: bool = False

    def __post_init__(self):
        if self.base not in BASES:
            raise ValueError(f"unknown algorithm {self.base!r}; valid: {', '.join(BASES)}")
        needs_f = self.base in ("FDA", "GDFS", "FDRDA", "GFDRDA")
        if needs_f and (self.F is None or self.F < 0):
            raise ValueError(f"{self.base} needs F >= 0 (fraction bits kept after alignment)")
        if self.base in ("FDA", "GDFS") and self.e_zero is None:
            raise ValueError(f"{self.base} needs e_zero (the exponent of zero terms)")
        if self.base == "GPS" and self.group not in (1, 2, 4, 8, 16):
            raise ValueError("GPS needs group G, a power of two up to 16")

    def algorithm_name(self, k: int) -> str:
        """``"CoFDA"`` for a chain, else the base name."""
        chained = self.pass_size is not None and k > self.pass_size
        return ("Co" if chained else "") + self.base

    def with_(self, **changes) -> "Params":
        """A copy with some parameters changed (a custom design in one call)."""
        return replace(self, **changes)


# --------------------------------------------------------------------------- helpers

def _shift_right(x, s):
    """``x >> s`` for s possibly >= 64 (int64 arrays) or any s (object arrays)."""
    if x.dtype == object:
        return x >> s
    return x >> np.minimum(s, 63)


def _align_magnitude(sig, frac, exp, e_max, F, wide):
    """Align non-negative significands (``sig * 2**(exp - frac)``) to ``F`` fraction bits below ``2**e_max``, truncating."""
    if wide:
        sig = sig.astype(object)
    left = max(F - frac, 0)
    right = (e_max - exp) + max(frac - F, 0)
    if left:
        sig = sig << left
    return _shift_right(sig, right)


def _floor_shift(x, s):
    """Arithmetic shift right (floor) by s >= 0, or left by -s: a round-down alignment."""
    if x.dtype == object:
        out = np.empty_like(x)
        for i, (v, k) in enumerate(zip(x.ravel(), np.broadcast_to(s, x.shape).ravel())):
            out.flat[i] = v >> int(k) if k >= 0 else v << int(-k)
        return out
    s = np.broadcast_to(s, x.shape)
    return np.where(s >= 0, x >> np.clip(s, 0, 63), x << np.clip(-s, 0, 63))


def _to_sign_mag(s):
    sign = (s < 0).astype(np.int8)
    return sign, np.abs(s)


def _normalise(out_fmt: Format, total, exp_lsb, p: Params, rounding=None):
    """Round the exact fixed-point ``total * 2**exp_lsb`` to the output format; zero is +0."""
    sign, mag = _to_sign_mag(total)
    if mag.dtype == object:
        return _normalise_wide(out_fmt, sign, mag, exp_lsb, p, rounding)
    return round_to_format(out_fmt, sign, mag, exp_lsb, rounding or p.out_rounding,
                           frac_bits=p.out_frac_bits, overflow=p.overflow)


def _normalise_wide(out_fmt, sign, mag, exp_lsb, p, rounding):
    """Python-integer path: pre-shift each magnitude to 62 bits keeping a sticky bit, then round."""
    mag = np.asarray(mag, object).ravel()
    exp_lsb = np.broadcast_to(np.asarray(exp_lsb, object), mag.shape).ravel()
    small = np.empty(mag.shape, np.int64)
    e = np.empty(mag.shape, np.int64)
    for i, (m, x) in enumerate(zip(mag, exp_lsb)):
        m, x = int(m), int(x)
        drop = max(m.bit_length() - 61, 0)
        if drop:
            sticky = int(m & ((1 << drop) - 1) != 0)
            # keep a sticky bit below the rounding point (round to odd is enough for every mode here)
            m = ((m >> drop) << 1) | sticky
            x += drop - 1
        small[i], e[i] = m, x
    return round_to_format(out_fmt, np.asarray(sign).ravel(), small, e, rounding or p.out_rounding,
                           frac_bits=p.out_frac_bits, overflow=p.overflow).reshape(np.shape(sign))


def _specials(a_cls, a_sign, b_cls, b_sign, c_cls, c_sign, extra_pinf=None, extra_ninf=None):
    """NaN / +inf / -inf outcome per row (ISA.md FDA step 1)."""
    nan_k = (a_cls == NAN) | (b_cls == NAN) | ((a_cls == INF) & (b_cls == ZERO)) | ((a_cls == ZERO) & (b_cls == INF))
    inf_k = ((a_cls == INF) | (b_cls == INF)) & ~nan_k
    psign = a_sign ^ b_sign
    pinf = (inf_k & (psign == 0)).any(-1) | ((c_cls == INF) & (c_sign == 0))
    ninf = (inf_k & (psign == 1)).any(-1) | ((c_cls == INF) & (c_sign == 1))
    if extra_pinf is not None:
        pinf |= extra_pinf
        ninf |= extra_ninf
    nan = nan_k.any(-1) | (c_cls == NAN) | (pinf & ninf)
    return nan, pinf & ~nan, ninf & ~nan


def _apply_specials(out_fmt, d, nan, pinf, ninf, canonical_nan=True):
    if nan.any():
        d = np.where(nan, special_bits(out_fmt, "nan"), d)
    if pinf.any():
        d = np.where(pinf, special_bits(out_fmt, "inf", 0), d)
    if ninf.any():
        d = np.where(ninf, special_bits(out_fmt, "inf", 1), d)
    return d.astype(out_fmt.dtype)


@dataclass
class _Products:
    sign: np.ndarray
    exp: np.ndarray
    sig: np.ndarray
    frac: int
    zero: np.ndarray
    special: np.ndarray          # either operand is inf or NaN


@functools.cache
def _product_table(fa: Format, fb: Format):
    """Every product of two narrow formats, computed once (one gather per product later)."""
    ia, ib = np.meshgrid(np.arange(1 << fa.value_bits), np.arange(1 << fb.value_bits), indexing="ij")
    da = decode(fa, ia.ravel().astype(np.uint64) << np.uint64(fa.ignored_low_bits))
    db = decode(fb, ib.ravel().astype(np.uint64) << np.uint64(fb.ignored_low_bits))
    return (da.sign ^ db.sign, (da.exp + db.exp).astype(np.int64), da.sig * db.sig,
            (da.cls == ZERO) | (db.cls == ZERO), (da.cls >= INF) | (db.cls >= INF))


def _products(fa: Format, a, fb: Format, b) -> _Products:
    """Exact, unnormalised products ``s_a*s_b * 2**(e_a+e_b)`` (ISA.md FDA step 2)."""
    frac = fa.man_bits + fb.man_bits
    if fa.value_bits + fb.value_bits <= 16:
        idx = (((a.astype(np.int64) >> fa.ignored_low_bits) & ((1 << fa.value_bits) - 1)) << fb.value_bits) | \
              ((b.astype(np.int64) >> fb.ignored_low_bits) & ((1 << fb.value_bits) - 1))
        sign, exp, sig, zero, special = (t[idx] for t in _product_table(fa, fb))
        return _Products(sign, exp, sig, frac, zero, special)
    da, db = decode(fa, a), decode(fb, b)
    return _Products(da.sign ^ db.sign, da.exp.astype(np.int64) + db.exp, da.sig * db.sig, frac,
                     (da.cls == ZERO) | (db.cls == ZERO), (da.cls >= INF) | (db.cls >= INF))


def _needs_wide(frac, F, int_bits, terms):
    return max(F - frac, 0) + frac + int_bits + int(terms).bit_length() + 1 > 62


# --------------------------------------------------------------------------- chains

def run(params: Params, a, b, c, fa, fb, fc, fd, scale_a=None, scale_b=None, fs=None, block=None, trace=None):
    """Run an algorithm (and its chain of passes) on ``[R, K]`` operands; returns d bits ``[R]``."""
    fa, fb, fc, fd = (get_format(f) for f in (fa, fb, fc, fd))
    fs = get_format(fs) if fs is not None else None
    k = a.shape[-1]
    L = params.pass_size if params.pass_size and params.base not in ("SFMA", "GPS") else k
    if k % L:
        raise ValueError(f"K={k} is not a multiple of the pass size L={L}")
    step = _PASSES[params.base]
    for j in range(0, k, L):
        sa = sb = None
        if scale_a is not None:
            sa = scale_a[:, j // block:(j + L) // block]
            sb = scale_b[:, j // block:(j + L) // block]
        if trace is not None and k > L:
            trace.append((f"pass {j // L} (products {j}..{j + L - 1})", {}))
        c = step(params, a[:, j:j + L], b[:, j:j + L], c, fa, fb, fc, fd, sa, sb, fs, block, trace)
        fc = fd                              # the next pass takes this result as c
    return c


# --------------------------------------------------------------------------- FDA

def fda(p: Params, a, b, c, fa, fb, fc, fd, scale_a=None, scale_b=None, fs=None, block=None, trace=None):
    """One fused dot-add pass (ISA.md section 3, FDA; with scales when given)."""
    prod = _products(fa, a, fb, b)
    dc = decode(fc, c)
    exp = prod.exp
    if scale_a is not None:
        sa, sb = decode(fs, scale_a), decode(fs, scale_b)
        per_block = np.repeat(sa.exp.astype(np.int64) + sb.exp, block, axis=-1)[:, :a.shape[-1]]
        exp = exp + per_block
    exp = np.where(prod.zero, p.e_zero, exp)
    c_exp = np.where(dc.cls == ZERO, p.e_zero, dc.exp.astype(np.int64))
    e_max = np.maximum(exp.max(-1), c_exp)
    wide = _needs_wide(prod.frac, p.F, 2, a.shape[-1] + 1)
    A = _align_magnitude(prod.sig, prod.frac, exp, e_max[:, None], p.F, wide)
    C = _align_magnitude(dc.sig, fc.man_bits, c_exp, e_max, p.F, wide)
    terms_sign = prod.sign
    total = np.where(terms_sign == 1, -A, A).sum(-1) + np.where(dc.sign == 1, -C, C)
    d = _normalise(fd, total, e_max - p.F, p)
    if trace is not None:
        trace.append(("products (exact, unnormalised)", {"sign": prod.sign, "exponent": exp, "significand": prod.sig,
                                                        "significand fraction bits": prod.frac}))
        trace.append(("maximum exponent", {"e_max": e_max, "c exponent": c_exp}))
        trace.append((f"aligned to F={p.F} fraction bits (RZ)", {"products": np.where(terms_sign == 1, -A, A), "c": np.where(dc.sign == 1, -C, C)}))
        trace.append(("fixed-point sum", {"sum": total, "value": total * 1.0 * np.exp2((e_max - p.F).astype(float))}))
    special_rows = prod.special.any(-1) | (dc.cls >= INF)
    if scale_a is not None:
        scale_nan = (sa.cls == NAN).any(-1) | (sb.cls == NAN).any(-1)
        special_rows |= scale_nan
    if special_rows.any():
        r = np.nonzero(special_rows)[0]
        da, db = decode(fa, a[r]), decode(fb, b[r])
        nan, pinf, ninf = _specials(da.cls, da.sign, db.cls, db.sign, dc.cls[r], dc.sign[r])
        if scale_a is not None:
            nan |= scale_nan[r]
            pinf &= ~nan
            ninf &= ~nan
        d[r] = _apply_specials(fd, d[r], nan, pinf, ninf)
    if trace is not None:
        trace.append(("result", {"d": d}))
    return d


# --------------------------------------------------------------------------- GDFS

def gdfs(p: Params, a, b, c, fa, fb, fc, fd, scale_a, scale_b, fs, block, trace=None):
    """Group-dot-fused-sum for block-scaled FP4 (ISA.md section 3, GDFS)."""
    if scale_a is None:
        raise ValueError("GDFS needs block scales (scale_a and scale_b)")
    g = p.group or 16
    prod = _products(fa, a, fb, b)
    # Products as exact integers in units of 2**unit_exp (e2m1: quarters, |p| <= 36).
    base = fa.emin + fb.emin                          # smallest product exponent
    exact = np.where(prod.zero, 0, prod.sig << (prod.exp - base).clip(0, 62))
    unit_exp = base - prod.frac
    signed = np.where(prod.sign == 1, -exact, exact)
    R, K = a.shape
    sigma = signed.reshape(R, K // g, g).sum(-1)                     # exact group sums
    sa, sb = decode(fs, scale_a), decode(fs, scale_b)
    reps = max(block // g, 1)
    s_sig = np.repeat(sa.sig * sb.sig, reps, axis=-1)[:, :K // g]
    s_exp = np.repeat(sa.exp.astype(np.int64) + sb.exp, reps, axis=-1)[:, :K // g]
    # Group term (ISA.md fact 1): significand sigma * scale significands, unnormalised, with
    # `frac` fraction bits; exponent = the sum of the two scale exponents.
    frac = 2 * fs.man_bits - unit_exp
    gsig = np.abs(sigma) * s_sig
    gzero = gsig == 0
    gexp = np.where(gzero, p.e_zero, s_exp)
    dc = decode(fc, c)
    c_exp = np.where(dc.cls == ZERO, p.e_zero, dc.exp.astype(np.int64))
    e_max = np.maximum(gexp.max(-1), c_exp)
    wide = _needs_wide(frac, p.F, 14 + 2 * fs.man_bits, K // g + 1)
    G = _align_magnitude(gsig, frac, gexp, e_max[:, None], p.F, wide)
    C = _align_magnitude(dc.sig, fc.man_bits, c_exp, e_max, p.F, wide)
    total = np.where(sigma < 0, -G, G).sum(-1) + np.where(dc.sign == 1, -C, C)
    d = _normalise(fd, total, e_max - p.F, p)
    if trace is not None:
        trace.append(("exact products", {"products (units of 2^%d)" % unit_exp: signed}))
        trace.append((f"group sums of {g}", {"sigma": sigma}))
        trace.append(("scaled group terms", {"significand": np.where(sigma < 0, -gsig, gsig), "fraction bits": frac,
                                             "exponent": gexp}))
        trace.append(("maximum exponent", {"e_max": e_max, "c exponent": c_exp}))
        trace.append((f"aligned to F={p.F} (RZ) and summed", {"sum": total}))
    nan = (sa.cls == NAN).any(-1) | (sb.cls == NAN).any(-1) | (dc.cls == NAN)
    cinf = (dc.cls == INF) & ~nan
    d = _apply_specials(fd, d, nan, cinf & (dc.sign == 0), cinf & (dc.sign == 1))
    if trace is not None:
        trace.append(("result", {"d": d}))
    return d


# --------------------------------------------------------------------------- FDRDA / GFDRDA

def _amd_products(p, fa, a, fb, b):
    prod = _products(fa, a, fb, b)
    # Overflow: |s| >= 2 counts one more in the exponent; e >= 128 is infinity (ISA.md fact 4).
    norm_exp = prod.exp + (prod.sig >= (2 << prod.frac))
    over = ~prod.zero & ~prod.special & (norm_exp >= 128) if p.product_overflow else np.zeros_like(prod.zero)
    exp = np.where(prod.zero | over, EXCLUDED, prod.exp)   # zero products are left out of the maximum
    sig = np.where(over, 0, prod.sig)
    return prod, exp, sig, over


def _group_dot(p, prod, exp, sig):
    """Align a set of products to its own maximum (F, truncated) and sum: ``(s, e)`` with F fraction bits."""
    e = exp.max(-1)
    A = _align_magnitude(sig, prod.frac, exp, e[:, None], p.F, False)
    s = np.where(prod.sign == 1, -A, A).sum(-1)
    return s, e


def _merge_with_c(p, fd, s_dot, e_dot, dc, drop_c, trace):
    """FDRDA steps 6-8 with the exact floors of ISA.md fact 4."""
    c_exp = dc.exp.astype(np.int64)                  # a zero c keeps the minimum exponent, -126
    has_dot = e_dot > EXCLUDED // 2
    e_max = np.where(has_dot, np.maximum(e_dot, c_exp), c_exp)
    D = _floor_shift(s_dot, (e_max - e_dot) - (p.dot_floor_bits - p.F))
    D = np.where(has_dot, D, 0)
    sc = np.where(dc.sign == 1, -dc.sig, dc.sig)
    Cq = _floor_shift(sc, (e_max - c_exp) - (p.c_floor_bits - 23))
    if drop_c is not None:
        Cq = np.where(c_exp < e_max - drop_c, 0, Cq)
    T = D + (Cq << (p.dot_floor_bits - p.c_floor_bits))   # dot_floor_bits fraction bits below 2**e_max
    lsb = e_max - p.dot_floor_bits
    top = lsb + bit_length(np.abs(T)) - 1
    e_n = np.maximum(top, -126)
    Tn = _floor_shift(T, (e_n - p.final_floor_bits) - lsb)
    d = _normalise(fd, Tn, e_n - p.final_floor_bits, p, rounding="RNE")
    if trace is not None:
        trace.append(("maximum exponent with c", {"e_dot": np.where(has_dot, e_dot, np.nan), "e_c": c_exp, "e_max": e_max}))
        trace.append((f"round-down alignment (dot: {p.dot_floor_bits}, c: {p.c_floor_bits} fraction bits)",
                      {"dot": D, "c": Cq}))
        trace.append((f"normalised, floored to {p.final_floor_bits} fraction bits", {"significand": Tn, "exponent": e_n}))
    return d


def fdrda(p: Params, a, b, c, fa, fb, fc, fd, scale_a=None, scale_b=None, fs=None, block=None, trace=None):
    """Fused dot, round-down add (CDNA3 tf32/f16/bf16; ISA.md section 3, FDRDA)."""
    prod, exp, sig, over = _amd_products(p, fa, a, fb, b)
    s_dot, e_dot = _group_dot(p, prod, exp, sig)
    if trace is not None:
        trace.append(("products (exact, unnormalised; zeros excluded)", {"sign": prod.sign, "exponent": exp, "significand": sig}))
        trace.append((f"products aligned to their maximum, F={p.F} (RZ), summed", {"s_dot": s_dot, "e_dot": e_dot}))
    dc = decode(fc, c)
    d = _merge_with_c(p, fd, s_dot, e_dot, dc, None, trace)
    return _amd_specials(fa, a, fb, b, fd, d, prod, over, dc, trace)


def gfdrda(p: Params, a, b, c, fa, fb, fc, fd, scale_a=None, scale_b=None, fs=None, block=None, trace=None):
    """Group fused dot, round-down add (CDNA3 fp8/bf8; ISA.md section 3, GFDRDA)."""
    prod, exp, sig, over = _amd_products(p, fa, a, fb, b)
    parts = []
    for start in (0, 1):
        sub = _Products(prod.sign[:, start::2], exp[:, start::2], sig[:, start::2], prod.frac, None, None)
        parts.append(_group_dot(p, sub, sub.exp, sub.sig))
    (s_e, e_e), (s_o, e_o) = parts
    has_e, has_o = e_e > EXCLUDED // 2, e_o > EXCLUDED // 2
    e_dot = np.maximum(e_e, e_o)
    merged = p.merge_floor_bits - p.F
    s_dot = (np.where(has_e, _floor_shift(s_e, e_dot - e_e - merged), 0) +
             np.where(has_o, _floor_shift(s_o, e_dot - e_o - merged), 0))
    if trace is not None:
        trace.append(("products (exact, unnormalised; zeros excluded)", {"sign": prod.sign, "exponent": exp, "significand": sig}))
        trace.append((f"even / odd products aligned, F={p.F} (RZ), summed", {"s_even": s_e, "e_even": e_e, "s_odd": s_o, "e_odd": e_o}))
        trace.append((f"merged with round-down at {p.merge_floor_bits} fraction bits", {"s_dot": s_dot, "e_dot": e_dot}))
    dc = decode(fc, c)
    # the dot sum now has merge_floor_bits fraction bits
    d = _merge_with_c(p.with_(F=p.merge_floor_bits), fd, s_dot, e_dot, dc, p.c_drop, trace)
    return _amd_specials(fa, a, fb, b, fd, d, prod, over, dc, trace)


def _amd_specials(fa, a, fb, b, fd, d, prod, over, dc, trace):
    rows = prod.special.any(-1) | over.any(-1) | (dc.cls >= INF)
    if rows.any():
        r = np.nonzero(rows)[0]
        da, db = decode(fa, a[r]), decode(fb, b[r])
        ps = prod.sign[r]
        nan, pinf, ninf = _specials(da.cls, da.sign, db.cls, db.sign, dc.cls[r], dc.sign[r],
                                    (over[r] & (ps == 0)).any(-1), (over[r] & (ps == 1)).any(-1))
        d[r] = _apply_specials(fd, d[r], nan, pinf, ninf)
    if trace is not None:
        trace.append(("result", {"d": d}))
    return d


# --------------------------------------------------------------------------- GPS

_F32_TINY = np.float32(2.0 ** -126)


def _flush_signed(x):
    """Subnormal f32 results become zero of the same sign."""
    return np.where(np.abs(x) < _F32_TINY, x * np.float32(0.0), x)


def _pairwise_sum(p):
    """PAIRWISESUM of the paper's Algorithm 2: (p0+p1)+(p2+p3), each add flushed."""
    n = p.shape[-1]
    if n == 1:
        return p[..., 0]
    left = _pairwise_sum(p[..., : n // 2])
    right = _pairwise_sum(p[..., n // 2:])
    return _flush_signed(left + right)


def gps(p: Params, a, b, c, fa, fb, fc, fd, scale_a=None, scale_b=None, fs=None, block=None, trace=None):
    """Group pairwise sum with subnormal flushing (CDNA2 f16/bf16; ISA.md section 3, GPS)."""
    from .formats import to_float
    with np.errstate(all="ignore"):
        av = _flush_input(fa, a)
        bv = _flush_input(fb, b)
        prods = _flush_signed(av * bv)
        cv = to_float(fc, c).astype(np.float32)
        d = np.where(np.abs(cv) < _F32_TINY, np.float32(0.0), cv)
        R, K = a.shape
        g = p.group
        groups = prods.reshape(R, K // g, g)
        sums = []
        for j in range(K // g):
            gamma = _pairwise_sum(groups[:, j])
            sums.append(gamma)
            d = _flush_signed(d + gamma)
    if trace is not None:
        trace.append(("inputs after flushing subnormals to +0 (f32)", {"a": av, "b": bv}))
        trace.append(("f32 products, subnormals flushed", {"p": prods}))
        trace.append((f"pairwise group sums (G={g})", {"gamma": np.stack(sums, -1)}))
        trace.append(("sequential accumulation into c", {"d": d}))
    return d.astype(np.float32).view(np.uint32).astype(get_format(fd).dtype)


def _flush_input(fmt, bits):
    from .formats import to_float
    dec = decode(fmt, bits)
    v = to_float(fmt, bits).astype(np.float32)
    return np.where((dec.cls == SUBNORMAL) | (dec.cls == ZERO), np.float32(0.0), v)


# --------------------------------------------------------------------------- SFMA

def sfma(p: Params, a, b, c, fa, fb, fc, fd, scale_a=None, scale_b=None, fs=None, block=None, trace=None):
    """Sequential IEEE fused multiply-adds, RNE (ISA.md section 3, SFMA)."""
    from .fma import fma_f32, fma_f64      # imported here: only SFMA needs it
    fd = get_format(fd)
    fma = {"f64": fma_f64, "f32": fma_f32}[fd.name]
    dt = fd.dtype
    d = np.asarray(c).astype(dt)
    steps = []
    for k in range(a.shape[-1]):
        d = fma(a[:, k].astype(dt), b[:, k].astype(dt), d)
        steps.append(d)
    if trace is not None:
        trace.append(("after each fma", {"d_k": np.stack(steps, -1)}))
    return d


_PASSES = {"FDA": fda, "GDFS": gdfs, "FDRDA": fdrda, "GFDRDA": gfdrda, "GPS": gps, "SFMA": sfma}
