/* NVIDIA's fused algorithms, FDA (block scales, chains of passes, operand_format, pass_interleave,
 * c_last) and GDFS with block scales: a port of golden/kernels/fused.py, a row at a time.
 *
 * fused.py takes a block of rows through each step together, and the designs spec.fast_kind picks
 * in integer lanes (fused_int.py); every one of those computes the same numbers as its float64
 * per-row steps, which are what this file runs for every design: products from the same tables
 * (or _common.value_exp for TF32/f32), the maximum exponent with the e_zero rule, alignment by
 * trunc, one exact float64 sum, finish.  prm[P_FAST] is not read. */
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
            out[r] = d;
            c_value(fmts, vtab, etab, GS_D, d, &cv, &ce);             /* the next pass takes d as c */
            fc_slot = GS_D;
        }
        if (c_last)
            out[r] = ieee_add(fmts, vtab, etab, out[r], cb, prm[GS_P_ZPOS] == 1);
    }
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
    free(P);
    free(T);
    free(E);
    free(G);
}
