"""Why does ``golden.dot_add``'s rate vary from run to run?  Measure it; print the table.

Usage: python tools/golden_rate_study.py [--reps 15] [--rounds 3] [-n 200000] [--quick | --chunks | --compare REF]

Each *worker* (a fresh Python process) makes one set of vectors and times ``golden.dot_add`` on
them ``--reps`` times, recording per call the wall time, the process CPU time, the minor and major
page faults (``resource.getrusage``) and the involuntary context switches (the kernel took the CPU
away: another process wanted it).  The first call, on cold memory, is reported apart.

Part A runs the workers for each setting side by side -- one worker per setting per round,
settings interleaved, ``--rounds`` rounds -- so that every setting sees the same machine load:

* ``default``: as ``make bench`` runs;
* ``mmap_fixed``: ``MALLOC_MMAP_THRESHOLD_=131072``, which turns off glibc's dynamic mmap
  threshold: every temporary of 128 KiB or more is mmapped and unmapped on each call, so its
  pages fault in again on the next one (the suspected mechanism, forced);
* ``no_trim``: ``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_MMAP_THRESHOLD_`` 1 GiB and
  ``MALLOC_ARENA_MAX=1``: memory is never handed back to the system;
* ``hugepage_off`` / ``hugepage_on``: ``NUMPY_MADVISE_HUGEPAGE`` 0 / 1;
* ``chunk_4096`` / ``chunk_65536``: ``golden.api.CHUNK_ROWS`` (rows per vectorised batch; 8192 by default,
  16384 before this study).

``--compare REF`` times this tree against the golden/ of a git commit instead (both imported
in one process, calls alternating, CPU time).  Part B prints every call of one default worker per
instruction (the raw series).  Part C
(``--chunks``) sweeps ``golden.api.CHUNK_ROWS`` in one process per instruction, the values
interleaved call by call, rated in CPU time: the working set of one batch is rows x K x 8 bytes per
temporary, so the best row count depends on K.  The rates are
dot-adds per second of wall time and of CPU time; where they differ, the process waited for a
CPU.  Medians and [min, max] over all the warm calls of all rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

INSTRUCTIONS = [("hopper", "HMMA.16816.F32"), ("hopper", "DMMA.8x8x4"), ("cdna3", "v_mfma_f32_16x16x32_fp8_fp8")]

SETTINGS = {
    "default": ({}, None),
    "mmap_fixed": ({"MALLOC_MMAP_THRESHOLD_": "131072"}, None),
    "no_trim": ({"MALLOC_TRIM_THRESHOLD_": str(1 << 30), "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
                 "MALLOC_ARENA_MAX": "1"}, None),
    "hugepage_off": ({"NUMPY_MADVISE_HUGEPAGE": "0"}, None),
    "hugepage_on": ({"NUMPY_MADVISE_HUGEPAGE": "1"}, None),
    "chunk_4096": ({}, 4096),
    "chunk_65536": ({}, 65536),
}


# ------------------------------------------------------------------ worker (one process)

def worker(arch: str, name: str, n: int, reps: int, chunk: int | None, kind: str, root: str = str(ROOT)) -> list[dict]:
    sys.path.insert(0, root)
    import numpy as np

    import golden.api
    from golden.catalog import lookup
    from golden.vectors import random_operands

    if chunk:
        golden.api.CHUNK_ROWS = chunk
    ins = lookup(arch, name)
    a, b, c, sa, sb = random_operands(ins, n, np.random.default_rng(0), kind)
    calls = []
    for _ in range(reps + 1):                     # call 0: cold (first touch of every temporary)
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        c0, t0 = time.process_time(), time.perf_counter()
        golden.api.dot_add(ins, a, b, c, sa, sb)
        t1, c1 = time.perf_counter(), time.process_time()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        calls.append({"wall": t1 - t0, "cpu": c1 - c0, "minflt": r1.ru_minflt - r0.ru_minflt,
                      "majflt": r1.ru_majflt - r0.ru_majflt, "nivcsw": r1.ru_nivcsw - r0.ru_nivcsw})
    return calls


CHUNK_SWEEP = [1024, 2048, 4096, 8192, 16384, 32768]
SWEEP_INSTRUCTIONS = [("hopper", "DMMA.8x8x4"), ("cdna2", "v_mfma_f32_32x32x8_f16"), ("hopper", "HMMA.16816.F32"),
                      ("cdna3", "v_mfma_f32_16x16x16_bf16"), ("ada", "QMMA.16832.F32.E4M3.E4M3"),
                      ("blackwell", "UTCOMMA.4X")]


def chunk_sweep(arch: str, name: str, n: int, reps: int, kind: str) -> dict:
    """Median CPU-time rate (M dot-adds/s) per CHUNK_ROWS value, values interleaved call by call."""
    sys.path.insert(0, str(ROOT))
    import numpy as np

    import golden.api
    from golden.catalog import lookup
    from golden.vectors import random_operands

    ins = lookup(arch, name)
    a, b, c, sa, sb = random_operands(ins, n, np.random.default_rng(0), kind)
    cpu: dict[int, list[float]] = {ch: [] for ch in CHUNK_SWEEP}
    for rep in range(reps + 1):
        for ch in CHUNK_SWEEP:
            golden.api.CHUNK_ROWS = ch
            c0 = time.process_time()
            golden.api.dot_add(ins, a, b, c, sa, sb)
            if rep:                                # the first round warms every size up
                cpu[ch].append(time.process_time() - c0)
    return {"k": ins.k, "rates": {ch: n / statistics.median(v) / 1e6 for ch, v in cpu.items()}}


def run_worker(arch, name, n, reps, setting, kind, root=str(ROOT)) -> list[dict]:
    env_extra, chunk = SETTINGS[setting]
    env = dict(os.environ, **env_extra)
    spec = json.dumps([arch, name, n, reps, chunk, kind, root])
    out = subprocess.run([sys.executable, __file__, "--worker", spec], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


# ------------------------------------------------------------------ report

def spread(values, fmt="{:.2f}") -> str:
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}, {fmt.format(max(values))}]"


def summary_row(label: str, n: int, calls: list[dict]) -> str:
    warm = [c for c in calls if not c.get("cold")]
    cold = [c for c in calls if c.get("cold")]
    wall = [n / c["wall"] / 1e6 for c in warm]
    cpu = [n / c["cpu"] / 1e6 for c in warm if c["cpu"] > 0]
    flt = [c["minflt"] for c in warm]
    return (f"{label:14s} {spread(wall):>22s} {spread(cpu):>22s} {spread(flt, '{:.0f}'):>16s} "
            f"{statistics.median(c['minflt'] for c in cold):>8.0f} {sum(c['majflt'] for c in calls):>5d} "
            f"{statistics.median(c['nivcsw'] for c in warm):>6.0f}")


HEADER = (f"{'setting':14s} {'M dot-adds/s (wall)':>22s} {'M dot-adds/s (CPU)':>22s} {'minflt/call':>16s} "
          f"{'cold flt':>8s} {'majflt':>5s} {'invcsw':>6s}")


def _load_as(name: str, folder: Path):
    """Import the package in ``folder`` under another name (its imports are relative)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def compare(ref: str, args) -> int:
    """This tree's golden against ``ref``'s, both imported in this one process (the ref's as
    ``golden_ref``), on the same vectors, calls alternating old/new, rated in CPU time: a
    process-to-process comparison would add the spread between processes (up to 30 %)."""
    import tarfile
    import tempfile

    import numpy as np
    sys.path.insert(0, str(ROOT))
    import golden
    from golden.vectors import random_operands
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "golden"], capture_output=True, check=True)
        tar_path = Path(tmp) / "ref.tar"
        tar_path.write_bytes(archive.stdout)
        with tarfile.open(tar_path) as tar:
            tar.extractall(tmp, filter="data")
        old_golden = _load_as("golden_ref", Path(tmp) / "golden")
        print(f"golden.dot_add at {ref} against this tree in one process, n={args.n:,} {args.kind}, {args.reps} "
              f"calls each, alternating; CPU-time M dot-adds/s, median [min, max]; load average "
              f"{os.getloadavg()[0]:.2f} at start")
        print(f"{'arch':10s} {'instruction':30s} {'at ' + ref:>20s} {'now':>20s} {'ratio':>6s}")
        for arch, name in SWEEP_INSTRUCTIONS:
            ins_new, ins_old = golden.lookup(arch, name), old_golden.lookup(arch, name)
            a, b, c, sa, sb = random_operands(ins_new, args.n, np.random.default_rng(0), args.kind)
            times: dict[str, list[float]] = {"old": [], "new": []}
            for rep in range(args.reps + 1):
                for key, mod, ins in (("old", old_golden, ins_old), ("new", golden, ins_new))[::1 if rep % 2 else -1]:
                    c0 = time.process_time()
                    mod.dot_add(ins, a, b, c, sa, sb)
                    if rep:
                        times[key].append(time.process_time() - c0)
            o = [args.n / t / 1e6 for t in times["old"]]
            w = [args.n / t / 1e6 for t in times["new"]]
            print(f"{arch:10s} {name:30s} {spread(o):>20s} {spread(w):>20s} "
                  f"{statistics.median(w) / statistics.median(o):6.2f}", flush=True)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("-n", type=int, default=200_000, help="dot-adds per call (default 200000)")
    p.add_argument("--reps", type=int, default=15, help="warm calls per worker (default 15)")
    p.add_argument("--rounds", type=int, default=3, help="workers per setting, interleaved (default 3)")
    p.add_argument("--kind", default="normal", help="vector kind (golden.vectors; default normal)")
    p.add_argument("--quick", action="store_true", help="first instruction, defaults and mmap_fixed only")
    p.add_argument("--chunks", action="store_true", help="part C only: the CHUNK_ROWS sweep")
    p.add_argument("--compare", metavar="REF", help="instead: this tree's golden against git REF's, "
                   "in one process, calls alternating")
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*json.loads(args.worker))))
        return 0
    if args.chunks:
        print(f"golden.dot_add CPU-time rate (M dot-adds/s, median of {args.reps} calls, n={args.n:,} {args.kind}) "
              f"by golden.api.CHUNK_ROWS; load average {os.getloadavg()[0]:.2f} at start")
        print(f"{'arch':10s} {'instruction':28s} {'K':>3s} " + " ".join(f"{ch:>6d}" for ch in CHUNK_SWEEP))
        for arch, name in SWEEP_INSTRUCTIONS:
            r = chunk_sweep(arch, name, args.n, args.reps, args.kind)
            print(f"{arch:10s} {name:28s} {r['k']:3d} " + " ".join(f"{r['rates'][ch]:6.2f}" for ch in CHUNK_SWEEP),
                  flush=True)
        return 0

    if args.compare:
        return compare(args.compare, args)
    instructions = INSTRUCTIONS[:1] if args.quick else INSTRUCTIONS
    settings = ["default", "mmap_fixed"] if args.quick else list(SETTINGS)
    print(f"golden.dot_add, n={args.n:,} {args.kind} dot-adds per call, {args.reps} warm calls per worker, "
          f"{args.rounds} rounds; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    print("rates: median [min, max] over the warm calls; minflt/call: minor page faults per warm call; "
          "cold flt: median minor faults of the first call; invcsw: median involuntary context switches per call")
    for arch, name in instructions:
        results: dict[str, list[dict]] = {s: [] for s in settings}
        for _ in range(args.rounds):
            for s in settings:
                calls = run_worker(arch, name, args.n, args.reps, s, args.kind)
                calls[0]["cold"] = True
                results[s].extend(calls)
        print(f"\n{arch} {name}")
        print(HEADER)
        for s in settings:
            print(summary_row(s, args.n, results[s]))
        per_worker = [statistics.median(args.n / c["cpu"] / 1e6 for c in results["default"][i:i + args.reps + 1][1:])
                      for i in range(0, len(results["default"]), args.reps + 1)]
        print("  default, median CPU M/s of each worker (process): " + ", ".join(f"{r:.2f}" for r in per_worker))
        series = results["default"][:args.reps + 1]
        print("  default, first worker, call by call (wall M/s, CPU M/s, minflt, invcsw): " +
              "; ".join(f"{args.n / c['wall'] / 1e6:.2f} {args.n / max(c['cpu'], 1e-9) / 1e6:.2f} "
                        f"{c['minflt']} {c['nivcsw']}" for c in series))
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
