"""Where the compiled fused kernels' time goes: the integer-lane kernel
(``golden.kernels.fused_int``) whole, against copies stopped after its operand loads and after its
products, and the float64 kernel it replaced (``golden.kernels.fused``, the fast path off), one
core, CPU time, best of five, on the same operands (docs/golden.md, "Compiled kernels").

    python tools/kernel_profile.py [--narrow] [ARCH:INSTRUCTION ...]     # default hopper:HMMA.16816.F32
    python tools/kernel_profile.py --bench [-n N] [--repeat R]  # golden.bench's table, fused family

``--bench`` runs ``golden.bench.backends_table`` (``make bench``'s code path: numpy, compiled on
one core and on every core, the generator, side by side) on :data:`FUSED`, one instruction per
fused algorithm, format family, output format and scale kind.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from numba import njit

import golden
from golden import kernels
from golden.api import Operands
from golden.kernels import fused_int as FI
from golden.kernels import spec as S
from golden.vectors import random_operands

ROWS = 100_000
BL = FI.BL
FUSED = [("hopper", "HMMA.16816.F32"), ("ampere", "HMMA.16816.F32"), ("hopper", "HMMA.16816.F16"),
         ("hopper", "HMMA.16816.F32.BF16"), ("hopper", "HMMA.1688.F32.TF32"), ("ada", "QMMA.16832.F32.E4M3.E4M3"),
         ("hopper", "QGMMA.64xNx32.F32.E4M3.E5M2"), ("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8"),
         ("blackwell", "UTCOMMA.4X"), ("hopper", "MMA.16832.F32.E4M3.E4M3")]


@njit
def stages(lo, hi, a, b, c, sa, sb, isz, K, fmts, drows, prm, order, out, products):
    """The kernel's operand loads (FDA: widen, a block's elements in one loop; GDFS: load_pass,
    a product index per row of the block) and, with ``products``, its products (FDA:
    decode_flat; GDFS: the exact group sums)."""
    L, BR = prm[S.P_L], min(BL, max(16, FI.FLAT // K))
    XA, XB = np.zeros(BL * K, np.int64), np.zeros(BL * K, np.int64)
    M, E = np.zeros(BL * K, np.int64), np.zeros(BL * K, np.int64)
    YA, YB = np.zeros((L, BL), np.int64), np.zeros((L, BL), np.int64)
    sigma, nonzero = np.zeros(BL, np.int64), np.zeros(BL, np.int64)
    wa, wb = FI._widths(a), FI._widths(b)
    s = 0
    fda = prm[S.P_FAST] == S.FAST_FDA
    step = BR if fda else BL
    for r0 in range(lo, hi, step):
        nb = min(step, hi - r0)
        if fda:
            FI.widen(wa, isz[0], r0 * K, nb * K, XA)
            FI.widen(wb, isz[1], r0 * K, nb * K, XB)
            if products:
                s += FI.decode_flat(XA, XB, nb * K, drows[S.A], drows[S.B], 0, 0, M, E)
            s += XA[0] + M[0]
            continue
        for j in range(0, K, L):
            FI.load_pass(wa, isz[0], r0, K, j, L, nb, YA)
            FI.load_pass(wb, isz[1], r0, K, j, L, nb, YB)
            for t in range(L if products else 0):
                FI.group_sum(YA, YB, t, drows[S.A], drows[S.B], sigma, nonzero)
            s += YA[0, 0] + sigma[0]
    return s


@njit
def loads_only(lo, hi, a, b, c, sa, sb, isz, K, fmts, drows, prm, order, out):
    return stages(lo, hi, a, b, c, sa, sb, isz, K, fmts, drows, prm, order, out, False)


@njit
def loads_products(lo, hi, a, b, c, sa, sb, isz, K, fmts, drows, prm, order, out):
    return stages(lo, hi, a, b, c, sa, sb, isz, K, fmts, drows, prm, order, out, True)


@njit
def whole(lo, hi, a, b, c, sa, sb, isz, K, fmts, drows, prm, order, out):
    """The integer-lane kernel (its format rows made once, outside)."""
    if prm[S.P_FAST] == S.FAST_FDA:
        FI.fda_block_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, drows, prm, order, out)
    else:
        FI.gdfs_block_rows(lo, hi, a, b, c, sa, sb, isz, K, fmts, drows, prm, order, out)
    return 0


def best(fn, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def profile(arch: str, name: str, narrow: bool = False) -> None:
    ins = golden.lookup(arch, name)
    dp = ins.datapath
    a, b, c, sa, sb = random_operands(ins, ROWS, np.random.default_rng(0), "normal", narrow=narrow)
    if narrow:
        name += " (narrow)"
    packed = [kernels._operand(x) for x in Operands(ins, a, b, c, sa, sb).views()]
    fmts, vtab, etab, prm = S.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)
    if prm[S.P_FAST] == S.FAST_NONE:
        print(f"{arch} {name}: not on the integer-lane path (golden.kernels.spec.fast_kind)")
        return
    drows = FI.decode_rows(fmts)
    ops = (*[v for v, _ in packed], np.array([s for _, s in packed], np.int64), dp.k)
    order, out = kernels._order(dp.params, dp.k), np.empty(ROWS, np.uint64)
    float_prm = prm.copy()
    float_prm[S.P_FAST] = S.FAST_NONE
    rows = kernels._families()[S.kernel_code(dp.params)]          # the float64 kernel of the same design
    runs = [("integer kernel", whole, (*ops, fmts, drows, prm, order, out)),
            ("loads only", loads_only, (*ops, fmts, drows, prm, order, out)),
            ("loads+products", loads_products, (*ops, fmts, drows, prm, order, out)),
            ("float64 kernel", rows, (*ops, fmts, vtab, etab, float_prm, order, out))]
    first = None
    for label, fn, args in runs:
        fn(0, 10, *args)                                   # compile
        t = best(lambda fn=fn, args=args: fn(0, ROWS, *args))
        first = first or t
        print(f"{arch} {name} {label:15s} {t * 1e3:7.1f} ms  {t / first:5.0%}  ({ROWS / t / 1e6:.1f} M rows/s)",
              flush=True)


def main(argv) -> int:
    p = argparse.ArgumentParser(prog="python tools/kernel_profile.py", description=__doc__.splitlines()[0])
    p.add_argument("units", nargs="*", metavar="ARCH:INSTRUCTION", default=["hopper:HMMA.16816.F32"])
    p.add_argument("--bench", action="store_true", help="golden.bench's backends table on the fused family")
    p.add_argument("--narrow", action="store_true", help="operands in their own width (random_operands narrow=True)")
    p.add_argument("-n", type=int, default=100_000, help="dot-adds per batch for --bench (default 100000)")
    p.add_argument("--repeat", type=int, default=3, help="timed calls per row for --bench (default 3)")
    args = p.parse_args(argv)
    if args.bench:
        from golden.bench import backends_table
        backends_table([golden.lookup(a, n) for a, n in FUSED], args.n, args.repeat)
        return 0
    for unit in args.units:
        if unit.count(":") != 1:
            print(f"error: {unit!r} is not ARCH:INSTRUCTION (e.g. hopper:HMMA.16816.F32)", file=sys.stderr)
            return 2
        profile(*unit.split(":"), narrow=args.narrow)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
