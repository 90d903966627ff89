"""FDA on a GPU, one thread per row: :func:`golden.kernels.fused.fda_rows`'s steps (CoFDA's chain
of passes, block scales, the compiled-path lowering's product order, ``c_last``'s IEEE add after
the chain) in the same float64 arithmetic on integer values.  Products are computed twice (for the
maximum exponent, then for the sum) rather than held: a thread keeps no array."""

from __future__ import annotations

import numpy as np

from .. import _common as C
from .. import fused
from .. import spec as S

cuda = None                 # numba.cuda, set on first use (the simulator swaps it in the kernel's globals)
PLAIN = ("product", "row")  # the functions below that become device functions on a GPU


def product(a, b, sa, sb, isz, K, fmts, vtab, etab, prm, order, r, j, t):
    """Value and exponent of product ``order[j + t]`` of row ``r``, its block scales applied."""
    k = order[j + t]
    va, ea = C.value_exp(fmts, vtab, etab, S.A, C.load(a, isz[0], r * K + k))
    vb, eb = C.value_exp(fmts, vtab, etab, S.B, C.load(b, isz[1], r * K + k))
    p, e = va * vb, ea + eb
    if prm[S.P_SCALED] == 1:
        block = prm[S.P_BLOCK]
        sv, se = fused.scale_product(sa, sb, isz, fmts, vtab, etab, r * (K // block) + (j + t) // block)
        p, e = p * sv, e + se
    return p, e


def row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order):
    """Row ``r``'s d bits: each pass of ``fused.fda_rows`` in the same arithmetic."""
    L, F, ez = prm[S.P_L], prm[S.P_F], prm[S.P_EZERO]
    c_last = prm[S.P_CLAST] == 1
    cbits = C.load(c, isz[2], r)
    cv, ce = fused.c_value(fmts, vtab, etab, S.CF, cbits)
    slot = S.CF
    if c_last:                                                # the chain starts from +0; c comes at the end
        cv, ce, slot = 0.0, np.int64(C.ZERO_EXP), S.D
    d = np.uint64(0)
    for j in range(0, K, L):
        emax = ez if ce <= C.NO_TERM else ce                 # a zero c takes e_zero
        zero = False
        for t in range(L):
            _, e = product(a, b, sa, sb, isz, K, fmts, vtab, etab, prm, order, r, j, t)
            emax = max(emax, e)
            zero |= e <= C.NO_TERM
        if ez > fmts[slot, C.EMIN] and zero:                  # zero products take e_zero
            emax = max(emax, ez)
        scale = C.pow2(F - emax)
        tot = C.ftrunc(cv * scale)
        for t in range(L):
            p, _ = product(a, b, sa, sb, isz, K, fmts, vtab, etab, prm, order, r, j, t)
            tot += C.ftrunc(p * scale)
        d = C.finish(fmts, S.D, tot, tot, emax - F, prm[S.P_MODE], prm[S.P_FRAC], prm[S.P_OVERFLOW],
                     prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1)
        cv, ce = fused.c_value(fmts, vtab, etab, S.D, d)      # the next pass takes d as c
        slot = S.D
    if c_last:
        d = fused.ieee_add(fmts, vtab, etab, d, cbits, prm[S.P_ZPOS] == 1)
    return d


def scratch():
    """The per-thread arrays :func:`row` takes after its arguments (none)."""
    return ()


def kernel(a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    r = cuda.grid(1)
    if r < out.shape[0]:
        out[r] = row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order)
