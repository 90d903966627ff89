"""When two results of an instruction count as equal: the one rule every checker applies.

Results are compared bit for bit, except that where an instruction's NaN bits are not
specified (:attr:`golden.Params.exact_nan` is False: the AMD algorithms, GPS and SFMA, whose
hardware payloads the model does not reproduce) any NaN equals any other NaN.  On NVIDIA's
FDA, CoFDA and GDFS the canonical NaN is part of the result and must match exactly.
"""

from __future__ import annotations

import numpy as np

from .formats import NAN, decode

__all__ = ["same_results", "mismatching"]


def same_results(ins, got, expected) -> np.ndarray:
    """Per element: does ``got`` equal ``expected`` under ``ins``'s rule (bool array)."""
    got = np.asarray(got, np.uint64)
    expected = np.asarray(expected, np.uint64)
    same = np.array(got == expected)            # an array even for one result, to set in place
    if not ins.params.exact_nan and not same.all():
        differ = ~same                   # decode only where the bits differ: any NaN equals any NaN
        fd = ins.formats[3]
        same[differ] = (decode(fd, got[differ]).cls == NAN) & (decode(fd, expected[differ]).cls == NAN)
    return same


def mismatching(ins, got, expected) -> np.ndarray:
    """Indices (into the flattened arrays) where ``got`` and ``expected`` differ under ``ins``'s rule."""
    return np.nonzero(~same_results(ins, np.ravel(got), np.ravel(expected)))[0]
