/* SFMA: sequential IEEE fused multiply-adds, binary64 or binary32 (d's format), one rounding each
 * (C99 fma / fmaf: correctly rounded, RNE, subnormals kept), a row's products in order from c.
 * A port of golden/kernels/sfma.py (sfma_rows, row64, row32): NaN results are the canonical quiet
 * NaN (golden.fma's), and prm[P_FAULT] flips the result's last bit (the planted test fault).  Binary32
 * takes Params.fma_rounding (prm[P_FMA_MODE]); Params.nan_bits replaces every NaN result. */
#include <math.h>
#include "common.h"
#include "rows.h"

#define NAN64 UINT64_C(0x7FF8000000000000)
#define NAN32 UINT64_C(0x7FC00000)

/* a*b + c rounded once to binary32 by a directed mode (Params.fma_rounding RZ, RD, RU; golden.fma_f32's
 * mode): the product is exact in binary64 (24 + 24 bits), TwoSum gives s + e = p + c exactly, and s's
 * significand with two more bits (e's side of s: below, on or above) rounds as the exact sum does,
 * since no binary32 rounding boundary lies within a quarter of s's ulp of s but s itself */
static uint64_t fma32_directed(float a, float b, float c, int64_t mode, const int64_t *fmts)
{
    double p, s, bb, e;
    uint64_t w;
    int64_t ef, sig, mag;
    int neg;
    if (!isfinite(a) || !isfinite(b) || !isfinite(c)) {      /* specials: the same in every mode */
        float r = fma32(a, b, c);
        return isnan(r) ? NAN32 : bits_from_f32(r);
    }
    p = (double)a * (double)b;
    s = p + (double)c;
    bb = s - p;
    e = (p - (s - bb)) + ((double)c - bb);
    if (s == 0.0) {                     /* an exact zero: IEEE 754's sign (6.3) */
        neg = (p == 0.0 && c == 0.0 && signbit(p) && signbit(c))
              || (mode == GS_RD && !(p == 0.0 && c == 0.0 && !signbit(p) && !signbit(c)));
        return neg ? UINT64_C(0x80000000) : 0;
    }
    w = bits_from_f64(s);
    ef = (int64_t)((w >> 52) & 0x7FF);
    sig = (int64_t)(w & ((UINT64_C(1) << 52) - 1)) | (ef ? INT64_C(1) << 52 : 0);
    neg = signbit(s) != 0;
    mag = 4 * sig + (e == 0.0 ? 0 : (signbit(e) != 0) == neg ? 1 : -1);
    return round_bits(fmts, GS_D, neg, mag, (ef ? ef - 1075 : -1074) - 2, mode, -1, GS_OVERFLOW_IEEE, 0);
}

void golden_sfma_rows(GOLDEN_ROWS_ARGS)
{
    const int wide = FMT(fmts, GS_D, GS_EXP_BITS) == 11;
    const int fault = prm[GS_P_FAULT] == 1;
    const uint64_t nan = wide ? NAN64 : NAN32;
    const int64_t mode = prm[GS_P_FMA_MODE];             /* binary32 only (binary64 SFMA is RNE) */
    (void)sa; (void)sb; (void)vtab; (void)etab; (void)order;
    for (int64_t r = lo; r < hi; r++) {
        uint64_t bits;
        if (wide) {
            double d = f64_from_bits(load(c, isz[2], r));
            for (int64_t k = 0; k < K; k++)
                d = fma64(f64_from_bits(load(a, isz[0], r * K + k)), f64_from_bits(load(b, isz[1], r * K + k)), d);
            bits = isnan(d) ? NAN64 : bits_from_f64(d);
        } else {
            float d = f32_from_bits(load(c, isz[2], r) & 0xFFFFFFFFu);
            for (int64_t k = 0; k < K; k++) {
                float x = f32_from_bits(load(a, isz[0], r * K + k) & 0xFFFFFFFFu);
                float y = f32_from_bits(load(b, isz[1], r * K + k) & 0xFFFFFFFFu);
                d = mode == GS_RNE ? fma32(x, y, d) : f32_from_bits(fma32_directed(x, y, d, mode, fmts));
            }
            bits = isnan(d) ? NAN32 : bits_from_f32(d);
        }
        if (fault && bits != nan)
            bits ^= 1u;                       /* the planted fault: the last rounding off by one ulp */
        out[r] = bits;
    }
    apply_nan_bits(fmts, vtab, etab, prm, lo, hi, out);
}
