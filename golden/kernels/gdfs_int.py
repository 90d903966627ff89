"""GDFS for narrow operands (fp4, fp6: each pattern in a byte, a's and b's together at most
:data:`TABLE_BITS` value bits) in integer lanes: the fast path of :mod:`fused` for the catalog's
block-scaled FP4 (Blackwell's UTCOMMA MXF4/NVF4, RTX Blackwell's OMMA.SF).

The numpy path (``algorithms.gdfs``) sums ``g`` exact products a group, multiplies the group sum
by the product of the block's two scales and aligns it to ``F``.  Every product of two such
elements is an integer in units of ``2**(emin_a - man_a + emin_b - man_b)``, and so is every group
sum:

- e2m1 x e2m1 in groups of 16 (every GDFS entry of the catalog) decodes each element by a
  closed form in float32 lanes, 16 products a vector (:func:`e2m1_group_sums`: the sums are small
  integers, exact in float32 in any order);
- any other pair reads each product from a table of the signed products of every pair of patterns
  (:func:`product_table`, made once a call: 256 entries for fp4 x fp4).

The rest are :mod:`fused_int`'s integer-lane steps across a block of rows: the scale
significands' product times the group sum, the scale exponents' sum its exponent (``e_zero`` for
a group of zero products or a zero scale), alignment a right shift, one int64 sum with c, the
branch-free rounding (:func:`fused_int.round_block`).

:mod:`fused_int`'s ``gdfs_block_rows`` (every GDFS design of ``spec.FAST_GDFS``, decoding each
element from its fields) stays the kernel of the designs :func:`takes` refuses; golden.kernels
chooses when an instruction's plan is built, so neither compiles the other.
"""

from __future__ import annotations

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import spec as S
from .fused_int import (
    D_BIAS,
    D_EMASK,
    D_IGN,
    D_INF,
    D_MB,
    D_NM,
    D_NV,
    D_SGNSH,
    D_VMASK,
    _widths,
    align_c,
    decode_c,
    decode_rows,
    gather_column,
    gdfs_scalars,
    round_block,
)

BL = 256                # rows carried through each step together (the scales', alignment's and rounding's loops)
TABLE_BITS = 12         # a's and b's value bits together at most: the product table's 4,096 int32 (16 KB, L1)
E2M1_GROUP = 16         # the float32 path's group: one vector of 16 products
EXACT_FLOATS = {"reassoc", "nsz"}   # the float32 group sums: exact integers, so any order gives the same sum


def takes(fmts: np.ndarray, prm: np.ndarray) -> bool:
    """Whether :func:`gdfs_int_rows` computes the design: ``spec.fast_kind`` gives ``FAST_GDFS``
    (its bounds keep the group sums, scaled terms and the sum in int64), and a's and b's patterns
    each lie in a byte, narrow enough together for the product table."""
    if prm[S.P_FAST] != S.FAST_GDFS:
        return False
    a, b = fmts[S.A], fmts[S.B]
    return (a[S.VALUE_BITS] + b[S.VALUE_BITS] <= TABLE_BITS and a[S.VALUE_BITS] + a[S.IGNORED_LOW] <= 8
            and b[S.VALUE_BITS] + b[S.IGNORED_LOW] <= 8)


@njit(**C.INLINE)
def element(x, d):
    """The signed integer value of pattern ``x`` (its value bits) in units of ``2**(emin - man)``:
    the significand (implicit bit where the exponent field is not 0) shifted by ``max(f, 1) - 1``."""
    mb = d[D_MB]
    f = (x >> mb) & d[D_EMASK]
    m = ((x & ((np.int64(1) << mb) - 1)) | (np.int64(f != 0) << mb)) << (max(f, 1) - 1)
    return -m if (x >> d[D_SGNSH]) & 1 else m


@njit(**C.INLINE)
def product_table(da, db):
    """``(PT, vb)``: ``PT[(x << vb) | y]`` the exact signed product of a's pattern ``x`` and b's ``y``
    (their value bits; ``vb`` b's width) in units of ``2**(emin_a - man_a + emin_b - man_b)``."""
    vb = np.int64(0)
    while (db[D_VMASK] >> vb) != 0:
        vb += 1
    na, nb = da[D_VMASK] + 1, db[D_VMASK] + 1
    PT = np.empty(na << vb, np.int64)
    for x in range(na):
        ex = element(np.int64(x), da)
        for y in range(nb):
            PT[(x << vb) | y] = ex * element(np.int64(y), db)
    return PT, vb


@njit(**C.INLINE)
def is_e2m1(d):
    """Whether decode row ``d`` is e2m1's (sign, 2 exponent bits, 1 mantissa bit, bias 1, the low 4 bits)."""
    return (d[D_IGN] == 0 and d[D_VMASK] == 15 and d[D_MB] == 1 and d[D_EMASK] == 3 and d[D_SGNSH] == 3
            and d[D_BIAS] == 1)


@njit(**C.INLINE)
def group_sums(va, vb, start, K, nb, ngr, g, PT, vbits, ia, xa, ib, xb, SG, NZ):
    """``SG[q, i]``: row ``i``'s exact group sum ``q`` of the pass starting at element ``start`` of
    the block's first row (``g`` table reads); ``NZ[q, i]`` 1 where one of its products is not
    zero (the numpy path's ``all_zero`` is about the products, not a sum that cancels)."""
    for i in range(nb):
        for q in range(ngr):
            o = start + i * K + q * g
            a, b = va[o:o + g], vb[o:o + g]
            s = np.int64(0)
            nz = np.int64(0)
            for t in range(g):
                p = PT[(((np.int64(a[t]) >> ia) & xa) << vbits) | ((np.int64(b[t]) >> ib) & xb)]
                s += p
                nz |= p
            SG[q, i] = s
            NZ[q, i] = np.int64(nz != 0)


@njit(cache=True, nogil=True, fastmath=EXACT_FLOATS)
def e2m1_group_sums(va, vb, start, K, nb, ngr, SG, NZ):
    """:func:`group_sums` of e2m1 x e2m1 in groups of 16, in float32 lanes (16 products a vector,
    where the table's reads are scalar): a magnitude pattern ``m`` (0..7) is worth
    ``m + max(m - 4, 0) + 2 max(m - 6, 0)`` units of 1/2 (0, 1, 2, 3, 4, 6, 8, 12: the slope
    doubles at each binade), a product at most 144 units of 1/4 and a group sum at most 2,304, so
    every sum is an exact integer in float32 whatever its order (``reassoc``).  A group whose sum
    is 0 looks for a nonzero product element by element (rare: a sum that cancels, or zeros)."""
    z, f4, f6, f8, two = np.float32(0), np.float32(4), np.float32(6), np.float32(8), np.float32(2)
    for i in range(nb):
        for q in range(ngr):
            o = start + i * K + q * E2M1_GROUP
            a, b = va[o:o + E2M1_GROUP], vb[o:o + E2M1_GROUP]
            s = z
            for t in range(E2M1_GROUP):          # one vector of 16 products
                x, y = np.float32(a[t] & 15), np.float32(b[t] & 15)
                sx, sy = x >= f8, y >= f8
                x = x - f8 if sx else x
                y = y - f8 if sy else y
                p = (x + max(x - f4, z) + two * max(x - f6, z)) * (y + max(y - f4, z) + two * max(y - f6, z))
                s += -p if sx != sy else p
            SG[q, i] = np.int64(s)
            nz = np.int64(s != z)
            if nz == 0:
                for t in range(E2M1_GROUP):
                    nz |= np.int64((a[t] & 7) != 0) & np.int64((b[t] & 7) != 0)
            NZ[q, i] = nz


@njit(**C.INLINE)
def narrow(w, isz, start, n, out):
    """``out[u]`` = the low byte of element ``start + u`` of an operand (its :func:`fused_int._widths`
    views) whose patterns lie in a byte (:func:`takes`), u < n."""
    if isz == 1:
        v1 = w[0]
        for u in range(n):
            out[u] = v1[start + u]
    elif isz == 2:
        v2 = w[1]
        for u in range(n):
            out[u] = np.uint8(v2[start + u] & np.uint16(0xFF))
    elif isz == 4:
        v4 = w[2]
        for u in range(n):
            out[u] = np.uint8(v4[start + u] & np.uint32(0xFF))
    else:
        v8 = w[3]
        for u in range(n):
            out[u] = np.uint8(v8[start + u] & np.uint64(0xFF))


@njit(**C.INLINE)
def scale_of(x, ds):
    """A block scale's significand, exponent and NaN flag (``fused_int.group_scales``' decode: a
    scale row's ``D_INF`` holds 1 where the format has no subnormals)."""
    x &= ds[D_VMASK]
    mb, lo = ds[D_MB], ds[D_INF]
    f = (x >> mb) & ds[D_EMASK]
    sig = (x & ((np.int64(1) << mb) - 1)) | (np.int64((f != 0) | (lo == 1)) << mb)
    return sig, max(f, 1 - lo) - ds[D_BIAS], np.int64((x & ds[D_NM]) == ds[D_NV])


@njit(**C.INLINE)
def scaled_terms(wsa, wsb, isz, ds, r0, nblk, j, g, block, ez, nb, ngr, X, Y, SG, NZ, emax, flags):
    """Each group's term ``SG * scale significands`` (into ``SG``) and exponent (into ``NZ``: the
    scale exponents' sum, ``e_zero`` for a group of zero products or a zero scale), the maximum
    exponent and the NaN scales' flags across the rows."""
    for q in range(ngr):
        blk = (j + q * g) // block
        gather_column(wsa, isz[3], r0 * nblk + blk, nblk, nb, X)
        gather_column(wsb, isz[4], r0 * nblk + blk, nblk, nb, Y)
        for i in range(nb):
            sx, ex, nx = scale_of(X[i], ds)
            sy, ey, ny = scale_of(Y[i], ds)
            ss = sx * sy
            SG[q, i] *= ss
            e = ez if (NZ[q, i] == 0) | (ss == 0) else ex + ey
            NZ[q, i] = e
            emax[i] = max(emax[i], e)
            flags[i] |= nx | ny


@njit(**C.INLINE)
def add_terms(SG, NZ, emax, G, Dsh, ngr, nb, tot):
    """The groups' terms aligned to the maximum exponent (right shifts of the magnitudes, ``trunc``)
    added to ``tot`` across the rows."""
    for q in range(ngr):
        for i in range(nb):
            m = SG[q, i]
            v = (abs(m) << G) >> min(emax[i] - NZ[q, i] + Dsh, 63)
            tot[i] += -v if m < 0 else v


@njit(**C.JIT)
def gdfs_int_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """Rows ``lo .. hi - 1`` of GDFS (chains of passes included), :data:`BL` rows at a time, for a
    design :func:`takes` takes (golden.kernels chooses; the others run ``fused.gdfs_rows``, whose
    signature this is)."""
    drows = decode_rows(fmts)
    da, db, dcf, dd, ds = drows[S.A], drows[S.B], drows[S.CF], drows[S.D], drows[S.S]
    L, F, ez, g, nblk, block, G, Dsh, mode, frac, ovf_inf, zpos, fault, ngr = gdfs_scalars(K, fmts, da, db, ds, prm)
    e2m1 = is_e2m1(da) and is_e2m1(db) and g == E2M1_GROUP
    PT, vbits = product_table(da, db)
    ia, xa, ib, xb = da[D_IGN], da[D_VMASK], db[D_IGN], db[D_VMASK]
    SG, NZ = np.zeros((ngr, BL), np.int64), np.zeros((ngr, BL), np.int64)
    X, Y, X1 = np.zeros(BL, np.int64), np.zeros(BL, np.int64), np.zeros(BL, np.int64)
    flags, emax = np.zeros(BL, np.int64), np.zeros(BL, np.int64)
    csig, ce, tot = np.zeros(BL, np.int64), np.zeros(BL, np.int64), np.zeros(BL, np.int64)
    wa, wb, wc, wsa, wsb = _widths(a), _widths(b), _widths(c), _widths(sa), _widths(sb)
    bytewise = isz[0] == 1 and isz[1] == 1
    NA = np.zeros(1 if bytewise else BL * K, np.uint8)
    NB = np.zeros(1 if bytewise else BL * K, np.uint8)
    for r0 in range(lo, hi, BL):
        nb = min(BL, hi - r0)
        if bytewise:                                 # fp4/fp6 in a byte each: read where they lie
            va, vb, start = wa[0], wb[0], r0 * K
        else:                                        # wider words: their low bytes, once a block
            narrow(wa, isz[0], r0 * K, nb * K, NA)
            narrow(wb, isz[1], r0 * K, nb * K, NB)
            va, vb, start = NA, NB, 0
        gather_column(wc, isz[2], r0, 1, nb, X1)
        dc = dcf
        for j in range(0, K, L):
            if e2m1:
                e2m1_group_sums(va, vb, start + j, K, nb, ngr, SG, NZ)
            else:
                group_sums(va, vb, start + j, K, nb, ngr, g, PT, vbits, ia, xa, ib, xb, SG, NZ)
            decode_c(X1, dc, ez, csig, ce, flags, nb)                  # c: a zero takes e_zero
            emax[:nb] = ce[:nb]
            scaled_terms(wsa, wsb, isz, ds, r0, nblk, j, g, block, ez, nb, ngr, X, Y, SG, NZ, emax, flags)
            align_c(csig, ce, emax, F, dc[D_MB], tot, nb)
            add_terms(SG, NZ, emax, G, Dsh, ngr, nb, tot)
            round_block(tot, emax, flags, F, dd[D_SGNSH], fmts[S.D], mode, frac, ovf_inf, zpos, fault, out, r0, nb)
            for i in range(nb):                                         # the next pass takes d as c
                X1[i] = np.int64(out[r0 + i])
            dc = dd
