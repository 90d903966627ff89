"""A kernel of one shape in miniature, for tests/golden/test_golden_kernels_apart.py: ``outer`` calls
``inner`` with a constant, as golden.kernels.fda_float's shape kernels call their row function."""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def inner(x, out, step):
    for i in range(0, x.shape[0], step):
        out[i] = x[i] * 3 + 1


@njit(cache=True, nogil=True)
def outer(x, out):
    inner(x, out, 1)


def run() -> np.ndarray:
    x = np.arange(8, dtype=np.int64)
    out = np.zeros(8, np.int64)
    outer(x, out)
    return out
