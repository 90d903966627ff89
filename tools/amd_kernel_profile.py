"""Where the compiled FDRDA/GFDRDA kernel's time goes (``golden.kernels.amd.fdrda_rows``): the same
loop stopped after each of its steps, one core, CPU time, best of five (docs/golden.md, "Compiled
kernels"); each line's time less the line above is that step's.

    python tools/amd_kernel_profile.py [--narrow] [ARCH:INSTRUCTION ...]   # default cdna3 f16, bf16, fp8

``--narrow``: the operands in their own width (``random_operands(..., narrow=True)``), as the bench's
``nrw`` columns and a campaign's golden take them; default uint64.
"""

from __future__ import annotations

import sys
import time
import timeit

import numpy as np
from numba import njit

import golden
from golden import kernels
from golden.api import Operands
from golden.kernels import _common as C
from golden.kernels import amd as A
from golden.kernels import spec as S
from golden.vectors import random_operands

ROWS = 100_000
STEPS = ("operands decoded, products", "c decoded", "products transposed per pass",
         "pass_block (specials, maxima, sums, merge, f32)", "results out, next pass's c")


@njit
def stopped(stop, lo, hi, a, b, c, isz, K, fmts, vtab, etab, prm, order, out):
    """fdrda_rows' block path run up to step ``stop`` (STEPS) and no further."""
    L = prm[S.P_L]
    grouped = prm[S.P_BASE] == S.GFDRDA_CODE
    overflows = fmts[S.A, C.EMAX] + 1 + fmts[S.B, C.EMAX] + 1 >= 128 and prm[S.P_PROD_OVER] == 1
    BL = A.BLOCK
    Va, Xa = np.empty(BL * K), np.empty(BL * K, np.int64)
    PT, ET = np.empty((L, BL)), np.empty((L, BL), np.int64)
    Fs, Is, Bs = np.empty((4, BL)), np.empty((2, BL), np.int64), np.empty((3, BL), np.bool_)
    cv, ce, dout, ok = np.empty(BL), np.empty(BL, np.int64), np.empty(BL, np.uint64), np.empty(BL, np.bool_)
    for r0 in range(lo, hi, BL):
        nb = min(BL, hi - r0)
        A.operand_span(a, isz[0], fmts, vtab, etab, S.A, r0 * K, nb * K, Va, Xa, False)
        A.operand_span(b, isz[1], fmts, vtab, etab, S.B, r0 * K, nb * K, Va, Xa, True)
        if stop == 0:
            continue
        A.c_span(c, isz[2], fmts, vtab, etab, r0, nb, cv, ce)
        for j in range(0, K, L):
            if stop == 1:
                continue
            for t in range(L):
                col_v, col_x = Va[order[j + t]::K], Xa[order[j + t]::K]
                for i in range(nb):
                    PT[t, i] = col_v[i]
                    ET[t, i] = col_x[i]
            if stop == 2:
                continue
            A.pass_block(PT, ET, nb, L, cv, ce, fmts, prm, overflows, grouped, Fs, Is, Bs, dout, ok)
            if stop == 3:
                continue
            out[r0:r0 + nb] = dout[:nb]
            if j + L < K:
                A.chain_c(fmts, vtab, etab, dout, nb, cv, ce)


def best(fn) -> float:
    """Fewest CPU seconds of five calls after a warm-up call."""
    fn()
    return min(timeit.repeat(fn, timer=time.process_time, number=1, repeat=5))


def profile(arch: str, name: str, narrow: bool = False) -> None:
    ins = golden.lookup(arch, name)
    dp = ins.datapath
    a, b, c, sa, sb = random_operands(ins, ROWS, np.random.default_rng(0), "normal", narrow=narrow)
    packed = [kernels._operand(x) for x in Operands(ins, a, b, c, sa, sb).views()]
    fmts, vtab, etab, prm = S.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)
    isz = np.array([s for _, s in packed], np.int64)
    tail = (dp.k, fmts, vtab, etab, prm, kernels._order(dp.params, dp.k), np.empty(ROWS, np.uint64))
    whole = best(lambda: A.fdrda_rows(0, ROWS, *[v for v, _ in packed], isz, *tail))
    form = "narrow" if narrow else "uint64"
    print(f"{arch} {name} ({form} operands): fdrda_rows {whole * 1e3:6.2f} ms "
          f"({ROWS / whole / 1e6:.1f} M rows/s), K={dp.k}")
    for stop, what in enumerate(STEPS):
        t = best(lambda: stopped(stop, 0, ROWS, *[v for v, _ in packed][:3], isz, *tail))  # noqa: B023
        print(f"  up to {what:48s} {t * 1e3:6.2f} ms  {t / whole:5.0%}")


def main(argv=None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    narrow = "--narrow" in args
    units = [a for a in args if a != "--narrow"] or [
        "cdna3:v_mfma_f32_32x32x8_f16", "cdna3:v_mfma_f32_16x16x16_bf16", "cdna3:v_mfma_f32_32x32x16_fp8_bf8"]
    for unit in units:
        profile(*unit.split(":"), narrow=narrow)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
