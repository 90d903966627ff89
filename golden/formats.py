"""Number formats as data: one table drives every decoder and encoder.

Every element travels as an unsigned integer bit pattern, one element per
integer; narrow formats (fp6, fp4) sit in the low bits.  TF32 travels as the
32-bit word that holds it (its low 13 bits are ignored on input, as the
hardware does), and UE4M3 as a byte whose top bit is ignored.

A decoded element is ``(sign, exp, sig, cls)`` with::

    value = (-1)**sign * sig * 2**(exp - man_bits)

``sig`` is the integer significand including the hidden bit, ``exp`` the
exponent of the hidden-bit position.  A subnormal uses the format's minimum
exponent and no hidden bit (docs/spec.md §4.7).  ``cls`` is one of
:data:`ZERO`, :data:`SUBNORMAL`, :data:`NORMAL`, :data:`INF`, :data:`NAN`.

Encoding goes the other way: an exact value ``mag * 2**exp`` is rounded to the
format with RZ, RD, RU or RNE (:func:`round_to_format`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .rules import ROUNDING_MODES, Overflow, Rounding, Word

__all__ = [
    "Format", "FORMATS", "get_format", "decode", "Decoded", "round_to_format",
    "special_bits", "ZERO", "SUBNORMAL", "NORMAL", "INF", "NAN", "ROUNDING_MODES", "NanKind",
    "bit_length", "check_bits",
]

ZERO, SUBNORMAL, NORMAL, INF, NAN = 0, 1, 2, 3, 4


class NanKind(Word):
    """``Format.nan``: how a format encodes NaN (the order of the kernels' ``NAN_*`` codes)."""

    IEEE = "ieee"                    # all-ones exponent, non-zero mantissa
    ALL_ONES = "all_ones"            # exponent and mantissa all ones (OCP e4m3, ue4m3)
    NEGATIVE_ZERO = "negative_zero"  # the sign bit alone (FNUZ)
    MAX_EXPONENT = "max_exponent"    # the all-ones exponent (ue8m0: 0xFF)
    NONE = "none"                    # no NaN


@dataclass(frozen=True)
class Format:
    """One floating-point (or scale) format.

    Parameters
    ----------
    name : str
        Canonical name (``f16``, ``e4m3``, ``ue8m0``, ...).
    exp_bits, man_bits : int
        Widths of the exponent and mantissa fields.
    bias : int
        Exponent bias.
    signed : bool
        Whether there is a sign bit (scales are unsigned).
    inf : bool
        Whether the all-ones exponent with zero mantissa is an infinity.
    nan : NanKind
        How NaN is encoded: ``"ieee"`` (all-ones exponent, non-zero mantissa),
        ``"all_ones"`` (OCP e4m3 and ue4m3: exponent and mantissa all ones),
        ``"negative_zero"`` (FNUZ: the sign bit alone), ``"max_exponent"``
        (ue8m0: 0xFF) or ``"none"``.
    subnormals : bool
        False for ue8m0, whose zero exponent field is the normal value 2**-127.
    storage_bits : int
        Width of the integer that carries one element.
    ignored_low_bits, ignored_high_bits : int
        Bits of the storage word the hardware ignores (TF32: low 13; UE4M3:
        the top bit of its byte).
    aliases : tuple of str
        Other accepted names.
    """

    name: str
    exp_bits: int
    man_bits: int
    bias: int
    signed: bool = True
    inf: bool = True
    nan: NanKind = NanKind.IEEE
    subnormals: bool = True
    storage_bits: int = 0
    ignored_low_bits: int = 0
    ignored_high_bits: int = 0
    aliases: tuple = ()
    numpy_dtype: str | None = field(default=None, compare=False)

    @property
    def value_bits(self) -> int:
        """Bits that carry the value: sign, exponent and mantissa."""
        return int(self.signed) + self.exp_bits + self.man_bits

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal (and of every subnormal)."""
        return (1 if self.subnormals else 0) - self.bias

    @property
    def emax(self) -> int:
        """Exponent of the largest finite value."""
        top = (1 << self.exp_bits) - 1
        if self.inf or self.nan == NanKind.IEEE or self.nan == NanKind.MAX_EXPONENT:
            top -= 1
        return top - self.bias

    @property
    def max_mantissa(self) -> int:
        """Largest mantissa field at ``emax``."""
        full = (1 << self.man_bits) - 1
        return full - 1 if self.nan == NanKind.ALL_ONES else full

    @property
    def has_nan(self) -> bool:
        return self.nan != NanKind.NONE

    @property
    def max_finite(self) -> float:
        return float((1 << self.man_bits) + self.max_mantissa) * 2.0 ** (self.emax - self.man_bits)

    @property
    def dtype(self):
        """The unsigned integer dtype of the bit patterns."""
        return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[max(8, _pow2(self.storage_bits))]

    def __str__(self) -> str:
        return self.name


def _pow2(n: int) -> int:
    p = 8
    while p < n:
        p *= 2
    return p


def _fmt(name, e, m, bias, storage=None, **kw) -> Format:
    signed = kw.get("signed", True)
    bits = int(signed) + e + m
    return Format(name, e, m, bias, storage_bits=storage or bits, **kw)


FORMATS: dict[str, Format] = {f.name: f for f in [
    _fmt("f64", 11, 52, 1023, numpy_dtype="float64", aliases=("fp64", "float64", "binary64")),
    _fmt("f32", 8, 23, 127, numpy_dtype="float32", aliases=("fp32", "float32", "binary32")),
    _fmt("tf32", 8, 10, 127, storage=32, ignored_low_bits=13, aliases=("xf32",)),
    _fmt("f16", 5, 10, 15, numpy_dtype="float16", aliases=("fp16", "float16", "binary16", "half")),
    _fmt("bf16", 8, 7, 127, numpy_dtype="bfloat16", aliases=("bfloat16",)),
    _fmt("e4m3", 4, 3, 7, inf=False, nan=NanKind.ALL_ONES, numpy_dtype="float8_e4m3fn",
         aliases=("float8_e4m3fn", "e4m3fn", "fp8_e4m3")),
    _fmt("e5m2", 5, 2, 15, numpy_dtype="float8_e5m2", aliases=("float8_e5m2", "fp8_e5m2")),
    _fmt("e4m3fnuz", 4, 3, 8, inf=False, nan=NanKind.NEGATIVE_ZERO, numpy_dtype="float8_e4m3fnuz",
         aliases=("fp8", "float8_e4m3fnuz")),
    _fmt("e5m2fnuz", 5, 2, 16, inf=False, nan=NanKind.NEGATIVE_ZERO, numpy_dtype="float8_e5m2fnuz",
         aliases=("bf8", "float8_e5m2fnuz")),
    _fmt("e3m2", 3, 2, 3, inf=False, nan=NanKind.NONE, numpy_dtype="float6_e3m2fn",
         aliases=("float6_e3m2fn", "fp6_e3m2")),
    _fmt("e2m3", 2, 3, 1, inf=False, nan=NanKind.NONE, numpy_dtype="float6_e2m3fn",
         aliases=("float6_e2m3fn", "fp6_e2m3")),
    _fmt("e2m1", 2, 1, 1, inf=False, nan=NanKind.NONE, numpy_dtype="float4_e2m1fn",
         aliases=("float4_e2m1fn", "fp4", "fp4_e2m1")),
    _fmt("ue8m0", 8, 0, 127, signed=False, inf=False, nan=NanKind.MAX_EXPONENT, subnormals=False,
         numpy_dtype="float8_e8m0fnu", aliases=("e8m0", "float8_e8m0fnu", "e8")),
    _fmt("ue4m3", 4, 3, 7, storage=8, signed=False, inf=False, nan=NanKind.ALL_ONES, ignored_high_bits=1,
         aliases=("e4m3_scale",)),
]}

_BY_ALIAS = {a.lower(): f for f in FORMATS.values() for a in (f.name, *f.aliases)}


def get_format(fmt: str | Format) -> Format:
    """Return the :class:`Format` for a name or alias (case-insensitive)."""
    if isinstance(fmt, Format):
        return fmt
    try:
        return _BY_ALIAS[str(fmt).lower()]
    except KeyError:
        raise ValueError(f"unknown number format {fmt!r}; valid formats: {', '.join(FORMATS)}") from None


@dataclass
class Decoded:
    """Decoded elements; see the module docstring for the meaning."""

    sign: np.ndarray
    exp: np.ndarray
    sig: np.ndarray
    cls: np.ndarray

    def __getitem__(self, idx) -> Decoded:
        return Decoded(self.sign[idx], self.exp[idx], self.sig[idx], self.cls[idx])


def check_bits(fmt: Format, bits, what: str = "operand") -> np.ndarray:
    """Validate bit patterns against the storage width and return them as uint64."""
    arr = np.asarray(bits)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "ui":
        raise TypeError(f"{what}: expected unsigned integer bit patterns of format {fmt.name}, "
                        f"got dtype {arr.dtype}")
    if arr.dtype.kind == "i" and arr.size and int(arr.min()) < 0:
        raise ValueError(f"{what}: negative value {int(arr.min())} is not a bit pattern of {fmt.name}")
    wide = fmt.storage_bits < 8 * arr.dtype.itemsize     # a narrower dtype cannot hold a wider pattern
    arr = arr.astype(np.uint64, copy=False)
    if wide and arr.size:
        top = int(arr.max())
        if top >> fmt.storage_bits:
            raise ValueError(f"{what}: bit pattern {top:#x} is wider than format {fmt.name} "
                             f"({fmt.storage_bits} bits)")
    return arr


def decode(fmt: str | Format, bits) -> Decoded:
    """Decode bit patterns (any integer array) into sign, exponent, significand, class."""
    fmt = get_format(fmt)
    bits = np.asarray(bits)
    if fmt.value_bits <= 16:
        t = _decode_table(fmt)
        idx = (bits.astype(np.int64) >> fmt.ignored_low_bits) & ((1 << fmt.value_bits) - 1)
        return Decoded(t.sign[idx], t.exp[idx], t.sig[idx], t.cls[idx])
    return _decode_arith(fmt, bits.astype(np.uint64))


@functools.cache
def _decode_table(fmt: Format) -> Decoded:
    """All values of a narrow format, decoded once: decoding is then one gather."""
    d = _decode_arith(fmt, np.arange(1 << fmt.value_bits, dtype=np.uint64) << np.uint64(fmt.ignored_low_bits))
    for a in (d.sign, d.exp, d.sig, d.cls):
        a.setflags(write=False)
    return d


def _decode_arith(fmt: Format, bits: np.ndarray) -> Decoded:
    v = (bits >> np.uint64(fmt.ignored_low_bits)) & np.uint64((1 << fmt.value_bits) - 1)
    man = (v & np.uint64((1 << fmt.man_bits) - 1)).astype(np.int64)
    efield = ((v >> np.uint64(fmt.man_bits)) & np.uint64((1 << fmt.exp_bits) - 1)).astype(np.int64)
    if fmt.signed:
        sign = (v >> np.uint64(fmt.exp_bits + fmt.man_bits)).astype(np.int8)
    else:
        sign = np.zeros(v.shape, np.int8)
    hidden = 1 << fmt.man_bits
    top = (1 << fmt.exp_bits) - 1
    if fmt.subnormals:
        sub = efield == 0
        sig = np.where(sub, man, man + hidden)
        exp = np.where(sub, fmt.emin, efield - fmt.bias)
        cls = np.where(sub, np.where(man == 0, ZERO, SUBNORMAL), NORMAL).astype(np.int8)
    else:
        sig = man + hidden
        exp = efield - fmt.bias
        cls = np.full(v.shape, NORMAL, np.int8)
    if fmt.nan == NanKind.IEEE:
        cls = np.where(efield == top, np.where(man == 0, INF, NAN), cls).astype(np.int8)
    elif fmt.nan == NanKind.ALL_ONES:
        cls = np.where((efield == top) & (man == (1 << fmt.man_bits) - 1), NAN, cls).astype(np.int8)
    elif fmt.nan == NanKind.NEGATIVE_ZERO:
        cls = np.where((sign == 1) & (efield == 0) & (man == 0), NAN, cls).astype(np.int8)
    elif fmt.nan == NanKind.MAX_EXPONENT:
        cls = np.where(efield == top, NAN, cls).astype(np.int8)
    return Decoded(sign, exp.astype(np.int32), sig.astype(np.int64), cls)


def special_bits(fmt: str | Format, kind: str, sign=0):
    """Bit pattern of ``"inf"``, ``"nan"`` (canonical NVIDIA NaN), ``"max"`` (largest finite) or ``"zero"``."""
    fmt = get_format(fmt)
    s = (np.asarray(sign, np.uint64) << np.uint64(fmt.exp_bits + fmt.man_bits)) if fmt.signed else np.uint64(0)
    top = (1 << fmt.exp_bits) - 1
    if kind == "inf":
        if not fmt.inf:
            raise ValueError(f"format {fmt.name} has no infinity")
        word = top << fmt.man_bits
    elif kind == "nan":
        if fmt.nan == NanKind.NEGATIVE_ZERO:
            return np.uint64(1 << (fmt.value_bits - 1)) + np.zeros_like(s)
        if fmt.nan == NanKind.NONE:
            raise ValueError(f"format {fmt.name} has no NaN")
        # The canonical NaN of NVIDIA tensor cores: all ones below the sign.
        word = (1 << (fmt.exp_bits + fmt.man_bits)) - 1
        return np.uint64(word << fmt.ignored_low_bits) + np.zeros_like(s)
    elif kind == "zero":
        word = 0
    elif kind == "max":
        word = ((fmt.emax + fmt.bias) << fmt.man_bits) | fmt.max_mantissa
    else:
        raise ValueError(f"unknown special {kind!r}")
    return (np.uint64(word) | s) << np.uint64(fmt.ignored_low_bits)


def bit_length(x: np.ndarray) -> np.ndarray:
    """Vectorised ``int.bit_length`` for non-negative int64 arrays (< 2**63)."""
    x = np.asarray(x, np.int64)
    _, e = np.frexp(x.astype(np.float64))
    e = e.astype(np.int64)
    # float64 rounding can lift x just below a power of two onto it.
    over = (e > 0) & ((x >> np.maximum(e - 1, 0)) == 0)
    return e - over


def round_to_format(fmt: str | Format, sign, mag, exp, mode: Rounding = Rounding.RNE, *,
                    frac_bits: int | None = None, overflow: Overflow = Overflow.IEEE) -> np.ndarray:
    """Round the exact values ``(-1)**sign * mag * 2**exp`` to ``fmt``.

    Parameters
    ----------
    fmt : Format or str
        Target format.
    sign : array of 0/1
        Sign of each value (also the sign of a zero result).
    mag : int64 array, non-negative, below 2**63
        Exact integer magnitude.
    exp : int array
        Exponent of ``mag``'s least significant bit.
    mode : Rounding
        Rounding direction.
    frac_bits : int, optional
        Round at this many fraction bits instead of the format's mantissa width
        (e.g. 13 for the E8M13 result of FP8 tensor cores); the exponent range
        stays the format's.
    overflow : Overflow
        ``"ieee"``: overflow gives infinity or the largest finite value as the
        rounding direction demands (NaN, or saturation, where the format has
        no infinity). ``"inf"``: any value whose rounded magnitude leaves the
        exponent range becomes infinity (NVIDIA's ``>= 2**128`` rule).

    Returns
    -------
    numpy array of unsigned bit patterns (dtype ``fmt.dtype``).
    """
    fmt = get_format(fmt)
    if mode not in ROUNDING_MODES:
        raise ValueError(f"unknown rounding mode {mode!r}; valid: {', '.join(ROUNDING_MODES)}")
    p = fmt.man_bits if frac_bits is None else frac_bits
    sign = np.asarray(sign).astype(np.int64)
    mag = np.asarray(mag, np.int64)
    exp = np.asarray(exp, np.int64)
    sign, mag, exp = np.broadcast_arrays(sign, mag, exp)

    e_top = exp + bit_length(mag) - 1
    q = np.maximum(e_top - p, fmt.emin - p)          # exponent of the result's last place
    shift = q - exp
    right = np.clip(shift, 0, 63)
    kept = np.where(shift > 0, mag >> right, mag << np.clip(-shift, 0, 63))
    rem = mag & ((np.uint64(1) << right.astype(np.uint64)) - np.uint64(1)).astype(np.int64)
    half = np.where(right > 0, np.int64(1) << np.maximum(right - 1, 0), 0)
    far = shift > 63                                   # everything is below half an ulp
    inexact = np.where(shift > 0, rem != 0, False) | (far & (mag != 0))
    above = (rem > half) & (shift > 0) & ~far
    tie = (rem == half) & (shift > 0) & ~far
    kept = np.where(far, 0, kept)
    if mode == Rounding.RNE:
        inc = above | (tie & ((kept & 1) == 1))
    elif mode == Rounding.RZ:
        inc = np.zeros_like(inexact)
    elif mode == Rounding.RU:
        inc = inexact & (sign == 0)
    else:
        inc = inexact & (sign == 1)
    kept = kept + inc
    carry = kept >> (p + 1) != 0
    kept = np.where(carry, kept >> 1, kept)
    q = q + carry

    normal = kept >= (1 << p)
    lead = q + p                                      # exponent of the leading bit when normal
    efield = np.where(normal, lead + fmt.bias, 0)
    man = np.where(normal, kept - (1 << p), kept) << (fmt.man_bits - p)
    over = normal & ((lead > fmt.emax) | ((lead == fmt.emax) & (man > fmt.max_mantissa)))
    word = (efield << fmt.man_bits) | man
    if fmt.signed:
        word = word | (sign << (fmt.exp_bits + fmt.man_bits))
    word = word.astype(np.uint64)

    if fmt.nan == NanKind.NEGATIVE_ZERO:            # FNUZ has no -0: a zero is +0
        word = np.where(word == np.uint64(1 << (fmt.value_bits - 1)), np.uint64(0), word)
    if over.any():
        if overflow == Overflow.INF:
            to_big = np.ones_like(over)
        else:
            to_big = {Rounding.RNE: np.ones_like(over), Rounding.RZ: np.zeros_like(over),
                      Rounding.RU: sign == 0, Rounding.RD: sign == 1}[mode]
        big = _overflow_bits(fmt, sign)
        word = np.where(over, np.where(to_big, big, special_bits(fmt, "max", sign)), word)
    word = word << np.uint64(fmt.ignored_low_bits)
    return word.astype(fmt.dtype)


def _overflow_bits(fmt: Format, sign):
    if fmt.inf:
        return special_bits(fmt, "inf", sign)
    if fmt.has_nan:
        return special_bits(fmt, "nan", sign)
    return special_bits(fmt, "max", sign)


def to_float(fmt: str | Format, bits) -> np.ndarray:
    """Values of bit patterns as float64 (exact for every format but f64's NaN payloads)."""
    fmt = get_format(fmt)
    if fmt.name == "f64":
        return np.asarray(bits, np.uint64).view(np.float64)
    d = decode(fmt, bits)
    with np.errstate(all="ignore"):
        val = np.ldexp(d.sig.astype(np.float64), (d.exp - fmt.man_bits).astype(np.int32))
        val = np.where(d.sign == 1, -val, val)
        val = np.where(d.cls == INF, np.where(d.sign == 1, -np.inf, np.inf), val)
        val = np.where(d.cls == NAN, np.nan, val)
    return val


def from_float(fmt: str | Format, values, mode: Rounding = Rounding.RNE) -> np.ndarray:
    """Round float64 values to bit patterns of ``fmt`` (NaN and infinities mapped as the format allows)."""
    fmt = get_format(fmt)
    x = np.asarray(values, np.float64)
    if not fmt.signed and (x < 0).any():            # -0.0 is not below zero: it is zero's encoding
        raise ValueError(f"{fmt.name} is unsigned: negative value {float(x[x < 0].ravel()[0])!r} has no encoding")
    xb = x.view(np.uint64)
    d = _decode_arith(get_format("f64"), xb)
    sig = d.sig
    out = round_to_format(fmt, d.sign, sig, d.exp.astype(np.int64) - 52, mode)
    nan = d.cls == NAN
    inf = d.cls == INF
    if nan.any():
        out = np.where(nan, special_bits(fmt, "nan") if fmt.has_nan else special_bits(fmt, "max"), out)
    if inf.any():
        out = np.where(inf, _overflow_bits(fmt, d.sign), out)
    return out.astype(fmt.dtype)
