"""Golden-model throughput: dot-adds per second per algorithm, on one core.

Run ``python -m golden.bench`` (or ``make bench``).  Each row times
``golden.dot_add`` on a batch of random operands (``normal``: finite values
with nearby exponents, the common case; ``bits``: uniform random bit patterns,
a third or more of them NaN/inf, which take the special-value path), best of
``--repeat`` runs.  numpy runs these kernels on one thread, so the figures are
one-core figures; ``--all`` times every catalog instruction.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from .api import dot_add
from .catalog import CATALOG, lookup
from .vectors import random_operands

# (arch, instruction, target dot-adds/s from the issue, or None)
REPRESENTATIVES = [
    ("hopper", "HMMA.16816.F32", 5_000_000),
    ("ampere", "HMMA.16816.F32", None),
    ("ada", "QMMA.16832.F32.E4M3.E4M3", 3_000_000),
    ("hopper", "QGMMA.64xNx32.F32.E4M3.E5M2", None),
    ("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8", None),
    ("blackwell", "UTCOMMA.4X", None),
    ("cdna3", "v_mfma_f32_32x32x8_f16", None),
    ("cdna3", "v_mfma_f32_16x16x16_bf16", None),
    ("cdna3", "v_mfma_f32_32x32x16_fp8_bf8", None),
    ("cdna3", "v_mfma_f32_16x16x32_fp8_fp8", None),
    ("cdna2", "v_mfma_f32_32x32x8_f16", 10_000_000),
    ("cdna2", "v_mfma_f32_32x32x4bf16", None),
    ("hopper", "DMMA.8x8x4", 1_000_000),
    ("cdna3", "v_mfma_f32_16x16x4_f32", None),
]
FLOOR = 1_000_000


def measure(ins, n: int, kind: str, repeat: int, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    a, b, c, sa, sb = random_operands(ins, n, rng, kind)
    dot_add(ins, a[:64], b[:64], c[:64], None if sa is None else sa[:64], None if sb is None else sb[:64])
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        dot_add(ins, a, b, c, sa, sb)
        best = min(best, time.perf_counter() - t0)
    return n / best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m golden.bench", description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=200_000, help="dot-adds per batch (default 200000)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--all", action="store_true", help="every catalog instruction, not one per algorithm")
    args = p.parse_args(argv)
    rows = [(i, None) for i in CATALOG] if args.all else [(lookup(a, n), t) for a, n, t in REPRESENTATIVES]
    print(f"{'arch':13s} {'instruction':36s} {'algorithm':9s} {'K':>3s} {'normal/s':>11s} {'bits/s':>11s}  target")
    short = 0
    for ins, target in rows:
        normal = measure(ins, args.n, "normal", args.repeat)
        bits = measure(ins, args.n, "bits", args.repeat)
        goal = max(target or 0, FLOOR)
        ok = min(normal, bits) >= goal
        short += not ok
        print(f"{ins.arch:13s} {ins.name:36s} {ins.algorithm:9s} {ins.k:3d} {normal:11,.0f} {bits:11,.0f}  "
              f"{goal:,} {'ok' if ok else 'BELOW'}", flush=True)
    print(f"{short} below target" if short else "all at or above target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
