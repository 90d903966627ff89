"""The C golden library's speed beside golden's compiled (numba) kernels: one core, the same vectors.

``python -m golden.clib_bench [--n N] [--repeat R]`` draws ``N`` mixed vectors per instruction (one per
algorithm family), checks that both give the same bits, then times ``golden.clib.dot_add`` and
``golden.dot_add(backend="numba", threads=1)`` alternately, ``R`` calls each, and prints the median
rate of each and their ratio (numba / C).  Ratios measured side by side in one run are what the
docs quote; absolute rates depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from . import clib
from .api import dot_add
from .catalog import lookup
from .vectors import random_operands

# one instruction per kernel family (and both AMD variants)
UNITS = (("hopper", "HGMMA.64xNx16.F32"), ("blackwell", "UTCOMMA.MXF4.E8"), ("cdna3", "v_mfma_f32_32x32x8_bf16"),
         ("cdna3", "v_mfma_f32_32x32x16_bf8_bf8"), ("cdna2", "v_mfma_f32_16x16x2bf16"), ("hopper", "DMMA.16x8x16"))


def _rate(fn, n: int) -> float:
    t0 = time.perf_counter()
    fn()
    return n / (time.perf_counter() - t0)


def _one(ins, ops, n: int, repeat: int) -> tuple[float, float]:
    """Median dot-adds/s of C and of numba on the operands ``ops``, ``repeat`` alternated calls each."""
    def run_c():
        return clib.dot_add(ins, *ops, threads=1)

    def run_numba():
        return dot_add(ins, *ops, backend="numba", threads=1)

    if not np.array_equal(run_c(), run_numba()):              # warm both, and the same bits or no figures
        raise AssertionError(f"{ins.arch} {ins.name}: C and numba differ")
    c_rates, nb_rates = [], []
    for _ in range(repeat):                                   # alternated: a load change hits both alike
        c_rates.append(_rate(run_c, n))
        nb_rates.append(_rate(run_numba, n))
    return statistics.median(c_rates), statistics.median(nb_rates)


def bench(n: int = 200_000, repeat: int = 5, units=UNITS, seed: int = 1) -> list[dict]:
    """For each unit: ``{"instruction", "algorithm", "c", "numba", "ratio"}`` (median dot-adds/s)."""
    rows = []
    for arch, name in units:
        ins = lookup(arch, name)
        ops = random_operands(ins, n, np.random.default_rng(seed), "mixed")
        cm, nm = _one(ins, ops, n, repeat)
        rows.append({"instruction": f"{arch} {name}", "algorithm": ins.algorithm, "c": cm, "numba": nm,
                     "ratio": nm / cm})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m golden.clib_bench", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000, help="vectors per instruction (default 200000)")
    ap.add_argument("--repeat", type=int, default=5, help="timed calls of each, alternated (default 5)")
    args = ap.parse_args(argv)
    if args.n < 1 or args.repeat < 1:
        ap.error("--n and --repeat must be at least 1")
    print(f"{args.n:,} mixed vectors per instruction, one core, median of {args.repeat} alternated calls")
    print(f"{'instruction':44s} {'algorithm':9s} {'C dot-adds/s':>13s} {'numba dot-adds/s':>17s} {'numba/C':>8s}")
    for r in bench(args.n, args.repeat):
        print(f"{r['instruction']:44s} {r['algorithm']:9s} {r['c']:13,.0f} {r['numba']:17,.0f} {r['ratio']:8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
