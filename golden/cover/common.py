"""Cover points every algorithm shares: the class of the result.

(Each algorithm's tuple in golden.algorithms lists these with its own; see golden.cover.fda.)
"""

from __future__ import annotations

import numpy as np

from ..formats import get_format, to_float
from .model import Batch, Bin, CoverPoint

__all__ = ["OUTPUT", "COMMON_POINTS", "result_values"]


def result_values(batch: Batch) -> np.ndarray:
    """The results as float64 ``[R]``."""
    fd = get_format(batch.instruction.d_format)
    return np.asarray(to_float(fd, batch.d.astype(np.uint64)), np.float64)


def _output_hits(batch: Batch) -> dict:
    fd = get_format(batch.instruction.d_format)
    x = result_values(batch)
    nan, inf = np.isnan(x), np.isinf(x)
    fin = ~nan & ~inf
    zero = fin & (x == 0)
    sub = fin & ~zero & (np.abs(x) < 2.0 ** fd.emin)
    return {"nan": nan, "infinite": inf, "zero": zero, "subnormal": sub, "normal": fin & ~zero & ~sub}


def _output_unreachable(ins) -> dict:
    fd = get_format(ins.d_format)
    out = {}
    if not fd.subnormals:
        out["subnormal"] = f"the output format {fd.name} has no subnormals"
    if not fd.inf:
        out["infinite"] = f"the output format {fd.name} has no infinities"
    if not fd.has_nan:
        out["nan"] = f"the output format {fd.name} has no NaN"
    return out


OUTPUT = CoverPoint(
    "output",
    (Bin("normal", "the result is a normal number"),
     Bin("subnormal", "the result is subnormal"),
     Bin("zero", "the result is zero"),
     Bin("infinite", "the result is infinite"),
     Bin("nan", "the result is NaN")),
    _output_hits, _output_unreachable, description="the class of the result")

COMMON_POINTS = (OUTPUT,)
