/* The row kernels of the C golden library: one per algorithm family, the same arguments and the same
 * bits as the compiled Python kernels of golden/kernels/ (numba), whose row functions they port.
 *
 * Every kernel computes rows lo .. hi-1 of a batch:
 *   a, b       operand words, row-major [R, K], each word isz[0] / isz[1] bytes (1, 2, 4 or 8), little-endian
 *   c          [R] words of isz[2] bytes
 *   sa, sb     block scales [R, K / block] of isz[3] / isz[4] bytes, or NULL when unscaled
 *   isz        the five word sizes (int64)
 *   K          products per dot-add
 *   fmts       [SLOTS=5][FORMAT_COLUMNS=19] int64: a, b, c, d, scale format rows (golden.kernels.spec.format_row)
 *   vtab, etab value (float32) and exponent (int16) tables of the tabled formats (spec.build)
 *   prm        [C_NPARAMS] int64: the algorithm's parameters (spec.param_vector's NPARAMS, then the slots
 *              golden.c_library.CSlot adds: F="exact", nan_bits, fma_rounding, zero_sign="ieee754")
 *   order      [K] int64: the product order the passes take (spec: arange or algorithms.pass_order)
 *   out        [R] uint64: d's bit patterns
 * Column and parameter indices are golden/kernels/spec.py's; keep them in one place: the generated
 * header golden_spec.h (golden.c_library writes it from golden.kernels.spec) defines them.
 */
#ifndef MMA_GOLDEN_ROWS_H
#define MMA_GOLDEN_ROWS_H

#include <stdint.h>

#define GOLDEN_ROWS_ARGS int64_t lo, int64_t hi, const uint8_t *a, const uint8_t *b, const uint8_t *c, \
    const uint8_t *sa, const uint8_t *sb, const int64_t *isz, int64_t K, const int64_t *fmts, \
    const float *vtab, const int16_t *etab, const int64_t *prm, const int64_t *order, uint64_t *out

typedef void (*golden_rows_fn)(GOLDEN_ROWS_ARGS);

void golden_fda_rows(GOLDEN_ROWS_ARGS);     /* FDA and its chains (golden/kernels/fused.py fda_rows)   */
void golden_gdfs_rows(GOLDEN_ROWS_ARGS);    /* GDFS (fused.py gdfs_rows)                               */
void golden_fdrda_rows(GOLDEN_ROWS_ARGS);   /* FDRDA and GFDRDA (amd.py fdrda_rows)                    */
void golden_gps_rows(GOLDEN_ROWS_ARGS);     /* GPS (gps.py gps_rows)                                   */
void golden_sfma_rows(GOLDEN_ROWS_ARGS);    /* SFMA (sfma.py sfma_rows)                                */

#endif
