"""golden.gemm throughput: ``python -m golden gemm-bench`` (``make gemm-bench``).

For each representative instruction one GEMM of ``--shape`` runs under the plain K loop; the
row gives emulated multiply-adds per second of wall time and per second of process CPU time
(numpy computes on one thread, so with ``--workers 1`` the CPU rate is the rate of one core),
and beside it ``golden.dot_add`` alone on the same number of dot-adds, in the same run, so
what the GEMM adds around the dot-adds shows as a ratio.  Then one 1024 x 1024 x 1024 GEMM is
timed (``--big 0`` leaves it out).
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np

from .api import dot_add
from .catalog import lookup
from .gemm import PRESETS, gemm
from .gemm_error import random_problem
from .options import check_whole

BENCH = [("hopper", "HGMMA.64xNx16.F32"), ("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3"),
         ("ampere", "HMMA.16816.F32.BF16"), ("cdna3", "v_mfma_f32_32x32x8_f16")]
BIG = ("hopper", "HGMMA.64xNx16.F32")
BIG_MAX = 2580               # BIG_MAX**3 is about 2**34 multiply-adds, the --shape limit
MAX_WORKERS = 1024


def _timed(fn):
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


MAX_MACS = 1 << 34           # multiply-adds of one GEMM: hours of numpy beyond this


def _shape(text: str) -> tuple[int, int, int]:
    """``MxNxK`` checked for every row of the bench (before any row runs): each row also runs
    ``golden.dot_add`` on the first K products, so K covers the longest instruction K."""
    try:
        M, N, K = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--shape {text!r}: give MxNxK, e.g. 128x128x1024") from None
    k_min = max(lookup(arch, name).k for arch, name in BENCH)
    if min(M, N) < 1 or K < k_min or M * N * K > MAX_MACS:
        raise ValueError(f"--shape {text!r}: M, N >= 1, K >= {k_min} (the longest instruction K of the bench) "
                         f"and M*N*K at most 2**34")
    return M, N, K


def bench_row(ins, M: int, N: int, K: int, workers: int) -> str:
    prob = random_problem(ins, PRESETS["k-loop"], M, N, K, 1, "uniform")
    macs = M * N * K
    wall, cpu = _timed(lambda: gemm(prob.A, prob.B, instr=ins, workers=workers))
    steps = -(-K // ins.k)
    a = prob.A[:, :ins.k].repeat(N, axis=0)[: M * N]
    b = np.tile(prob.B[:ins.k].T, (M, 1))
    c = np.zeros(M * N, np.uint32)
    dwall, _ = _timed(lambda: [dot_add(ins, a, b, c) for _ in range(steps)])
    return (f"{ins.arch:8s} {ins.name:30s} {M}x{N}x{K:<6d} {wall:8.2f} {macs / wall / 1e6:10.2f} "
            f"{macs / max(cpu, 1e-9) / 1e6:10.2f} {dwall:10.2f} {wall / dwall:7.2f}")


def cpu_name() -> str:
    """The processor's model name (Linux), else what platform knows."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def cmd_gemm_bench(args) -> int:
    check_whole(args.big, "--big", 0, BIG_MAX)
    check_whole(args.workers, "--workers", 1, MAX_WORKERS)
    M, N, K = _shape(args.shape)                 # every row's shape, before the first row
    print(f"# golden.gemm bench on {platform.node()} ({cpu_name()}, {os.cpu_count()} logical CPUs), "
          f"workers={args.workers}; MAC = one multiply-add of the GEMM; MMAC/cpu-s = per core")
    print(f"{'arch':8s} {'instruction':30s} {'MxNxK':13s} {'wall s':>8s} {'MMAC/s':>10s} {'MMAC/cpu-s':>10s} "
          f"{'dot_add s':>10s} {'gemm/dot':>7s}")
    for arch, name in BENCH:
        print(bench_row(lookup(arch, name), M, N, K, args.workers), flush=True)
    if args.big:
        ins = lookup(*BIG)
        prob = random_problem(ins, PRESETS["k-loop"], args.big, args.big, args.big, 1, "uniform")
        wall, cpu = _timed(lambda: gemm(prob.A, prob.B, instr=ins, workers=args.workers))
        macs = args.big ** 3
        print(f"{ins.arch} {ins.name} {args.big}x{args.big}x{args.big}: {wall:.1f} s wall, {cpu:.1f} s CPU, "
              f"{macs / wall / 1e6:.2f} MMAC/s ({macs / max(cpu, 1e-9) / 1e6:.2f} per CPU-second)")
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("gemm-bench", help="golden.gemm throughput and the time of a 1024^3 GEMM")
    p.add_argument("--shape", default="128x128x1024", help="MxNxK of the per-instruction rows (default 128x128x1024)")
    p.add_argument("--big", type=int, default=1024, help="size of the square GEMM timed last, "
                   f"0..{BIG_MAX} (default 1024; 0: none)")
    p.add_argument("--workers", type=int, default=1, help=f"threads over output tiles, 1..{MAX_WORKERS} (default 1)")
    p.set_defaults(func=cmd_gemm_bench)
