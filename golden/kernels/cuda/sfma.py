"""SFMA on a GPU (sequential fused multiply-adds, binary64 and binary32), one thread per row:
:mod:`golden.kernels.sfma`'s rows with libdevice's fma (correctly rounded, subnormals kept),
the products in order, a NaN made canonical."""

from __future__ import annotations

import math

import numpy as np

from .. import _common as C
from .. import sfma
from .. import spec as S

cuda = None
PLAIN = ("row", "row64", "row32")


def row64(a, b, c, isz, K, r):
    d = C.f64_from_bits(np.uint64(C.load(c, isz[2], r)))      # np.uint64: the simulator's Python ints
    for k in range(K):
        x = C.f64_from_bits(np.uint64(C.load(a, isz[0], r * K + k)))
        d = C.fma64(x, C.f64_from_bits(np.uint64(C.load(b, isz[1], r * K + k))), d)
    return sfma.NAN64 if math.isnan(d) else C.bits_from_f64(d)


def row32(a, b, c, isz, K, r):
    # np.float32 around every value: the simulator's Python gets floats back from the CPU helpers
    d = np.float32(C.f32_from_bits(np.uint32(C.load(c, isz[2], r) & np.uint64(0xFFFFFFFF))))
    for k in range(K):
        x = np.float32(C.f32_from_bits(np.uint32(C.load(a, isz[0], r * K + k) & np.uint64(0xFFFFFFFF))))
        y = np.float32(C.f32_from_bits(np.uint32(C.load(b, isz[1], r * K + k) & np.uint64(0xFFFFFFFF))))
        d = np.float32(C.fma32(x, y, d))
    return np.uint64(sfma.NAN32) if math.isnan(d) else np.uint64(C.bits_from_f32(d))


def row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order):
    """Row ``r``'s d bits (d's format, f64 or f32, from the format table); the planted fault: the
    last rounding one ulp off where the result is not NaN."""
    wide = fmts[S.D, C.EXP_BITS] == 11
    bits = row64(a, b, c, isz, K, r) if wide else row32(a, b, c, isz, K, r)
    nan = sfma.NAN64 if wide else np.uint64(sfma.NAN32)
    if prm[S.P_FAULT] == 1 and bits != nan:
        bits ^= np.uint64(1)
    return bits


def scratch():
    return ()


def kernel(a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    r = cuda.grid(1)
    if r < out.shape[0]:
        out[r] = row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order)
