"""SFMA compiled: sequential IEEE fused multiply-adds with the CPU's fma (LLVM's ``llvm.fma``:
one rounding, RNE, subnormals kept), binary64 and binary32.  The dispatcher checks once that the
compiled fma is correctly rounded on cases a separate multiply and add get wrong
(:func:`fma_is_exact`); where it is not, SFMA stays on the numpy path's error-free
transformations (``golden.fma``).

The hardware fma computes NaN, infinities and subnormals as IEEE 754 says, so there is no special
path: only a NaN result's bits are made canonical (the numpy path's NaN).  Each loop reads the
operands in their own width (one loop per item size, chosen once per call), straight from the
callers' arrays, a row's products in order; K = 4 is a compile-time constant, so its rows' chain
of fmas is unrolled (:func:`sfma_loop`).
"""

from __future__ import annotations

import math

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import spec as S

NAN64 = np.uint64(0x7FF8000000000000)      # golden.fma's canonical NaNs
NAN32 = np.uint32(0x7FC00000)


@njit(**C.HOT)
def _f64(v, i):
    return C.f64_from_bits(np.uint64(v[i]))


@njit(**C.HOT)
def _f32(v, i):
    return C.f32_from_bits(np.uint32(v[i]))


@njit(**C.HOT)
def rows64(va, vb, vc, lo, hi, K, out):
    """Rows ``lo .. hi - 1`` of binary64 SFMA, operands in any integer width.  The rows are sliced
    once and indexed from 0 (a slice a row measured 1.8x slower: its bounds and strides are built
    per row; an index from ``lo`` may be negative to numba, whose wraparound check keeps the row
    loop scalar).  Inlined where it is called, so a constant ``K`` unrolls a row's fmas and the
    compiler runs several rows' chains side by side in vector lanes (:func:`sfma_loop`)."""
    a, b, c, o = va[lo * K:hi * K], vb[lo * K:hi * K], vc[lo:hi], out[lo:hi]
    for r in range(hi - lo):
        d = _f64(c, r)
        for k in range(K):
            d = C.fma64(_f64(a, r * K + k), _f64(b, r * K + k), d)
        o[r] = NAN64 if math.isnan(d) else C.bits_from_f64(d)


@njit(**C.HOT)
def rows32(va, vb, vc, lo, hi, K, out):
    """:func:`rows64` in binary32."""
    a, b, c, o = va[lo * K:hi * K], vb[lo * K:hi * K], vc[lo:hi], out[lo:hi]
    for r in range(hi - lo):
        x = _f32(c, r)
        for k in range(K):
            x = C.fma32(_f32(a, r * K + k), _f32(b, r * K + k), x)
        o[r] = np.uint64(NAN32) if math.isnan(x) else np.uint64(C.bits_from_f32(x))


@njit(**C.HOT)
def rows_of(va, vb, vc, lo, hi, K, wide, out):
    """:func:`rows64` or :func:`rows32`, chosen once (no branch in the row loop)."""
    if wide:
        rows64(va, vb, vc, lo, hi, K, out)
    else:
        rows32(va, vb, vc, lo, hi, K, out)


@njit(**C.INLINE)
def sfma_loop(va, vb, vc, lo, hi, K, wide, fault, out):
    """:func:`rows_of` with K = 4 (13 of the catalog's 27 SFMA instructions, every f64 one but two) a
    compile-time constant, its chain of fmas unrolled; other K at run time (each constant K
    compiles the loops again: K = 1, 2, 4, 8 all constant tripled the kernel's first compile).
    Then the planted fault where it is on (a separate pass: no branch in the row loop)."""
    if K == 4:
        rows_of(va, vb, vc, lo, hi, 4, wide, out)
    else:
        rows_of(va, vb, vc, lo, hi, K, wide, out)
    if fault:
        nan = NAN64 if wide else np.uint64(NAN32)
        for r in range(lo, hi):
            if out[r] != nan:
                out[r] ^= np.uint64(1)                 # the planted fault: the last rounding off by one ulp


@njit(**C.JIT)
def sfma_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """Rows ``lo .. hi - 1``; d's format (f64 or f32) from the format table's d row.  Operands of
    one item size (the common case: the generators' uint64, or each format's own width) run a
    loop specialised to it; mixed widths read each element through ``_common.load``.  The rows run
    in IEEE's default floating-point mode, set and given back (``_common.ieee_mode``)."""
    wide = fmts[S.D, C.EXP_BITS] == 11
    fault = prm[S.P_FAULT] == 1
    caller_fp = C.ieee_mode()                        # the fma's RNE, subnormals kept, whatever the caller's mode
    if isz[0] == isz[1] == isz[2] == 8:            # the buffers hold whole elements: viewed, not sliced
        sfma_loop(a.view(np.uint64), b.view(np.uint64), c.view(np.uint64), lo, hi, K, wide, fault, out)
    elif isz[0] == isz[1] == isz[2] == 4:            # (a slice's view is typed as any layout: 2x slower)
        sfma_loop(a.view(np.uint32), b.view(np.uint32), c.view(np.uint32), lo, hi, K, wide, fault, out)
    else:
        la = np.empty(K * (hi - lo), np.uint64)
        lb = np.empty(K * (hi - lo), np.uint64)
        lc = np.empty(hi - lo, np.uint64)
        for r in range(lo, hi):
            lc[r - lo] = C.load(c, isz[2], r)
            for k in range(K):
                la[(r - lo) * K + k] = C.load(a, isz[0], r * K + k)
                lb[(r - lo) * K + k] = C.load(b, isz[1], r * K + k)
        sfma_loop(la, lb, lc, np.int64(0), hi - lo, K, wide, fault, out[lo:hi])    # no second compile for a literal 0
    C.set_fp_control(caller_fp)



@njit(**C.JIT)
def _fma_cases(x, y, z):
    out = np.empty(len(x))
    for i in range(len(x)):
        out[i] = C.fma64(x[i], y[i], z[i])
    return out


def fma_is_exact() -> bool:
    """Whether the compiled fma rounds once: ``(1 + 2**-52) * (1 - 2**-52) - 1`` is ``-2**-104``
    exactly (a multiply then an add gives 0), and a product's low bits decide a tie."""
    x = np.array([1 + 2.0 ** -52, 1 + 2.0 ** -30, 2.0 ** -1070])
    y = np.array([1 - 2.0 ** -52, 1 + 2.0 ** -23, 2.0 ** 60])
    z = np.array([-1.0, -1.0, 2.0 ** -1020])
    want = np.array([-2.0 ** -104, 2.0 ** -30 + 2.0 ** -23 + 2.0 ** -53, 2.0 ** -1010 + 2.0 ** -1020])
    return bool((_fma_cases(x, y, z) == want).all())
