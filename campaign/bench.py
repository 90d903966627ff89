"""Campaign throughput against the number of workers, beside the golden model's own rates, in one run.

``python -m campaign bench`` (``make campaign-bench``) runs the same campaign (default: golden against
golden with the catalog's parameters, so the figure is the checker's own ceiling; ``--device rtl`` for the
Verilator units) on an embedded cluster of 1, 2 and every-core workers, each into a fresh database, and
prints dot-adds per second of wall time with the speed-up over one worker.  The golden rows time one
``golden.dot_add`` call and one block's vector generation on this process, for scale: a worker does both,
twice the golden work for a golden device.  One block is then timed step by step as a worker runs it
(regenerating its vectors, the device, golden on one core, measuring its coverage), which names what
bounds a worker.
"""

from __future__ import annotations

import io
import os
import tempfile
import time

import numpy as np

import golden
from golden.bench import measure

from .blocks import device, device_operands, operands
from .coverage import block_coverage
from .engine import default_workers, run
from .spec import Campaign


def _counts(text: str | None) -> list[int]:
    if not text:
        return sorted({1, 2, default_workers()})
    try:
        counts = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise ValueError(f"--workers takes a comma list of whole numbers, got {text!r}") from None
    if not counts or counts[0] < 1:
        raise ValueError(f"--workers: every count must be at least 1, got {text!r}")
    return counts


def main(args) -> int:
    arch, _, name = args.instr.partition(":")
    ins = golden.lookup(arch, name)
    counts = _counts(args.workers)
    print(f"machine: {os.cpu_count()} logical CPUs ({_cpu_model()}); instruction {ins.arch} {ins.name} "
          f"({ins.algorithm}); device {args.device}")
    c = Campaign(((ins.arch, ins.name),), device=args.device, target=args.blocks * 65536, seed=7)
    gen = _generation_rate(c, ins)
    normal, bits = measure(ins, 200_000, "normal", 3), measure(ins, 200_000, "bits", 3)
    print(f"golden.dot_add on this process, calls of 200,000, median wall (CPU time) rate: "
          f"{normal.median:,.0f} ({normal.cpu:,.0f}) dot-adds/s on normal values, {bits.median:,.0f} "
          f"({bits.cpu:,.0f}) on uniform bits; vector generation ({c.vectors}, CPU time): {gen:,.0f} vectors/s")
    print(_block_steps(c, ins))
    print(f"{'workers':>7s} {'blocks':>6s} {'dot-adds':>12s} {'wall s':>7s} {'dot-adds/s':>12s} {'speed-up':>8s}")
    base = None
    for n in counts:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            run(c, os.path.join(tmp, "bench.sqlite"), workers=n, progress_s=0, out=io.StringIO())
            wall = time.perf_counter() - t0
        vectors = c.blocks * c.block
        rate = vectors / wall
        base = base or rate
        print(f"{n:7d} {c.blocks:6d} {vectors:12,d} {wall:7.1f} {rate:12,.0f} {rate / base:7.2f}x", flush=True)
    print("wall time includes starting the cluster's worker processes (a second or two each run)")
    return 0


def _generation_rate(c: Campaign, ins) -> float:
    """Vectors a second generating blocks 1 and 2 (CPU time), after block 0 (compiles on a first run)."""
    operands(c, ins, 0, narrow=True)
    t0 = time.process_time()
    n = sum(len(operands(c, ins, j, narrow=True)[2]) for j in range(1, 3))
    return n / (time.process_time() - t0)


def _block_steps(c: Campaign, ins, repeat: int = 3) -> str:
    """One block as a worker runs it, step by step (the fastest of ``repeat``, CPU time of this process,
    after a warm-up): which of generating, the device and golden bounds a worker."""
    steps = {"generating the vectors": lambda: operands(c, ins, 1, narrow=True),
             f"the device ({c.device})": lambda: device(c)(ins, *device_operands(device(c), ops)),
             "golden, one core": lambda: golden.dot_add(ins, *ops, threads=1),
             f"coverage ({c.cover_rows:,} dot-adds)": lambda: block_coverage(c, ins, 0, ops)}
    ops = operands(c, ins, 0, narrow=True)                # as run_block: golden's in their own width
    took = {}
    for name, fn in steps.items():
        fn()
        times = []
        for _ in range(repeat):
            t0 = time.process_time()
            fn()
            times.append(time.process_time() - t0)
        took[name] = min(times)
    bound = max(took, key=took.get)
    parts = ", ".join(f"{name} {s * 1e3:,.1f} ms" for name, s in took.items())
    share = took[bound] / sum(took.values())
    return (f"one block of {c.block:,} vectors on this process: {parts}; a worker is bound by {bound} "
            f"({share:.0%} of the block; {len(ops[2]) / np.float64(sum(took.values())):,.0f} vectors/s a worker)")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"

