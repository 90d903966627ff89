/* mma_golden.h: the public interface of the C golden library (golden_c/), a C99 port of the golden
 * model's compiled kernels (golden/kernels/), bit for bit, with no dependencies beyond libm.
 *
 * Two levels.  The public API (below, golden_c/src/api.c, runtime.c): look an instruction up by
 * architecture and name in the catalog (generated at build time from golden.CATALOG by golden.c_library:
 * every entry), or make one of your own at run time from a golden.custom spec, then compute dot-adds
 * (one vector or a batch, block scales included) or the whole instruction on tiles (mma), from operand
 * bit patterns held one per uint64_t word.
 *
 * Below it, the row kernels: one per algorithm family, each computing rows lo .. hi-1
 * of a batch of dot-adds d = c + sum_k a_k * b_k from operand words and the tables golden's Python
 * side builds for a design (golden.kernels.spec.build: fmts, vtab, etab, prm; the product order).
 * The arguments and their layout are documented in golden_c/src/rows.h, which declares the same
 * functions (a compiler sees both: they cannot drift apart).  golden.clib builds the library and
 * calls these through ctypes.
 */
#ifndef MMA_GOLDEN_H
#define MMA_GOLDEN_H

#include <stddef.h>
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

/* ------------------------------------------------------------------------------ the public API
 *
 * Bit patterns: one element per uint64_t, the format's bits in the low bits (as golden.dot_add takes
 * them).  Results: d's bit patterns, one per uint64_t.  Functions returning int give 0 on success,
 * nonzero on an error whose message mma_golden_last_error() gives (per thread).  Lookups only read
 * constant tables; a design's value/exponent table is built once, at its first call, and published
 * atomically (concurrent first calls may each build it: one is kept), so every call is thread-safe. */

typedef struct mma_golden_instr mma_golden_instr;   /* a catalog entry at one shape (M, N), or your own */

/* The instruction `name` on `arch` (names, PTX/ISA forms and aliases as golden.lookup takes them,
 * case-insensitive; architecture aliases sm_90, h100, mi300x ...; an N template at a concrete shape,
 * HGMMA.64x128x16.F32, gives that shape).  NULL when unknown or ambiguous: mma_golden_last_error()
 * names the valid choices.  Instructions of your own (a Params and a shape: golden.custom's specs)
 * are made at run time (mma_golden_from_spec, below), or compiled in at build time (python -m
 * golden.clib --custom SPEC, make golden-c CUSTOM=SPEC) and looked up as arch "custom" by their
 * canonical spec (golden.custom.spec's spelling). */
const mma_golden_instr *mma_golden_lookup(const char *arch, const char *name);
/* An instruction of your own made at run time, without a rebuild: spec in golden.custom's grammar,
 * "k=16,a=e4m3,c=f32,base=FDA,F=25,e_zero=-133" (k, a, c and base required; b defaults to a, d to c,
 * m and n to 1; scale=FMT,block=N for block scales; then any golden.Params field as FIELD=VALUE), the
 * same bits as golden.dot_add / golden.mma on golden.lookup("custom", spec).  NULL when the spec is not
 * valid or no C kernel models the design: mma_golden_last_error() says why.  Its arch is "custom", its
 * name the spec as given.  Release it with mma_golden_free. */
const mma_golden_instr *mma_golden_from_spec(const char *spec);
void mma_golden_free(const mma_golden_instr *);     /* a run-time instruction (catalog ones: no effect) */
/* the same instruction at another of its shapes (M, N) for mma; NULL (and the valid shapes) otherwise */
const mma_golden_instr *mma_golden_with_shape(const mma_golden_instr *, int m, int n);
const char *mma_golden_last_error(void);            /* the calling thread's last error ("" if none) */

size_t mma_golden_count(void);                      /* catalog entries in this build (default shapes) */
const mma_golden_instr *mma_golden_entry(size_t i); /* entry i (0 .. count-1) at its default shape */

const char *mma_golden_arch(const mma_golden_instr *);
const char *mma_golden_name(const mma_golden_instr *);
const char *mma_golden_algorithm(const mma_golden_instr *);  /* FDA, CoFDA, GDFS, FDRDA, GFDRDA, GPS, SFMA ... */
int mma_golden_m(const mma_golden_instr *);
int mma_golden_n(const mma_golden_instr *);
int mma_golden_k(const mma_golden_instr *);
int mma_golden_block(const mma_golden_instr *);     /* products per block scale; 0 when unscaled */
/* operand format names (golden.formats): which 0 a, 1 b, 2 c, 3 d, 4 the block scales (NULL: unscaled) */
const char *mma_golden_format(const mma_golden_instr *, int which);
int mma_golden_d_bytes(const mma_golden_instr *);   /* bytes of d's word (golden's Format.dtype) */

/* d[i] = c[i] + sum_j a[i][j] * b[i][j] for i < count, as golden.dot_add computes it:
 * a, b [count][k]; c, d [count]; scale_a, scale_b [count][k / block], or NULL when unscaled. */
int mma_golden_dot_add(const mma_golden_instr *, size_t count, const uint64_t *a, const uint64_t *b,
                       const uint64_t *c, const uint64_t *scale_a, const uint64_t *scale_b, uint64_t *d);

/* D = C + A B for one instruction at its shape, as golden.mma: A [m][k], B [k][n], C and D [m][n],
 * row-major; scale_A [m][k / block], scale_B [k / block][n], or NULL when unscaled. */
int mma_golden_mma(const mma_golden_instr *, const uint64_t *A, const uint64_t *B, const uint64_t *C,
                   const uint64_t *scale_A, const uint64_t *scale_B, uint64_t *D);

/* Test access: the value (float) and exponent (int16) tables of the instruction's design, as
 * golden.kernels.spec.build lays them out (built at the first call); their length in *n. */
int mma_golden_tables(const mma_golden_instr *, const float **vtab, const int16_t **etab, size_t *n);

#ifdef __cplusplus
}
#endif

#endif
