"""CDNA3's disputed special-value rules: their names, and which a design's results depend on.

The paper and the later model disagree on two special-value cases of the AMD round-down algorithms;
``golden.Params.specials`` chooses the reading (docs/cdna3_disputed.md).  Below golden.algorithms
(which re-exports these names) so that the cover points can name the rules an instruction reaches.
"""

from __future__ import annotations

from .descriptors import ALGORITHMS
from .formats import Format, NanKind, get_format
from .params import Params

__all__ = ["DISPUTED_RULES", "NONFINITE_C_EXP", "disputed_rules", "products_overflow"]

# The exponent the later model reads for a NaN or infinite c: frexp gives 0, and its significands in
# [1, 2) take one off (microsoft/MMA-Sim src/mmasim/mmasim/arithmetic/fdpa.py, frexp_and_normalize)
NONFINITE_C_EXP = -1

# The disputed rules, by name: what each decides and what the two readings say (Params.specials)
DISPUTED_RULES = {
    "inf_meets_overflow": "an input infinity (c or an operand) meets a product overflowing to the other infinity "
                          "in the same pass: paper -> the input infinity, later model -> NaN",
    "nonfinite_small_c": "GFDRDA: a NaN or infinite c (a chained pass's NaN) meets products with e_dot >= c_drop: "
                         "paper -> NaN or that infinity, later model -> c dropped as a small c, a finite result",
}


def disputed_rules(what) -> tuple[str, ...]:
    """Names of the :data:`DISPUTED_RULES` a design's results depend on (``Params.specials`` decides them).

    ``what``: a :class:`Params` (the rules its algorithm can reach), or a ``golden.Datapath`` or
    ``golden.Instruction`` (the rules its formats can reach: f16 products never overflow, and only
    bf8 x bf8 products reach ``e_dot >= c_drop = 25``).  Empty for everything but FDRDA/GFDRDA.
    """
    datapath = getattr(what, "datapath", what)
    p = getattr(datapath, "params", datapath)
    if not isinstance(p, Params):
        raise TypeError(f"disputed_rules takes a Params, Datapath or Instruction, not {type(what).__name__}")
    reachable = ALGORITHMS[p.base].disputed
    if not reachable:
        return ()
    fa, fb, fc = (get_format(f) for f in datapath.formats[:3]) if datapath is not p else (None, None, None)
    rules = []
    if "inf_meets_overflow" in reachable and p.product_overflow and (fa is None or products_overflow(fa, fb)):
        rules.append("inf_meets_overflow")
    if "nonfinite_small_c" in reachable and p.c_drop is not None and \
            (fa is None or ((fc.inf or fc.nan != NanKind.NONE) and NONFINITE_C_EXP < fa.emax + fb.emax - p.c_drop)):
        rules.append("nonfinite_small_c")
    return tuple(rules)


def products_overflow(fa: Format, fb: Format) -> bool:
    """Whether products of the two formats can reach 2**128 (tf32, bf16; never f16 or fp8)."""
    return (fa.emax + 1) + (fb.emax + 1) >= 128
