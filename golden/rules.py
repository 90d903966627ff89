"""The words of the arithmetic rules, defined once: rounding modes, overflow, the sign of zero,
the alignment floor and CDNA3's special-value readings.

Every module that takes or passes one of these (golden.params' checks, golden.formats' rounding,
hw's rounder, the probe's inference, golden.kernels' codes) reads these enums.  They are
``StrEnum``: a member equals its word (``Rounding.RZ == "RZ"``), so a ``Params`` written with plain
strings, a parsed spec or a JSON record all compare equal; the tuples below hold the plain words,
in the order the kernel codes use.  A word reprs as its plain word, so a ``Params`` repr, a message
quoting a value (``{value!r}``) and a record read the same whichever spelling made them.

The compiled kernels take integer codes: :class:`RoundingCode` and :class:`OverflowCode`, one per
word (``Rounding.RNE.code``), so golden.kernels never spells a mode of its own.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum

__all__ = ["Word", "Rounding", "RoundingCode", "Overflow", "OverflowCode", "ZeroSign", "FloorRounding", "Specials",
           "ROUNDING_MODES", "OVERFLOWS", "ZERO_SIGNS", "FLOOR_ROUNDINGS", "SPECIALS", "EXACT"]


class Word(StrEnum):
    """A word of the rules: equal to (and hashed as) its text, and written as its text."""

    def __repr__(self) -> str:
        return repr(self.value)


class Rounding(Word):
    """IEEE rounding directions (``Params.out_rounding``, ``fma_rounding``, ``round_to_format``)."""

    RZ = "RZ"        # toward zero
    RD = "RD"        # toward -infinity
    RU = "RU"        # toward +infinity
    RNE = "RNE"      # to nearest, ties to even

    @property
    def code(self) -> RoundingCode:
        """The kernels' integer code of this mode."""
        return RoundingCode[self.name]


class RoundingCode(IntEnum):
    """The compiled kernels' rounding codes (``prm[P_MODE]``), one per :class:`Rounding`."""

    RZ = 0
    RD = 1
    RU = 2
    RNE = 3


class Overflow(Word):
    """``Params.overflow``: what a result past the largest finite value becomes."""

    INF = "inf"      # any magnitude >= 2**(emax+1) is infinity, whatever the rounding
    IEEE = "ieee"    # the rounding direction decides (RZ and RD give the largest finite value)

    @property
    def code(self) -> OverflowCode:
        """The kernels' integer code of this rule."""
        return OverflowCode[self.name]


class OverflowCode(IntEnum):
    """The compiled kernels' overflow codes (``prm[P_OVERFLOW]``), one per :class:`Overflow`."""

    INF = 0
    IEEE = 1


class ZeroSign(Word):
    """``Params.zero_sign``: the sign of a zero result."""

    POSITIVE = "positive"    # every zero result is +0 (NVIDIA)
    IEEE = "ieee"            # a negative value rounding to zero keeps its sign; an exact zero sum is +0
    IEEE754 = "ieee754"      # IEEE 754 in full: a sum of -0 terms is -0, a cancellation +0 (-0 rounding down)


class FloorRounding(Word):
    """``Params.floor_rounding``: how FDRDA/GFDRDA's alignments drop bits."""

    RD = "RD"        # floor (CDNA3)
    RZ = "RZ"        # toward zero (the paper's hypothetical variant, section VI-C)


class Specials(Word):
    """``Params.specials``: CDNA3's two disputed special-value rules, switched together."""

    PAPER = "paper"                  # the paper's step order
    LATER_MODEL = "later_model"      # the authors' later model


ROUNDING_MODES = tuple(m.value for m in Rounding)
OVERFLOWS = tuple(m.value for m in Overflow)
ZERO_SIGNS = tuple(m.value for m in ZeroSign)
FLOOR_ROUNDINGS = tuple(m.value for m in FloorRounding)
SPECIALS = tuple(m.value for m in Specials)
EXACT = "exact"          # F="exact": no alignment window; the exact sum, rounded once
