"""golden.gemm throughput: ``python -m golden gemm-bench`` (``make gemm-bench``).

Each row is one GEMM of ``--shape`` of a representative instruction under a kernel, computed by both
routes of :func:`golden.gemm.gemm` side by side in the same run: the GEMM-level compiled kernels
(``route="tiles"``, :mod:`golden.gemm_kernels`) and one ``golden.dot_add`` per k-step over tiles of
outputs (``route="rows"``), alternately ``--repeat`` times, the best of each kept.  Every route runs
once on a small problem first (numba's cache load or compile, numpy's first calls), outside the timed
part.  The rates are emulated multiply-adds per second of process CPU time (``MMAC/cpu-s``: with
``--threads 1`` the rate of one core) and of wall time; both routes' bits are compared and must be
equal.  ``--pin`` pins the process to one CPU first.  Then numpy's float32 matmul on the same shape
(the yardstick: no emulation) and one ``--big`` cube GEMM (``--big 0`` leaves both out).
``--markdown FILE`` also writes the output, with the command, between the markers
``<!-- gemm-bench: begin -->`` and ``<!-- gemm-bench: end -->`` of FILE.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time

import numpy as np

from .catalog import lookup
from .gemm import PRESETS, gemm
from .gemm_error import random_problem
from .options import check_whole

BENCH = [("hopper", "HGMMA.64xNx16.F32", "k-loop"), ("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3", "fp8-no-promotion"),
         ("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3", "fp8-promote-4"), ("ampere", "HMMA.16816.F32.BF16", "k-loop")]
BIG = ("hopper", "HGMMA.64xNx16.F32")
BIG_MAX = 2580               # BIG_MAX**3 is about 2**34 multiply-adds, the --shape limit
MAX_WORKERS = 1024
MAX_REPEAT = 100
MAX_MACS = 1 << 34           # multiply-adds of one GEMM: hours of the rows route beyond this
BEGIN, END = "<!-- gemm-bench: begin -->", "<!-- gemm-bench: end -->"


def _timed(fn):
    """``(result, wall s, CPU s)`` of one call."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def _shape(text: str) -> tuple[int, int, int]:
    """``MxNxK`` checked for every row of the bench (before any row runs): K covers the longest
    instruction K of the bench."""
    try:
        M, N, K = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--shape {text!r}: give MxNxK, e.g. 128x128x1024") from None
    k_min = max(lookup(arch, name).k for arch, name, _ in BENCH)
    if min(M, N) < 1 or K < k_min or M * N * K > MAX_MACS:
        raise ValueError(f"--shape {text!r}: M, N >= 1, K >= {k_min} (the longest instruction K of the bench) "
                         f"and M*N*K at most 2**34")
    return M, N, K


def warm_up(ins, kernel: str, threads: int) -> None:
    """Both routes once on a small problem: numba's cache load (or compile) out of the timed part."""
    prob = random_problem(ins, PRESETS[kernel], 8, 8, 4 * ins.k, 0, "uniform")
    for route in ("tiles", "rows"):
        gemm(prob.A, prob.B, instr=ins, kernel=kernel, threads=threads, route=route)


def bench_row(ins, kernel: str, M: int, N: int, K: int, threads: int, workers: int, repeat: int) -> str:
    """One row: both routes alternately ``repeat`` times on the same operands, the best of each."""
    prob = random_problem(ins, PRESETS[kernel], M, N, K, 1, "uniform")
    macs = M * N * K
    best = {"tiles": (np.inf, np.inf), "rows": (np.inf, np.inf)}
    bits = {}
    for _ in range(repeat):
        for route in best:
            bits[route], wall, cpu = _timed(lambda r=route: gemm(prob.A, prob.B, instr=ins, kernel=kernel,
                                                                 threads=threads, workers=workers, route=r))
            best[route] = (min(best[route][0], wall), min(best[route][1], cpu))
    if not np.array_equal(bits["tiles"], bits["rows"]):
        raise AssertionError(f"{ins.name} {kernel}: the tiles and rows routes gave different bits")
    (tw, tc), (rw, rc) = best["tiles"], best["rows"]
    rate = lambda s: macs / max(s, 1e-9) / 1e6  # noqa: E731
    shape = f"{M}x{N}x{K}"
    return (f"{ins.arch:8s} {ins.name:28s} {kernel:16s} {shape:15s} {rate(tc):10.0f} {rate(rc):10.0f} "
            f"{rc / max(tc, 1e-9):7.1f} {rate(tw):10.0f} {rate(rw):10.0f}")


def cpu_name() -> str:
    """The processor's model name (Linux), else what platform knows."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


PINNED_ENV = "GOLDEN_GEMM_BENCH_PINNED"     # set in the pinned child: the CPU it runs on


def run_pinned(args) -> int:
    """``--pin``: the bench again in a child process started on the first CPU of this one's affinity
    (Linux), so every thread it starts -- numpy's BLAS pool, the kernels' -- sizes itself to and
    stays on that CPU; its exit status."""
    try:
        before = os.sched_getaffinity(0)
        cpu = min(before)
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError) as e:
        raise ValueError(f"--pin: cannot pin a process to one CPU here ({e})") from None
    argv = [sys.executable, "-m", "golden", "gemm-bench", "--shape", args.shape, "--big", str(args.big),
            "--threads", str(args.threads), "--workers", str(args.workers), "--repeat", str(args.repeat)]
    argv += ["--markdown", args.markdown] if args.markdown else []
    try:
        return subprocess.call(argv, env=dict(os.environ, **{PINNED_ENV: str(cpu)}))
    finally:
        os.sched_setaffinity(0, before)


def yardstick(M: int, N: int, K: int) -> str:
    """numpy's float32 matmul on the same shape (BLAS, this process's threads): no emulation."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    a @ b
    calls = max(1, min(100, (1 << 31) // (M * N * K)))      # a few tenths of a second: above the clock's grain
    _, wall, cpu = min((_timed(lambda: [a @ b for _ in range(calls)]) for _ in range(3)), key=lambda r: r[2])
    wall, cpu = wall / calls, cpu / calls
    return (f"numpy float32 matmul {M}x{N}x{K} (no emulation): {M * N * K / max(cpu, 1e-9) / 1e6:.0f} MMAC/cpu-s, "
            f"{M * N * K / max(wall, 1e-9) / 1e6:.0f} MMAC/s")


def big_line(size: int, threads: int) -> str:
    ins = lookup(*BIG)
    prob = random_problem(ins, PRESETS["k-loop"], size, size, size, 1, "uniform")
    _, wall, cpu = _timed(lambda: gemm(prob.A, prob.B, instr=ins, threads=threads))
    macs = size ** 3
    return (f"{ins.arch} {ins.name} {size}x{size}x{size}, compiled route: {wall:.2f} s wall, {cpu:.2f} s CPU, "
            f"{macs / wall / 1e6:.0f} MMAC/s ({macs / max(cpu, 1e-9) / 1e6:.0f} per CPU-second)")


def marked(path: str) -> tuple[str, str]:
    """The text of ``path`` before its begin marker and after its end marker (one clear ValueError
    when it cannot be read or its markers are not one of each, in order)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ValueError(f"--markdown {path}: cannot read it ({e.strerror})") from None
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError(f"--markdown {path}: needs one line {BEGIN} and, after it, one line {END}")
    head, rest = text.split(BEGIN)
    return head, rest.split(END, 1)[1]


def write_markdown(path: str, command: str, lines: list[str]) -> None:
    """The output, with its command, between the markers of ``path``."""
    head, tail = marked(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + "\n".join([BEGIN, "```", f"$ {command}", *lines, "```", END]) + tail)


def cmd_gemm_bench(args) -> int:
    check_whole(args.big, "--big", 0, BIG_MAX)
    check_whole(args.workers, "--workers", 1, MAX_WORKERS)
    check_whole(args.threads, "--threads", 1, MAX_WORKERS)
    check_whole(args.repeat, "--repeat", 1, MAX_REPEAT)
    M, N, K = _shape(args.shape)                 # every row's shape, before the first row
    if args.markdown:
        marked(args.markdown)                    # the file and its markers, before the first row
    pinned = os.environ.get(PINNED_ENV)
    if args.pin and pinned is None:
        return run_pinned(args)
    where = "not pinned" if pinned is None else f"pinned to CPU {pinned}"
    for arch, name, kernel in BENCH:
        warm_up(lookup(arch, name), kernel, args.threads)
    lines = [f"# golden.gemm bench on {platform.node()} ({cpu_name()}, {os.cpu_count()} logical CPUs, {where}), "
             f"threads={args.threads}, best of {args.repeat}; MAC = one multiply-add of the GEMM; "
             "tiles: the compiled GEMM kernels, rows: one dot_add per k-step",
             f"{'arch':8s} {'instruction':28s} {'kernel':16s} {'MxNxK':15s} {'tiles':>10s} {'rows':>10s} "
             f"{'ratio':>7s} {'tiles':>10s} {'rows':>10s}   (MMAC/cpu-s, MMAC/cpu-s, rows/tiles, MMAC/s, MMAC/s)"]
    print("\n".join(lines), flush=True)
    rows = [(lookup(arch, name), kernel) for arch, name, kernel in BENCH]
    for ins, kernel in rows:
        lines.append(bench_row(ins, kernel, M, N, K, args.threads, args.workers, args.repeat))
        print(lines[-1], flush=True)
    if args.big:
        for extra in (yardstick(M, N, K), big_line(args.big, args.threads)):
            lines.append(extra)
            print(extra, flush=True)
    if args.markdown:
        command = (f"python -m golden gemm-bench --shape {args.shape} --big {args.big} --threads {args.threads} "
                   f"--repeat {args.repeat}{'' if pinned is None else ' --pin'} --markdown {args.markdown}")
        write_markdown(args.markdown, command, lines)
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("gemm-bench", help="golden.gemm throughput, compiled and per-k-step routes side by side")
    p.add_argument("--shape", default="256x256x4096", help="MxNxK of the per-instruction rows (default 256x256x4096)")
    p.add_argument("--big", type=int, default=1024, help="size of the square GEMM timed last, "
                   f"0..{BIG_MAX} (default 1024; 0: neither it nor the numpy line)")
    p.add_argument("--threads", type=int, default=1, help=f"threads of the compiled code, 1..{MAX_WORKERS} (default 1)")
    p.add_argument("--workers", type=int, default=1,
                   help=f"threads over output tiles of the rows route, 1..{MAX_WORKERS} (default 1)")
    p.add_argument("--repeat", type=int, default=3, help=f"timed runs of each route, the best kept, "
                   f"1..{MAX_REPEAT} (default 3)")
    p.add_argument("--pin", action="store_true", help="pin the process to one CPU first (Linux)")
    p.add_argument("--markdown", metavar="FILE", help="also write the output between FILE's gemm-bench markers")
    p.set_defaults(func=cmd_gemm_bench)
