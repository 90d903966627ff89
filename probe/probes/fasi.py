"""The tests of Fasi, Higham, Mikaitis and Pranesh: monotonicity, the normalisation point, carry bits."""

from __future__ import annotations

import math

import numpy as np

from golden.formats import to_float
from golden.rules import Rounding

from .common import round_to_result, summand_row


def fasi(rig, p_out: int, mode: str | None) -> dict:
    """Fasi, Higham, Mikaitis and Pranesh: monotonicity of the multi-operand sum, the
    normalisation point (only the final sum is normalised) and extra carry bits."""
    K, fc = rig.K, rig.fc
    out = {}
    uc = math.ldexp(1.0, -fc.man_bits - 1)           # half an ulp of 1 in c's format
    n = min(K, 4)
    tiny = {k: uc for k in range(n)}
    if all(rig.has_prod(v) for v in tiny.values()) and rig.c_ok(1.0 - uc):
        vals, _ = rig.run([summand_row(rig, {**tiny, K: 1.0 - uc}), summand_row(rig, {**tiny, K: 1.0})])
        if None not in vals:
            out["monotonic"] = vals[0] <= vals[1]
            out["monotonicity_values"] = {"c=1-u/2": vals[0], "c=1": vals[1]}
            exact = 1.0 - uc + n * uc
            if mode in set(Rounding):
                want = float(to_float(rig.fd, np.array([round_to_result(rig, exact, mode, p_out)], np.uint64))[0])
                out["normalised_once"] = vals[0] == want
    # carry bits: K+1 terms each just below 2: the exact sum needs ceil(log2(K+1)) more bits
    v = 2.0 - math.ldexp(1.0, -3)
    if rig.has_prod(v) and rig.c_ok(v) and mode in set(Rounding):
        exact = v * (K + 1)
        vals, _ = rig.run([summand_row(rig, {k: v for k in range(K + 1)})])
        if vals[0] is not None:
            want = float(to_float(rig.fd, np.array([round_to_result(rig, exact, mode, p_out)], np.uint64))[0])
            out["carry_bits_ok"] = vals[0] == want
            out["carry_bits_needed"] = math.ceil(math.log2(K + 1))
    return out
