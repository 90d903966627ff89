/* Shared helpers of the C row kernels: a port of golden/kernels/_common.py, one function each, same
 * names and the same bits (fmts is the [SLOTS][GS_FORMAT_COLUMNS] int64 table, f a slot: GS_A .. GS_S). */
#ifndef MMA_GOLDEN_COMMON_H
#define MMA_GOLDEN_COMMON_H

#include <stdint.h>
#include "golden_spec.h"

#define FMT(fmts, f, col) ((fmts)[(f) * GS_FORMAT_COLUMNS + (col)])

uint64_t load(const uint8_t *buf, int64_t isz, int64_t i);                 /* word i of a buffer of isz-byte words */
int64_t table_index(const int64_t *fmts, int64_t f, uint64_t bits);
/* value and exponent of an operand word (tabled formats, f32/tf32 words, or decoded fields) */
void value_exp(const int64_t *fmts, const float *vtab, const int16_t *etab, int64_t f, uint64_t bits,
               double *value, int64_t *exponent);
void word32_value_exp(uint64_t bits, double *value, int64_t *exponent);
void fields_value_exp(const int64_t *fmts, int64_t f, uint64_t bits, double *value, int64_t *exponent);
int64_t bit_length(int64_t x);
double golden_ldexp(double x, int64_t n);
double pow2(int64_t n);
uint64_t round_bits(const int64_t *fmts, int64_t f, int64_t sign, int64_t mag, int64_t exp, int64_t mode,
                    int64_t frac_bits, int64_t overflow, int64_t fault);
uint64_t overflow_bits(const int64_t *fmts, int64_t f, int64_t sign);
uint64_t finish(const int64_t *fmts, int64_t fd, double total, double special, int64_t exp_lsb, int64_t mode,
                int64_t frac_bits, int64_t overflow, int64_t zero_positive, int64_t fault);
uint64_t round_f64(const int64_t *fmts, int64_t f, double x, int64_t mode);
float f32_from_bits(uint64_t w);
uint64_t bits_from_f32(float x);
double f64_from_bits(uint64_t w);
uint64_t bits_from_f64(double x);
double fma64(double a, double b, double c);   /* correctly rounded (C99 fma) */
float fma32(float a, float b, float c);       /* correctly rounded (C99 fmaf) */
double ftrunc(double x);
/* Params.nan_bits (prm[P_NAN_SET], prm[P_NAN_BITS]): every NaN result of rows lo .. hi-1 becomes the
 * design's one NaN pattern, whatever the algorithm made (algorithms.run_datapath's last step) */
void apply_nan_bits(const int64_t *fmts, const float *vtab, const int16_t *etab, const int64_t *prm, int64_t lo,
                    int64_t hi, uint64_t *out);
double ffloor(double x);

#endif
