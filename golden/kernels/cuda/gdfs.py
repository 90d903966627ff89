"""GDFS on a GPU (Blackwell's UTCOMMA MXF4/NVF4 forms), one thread per row: each pass's products
into a per-thread array, then :func:`golden.kernels.fused.gdfs_pass` itself (exact group sums
times the block scales, aligned to F, the final rounding), as ``fused.gdfs_rows`` runs it."""

from __future__ import annotations

import numpy as np

from .. import _common as C
from .. import fused
from .. import spec as S

cuda = None
MAX_TERMS = 64              # products a pass may hold (supports() checks the pass size against it)
PLAIN = ("row",)


def row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, P, T, G):
    """Row ``r``'s d bits; ``P, T, G``: scratch of :data:`MAX_TERMS` (products, group terms and
    their exponents)."""
    L = prm[S.P_L]
    nblk = K // prm[S.P_BLOCK]
    cv, ce = fused.c_value(fmts, vtab, etab, S.CF, C.load(c, isz[2], r))
    d = np.uint64(0)
    for j in range(0, K, L):
        for t in range(L):
            k = order[j + t]
            va, _ = C.value_exp(fmts, vtab, etab, S.A, C.load(a, isz[0], r * K + k))
            vb, _ = C.value_exp(fmts, vtab, etab, S.B, C.load(b, isz[1], r * K + k))
            P[t] = va * vb
        d = fused.gdfs_pass(P, j, L, a, b, c, sa, sb, isz, r, nblk, cv, ce, fmts, vtab, etab, prm, T, G)
        cv, ce = fused.c_value(fmts, vtab, etab, S.D, d)      # the next pass takes d as c
    return d


def scratch():
    """The per-thread arrays :func:`row` takes after its arguments, on the simulator."""
    return np.empty(MAX_TERMS), np.empty(MAX_TERMS), np.empty(MAX_TERMS, np.int64)


def kernel(a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    r = cuda.grid(1)
    if r < out.shape[0]:
        P = cuda.local.array(MAX_TERMS, np.float64)
        T = cuda.local.array(MAX_TERMS, np.float64)
        G = cuda.local.array(MAX_TERMS, np.int64)
        out[r] = row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, P, T, G)
