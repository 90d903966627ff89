"""FDRDA and GFDRDA on a GPU (CDNA3, chains of passes included), one thread per row: each pass's
products and exponents into per-thread arrays, then :func:`golden.kernels.amd.fdrda_pass` itself
(AMD's product overflow and special outcome, alignment to the products' own maximum, the
round-down floors, RNE to d), the per-row path of ``amd.fdrda_rows``."""

from __future__ import annotations

import numpy as np

from .. import _common as C
from .. import amd, fused
from .. import spec as S

cuda = None
MAX_TERMS = 64              # products a pass may hold (supports() checks the pass size against it)
PLAIN = ("row",)


def row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, P, E):
    """Row ``r``'s d bits; ``P, E``: scratch of :data:`MAX_TERMS` (a pass's products and exponents)."""
    L = prm[S.P_L]
    grouped = prm[S.P_BASE] == S.GFDRDA_CODE
    overflows = fmts[S.A, C.EMAX] + 1 + fmts[S.B, C.EMAX] + 1 >= 128 and prm[S.P_PROD_OVER] == 1
    cv, ce = fused.c_value(fmts, vtab, etab, S.CF, C.load(c, isz[2], r))
    d = np.uint64(0)
    for j in range(0, K, L):
        for t in range(L):
            k = order[j + t]
            va, ea = C.value_exp(fmts, vtab, etab, S.A, C.load(a, isz[0], r * K + k))
            vb, eb = C.value_exp(fmts, vtab, etab, S.B, C.load(b, isz[1], r * K + k))
            P[t] = va * vb
            E[t] = ea + eb
        d = amd.fdrda_pass(P, E, L, cv, ce, fmts, prm, overflows, grouped)
        cv, ce = fused.c_value(fmts, vtab, etab, S.D, d)      # the next pass takes d as c
    return d


def scratch():
    """The per-thread arrays :func:`row` takes after its arguments, on the simulator."""
    return np.empty(MAX_TERMS), np.empty(MAX_TERMS, np.int64)


def kernel(a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    r = cuda.grid(1)
    if r < out.shape[0]:
        P = cuda.local.array(MAX_TERMS, np.float64)
        E = cuda.local.array(MAX_TERMS, np.int64)
        out[r] = row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, P, E)
