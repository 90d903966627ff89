"""Special values shared by every datapath: the row flags, the product rules and the bit patterns.

The bit patterns come from golden's format table (:func:`golden.formats.special_bits`); the IEEE
quiet NaN of the fma and GPS units (0x7FC00000), which golden has no name for (its ``"nan"`` is
NVIDIA's canonical all-ones NaN), is computed here, in this one place, from the :class:`Format`.
"""

from __future__ import annotations

from amaranth.lib import data

from golden.formats import NanKind, get_format, special_bits

__all__ = ["Specials", "ZeroTerms", "product_specials", "sign_bit", "inf_word", "nan_word", "max_word", "quiet_nan",
           "is_nan_word"]

# The special-value result of a row, resolved before the sum: NaN, +infinity, -infinity
Specials = data.StructLayout({"nan": 1, "pinf": 1, "ninf": 1})

# zero_sign="ieee754": every term of the row (products and c) is -0, or every term is +0
ZeroTerms = data.StructLayout({"all_neg": 1, "all_pos": 1})


def product_specials(x, y, x_zero=None, y_zero=None):
    """``(nan, inf)`` flags of the product of two decoded operands (:func:`hw.decode.Decoded`).

    NaN when either operand is NaN or the product is ``0 * inf``; infinite when either operand
    is infinite and the product is not NaN.  ``x_zero``/``y_zero`` replace the operands' own zero
    flags where a unit reads more values as zero (GPS: subnormal inputs).
    """
    xz = x.zero if x_zero is None else x_zero
    yz = y.zero if y_zero is None else y_zero
    nan = x.nan | y.nan | (x.inf & yz) | (xz & y.inf)
    return nan, (x.inf | y.inf) & ~nan


def sign_bit(fmt) -> int:
    """Position of the sign bit of a signed format."""
    f = get_format(fmt)
    return f.exp_bits + f.man_bits


def _word(fmt, kind: str) -> int:
    return int(special_bits(fmt, kind))


def inf_word(fmt) -> int:
    """+infinity's bit pattern (OR ``sign << sign_bit(fmt)`` for -infinity)."""
    return _word(fmt, "inf")


def nan_word(fmt) -> int:
    """The canonical NaN of NVIDIA tensor cores: all ones below the sign."""
    return _word(fmt, "nan")


def max_word(fmt) -> int:
    """The largest finite value's bit pattern (positive)."""
    return _word(fmt, "max")


def quiet_nan(fmt) -> int:
    """The IEEE canonical quiet NaN (0x7FC00000, 0x7FF8000000000000): infinity's exponent, the
    top mantissa bit set.  Not in golden's table, so built here from the format's fields."""
    f = get_format(fmt)
    return inf_word(f) | (1 << (f.man_bits - 1))


def is_nan_word(fmt, word):
    """1 where ``word`` (a result of an IEEE-style format: f16, bf16, f32, f64) is a NaN: the
    exponent all ones and a non-zero mantissa."""
    f = get_format(fmt)
    if f.nan != NanKind.IEEE or f.ignored_low_bits:
        raise NotImplementedError(f"no NaN test for {f.name} results in the RTL (IEEE-style formats only)")
    top = (1 << f.exp_bits) - 1
    return (word[f.man_bits:f.man_bits + f.exp_bits] == top) & (word[:f.man_bits] != 0)
