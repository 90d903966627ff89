/* AMD CDNA3's FDRDA and GFDRDA (and their chains), step for step as golden.algorithms.fdrda /
 * gfdrda: products with AMD's overflow and the special outcome of IV-F (or the later model's,
 * Params.specials), products aligned to their own maximum, the round-down (or toward-zero) floors
 * of docs/spec.md §4.4, RNE to d.  A per-row port of golden/kernels/amd.py: fdrda_rows' decoding
 * and pass loop, fdrda_pass (amd_products, set_dot, merge_with_c).  numba's block path computes the
 * same bits for the rows it takes (it falls back to fdrda_pass elsewhere), so every row runs
 * fdrda_pass here; the planted fault (prm[P_FAULT]) is therefore finish's (the round bit misread).
 * A pass's products are decoded once into a buffer (on the stack up to STACK_L products, else
 * malloc'ed once per call); where that allocation fails they are decoded again at each step.
 * float64 arithmetic as written, no contraction into fma (GCC's -std=c99 default: -ffp-contract=off). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "common.h"
#include "rows.h"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "the kernels need binary64 arithmetic evaluated in its own type (FLT_EVAL_METHOD 0: e.g. SSE2, not x87)"
#endif

#define NONFINITE_C_EXP (-1)          /* algorithms.NONFINITE_C_EXP */
#define STACK_L 256                   /* products per pass buffered on the stack */
#define OVERFLOW_P (340282366920938463463374607431768211456.0)   /* 2**128 */

static int64_t imax(int64_t x, int64_t y) { return x > y ? x : y; }

/* np.int64(x) of a float64: truncation; outside int64 x86's conversion gives INT64_MIN (as numba) */
static int64_t to_int64(double x)
{
    return (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (int64_t)x : INT64_MIN;
}

static int64_t iabs(int64_t x) { return x < 0 ? (int64_t)(0 - (uint64_t)x) : x; }

static double floor_scaled(double x, int64_t log2_scale, int rd)
{
    double s = golden_ldexp(x, log2_scale);
    return rd ? ffloor(s) : ftrunc(s);
}

/* One pass of one row: the operands of its products, the parameters, and whether products that
 * reach 2**128 overflow to infinity (fdrda_rows' `overflows`). */
typedef struct {
    const uint8_t *a, *b;
    const int64_t *isz, *fmts, *prm, *order;
    const float *vtab;
    const int16_t *etab;
    int64_t base;          /* r * K: the row's first element (order: the pass's product indices) */
    int overflows;
    double *P;             /* the pass's products (values and exponents) once decoded, or NULL */
    int64_t *E;
} pass_t;

/* Product t of the pass: value and exponent as fdrda_rows' Va, Xa hold them (a's value times b's,
 * their exponents added); `over`: AMD's product overflow applied (amd_products' in-place P). */
static void decode(const pass_t *ps, int64_t t, double *p, int64_t *e)
{
    double va, vb;
    int64_t xa, xb;
    int64_t i = ps->base + ps->order[t];
    value_exp(ps->fmts, ps->vtab, ps->etab, GS_A, load(ps->a, ps->isz[0], i), &va, &xa);
    value_exp(ps->fmts, ps->vtab, ps->etab, GS_B, load(ps->b, ps->isz[1], i), &vb, &xb);
    *p = va * vb;
    *e = xa + xb;
}

static void product(const pass_t *ps, int64_t t, int over, double *p, int64_t *e)
{
    if (ps->P != NULL) {
        *p = ps->P[t];
        *e = ps->E[t];
    } else {
        decode(ps, t, p, e);
    }
    if (over && fabs(*p) >= OVERFLOW_P)
        *p = copysign(INFINITY, *p);
}

/* amd.amd_products: (special, dot_special); the products the later steps read are `over`'s */
static void amd_products(const pass_t *ps, int64_t L, double cv, int over, double *special, double *dot_special)
{
    double sp = 0.0, p;
    int64_t e, t;
    for (t = 0; t < L; t++) {
        product(ps, t, 0, &p, &e);
        sp += p;
    }
    sp += cv;
    if (over) {
        int hit = 0;
        for (t = 0; t < L; t++) {
            product(ps, t, 0, &p, &e);
            if (fabs(p) >= OVERFLOW_P)
                hit = 1;
        }
        if (hit) {
            double dot = 0.0;
            for (t = 0; t < L; t++) {
                product(ps, t, 1, &p, &e);
                dot += p;
            }
            if (ps->prm[GS_P_LATER] == 1)
                sp = dot + cv;                 /* one IEEE sum: NaN where the infinities meet */
            else if (isfinite(sp))
                sp = dot;                      /* step 3: only now do overflowed products decide */
        }
    }
    *dot_special = 0.0;
    for (t = 0; t < L; t++) {
        product(ps, t, over, &p, &e);
        *dot_special += p;
    }
    *special = sp;
}

/* amd.set_dot over products lo, lo + step, ... < hi: (s, e, has) */
static void set_dot(const pass_t *ps, int over, int64_t lo, int64_t hi, int64_t step, int64_t F,
                    double *s_out, int64_t *e_out, int *has_out)
{
    int64_t e = -((int64_t)1 << 40), t, et;
    double s = 0.0, p, scale;
    for (t = lo; t < hi; t += step) {
        product(ps, t, over, &p, &et);
        e = imax(e, et);
    }
    *has_out = e > GS_NO_TERM;
    if (!*has_out)
        e = GS_PARKED;
    scale = pow2(F - e);
    for (t = lo; t < hi; t += step) {
        product(ps, t, over, &p, &et);
        s += ftrunc(p * scale);
    }
    *s_out = s;
    *e_out = e;
}

/* amd.merge_with_c: FDRDA steps 6-8, d's bits */
static uint64_t merge_with_c(const int64_t *fmts, const int64_t *prm, double s_dot, int64_t e_dot, int has_dot,
                             int64_t dot_frac, double cv, int64_t ce, double special, double dot_special,
                             int all_neg_zero)
{
    int rd = prm[GS_P_FLOOR_RD] == 1;
    int later = prm[GS_P_LATER] == 1;
    int64_t c_drop = prm[GS_P_CDROP];
    int64_t dfb = prm[GS_P_DOTFB], cfb = prm[GS_P_CFB], ffb = prm[GS_P_FINFB];
    int64_t e_max, ints, lsb, e_n;
    double D, Cc, T, Tf, Tn;
    if (ce <= GS_NO_TERM)
        ce = -126;                                             /* a zero c keeps the exponent -126 */
    if (later && c_drop != GS_NO_C_DROP && !isfinite(cv))
        ce = NONFINITE_C_EXP;
    e_max = has_dot ? imax(e_dot, ce) : ce;
    D = has_dot ? floor_scaled(s_dot, dfb - dot_frac - (e_max - e_dot), rd) : 0.0;
    Cc = floor_scaled(cv, cfb - e_max, rd);
    if (c_drop != GS_NO_C_DROP) {
        int drop = ce < e_max - c_drop;
        if (later) {
            if (drop && !isfinite(cv))
                special = dot_special;
        } else {
            drop = drop && isfinite(cv);
        }
        if (drop)
            Cc = 0.0;
    }
    T = D + golden_ldexp(Cc, dfb - cfb);
    Tf = isfinite(T) ? T : 0.0;
    ints = to_int64(Tf);
    lsb = e_max - dfb;
    e_n = imax(lsb + bit_length(iabs(ints)) - 1, -126);
    Tn = floor_scaled(Tf, lsb - (e_n - ffb), rd);
    if (prm[GS_P_ZERO_754] == 1 && Tn == 0 && isfinite(special))   /* zero_sign="ieee754", RNE: -0 when */
        return all_neg_zero                                        /* every term is -0, else +0 */
               ? UINT64_C(1) << (FMT(fmts, GS_D, GS_EXP_BITS) + FMT(fmts, GS_D, GS_MAN_BITS)
                                 + FMT(fmts, GS_D, GS_IGNORED_LOW)) : 0;
    return finish(fmts, GS_D, Tn, special, e_n - ffb, GS_RNE, prm[GS_P_FRAC], prm[GS_P_OVERFLOW],
                  prm[GS_P_ZPOS] == 1, prm[GS_P_FAULT] == 1);
}

/* amd.fdrda_pass */
static uint64_t fdrda_pass(const pass_t *ps, int64_t L, double cv, int64_t ce, int grouped)
{
    const int64_t *prm = ps->prm;
    const int over = prm[GS_P_PROD_OVER] == 1 && ps->overflows;
    const int64_t F = prm[GS_P_F];
    double special, dot_special, s, s_e, s_o, s_dot;
    int64_t e, e_e, e_o, e_dot, m;
    int has, has_e, has_o, rd, neg = cv == 0 && signbit(cv);
    int64_t t;
    amd_products(ps, L, cv, over, &special, &dot_special);
    for (t = 0; t < L && neg && prm[GS_P_ZERO_754] == 1; t++) {  /* algorithms._zero_terms: all -0 */
        double p;
        product(ps, t, over, &p, &e);
        neg = p == 0 && signbit(p);
    }
    if (!grouped) {
        set_dot(ps, over, 0, L, 1, F, &s, &e, &has);
        return merge_with_c(ps->fmts, prm, s, e, has, F, cv, ce, special, dot_special, neg);
    }
    set_dot(ps, over, 0, L, 2, F, &s_e, &e_e, &has_e);
    set_dot(ps, over, 1, L, 2, F, &s_o, &e_o, &has_o);
    has = has_e || has_o;
    e_dot = imax(has_e ? e_e : GS_PARKED, has_o ? e_o : GS_PARKED);
    m = prm[GS_P_MERGEFB];
    rd = prm[GS_P_FLOOR_RD] == 1;
    s_dot = (has_e ? floor_scaled(s_e, m - F - (e_dot - e_e), rd) : 0.0) +
            (has_o ? floor_scaled(s_o, m - F - (e_dot - e_o), rd) : 0.0);
    return merge_with_c(ps->fmts, prm, s_dot, e_dot, has, m, cv, ce, special, dot_special, neg);
}

void golden_fdrda_rows(GOLDEN_ROWS_ARGS)
{
    const int64_t L = prm[GS_P_L];
    const int grouped = prm[GS_P_BASE] == GS_GFDRDA_CODE;
    double P_stack[STACK_L];
    int64_t E_stack[STACK_L];
    double *P_heap = NULL;
    int64_t *E_heap = NULL;
    pass_t ps;
    (void)sa; (void)sb;
    if (L <= STACK_L) {
        ps.P = P_stack;
        ps.E = E_stack;
    } else {
        P_heap = malloc((size_t)L * sizeof *P_heap);
        E_heap = malloc((size_t)L * sizeof *E_heap);
        ps.P = P_heap != NULL && E_heap != NULL ? P_heap : NULL;
        ps.E = E_heap;
    }
    ps.a = a; ps.b = b; ps.isz = isz; ps.fmts = fmts; ps.prm = prm; ps.vtab = vtab; ps.etab = etab;
    ps.overflows = FMT(fmts, GS_A, GS_EMAX) + 1 + FMT(fmts, GS_B, GS_EMAX) + 1 >= 128 && prm[GS_P_PROD_OVER] == 1;
    for (int64_t r = lo; r < hi; r++) {
        double cv;
        int64_t ce;
        uint64_t d = 0;
        value_exp(fmts, vtab, etab, GS_CF, load(c, isz[2], r), &cv, &ce);
        for (int64_t j = 0; j < K; j += L) {
            ps.base = r * K;
            ps.order = order + j;              /* the pass's products: order[j .. j + L - 1] */
            if (ps.P != NULL)
                for (int64_t t = 0; t < L; t++)
                    decode(&ps, t, &ps.P[t], &ps.E[t]);
            d = fdrda_pass(&ps, L, cv, ce, grouped);
            if (j + L < K)                     /* the next pass's c: d's value and exponent */
                value_exp(fmts, vtab, etab, GS_D, d, &cv, &ce);
        }
        out[r] = d;
    }
    apply_nan_bits(fmts, vtab, etab, prm, lo, hi, out);
    free(P_heap);
    free(E_heap);
}
