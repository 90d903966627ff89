"""The nine dot-add algorithms of docs/spec.md §3, vectorised over many dot-adds.

Every algorithm takes bit patterns ``a, b`` of shape ``[R, K]``, ``c`` of shape
``[R]`` (and block scales ``[R, K // block]`` where the instruction has them)
and returns the bit patterns of ``d``, shape ``[R]``.  The six base algorithms
are SFMA, GPS, FDA, GDFS, FDRDA and GFDRDA; the three "Co" variants are chains
of passes (:func:`run`), selected by ``Params.pass_size < K``.

A hardware team can describe a design of its own with the same parameters:
``Params(base="FDA", F=27, pass_size=16, e_zero=-133)`` is one line.

Fixed-point conventions: an aligned term is an integer ``A`` with ``F``
fraction bits relative to ``2**e_max``, i.e. the term's value is
``A * 2**(e_max - F)``; ``A = trunc(value * 2**(F - e_max))`` (RZ on the
magnitude, NVIDIA and the AMD product alignment) or ``floor(...)`` (RD, the
AMD merges).  Products of the narrow formats are exact in float64 and every
aligned sum stays below 2**53, so float64 arithmetic on integer values is
exact here; :func:`_check_exact` refuses a custom design whose widths would
not be.  Arrays are products-major (``[K, R]``) so that every reduction over
the K products is an element-wise operation on contiguous rows.

Special values need no separate pass: NaN and infinite products (0 * inf
included) flow through the float64 sums with IEEE semantics, which are
exactly the rules of FDA step 1, and :func:`_finish` maps such rows to the
canonical NaN or the infinity.

Each function can fill a ``trace`` list with ``(label, {name: array})`` pairs, each label a
:class:`golden.stages.Label` that names its :class:`golden.stages.Stage`; :func:`golden.trace` turns
that into the stage-by-stage report.
"""

from __future__ import annotations

import functools

import numpy as np

from .datapath import Datapath, pass_order  # noqa: F401  (pass_order: re-exported)
from .descriptors import ALGORITHMS, Algorithm, KernelCode, describe
from .disputed import DISPUTED_RULES, NONFINITE_C_EXP, disputed_rules  # noqa: F401  (DISPUTED_RULES, disputed_rules: re-exported)
from .disputed import products_overflow as _products_overflow
from .formats import (
    INF,
    NAN,
    SUBNORMAL,
    ZERO,
    Format,
    NanKind,
    bit_length,
    decode,
    from_float,
    get_format,
    round_to_format,
    special_bits,
    to_float,
)
from .params import EXACT, SPECIALS, Params, ParamsSpecError, _in  # noqa: F401  (Params, SPECIALS: re-exported)
from .rules import FloorRounding, Rounding, Specials, ZeroSign
from .stages import Label, Stage

# Params fields each base algorithm reads (the descriptors at the end of this module say which); the
# others are carried but never change a result (GPS always flushes subnormals and SFMA is IEEE
# throughout, whatever the catalog entry says).
_FINISH = ("out_rounding", "out_frac_bits", "overflow", "zero_sign", "nan_bits")       # read by _finish


# --------------------------------------------------------------------------- operand tables

ZERO_EXP = -4096     # exponent of a zero operand: any product with one lies far below every real exponent
NO_TERM = -2048      # a maximum below this means "no non-zero term"
PARKED = -1000       # exponent used for rows without terms, keeps 2**(F - e) finite
EXACT_BITS = 53      # float64 holds every aligned sum below 2**53 exactly


def _narrow_float(values: np.ndarray) -> np.ndarray:
    """float32 when that holds every value exactly (smaller tables gather faster), else float64."""
    with np.errstate(all="ignore"):
        v32 = values.astype(np.float32)
    same = (v32.astype(np.float64) == values) | (np.isnan(values) & np.isnan(v32))
    return v32 if same.all() else values


@functools.cache
def _operand_table(fmt: Format):
    """Value and hidden-bit exponent of every bit pattern of a narrow format (zero: ZERO_EXP)."""
    d = decode(fmt, np.arange(1 << fmt.value_bits, dtype=np.uint64) << np.uint64(fmt.ignored_low_bits))
    val = _values(fmt, d)
    exp = np.where(d.cls == ZERO, ZERO_EXP, np.where(d.cls >= INF, 0, d.exp)).astype(np.int16)
    return _narrow_float(val), exp


@functools.cache
def _product_table(fa: Format, fb: Format):
    """Every exact product of two narrow formats (one gather per product later)."""
    va, ea = _operand_table(fa)
    vb, eb = _operand_table(fb)
    with np.errstate(all="ignore"):
        p = va.astype(np.float64)[:, None] * vb.astype(np.float64)[None, :]
    e = ea.astype(np.int16)[:, None] + eb[None, :]
    return _narrow_float(p.ravel()), e.ravel()


def _values(fmt: Format, d) -> np.ndarray:
    with np.errstate(all="ignore"):
        v = np.ldexp(d.sig.astype(np.float64), (d.exp - fmt.man_bits).astype(np.int32))
    v = np.where(d.sign == 1, -v, v)
    v = np.where(d.cls == INF, np.where(d.sign == 1, -np.inf, np.inf), v)
    return np.where(d.cls == NAN, np.nan, v)


def _index(fmt: Format, bits) -> np.ndarray:
    x = bits
    if fmt.ignored_low_bits:
        x = x >> np.uint64(fmt.ignored_low_bits)
    if fmt.storage_bits - fmt.ignored_low_bits > fmt.value_bits:
        x = x & np.uint64((1 << fmt.value_bits) - 1)
    return x.astype(np.intp)


def _gather(table, idx, dtype):
    """``table[idx]`` as a C-contiguous ``dtype`` array.  The indices come from transposed [K, R]
    views; fancy indexing follows their memory order, where ``np.take`` walks them in C order and
    gathers 2-4x slower (docs/verification.md, "golden rate"); the final copy makes the layout C,
    which the callers' in-place reshapes rely on."""
    return table[idx].astype(dtype, order="C")


def _operand_values(fmt: Format, bits):
    """Exact values (float64) and hidden-bit exponents (int32; zero: ZERO_EXP) of bit patterns."""
    if fmt.value_bits <= 16:
        val, exp = _operand_table(fmt)
        idx = _index(fmt, bits)
        return _gather(val, idx, np.float64), _gather(exp, idx, np.int32)
    d = decode(fmt, bits)
    if fmt.name in ("f32", "tf32"):          # the word itself is the value (TF32's low bits cleared)
        word = bits & np.uint64(~((1 << fmt.ignored_low_bits) - 1) & 0xFFFFFFFF)
        val = word.astype(np.uint32).view(np.float32).astype(np.float64)
    else:
        val = _values(fmt, d)
    exp = np.where(d.cls == ZERO, ZERO_EXP, np.where(d.cls >= INF, 0, d.exp)).astype(np.int32)
    return val, exp


def _product_stage(fa: Format, a, fb: Format, b):
    """Exact products ``p [K, R]`` (float64) and their unnormalised exponents ``e_a + e_b`` (FDA step 2)."""
    aT, bT = a.T, b.T
    if fa.value_bits + fb.value_bits <= 16:
        ptab, etab = _product_table(fa, fb)
        idx = (_index(fa, aT) << fb.value_bits) | _index(fb, bT)
        return _gather(ptab, idx, np.float64), _gather(etab, idx, np.int32)
    va, ea = _operand_values(fa, aT)
    vb, eb = _operand_values(fb, bT)
    with np.errstate(all="ignore"):
        va *= vb
    ea += eb
    return va, ea


def _scale_stage(fs: Format, scale_a, scale_b):
    """Products of the two block scales (values, exponent sums), shape [blocks, R]."""
    va, ea = _operand_values(fs, scale_a.T)
    vb, eb = _operand_values(fs, scale_b.T)
    with np.errstate(all="ignore"):
        return va * vb, ea + eb


def _check_exact(p: Params, int_bits: int, terms: int):
    need = p.F + int_bits + int(terms).bit_length()
    if need > EXACT_BITS:
        raise ValueError(f"{p.base} with F={p.F} needs {need}-bit fixed-point sums; this model is exact up to "
                         f"{EXACT_BITS} bits (F <= {EXACT_BITS - int_bits - int(terms).bit_length()} here)")


def _truncate(x, scale):
    """``trunc(x * scale)`` in place: alignment with the shifted-out bits dropped (RZ on the magnitude)."""
    with np.errstate(all="ignore"):
        x *= scale
    return np.trunc(x, out=x)


def _floor_scaled(x, log2_scale, rounding: FloorRounding = FloorRounding.RD):
    """``floor(x * 2**log2_scale)``: alignment with round-down (RD); ``trunc`` with ``"RZ"``."""
    with np.errstate(all="ignore"):
        scaled = np.ldexp(x, np.asarray(log2_scale, np.int32))
        return np.floor(scaled) if rounding == FloorRounding.RD else np.trunc(scaled)


def _finish(out_fmt: Format, total, exp_lsb, p: Params, rounding=None, special=None, zeros=None, ints=None):
    """Normalise the exact sum ``total * 2**exp_lsb`` (float64 integers) to the output format.

    Rows whose ``special`` value (default: the sum itself) is NaN or infinite
    take the canonical NaN or that infinity (FDA step 1).  ``zeros``: :func:`_zero_terms` of the
    rows' terms, for ``zero_sign="ieee754"``.  ``ints``: the magnitudes and signs already made
    (``(sign, mag, exp_lsb)``, the exact sum), instead of ``total``.
    """
    special = total if special is None else special
    bad = ~np.isfinite(special)
    mode = rounding or p.out_rounding
    if ints is None:
        ints = np.where(np.isfinite(total), total, 0.0).astype(np.int64)
        sign, mag = (ints < 0).astype(np.int8), np.abs(ints)
    else:
        sign, mag, exp_lsb = ints
    d = round_to_format(out_fmt, sign, mag, exp_lsb, mode, frac_bits=p.out_frac_bits, overflow=p.overflow)
    if p.zero_sign == ZeroSign.POSITIVE:               # a zero result is +0, whatever the sign of the sum
        d = np.where(d == special_bits(out_fmt, "zero", 1), d.dtype.type(0), d)
    elif p.zero_sign == ZeroSign.IEEE754 and zeros is not None:
        # IEEE 754 on a zero sum: -0 when every term is -0; +0 for an exact cancellation or mixed
        # zeros, -0 rounding down (a sum that rounds to zero kept its sign above)
        all_neg, all_pos = zeros
        neg = all_neg | ((mode == Rounding.RD) & ~all_pos)
        d = np.where(mag == 0, np.where(neg, special_bits(out_fmt, "zero", 1), 0).astype(d.dtype), d)
    if bad.any():
        nan = np.isnan(special)
        d = np.where(nan, special_bits(out_fmt, "nan"), d)
        inf = bad & ~nan
        d = np.where(inf, special_bits(out_fmt, "inf", (special < 0).astype(np.uint64)), d)
    return d.astype(out_fmt.dtype)


def _zero_terms(P, cv):
    """``(all_neg, all_pos)`` per row: every term (the products ``P [K, R]`` and c) is -0, or +0."""
    zero = (P == 0).all(0) & (cv == 0)
    neg = np.signbit(P).all(0) & np.signbit(cv)
    pos = ~np.signbit(P).any(0) & ~np.signbit(cv)
    return zero & neg, zero & pos


def _T(x):
    """[K, R] -> [R, K] for traces."""
    return np.asarray(x).T


# --------------------------------------------------------------------------- chains

def run(params: Params, a, b, c, fa, fb, fc, fd, scale_a=None, scale_b=None, fs=None, block=None, trace=None):
    """Run an algorithm (and its chain of passes) on ``[R, K]`` operands; returns d bits ``[R]``.
    The formats may be names; :func:`run_datapath` takes them as one :class:`golden.Datapath`."""
    fa, fb, fc, fd = (get_format(f) for f in (fa, fb, fc, fd))
    fs = get_format(fs) if fs is not None else None
    return run_datapath(Datapath(params, fa, fb, fc, fd, a.shape[-1], fs, block), a, b, c, scale_a, scale_b, trace)


def run_datapath(dp: Datapath, a, b, c, scale_a=None, scale_b=None, trace=None):
    """Run ``dp``'s algorithm (and its chain of passes) on ``[R, K]`` operands; returns d bits ``[R]``."""
    params = dp.params
    fa, fb, fc, fd = dp.formats
    block = dp.block_size
    k = a.shape[-1]
    alg = ALGORITHMS[params.base]
    L = params.pass_size if params.pass_size and alg.chained else k
    if k % L:
        raise ValueError(f"K={k} is not a multiple of the pass size L={L}")
    c_in, fc_in = c, fc
    if params.nan_bits is not None:
        check_nan_bits(fd, params.nan_bits)       # refused before any work
    if params.operand_format is not None:         # a compiled path converts the operands first
        fo = get_format(params.operand_format)
        a, b, fa, fb = convert_exactly(fa, a, fo), convert_exactly(fb, b, fo), fo, fo
    if params.pass_interleave is not None:        # passes take the products of interleaved runs
        order = pass_order(k, L, params.pass_interleave)
        a, b = a[:, order], b[:, order]
    if params.c_last:                             # the chain starts from +0; c is added at the end
        c, fc = np.zeros(c.shape, fd.dtype), fd
    for j in range(0, k, L):
        sa = sb = None
        if scale_a is not None:
            sa = scale_a[:, j // block:(j + L + block - 1) // block]
            sb = scale_b[:, j // block:(j + L + block - 1) // block]
        if trace is not None and k > L:
            trace.append((Label(Stage.PASS, f"pass {j // L} (products {j}..{j + L - 1})"), {}))
        step = dp.with_(a_format=fa, b_format=fb, c_format=fc, k=L)
        with np.errstate(all="ignore"):      # NaN and infinities are data here, not accidents
            c = alg.passes(step, a[:, j:j + L], b[:, j:j + L], c, sa, sb, trace)
        fc = fd                              # the next pass takes this result as c
    if params.c_last:
        if trace is not None:
            trace.append((Label(Stage.C_LAST, "c added by one IEEE add, RNE"),
                          {"chain": c.copy(), "c": np.asarray(c_in)}))
        c = ieee_add(fd, c, fc_in, c_in, params)
    if params.nan_bits is not None:               # the design's one NaN pattern, whatever the algorithm made
        c = np.where(decode(fd, c).cls == NAN, np.asarray(check_nan_bits(fd, params.nan_bits), fd.dtype), c)
        if trace is not None:
            trace.append((Label(Stage.NAN_BITS, f"every NaN result is nan_bits={params.nan_bits:#x}"), {"d": c}))
    return c


def check_nan_bits(fd: Format, bits: int) -> int:
    """``bits`` if it is a NaN pattern of the output format ``fd`` (Params.nan_bits), else ValueError."""
    if fd.nan == NanKind.NONE or bits >= 1 << fd.storage_bits or \
            decode(fd, np.asarray([bits], np.uint64)).cls[0] != NAN:
        raise ValueError(f"Params.nan_bits={bits:#x} is not a NaN of the output format {fd.name}")
    return bits


def convert_exactly(f_from: Format, bits, f_to: Format):
    """``bits`` of ``f_from`` as ``f_to`` bit patterns; every value must be exact in ``f_to``
    (fp8 to f16 is); NaN becomes ``f_to``'s canonical NaN."""
    vals = to_float(f_from, np.asarray(bits, np.uint64))
    out = from_float(f_to, vals, Rounding.RNE).astype(np.uint64)
    with np.errstate(invalid="ignore"):
        exact = (to_float(f_to, out) == vals) | np.isnan(vals)
    if not exact.all():
        raise ValueError(f"{f_from.name} is not exact in {f_to.name}: a compiled path converts exactly")
    return np.where(np.isnan(vals), np.uint64(special_bits(f_to, "nan")), out)


def ieee_add(fd: Format, x, fc: Format, y, p: Params):
    """``RNE(x + y)`` in ``fd`` (f16 or f32), one rounding, IEEE overflow; NaN is ``fd``'s canonical NaN
    and a zero follows ``p.zero_sign``."""
    if fc.name != fd.name:
        raise ValueError(f"c_last adds c in the output format: c is {fc.name}, d {fd.name}")
    xv, yv = to_float(fd, np.asarray(x, np.uint64)), to_float(fd, np.asarray(y, np.uint64))
    if fd.name == "f16":                       # every f16 sum is exact in f64: round it once
        with np.errstate(all="ignore"):
            s = xv + yv
        d = from_float(fd, s, Rounding.RNE).astype(np.uint64)
    elif fd.name == "f32":
        from .fma import fma_f32
        one = np.full(np.shape(xv), 0x3F800000, np.uint32)
        d = fma_f32(np.asarray(x, np.uint32), one, np.asarray(y, np.uint32)).astype(np.uint64)
        with np.errstate(all="ignore"):
            s = xv + yv                        # for the special cases only
    else:
        raise ValueError(f"c_last adds in f16 or f32, not {fd.name}")
    d = np.where(np.isnan(s), special_bits(fd, "nan"), d)
    if p.zero_sign == ZeroSign.POSITIVE:
        d = np.where(d == special_bits(fd, "zero", 1), 0, d)
    return d.astype(fd.dtype)


# --------------------------------------------------------------------------- FDA

def fda(dp: Datapath, a, b, c, scale_a=None, scale_b=None, trace=None):
    """One fused dot-add pass (docs/spec.md §3, FDA; with block scales when given)."""
    p, (fa, fb, fc, fd) = dp.params, dp.formats
    fs, block = dp.scale_format, dp.block_size
    P, E = _product_stage(fa, a, fb, b)
    K, R = P.shape
    if scale_a is not None:
        # FDA with scales: the two scale exponents join each product's exponent; a NaN scale gives NaN
        sv, se = _scale_stage(fs, scale_a, scale_b)
        P.reshape(-1, block, R)[...] *= sv[:, None, :]
        E.reshape(-1, block, R)[...] += se[:, None, :]
    cv, ce = _operand_values(fc, c)
    zeros = _zero_terms(P, cv) if p.zero_sign == ZeroSign.IEEE754 else None
    if p.F == EXACT:
        return _exact_sum(p, fd, P, cv, zeros, trace)
    _check_exact(p, 2, K + 1)
    e_max = np.maximum(E.max(0), np.where(ce <= NO_TERM, p.e_zero, ce))   # a zero c takes e_zero
    if p.e_zero > fc.emin:
        # zero products take e_zero (docs/spec.md §4.1); when e_zero <= every c exponent this cannot move the max
        e_max = np.where((E <= NO_TERM).any(0), np.maximum(e_max, p.e_zero), e_max)
    scale = np.ldexp(1.0, (p.F - e_max).astype(np.int32))
    if trace is not None:
        trace.append((Label(Stage.PRODUCTS, "products (exact; exponent = e_a + e_b, unnormalised)"),
                      {"value": _T(P).copy(), "exponent": _T(np.where(E <= NO_TERM, p.e_zero, E))}))
        trace.append((Label(Stage.MAX_EXPONENT, "maximum exponent"), {"e_max": e_max, "c": cv,
                                           "c exponent": np.where(ce <= NO_TERM, p.e_zero, ce)}))
    A = _truncate(P, scale[None, :])
    C = np.trunc(cv * scale)
    total = A.sum(0) + C
    if trace is not None:
        trace.append((Label(Stage.ALIGNED, f"aligned to F={p.F} fraction bits below 2^e_max (RZ), "
                                           "in units of 2^(e_max-F)"),
                      {"products": _T(A), "c": C}))
        trace.append((Label(Stage.SUM, "fixed-point sum"),
                      {"sum": total, "value": np.ldexp(total, (e_max - p.F).astype(np.int32))}))
    d = _finish(fd, total, e_max - p.F, p, zeros=zeros)
    if trace is not None:
        trace.append((Label(Stage.ROUNDED, "normalised and rounded"), {"d": d}))
    return d


def exact_window(datapath) -> int:
    """The F of an FDA pass whose alignment drops nothing: from the largest e_max the formats (and
    e_zero) allow down to the last place of the smallest term, so every term is a whole number of
    units 2**(e_max - F).  What the RTL builds for ``F="exact"`` (golden sums exact integers instead)."""
    fa, fb, fc = (get_format(f) for f in datapath.formats[:3])
    top = fa.emax + fb.emax
    low = (fa.emin - fa.man_bits) + (fb.emin - fb.man_bits)
    if datapath.scale_format is not None:
        fs = get_format(datapath.scale_format)
        top, low = top + 2 * fs.emax, low + 2 * (fs.emin - fs.man_bits)
    top = max(top, fc.emax, datapath.params.e_zero)
    return top - min(low, fc.emin - fc.man_bits)


_KEEP = 62        # bits of an exact sum kept for rounding; the rest is one sticky bit (any mode, p + 2 < 62)


def _exact_sum(p: Params, fd: Format, P, cv, zeros, trace):
    """F="exact": the exact sum of the products ``P [K, R]`` and c (Python integers, no window),
    rounded once to the output format by ``out_rounding``."""
    special = P.sum(0) + cv                       # NaN and infinities: IEEE rules of FDA step 1
    terms = np.concatenate([P, cv[None, :]])
    terms = np.where(np.isfinite(terms), terms, 0.0)
    m, e = np.frexp(terms)
    sig = np.ldexp(m, 53).astype(np.int64)        # every finite float64 is sig * 2**(e - 53), exactly
    lsb = np.where(sig != 0, e - 53, np.iinfo(np.int32).max)
    low = np.where((sig != 0).any(0), lsb.min(0), 0)
    shifted = sig.astype(object) << (np.where(sig != 0, lsb - low, 0)).astype(object)
    total = shifted.sum(0)
    sign = (total < 0).astype(np.int8)
    mag = np.abs(total)
    bits = np.frompyfunc(int.bit_length, 1, 1)(mag).astype(np.int64)
    cut = np.maximum(bits - _KEEP, 0)
    kept = mag >> cut.astype(object)
    sticky = (mag & ((np.ones_like(cut).astype(object) << cut.astype(object)) - 1)) != 0
    mag64 = (kept.astype(np.int64) | sticky.astype(np.int64))
    if trace is not None:
        trace.append((Label(Stage.EXACT_SUM, "exact sum of the products and c (no alignment window)"),
                      {"value": np.asarray([float(t) for t in total]) * np.ldexp(1.0, low)}))
    d = _finish(fd, None, None, p, special=special, zeros=zeros, ints=(sign, mag64, low + cut))
    if trace is not None:
        trace.append((Label(Stage.ROUNDED, f"rounded once ({p.out_rounding})"), {"d": d}))
    return d


# --------------------------------------------------------------------------- GDFS

def gdfs(dp: Datapath, a, b, c, scale_a=None, scale_b=None, trace=None):
    """Group-dot-fused-sum for block-scaled FP4 (docs/spec.md §3, GDFS)."""
    p, (fa, fb, fc, fd) = dp.params, dp.formats
    fs, block = dp.scale_format, dp.block_size
    if scale_a is None:
        raise ValueError("GDFS needs block scales (scale_a and scale_b)")
    g = p.group or 16
    P, _ = _product_stage(fa, a, fb, b)
    K, R = P.shape
    sigma = P.reshape(K // g, g, R).sum(1)                       # exact group sums (docs/spec.md §4.5)
    all_zero = ~(P != 0).reshape(K // g, g, R).any(1)            # only these take e_zero, not a cancelled sum
    sv, se = _scale_stage(fs, scale_a, scale_b)
    if block > g:                                                 # one scale pair covers several groups
        sv, se = np.repeat(sv, block // g, axis=0), np.repeat(se, block // g, axis=0)
    with np.errstate(all="ignore"):
        term = sigma * sv                                         # unnormalised: sigma * scale significands
    # exponent: the sum of the scale exponents; e_zero for a group of zero products or a zero scale product
    gexp = np.where(all_zero | (sv == 0), p.e_zero, se)
    cv, ce = _operand_values(fc, c)
    zeros = _zero_terms(P, cv) if p.zero_sign == ZeroSign.IEEE754 else None
    _check_exact(p, 12, K // g + 1)
    e_max = np.maximum(gexp.max(0), np.where(ce <= NO_TERM, p.e_zero, ce))
    scale = np.ldexp(1.0, (p.F - e_max).astype(np.int32))
    if trace is not None:
        trace.append((Label(Stage.PRODUCTS, "exact products"), {"value": _T(P).copy()}))
        trace.append((Label(Stage.GROUP_SUMS, f"exact group sums of {g}"), {"sigma": _T(sigma)}))
        trace.append((Label(Stage.SCALED, "times the block scales"), {"term": _T(term), "exponent": _T(gexp)}))
        trace.append((Label(Stage.MAX_EXPONENT, "maximum exponent"), {"e_max": e_max}))
    A = _truncate(term.copy(), scale[None, :])
    total = A.sum(0) + np.trunc(cv * scale)
    if trace is not None:
        trace.append((Label(Stage.ALIGNED, f"aligned to F={p.F} (RZ) and summed"), {"terms": _T(A), "sum": total}))
    d = _finish(fd, total, e_max - p.F, p, zeros=zeros)
    if trace is not None:
        trace.append((Label(Stage.ROUNDED, "normalised and rounded"), {"d": d}))
    return d


# --------------------------------------------------------------------------- FDRDA / GFDRDA

def _amd_products(p: Params, fa, a, fb, b, cv):
    """Products with AMD's overflow, and the special outcome per row (NaN/inf, else finite).

    ``specials="paper"``, the paper's step order (IV-F): step 1 decides on the inputs' own
    NaN and infinities (c included) before step 2 computes products, so an input infinity
    wins over a product that overflows to the other sign; only then (step 3) do overflowed
    products decide.  ``specials="later_model"``: the authors' later model
    (microsoft/MMA-Sim, ``src/mmasim/mmasim/arithmetic/fdpa.py``, ``tr_fdpa``) has no special-value
    step: it turns overflowed products into infinities and adds them, the input infinities
    and c as floating-point numbers, so ``+inf`` meeting ``-inf`` is NaN whichever came from
    an input.
    """
    P, E = _product_stage(fa, a, fb, b)
    special = P.sum(0) + cv                      # step 1: finite products of finite inputs cannot be inf
    if p.product_overflow and _products_overflow(fa, fb):
        # |p| >= 2**128 overflows to infinity (docs/spec.md §4.4); f16/fp8 products never get there
        over = np.abs(P) >= 2.0 ** 128
        if over.any():
            P = np.where(over, np.copysign(np.inf, P), P)
            if p.specials == Specials.LATER_MODEL:
                special = P.sum(0) + cv                                     # one sum: NaN where they meet
            else:
                special = np.where(np.isfinite(special), P.sum(0), special)    # step 3
    return P, E, special


def _dot_special(p: Params, P):
    """The products' own special outcome (IEEE sum, overflowed products included), where the later
    model can drop c; None otherwise (not needed)."""
    return P.sum(0) if p.specials == Specials.LATER_MODEL and p.c_drop is not None else None


def _set_dot(p: Params, P, E):
    """Products aligned to their own maximum (zeros left out), F bits, truncated, summed: ``(s, e, has)``."""
    e = E.max(0)
    has = e > NO_TERM
    e = np.where(has, e, PARKED)
    s = _truncate(P.copy(), np.ldexp(1.0, (p.F - e).astype(np.int32))[None, :]).sum(0)
    return s, e, has


def _merge_with_c(p: Params, fd, s_dot, e_dot, has_dot, dot_frac, cv, ce, special, trace, dot_special=None,
                  zeros=None):
    """FDRDA steps 6-8 with the exact floors of docs/spec.md §4.4.

    ``dot_special``: the products' own special outcome (c left out), which decides a row
    whose NaN or infinite c the later model drops (``specials="later_model"``, GFDRDA).
    """
    ce = np.where(ce <= NO_TERM, -126, ce)                    # a zero c keeps the exponent -126
    if p.specials == Specials.LATER_MODEL and p.c_drop is not None:
        ce = np.where(np.isfinite(cv), ce, NONFINITE_C_EXP)    # the exponent the later model reads
    e_max = np.where(has_dot, np.maximum(e_dot, ce), ce)
    D = np.where(has_dot, _floor_scaled(s_dot, p.dot_floor_bits - dot_frac - (e_max - e_dot), p.floor_rounding), 0.0)
    C = _floor_scaled(cv, p.c_floor_bits - e_max, p.floor_rounding)
    if p.c_drop is not None:
        drop = ce < e_max - p.c_drop
        if p.specials == Specials.LATER_MODEL:
            # the later model's gtr_fdpa zeroes c below e_max - 25 whatever c is, NaN and infinity included
            special = np.where(drop & ~np.isfinite(cv), dot_special, special)
        else:
            drop &= np.isfinite(cv)                           # step 1 decided a NaN/infinite c already
        C = np.where(drop, 0.0, C)
    T = D + np.ldexp(C, p.dot_floor_bits - p.c_floor_bits)
    ints = np.where(np.isfinite(T), T, 0.0).astype(np.int64)
    lsb = e_max - p.dot_floor_bits
    e_n = np.maximum(lsb + bit_length(np.abs(ints)) - 1, -126)
    Tn = _floor_scaled(np.where(np.isfinite(T), T, 0.0), lsb - (e_n - p.final_floor_bits), p.floor_rounding)
    if trace is not None:
        trace.append((Label(Stage.MAX_EXPONENT, "maximum exponent with c"),
                      {"e_dot": np.where(has_dot, e_dot, np.nan), "e_c": ce, "e_max": e_max}))
        how = "round-down" if p.floor_rounding == FloorRounding.RD else "toward-zero"
        trace.append((Label(Stage.ALIGNED, f"{how} alignment: dot at {p.dot_floor_bits}, c at {p.c_floor_bits} "
                                      "fraction bits (units of 2^(e_max-32))"),
                      {"dot": D, "c": np.ldexp(C, p.dot_floor_bits - p.c_floor_bits), "sum": T}))
        trace.append((Label(Stage.NORMALISED, f"normalised (exponent >= -126), floored to {p.final_floor_bits} "
                                              "fraction bits"),
                      {"significand": Tn, "exponent": e_n}))
    d = _finish(fd, Tn, e_n - p.final_floor_bits, p, rounding=Rounding.RNE, special=special, zeros=zeros)
    if trace is not None:
        trace.append((Label(Stage.ROUNDED, "rounded to f32 (RNE)"), {"d": d}))
    return d


def fdrda(dp: Datapath, a, b, c, scale_a=None, scale_b=None, trace=None):
    """Fused dot, round-down add (CDNA3 tf32/f16/bf16; docs/spec.md §3, FDRDA)."""
    p, (fa, fb, fc, fd) = dp.params, dp.formats
    cv, ce = _operand_values(fc, c)
    P, E, special = _amd_products(p, fa, a, fb, b, cv)
    _check_exact(p, 2, P.shape[0])
    if trace is not None:
        trace.append((Label(Stage.PRODUCTS, "products (exact; zeros left out of the maximum)"),
                      {"value": _T(P).copy(), "exponent": _T(np.where(E <= NO_TERM, np.nan, E))}))
    s_dot, e_dot, has = _set_dot(p, P, E)
    if trace is not None:
        trace.append((Label(Stage.DOT_SUM, f"products aligned to their maximum, F={p.F} (RZ), summed "
                                           "(units of 2^(e_dot-F))"),
                      {"s_dot": s_dot, "e_dot": np.where(has, e_dot, np.nan)}))
    return _merge_with_c(p, fd, s_dot, e_dot, has, p.F, cv, ce, special, trace, _dot_special(p, P),
                         _zero_terms(P, cv) if p.zero_sign == ZeroSign.IEEE754 else None)


def gfdrda(dp: Datapath, a, b, c, scale_a=None, scale_b=None, trace=None):
    """Group fused dot, round-down add (CDNA3 fp8/bf8; docs/spec.md §3, GFDRDA)."""
    p, (fa, fb, fc, fd) = dp.params, dp.formats
    cv, ce = _operand_values(fc, c)
    P, E, special = _amd_products(p, fa, a, fb, b, cv)
    _check_exact(p, 2, P.shape[0])
    (s_e, e_e, has_e), (s_o, e_o, has_o) = (_set_dot(p, P[i::2], E[i::2]) for i in (0, 1))
    has = has_e | has_o
    e_dot = np.maximum(np.where(has_e, e_e, PARKED), np.where(has_o, e_o, PARKED))
    m = p.merge_floor_bits
    s_dot = (np.where(has_e, _floor_scaled(s_e, m - p.F - (e_dot - e_e), p.floor_rounding), 0.0) +
             np.where(has_o, _floor_scaled(s_o, m - p.F - (e_dot - e_o), p.floor_rounding), 0.0))
    if trace is not None:
        trace.append((Label(Stage.PRODUCTS, "products (exact; zeros left out of the maximum)"),
                      {"value": _T(P).copy(), "exponent": _T(np.where(E <= NO_TERM, np.nan, E))}))
        trace.append((Label(Stage.DOT_SUM, f"even and odd products, each aligned to its maximum, F={p.F} (RZ), summed"),
                      {"s_even": s_e, "e_even": np.where(has_e, e_e, np.nan),
                       "s_odd": s_o, "e_odd": np.where(has_o, e_o, np.nan)}))
        trace.append((Label(Stage.MERGED, f"merged with round-down at {m} fraction bits"),
                      {"s_dot": s_dot, "e_dot": e_dot}))
    return _merge_with_c(p, fd, s_dot, e_dot, has, m, cv, ce, special, trace, _dot_special(p, P),
                         _zero_terms(P, cv) if p.zero_sign == ZeroSign.IEEE754 else None)


# --------------------------------------------------------------------------- GPS

_SIGN32 = np.uint32(0x80000000)
_EXP32 = np.uint32(0x7F800000)


def _flush_signed(x):
    """f32 values below 2**-126 (subnormals) become a zero of the same sign, in place."""
    bits = x.view(np.uint32)
    tiny = (bits & _EXP32) == 0
    bits &= np.where(tiny, _SIGN32, np.uint32(0xFFFFFFFF))
    return x


@functools.cache
def _flushed_f32_table(fmt: Format):
    """f32 value of every pattern of a 16-bit format, subnormals and zeros as +0 (GPS step 1)."""
    d = decode(fmt, np.arange(1 << fmt.value_bits, dtype=np.uint64))
    v = _values(fmt, d).astype(np.float32)
    return np.where((d.cls == SUBNORMAL) | (d.cls == ZERO), np.float32(0.0), v)


def _pairwise_sum(p):
    """PAIRWISESUM of the paper's Algorithm 2 over the rows of ``p`` ([G, R]): (p0+p1)+(p2+p3), each add flushed."""
    n = p.shape[0]
    if n == 1:
        return p[0]
    return _flush_signed(_pairwise_sum(p[: n // 2]) + _pairwise_sum(p[n // 2:]))


def gps(dp: Datapath, a, b, c, scale_a=None, scale_b=None, trace=None):
    """Group pairwise sum with subnormal flushing (CDNA2 f16/bf16; docs/spec.md §3, GPS).

    numpy's float32 multiply and add are IEEE binary32 operations with RNE
    and subnormals, so each paper step is one numpy operation plus a flush.
    """
    p, (fa, fb, fc, fd) = dp.params, dp.formats
    av = _gather(_flushed_f32_table(fa), _index(fa, a.T), np.float32)
    bv = _gather(_flushed_f32_table(fb), _index(fb, b.T), np.float32)
    prods = _flush_signed(av * bv)
    cv, _ = _operand_values(fc, c)
    d = cv.astype(np.float32)
    d = np.where((d.view(np.uint32) & _EXP32) == 0, np.float32(0.0), d)    # c: subnormal (or -0) -> +0
    K, R = prods.shape
    g = p.group
    sums = []
    for j in range(0, K, g):
        gamma = _pairwise_sum(prods[j:j + g])
        sums.append(gamma)
        d = _flush_signed(d + gamma)
    if trace is not None:
        trace.append((Label(Stage.INPUTS, "inputs as f32, subnormals flushed to +0"), {"a": _T(av), "b": _T(bv)}))
        trace.append((Label(Stage.PRODUCTS, "f32 products (RNE), subnormals flushed keeping the sign"),
                      {"p": _T(prods)}))
        trace.append((Label(Stage.GROUP_SUMS, f"pairwise group sums (G={g})"), {"gamma": _T(np.stack(sums))}))
        trace.append((Label(Stage.STEPS, "sequential accumulation from c"), {"d": d}))
    bits = d.view(np.uint32)
    # numpy's NaN bits depend on the code path (SIMD lanes make x86's default NaN 0xFFC00000, a
    # scalar tail propagates an input's 0x7FC00000), so a NaN's bits would depend on the row's
    # place in the batch: every NaN result is the canonical quiet NaN, as hw.gps computes it
    bits = np.where((bits & ~_SIGN32) > _EXP32, np.uint32(0x7FC00000), bits)
    return bits.astype(get_format(fd).dtype)


# --------------------------------------------------------------------------- SFMA

def sfma(dp: Datapath, a, b, c, scale_a=None, scale_b=None, trace=None):
    """Sequential IEEE fused multiply-adds, RNE (docs/spec.md §3, SFMA), or ``p.fma_rounding``."""
    from .fma import fma_f32, fma_f64  # imported here: only SFMA needs it
    p, fd = dp.params, dp.d_format
    fma = {"f64": fma_f64, "f32": fma_f32}[fd.name]
    if p.fma_rounding != Rounding.RNE:
        if fd.name != "f32":
            raise ValueError(f"SFMA rounds {fd.name} to nearest even only; fma_rounding={p.fma_rounding} "
                             "is a binary32 design")
        fma = functools.partial(fma_f32, mode=p.fma_rounding)
    dt = fd.dtype
    aT, bT = a.T.astype(dt), b.T.astype(dt)
    d = np.asarray(c).astype(dt)
    steps = []
    for k in range(aT.shape[0]):
        d = fma(aT[k], bT[k], d)
        steps.append(d)
    if trace is not None:
        trace.append((Label(Stage.STEPS, "d after each fma, in order"), {"d_k": np.stack(steps, -1)}))
    return d


# --------------------------------------------------------------------------- the descriptors

def _gps_group(p: Params) -> None:
    if p.group not in (1, 2, 4, 8, 16):
        raise ValueError("GPS needs group G, a power of two up to 16")


def _sfma_formats(p: Params, d) -> None:
    if d.fd is not None and d.fa is not None:
        names = {f.name for f in (d.fa, d.fb, d.fc, d.fd) if f is not None}
        if len(names) != 1 or d.fd.name not in ("f32", "f64"):
            raise ParamsSpecError(f"{d.where}: SFMA runs IEEE fused multiply-adds in one format, f32 or f64, "
                                  f"for a, b, c and d; got {d.fa.name}, {d.fb.name}, {d.fc.name}, {d.fd.name}")


def _gps_formats(p: Params, d) -> None:
    if d.fd is not None:
        if d.fc.name != "f32" or d.fd.name != "f32":
            raise ParamsSpecError(f"{d.where}: GPS accumulates in f32 (c and d f32), not {d.fc.name} -> {d.fd.name}")
        for f in (d.fa, d.fb):
            if f is not None and (f.nan != NanKind.IEEE or not f.subnormals or f.value_bits > 16):
                raise ParamsSpecError(f"{d.where}: GPS takes IEEE-style operands with subnormals of at most 16 bits "
                                      f"(f16, bf16), not {f.name}")


def _gdfs_formats(p: Params, d) -> None:
    if d.fd is not None and d.fs is None:
        raise ParamsSpecError(f"{d.where}: GDFS needs block scales (a scale format and block size)")
    if d.fs is not None and d.L:
        g = p.group or 16
        if d.L % g or d.block % g:
            raise _in("group", p.group, d.where, f"a divisor of the pass K={d.L} and of the block size {d.block}")


_NEEDS_F = {"F": "F >= 0 (fraction bits kept after alignment) or F='exact'"}
_NEEDS_E_ZERO = {"e_zero": "e_zero (the exponent of zero terms)"}
_AMD_READS = ("pass_size", "F", "product_overflow", "dot_floor_bits", "c_floor_bits", "final_floor_bits",
              "floor_rounding", "c_drop", "specials")

# One per algorithm; its compiled kernel is named by kernel_code (a new algorithm is one more, anywhere:
# docs/extending.md)
describe(Algorithm("SFMA", sfma, ("fma_rounding", "nan_bits"), chained=False,
                   describes={"zero_sign": (ZeroSign.IEEE, ZeroSign.IEEE754)}, check_formats=_sfma_formats,
                   kernel_code=KernelCode.SFMA, summary="sequential IEEE fused multiply-adds"))
describe(Algorithm("GPS", gps, ("group", "nan_bits"), chained=False, flushes=True, check=_gps_group,
                   describes={"zero_sign": (ZeroSign.IEEE,), "flush_subnormals": (True,)}, check_formats=_gps_formats,
                   kernel_code=KernelCode.GPS, summary="group pairwise sums with subnormal flushing"))
describe(Algorithm("FDA", fda, ("pass_size", "F", "e_zero", "operand_format", "pass_interleave", "c_last") + _FINISH,
                   requires=_NEEDS_F | _NEEDS_E_ZERO, exact_nan=True, exact_F=True, lowering=True,
                   kernel_code=KernelCode.FDA, exact_terms=lambda p, L: (2, L + 1),       # L products and c
                   summary="fused dot-add: products aligned to the largest exponent, truncated, summed"))
describe(Algorithm("GDFS", gdfs, ("pass_size", "F", "e_zero", "group") + _FINISH,
                   requires=_NEEDS_F | _NEEDS_E_ZERO, exact_nan=True, check_formats=_gdfs_formats,
                   kernel_code=KernelCode.GDFS, exact_terms=lambda p, L: (12, L // (p.group or 16) + 1),
                   summary="group dot, fused sum: exact group sums times their block scales, fused"))
describe(Algorithm("FDRDA", fdrda, _AMD_READS + _FINISH, requires=_NEEDS_F, kernel_code=KernelCode.FDRDA,
                   disputed=("inf_meets_overflow",), summary="fused dot, round-down add"))
describe(Algorithm("GFDRDA", gfdrda, _AMD_READS[:3] + ("merge_floor_bits",) + _AMD_READS[3:] + _FINISH,
                   requires=_NEEDS_F, kernel_code=KernelCode.GFDRDA,
                   disputed=("inf_meets_overflow", "nonfinite_small_c"),
                   summary="group fused dot, round-down add (even and odd sets)"))

BASES = tuple(ALGORITHMS)                                    # the algorithm names, in descriptor order
