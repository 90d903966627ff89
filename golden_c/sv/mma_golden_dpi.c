/* mma_golden_dpi.c: the DPI-C glue between mma_golden_pkg.sv and the C golden library's public API
 * (golden_c/include/mma_golden.h).  C99, and C++ too (Verilator compiles a .c given to it with its
 * C++ compiler): every exported function has C linkage either way.
 *
 * The SV side passes operands as open arrays of longint unsigned (one bit pattern a word, element 0
 * first), which svdpi.h reads the same way under every simulator; this file copies the instruction's
 * k words out of them into the contiguous [1][k] rows mma_golden_dot_add takes (and a tile's words into
 * the row-major arrays mma_golden_mma takes, D written back element by element).  Compile it with the
 * simulator's svdpi.h on the include path and link it with the library's shared object.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svdpi.h"
#include "mma_golden.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SV_LOCAL_WORDS 256  /* operands of k up to this on the stack (the catalog's largest k is 64), else malloc */

/* the glue's own refusals (an operand array too short): one buffer, not per thread -- call the
 * imports from one thread at a time (the library's own errors are per thread) */
static char sv_error[512];

/* the glue's own refusal, else the library's last error */
const char *mma_golden_sv_last_error(void)
{
    if (sv_error[0])
        return sv_error;
    {
        const char *e = mma_golden_last_error();
        return e ? e : "";
    }
}

void *mma_golden_sv_lookup(const char *arch, const char *name)
{
    sv_error[0] = 0;
    return (void *)mma_golden_lookup(arch, name);
}

/* an instruction of your own from a spec (mma_golden_from_spec); it lives as long as the simulation */
void *mma_golden_sv_from_spec(const char *spec)
{
    sv_error[0] = 0;
    return (void *)mma_golden_from_spec(spec);
}

int mma_golden_sv_m(void *ins) { return ins ? (int)mma_golden_m((const mma_golden_instr *)ins) : -1; }
int mma_golden_sv_n(void *ins) { return ins ? (int)mma_golden_n((const mma_golden_instr *)ins) : -1; }
int mma_golden_sv_k(void *ins) { return ins ? (int)mma_golden_k((const mma_golden_instr *)ins) : -1; }
int mma_golden_sv_block(void *ins) { return ins ? (int)mma_golden_block((const mma_golden_instr *)ins) : -1; }

/* the address of words 0 .. n-1 of an open array, one at a time; 0, or -1 (the reason in sv_error) when
 * it holds fewer (or an element cannot be reached) */
static int sv_check(const svOpenArrayHandle h, int n, const char *fn, const char *what)
{
    if (n == 0)
        return 0;
    if (!h || svDimensions(h) != 1 || svSize(h, 1) < n) {
        snprintf(sv_error, sizeof sv_error, "%s: %s holds %d words, the instruction takes %d", fn, what,
                 h ? svSize(h, 1) : 0, n);
        return -1;
    }
    return 0;
}

static uint64_t *sv_word(const svOpenArrayHandle h, int i, const char *fn, const char *what)
{
    uint64_t *w = (uint64_t *)svGetArrElemPtr1(h, svLow(h, 1) + i);
    if (!w)
        snprintf(sv_error, sizeof sv_error, "%s: %s[%d] cannot be reached", fn, what, svLow(h, 1) + i);
    return w;
}

/* words 0 .. n-1 of an open array into out; 0, or -1 (the reason in sv_error) when it holds fewer */
static int sv_words_in(const svOpenArrayHandle h, int n, uint64_t *out, const char *fn, const char *what)
{
    int i;
    if (sv_check(h, n, fn, what))
        return -1;
    for (i = 0; i < n; i++) {
        const uint64_t *w = sv_word(h, i, fn, what);
        if (!w)
            return -1;
        out[i] = *w;
    }
    return 0;
}

static int sv_words(const svOpenArrayHandle h, int n, uint64_t *out, const char *what)
{
    return sv_words_in(h, n, out, "mma_golden_sv_dot_add", what);
}

/* d = c + sum_k a[k] * b[k] for one dot-add of ins (words beyond the instruction's k are not read;
 * scale_a/scale_b: k / block words when ins is block-scaled, else not read).  0, or non-zero with the
 * reason in mma_golden_sv_last_error(); *d is 0 on an error. */
int mma_golden_sv_dot_add(void *ins, const svOpenArrayHandle a, const svOpenArrayHandle b, uint64_t c,
                          const svOpenArrayHandle scale_a, const svOpenArrayHandle scale_b, uint64_t *d)
{
    uint64_t local[4 * SV_LOCAL_WORDS], *wa = local, *heap = NULL;
    const mma_golden_instr *in = (const mma_golden_instr *)ins;
    int k, block, nblk, rc;
    uint64_t cc = c, dd = 0;
    sv_error[0] = 0;
    *d = 0;
    if (!in) {
        snprintf(sv_error, sizeof sv_error, "mma_golden_sv_dot_add: no instruction (a null handle)");
        return -1;
    }
    k = mma_golden_k(in);
    block = mma_golden_block(in);
    nblk = block > 0 ? k / block : 0;
    if (k > SV_LOCAL_WORDS) {                   /* wider than the catalog's k: words on the heap */
        heap = (uint64_t *)malloc(4 * (size_t)k * sizeof *heap);
        if (!heap) {
            snprintf(sv_error, sizeof sv_error, "mma_golden_sv_dot_add: out of memory for k = %d", k);
            return -1;
        }
        wa = heap;
    }
    {
        uint64_t *wb = wa + k, *wsa = wb + k, *wsb = wsa + k;
        rc = sv_words(a, k, wa, "a") || sv_words(b, k, wb, "b") || sv_words(scale_a, nblk, wsa, "scale_a")
             || sv_words(scale_b, nblk, wsb, "scale_b") ? -1
             : mma_golden_dot_add(in, 1, wa, wb, &cc, nblk ? wsa : NULL, nblk ? wsb : NULL, &dd);
    }
    free(heap);
    if (rc == 0)
        *d = dd;
    return rc;
}

/* D = C + A B for the whole instruction ins on row-major tiles (A m*k words, B k*n, C and D m*n; scale_A
 * m*(k/block) and scale_B (k/block)*n when block-scaled, else not read).  0, or non-zero with the
 * reason in mma_golden_sv_last_error(); D is not written on an error. */
int mma_golden_sv_mma(void *ins, const svOpenArrayHandle A, const svOpenArrayHandle B, const svOpenArrayHandle C,
                      const svOpenArrayHandle scale_A, const svOpenArrayHandle scale_B, const svOpenArrayHandle D)
{
    static const char fn[] = "mma_golden_sv_mma";
    const mma_golden_instr *in = (const mma_golden_instr *)ins;
    int m, n, k, block, nblk, rc = -1, i;
    uint64_t *w, *wa, *wb, *wc, *wsa, *wsb, *wd;
    sv_error[0] = 0;
    if (!in) {
        snprintf(sv_error, sizeof sv_error, "%s: no instruction (a null handle)", fn);
        return -1;
    }
    m = mma_golden_m(in), n = mma_golden_n(in), k = mma_golden_k(in), block = mma_golden_block(in);
    nblk = block > 0 ? k / block : 0;
    w = (uint64_t *)malloc(((size_t)m * k + (size_t)k * n + 2 * (size_t)m * n + (size_t)(m + n) * nblk + 1)
                           * sizeof *w);
    if (!w) {
        snprintf(sv_error, sizeof sv_error, "%s: out of memory for a %dx%dx%d tile", fn, m, n, k);
        return -1;
    }
    wa = w, wb = wa + (size_t)m * k, wc = wb + (size_t)k * n, wd = wc + (size_t)m * n;
    wsa = wd + (size_t)m * n, wsb = wsa + (size_t)m * nblk;
    if (!sv_words_in(A, m * k, wa, fn, "A") && !sv_words_in(B, k * n, wb, fn, "B")
            && !sv_words_in(C, m * n, wc, fn, "C") && !sv_words_in(scale_A, m * nblk, wsa, fn, "scale_A")
            && !sv_words_in(scale_B, nblk * n, wsb, fn, "scale_B") && !sv_check(D, m * n, fn, "D")) {
        rc = mma_golden_mma(in, wa, wb, wc, nblk ? wsa : NULL, nblk ? wsb : NULL, wd);
        for (i = 0; rc == 0 && i < m * n; i++) {
            uint64_t *d = sv_word(D, i, fn, "D");
            if (!d)
                rc = -1;
            else
                *d = wd[i];
        }
    }
    free(w);
    return rc;
}

#ifdef __cplusplus
}
#endif
