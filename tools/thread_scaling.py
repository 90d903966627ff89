"""Thread scaling of the compiled kernels measured on a shared machine: per-thread CPU time.

``golden.dot_add(..., threads=N)`` splits the rows across N threads.  On a machine other jobs
share, wall clock says little (a thread waits for a core), so this reads each thread's own CPU time
(``/proc/self/task/*/stat``, Linux) over the same calls with 1 and with N threads: the total CPU
(work added by threading) and the busiest thread's CPU (the wall time the call would take with N
free cores).  ``one-thread CPU / busiest thread`` is the scaling N free cores give.

    python tools/thread_scaling.py [ARCH:INSTRUCTION ...] [--rows R] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import golden
from golden.vectors import random_operands

TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu() -> dict:
    """CPU seconds (user + system) of each thread of this process."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:                                 # the thread ended meanwhile
            continue
        out[tid] = (int(fields[11]) + int(fields[12])) / TICK
    return out


def measure(ins, ops, threads: int, calls: int) -> tuple[float, float, float]:
    """(wall, total CPU, busiest thread's CPU) seconds per call."""
    golden.dot_add(ins, *ops, backend="numba", threads=threads)            # compile, start the workers
    before, t0 = thread_cpu(), time.perf_counter()
    for _ in range(calls):
        golden.dot_add(ins, *ops, backend="numba", threads=threads)
    wall, after = time.perf_counter() - t0, thread_cpu()
    used = [after[t] - before.get(t, 0.0) for t in after]
    return wall / calls, sum(used) / calls, max(used) / calls


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("units", nargs="*", default=["hopper:DMMA.8x8x4", "cdna2:v_mfma_f32_32x32x8_f16",
                                                 "cdna3:v_mfma_f32_32x32x8_f16"])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--calls", type=int, default=40)
    p.add_argument("--narrow", action="store_true", help="operands in their formats' own dtypes (uint16 for "
                   "f16), not the generators' uint64: dot_add's check then scans nothing")
    args = p.parse_args(argv)
    print(f"per call, {args.rows:,} rows, {args.calls} calls, operands {'narrow' if args.narrow else 'uint64'}; "
          f"load average {os.getloadavg()[0]:.1f}")
    for unit in args.units:
        ins = golden.lookup(*unit.split(":"))
        ops = random_operands(ins, args.rows, np.random.default_rng(0), "normal")
        if args.narrow:
            ops = tuple(None if x is None else x.astype(f.dtype) for x, f in zip(ops, ins.formats))
        w1, c1, _ = measure(ins, ops, 1, args.calls)
        wn, cn, busiest = measure(ins, ops, args.threads, args.calls)
        print(f"{unit:36s} 1 thread: wall {w1 * 1e3:7.1f} ms, CPU {c1 * 1e3:7.1f} ms | {args.threads} threads: wall "
              f"{wn * 1e3:7.1f} ms, CPU {cn * 1e3:7.1f} ms, busiest thread {busiest * 1e3:7.1f} ms | "
              f"CPU added {cn / c1:4.2f}x, scaling on free cores {c1 / busiest:4.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
