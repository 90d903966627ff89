/* mma_golden.h: the public interface of the C golden library (golden_c/), a C99 port of the golden
 * model's compiled kernels (golden/kernels/), bit for bit, with no dependencies beyond libm.
 *
 * For now the interface is the row kernels: one per algorithm family, each computing rows lo .. hi-1
 * of a batch of dot-adds d = c + sum_k a_k * b_k from operand words and the tables golden's Python
 * side builds for a design (golden.kernels.spec.build: fmts, vtab, etab, prm; the product order).
 * The arguments and their layout are documented in golden_c/src/rows.h, which declares the same
 * functions (a compiler sees both: they cannot drift apart).  golden.clib builds the library and
 * calls these through ctypes.
 */
#ifndef MMA_GOLDEN_H
#define MMA_GOLDEN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MMA_GOLDEN_ROWS_ARGS int64_t lo, int64_t hi, const uint8_t *a, const uint8_t *b, const uint8_t *c, \
    const uint8_t *sa, const uint8_t *sb, const int64_t *isz, int64_t K, const int64_t *fmts, \
    const float *vtab, const int16_t *etab, const int64_t *prm, const int64_t *order, uint64_t *out

void golden_fda_rows(MMA_GOLDEN_ROWS_ARGS);     /* FDA and its chains                */
void golden_gdfs_rows(MMA_GOLDEN_ROWS_ARGS);    /* GDFS                              */
void golden_fdrda_rows(MMA_GOLDEN_ROWS_ARGS);   /* FDRDA and GFDRDA                  */
void golden_gps_rows(MMA_GOLDEN_ROWS_ARGS);     /* GPS                               */
void golden_sfma_rows(MMA_GOLDEN_ROWS_ARGS);    /* SFMA                              */

#ifdef __cplusplus
}
#endif

#endif
