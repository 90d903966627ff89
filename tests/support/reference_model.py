"""A slow, scalar, independent reference model of the dot-add (N-version testing).

Written from the project's specification (docs/spec.md, sections 3 and 4) and the paper's
section IV step lists, *not* from ``golden/algorithms.py``.  Nothing from
``golden.formats`` is used either: the bit decoding, the rounding and the
encoding below are this file's own, on Python ints and
``fractions.Fraction``.  Only the instruction's catalog data (formats,
``Instruction.params``, scale format and block size) is read from the
``Instruction`` object.

Entry point::

    ref_dot_add(instr, a, b, c, scale_a=None, scale_b=None) -> int

``a``, ``b`` are lists of K bit patterns (one element per int, narrow formats
in the low bits), ``c`` one bit pattern, ``scale_a``/``scale_b`` lists of
K // block_size scale bytes.  The result is D's bit pattern.

Readings of docs/spec.md that the text leaves open (each is marked ``AMBIGUITY`` at
the place it is used).  For A2, A3 and A5 golden/ (commit 00508ed) took the
other reading; 576d823 changed it to this one.  ``ref_dot_add`` keeps a
keyword option for each other reading, so a test report can say when golden
matches it:

A1  FDA f32 output with out_frac_bits = 13 ("E8M13"): the quantum of the
    result is 2^(max(e, -126) - 13), i.e. the exponent floor of f32 applies
    and below 2^-126 the result is on the fixed 2^-139 grid.  (With F = 13
    alignment in the catalog this case cannot produce a different value from
    the other obvious reading, so it is moot.)
A2  NVIDIA FDA/CoFDA/GDFS: a nonzero sum that truncates (f32, RZ) or rounds
    (f16, RNE) to zero gives +0 (docs/spec.md §4.3: "never return -0; a zero result is
    +0").  Option underflow_zero_sign="keep" gives the sum's sign instead.
A3  GDFS: a group term takes e_zero = -139 when all 16 of its products are
    zero or its scale product is zero (docs/spec.md §4.1 wording).  A group whose
    products are nonzero but cancel to a zero sum keeps the exponent
    e_sa + e_sb ("its exponent is just the sum of the two scale exponents").
    Option gdfs_zero_group="sum" gives every zero group sum e_zero.
A4  FDA with scales: a zero product takes e_zero (-133) without the scale
    exponents; a NaN scale gives NaN even where its block's products are
    all zero.
A5  FDRDA/GFDRDA special values follow the paper's step order literally:
    step 1 looks only at the inputs (NaN, 0*inf, infinite operands and c);
    if that finds exactly one kind of infinity the result is that infinity
    and product overflow (step 2/3) is never looked at.  So c = -inf with a
    product that overflows to +inf gives -inf, not NaN.  Option
    inf_rule="combined" pools all infinities (both signs -> NaN).
A6  FDRDA/GFDRDA: when every product of a pass is zero there is no e_dot
    (zero products are left out of the maximum), so e_max = e_c and the dot
    part is 0.  In GFDRDA an all-zero parity set is likewise left out of
    e_dot = max(e_even, e_odd).
A7  FDRDA/GFDRDA signed zero (not fixed by docs/spec.md): a fixed-point sum that is
    exactly zero gives +0; a nonzero value that the final RNE step rounds to
    zero keeps its sign (IEEE), e.g. -2^-157 -> -0.
A8  FDRDA/GFDRDA: the dot part is floored at dot_floor_bits = 32 (docs/spec.md §4.4,
    which overrides the paper's "31st fractional bit"); the product exponent
    is the unnormalised e_a + e_b, as in FDA (paper: "basically the same as
    Step 2 of the FDA algorithm"); product overflow is |p| >= 2^128.
A9  GPS: subnormal inputs are those of the input's own format (f16: below
    2^-14), per docs/spec.md §3 / the paper's step 1 text, not the |x| < 2^-126 test of
    the paper's Algorithm 3.  Zero inputs (+0 and -0) become +0.  The flush
    of products/sums is applied after RNE rounding to f32 (with gradual
    underflow), to |x| < 2^-126, keeping the sign.  c below 2^-126 (including
    -0) becomes +0.  Sums follow IEEE 754 (x + (-x) = +0, (-0) + (-0) = -0).
A10 Chains: pass i > 0 takes the previous pass's result, rounded to D's
    format, as c in D's format.  Scales are indexed by the global product
    index.
A12 FDA f16 output: one IEEE RNE rounding of the exact fixed-point sum (with
    f16 subnormals); the paper's "round at the 10th bit, >= 65520 is
    infinity, else normalise to FP16 again with RNE" is the same function.
    A "zero product" is one with a zero operand (a subnormal is not zero).
A11 NaN results: NVIDIA FDA/CoFDA/GDFS give the canonical 0x7FFFFFFF /
    0x7FFF; for SFMA, GPS, FDRDA and GFDRDA this model returns the default
    quiet NaN (0x7FC00000 / 0x7FF8000000000000); only NaN-ness is meaningful
    there.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

__all__ = ["FORMAT_SPECS", "decode", "value_of", "encode_value", "round_value", "ref_dot_add",
           "NVIDIA_CANONICAL_NAN", "is_nan_bits"]

# --------------------------------------------------------------------------- formats
#
# name: (storage_bits, exp_bits, man_bits, bias, special)
#   special: "ieee"  all-ones exponent: infinity (mantissa 0) or NaN
#            "fn"    OCP e4m3: no infinity; exponent and mantissa all ones = NaN
#            "fnuz"  no infinity, no -0; sign bit alone (0x80) = NaN
#            "none"  every pattern is a finite number (fp6, fp4)
#            "e8m0"  unsigned power of two 2^(byte-127), 0xFF = NaN
#            "ue4m3" unsigned e4m3, top bit of the byte ignored, 0x7F = NaN
#            "tf32"  the f32 word with its low 13 bits ignored
FORMAT_SPECS = {
    "f64": (64, 11, 52, 1023, "ieee"),
    "f32": (32, 8, 23, 127, "ieee"),
    "tf32": (32, 8, 23, 127, "tf32"),
    "f16": (16, 5, 10, 15, "ieee"),
    "bf16": (16, 8, 7, 127, "ieee"),
    "e4m3": (8, 4, 3, 7, "fn"),
    "e5m2": (8, 5, 2, 15, "ieee"),
    "e4m3fnuz": (8, 4, 3, 8, "fnuz"),
    "e5m2fnuz": (8, 5, 2, 16, "fnuz"),
    "e3m2": (6, 3, 2, 3, "none"),
    "e2m3": (6, 2, 3, 1, "none"),
    "e2m1": (4, 2, 1, 1, "none"),
    "ue8m0": (8, 8, 0, 127, "e8m0"),
    "ue4m3": (8, 4, 3, 7, "ue4m3"),
}

NVIDIA_CANONICAL_NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF}
_DEFAULT_NAN = {"f64": 0x7FF8000000000000, "f32": 0x7FC00000, "f16": 0x7E00}

# A decoded element is one of
#   ("nan",)
#   ("inf", neg)
#   ("num", neg, sig, exp, mbits)   value = (-1)^neg * sig / 2^mbits * 2^exp
# where sig includes the hidden bit for normal numbers and exp is the
# unbiased exponent; subnormals and zero have exp = 1 - bias (docs/spec.md §4.7) and no
# hidden bit.  sig / 2^mbits is the significand "s" of the paper.


@cache
def _decode_cached(fmt: str, bits: int):
    return _decode(fmt, bits)


def decode(fmt: str, bits: int):
    bits = int(bits)
    if FORMAT_SPECS[fmt][0] <= 16:
        return _decode_cached(fmt, bits)
    return _decode(fmt, bits)


def _decode(fmt: str, bits: int):
    storage, E, M, bias, special = FORMAT_SPECS[fmt]
    if special == "tf32":
        bits &= ~((1 << 13) - 1) & 0xFFFFFFFF       # low 13 bits ignored (may turn NaN into inf)
        special = "ieee"
    if special == "e8m0":
        bits &= 0xFF
        if bits == 0xFF:
            return ("nan",)
        return ("num", False, 1, bits - 127, 0)     # 2^(byte-127), no mantissa
    if special == "ue4m3":
        bits &= 0x7F                                # top bit ignored
        if bits == 0x7F:
            return ("nan",)
        neg = False
    else:
        bits &= (1 << storage) - 1
        neg = bool((bits >> (E + M)) & 1)
    ef = (bits >> M) & ((1 << E) - 1)
    mf = bits & ((1 << M) - 1)
    all_e = (1 << E) - 1
    if special == "ieee" and ef == all_e:
        return ("inf", neg) if mf == 0 else ("nan",)
    if special == "fn" and ef == all_e and mf == (1 << M) - 1:
        return ("nan",)
    if special == "fnuz" and neg and ef == 0 and mf == 0:
        return ("nan",)
    emin = 1 - bias
    if ef == 0:
        return ("num", neg, mf, emin, M)
    return ("num", neg, (1 << M) | mf, ef - bias, M)


def value_of(d) -> Fraction:
    """Exact value of a decoded finite element."""
    _, neg, sig, exp, mb = d
    v = Fraction(sig) * _p2(exp - mb)
    return -v if neg else v


def _p2(n: int) -> Fraction:
    return Fraction(1 << n) if n >= 0 else Fraction(1, 1 << -n)


def _is_zero(d) -> bool:
    return d[0] == "num" and d[2] == 0


def is_nan_bits(fmt: str, bits: int) -> bool:
    return decode(fmt, bits)[0] == "nan"


# --------------------------------------------------------------------------- rounding and encoding
# Only the IEEE output formats (f64, f32, f16) are ever produced.

def _floor_log2(x: Fraction) -> int:
    """e with 2^e <= x < 2^(e+1), for x > 0."""
    n, d = x.numerator, x.denominator
    e = n.bit_length() - d.bit_length()
    if _p2(e) > x:
        e -= 1
    return e


def _ieee_params(fmt):
    storage, E, M, bias, special = FORMAT_SPECS[fmt]
    assert special == "ieee", fmt
    emin = 1 - bias
    emax = (1 << E) - 2 - bias
    return storage, E, M, bias, emin, emax


def _encode_exact(fmt: str, neg: bool, mag: Fraction) -> int:
    """Bits of +-mag, which must be exactly representable (finite) in fmt."""
    storage, E, M, bias, emin, emax = _ieee_params(fmt)
    sbit = (1 << (storage - 1)) if neg else 0
    if mag == 0:
        return sbit
    e = _floor_log2(mag)
    if e < emin:
        m = mag / _p2(emin - M)
        assert m.denominator == 1 and m < (1 << M), (fmt, mag)
        return sbit | int(m)
    assert e <= emax, (fmt, mag)
    m = mag / _p2(e - M)
    assert m.denominator == 1, (fmt, mag)
    return sbit | ((e + bias) << M) | (int(m) - (1 << M))


def _inf_bits(fmt: str, neg: bool) -> int:
    storage, E, M, bias, emin, emax = _ieee_params(fmt)
    return ((1 << (storage - 1)) if neg else 0) | (((1 << E) - 1) << M)


def round_value(fmt: str, x: Fraction, mode: str = "RNE", frac_bits: int | None = None):
    """Round the exact value x to fmt: returns ("inf", neg) or ("num", neg, mag).

    Gradual underflow (fixed quantum 2^(emin - frac_bits) below 2^emin).
    RNE overflows to infinity (the rounded value exceeds the largest
    finite); RZ saturates to the largest finite value; RD and RU give
    infinity on the side they round toward and saturate on the other.  The sign of a result
    that rounds to zero is the sign of x (x itself must be nonzero).
    """
    storage, E, M, bias, emin, emax = _ieee_params(fmt)
    p = M if frac_bits is None else frac_bits
    neg = x < 0
    mag = -x if neg else x
    assert mag > 0
    e = max(_floor_log2(mag), emin)
    q = _p2(e - p)
    t = mag / q
    n = t.numerator // t.denominator
    r = t - n
    away = (mode == "RU" and not neg) or (mode == "RD" and neg)       # the magnitude rounds up
    if mode == "RNE":
        if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2 == 1):
            n += 1
    elif mode in ("RZ", "RD", "RU"):
        n += 1 if away and r > 0 else 0
    else:
        raise ValueError(mode)
    out = n * q
    max_finite = (2 - _p2(-M)) * _p2(emax)
    if out > max_finite:
        if mode == "RNE" or away:                 # IEEE 754 7.4: toward the overflow, infinity
            return ("inf", neg)
        out = max_finite
    return ("num", neg, out)


def encode_value(fmt: str, r) -> int:
    if r[0] == "inf":
        return _inf_bits(fmt, r[1])
    return _encode_exact(fmt, r[1], r[2])


def round_to_bits(fmt: str, x: Fraction, mode: str = "RNE") -> int:
    """Convenience for callers (tests): exact x (zero gives +0) rounded into fmt."""
    if x == 0:
        return 0
    return encode_value(fmt, round_value(fmt, x, mode))


# --------------------------------------------------------------------------- helpers

def _products_specials(da, db):
    """Step 1 of FDA/FDRDA on one pass: returns ("nan",), ("inf", neg) or None.

    A NaN anywhere, or 0 * inf, gives NaN; infinite products and c of both
    signs give NaN; one kind of infinity is the result.
    """
    infs = set()
    for x, y in zip(da, db):
        if x[0] == "nan" or y[0] == "nan":
            return ("nan",)
    for x, y in zip(da, db):
        if x[0] == "inf" or y[0] == "inf":
            if _is_zero(x) or _is_zero(y):
                return ("nan",)
            infs.add(x[1] != y[1])
    return infs


def _chunks(k: int, size: int | None):
    size = size or k
    return [(lo, min(lo + size, k)) for lo in range(0, k, size)]


# --------------------------------------------------------------------------- FDA (NVIDIA)

def _fda_pass(p, fd, da, db, dc, sa_exp, is_nan_scale, opts):
    """One FDA pass; sa_exp[i] is the summed scale exponent of product i (0 unscaled)."""
    nan = NVIDIA_CANONICAL_NAN[fd]
    # Step 1: special values.
    if is_nan_scale or dc[0] == "nan":
        return nan
    infs = _products_specials(da, db)
    if infs == ("nan",):
        return nan
    if dc[0] == "inf":
        infs.add(dc[1])
    if len(infs) == 2:
        return nan
    if len(infs) == 1:
        return _inf_bits(fd, infs.pop())
    # Step 2: exact, unnormalised products s_k = s_a s_b, e_k = e_a + e_b (+ scale exponents).
    terms = []                      # (neg, num, den_bits, exp): value = num / 2^den_bits * 2^exp
    for i, (x, y) in enumerate(zip(da, db)):
        if _is_zero(x) or _is_zero(y):
            terms.append((False, 0, 0, p.e_zero))          # AMBIGUITY A4: e_zero without scale exps
        else:
            terms.append((x[1] != y[1], x[2] * y[2], x[4] + y[4], x[3] + y[3] + sa_exp[i]))
    if _is_zero(dc):
        terms.append((False, 0, 0, p.e_zero))
    else:
        terms.append((dc[1], dc[2], dc[4], dc[3]))
    # the signs of zero terms, for zero_sign="ieee754" (IEEE 754 6.3 on a zero sum)
    zero_signs = {x[1] != y[1] for x, y in zip(da, db)} | {dc[1]} \
        if all(_is_zero(x) or _is_zero(y) for x, y in zip(da, db)) and _is_zero(dc) else None
    if p.F == "exact":              # no window: the exact sum of the terms, rounded once
        v = sum((Fraction(-num if neg else num) * _p2(exp - den) for neg, num, den, exp in terms), Fraction(0))
        return _fda_normalise(p, fd, v, opts, zero_signs)
    # Step 3: align to e_max keeping F fractional bits, truncating the magnitude.
    e_max = max(t[3] for t in terms)
    F = p.F
    total = 0
    for neg, num, den, exp in terms:
        v = (num << F) >> (den + e_max - exp)
        total += -v if neg else v
    # Step 4 done (exact integer sum, unit 2^(e_max - F)); step 5: normalise.
    return _fda_normalise(p, fd, Fraction(total) * _p2(e_max - F), opts, zero_signs)


def _custom_normalise(p, fd, v: Fraction, zero_signs) -> int:
    """A design of the new fields (F="exact", zero_sign="ieee754", any rounding and overflow rule):
    IEEE rounding of the sum with the design's mode; a zero sum signed by IEEE 754 6.3."""
    if v == 0:
        if p.zero_sign != "ieee754":
            return 0
        if zero_signs == {True}:                           # every term is -0
            return encode_value(fd, ("num", True, Fraction(0)))
        neg = p.out_rounding == "RD" and zero_signs != {False}
        return encode_value(fd, ("num", neg, Fraction(0)))
    storage, E, M, bias, emin, emax = _ieee_params(fd)
    if p.overflow == "inf" and abs(v) >= _p2(emax + 1):
        return _inf_bits(fd, v < 0)
    r = round_value(fd, v, p.out_rounding, p.out_frac_bits)
    if p.overflow == "inf" and r[0] == "num" and r[2] >= _p2(emax + 1):
        return _inf_bits(fd, v < 0)
    if r[0] == "num" and r[2] == 0 and p.zero_sign == "positive":
        return 0
    return encode_value(fd, r)


def _fda_normalise(p, fd, v: Fraction, opts, zero_signs=None) -> int:
    if p.F == "exact" or p.zero_sign != "positive" or p.out_rounding in ("RD", "RU"):
        return _custom_normalise(p, fd, v, zero_signs)
    if v == 0:
        return 0                                           # +0 (docs/spec.md §4.3)
    if fd == "f32":
        # docs/spec.md §4.3: RZ.  RNE only for the measured compiled paths that are no native instruction
        # (catalog MMA.16832.F32.*, docs/gpu/unresolved_fp8.md); |v| >= 2^128 is infinite in both.
        assert p.out_rounding in ("RZ", "RNE") and p.overflow == "inf"
        if abs(v) >= _p2(128):
            return _inf_bits("f32", v < 0)
        # AMBIGUITY A1: quantum 2^(max(e, -126) - out_frac_bits).
        r = round_value("f32", v, p.out_rounding, p.out_frac_bits)
    elif fd == "f16":
        assert p.out_rounding == "RNE"
        r = round_value("f16", v, "RNE")
    else:
        raise ValueError(fd)
    if r[0] == "num" and r[2] == 0:                       # AMBIGUITY A2: never -0 ...
        if opts["underflow_zero_sign"] == "keep":           # ... unless asked for the other reading
            return encode_value(fd, r)
        return 0
    return encode_value(fd, r)


def _fda(instr, a, b, c, sa, sb, opts):
    p = instr.params
    fa, fb, fc, fd = instr.a_format, instr.b_format, instr.c_format, instr.d_format
    k = len(a)
    scaled = instr.scale_format is not None
    sexp = [0] * k
    nan_scale = False
    if scaled:
        blk = instr.block_size
        ds_a = [decode(instr.scale_format, s) for s in sa]
        ds_b = [decode(instr.scale_format, s) for s in sb]
        nan_scale = any(d[0] == "nan" for d in ds_a + ds_b)     # AMBIGUITY A4: any scale
        if not nan_scale:
            for i in range(k):
                x, y = ds_a[i // blk], ds_b[i // blk]
                assert x[2] == 1 and x[4] == 0 and y[2] == 1 and y[4] == 0   # ue8m0: powers of two
                sexp[i] = x[3] + y[3]
    lowered = getattr(p, "c_last", False) or getattr(p, "operand_format", None) or getattr(p, "pass_interleave", None)
    if lowered:                                   # a compiled path: _lowered puts it together
        return _lowered(instr, a, b, c, opts)
    acc, acc_fmt = c, fc
    for lo, hi in _chunks(k, p.pass_size):
        da = [decode(fa, x) for x in a[lo:hi]]
        db = [decode(fb, y) for y in b[lo:hi]]
        acc = _fda_pass(p, fd, da, db, decode(acc_fmt, acc), sexp[lo:hi], nan_scale, opts)
        acc_fmt = fd                                      # AMBIGUITY A10
    return acc


def _to_format(fmt_from: str, fmt_to: str, bits: int) -> int:
    """An element re-encoded in another (IEEE) format, exactly; NaN as fmt_to's canonical NaN."""
    d = decode(fmt_from, bits)
    if d[0] == "nan":
        return NVIDIA_CANONICAL_NAN[fmt_to]
    if d[0] == "inf":
        return _inf_bits(fmt_to, d[1])
    return _encode_exact(fmt_to, d[1], abs(value_of(d)))


def _lowered(instr, a, b, c, opts):
    """The compiled FDA path of golden.Params' lowering fields, written from their definition:
    operands re-encoded in operand_format; pass j takes the runs of pass_interleave consecutive
    products whose run number is j modulo the number of passes; with c_last the passes start from
    +0 and c is added at the end by one IEEE add (RNE; canonical NaN; a zero is +0)."""
    p = instr.params
    fa, fb, fc, fd = instr.a_format, instr.b_format, instr.c_format, instr.d_format
    k, L = len(a), p.pass_size
    if p.operand_format:
        a = [_to_format(fa, p.operand_format, x) for x in a]
        b = [_to_format(fb, p.operand_format, y) for y in b]
        fa = fb = p.operand_format
    passes = k // L
    groups = [[i for i in range(k) if (i // (p.pass_interleave or L)) % passes == j] for j in range(passes)] \
        if p.pass_interleave else [list(range(lo, hi)) for lo, hi in _chunks(k, L)]
    acc, acc_fmt = (0, fd) if p.c_last else (c, fc)
    for g in groups:
        da = [decode(fa, a[i]) for i in g]
        db = [decode(fb, b[i]) for i in g]
        acc = _fda_pass(p, fd, da, db, decode(acc_fmt, acc), [0] * len(g), False, opts)
        acc_fmt = fd
    if not p.c_last:
        return acc
    x, y = decode(fd, acc), decode(fc, c)
    if x[0] == "nan" or y[0] == "nan" or (x[0] == y[0] == "inf" and x[1] != y[1]):
        return NVIDIA_CANONICAL_NAN[fd]
    if x[0] == "inf" or y[0] == "inf":
        return _inf_bits(fd, (x if x[0] == "inf" else y)[1])
    total = value_of(x) + value_of(y)
    if total == 0:
        return 0                                          # +0: IEEE RNE gives +0 for x + (-x), and HMMA never -0
    r = round_value(fd, total, "RNE")
    return _inf_bits(fd, r[1]) if r[0] == "inf" else encode_value(fd, r)


# --------------------------------------------------------------------------- GDFS (NVIDIA FP4)

def _gdfs(instr, a, b, c, sa, sb, opts):
    p = instr.params
    fd = instr.d_format
    assert fd == "f32" and instr.c_format == "f32"
    nan = NVIDIA_CANONICAL_NAN[fd]
    ds_a = [decode(instr.scale_format, s) for s in sa]
    ds_b = [decode(instr.scale_format, s) for s in sb]
    dc = decode("f32", c)
    # Step 1: NaN scale or NaN c -> NaN; infinite c -> c.
    if any(d[0] == "nan" for d in ds_a + ds_b) or dc[0] == "nan":
        return nan
    if dc[0] == "inf":
        return _inf_bits("f32", dc[1])
    G, F, blk = p.group, p.F, instr.block_size
    terms = []                      # (signed exact significand, exponent)
    for g in range(0, len(a), G):
        # Steps 2-3: exact products, exact group sum sigma (docs/spec.md §4.5).
        sigma = Fraction(0)
        all_zero = True
        for x, y in zip(a[g:g + G], b[g:g + G]):
            dx, dy = decode(instr.a_format, x), decode(instr.b_format, y)
            assert dx[0] == "num" and dy[0] == "num"      # fp4 has no inf / NaN
            if dx[2] and dy[2]:
                all_zero = False
            sigma += value_of(dx) * value_of(dy)
        # Step 4: s = sigma * s_sa * s_sb (unnormalised), e = e_sa + e_sb (docs/spec.md §4.1).
        x, y = ds_a[g // blk], ds_b[g // blk]
        if opts["gdfs_zero_group"] == "sum":
            all_zero = sigma == 0
        if all_zero or x[2] == 0 or y[2] == 0:            # AMBIGUITY A3
            terms.append((Fraction(0), p.e_zero))
        else:
            s = sigma * Fraction(x[2], 1 << x[4]) * Fraction(y[2], 1 << y[4])
            terms.append((s, x[3] + y[3]))
    terms.append((Fraction(0), p.e_zero) if _is_zero(dc)
                 else (Fraction(-dc[2] if dc[1] else dc[2], 1 << dc[4]), dc[3]))
    # Steps 5-6: align to e_max with F = 35 fractional bits (truncate magnitude), exact sum.
    e_max = max(t[1] for t in terms)
    total = 0
    for s, exp in terms:
        t = abs(s) * _p2(F - (e_max - exp))
        m = t.numerator // t.denominator
        total += -m if s < 0 else m
    # Step 7: normalise to f32 with RZ like FDA.
    return _fda_normalise(p, fd, Fraction(total) * _p2(e_max - F), opts)


# --------------------------------------------------------------------------- SFMA

def _sfma(instr, a, b, c):
    fa, fb, fc, fd = instr.a_format, instr.b_format, instr.c_format, instr.d_format
    mode = getattr(instr.params, "fma_rounding", "RNE")
    assert fa == fb == fc == fd and fd in ("f64", "f32")
    nan = _DEFAULT_NAN[fd]
    d = decode(fd, c)
    for x, y in zip(a, b):
        dx, dy = decode(fa, x), decode(fb, y)
        if "nan" in (dx[0], dy[0], d[0]):
            return nan
        if dx[0] == "inf" or dy[0] == "inf":
            if _is_zero(dx) or _is_zero(dy):
                return nan
            pn = dx[1] != dy[1]
            if d[0] == "inf" and d[1] != pn:
                return nan
            d = ("inf", pn)
            continue
        if d[0] == "inf":
            continue
        pn = dx[1] != dy[1]
        exact = value_of(dx) * value_of(dy) + value_of(d)
        if exact == 0:
            prod_zero = _is_zero(dx) or _is_zero(dy)
            # IEEE 754 6.3: exact zero sum is -0 only if both addends are -0; rounding down, -0
            # unless both are +0
            zn = prod_zero and _is_zero(d) and pn and d[1]
            if mode == "RD":
                zn = not (prod_zero and _is_zero(d) and not pn and not d[1])
            d = ("num", zn, 0, 0, 0)
            continue
        r = round_value(fd, exact, mode)
        d = decode(fd, encode_value(fd, r))
    if d[0] == "nan":
        return nan
    if d[0] == "inf":
        return _inf_bits(fd, d[1])
    return _encode_exact(fd, d[1], abs(value_of(d)))


# --------------------------------------------------------------------------- GPS (CDNA2)
# f32 values here: ("nan",), ("inf", neg) or ("num", neg, mag) with mag a Fraction >= 0.

_TWO_M126 = _p2(-126)


def _f32_round(x: Fraction):
    """IEEE RNE of a nonzero exact value to f32 (gradual underflow, overflow to inf)."""
    return round_value("f32", x, "RNE")


def _f32_mul(x, y):
    if x[0] == "nan" or y[0] == "nan":
        return ("nan",)
    neg = x[1] != y[1]
    if x[0] == "inf" or y[0] == "inf":
        if (x[0] == "num" and x[2] == 0) or (y[0] == "num" and y[2] == 0):
            return ("nan",)
        return ("inf", neg)
    m = x[2] * y[2]
    if m == 0:
        return ("num", neg, Fraction(0))
    return _f32_round(-m if neg else m)


def _f32_add(x, y):
    if x[0] == "nan" or y[0] == "nan":
        return ("nan",)
    if x[0] == "inf" and y[0] == "inf":
        return x if x[1] == y[1] else ("nan",)
    if x[0] == "inf":
        return x
    if y[0] == "inf":
        return y
    s = (-x[2] if x[1] else x[2]) + (-y[2] if y[1] else y[2])
    if s == 0:
        return ("num", x[1] and y[1] and x[2] == 0 and y[2] == 0, Fraction(0))
    return _f32_round(s)


def _flush_signed(x):
    if x[0] == "num" and x[2] < _TWO_M126:
        return ("num", x[1], Fraction(0))
    return x


def _gps_input(fmt, bits):
    d = decode(fmt, bits)
    if d[0] != "num":
        return d
    if d[2] < (1 << d[4]):                  # subnormal or zero in its own format -> +0 (AMBIGUITY A9)
        return ("num", False, Fraction(0))
    return ("num", d[1], abs(value_of(d)))


def _pairwise(ps):
    if len(ps) == 1:
        return ps[0]
    h = len(ps) // 2
    return _flush_signed(_f32_add(_pairwise(ps[:h]), _pairwise(ps[h:])))


def _gps(instr, a, b, c):
    p = instr.params
    fa, fb, fc, fd = instr.a_format, instr.b_format, instr.c_format, instr.d_format
    assert fc == fd == "f32"
    prods = [_flush_signed(_f32_mul(_gps_input(fa, x), _gps_input(fb, y))) for x, y in zip(a, b)]
    dc = decode("f32", c)
    if dc[0] == "num":
        v = abs(value_of(dc))
        d = ("num", False, Fraction(0)) if v < _TWO_M126 else ("num", dc[1], v)
    else:
        d = dc
    G = p.group
    for g in range(0, len(prods), G):
        d = _flush_signed(_f32_add(d, _pairwise(prods[g:g + G])))
    if d[0] == "nan":
        return _DEFAULT_NAN["f32"]
    if d[0] == "inf":
        return _inf_bits("f32", d[1])
    return _encode_exact("f32", d[1], d[2])


# --------------------------------------------------------------------------- FDRDA / GFDRDA (CDNA3)

def _fdrda_pass(p, da, db, dc, grouped: bool, opts):
    """One FDRDA (grouped=False) or GFDRDA (grouped=True) pass; returns f32 bits."""
    nan = _DEFAULT_NAN["f32"]
    # Step 1: input specials (AMBIGUITY A5: returns before product overflow is seen).
    if dc[0] == "nan":
        return nan
    infs = _products_specials(da, db)
    if infs == ("nan",):
        return nan
    if dc[0] == "inf":
        infs.add(dc[1])
    literal = opts["inf_rule"] == "literal"
    if literal and len(infs) == 2:
        return nan
    if literal and len(infs) == 1:
        return _inf_bits("f32", infs.pop())
    # Step 2: exact unnormalised products; |p| >= 2^128 overflows (AMBIGUITY A8).
    prods = []                     # (index, neg, num, den, exp)
    for i, (x, y) in enumerate(zip(da, db)):
        if x[0] == "inf" or y[0] == "inf":
            continue               # only with inf_rule="combined": already in infs
        if _is_zero(x) or _is_zero(y):
            continue               # zero products are left out of every maximum (docs/spec.md §4.1)
        neg, num, den, exp = x[1] != y[1], x[2] * y[2], x[4] + y[4], x[3] + y[3]
        if Fraction(num) * _p2(exp - den) >= _p2(128):
            infs.add(neg)
        prods.append((i, neg, num, den, exp))
    # Step 3: overflowed products.
    if len(infs) == 2:
        return nan
    if len(infs) == 1:
        return _inf_bits("f32", infs.pop())
    F = p.F

    def aligned_sum(ps):
        """(S, e) with sum = S * 2^(e - F): aligned to the set's own max exponent, truncated."""
        if not ps:
            return None
        e = max(t[4] for t in ps)
        s = 0
        for _, neg, num, den, exp in ps:
            v = (num << F) >> (den + e - exp)
            s += -v if neg else v
        return s, e

    if not grouped:
        dot = aligned_sum(prods)                      # (S_dot, e_dot), unit 2^(e_dot - F)
    else:
        even = aligned_sum([t for t in prods if t[0] % 2 == 0])
        odd = aligned_sum([t for t in prods if t[0] % 2 == 1])
        parts = [x for x in (even, odd) if x is not None]   # AMBIGUITY A6
        if not parts:
            dot = None
        else:
            e_dot = max(e for _, e in parts)
            mb = p.merge_floor_bits
            s_dot = 0
            for s, e in parts:
                # value s * 2^(e - F) floored (towards -inf) at mb fractional bits of 2^e_dot
                s_dot += _floor_shift(s, (e - F) - (e_dot - mb))
            dot = (s_dot, e_dot)
            F_dot = mb
    # c: significand and exponent (a zero c keeps exponent -126).
    assert dc[0] == "num"
    c_neg, c_sig, c_exp, c_mb = dc[1], dc[2], dc[3], dc[4]
    e_c = c_exp
    if dot is None:                                   # AMBIGUITY A6
        e_max = e_c
    else:
        e_max = max(dot[1], e_c)
    DB, CB = p.dot_floor_bits, p.c_floor_bits
    # Dot part floored at DB fractional bits relative to 2^e_max, in units 2^(e_max - DB).
    if dot is None:
        D = 0
    else:
        fdot = F if not grouped else F_dot
        D = _floor_shift(dot[0], (dot[1] - fdot) - (e_max - DB))
    # c floored at CB fractional bits, in units 2^(e_max - CB); GFDRDA drops a far-away c.
    cs = -c_sig if c_neg else c_sig
    C = _floor_shift(cs, (e_c - c_mb) - (e_max - CB))
    if grouped and p.c_drop is not None and c_sig != 0 and e_c < e_max - p.c_drop:
        C = 0
    # Sum, in units 2^(e_max - DB) (DB >= CB).
    assert DB >= CB
    T = D + (C << (DB - CB))
    unit = e_max - DB
    if T == 0:
        return 0                                          # AMBIGUITY A7
    # Normalise (exponent floor -126), floor again at final_floor_bits fractional bits.
    e = max((abs(T).bit_length() - 1) + unit, -126)
    fb = p.final_floor_bits
    T2 = _floor_shift(T, unit - (e - fb))
    if T2 == 0:
        return 0
    v = Fraction(T2) * _p2(e - fb)
    return encode_value("f32", round_value("f32", v, "RNE"))   # keeps the sign of v if it rounds to 0


def _floor_shift(x: int, sh: int) -> int:
    """floor(x * 2^sh) for an integer x."""
    return x << sh if sh >= 0 else x >> -sh       # Python >> floors towards -inf


def _fdrda(instr, a, b, c, grouped, opts):
    p = instr.params
    fa, fb, fc, fd = instr.a_format, instr.b_format, instr.c_format, instr.d_format
    assert fd == "f32"
    acc, acc_fmt = c, fc
    for lo, hi in _chunks(len(a), p.pass_size):
        da = [decode(fa, x) for x in a[lo:hi]]
        db = [decode(fb, y) for y in b[lo:hi]]
        acc = _fdrda_pass(p, da, db, decode(acc_fmt, acc), grouped, opts)
        acc_fmt = fd
    return acc


# --------------------------------------------------------------------------- entry point

def ref_dot_add(instr, a, b, c, scale_a=None, scale_b=None, *, underflow_zero_sign: str = "plus",
                inf_rule: str = "literal", gdfs_zero_group: str = "products") -> int:
    """d = c + sum_k a_k b_k as ``instr`` computes it; returns D's bit pattern.

    The keyword options select the alternative readings of two open points
    (the defaults are this model's reading of docs/spec.md):

    underflow_zero_sign : "plus" (default, docs/spec.md §4.3 "a zero result is +0")
        or "keep": an NVIDIA FDA/GDFS sum that is nonzero but rounds to zero
        keeps its sign (-0 for a negative sum).  An exact zero sum is +0 in
        both readings.
    inf_rule : "literal" (default, AMBIGUITY A5: the paper's step order) or
        "combined": FDRDA/GFDRDA infinities from the inputs, c and product
        overflow are pooled; both signs give NaN.
    gdfs_zero_group : "products" (default, AMBIGUITY A3: e_zero when all 16
        products are zero or the scale product is zero) or "sum": e_zero
        whenever the group sum times the scales is zero (products that
        cancel exactly included).
    """
    assert underflow_zero_sign in ("plus", "keep") and inf_rule in ("literal", "combined")
    assert gdfs_zero_group in ("products", "sum")
    opts = {"underflow_zero_sign": underflow_zero_sign, "inf_rule": inf_rule,
            "gdfs_zero_group": gdfs_zero_group}
    a = [int(x) for x in a]
    b = [int(y) for y in b]
    c = int(c)
    assert len(a) == len(b) == instr.k, (len(a), len(b), instr.k)
    if scale_a is not None:
        scale_a = [int(s) for s in scale_a]
        scale_b = [int(s) for s in scale_b]
        assert len(scale_a) == len(scale_b) == instr.k // instr.block_size
    d = _dispatch(instr, a, b, c, scale_a, scale_b, opts)
    nan_bits = getattr(instr.params, "nan_bits", None)
    if nan_bits is not None and is_nan_bits(instr.d_format, d):
        return nan_bits                                    # the design's one NaN pattern
    return d


# The reference model's part of each algorithm descriptor (golden.descriptors: registering is the only
# thing this file takes from golden): (instr, a, b, c, scale_a, scale_b, opts) -> d bits
REFERENCE = {
    "SFMA": lambda instr, a, b, c, sa, sb, opts: _sfma(instr, a, b, c),
    "GPS": lambda instr, a, b, c, sa, sb, opts: _gps(instr, a, b, c),
    "FDA": _fda,
    "GDFS": _gdfs,
    "FDRDA": lambda instr, a, b, c, sa, sb, opts: _fdrda(instr, a, b, c, False, opts),
    "GFDRDA": lambda instr, a, b, c, sa, sb, opts: _fdrda(instr, a, b, c, True, opts),
}


def _register() -> None:
    from golden.descriptors import Part, register
    for name, fn in REFERENCE.items():
        register(name, Part.REFERENCE, fn)


_register()


def _dispatch(instr, a, b, c, scale_a, scale_b, opts) -> int:
    base = instr.params.base
    if base not in REFERENCE:
        raise ValueError(f"unknown algorithm {base!r}")
    return REFERENCE[base](instr, a, b, c, scale_a, scale_b, opts)
