"""GPS on a GPU (CDNA2), one thread per row: :func:`golden.kernels.gps.gps_rows`'s IEEE binary32
steps per row: flushed f32 operands (``gps.tabled_f32``), flushed products, each group's pairwise
sums level by level ((p0+p1)+(p2+p3)) in a per-thread array, d accumulating the group sums in
order from c, a NaN made canonical.  The group size must be a power of two (the CPU kernel pairs
adjacent sums across the whole block, which equals per-group pairing only then)."""

from __future__ import annotations

import numpy as np

from .. import _common as C
from .. import gps
from .. import spec as S

cuda = None
MAX_GROUP = 64              # products a group may hold (supports() checks the group size against it)
PLAIN = ("row", "group_sum", "final_bits")


def group_sum(a, b, isz, fmts, vtab, etab, base, g, buf):
    """The pairwise sum of the ``g`` flushed products from element ``base`` on, every step flushed."""
    for t in range(g):               # np.float32 everywhere: the simulator's Python must not widen to float64
        av = np.float32(gps.tabled_f32(fmts, vtab, etab, S.A, C.load(a, isz[0], base + t)))
        bv = np.float32(gps.tabled_f32(fmts, vtab, etab, S.B, C.load(b, isz[1], base + t)))
        buf[t] = gps.flush(np.float32(av * bv))
    m = g
    while m > 1:                     # in place: element e is written after 2e and 2e + 1 are read
        m //= 2
        for e in range(m):
            buf[e] = gps.flush(np.float32(buf[2 * e] + buf[2 * e + 1]))
    return buf[0]


def final_bits(d, fault):
    """d's bits: every NaN the canonical quiet NaN; ``fault``: the planted fault, one ulp off."""
    bits = np.uint32(C.bits_from_f32(np.float32(d)))
    if (bits & ~gps._SIGN) > gps._EXP:
        return np.uint64(gps.NAN32)
    if fault and (bits & gps._EXP) != gps._EXP:
        bits ^= np.uint32(1)
    return np.uint64(bits)


def row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, buf):
    """Row ``r``'s d bits; ``buf``: f32 scratch of :data:`MAX_GROUP`."""
    g = prm[S.P_GROUP]
    cv, _ = C.value_exp(fmts, vtab, etab, S.CF, C.load(c, isz[2], r))
    d = np.float32(gps.c_f32(np.float32(cv)))
    for q in range(K // g):
        s = np.float32(group_sum(a, b, isz, fmts, vtab, etab, r * K + q * g, g, buf))
        d = np.float32(gps.flush(np.float32(d + s)))
    return final_bits(d, prm[S.P_FAULT] == 1)


def scratch():
    """The per-thread arrays :func:`row` takes after its arguments, on the simulator."""
    return (np.empty(MAX_GROUP, np.float32),)


def kernel(a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    r = cuda.grid(1)
    if r < out.shape[0]:
        buf = cuda.local.array(MAX_GROUP, np.float32)
        out[r] = row(r, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, buf)
