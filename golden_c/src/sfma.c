/* SFMA: sequential IEEE fused multiply-adds, binary64 or binary32 (d's format), one rounding each
 * (C99 fma / fmaf: correctly rounded, RNE, subnormals kept), a row's products in order from c.
 * A port of golden/kernels/sfma.py (sfma_rows, row64, row32): NaN results are the canonical quiet
 * NaN (golden.fma's), and prm[P_FAULT] flips the result's last bit (the planted test fault). */
#include <math.h>
#include "common.h"
#include "rows.h"

#define NAN64 UINT64_C(0x7FF8000000000000)
#define NAN32 UINT64_C(0x7FC00000)

void golden_sfma_rows(GOLDEN_ROWS_ARGS)
{
    const int wide = FMT(fmts, GS_D, GS_EXP_BITS) == 11;
    const int fault = prm[GS_P_FAULT] == 1;
    const uint64_t nan = wide ? NAN64 : NAN32;
    (void)sa; (void)sb; (void)vtab; (void)etab; (void)order;
    for (int64_t r = lo; r < hi; r++) {
        uint64_t bits;
        if (wide) {
            double d = f64_from_bits(load(c, isz[2], r));
            for (int64_t k = 0; k < K; k++)
                d = fma64(f64_from_bits(load(a, isz[0], r * K + k)), f64_from_bits(load(b, isz[1], r * K + k)), d);
            bits = isnan(d) ? NAN64 : bits_from_f64(d);
        } else {
            float d = f32_from_bits(load(c, isz[2], r) & 0xFFFFFFFFu);
            for (int64_t k = 0; k < K; k++)
                d = fma32(f32_from_bits(load(a, isz[0], r * K + k) & 0xFFFFFFFFu),
                          f32_from_bits(load(b, isz[1], r * K + k) & 0xFFFFFFFFu), d);
            bits = isnan(d) ? NAN32 : bits_from_f32(d);
        }
        if (fault && bits != nan)
            bits ^= 1u;                       /* the planted fault: the last rounding off by one ulp */
        out[r] = bits;
    }
}
