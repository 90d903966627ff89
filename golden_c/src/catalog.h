/* The C golden library's internal types, shared by api.c (the catalog compiled in) and runtime.c (designs
 * of your own made at run time): a design (its kernel, format rows, parameter vector), a catalog entry,
 * an instruction handle, the value/exponent tables of a design's tabled formats. */
#ifndef MMA_GOLDEN_CATALOG_H
#define MMA_GOLDEN_CATALOG_H

#include <stdint.h>
#include "golden_spec.h"
#include "mma_golden.h"

typedef struct { int64_t off, len; int row, low; } gc_segment;           /* a table at off, of format row */
typedef struct { int first, count; int64_t size; } gc_layout;             /* segments first .. +count */
typedef struct {
    int code, k, layout, order;                  /* layout -1: the instruction's own tables; order -1: 0 .. k-1 */
    int64_t fmts[GS_SLOTS * GS_FORMAT_COLUMNS];
    int64_t prm[GS_C_NPARAMS];                   /* golden.c_library.build_design */
} gc_design;
typedef struct {
    const char *arch, *name, *names, *algorithm;                          /* names: ptx|alias|... */
    int k, block, design, d_bytes;
    const char *formats[5];
    int bits[5];                                                          /* their storage bits */
    int first, count, dflt;                                               /* GC_INSTR records */
} gc_entry;
typedef struct { float *v; int16_t *e; size_t n; } gc_tables;
/* one table to fill: len patterns at off, decoded by format row `row` (and converted exactly to `low`) */
typedef struct { int64_t off, len; const int64_t *row, *low; } gc_fill;

struct gc_own;

/* an instruction: a catalog entry at a shape, or a design of your own (`own`: made by runtime.c, which
 * holds the entry, design, tables and product order the handle owns) */
struct mma_golden_instr {
    const gc_entry *e;
    const gc_design *d;
    int m, n;
    const struct gc_own *own;
};
struct gc_own {
    gc_entry entry;
    gc_design design;
    gc_tables *tables;
    int64_t *order;                              /* [k] */
    char text[1];                                /* the spec, then the algorithm name (allocated longer) */
};

int gc_fail(const char *fmt, ...);                                 /* the thread's error message; -1 */
void gc_clear_error(void);
gc_tables *gc_fill_tables(const gc_fill *fills, int count, int64_t size);
void gc_free_tables(gc_tables *t);

#endif
