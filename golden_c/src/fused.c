/* NVIDIA's fused algorithms, FDA (block scales, chains of passes, operand_format, pass_interleave,
 * c_last) and GDFS with block scales: a port of golden/kernels/fused.py, a row at a time.
 *
 * fused.py takes a block of rows through each step together, and the designs spec.fast_kind picks
 * in integer lanes (fused_int.py); every one of those computes the same numbers as its float64
 * per-row steps, which are what this file runs for every design: products from the same tables
 * (or _common.value_exp for TF32/f32), the maximum exponent with the e_zero rule, alignment by
 * trunc, one exact float64 sum, finish.  prm[P_FAST] is not read.  F="exact" (prm[P_EXACT], the C
 * library's slot: golden.c_library.CSlot) sums the terms exactly in 32-bit limbs, as golden's Python
 * integers do, and rounds the top 62 bits and a sticky bit once (algorithms._exact_sum). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "common.h"
#include "mma_golden.h"   /* the public declarations: checked against rows.h's */
#include "rows.h"

#define U64(x) ((uint64_t)(x))

/* P[t], E[t] = product order[j + t] of the row starting at element base (fused.fill_products) */
static void fill_products(const uint8_t *a, const uint8_t *b, const int64_t *isz, const int64_t *fmts,
                          const float *vtab, const int16_t *etab, int64_t base, const int64_t *order, int64_t j,
                          int64_t L, double *P, int64_t *E)
{
    int64_t oa = FMT(fmts, GS_A, GS_TABLE_OFF), ob = FMT(fmts, GS_B, GS_TABLE_OFF), t;
    if (oa >= 0 && ob >= 0) {
        int64_t xa = FMT(fmts, GS_A, GS_EXP_TAB_OFF), xb = FMT(fmts, GS_B, GS_EXP_TAB_OFF);
        for (t = 0; t < L; t++) {
            int64_t k = base + order[j + t];
            int64_t x = table_index(fmts, GS_A, load(a, isz[0], k));
            int64_t y = table_index(fmts, GS_B, load(b, isz[1], k));
            P[t] = (double)vtab[oa + x] * (double)vtab[ob + y];
            E[t] = (int64_t)etab[xa + x] + (int64_t)etab[xb + y];
        }
        return;
    }
    for (t = 0; t < L; t++) {
        int64_t k = base + order[j + t];
        double va, vb;
        int64_t ea, eb;
        value_exp(fmts, vtab, etab, GS_A, load(a, isz[0], k), &va, &ea);
        value_exp(fmts, vtab, etab, GS_B, load(b, isz[1], k), &vb, &eb);
        P[t] = va * vb;
        E[t] = ea + eb;
    }
}

/* value and exponent sum of the two block scales of block i (fused.scale_product) */
static void scale_product(const uint8_t *sa, const uint8_t *sb, const int64_t *isz, const int64_t *fmts,
                          const float *vtab, const int16_t *etab, int64_t i, double *sv, int64_t *se)
{
    double va, vb;
    int64_t ea, eb;
    value_exp(fmts, vtab, etab, GS_S, load(sa, isz[3], i), &va, &ea);
    value_exp(fmts, vtab, etab, GS_S, load(sb, isz[4], i), &vb, &eb);
    *sv = va * vb;
    *se = ea + eb;
}

/* c's value and exponent (fused.c_value) */
static void c_value(const int64_t *fmts, const float *vtab, const int16_t *etab, int64_t slot, uint64_t bits,
                    double *v, int64_t *e)
{
    if (FMT(fmts, slot, GS_WORD32) == 1 && FMT(fmts, slot, GS_IGNORED_LOW) == 0)
        word32_value_exp(bits, v, e);
    else
        value_exp(fmts, vtab, etab, slot, bits, v, e);
}

/* algorithms.ieee_add: RNE(x + y) in d's format (f16 or f32), for c_last (fused.ieee_add) */
static uint64_t ieee_add(const int64_t *fmts, const float *vtab, const int16_t *etab, uint64_t x, uint64_t y,
                         int zpos)
{
    double xv, yv, s;
    int64_t ex, ey;
    uint64_t d;
    value_exp(fmts, vtab, etab, GS_D, x, &xv, &ex);
    value_exp(fmts, vtab, etab, GS_D, y, &yv, &ey);
    s = xv + yv;
    if (isnan(s))
        return U64(FMT(fmts, GS_D, GS_NAN_BITS));
    if (FMT(fmts, GS_D, GS_WORD32) == 1) {
        float fs = (float)xv + (float)yv;
        d = bits_from_f32(fs);
    } else {
        d = round_f64(fmts, GS_D, s, GS_RNE);
    }
    if (zpos && d == (1ULL << (FMT(fmts, GS_D, GS_EXP_BITS) + FMT(fmts, GS_D, GS_MAN_BITS))))
        d = 0;
    return d;
}

static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

/* ------------------------------------------------------------------ F="exact" (algorithms._exact_sum) */

#define X_BASE 1126               /* the lowest bit a float64's frexp significand reaches: 2**-1126 */
#define X_LIMBS 70                /* 32-bit limbs from 2**-1126 past 2**1024, with room for carries */
#define X_KEEP 62                 /* algorithms._KEEP: bits of the sum kept, the rest one sticky bit */
#define M32 UINT64_C(0xFFFFFFFF)

/* term x (finite, nonzero) into the limbs, as golden splits it: frexp's 53-bit significand at 2**(e-53) */
static void x_add(int64_t *acc, double x, int64_t *low)
{
    int e;
    double m = frexp(x, &e);
    int64_t sig = (int64_t)ldexp(m, 53), lsb = (int64_t)e - 53, pos = lsb + X_BASE, i = pos / 32;
    int sh = (int)(pos % 32), neg = sig < 0;
    uint64_t v = (uint64_t)(neg ? -sig : sig);
    uint64_t w0 = (v << sh) & M32, w1 = sh ? (v >> (32 - sh)) & M32 : (v >> 32) & M32, w2 = sh ? v >> (64 - sh) : 0;
    acc[i] += neg ? -(int64_t)w0 : (int64_t)w0;
    acc[i + 1] += neg ? -(int64_t)w1 : (int64_t)w1;
    acc[i + 2] += neg ? -(int64_t)w2 : (int64_t)w2;
    if (lsb < *low)
        *low = lsb;
}

/* carries up: every limb in 0 .. 2**32-1 but the top one, which keeps the sign */
static void x_carry(int64_t *acc)
{
    int i;
    for (i = 0; i + 1 < X_LIMBS; i++) {
        int64_t digit = (int64_t)((uint64_t)acc[i] & M32);
        acc[i + 1] += (acc[i] - digit) / (INT64_C(1) << 32);
        acc[i] = digit;
    }
}

/* the exact sum of the pass's products P[0 .. L) and c, rounded once (algorithms._exact_sum, _finish) */
static uint64_t exact_pass(const double *P, int64_t L, double cv, const int64_t *fmts, const int64_t *prm,
                           int *mag_zero)
{
    int64_t acc[X_LIMBS] = {0}, low = INT64_MAX, t, top, bits, cut, shift, b, kept = 0;
    int nan = 0, pinf = 0, ninf = 0, sign = 0, sticky = 0, i;
    uint64_t d;
    for (t = 0; t <= L; t++) {
        double x = t < L ? P[t] : cv;
        if (isnan(x))
            nan = 1;
        else if (isinf(x))
            *(x > 0 ? &pinf : &ninf) = 1;
        else if (x != 0)
            x_add(acc, x, &low);
    }
    *mag_zero = !(nan || pinf || ninf);
    if (nan || pinf || ninf)             /* FDA step 1: IEEE rules on the special terms */
        return finish(fmts, GS_D, 0.0, nan || (pinf && ninf) ? NAN : (pinf ? INFINITY : -INFINITY), 0,
                      prm[GS_P_MODE], prm[GS_P_FRAC], prm[GS_P_OVERFLOW], prm[GS_P_ZPOS] == 1, 0);
    if (low == INT64_MAX)
        low = 0;
    x_carry(acc);
    if (acc[X_LIMBS - 1] < 0) {          /* a negative sum: its magnitude, carried again */
        sign = 1;
        for (i = 0; i < X_LIMBS; i++)
            acc[i] = -acc[i];
        x_carry(acc);
    }
    for (top = X_LIMBS - 1; top >= 0 && acc[top] == 0; top--)
        ;
    if (top >= 0) {
        bits = 32 * top + bit_length(acc[top]) - (low + X_BASE);       /* int.bit_length of the sum */
        cut = bits > X_KEEP ? bits - X_KEEP : 0;
        shift = low + X_BASE + cut;
        for (b = 32 * top + bit_length(acc[top]) - 1; b >= shift; b--)
            kept = (kept << 1) | ((acc[b >> 5] >> (b & 31)) & 1);
        for (b = 0; b < shift >> 5 && !sticky; b++)
            sticky = acc[b] != 0;
        sticky |= (acc[shift >> 5] & (int64_t)((UINT64_C(1) << (shift & 31)) - 1)) != 0;
        *mag_zero = 0;
    } else {
        cut = 0;
    }
    d = round_bits(fmts, GS_D, sign, kept | sticky, low + cut, prm[GS_P_MODE], prm[GS_P_FRAC], prm[GS_P_OVERFLOW],
                   prm[GS_P_FAULT] == 1);
    if (prm[GS_P_ZPOS] == 1 && FMT(fmts, GS_D, GS_SIGNED) == 1
            && d == 1ULL << (FMT(fmts, GS_D, GS_EXP_BITS) + FMT(fmts, GS_D, GS_MAN_BITS) + FMT(fmts, GS_D, GS_IGNORED_LOW)))
        d = 0;
    return d;
}

/* zero_sign="ieee754" on a zero sum (algorithms._finish with _zero_terms): -0 when every term is -0,
 * +0 for an exact cancellation or mixed zeros, -0 rounding down unless every term is +0 */
static uint64_t zero_754(const int64_t *fmts, const int64_t *prm, const double *P, int64_t L, double cv)
{
    int zero = cv == 0, neg = signbit(cv) != 0, pos = signbit(cv) == 0;
    int64_t t;
    for (t = 0; t < L; t++) {
        zero &= P[t] == 0;
        neg &= signbit(P[t]) != 0;
        pos &= signbit(P[t]) == 0;
    }
    if ((zero && neg) || (prm[GS_P_MODE] == GS_RD && !(zero && pos)))
        return 1ULL << (FMT(fmts, GS_D, GS_EXP_BITS) + FMT(fmts, GS_D, GS_MAN_BITS) + FMT(fmts, GS_D, GS_IGNORED_LOW));
    return 0;
}

void golden_fda_rows(GOLDEN_ROWS_ARGS)
{
    int64_t L = prm[GS_P_L], block = prm[GS_P_BLOCK];
    int64_t nblk = K / block;
    int scaled = prm[GS_P_SCALED] == 1, c_last = prm[GS_P_CLAST] == 1;
    int64_t F = prm[GS_P_F], ez = prm[GS_P_EZERO];
    double *P = malloc((size_t)(L > 0 ? L : 1) * sizeof *P);
    int64_t *E = malloc((size_t)(L > 0 ? L : 1) * sizeof *E);
    int64_t r, j, t, t0;
    if (!P || !E) {
        free(P);
        free(E);
        return;
    }
    for (r = lo; r < hi; r++) {
        uint64_t cb = load(c, isz[2], r);
        int64_t fc_slot = c_last ? GS_D : GS_CF;
        double cv;
        int64_t ce;
        if (c_last) {                                /* the chain starts from +0; c comes at the end */
            cv = 0.0;
            ce = GS_ZERO_EXP;
        } else {
            c_value(fmts, vtab, etab, GS_CF, cb, &cv, &ce);
        }
        for (j = 0; j < K; j += L) {
            int64_t emax;
            int zero = 0;
            double scale, tot;
            uint64_t d;
            fill_products(a, b, isz, fmts, vtab, etab, r * K, order, j, L, P, E);
            if (scaled) {                            /* the two scale exponents join each product's */
                for (t0 = 0; t0 < L; t0 += block) {
                    double sv;
                    int64_t se;
                    scale_product(sa, sb, isz, fmts, vtab, etab, r * nblk + (j + t0) / block, &sv, &se);
                    for (t = t0; t < t0 + block; t++) {
                        P[t] *= sv;
                        E[t] += se;
                    }
                }
            }
            if (prm[GS_P_EXACT] == 1) {              /* no window: the exact sum, rounded once */
                int mag_zero;
                d = exact_pass(P, L, cv, fmts, prm, &mag_zero);
                if (prm[GS_P_ZERO_754] == 1 && mag_zero)
                    d = zero_754(fmts, prm, P, L, cv);
                out[r] = d;
                c_value(fmts, vtab, etab, GS_D, d, &cv, &ce);
                fc_slot = GS_D;
                continue;
            }
            emax = ce <= GS_NO_TERM ? ez : ce;                          /* a zero c takes e_zero */
            for (t = 0; t < L; t++) {
                emax = imax(emax, E[t]);
                zero |= E[t] <= GS_NO_TERM;
            }
            if (ez > FMT(fmts, fc_slot, GS_EMIN) && zero)              /* zero products take e_zero */
                emax = imax(emax, ez);
            scale = pow2(F - emax);
            tot = ftrunc(cv * scale);
            for (t = 0; t < L; t++)
                tot += ftrunc(P[t] * scale);
            d = finish(fmts, GS_D, tot, tot, emax - F, prm[GS_P_MODE], prm[GS_P_FRAC], prm[GS_P_OVERFLOW],
                       prm[GS_P_ZPOS] == 1, prm[GS_P_FAULT] == 1);
            if (prm[GS_P_ZERO_754] == 1 && tot == 0)
                d = zero_754(fmts, prm, P, L, cv);
            out[r] = d;
            c_value(fmts, vtab, etab, GS_D, d, &cv, &ce);             /* the next pass takes d as c */
            fc_slot = GS_D;
        }
        if (c_last)
            out[r] = ieee_add(fmts, vtab, etab, out[r], cb, prm[GS_P_ZPOS] == 1);
    }
    apply_nan_bits(fmts, vtab, etab, prm, lo, hi, out);
    free(P);
    free(E);
}

/* one GDFS pass: exact group sums of g products, times the block scales, aligned to F (fused.gdfs_pass) */
static uint64_t gdfs_pass(const double *P, int64_t j, int64_t L, const uint8_t *sa, const uint8_t *sb,
                          const int64_t *isz, int64_t r, int64_t nblk, double cv, int64_t ce, const int64_t *fmts,
                          const float *vtab, const int16_t *etab, const int64_t *prm, double *T, int64_t *G)
{
    int64_t F = prm[GS_P_F], ez = prm[GS_P_EZERO], g = prm[GS_P_GROUP], block = prm[GS_P_BLOCK];
    int64_t ngroups = L / g, q, t;
    int64_t e_max = ce <= GS_NO_TERM ? ez : ce;
    double scale, total = 0.0;
    for (q = 0; q < ngroups; q++) {
        double sigma = 0.0, sv;
        int64_t se;
        int all_zero = 1;
        for (t = q * g; t < q * g + g; t++) {
            sigma += P[t];
            all_zero &= !(P[t] != 0);
        }
        scale_product(sa, sb, isz, fmts, vtab, etab, r * nblk + (j + q * g) / block, &sv, &se);
        T[q] = sigma * sv;
        G[q] = (all_zero || sv == 0) ? ez : se;
        e_max = imax(e_max, G[q]);
    }
    scale = pow2(F - e_max);
    for (q = 0; q < ngroups; q++)
        total += ftrunc(T[q] * scale);
    total += ftrunc(cv * scale);
    if (prm[GS_P_ZERO_754] == 1 && total == 0)                  /* the pass's products and c: all -0? */
        return zero_754(fmts, prm, P, L, cv);
    return finish(fmts, GS_D, total, total, e_max - F, prm[GS_P_MODE], prm[GS_P_FRAC], prm[GS_P_OVERFLOW],
                  prm[GS_P_ZPOS] == 1, prm[GS_P_FAULT] == 1);
}

void golden_gdfs_rows(GOLDEN_ROWS_ARGS)
{
    int64_t L = prm[GS_P_L];
    int64_t nblk = K / prm[GS_P_BLOCK];
    size_t n = (size_t)(L > 0 ? L : 1);
    double *P = malloc(n * sizeof *P), *T = malloc(n * sizeof *T);
    int64_t *E = malloc(n * sizeof *E), *G = malloc(n * sizeof *G);
    int64_t r, j;
    if (P && T && E && G) {
        for (r = lo; r < hi; r++) {
            double cv;
            int64_t ce;
            c_value(fmts, vtab, etab, GS_CF, load(c, isz[2], r), &cv, &ce);
            for (j = 0; j < K; j += L) {
                uint64_t d;
                fill_products(a, b, isz, fmts, vtab, etab, r * K, order, j, L, P, E);
                d = gdfs_pass(P, j, L, sa, sb, isz, r, nblk, cv, ce, fmts, vtab, etab, prm, T, G);
                out[r] = d;
                c_value(fmts, vtab, etab, GS_D, d, &cv, &ce);
            }
        }
    }
    apply_nan_bits(fmts, vtab, etab, prm, lo, hi, out);
    free(P);
    free(T);
    free(E);
    free(G);
}
