"""The stages of golden's traces, by stable names.

:func:`golden.trace` lists the intermediate values of one dot-add stage by stage; each stage's label is
written for people (``aligned to F=24 fraction bits below 2^e_max (RZ), ...``) and changes with the
design.  :class:`Stage` names each kind of stage once, so that what a design's signals are compared
with (a description's ``[signals]`` map, docs/your-rtl.md) never depends on a display string: a
trace's label is a :class:`Label`, a ``str`` that also carries its :class:`Stage`.

A value of a stage is named ``STAGE.VALUE`` (``aligned.products``, ``max_exponent.e_max``): the stage's
name and the trace's value key with spaces as underscores (:func:`value_key`).  In a chain of passes
the stages repeat; ``passN.STAGE.VALUE`` names pass N's (pass 0's by default).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Stage", "Label", "value_key", "STAGE_VALUES"]


class Stage(StrEnum):
    """A kind of trace stage (the value is the name a signal map uses)."""

    PASS = "pass"                    # a pass of a chain begins (no values)
    INPUTS = "inputs"                # operands as the algorithm reads them (GPS: f32, flushed)
    PRODUCTS = "products"            # exact products (value, exponent)
    GROUP_SUMS = "group_sums"        # exact sums of groups of products (GDFS)
    SCALED = "scaled"                # group sums times their block scales (GDFS)
    MAX_EXPONENT = "max_exponent"    # the largest exponent the terms are aligned to (e_max, c, c exponent)
    ALIGNED = "aligned"              # the terms as fixed-point integers below 2^e_max (products, c)
    DOT_SUM = "dot_sum"              # the products' own aligned sum before c (FDRDA, GFDRDA)
    MERGED = "merged"                # the even and odd sums merged (GFDRDA)
    SUM = "sum"                      # the fixed-point sum of the aligned terms
    EXACT_SUM = "exact_sum"          # the exact sum of products and c (F = exact)
    NORMALISED = "normalised"        # normalised and floored before the final rounding (FDRDA, GFDRDA)
    ROUNDED = "rounded"              # the result in the output format (d)
    STEPS = "steps"                  # the result after each operation of a sequential algorithm (SFMA, GPS)
    C_LAST = "c_last"                # a compiled path's final IEEE add of c
    NAN_BITS = "nan_bits"            # every NaN result given the design's one pattern


class Label(str):
    """A stage's display label that also knows its :class:`Stage` (``label.stage``)."""

    stage: Stage

    def __new__(cls, stage: Stage, text: str):
        obj = super().__new__(cls, text)
        obj.stage = Stage(stage)
        return obj


def value_key(stage: Stage, name: str) -> str:
    """``STAGE.VALUE`` of trace value ``name`` in a stage of kind ``stage``."""
    return f"{Stage(stage).value}.{name.replace(' ', '_')}"


# what each stage's values are, in words (docs/your-rtl.md's signal map table is written from this)
STAGE_VALUES = {
    "products.value": "each product's exact value (a float; the K products of a pass, in order)",
    "products.exponent": "each product's exponent e_a + e_b (unbiased; a zero product: e_zero)",
    "max_exponent.e_max": "the largest exponent of the products and c (unbiased)",
    "max_exponent.c": "c's value",
    "max_exponent.c_exponent": "c's exponent (unbiased; a zero c: e_zero)",
    "aligned.products": "each product as a signed integer in units of 2^(e_max - F) (truncated)",
    "aligned.c": "c as a signed integer in units of 2^(e_max - F)",
    "sum.sum": "the signed fixed-point sum in units of 2^(e_max - F)",
    "sum.value": "the fixed-point sum's value (a float)",
    "exact_sum.value": "the exact sum of the products and c (F = exact)",
    "rounded.d": "the result's bit pattern",
}
