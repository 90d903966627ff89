"""What a kernel is handed: formats as int64 rows, value/exponent tables, algorithm parameters as
int64 codes, all built from the same :class:`golden.Params` and :mod:`golden.formats` tables as
the numpy path (``algorithms._operand_table``), and :func:`supports`, the predicate that sends
every design a kernel does not model to the numpy path.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from .. import algorithms
from ..descriptors import ALGORITHMS, KernelCode
from ..formats import Format, NanKind, get_format, special_bits
from ..params import FIELDS, Params
from ..rules import (
    FLOOR_ROUNDINGS,
    OVERFLOWS,
    ROUNDING_MODES,
    SPECIALS,
    FloorRounding,
    Overflow,
    OverflowCode,
    Rounding,
    RoundingCode,
    Specials,
    ZeroSign,
)

# Columns of a format row (spec.format_row): where each field of a Format lives
(EXP_BITS, MAN_BITS, BIAS, SIGNED, EMIN, EMAX, MAX_MANTISSA, VALUE_BITS, IGNORED_LOW, NAN_KIND, TABLE_OFF,
 NAN_BITS, INF_BITS, MAX_BITS, HAS_INF, FNUZ, WORD32, EXP_TAB_OFF, SUBNORMALS) = range(19)
FORMAT_COLUMNS = 19
# NAN_KIND codes (golden.formats.NanKind, in its order), and what a NaN/overflow becomes where the format lacks it
NAN_CODES = {kind: code for code, kind in enumerate(NanKind)}
NAN_IEEE, NAN_ALL_ONES, NAN_NEG_ZERO, NAN_MAX_EXP, NAN_NONE = (NAN_CODES[k] for k in (
    NanKind.IEEE, NanKind.ALL_ONES, NanKind.NEGATIVE_ZERO, NanKind.MAX_EXPONENT, NanKind.NONE))
# Rounding modes and overflow rules as codes (golden.rules.RoundingCode, OverflowCode), as plain ints:
# the jitted kernels compare them with int64 parameters
RZ, RD, RU, RNE = (int(c) for c in (RoundingCode.RZ, RoundingCode.RD, RoundingCode.RU, RoundingCode.RNE))
OVERFLOW_INF, OVERFLOW_IEEE = int(OverflowCode.INF), int(OverflowCode.IEEE)

ZERO_EXP, NO_TERM, PARKED = algorithms.ZERO_EXP, algorithms.NO_TERM, algorithms.PARKED

# Slots of the format table every kernel takes
A, B, CF, D, S = range(5)        # a, b, c, d, scales (a and b as lowered when Params.operand_format is set)
SLOTS = 5

# Params fields no kernel models: a design that sets one to other than its default runs on the numpy
# path (supports() compares against the dataclass defaults, not a copy of them).  The modelled
# fields are the rest of golden.params.FIELDS, with the values they accept.
_UNMODELLED = frozenset({"nan_bits", "fma_rounding"})
_MODELLED = frozenset(FIELDS) - _UNMODELLED
_CHOICES = {"out_rounding": ROUNDING_MODES, "overflow": OVERFLOWS, "zero_sign": (ZeroSign.POSITIVE, ZeroSign.IEEE),
            "floor_rounding": FLOOR_ROUNDINGS, "specials": SPECIALS}

# Algorithm parameter vector (int64): indices
(P_F, P_EZERO, P_L, P_MODE, P_FRAC, P_OVERFLOW, P_ZPOS, P_GROUP, P_DOTFB, P_CFB, P_FINFB, P_MERGEFB,
 P_FLOOR_RD, P_CDROP, P_PROD_OVER, P_LATER, P_CLAST, P_INTERLEAVED, P_FAULT, P_BLOCK, P_SCALED, P_FLUSH,
 P_BASE, P_FAST) = range(24)
NPARAMS = 24
# prm[P_BASE]: the algorithm descriptor's kernel_code (golden.descriptors.KernelCode); an algorithm
# without one runs on the numpy path
GFDRDA_CODE = int(KernelCode.GFDRDA)
NO_C_DROP = -(1 << 40)
# Formats up to this many value bits are decoded by table, wider ones (TF32, f32, f64) from their
# fields; decoding f16/bf16 from their fields (_common.fields_value_exp) measured 2.5x slower than
# their 64K-entry tables, cache misses included (docs/golden.md, compiled kernels)
TABLE_BITS = 16


def format_row(fmt: Format, table_off: int, exp_off: int) -> np.ndarray:
    """One row of the format table (columns: golden.kernels._common)."""
    row = np.zeros(FORMAT_COLUMNS, np.int64)
    row[EXP_BITS], row[MAN_BITS], row[BIAS] = fmt.exp_bits, fmt.man_bits, fmt.bias
    row[SIGNED], row[EMIN], row[EMAX] = int(fmt.signed), fmt.emin, fmt.emax
    row[MAX_MANTISSA], row[VALUE_BITS], row[IGNORED_LOW] = fmt.max_mantissa, fmt.value_bits, fmt.ignored_low_bits
    row[NAN_KIND] = NAN_CODES[fmt.nan]
    row[TABLE_OFF], row[EXP_TAB_OFF] = table_off, exp_off
    row[NAN_BITS] = int(special_bits(fmt, "nan")) if fmt.has_nan else 0
    row[INF_BITS] = int(special_bits(fmt, "inf")) if fmt.inf else 0
    row[MAX_BITS] = int(special_bits(fmt, "max"))
    row[HAS_INF], row[FNUZ] = int(fmt.inf), int(fmt.nan == NanKind.NEGATIVE_ZERO)
    row[WORD32] = int(fmt.name in ("f32", "tf32"))
    row[SUBNORMALS] = int(fmt.subnormals)
    return row


@functools.cache
def _tables(fmt: Format, lowered_to: Format | None = None):
    """Value (float64) and exponent (int32) of every pattern of a narrow format, from the numpy
    path's own table; ``lowered_to``: the exponents the operand has once converted to that format
    (a compiled path's exact conversion, ``algorithms.convert_exactly``)."""
    val, exp = algorithms._operand_table(fmt)
    val = val.astype(np.float64)
    if lowered_to is not None:
        pats = np.arange(1 << fmt.value_bits, dtype=np.uint64) << np.uint64(fmt.ignored_low_bits)
        conv = algorithms.convert_exactly(fmt, pats, lowered_to)      # raises where not exact
        lval, lexp = algorithms._operand_values(lowered_to, conv)
        val, exp = lval.astype(np.float64), lexp
    return val, exp.astype(np.int32)


@functools.cache
def build(params: Params, formats: tuple, scale_format: Format | None, block: int | None, k: int):
    """``(fmts [SLOTS, cols], vtab, etab, prm)`` for one datapath (cached: built once per design)."""
    fa, fb, fc, fd = formats
    slots = [fa, fb, fc, fd, scale_format or fd]
    lowered = [None] * SLOTS
    if params.operand_format:          # a and b read through the exact conversion's values and exponents
        lowered[A] = lowered[B] = get_format(params.operand_format)
    rows, vals, exps, offsets, off = [], [], [], {}, 0
    for fmt, low in zip(slots, lowered):
        if fmt.value_bits <= TABLE_BITS or low is not None:
            if (fmt, low) not in offsets:          # a and b of one format share a table (cache)
                v, e = _tables(fmt, low)
                offsets[fmt, low] = off
                vals.append(v), exps.append(e)
                off += len(v)
            rows.append(format_row(fmt, offsets[fmt, low], offsets[fmt, low]))
        else:
            rows.append(format_row(fmt, -1, -1))
    fmts = np.stack(rows)
    # float32 values and int16 exponents: exact for every tabled format (at most 16 bits), and half
    # the cache footprint (f16's table is then 384 KB, an L2's worth, not 768 KB)
    vtab = np.concatenate(vals).astype(np.float32) if vals else np.zeros(1, np.float32)
    etab = np.concatenate(exps).astype(np.int16) if exps else np.zeros(1, np.int16)
    prm = param_vector(params, k, block, scale_format is not None)
    prm[P_FAST] = fast_kind(fmts, prm, scale_format is not None)
    return fmts, vtab, etab, prm


def param_vector(p: Params, k: int, block: int | None, scaled: bool) -> np.ndarray:
    prm = np.zeros(NPARAMS, np.int64)
    prm[P_F] = p.F if p.F is not None else 0
    prm[P_EZERO] = p.e_zero if p.e_zero is not None else 0
    L = p.pass_size if p.pass_size and algorithms.ALGORITHMS[p.base].chained else k
    prm[P_L] = L
    prm[P_MODE] = Rounding(p.out_rounding).code
    prm[P_FRAC] = p.out_frac_bits if p.out_frac_bits is not None else -1
    prm[P_OVERFLOW] = Overflow(p.overflow).code
    prm[P_ZPOS] = int(p.zero_sign == ZeroSign.POSITIVE)
    prm[P_GROUP] = p.group or 16
    prm[P_DOTFB], prm[P_CFB], prm[P_FINFB], prm[P_MERGEFB] = (p.dot_floor_bits, p.c_floor_bits,
                                                             p.final_floor_bits, p.merge_floor_bits)
    prm[P_FLOOR_RD] = int(p.floor_rounding == FloorRounding.RD)
    prm[P_CDROP] = p.c_drop if p.c_drop is not None else NO_C_DROP
    prm[P_PROD_OVER] = int(p.product_overflow)
    prm[P_LATER] = int(p.specials == Specials.LATER_MODEL)
    prm[P_CLAST] = int(p.c_last)
    prm[P_INTERLEAVED] = int(p.pass_interleave is not None)
    prm[P_BLOCK] = block or 1
    prm[P_SCALED] = int(scaled)
    prm[P_FLUSH] = int(p.flush_subnormals)
    prm[P_BASE] = kernel_code(p)
    return prm


def kernel_code(p: Params) -> KernelCode | None:
    """The compiled kernel of ``p``'s algorithm (its descriptor's ``kernel_code``), or None."""
    return ALGORITHMS[p.base].kernel_code


def _defaults_kept(p: Params) -> bool:
    """Every field the kernels do not model still has its default (new fields fall back)."""
    for f in dataclasses.fields(p):
        if f.name in _MODELLED:
            continue
        if f.default is dataclasses.MISSING or getattr(p, f.name) != f.default:
            return False
    return all(getattr(p, name) in ok for name, ok in _CHOICES.items())


def _plain_output(fd: Format) -> bool:
    """d formats whose NaN, infinity and zero the kernels write as the numpy path does."""
    return fd.inf and fd.nan == NanKind.IEEE and fd.ignored_low_bits == 0 and fd.signed


def _decodable(fmt: Format) -> bool:
    return fmt.value_bits <= 16 or fmt.name in ("f32", "tf32", "f64")


def supports(params: Params, formats, k: int, scale_format=None, block=None) -> bool:
    """Whether a compiled kernel computes this design bit for bit as the numpy path does.

    False sends the call to the numpy path (which also raises the clear errors, e.g. a design
    whose fixed-point sums would not be exact): a design is never answered by a kernel that
    does not model one of its fields.
    """
    p = params
    code = kernel_code(p)
    if code is None:
        return False                             # an algorithm without a kernel: the numpy path
    fa, fb, fc, fd = (get_format(f) for f in formats)
    fs = get_format(scale_format) if scale_format is not None else None
    if not _defaults_kept(p) or not all(_decodable(f) for f in (fa, fb, fc)):
        return False
    if p.F is not None and (isinstance(p.F, bool) or not isinstance(p.F, int)):
        return False                             # F="exact" (no alignment window): numpy only
    if code == KernelCode.SFMA:
        return fd.name in ("f32", "f64") and all(f.name == fd.name for f in (fa, fb, fc))
    if code == KernelCode.GPS:
        return (fd.name == "f32" and fa.value_bits <= TABLE_BITS and fb.value_bits <= TABLE_BITS and fs is None
                and k % p.group == 0 and fc.name in ("f32", "f16", "bf16"))
    L = p.pass_size if p.pass_size else k
    if k % L or not _plain_output(fd) or fd.value_bits > 32:
        return False
    if fs is not None and (not fs.value_bits <= 16 or block is None or L % block or p.pass_interleave is not None):
        return False
    if p.operand_format is not None and not _lowering_ok(fa, fb, p.operand_format):
        return False
    if p.c_last and (fc.name != fd.name or fd.name not in ("f16", "f32")):
        return False
    return _exact(p, code, L, block, fs is not None)


def _lowering_ok(fa, fb, fo) -> bool:
    fo = get_format(fo)
    if fo.value_bits > 16 or fa.value_bits > 16 or fb.value_bits > 16:
        return False
    try:
        _tables(fa, fo), _tables(fb, fo)
    except ValueError:
        return False
    return True


def _exact(p: Params, code: KernelCode, L: int, block, scaled: bool) -> bool:
    """The descriptor's bound (``exact_terms``) for this design (the numpy path raises its error otherwise)."""
    if code == KernelCode.GDFS:
        g = p.group or 16
        if not scaled or L % g or (block % g if block >= g else g % block) or block < g:
            return False
    int_bits, terms = ALGORITHMS[p.base].terms(p, L)
    return p.F + int_bits + int(terms).bit_length() <= algorithms.EXACT_BITS


# The integer-lane fast path (golden.kernels.fused_int): prm[P_FAST] says which design takes it
FAST_NONE, FAST_FDA, FAST_GDFS = range(3)


def _ieee_plain(row) -> bool:
    """A signed IEEE-style format with subnormals (emin = 1 - bias), as fused_int decodes it."""
    return (row[SIGNED] == 1 and row[SUBNORMALS] == 1 and row[EMIN] == 1 - row[BIAS] and row[EXP_BITS] <= 11
            and row[MAN_BITS] <= 23 and row[VALUE_BITS] <= 32)


def _pow2_scale(row) -> bool:
    """A scale format whose every value is ``2**(field - bias)`` (UE8M0): no zero, no infinity."""
    return (row[SIGNED] == 0 and row[SUBNORMALS] == 0 and row[MAN_BITS] == 0 and row[IGNORED_LOW] == 0
            and row[HAS_INF] == 0 and row[NAN_KIND] in (NAN_MAX_EXP, NAN_NONE))


def _group_scale(row) -> bool:
    """A GDFS scale format fused_int decodes: unsigned, no infinity (UE8M0, UE4M3)."""
    return (row[SIGNED] == 0 and row[IGNORED_LOW] == 0 and row[HAS_INF] == 0 and row[VALUE_BITS] <= 16
            and row[NAN_KIND] in (NAN_MAX_EXP, NAN_NONE, NAN_ALL_ONES)
            and (row[SUBNORMALS] == 0 or row[EMIN] == 1 - row[BIAS]))


def fast_kind(fmts: np.ndarray, prm: np.ndarray, scaled: bool) -> int:
    """Which integer-lane kernel computes this design (``FAST_*``).  Its bounds keep every integer
    in its lane: aligned products below 2**31, group sums and sums below 2**62; f16/f32-like c
    and d (IEEE specials, no ignored bits); FDA's scales powers of two, GDFS's operands without
    NaN or infinity."""
    a, b, c, d, s = (fmts[i] for i in (A, B, CF, D, S))
    F, mab, frac = int(prm[P_F]), int(a[MAN_BITS] + b[MAN_BITS]), int(prm[P_FRAC])
    plain = (all(_ieee_plain(r) for r in (a, b, c, d)) and d[HAS_INF] == 1 and d[NAN_KIND] == NAN_IEEE
             and c[IGNORED_LOW] == 0 and d[IGNORED_LOW] == 0 and frac <= d[MAN_BITS]
             and prm[P_INTERLEAVED] == 0 and prm[P_CLAST] == 0 and prm[P_FLUSH] == 0)
    if not plain:
        return FAST_NONE
    if prm[P_BASE] == KernelCode.FDA:
        return FAST_FDA if max(F, mab) + 2 <= 30 and (not scaled or _pow2_scale(s)) else FAST_NONE
    if prm[P_BASE] == KernelCode.GDFS and scaled and _group_scale(s):
        if a[NAN_KIND] != NAN_NONE or b[NAN_KIND] != NAN_NONE or a[HAS_INF] or b[HAS_INF]:
            return FAST_NONE
        span = int(a[EMAX] - a[EMIN] + b[EMAX] - b[EMIN])
        sigma_bits = mab + 2 + span + int(prm[P_GROUP]).bit_length()
        term_bits = sigma_bits + 2 * int(s[MAN_BITS] + 1)
        lift = max(0, F + int(a[EMIN] + b[EMIN]) - mab - 2 * int(s[MAN_BITS]))
        return FAST_GDFS if term_bits + lift <= 62 else FAST_NONE
    return FAST_NONE
