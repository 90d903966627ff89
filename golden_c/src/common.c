/* Shared helpers of the C row kernels: a port of golden/kernels/_common.py, one function each, the
 * same bits.  Signed shifts go through uint64_t (numba's int64 shifts wrap; C's would be undefined). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

#define U64(x) ((uint64_t)(x))
#define SHL(x, n) ((int64_t)((uint64_t)(x) << ((n) & 63)))   /* int64 << n: wraps, amount mod 64 (x86) as numba does */

static double nan64(void) { return f64_from_bits(0x7FF8000000000000ULL); }   /* math.nan */

/* --------------------------------------------------------------------------- bit casts, intrinsics */

float f32_from_bits(uint64_t w)
{
    uint32_t u = (uint32_t)w;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

uint64_t bits_from_f32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

double f64_from_bits(uint64_t w)
{
    double x;
    memcpy(&x, &w, sizeof x);
    return x;
}

uint64_t bits_from_f64(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

double fma64(double a, double b, double c) { return fma(a, b, c); }
float fma32(float a, float b, float c) { return fmaf(a, b, c); }
double ftrunc(double x) { return trunc(x); }
double ffloor(double x) { return floor(x); }

/* --------------------------------------------------------------------------- loads and decoding */

uint64_t load(const uint8_t *buf, int64_t isz, int64_t i)
{
    const uint8_t *p = buf + i * isz;
    uint64_t x = p[0];
    int64_t t;
    for (t = 1; t < isz; t++)
        x |= U64(p[t]) << (8 * t);
    return x;
}

int64_t table_index(const int64_t *fmts, int64_t f, uint64_t bits)
{
    return (int64_t)(bits >> FMT(fmts, f, GS_IGNORED_LOW)) & (SHL(1, FMT(fmts, f, GS_VALUE_BITS)) - 1);
}

void value_exp(const int64_t *fmts, const float *vtab, const int16_t *etab, int64_t f, uint64_t bits,
               double *value, int64_t *exponent)
{
    int64_t off = FMT(fmts, f, GS_TABLE_OFF);
    if (off >= 0) {
        int64_t j = table_index(fmts, f, bits);
        *value = (double)vtab[off + j];
        *exponent = (int64_t)etab[FMT(fmts, f, GS_EXP_TAB_OFF) + j];
        return;
    }
    if (FMT(fmts, f, GS_WORD32) == 1) {
        int64_t low = FMT(fmts, f, GS_IGNORED_LOW);
        uint32_t w = (uint32_t)(bits & 0xFFFFFFFFULL) & ~(uint32_t)((1ULL << low) - 1);
        int64_t ef = (int64_t)((w >> 23) & 0xFFu);
        int64_t mn = (int64_t)(w & 0x7FFFFFu) >> low;
        *value = (double)f32_from_bits(w);
        if (ef == 255)
            *exponent = 0;
        else if (ef == 0)
            *exponent = mn == 0 ? GS_ZERO_EXP : -126;
        else
            *exponent = ef - 127;
        return;
    }
    if (FMT(fmts, f, GS_EXP_BITS) == 11) {                          /* f64 */
        int64_t ef = (int64_t)((bits >> 52) & 0x7FFULL);
        uint64_t mn = bits & ((1ULL << 52) - 1);
        *value = f64_from_bits(bits);
        if (ef == 2047)
            *exponent = 0;
        else if (ef == 0)
            *exponent = mn == 0 ? GS_ZERO_EXP : -1022;
        else
            *exponent = ef - 1023;
        return;
    }
    fields_value_exp(fmts, f, bits, value, exponent);
}

void word32_value_exp(uint64_t bits, double *value, int64_t *exponent)
{
    uint32_t w = (uint32_t)(bits & 0xFFFFFFFFULL);
    int64_t ef = (int64_t)((w >> 23) & 0xFFu);
    *value = (double)f32_from_bits(w);
    if (ef == 255)
        *exponent = 0;
    else if (ef == 0)
        *exponent = (w & 0x7FFFFFu) == 0 ? GS_ZERO_EXP : -126;
    else
        *exponent = ef - 127;
}

void fields_value_exp(const int64_t *fmts, int64_t f, uint64_t bits, double *value, int64_t *exponent)
{
    int64_t mb = FMT(fmts, f, GS_MAN_BITS), eb = FMT(fmts, f, GS_EXP_BITS);
    int64_t v = (int64_t)(bits >> FMT(fmts, f, GS_IGNORED_LOW)) & (SHL(1, FMT(fmts, f, GS_VALUE_BITS)) - 1);
    int64_t man = v & (SHL(1, mb) - 1);
    int64_t ef = (v >> mb) & (SHL(1, eb) - 1);
    int neg = FMT(fmts, f, GS_SIGNED) == 1 && (v >> (eb + mb)) != 0;
    int64_t top = SHL(1, eb) - 1;
    int64_t kind = FMT(fmts, f, GS_NAN_KIND);
    int64_t sig, e;
    double val;
    if (kind == GS_NAN_IEEE && ef == top) {
        *exponent = 0;
        *value = man != 0 ? nan64() : (neg ? -INFINITY : INFINITY);
        return;
    }
    if ((kind == GS_NAN_ALL_ONES && ef == top && man == SHL(1, mb) - 1)
            || (kind == GS_NAN_NEG_ZERO && neg && ef == 0 && man == 0) || (kind == GS_NAN_MAX_EXP && ef == top)) {
        *value = nan64();
        *exponent = 0;
        return;
    }
    if (ef == 0 && FMT(fmts, f, GS_SUBNORMALS) == 1) {
        sig = man;
        e = FMT(fmts, f, GS_EMIN);
        if (man == 0) {
            *value = neg ? -0.0 : 0.0;
            *exponent = GS_ZERO_EXP;
            return;
        }
    } else {
        sig = man | SHL(1, mb);
        e = ef - FMT(fmts, f, GS_BIAS);
    }
    val = (double)sig * pow2(e - mb);
    *value = neg ? -val : val;
    *exponent = e;
}

/* --------------------------------------------------------------------------- rounding */

int64_t bit_length(int64_t x)
{
    int64_t n = 0;
    if (x < SHL(1, 53)) {
        if (x == 0)
            return 0;
        return (int64_t)((bits_from_f64((double)x) >> 52) & 0x7FFULL) - 1022;
    }
    while (x > 0) {
        x >>= 1;
        n += 1;
    }
    return n;
}

double golden_ldexp(double x, int64_t n)
{
    if (-1022 <= n && n <= 1023)
        return x * f64_from_bits(U64(n + 1023) << 52);
    if (n > 100000)
        n = 100000;
    if (n < -100000)
        n = -100000;
    return ldexp(x, (int)n);
}

double pow2(int64_t n)
{
    return golden_ldexp(1.0, n);
}

static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

uint64_t round_bits(const int64_t *fmts, int64_t f, int64_t sign, int64_t mag, int64_t exp, int64_t mode,
                    int64_t frac_bits, int64_t overflow, int64_t fault)
{
    int64_t man_bits = FMT(fmts, f, GS_MAN_BITS);
    int64_t p = frac_bits < 0 ? man_bits : frac_bits;
    int64_t emin = FMT(fmts, f, GS_EMIN);
    int64_t e_top = exp + bit_length(mag) - 1;
    int64_t q = imax(e_top - p, emin - p);
    int64_t shift = q - exp;
    int64_t right = imin(imax(shift, 0), 63);
    int64_t kept, rem, half, efield, man, lead, emax;
    int far, inexact, above, tie, inc, normal, over;
    uint64_t word, sbit = 0, low;
    if (shift > 0)
        kept = mag >> right;
    else
        kept = SHL(mag, imin(-shift, 63));
    rem = right < 63 ? mag & (SHL(1, right) - 1) : mag & INT64_C(0x7FFFFFFFFFFFFFFF);
    half = right > 0 ? SHL(1, imax(right - 1, 0)) : 0;
    far = shift > 63;
    inexact = (shift > 0 && rem != 0) || (far && mag != 0);
    above = rem > half && shift > 0 && !far;
    tie = rem == half && shift > 0 && !far;
    if (far)
        kept = 0;
    if (mode == GS_RNE)
        inc = above || (tie && (kept & 1) == 1);
    else if (mode == GS_RZ)
        inc = 0;
    else if (mode == GS_RU)
        inc = inexact && sign == 0;
    else
        inc = inexact && sign == 1;
    if (fault && shift > 0 && !far && rem >= half && rem != 0)
        inc = !inc;                                     /* the planted fault: the round bit misread */
    if (inc)
        kept += 1;
    if ((kept >> (p + 1)) != 0) {
        kept >>= 1;
        q += 1;
    }
    normal = kept >= SHL(1, p);
    lead = q + p;
    if (normal) {
        efield = lead + FMT(fmts, f, GS_BIAS);
        man = SHL(kept - SHL(1, p), man_bits - p);
    } else {
        efield = 0;
        man = SHL(kept, man_bits - p);
    }
    emax = FMT(fmts, f, GS_EMAX);
    over = normal && (lead > emax || (lead == emax && man > FMT(fmts, f, GS_MAX_MANTISSA)));
    word = U64(SHL(efield, man_bits) | man);
    if (FMT(fmts, f, GS_SIGNED) == 1) {
        sbit = U64(sign) << (FMT(fmts, f, GS_EXP_BITS) + man_bits);
        word |= sbit;
    }
    if (FMT(fmts, f, GS_FNUZ) == 1 && word == (1ULL << (FMT(fmts, f, GS_VALUE_BITS) - 1)))
        word = 0;
    low = U64(FMT(fmts, f, GS_IGNORED_LOW));
    if (over) {
        int big;
        if (overflow == GS_OVERFLOW_INF || mode == GS_RNE)
            big = 1;
        else if (mode == GS_RZ)
            big = 0;
        else if (mode == GS_RU)
            big = sign == 0;
        else
            big = sign == 1;
        if (big)
            return overflow_bits(fmts, f, sign);
        return U64(FMT(fmts, f, GS_MAX_BITS)) | (sbit << low);
    }
    return word << low;
}

uint64_t overflow_bits(const int64_t *fmts, int64_t f, int64_t sign)
{
    uint64_t sbit = 0;
    if (FMT(fmts, f, GS_SIGNED) == 1)
        sbit = U64(sign) << (FMT(fmts, f, GS_EXP_BITS) + FMT(fmts, f, GS_MAN_BITS) + FMT(fmts, f, GS_IGNORED_LOW));
    if (FMT(fmts, f, GS_HAS_INF) == 1)
        return U64(FMT(fmts, f, GS_INF_BITS)) | sbit;
    if (FMT(fmts, f, GS_NAN_KIND) != GS_NAN_NONE)
        return U64(FMT(fmts, f, GS_NAN_BITS));
    return U64(FMT(fmts, f, GS_MAX_BITS)) | sbit;
}

uint64_t finish(const int64_t *fmts, int64_t fd, double total, double special, int64_t exp_lsb, int64_t mode,
                int64_t frac_bits, int64_t overflow, int64_t zero_positive, int64_t fault)
{
    double t;
    int64_t ints, sign;
    uint64_t d;
    if (isnan(special))
        return U64(FMT(fmts, fd, GS_NAN_BITS));
    if (isinf(special))
        return overflow_bits(fmts, fd, special < 0 ? 1 : 0);
    t = isfinite(total) ? total : 0.0;
    /* np.int64(t): truncation; out of range gives INT64_MIN as x86's conversion does */
    ints = (t >= -9223372036854775808.0 && t < 9223372036854775808.0) ? (int64_t)t : INT64_MIN;
    sign = ints < 0 ? 1 : 0;
    d = round_bits(fmts, fd, sign, ints < 0 ? (int64_t)(0 - U64(ints)) : ints, exp_lsb, mode, frac_bits,
                   overflow, fault);
    if (zero_positive) {
        uint64_t neg_zero = 1ULL << (FMT(fmts, fd, GS_EXP_BITS) + FMT(fmts, fd, GS_MAN_BITS)
                                     + FMT(fmts, fd, GS_IGNORED_LOW));
        if (FMT(fmts, fd, GS_SIGNED) == 1 && d == neg_zero)
            d = 0;
    }
    return d;
}

uint64_t round_f64(const int64_t *fmts, int64_t f, double x, int64_t mode)
{
    int64_t sign, ef, mn;
    uint64_t w;
    if (isnan(x))
        return FMT(fmts, f, GS_NAN_KIND) != GS_NAN_NONE ? U64(FMT(fmts, f, GS_NAN_BITS))
                                                        : U64(FMT(fmts, f, GS_MAX_BITS));
    sign = signbit(x) ? 1 : 0;
    if (isinf(x))
        return overflow_bits(fmts, f, sign);
    w = bits_from_f64(x);
    ef = (int64_t)((w >> 52) & 0x7FFULL);
    mn = (int64_t)(w & ((1ULL << 52) - 1));
    if (ef == 0)
        return round_bits(fmts, f, sign, mn, -1074, mode, -1, GS_OVERFLOW_IEEE, 0);
    return round_bits(fmts, f, sign, mn | SHL(1, 52), ef - 1075, mode, -1, GS_OVERFLOW_IEEE, 0);
}

void apply_nan_bits(const int64_t *fmts, const float *vtab, const int16_t *etab, const int64_t *prm, int64_t lo,
                    int64_t hi, uint64_t *out)
{
    int64_t r, e;
    double v;
    if (prm[GS_P_NAN_SET] != 1)
        return;
    for (r = lo; r < hi; r++) {
        value_exp(fmts, vtab, etab, GS_D, out[r], &v, &e);
        if (isnan(v))
            out[r] = U64(prm[GS_P_NAN_BITS]);
    }
}
