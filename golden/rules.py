"""The words of the arithmetic rules, defined once: rounding modes, overflow, the sign of zero,
the alignment floor and CDNA3's special-value readings.

Every module that takes or passes one of these (golden.params' checks, golden.formats' rounding,
hw's rounder, the probe's inference, golden.kernels' codes) reads these enums.  They are
``StrEnum``: a member equals its word (``Rounding.RZ == "RZ"``), so a ``Params`` written with plain
strings, a parsed spec or a JSON record all compare equal; the tuples below hold the plain words,
in the order the kernel codes use.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Rounding", "Overflow", "ZeroSign", "FloorRounding", "Specials", "ROUNDING_MODES", "OVERFLOWS",
           "ZERO_SIGNS", "FLOOR_ROUNDINGS", "SPECIALS", "EXACT"]


class Rounding(StrEnum):
    """IEEE rounding directions (``Params.out_rounding``, ``fma_rounding``, ``round_to_format``)."""

    RZ = "RZ"        # toward zero
    RD = "RD"        # toward -infinity
    RU = "RU"        # toward +infinity
    RNE = "RNE"      # to nearest, ties to even


class Overflow(StrEnum):
    """``Params.overflow``: what a result past the largest finite value becomes."""

    INF = "inf"      # any magnitude >= 2**(emax+1) is infinity, whatever the rounding
    IEEE = "ieee"    # the rounding direction decides (RZ and RD give the largest finite value)


class ZeroSign(StrEnum):
    """``Params.zero_sign``: the sign of a zero result."""

    POSITIVE = "positive"    # every zero result is +0 (NVIDIA)
    IEEE = "ieee"            # a negative value rounding to zero keeps its sign; an exact zero sum is +0
    IEEE754 = "ieee754"      # IEEE 754 in full: a sum of -0 terms is -0, a cancellation +0 (-0 rounding down)


class FloorRounding(StrEnum):
    """``Params.floor_rounding``: how FDRDA/GFDRDA's alignments drop bits."""

    RD = "RD"        # floor (CDNA3)
    RZ = "RZ"        # toward zero (the paper's hypothetical variant, section VI-C)


class Specials(StrEnum):
    """``Params.specials``: CDNA3's two disputed special-value rules, switched together."""

    PAPER = "paper"                  # the paper's step order
    LATER_MODEL = "later_model"      # the authors' later model


ROUNDING_MODES = tuple(m.value for m in Rounding)
OVERFLOWS = tuple(m.value for m in Overflow)
ZERO_SIGNS = tuple(m.value for m in ZeroSign)
FLOOR_ROUNDINGS = tuple(m.value for m in FloorRounding)
SPECIALS = tuple(m.value for m in Specials)
EXACT = "exact"          # F="exact": no alignment window; the exact sum, rounded once
