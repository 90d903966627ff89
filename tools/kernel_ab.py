"""Two revisions' row kernels side by side in one run, on the same operands, their calls in turn.

    python tools/kernel_ab.py REV_A REV_B ARCH:INSTRUCTION ... [--kind normal|bits] [-n N] [--repeat R]

Each revision's ``golden`` (a git revision, or ``.`` for the working tree) is copied into a
temporary directory as a package of its own (``golden_a``, ``golden_b``) and imported beside the
other, so both run in this process: each instruction's row kernel, with the arguments
``golden.kernels.run`` would hand it (``golden.kernels.profile.kernel_args``), on the same
``random_operands(..., narrow=True)`` rows, the two kernels' calls in turn on one pinned core
(``golden.bench.time_in_turn``: the machine's load of the moment falls on both alike).  The two
must return the same bits (else the row says so and the exit status is 1).  Prints each
revision's rows a second (CPU-time medians) and the median of the rounds' ratios B/A.  Each
revision's kernels compile on their first call (numba's cache lies in the temporary copy; the
kernels of one shape in a child process, as ``golden.kernels.apart`` compiles them).
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def export(rev: str, dest: str, name: str) -> None:
    """``golden`` at ``rev`` (``.``: the working tree) as package ``name`` under ``dest``."""
    target = os.path.join(dest, name)
    if rev == ".":
        shutil.copytree(os.path.join(ROOT, "golden"), target, ignore=shutil.ignore_patterns("__pycache__"))
        return
    tar = subprocess.run(["git", "-C", ROOT, "archive", rev, "golden"], capture_output=True)
    if tar.returncode != 0:
        reason = tar.stderr.decode().strip().splitlines()[:1]
        print(f"kernel_ab.py: error: {rev!r} is not a revision of this repository (git archive: "
              f"{reason[0] if reason else tar.returncode}); valid: a commit, branch or tag, or . for the "
              "working tree", file=sys.stderr)
        raise SystemExit(2)
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as tf:
        tf.extractall(dest, filter="data")
    os.rename(os.path.join(dest, "golden"), target)


def kernel_call(pkg: str, arch: str, name: str, n: int, kind: str):
    """``(call, out)``: package ``pkg``'s row kernel of one instruction bound to its arguments."""
    api = importlib.import_module(pkg + ".api")
    catalog = importlib.import_module(pkg + ".catalog")
    profile = importlib.import_module(pkg + ".kernels.profile")
    vectors = importlib.import_module(pkg + ".vectors")
    ins = catalog.lookup(arch, name)
    a, b, c, sa, sb = vectors.random_operands(ins, n, np.random.default_rng(0), kind, narrow=True)
    api.dot_add(ins, a, b, c, sa, sb, backend="numba", threads=1)          # compiled, or loaded
    rows, args = profile.kernel_args(ins, a, b, c, sa, sb)
    return (lambda: rows(0, n, *args)), args[-1]


def compare(unit: str, n: int, kind: str, repeat: int) -> bool:
    """One instruction's line; whether the two revisions' bits agree."""
    from golden.bench import time_in_turn
    arch, name = unit.split(":", 1)
    (fa, oa), (fb, ob) = (kernel_call(p, arch, name, n, kind) for p in ("golden_a", "golden_b"))
    fa()
    fb()
    if not np.array_equal(oa, ob):
        print(f"{unit:44s} {kind:6s} the two revisions' bits differ on {int((oa != ob).sum()):,} of {n:,} rows")
        return False
    ta, tb = time_in_turn([fa, fb], repeat)
    ra, rb = (n / statistics.median(cpu for _, cpu in t) for t in (ta, tb))
    ratio = statistics.median(a_cpu / b_cpu for (_, a_cpu), (_, b_cpu) in zip(ta, tb))
    print(f"{unit:44s} {kind:6s} A {ra / 1e6:8.1f} M/s   B {rb / 1e6:8.1f} M/s   B/A {ratio:.3f}", flush=True)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="kernel_ab.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("rev_a", help="a git revision, or . for the working tree")
    ap.add_argument("rev_b", help="a git revision, or . for the working tree")
    ap.add_argument("units", nargs="+", metavar="ARCH:INSTRUCTION", help="e.g. cdna3:v_mfma_f32_32x32x8_f16")
    ap.add_argument("--kind", choices=("normal", "bits"), default="normal", help="the operands' vector kind")
    ap.add_argument("-n", type=int, default=200_000, help="rows a call (default 200000)")
    ap.add_argument("--repeat", type=int, default=7, help="timed calls of each (default 7)")
    args = ap.parse_args(argv)
    if args.n < 1 or args.repeat < 1:
        ap.error("-n and --repeat take a whole number, 1 or more")
    sys.path.insert(0, ROOT)
    from golden.catalog import lookup
    from golden.kernels import pinned
    for unit in args.units:
        arch, _, name = unit.partition(":")
        try:
            lookup(arch, name)
        except (KeyError, ValueError) as e:
            ap.error(f"{unit!r}: {e} (ARCH:INSTRUCTION, as golden.lookup takes them)")
    with tempfile.TemporaryDirectory(prefix="kernel_ab-") as tmp:
        export(args.rev_a, tmp, "golden_a")
        export(args.rev_b, tmp, "golden_b")
        sys.path.insert(0, tmp)
        # a shape kernel's first compile runs in a child process (golden.kernels.apart), which must
        # import the copies too: compiled here, its loop across rows may stay scalar
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (tmp, os.environ.get("PYTHONPATH")) if p)
        with pinned():
            same = [compare(u, args.n, args.kind, args.repeat) for u in args.units]
    return 0 if all(same) else 1


if __name__ == "__main__":
    sys.exit(main())
