/* The public API of the C golden library (mma_golden.h): the catalog, generated at build time from
 * golden.CATALOG by golden.c_library (golden_catalog.inc, included below: every entry the compiled
 * kernels model, with spec.build's format rows and parameter vector), lookups by architecture and name
 * as golden.lookup makes them, and dot-adds / whole instructions through the row kernels.
 *
 * Value/exponent tables are not in the generated source: each table layout (which formats are tabled
 * at which offsets, spec.build's) is built at its first use from the format rows (fields_value_exp;
 * operand_format's lowered exponents through the exact conversion round_f64), then published with an
 * atomic compare-and-swap: lookups read constant data only, and concurrent first calls are safe. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "common.h"
#include "mma_golden.h"
#include "rows.h"

#include "golden_catalog.inc"

#if defined(__GNUC__) || defined(__clang__)
#define GC_TLS __thread
#define GC_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define GC_CAS(p, expected, desired) \
    __atomic_compare_exchange_n((p), (expected), (desired), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
#else   /* no atomics known: correct single-threaded (build every table before sharing the library) */
#define GC_TLS
#define GC_LOAD(p) (*(p))
static int gc_cas(void **p, void **expected, void *desired)
{
    if (*p != *expected) { *expected = *p; return 0; }
    *p = desired;
    return 1;
}
#define GC_CAS(p, expected, desired) gc_cas((void **)(p), (void **)(expected), (desired))
#endif

/* --------------------------------------------------------------------------- errors */

static GC_TLS char gc_error[16384];

static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(gc_error, sizeof gc_error, fmt, ap);
    va_end(ap);
    return -1;
}

static void append(const char *fmt, ...)
{
    size_t n = strlen(gc_error);
    va_list ap;
    if (n + 1 >= sizeof gc_error)
        return;
    va_start(ap, fmt);
    vsnprintf(gc_error + n, sizeof gc_error - n, fmt, ap);
    va_end(ap);
}

const char *mma_golden_last_error(void) { return gc_error; }

int gc_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(gc_error, sizeof gc_error, fmt, ap);
    va_end(ap);
    return -1;
}

void gc_clear_error(void) { gc_error[0] = 0; }

/* --------------------------------------------------------------------------- tables */

static gc_tables *gc_cache[GC_NLAYOUTS];

void gc_free_tables(gc_tables *t)
{
    if (t != NULL)
        free(t->v), free(t->e), free(t);
}

gc_tables *gc_fill_tables(const gc_fill *fills, int count, int64_t size)
{
    size_t n = size > 0 ? (size_t)size : 1;
    gc_tables *t = malloc(sizeof *t);
    int s;
    if (t == NULL)
        return NULL;
    t->v = calloc(n, sizeof *t->v);
    t->e = calloc(n, sizeof *t->e);
    t->n = n;
    if (t->v == NULL || t->e == NULL) {
        gc_free_tables(t);
        return NULL;
    }
    for (s = 0; s < count; s++) {
        const gc_fill *g = &fills[s];
        int64_t j;
        for (j = 0; j < g->len; j++) {
            double v;
            int64_t e;
            fields_value_exp(g->row, 0, (uint64_t)j << g->row[GS_IGNORED_LOW], &v, &e);
            if (g->low != NULL)          /* spec._tables(fmt, lowered_to): the exact conversion's value, exponent */
                fields_value_exp(g->low, 0, round_f64(g->low, 0, v, GS_RNE), &v, &e);
            t->v[g->off + j] = (float)v;
            t->e[g->off + j] = (int16_t)e;
        }
    }
    return t;
}

static gc_tables *build_tables(int layout)
{
    const gc_layout *L = &GC_LAYOUTS[layout];
    gc_fill fills[GS_SLOTS];
    int s;
    for (s = 0; s < L->count && s < GS_SLOTS; s++) {
        const gc_segment *g = &GC_SEGMENTS[L->first + s];
        fills[s].off = g->off, fills[s].len = g->len;
        fills[s].row = GC_ROWS[g->row], fills[s].low = g->low >= 0 ? GC_ROWS[g->low] : NULL;
    }
    return gc_fill_tables(fills, s, L->size);
}

static const gc_tables *tables(int layout)
{
    gc_tables *t = GC_LOAD(&gc_cache[layout]), *expected = NULL;
    if (t != NULL)
        return t;
    t = build_tables(layout);
    if (t == NULL)
        return NULL;
    if (!GC_CAS(&gc_cache[layout], &expected, t)) {      /* another thread published first: use its */
        gc_free_tables(t);
        t = expected;
    }
    return t;
}

/* --------------------------------------------------------------------------- lookup */

static void key(const char *s, char *out, size_t size)
{
    size_t n = 0;
    while (*s && isspace((unsigned char)*s))
        s++;
    if (strncmp(s, "v_mfma_", 7) == 0 || strncmp(s, "V_MFMA_", 7) == 0)
        s += 7;
    while (*s && n + 1 < size)
        out[n++] = (char)tolower((unsigned char)*s++);
    while (n > 0 && isspace((unsigned char)out[n - 1]))
        n--;
    out[n] = 0;
}

static const char *canonical_arch(const char *arch)
{
    char k[64];
    size_t n = 0;
    int i;
    while (*arch && isspace((unsigned char)*arch))
        arch++;
    for (; *arch && n + 1 < sizeof k; arch++)
        k[n++] = *arch == ' ' ? '_' : (char)tolower((unsigned char)*arch);
    while (n > 0 && k[n - 1] == '_')
        n--;
    k[n] = 0;
    for (i = 0; i < GC_NALIASES; i++)
        if (strcmp(k, GC_ARCH_ALIASES[i][0]) == 0)
            return GC_ARCH_ALIASES[i][1];
    for (i = 0; i < GC_NARCH; i++)
        if (strcmp(k, GC_ARCHES[i]) == 0)
            return GC_ARCHES[i];
    return NULL;
}

/* whether a name of entry e (name, ptx, aliases) is q (prefix: starts with q and a separator . _ :) */
static int names_match(const gc_entry *e, const char *q, int prefix)
{
    char one[256], k[256];
    const char *p = e->names;
    int first = 1;
    for (;;) {
        size_t n;
        if (first) {
            key(e->name, k, sizeof k);
            first = 0;
        } else {
            const char *bar;
            if (p == NULL)
                return 0;
            bar = strchr(p, '|');
            n = bar ? (size_t)(bar - p) : strlen(p);
            if (n >= sizeof one)
                n = sizeof one - 1;
            memcpy(one, p, n);
            one[n] = 0;
            key(one, k, sizeof k);
            p = bar ? bar + 1 : NULL;
        }
        if (!prefix) {
            if (strcmp(k, q) == 0)
                return 1;
        } else {
            size_t m = strlen(q);
            if (strncmp(k, q, m) == 0 && k[m] != 0 && strchr("._:", k[m]) != NULL)
                return 1;
        }
    }
}

/* N of a concrete shape q against the N template of pattern p (xNx / nNk), or -1 */
static long template_n(const char *pattern, const char *q)
{
    static const char *const marks[2] = {"xnx", "nnk"};
    char p[256];
    int t;
    key(pattern, p, sizeof p);
    for (t = 0; t < 2; t++) {
        const char *at = strstr(p, marks[t]);
        size_t pre, suf, ql = strlen(q), i;
        long n = 0;
        if (at == NULL)
            continue;
        pre = (size_t)(at - p) + 1;                 /* up to and with the x / n */
        suf = strlen(at + 2);                       /* from the x / k on */
        if (ql <= pre + suf || strncmp(q, p, pre) != 0 || strcmp(q + ql - suf, at + 2) != 0)
            continue;
        for (i = pre; i < ql - suf; i++) {
            if (!isdigit((unsigned char)q[i]) || n > 1000000)
                return -1;
            n = n * 10 + (q[i] - '0');
        }
        return n;
    }
    return -1;
}

static const mma_golden_instr *shaped(int entry, long n)
{
    const gc_entry *e = &GC_ENTRIES[entry];
    int m = GC_INSTR[e->dflt].m, i;
    for (i = e->first; i < e->first + e->count; i++)
        if (GC_INSTR[i].m == m && GC_INSTR[i].n == n)
            return &GC_INSTR[i];
    return NULL;
}

static const mma_golden_instr *several(const char *name, const char *arch, const int *found, int nfound)
{
    int i;
    fail("the name %s names %d instructions on %s, not one: ", name, nfound, arch);
    for (i = 0; i < nfound && i < 12; i++)
        append("%s%s", i ? ", " : "", GC_ENTRIES[found[i]].name);
    append("%s; give one of them", nfound > 12 ? " ..." : "");
    return NULL;
}

const mma_golden_instr *mma_golden_lookup(const char *arch, const char *name)
{
    const char *a;
    char q[256];
    int i, nfound = 0, pass;
    int *hits;
    const mma_golden_instr *one = NULL;
    gc_error[0] = 0;
    if (arch == NULL || name == NULL) {
        fail("mma_golden_lookup: arch and name are required");
        return NULL;
    }
    a = canonical_arch(arch);
    if (a == NULL) {
        char k[64];
        key(arch, k, sizeof k);
        if (strcmp(k, "custom") == 0)
            fail("this build has no instructions of your own (build with golden.clib's custom= or "
                 "python -m golden.clib --custom SPEC); valid architectures: ");
        else
            fail("unknown architecture '%s'; valid: ", arch);
        for (i = 0; i < GC_NARCH; i++)
            append("%s%s", i ? ", " : "", GC_ARCHES[i]);
        return NULL;
    }
    key(name, q, sizeof q);
    hits = malloc(sizeof(int) * GC_NENTRIES);
    if (hits == NULL) {
        fail("out of memory");
        return NULL;
    }
    for (pass = 0; pass < 3 && nfound == 0; pass++) {     /* exact names, then N templates, then prefixes */
        for (i = 0; i < GC_NENTRIES; i++) {
            const gc_entry *e = &GC_ENTRIES[i];
            if (strcmp(e->arch, a) != 0)
                continue;
            if (pass == 0 && names_match(e, q, 0)) {
                hits[nfound++] = i;
            } else if (pass == 1) {
                long n = template_n(e->name, q);
                const char *bar = strchr(e->names, '|');
                const mma_golden_instr *s;
                if (n < 0) {
                    char ptx[256];
                    size_t len = bar ? (size_t)(bar - e->names) : strlen(e->names);
                    if (len >= sizeof ptx)
                        len = sizeof ptx - 1;
                    memcpy(ptx, e->names, len);
                    ptx[len] = 0;
                    n = template_n(ptx, q);
                }
                if (n >= 0 && (s = shaped(i, n)) != NULL) {
                    hits[nfound++] = i;
                    one = s;
                }
            } else if (pass == 2 && names_match(e, q, 1)) {
                hits[nfound++] = i;
            }
        }
        if (nfound == 1) {
            int e = hits[0];
            free(hits);
            return pass == 1 ? one : &GC_INSTR[GC_ENTRIES[e].dflt];
        }
    }
    if (nfound > 1) {
        several(name, a, hits, nfound);
        free(hits);
        return NULL;
    }
    free(hits);
    for (i = 0; i < GC_NMISSING; i++) {
        char k[256];
        key(GC_MISSING[i][1] ? GC_MISSING[i][1] : "", k, sizeof k);
        if (GC_MISSING[i][0] && strcmp(GC_MISSING[i][0], a) == 0 && strcmp(k, q) == 0) {
            fail("%s on %s is in golden's catalog, but no compiled kernel models it (golden.kernels.handles is "
                 "false: golden.dot_add computes it on the numpy path); the C library's instructions on %s: ",
                 GC_MISSING[i][1], a, a);
            goto list;
        }
    }
    {
        int shown = 0;
        for (i = 0; i < GC_NENTRIES; i++)
            if (strcmp(GC_ENTRIES[i].arch, a) != 0 && names_match(&GC_ENTRIES[i], q, 0)) {
                if (!shown)
                    fail("'%s' is not available on %s; it exists on: %s", name, a, GC_ENTRIES[i].arch);
                else if (strstr(gc_error, GC_ENTRIES[i].arch) == NULL)
                    append(", %s", GC_ENTRIES[i].arch);
                shown = 1;
            }
        if (shown)
            return NULL;
    }
    fail("unknown instruction '%s' on %s; valid: ", name, a);
list:
    {
        int n = 0;
        for (i = 0; i < GC_NENTRIES; i++)
            if (strcmp(GC_ENTRIES[i].arch, a) == 0)
                append("%s%s", n++ ? ", " : "", GC_ENTRIES[i].name);
    }
    return NULL;
}

const mma_golden_instr *mma_golden_with_shape(const mma_golden_instr *x, int m, int n)
{
    const gc_entry *e;
    int i;
    gc_error[0] = 0;
    if (x == NULL) {
        fail("no instruction (NULL): see mma_golden_lookup");
        return NULL;
    }
    e = x->e;
    if (x->own != NULL)
        return (const mma_golden_instr *)(gc_fail("%s: an instruction made at run time has the one shape it was "
                                                  "made with, M=%d, N=%d", e->name, x->m, x->n), NULL);
    for (i = e->first; i < e->first + e->count; i++)
        if (GC_INSTR[i].m == m && GC_INSTR[i].n == n)
            return &GC_INSTR[i];
    fail("%s on %s: shape M=%d, N=%d is not valid; valid (M, N): ", e->name, e->arch, m, n);
    for (i = e->first; i < e->first + e->count; i++)
        append("%s(%d, %d)", i > e->first ? ", " : "", GC_INSTR[i].m, GC_INSTR[i].n);
    return NULL;
}

size_t mma_golden_count(void) { return GC_NENTRIES; }

const mma_golden_instr *mma_golden_entry(size_t i)
{
    if (i >= GC_NENTRIES) {
        fail("entry %lu: the catalog has %d", (unsigned long)i, GC_NENTRIES);
        return NULL;
    }
    return &GC_INSTR[GC_ENTRIES[i].dflt];
}

#define ENTRY(x) ((x)->e)
const char *mma_golden_arch(const mma_golden_instr *x) { return x ? ENTRY(x)->arch : NULL; }
const char *mma_golden_name(const mma_golden_instr *x) { return x ? ENTRY(x)->name : NULL; }
const char *mma_golden_algorithm(const mma_golden_instr *x) { return x ? ENTRY(x)->algorithm : NULL; }
int mma_golden_m(const mma_golden_instr *x) { return x ? x->m : 0; }
int mma_golden_n(const mma_golden_instr *x) { return x ? x->n : 0; }
int mma_golden_k(const mma_golden_instr *x) { return x ? ENTRY(x)->k : 0; }
int mma_golden_block(const mma_golden_instr *x) { return x ? ENTRY(x)->block : 0; }
int mma_golden_d_bytes(const mma_golden_instr *x) { return x ? ENTRY(x)->d_bytes : 0; }

const char *mma_golden_format(const mma_golden_instr *x, int which)
{
    return x && which >= 0 && which < 5 ? ENTRY(x)->formats[which] : NULL;
}

int mma_golden_tables(const mma_golden_instr *x, const float **vtab, const int16_t **etab, size_t *n)
{
    const gc_tables *t;
    if (x == NULL)
        return fail("no instruction (NULL)");
    t = x->own != NULL ? x->own->tables : tables(x->d->layout);
    if (t == NULL)
        return fail("out of memory building the value tables");
    *vtab = t->v, *etab = t->e, *n = t->n;
    return 0;
}

/* --------------------------------------------------------------------------- computing */

static golden_rows_fn kernel_of(int code)
{
    switch (code) {
    case GS_KERNEL_FDA: return golden_fda_rows;
    case GS_KERNEL_GDFS: return golden_gdfs_rows;
    case GS_KERNEL_FDRDA: case GS_KERNEL_GFDRDA: return golden_fdrda_rows;
    case GS_KERNEL_GPS: return golden_gps_rows;
    case GS_KERNEL_SFMA: return golden_sfma_rows;
    default: return NULL;
    }
}

/* words[0 .. n) fit format `which`'s storage bits (0 a .. 4 scale), as golden's as_bits refuses wider ones */
static int check_words(const gc_entry *e, int which, const uint64_t *w, size_t n, const char *what)
{
    int bits = e->bits[which];
    size_t i;
    if (bits >= 64)
        return 0;
    for (i = 0; i < n; i++)
        if (w[i] >> bits)
            return fail("%s[%lu] = 0x%llx does not fit %s's %d bits", what, (unsigned long)i,
                        (unsigned long long)w[i], e->formats[which], bits);
    return 0;
}

typedef struct {
    const gc_entry *e;
    const gc_design *d;
    golden_rows_fn fn;
    const gc_tables *t;
    int64_t buf[GC_MAXK > 0 ? GC_MAXK : 1];
    const int64_t *order;                        /* buf, or a run-time instruction's own */
    int64_t isz[5];
} gc_call;

static int prepare(const mma_golden_instr *x, const void *sa, const void *sb, gc_call *c)
{
    int i;
    if (x == NULL)
        return fail("no instruction (NULL): see mma_golden_lookup");
    c->e = ENTRY(x);
    c->d = x->d;
    c->fn = kernel_of(c->d->code);
    if (c->fn == NULL)
        return fail("%s on %s: no C kernel for its algorithm", c->e->name, c->e->arch);
    if (c->e->block && (sa == NULL || sb == NULL))
        return fail("%s on %s is block-scaled: it needs scale_a and scale_b (%s, one per %d products)",
                    c->e->name, c->e->arch, c->e->formats[4], c->e->block);
    if (!c->e->block && (sa != NULL || sb != NULL))
        return fail("%s on %s takes no block scales (pass NULL)", c->e->name, c->e->arch);
    c->t = x->own != NULL ? x->own->tables : tables(c->d->layout);
    if (c->t == NULL)
        return fail("out of memory building the value tables");
    if (x->own != NULL) {
        c->order = x->own->order;
    } else {
        for (i = 0; i < c->d->k; i++)
            c->buf[i] = c->d->order >= 0 ? GC_ORDERS[c->d->order][i] : i;
        c->order = c->buf;
    }
    for (i = 0; i < 5; i++)
        c->isz[i] = 8;
    return 0;
}

#define RUN(c, lo, hi, a, b, cc, sa, sb, out) \
    (c).fn((lo), (hi), (const uint8_t *)(a), (const uint8_t *)(b), (const uint8_t *)(cc), (const uint8_t *)(sa), \
           (const uint8_t *)(sb), (c).isz, (c).d->k, (c).d->fmts, (c).t->v, (c).t->e, (c).d->prm, (c).order, (out))

int mma_golden_dot_add(const mma_golden_instr *x, size_t count, const uint64_t *a, const uint64_t *b,
                       const uint64_t *c, const uint64_t *scale_a, const uint64_t *scale_b, uint64_t *d)
{
    gc_call call;
    size_t k, nblk;
    gc_error[0] = 0;
    if (prepare(x, scale_a, scale_b, &call))
        return -1;
    if (count == 0)
        return 0;
    if (a == NULL || b == NULL || c == NULL || d == NULL)
        return fail("mma_golden_dot_add: a, b, c and d are required");
    k = (size_t)call.d->k;
    nblk = call.e->block ? k / (size_t)call.e->block : 0;
    if (check_words(call.e, 0, a, count * k, "a") || check_words(call.e, 1, b, count * k, "b")
            || check_words(call.e, 2, c, count, "c")
            || (nblk && (check_words(call.e, 4, scale_a, count * nblk, "scale_a")
                         || check_words(call.e, 4, scale_b, count * nblk, "scale_b"))))
        return -1;
    RUN(call, 0, (int64_t)count, a, b, c, scale_a, scale_b, d);
    return 0;
}

int mma_golden_mma(const mma_golden_instr *x, const uint64_t *A, const uint64_t *B, const uint64_t *C,
                   const uint64_t *scale_A, const uint64_t *scale_B, uint64_t *D)
{
    gc_call call;
    size_t m, n, k, nblk, i, j, t;
    uint64_t *Bt, *sBt = NULL;
    gc_error[0] = 0;
    if (prepare(x, scale_A, scale_B, &call))
        return -1;
    if (A == NULL || B == NULL || C == NULL || D == NULL)
        return fail("mma_golden_mma: A, B, C and D are required");
    m = (size_t)x->m, n = (size_t)x->n, k = (size_t)call.d->k;
    nblk = call.e->block ? k / (size_t)call.e->block : 0;
    if (check_words(call.e, 0, A, m * k, "A") || check_words(call.e, 1, B, k * n, "B")
            || check_words(call.e, 2, C, m * n, "C")
            || (nblk && (check_words(call.e, 4, scale_A, m * nblk, "scale_A")
                         || check_words(call.e, 4, scale_B, nblk * n, "scale_B"))))
        return -1;
    Bt = malloc((n * k + n * nblk + 1) * sizeof *Bt);       /* B's columns (and scale_B's) as rows */
    if (Bt == NULL)
        return fail("out of memory");
    for (j = 0; j < n; j++)
        for (t = 0; t < k; t++)
            Bt[j * k + t] = B[t * n + j];
    if (nblk) {
        sBt = Bt + n * k;
        for (j = 0; j < n; j++)
            for (t = 0; t < nblk; t++)
                sBt[j * nblk + t] = scale_B[t * n + j];
    }
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++)
            RUN(call, 0, 1, A + i * k, Bt + j * k, C + i * n + j, nblk ? scale_A + i * nblk : NULL,
                nblk ? sBt + j * nblk : NULL, D + i * n + j);
    free(Bt);
    return 0;
}
