"""Where the compiled FDA kernel's time goes: the whole kernel (``golden.kernels.fused.fda_rows``)
against copies stopped after its product stage and after its final rounding alone, one core, CPU
time, best of five (docs/golden.md, "Compiled kernels").

    python tools/kernel_profile.py [ARCH:INSTRUCTION ...]     # default hopper:HMMA.16816.F32
"""

from __future__ import annotations

import sys
import time

import numpy as np
from numba import njit

import golden
from golden import kernels
from golden.api import Operands
from golden.kernels import _common as C
from golden.kernels import fused as F
from golden.kernels import spec as S
from golden.vectors import random_operands

ROWS = 100_000


@njit
def products_only(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """fda_rows' product stage alone (fill_block over every block and pass)."""
    L, BL = prm[S.P_L], F.BLOCK_ROWS
    Pm, Em = np.empty((L, BL)), np.empty((L, BL), np.int64)
    IA, IB = np.empty(max(L, BL), np.int64), np.empty(max(L, BL), np.int64)
    wa, wb = F.widths(a), F.widths(b)
    s = 0.0
    for r0 in range(lo, hi, BL):
        for j in range(0, K, L):
            F.fill_block(a, b, wa, wb, isz, fmts, vtab, etab, r0, min(BL, hi - r0), K, order, j, L, Pm, Em, IA, IB)
            s += Pm[0, 0]
    return s


@njit
def rounding_only(lo, hi, a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
    """fda_rows' per-row tail alone: the final rounding and the next pass's c, once per pass."""
    s = np.uint64(0)
    for r in range(lo, hi):
        for j in range(0, K, prm[S.P_L]):
            d = C.finish(fmts, S.D, float(r * 977 + j), 0.0, -20, prm[S.P_MODE], prm[S.P_FRAC],
                         prm[S.P_OVERFLOW], True, False)
            s += d + np.uint64(F.c_value(fmts, vtab, etab, S.D, d)[1] & 1)
    return s


def best(fn, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def profile(arch: str, name: str) -> None:
    ins = golden.lookup(arch, name)
    dp = ins.datapath
    a, b, c, sa, sb = random_operands(ins, ROWS, np.random.default_rng(0), "normal")
    views = Operands(ins, a, b, c, sa, sb).views()
    packed = [kernels._operand(x) for x in views]
    fmts, vtab, etab, prm = S.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)
    args = (*[v for v, _ in packed], np.array([s for _, s in packed], np.int64), dp.k, fmts, vtab, etab, prm,
            kernels._order(dp.params, dp.k), np.empty(ROWS, np.uint64))
    whole = None
    for fn in (F.fda_rows, products_only, rounding_only):
        fn(0, 10, *args)                                   # compile
        t = best(lambda: fn(0, ROWS, *args))
        whole = whole or t
        print(f"{arch} {name} {fn.py_func.__name__:14s} {t * 1e3:7.1f} ms  {t / whole:5.0%}  "
              f"({ROWS / t / 1e6:.1f} M rows/s)")


if __name__ == "__main__":
    for spec_ in sys.argv[1:] or ["hopper:HMMA.16816.F32"]:
        profile(*spec_.split(":"))
