"""The GEMM-level tile kernels of :mod:`golden.gemm_kernels` (numba): a tile's K loop, promotions and
split-K slices in one compiled call, on operands decoded once per tile.

Each dot-add is :func:`golden.kernels.fused_int.fda_block_rows`'s arithmetic (its helpers
``decode_c``, ``align_c``, ``round_block`` are called as they are); the products come from the
decoded tile instead of being decoded again for every output.
"""

from __future__ import annotations

import numpy as np

from ..nbcache import njit
from . import _common as C
from . import amd as AMD
from . import fused as FU
from . import fused_int as FI
from . import gps as GPS
from . import spec as S

CANONICAL_NAN32 = 0x7FC00000          # golden.fma.fma_f32's NaN
FROM_FLOAT_NAN32 = 0x7FFFFFFF         # golden.formats.from_float's f32 NaN (a narrower accumulator's NaN widened)
NEG32 = FI.NEG                        # a zero element's exponent: every product with it below NO_PRODUCT32
NO_PRODUCT32 = np.int32(FI.NO_PRODUCT)


# ---------------------------------------------------------------------------- decoding, once per tile

@njit(**C.JIT)
def decode(X, drow, G, extra, block, along_rows, SG, EX):
    """Elements of the 2-D operand ``X`` (bit patterns, any strides) as ``fused_int.decode_flat`` reads
    them, into ``SG`` (the signed significand shifted left by ``G``, int32) and ``EX`` (``max(field,
    1) - bias`` plus the block scale's exponent ``extra[r, c // block]`` (``along_rows``: K runs along
    a row, A) or ``extra[r // block, c]`` (B), int32; ``NEG32`` for a zero, so every product with it stays
    below ``NO_PRODUCT``).  Returns whether a NaN or infinity pattern is among them."""
    ign, vm, mb, em, ssh, bias = drow[FI.D_IGN], drow[FI.D_VMASK], drow[FI.D_MB], drow[FI.D_EMASK], \
        drow[FI.D_SGNSH], drow[FI.D_BIAS]
    nm, nv = drow[FI.D_NM], drow[FI.D_NV]
    mm = (np.int64(1) << mb) - 1
    special = False
    for r in range(X.shape[0]):
        for c in range(X.shape[1]):
            x = (np.int64(X[r, c]) >> ign) & vm
            f = (x >> mb) & em
            g = ((x & mm) | (np.int64(f != 0) << mb)) << G
            special |= (x & nm) == nv
            SG[r, c] = -g if (x >> ssh) & 1 else g
            e = extra[r, c // block] if along_rows else extra[r // block, c]
            EX[r, c] = NEG32 if g == 0 else max(f, 1) - bias + e
    return special


# ---------------------------------------------------------------------------- the K loop of a tile

@njit(**C.INLINE)
def _dot_add(SA, EA, SB, EB, m, k0, nt, L, Kins, X1, fmts, drows, prm, st):
    """One dot-add (``Kins`` products, passes of ``L``) of row ``m`` of the tile against its ``nt``
    columns, chained from the accumulator bits ``X1`` (updated in place): ``fda_block_rows``' steps.
    The products and their shifts run in int32 lanes (``fast_kind`` keeps an aligned product below
    2**31, and a shift of 31 or more leaves 0 of it, as 63 does), the sums in int64."""
    csig, ce, flags, emax, tot, dout, em32 = st
    F, ez = prm[S.P_F], prm[S.P_EZERO]
    Dsh = max(drows[S.A, FI.D_MB] + drows[S.B, FI.D_MB] - F, 0)
    mode, frac, ovf_inf = prm[S.P_MODE], prm[S.P_FRAC], prm[S.P_OVERFLOW] == C.OVERFLOW_INF
    zpos, fault = prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1
    dd = drows[S.D]
    for j in range(0, Kins, L):
        fc = S.CF if j == 0 else S.D
        dc = drows[fc]
        FI.decode_c(X1, dc, ez, csig, ce, flags, nt)                # c: a zero takes e_zero
        lifted = ez > fmts[fc, S.EMIN]                              # zero products take e_zero
        for i in range(nt):
            em32[i] = np.int32(ce[i])
        if lifted:
            lift = np.int32(ez)
            for t in range(L):
                ea, eb = EA[m, k0 + j + t], EB[k0 + j + t]
                for i in range(nt):
                    e = ea + eb[i]
                    em32[i] = max(em32[i], e if e >= NO_PRODUCT32 else lift)
        else:                              # a zero product's exponent is below every other: max alone
            for t in range(L):
                ea, eb = EA[m, k0 + j + t], EB[k0 + j + t]
                for i in range(nt):
                    em32[i] = max(em32[i], np.int32(ea + eb[i]))
        for i in range(nt):
            emax[i] = em32[i]
        FI.align_c(csig, ce, emax, F, dc[FI.D_MB], tot, nt)
        for t in range(L):
            k = k0 + j + t
            sa, ea = SA[m, k], EA[m, k] - np.int32(Dsh)
            sb, eb = SB[k], EB[k]
            for i in range(nt):
                p = np.int32(sa * sb[i])
                v = np.int32(abs(p) >> np.int32(min(np.int32(em32[i] - ea - eb[i]), np.int32(31))))
                tot[i] += np.int64(-v if p < 0 else v)
        FI.round_block(tot, emax, flags, F, dd[FI.D_SGNSH], fmts[S.D], mode, frac, ovf_inf, zpos, fault, dout, 0, nt)
        for i in range(nt):
            X1[i] = np.int64(dout[i])


@njit(**C.JIT)
def decode_values(X, drow, V):
    """GDFS's operands (``fused_int.group_sum``): each element's exact value as a signed integer in
    units of ``2**(emin - man_bits)``, ``±(significand << (max(field, 1) - 1))``."""
    ign, vm, mb, em, ssh = drow[FI.D_IGN], drow[FI.D_VMASK], drow[FI.D_MB], drow[FI.D_EMASK], drow[FI.D_SGNSH]
    mm = (np.int64(1) << mb) - 1
    for r in range(X.shape[0]):
        for c in range(X.shape[1]):
            x = (np.int64(X[r, c]) >> ign) & vm
            f = (x >> mb) & em
            g = ((x & mm) | (np.int64(f != 0) << mb)) << (max(f, 1) - 1)
            V[r, c] = -g if (x >> ssh) & 1 else g


@njit(**C.INLINE)
def _dot_add_gdfs(VA, VB, gd, m, k0, nt, L, Kins, X1, fmts, drows, prm, st, sg):
    """One GDFS dot-add of row ``m`` against the tile's columns: ``fused_int.gdfs_block_rows``' steps
    (exact group sums, times the block scales' significands ``gd``, aligned to the largest scale
    exponent, one sum with c, the rounding), chained through ``X1``."""
    csig, ce, flags, emax, tot, dout, _ = st
    sigma, nz, T, GE = sg
    SSA, SEA, SFA, SSB, SEB, SFB = gd
    F, ez, g, block = prm[S.P_F], prm[S.P_EZERO], prm[S.P_GROUP], prm[S.P_BLOCK]
    da, db, ds, dd = drows[S.A], drows[S.B], drows[S.S], drows[S.D]
    H = F + fmts[S.A, S.EMIN] + fmts[S.B, S.EMIN] - da[FI.D_MB] - db[FI.D_MB] - 2 * ds[FI.D_MB]
    G, Dsh = max(H, 0), max(-H, 0)
    mode, frac, ovf_inf = prm[S.P_MODE], prm[S.P_FRAC], prm[S.P_OVERFLOW] == C.OVERFLOW_INF
    zpos, fault = prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1
    for j in range(0, Kins, L):
        dc = drows[S.CF] if j == 0 else dd
        FI.decode_c(X1, dc, ez, csig, ce, flags, nt)
        for i in range(nt):
            emax[i] = ce[i]
        for q in range(L // g):
            for i in range(nt):
                sigma[i] = 0
                nz[i] = 0
            for t in range(q * g, q * g + g):
                va, vb = VA[m, k0 + j + t], VB[k0 + j + t]
                for i in range(nt):
                    p = va * vb[i]
                    sigma[i] += p
                    nz[i] |= np.int64(p != 0)
            blk = (k0 + j + q * g) // block
            ssa, sea, sfa = SSA[m, blk], SEA[m, blk], SFA[m, blk]
            for i in range(nt):
                ss = ssa * SSB[blk, i]
                T[q, i] = sigma[i] * ss
                GE[q, i] = ez if (nz[i] == 0) | (ss == 0) else sea + SEB[blk, i]
                emax[i] = max(emax[i], GE[q, i])
                flags[i] |= sfa | SFB[blk, i]
        FI.align_c(csig, ce, emax, F, dc[FI.D_MB], tot, nt)
        for q in range(L // g):
            for i in range(nt):
                v = (abs(T[q, i]) << G) >> min(emax[i] - GE[q, i] + Dsh, 63)
                tot[i] += -v if T[q, i] < 0 else v
        FI.round_block(tot, emax, flags, F, dd[FI.D_SGNSH], fmts[S.D], mode, frac, ovf_inf, zpos, fault, dout, 0, nt)
        for i in range(nt):
            X1[i] = np.int64(dout[i])


@njit(**C.INLINE)
def _dot_add_fdrda(VA, XA, VB, XB, m, k0, nt, L, Kins, X1, fmts, vtab, etab, prm, order, sf):
    """One FDRDA/GFDRDA dot-add of row ``m`` against the tile's columns: ``amd.fdrda_rows``' steps on
    the products of the decoded operands (values multiplied, exponents added, as ``operand_span``
    makes them), chained through ``X1``."""
    PT, ET, Fs, Is, Bs, cv, ce, dout, ok, P, E = sf
    grouped = prm[S.P_BASE] == S.GFDRDA_CODE
    overflows = fmts[S.A, C.EMAX] + 1 + fmts[S.B, C.EMAX] + 1 >= 128 and prm[S.P_PROD_OVER] == 1
    fast = AMD.block_path(fmts, prm)
    word32 = fmts[S.CF, C.WORD32] == 1 and fmts[S.CF, C.IGNORED_LOW] == 0
    for i in range(nt):                                 # c: as amd.c_span decodes it
        if word32:
            cv[i], ce[i] = AMD.f32_value_exp(np.int64(X1[i] & 0xFFFFFFFF))
        else:
            cv[i], ce[i] = C.value_exp(fmts, vtab, etab, S.CF, np.uint64(X1[i]))
    for j in range(0, Kins, L):
        for t in range(L):
            k = k0 + order[j + t]
            va, xa, vb, xb = VA[m, k], XA[m, k], VB[k], XB[k]
            Pt, Et = PT[t], ET[t]
            for i in range(nt):
                Pt[i] = va * vb[i]
                Et[i] = xa + xb[i]
        if fast:
            AMD.pass_block(PT, ET, nt, L, cv, ce, fmts, prm, overflows, grouped, Fs, Is, Bs, dout, ok)
        for i in range(nt):
            if not (fast and ok[i]):
                for t in range(L):
                    P[t], E[t] = PT[t, i], ET[t, i]
                dout[i] = AMD.fdrda_pass(P, E, L, cv[i], ce[i], fmts, prm, overflows, grouped)
        if j + L < Kins:
            AMD.chain_c(fmts, vtab, etab, dout, nt, cv, ce)
    for i in range(nt):
        X1[i] = np.int64(dout[i])


@njit(**C.JIT)
def decode_fda64(X, fmts, vtab, etab, f, V, E):
    """Values and exponents of the 2-D operand ``X`` as ``fused.fill_products`` takes them: from the
    format's tables (lowered formats included), else ``_common.value_exp`` (TF32, f32)."""
    off, xoff = fmts[f, C.TABLE_OFF], fmts[f, C.EXP_TAB_OFF]
    sh, mask = np.uint64(fmts[f, C.IGNORED_LOW]), (np.int64(1) << fmts[f, C.VALUE_BITS]) - 1
    for r in range(X.shape[0]):
        for c in range(X.shape[1]):
            if off >= 0:
                j = np.int64(np.uint64(X[r, c]) >> sh) & mask
                V[r, c], E[r, c] = np.float64(vtab[off + j]), np.int64(etab[xoff + j])
            else:
                V[r, c], E[r, c] = C.value_exp(fmts, vtab, etab, f, np.uint64(X[r, c]))


@njit(**C.INLINE)
def _dot_add_fda64(VA, XA, VB, XB, m, k0, nt, L, Kins, X1, fmts, vtab, etab, prm, order, sf, s64):
    """One dot-add of ``fused.fda_rows``' float64 path (CoFDA chains, interleaved passes, c_last) of
    row ``m`` against the tile's columns, on the products of the decoded operands; chained through ``X1``."""
    PT, ET, _, _, _, cv, ce, dout, _, _, _ = sf
    cb, emax, zero, scale, tot = s64
    F, ez = prm[S.P_F], prm[S.P_EZERO]
    c_last = prm[S.P_CLAST] == 1
    for i in range(nt):
        cb[i] = X1[i]
        if c_last:                                          # the chain starts from +0; c comes at the end
            cv[i], ce[i] = 0.0, C.ZERO_EXP
        else:
            cv[i], ce[i] = FU.c_value(fmts, vtab, etab, S.CF, np.uint64(X1[i]))
    fc_slot = S.D if c_last else S.CF
    for j in range(0, Kins, L):
        for t in range(L):
            k = k0 + order[j + t]
            va, xa, vb, xb = VA[m, k], XA[m, k], VB[k], XB[k]
            Pt, Et = PT[t], ET[t]
            for i in range(nt):
                Pt[i] = va * vb[i]
                Et[i] = xa + xb[i]
        for i in range(nt):
            emax[i] = ez if ce[i] <= C.NO_TERM else ce[i]         # a zero c takes e_zero
            zero[i] = 0
        for t in range(L):
            Et = ET[t]
            for i in range(nt):
                emax[i] = max(emax[i], Et[i])
                zero[i] |= np.int64(Et[i] <= C.NO_TERM)
        lift = ez > fmts[fc_slot, C.EMIN]                          # zero products take e_zero
        for i in range(nt):
            if lift and zero[i]:
                emax[i] = max(emax[i], ez)
            scale[i] = C.pow2(F - emax[i])
            tot[i] = C.ftrunc(cv[i] * scale[i])
        for t in range(L):
            Pt = PT[t]
            for i in range(nt):
                tot[i] += C.ftrunc(Pt[i] * scale[i])
        for i in range(nt):
            d = C.finish(fmts, S.D, tot[i], tot[i], emax[i] - F, prm[S.P_MODE], prm[S.P_FRAC],
                         prm[S.P_OVERFLOW], prm[S.P_ZPOS] == 1, prm[S.P_FAULT] == 1)
            dout[i] = d
            cv[i], ce[i] = FU.c_value(fmts, vtab, etab, S.D, d)     # the next pass takes d as c
        fc_slot = S.D
    for i in range(nt):
        d = dout[i]
        if c_last:
            d = FU.ieee_add(fmts, vtab, etab, d, np.uint64(cb[i]), prm[S.P_ZPOS] == 1)
        X1[i] = np.int64(d)


@njit(**C.JIT)
def decode_fdrda(x, isz, fmts, vtab, etab, f, n, V, X):
    """Values and exponents of an operand's ``n`` elements (its bytes ``x``, ``isz`` each), as
    ``amd.operand_span`` reads them."""
    AMD.operand_span(x, isz, fmts, vtab, etab, f, np.int64(0), n, V, X, False)     # fdrda_rows' signature


@njit(**C.HOT)
def _f32_add(x, y):
    """``RNE32(x + y)`` on the CPU (IEEE binary32), a NaN made canonical as ``fma_f32`` gives it."""
    s = x + y
    return np.uint32(CANONICAL_NAN32) if s != s else C.bits_from_f32(s)


@njit(**C.HOT)
def acc_f32(x, dd, wide):
    """The accumulator's bits ``x`` (d's format: IEEE-style, at most f32's range and precision) as
    f32 bits, exactly, as ``golden.gemm._to_f32`` gives them (a NaN as ``from_float``'s f32 NaN)."""
    if wide:
        return np.uint32(x)
    mb, em, ssh, bias = dd[FI.D_MB], dd[FI.D_EMASK], dd[FI.D_SGNSH], dd[FI.D_BIAS]
    f = (x >> mb) & em
    m = x & ((np.int64(1) << mb) - 1)
    sign = np.uint32((x >> ssh) & 1) << np.uint32(31)
    if f == em:
        return np.uint32(0x7F800000) | sign if m == 0 else np.uint32(FROM_FLOAT_NAN32)
    g = m | (np.int64(f != 0) << mb)
    v = np.float32(np.float64(g) * C.pow2(max(f, 1) - bias - mb))
    return C.bits_from_f32(v) | sign


@njit(**C.INLINE)
def _promote(ACC, MAIN, nt, mt, g, gsa, gsb, scaling, scale_fma, dd, wide):
    """``MAIN += partial`` in fp32 (times the group's scales ``gsa[m, g] * gsb[n, g]``), the
    tensor-core partial restarted from +0."""
    for m in range(mt):
        for i in range(nt):
            part = C.f32_from_bits(acc_f32(ACC[m, i], dd, wide))
            main = C.f32_from_bits(MAIN[m, i])
            if scaling:
                sc = C.f32_from_bits(gsa[m, g]) * C.f32_from_bits(gsb[i, g])
                sc = np.float32(CANONICAL_NAN32) if sc != sc else sc
                if scale_fma:
                    r = C.fma32(sc, part, main)
                    MAIN[m, i] = np.uint32(CANONICAL_NAN32) if r != r else C.bits_from_f32(r)
                else:
                    pr = sc * part
                    pr = C.f32_from_bits(np.uint32(CANONICAL_NAN32)) if pr != pr else pr
                    MAIN[m, i] = _f32_add(main, pr)
            else:
                MAIN[m, i] = _f32_add(main, part)
            ACC[m, i] = 0


@njit(**C.INLINE)
def _state(mt, nt, fmts, drows):
    """A tile's accumulators: the tensor core's (d's bits) and the fp32 main one; d's decode row, and
    whether d is f32 (its bits are the result's)."""
    return np.zeros((mt, nt), np.int64), np.zeros((mt, nt), np.uint32), drows[S.D], fmts[S.D, S.WORD32] == 1


@njit(**C.INLINE)
def _slice_start(ACC, MAIN, q, slices, cinit, promotion, mt, nt):
    """Slice ``q``'s k-steps ``(lo, hi)``, its accumulators at +0, or (slice 0, c_accumulate) at C."""
    ACC[:, :] = 0
    MAIN[:, :] = 0
    if q == 0 and cinit.shape[0] > 0:
        for m in range(mt):
            for i in range(nt):
                if promotion > 0:
                    MAIN[m, i] = np.uint32(cinit[m, i])
                else:
                    ACC[m, i] = np.int64(cinit[m, i])
    return slices[q, 0], slices[q, 1]


@njit(**C.INLINE)
def _after_step(ACC, MAIN, s, lo, hi, since, promotion, mt, nt, gsa, gsb, scaling, scale_fma, dd, wide):
    """After k-step ``s``: a promotion when one is due (every ``promotion`` steps and at the slice's
    end); the first step of the group still open (-1: none)."""
    if promotion > 0 and ((s - lo + 1) % promotion == 0 or s == hi - 1):
        _promote(ACC, MAIN, nt, mt, since // promotion, gsa, gsb, scaling, scale_fma, dd, wide)
        return -1
    return since


@njit(**C.INLINE)
def _slice_end(parts, q, ACC, MAIN, promotion, mt, nt, dd, wide):
    for m in range(mt):
        for i in range(nt):
            parts[q, m, i] = MAIN[m, i] if promotion > 0 else acc_f32(ACC[m, i], dd, wide)


# One compiled entry per family (each compiles only its own dot-add): a tile's A @ B, for each split-K
# slice [lo, hi) of k-steps (``slices``) the K loop, promoted every ``promotion`` steps when > 0, its
# fp32 result into ``parts[slice, m, n]``; ``cinit`` ([mt, nt], or empty): C in the accumulator's
# format for slice 0 (c_accumulate); ``gsa, gsb``: group scales (``scaling``).

@njit(**C.JIT)
def tile_fda(SA, EA, SB, EB, mt, nt, Kins, slices, promotion, cinit, gsa, gsb, scaling, scale_fma,
             fmts, drows, prm, parts):
    """FDA in integer lanes: ``SA, EA, SB, EB`` from :func:`decode`."""
    st = (np.zeros(nt, np.int64), np.zeros(nt, np.int64), np.zeros(nt, np.int64), np.zeros(nt, np.int64),
          np.zeros(nt, np.int64), np.zeros(nt, np.uint64), np.zeros(nt, np.int32))
    caller_fp = C.ieee_mode()          # the promotions' and the dot-adds' float arithmetic
    ACC, MAIN, dd, wide = _state(mt, nt, fmts, drows)
    for q in range(slices.shape[0]):
        lo, hi = _slice_start(ACC, MAIN, q, slices, cinit, promotion, mt, nt)
        since = -1
        for s in range(lo, hi):
            since = s if since < 0 else since
            for m in range(mt):
                _dot_add(SA, EA, SB, EB, m, s * Kins, nt, prm[S.P_L], Kins, ACC[m], fmts, drows, prm, st)
            since = _after_step(ACC, MAIN, s, lo, hi, since, promotion, mt, nt, gsa, gsb, scaling, scale_fma, dd, wide)
        _slice_end(parts, q, ACC, MAIN, promotion, mt, nt, dd, wide)
    C.set_fp_control(caller_fp)


@njit(**C.JIT)
def tile_gdfs(VA, VB, gd, mt, nt, Kins, slices, promotion, cinit, gsa, gsb, scaling, scale_fma,
              fmts, drows, prm, parts):
    """GDFS in integer lanes: ``VA, VB`` from :func:`decode_values`, ``gd`` the block scales'
    significands, exponents and NaN flags."""
    st = (np.zeros(nt, np.int64), np.zeros(nt, np.int64), np.zeros(nt, np.int64), np.zeros(nt, np.int64),
          np.zeros(nt, np.int64), np.zeros(nt, np.uint64), np.zeros(nt, np.int32))
    ngr = max(prm[S.P_L] // prm[S.P_GROUP], 1)
    sg = (np.zeros(nt, np.int64), np.zeros(nt, np.int64), np.zeros((ngr, nt), np.int64), np.zeros((ngr, nt), np.int64))
    caller_fp = C.ieee_mode()          # the promotions' and the dot-adds' float arithmetic
    ACC, MAIN, dd, wide = _state(mt, nt, fmts, drows)
    for q in range(slices.shape[0]):
        lo, hi = _slice_start(ACC, MAIN, q, slices, cinit, promotion, mt, nt)
        since = -1
        for s in range(lo, hi):
            since = s if since < 0 else since
            for m in range(mt):
                _dot_add_gdfs(VA, VB, gd, m, s * Kins, nt, prm[S.P_L], Kins, ACC[m], fmts, drows, prm, st, sg)
            since = _after_step(ACC, MAIN, s, lo, hi, since, promotion, mt, nt, gsa, gsb, scaling, scale_fma, dd, wide)
        _slice_end(parts, q, ACC, MAIN, promotion, mt, nt, dd, wide)
    C.set_fp_control(caller_fp)


@njit(**C.INLINE)
def _float_scratch(nt, prm):
    Lp = max(prm[S.P_L], 1)
    return (np.zeros((Lp, nt)), np.zeros((Lp, nt), np.int64), np.zeros((4, nt)), np.zeros((2, nt), np.int64),
            np.zeros((3, nt), np.bool_), np.zeros(nt), np.zeros(nt, np.int64), np.zeros(nt, np.uint64),
            np.zeros(nt, np.bool_), np.zeros(Lp), np.zeros(Lp, np.int64))


@njit(**C.JIT)
def tile_float(VA, XA, VB, XB, mt, nt, Kins, slices, promotion, cinit, gsa, gsb, scaling, scale_fma,
               fmts, drows, prm, parts, vtab, etab, order, amd):
    """The row kernels' float64 steps: CDNA3's FDRDA/GFDRDA (``amd``: ``VA, XA, VB, XB`` from
    :func:`decode_fdrda`) or FDA off the integer lanes (from :func:`decode_fda64`)."""
    sf = _float_scratch(nt, prm)
    s64 = (np.zeros(nt, np.int64), np.zeros(nt, np.int64), np.zeros(nt, np.int64), np.zeros(nt), np.zeros(nt))
    caller_fp = C.ieee_mode()          # the promotions' and the dot-adds' float arithmetic
    ACC, MAIN, dd, wide = _state(mt, nt, fmts, drows)
    L = prm[S.P_L]
    for q in range(slices.shape[0]):
        lo, hi = _slice_start(ACC, MAIN, q, slices, cinit, promotion, mt, nt)
        since = -1
        for s in range(lo, hi):
            since = s if since < 0 else since
            for m in range(mt):
                if amd:
                    _dot_add_fdrda(VA, XA, VB, XB, m, s * Kins, nt, L, Kins, ACC[m], fmts, vtab, etab, prm, order, sf)
                else:
                    _dot_add_fda64(VA, XA, VB, XB, m, s * Kins, nt, L, Kins, ACC[m], fmts, vtab, etab, prm, order,
                                   sf, s64)
            since = _after_step(ACC, MAIN, s, lo, hi, since, promotion, mt, nt, gsa, gsb, scaling, scale_fma, dd, wide)
        _slice_end(parts, q, ACC, MAIN, promotion, mt, nt, dd, wide)
    C.set_fp_control(caller_fp)


@njit(**C.JIT)
def tile_sfma(A, B, mt, nt, Kins, slices, promotion, cinit, gsa, gsb, scaling, scale_fma,
              fmts, drows, prm, parts):
    """SFMA in binary32 (``sfma.rows32``): each dot-add a chain of the CPU's fmas, one product at a
    time in K order, from c; a NaN made canonical; ``A [mt, Kp]``, ``B [Kp, nt]`` f32 words."""
    caller_fp = C.ieee_mode()          # the promotions' and the dot-adds' float arithmetic
    ACC, MAIN, dd, wide = _state(mt, nt, fmts, drows)
    fault = prm[S.P_FAULT] == 1
    x = np.zeros(nt, np.float32)
    for q in range(slices.shape[0]):
        lo, hi = _slice_start(ACC, MAIN, q, slices, cinit, promotion, mt, nt)
        since = -1
        for s in range(lo, hi):
            since = s if since < 0 else since
            for m in range(mt):
                acc = ACC[m]
                for i in range(nt):
                    x[i] = C.f32_from_bits(np.uint32(acc[i]))
                for k in range(s * Kins, (s + 1) * Kins):
                    a, b = C.f32_from_bits(A[m, k]), B[k]
                    for i in range(nt):
                        x[i] = C.fma32(a, C.f32_from_bits(b[i]), x[i])
                for i in range(nt):
                    d = np.uint64(CANONICAL_NAN32) if x[i] != x[i] else np.uint64(C.bits_from_f32(x[i]))
                    if fault and x[i] == x[i]:
                        d ^= np.uint64(1)                  # sfma_loop's planted fault: one ulp off
                    acc[i] = np.int64(d)
            since = _after_step(ACC, MAIN, s, lo, hi, since, promotion, mt, nt, gsa, gsb, scaling, scale_fma, dd, wide)
        _slice_end(parts, q, ACC, MAIN, promotion, mt, nt, dd, wide)
    C.set_fp_control(caller_fp)


@njit(**C.JIT)
def decode_gps(x, isz, fmts, vtab, etab, f, n, out):
    """An operand's ``n`` elements (its bytes ``x``, ``isz`` each) as GPS's flushed binary32
    (``gps.decode_span``)."""
    GPS.decode_span(x, isz, fmts, vtab, etab, f, np.int64(0), n, out)    # gps_rows' signature: no literal 0's


@njit(**C.JIT)
def tile_gps(A, B, mt, nt, Kins, slices, promotion, cinit, gsa, gsb, scaling, scale_fma,
             fmts, drows, prm, parts):
    """CDNA's GPS (``gps.gps_rows``): each dot-add's products flushed, each group of ``prm[P_GROUP]``
    summed pairwise (adjacent pairs, level by level, each sum flushed), the group sums added to c in
    order (flushed); a NaN made canonical.  ``A [mt, Kp]``, ``B [Kp, nt]``: the flushed binary32
    operands from :func:`decode_gps`.  The CPU flushes too where its flush is GPS's
    (``gps.cpu_flush_on``, as ``gps_rows`` does), restored on return."""
    ACC, MAIN, dd, wide = _state(mt, nt, fmts, drows)
    fault, g = prm[S.P_FAULT] == 1, prm[S.P_GROUP]
    P = np.zeros((g, nt), np.float32)
    d = np.zeros(nt, np.float32)
    caller_fp = GPS.cpu_flush_on(fmts)
    for q in range(slices.shape[0]):
        lo, hi = _slice_start(ACC, MAIN, q, slices, cinit, promotion, mt, nt)
        since = -1
        for s in range(lo, hi):
            since = s if since < 0 else since
            for m in range(mt):
                acc = ACC[m]
                for i in range(nt):
                    d[i] = GPS.c_f32(C.f32_from_bits(np.uint32(acc[i])))
                for j in range(s * Kins, (s + 1) * Kins, g):
                    for t in range(g):
                        a, b, p = A[m, j + t], B[j + t], P[t]
                        for i in range(nt):
                            p[i] = GPS.flush(a * b[i])
                    w = g
                    while w > 1:                            # one level of the group's pairwise sum
                        w //= 2
                        for t in range(w):
                            x, y, p = P[2 * t], P[2 * t + 1], P[t]
                            for i in range(nt):
                                p[i] = GPS.flush(x[i] + y[i])
                    for i in range(nt):
                        d[i] = GPS.flush(d[i] + P[0, i])
                for i in range(nt):
                    bits = C.bits_from_f32(d[i])
                    if (bits & ~GPS._SIGN) > GPS._EXP:
                        bits = GPS.NAN32
                    elif fault and (bits & GPS._EXP) != GPS._EXP:
                        bits ^= np.uint32(1)                # gps_rows' planted fault: one ulp off
                    acc[i] = np.int64(bits)
            since = _after_step(ACC, MAIN, s, lo, hi, since, promotion, mt, nt, gsa, gsb, scaling, scale_fma, dd, wide)
        _slice_end(parts, q, ACC, MAIN, promotion, mt, nt, dd, wide)
    C.set_fp_control(caller_fp)
