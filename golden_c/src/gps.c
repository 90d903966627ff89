/* CDNA2's GPS: f32 products and pairwise group sums with subnormals flushed, accumulated in order
 * from c, each step one IEEE binary32 operation (RNE) and a flush.  A per-row port of
 * golden/kernels/gps.py (gps_rows, numba's block of rows computes the same per-row arithmetic) and
 * golden.algorithms.gps: a NaN result is the canonical quiet NaN, and prm[P_FAULT] flips a finite
 * result's last bit (the planted test fault).
 * Binary32 arithmetic must stay binary32 (FLT_EVAL_METHOD 0: SSE, not x87) with no contraction into
 * fma (GCC's -std=c99 default is -ffp-contract=off; each product is flushed before any add anyway). */
#include <float.h>
#include <math.h>
#include "common.h"
#include "rows.h"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "the kernels need binary32 arithmetic evaluated in its own type (FLT_EVAL_METHOD 0: e.g. SSE2, not x87)"
#endif

#define SIGN32 UINT32_C(0x80000000)
#define EXP32 UINT32_C(0x7F800000)
#define NAN32 UINT32_C(0x7FC00000)

/* a binary32 below 2**-126 becomes a zero of its sign (algorithms._flush_signed) */
static float flush(float x)
{
    uint64_t b = bits_from_f32(x);
    return (b & EXP32) == 0 ? f32_from_bits(b & SIGN32) : x;
}

/* c as GPS reads it: a subnormal (or -0) becomes +0 */
static float c_f32(float x)
{
    return (bits_from_f32(x) & EXP32) == 0 ? 0.0f : x;
}

/* gps.fields_to_f32: an IEEE-style pattern (eb <= 8, mb <= 23, sign above) as binary32, zeros and
 * subnormals as +0 (f16 included: the numba kernel's F16C conversion then flush gives the same) */
static float fields_to_f32(int64_t x, int64_t eb, int64_t mb, int64_t bias)
{
    int64_t top = ((int64_t)1 << eb) - 1;
    int64_t m = x & (((int64_t)1 << mb) - 1);
    int64_t e = (x >> mb) & top;
    int64_t s = (x >> (mb + eb)) & 1;
    int64_t ef = e == top ? 255 : e + (127 - bias);
    uint64_t w = ((uint64_t)s << 31) | ((uint64_t)ef << 23) | ((uint64_t)m << (23 - mb));
    return f32_from_bits(e == 0 ? 0 : (w & 0xFFFFFFFFu));
}

static int decodes_fields(const int64_t *fmts, int64_t f)
{
    return FMT(fmts, f, GS_NAN_KIND) == GS_NAN_IEEE && FMT(fmts, f, GS_SIGNED) == 1 &&
           FMT(fmts, f, GS_SUBNORMALS) == 1 && FMT(fmts, f, GS_IGNORED_LOW) == 0 &&
           FMT(fmts, f, GS_EXP_BITS) <= 8 && FMT(fmts, f, GS_MAN_BITS) <= 23;
}

/* gps.tabled_f32: a tabled operand's f32 value, subnormals and zeros as +0 */
static float tabled_f32(const int64_t *fmts, const float *vtab, const int16_t *etab, int64_t f, uint64_t bits)
{
    int64_t j = table_index(fmts, f, bits);
    double v = (double)vtab[FMT(fmts, f, GS_TABLE_OFF) + j];
    int64_t e = (int64_t)etab[FMT(fmts, f, GS_EXP_TAB_OFF) + j];
    if (e == GS_ZERO_EXP || (e == FMT(fmts, f, GS_EMIN) && fabs(v) < pow2(FMT(fmts, f, GS_EMIN))))
        return 0.0f;
    return (float)v;
}

static float operand_f32(const int64_t *fmts, const float *vtab, const int16_t *etab, int64_t f, uint64_t bits)
{
    if (decodes_fields(fmts, f))
        return fields_to_f32((int64_t)(bits & 0xFFFFFFFFu), FMT(fmts, f, GS_EXP_BITS), FMT(fmts, f, GS_MAN_BITS),
                             FMT(fmts, f, GS_BIAS));
    return tabled_f32(fmts, vtab, etab, f, bits);
}

/* the flushed f32 product of element e of a and b */
static float product(const uint8_t *a, const uint8_t *b, const int64_t *isz, const int64_t *fmts, const float *vtab,
                     const int16_t *etab, int64_t e)
{
    float av = operand_f32(fmts, vtab, etab, GS_A, load(a, isz[0], e));
    float bv = operand_f32(fmts, vtab, etab, GS_B, load(b, isz[1], e));
    return flush(av * bv);
}

/* algorithms._pairwise_sum over the products e0 .. e0+n-1: (p0+p1)+(p2+p3), halves split at n // 2,
 * each add flushed (for a power-of-two group, the numba kernel's adjacent-pair levels) */
static float pairwise(const uint8_t *a, const uint8_t *b, const int64_t *isz, const int64_t *fmts,
                      const float *vtab, const int16_t *etab, int64_t e0, int64_t n)
{
    if (n == 1)
        return product(a, b, isz, fmts, vtab, etab, e0);
    float lo = pairwise(a, b, isz, fmts, vtab, etab, e0, n / 2);
    float hi = pairwise(a, b, isz, fmts, vtab, etab, e0 + n / 2, n - n / 2);
    return flush(lo + hi);
}

void golden_gps_rows(GOLDEN_ROWS_ARGS)
{
    const int64_t g = prm[GS_P_GROUP];
    const int fault = prm[GS_P_FAULT] == 1;
    (void)sa; (void)sb; (void)order;
    for (int64_t r = lo; r < hi; r++) {
        double cv;
        int64_t ce;
        value_exp(fmts, vtab, etab, GS_CF, load(c, isz[2], r), &cv, &ce);
        float d = c_f32((float)cv);
        for (int64_t j = 0; j < K; j += g)            /* d accumulates the group sums in order */
            d = flush(d + pairwise(a, b, isz, fmts, vtab, etab, r * K + j, g));
        uint32_t bits = (uint32_t)bits_from_f32(d);
        if ((bits & ~SIGN32) > EXP32)
            bits = NAN32;                       /* every NaN is the canonical quiet NaN */
        else if (fault && (bits & EXP32) != EXP32)
            bits ^= 1u;                         /* the planted fault: the last rounding off by one ulp */
        out[r] = bits;
    }
    apply_nan_bits(fmts, vtab, etab, prm, lo, hi, out);
}
