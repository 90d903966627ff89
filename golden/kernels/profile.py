"""Where a compiled kernel's time goes: ``python -m golden.kernels.profile``.

Three measurements, one core (CPU-time medians, the calling thread pinned as ``golden.bench``
pins it), on ``golden.vectors.random_operands(..., narrow=True)`` operands:

- **per call**: microseconds of a one-row ``golden.dot_add`` (the Python side: operand checks,
  the instruction's plan, the launch), and the rate of ``dot_add`` against the bare row kernel on
  the same rows (what the Python side and the copy into d's dtype cost a large batch);
- **the operands' bound**: rows per second of a compiled loop that only reads a row's operands
  (in the instruction's own widths) and writes one word, the most any kernel reading them can do;
- **the integer-lane FDA's steps** (``--phases``): ``fused_int``'s block loop stopped after each
  step (products decoded, maxima, aligned sums, rounding), least CPU time of each, so each step's
  nanoseconds per row are differences of one run.

- **the shape kernel against the family kernel** (``--paths``): an instruction whose plan chose a
  kernel of its shape (``fda_float``, ``fda_fp8``, ``fdrda_float``, ``amd_fp8``) timed against its family's kernel
  (``golden.kernels.family_kernel``: what the same rows run without it), ``normal`` and ``bits``
  rows, the two kernels' calls in turn (``golden.bench.time_in_turn``), their results compared;

- **small batches** (``--batches``): one call's wall time on 1 to 65,536 rows, golden's and the
  reference model's, where the per-call work decides the ratio.

Nothing here decides a result; docs/golden.md ("Rates") quotes its output.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from golden.console import exit_with

from ..nbcache import njit
from . import _common as C
from . import fused_int as FI
from . import spec as S

DEFAULT_ROWS = [("hopper", "HMMA.16816.F32"), ("ampere", "HMMA.16816.F32"), ("ada", "QMMA.16832.F32.E4M3.E4M3"),
                ("cdna3", "v_mfma_f32_32x32x8_f16"), ("cdna3", "v_mfma_f32_16x16x16_bf16"),
                ("cdna3", "v_mfma_f32_32x32x16_fp8_fp8"), ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8"),
                ("cdna2", "v_mfma_f32_32x32x8_f16"), ("hopper", "DMMA.8x8x4")]
PHASES = ("decode", "maxima", "aligned sums", "rounding")


def cpu_median(fn, repeat: int) -> float:
    """Median CPU seconds of ``repeat`` calls of ``fn`` after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return max(statistics.median(times), 1e-9)


def cpu_least(fn, repeat: int) -> float:
    """The least CPU seconds of ``3 * repeat`` calls (a step's cost is a difference of two of these:
    the least is what the load of other processes inflates least)."""
    fn()
    times = []
    for _ in range(3 * repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return max(min(times), 1e-9)


@njit(**C.JIT)
def touch(a, b, c, K, out):
    """Reads every operand element of each row once and writes one word a row: the operands' bound."""
    for r in range(c.shape[0]):
        s = np.uint64(c[r])
        o = np.uint64(r * K)                      # unsigned indices: no wraparound check (as the kernels index)
        for k in range(K):
            s ^= np.uint64(a[o + np.uint64(k)]) ^ np.uint64(b[o + np.uint64(k)])
        out[r] = s


def kernel_args(ins, a, b, c, sa, sb):
    """The row kernel and the arguments ``golden.kernels.run`` would hand it, for these operands."""
    from . import _operand, own_width_operands, plan
    pl = plan(ins)
    a, b, c = own_width_operands(pl, a, b, c)
    packed = [_operand(x) for x in (a, b, c, sa, sb)]
    isz = np.array([s for _, s in packed], np.int64)
    out = np.empty(c.shape[0], np.uint64)
    # the row kernel the plan chose (the integer-lane amd_int, the narrow-operand gdfs_int), as run() does
    return pl.rows, (*(v for v, _ in packed), isz, pl.k, pl.fmts, pl.vtab, pl.etab, pl.prm, pl.order, out)


def call_rates(ins, n: int, repeat: int) -> dict:
    """Per call and bound measurements of one instruction (see the module's docstring)."""
    from ..api import dot_add
    from ..vectors import random_operands
    a, b, c, sa, sb = random_operands(ins, n, np.random.default_rng(0), "normal", narrow=True)
    full = cpu_median(lambda: dot_add(ins, a, b, c, sa, sb, backend="numba", threads=1), repeat)
    rows, args = kernel_args(ins, a, b, c, sa, sb)
    bare = cpu_median(lambda: rows(0, n, *args), repeat)
    one = [x if x is None else x[:1] for x in (a, b, c, sa, sb)]
    small = cpu_median(lambda: dot_add(ins, *one, backend="numba", threads=1), 20 * repeat)
    out = np.empty(n, np.uint64)
    bound = cpu_median(lambda: touch(a.reshape(-1), b.reshape(-1), c.reshape(-1), ins.k, out), repeat)
    return {"call": n / full, "kernel": n / bare, "one_row_us": small * 1e6, "bound": n / bound}


@njit(**C.JIT)
def fda_stages(stage, lo, hi, a, b, c, isz, K, fmts, drows, prm, out):
    """``fused_int.fda_block_rows`` (unscaled) stopped after step ``stage`` (0: decoded, 1: maxima,
    2: aligned sums, 3: rounded): the same helpers and loops, indexed as it indexes them
    (unsigned offsets: a signed index's wraparound check measured 2x slower on these loops)."""
    L, F, ez = prm[S.P_L], prm[S.P_F], prm[S.P_EZERO]
    da, db, dcf, dd = drows[S.A], drows[S.B], drows[S.CF], drows[S.D]
    G, Dsh = max(F - da[FI.D_MB] - db[FI.D_MB], 0), max(da[FI.D_MB] + db[FI.D_MB] - F, 0)
    bab = -da[FI.D_BIAS] - db[FI.D_BIAS]
    BR = max(1, min(FI.FDA_ROWS, max(16, FI.FLAT // K), hi - lo))
    XA, XB, M, E, CL = (np.empty(BR * K, np.int64), np.empty(BR * K, np.int64), np.empty(BR * K, np.int64),
                        np.empty(BR * K, np.int64), np.empty(BR * K, np.int64))
    X1, flags, emax = np.zeros(BR, np.int64), np.zeros(BR, np.int64), np.zeros(BR, np.int64)
    csig, ce, tot = np.zeros(BR, np.int64), np.zeros(BR, np.int64), np.zeros(BR, np.int64)
    wa, wb, wc = FI._widths(a), FI._widths(b), FI._widths(c)
    ka, kb = FI.literal_of(da), FI.literal_of(db)
    special = False
    for r0 in range(lo, hi, BR):
        nb = min(BR, hi - r0)
        n = nb * K
        special = FI.decode_block(wa, wb, isz, r0 * K, n, da, db, ka, kb, G, bab, XA, XB, M, E, CL, special)
        if stage == 0:
            continue
        FI.gather_column(wc, isz[2], r0, 1, nb, X1)
        dc, fc = dcf, S.CF
        for j in range(0, K, L):
            FI.decode_c(X1, dc, ez, csig, ce, flags, nb)
            lift = ez if ez > fmts[fc, S.EMIN] else FI.NEG
            FI.pass_maxima(E, CL, ce, flags, emax, nb, K, j, L, lift, special)
            if stage == 1:
                continue
            FI.align_c(csig, ce, emax, F, dc[FI.D_MB], tot, nb)
            FI.pass_sums(M, E, emax, tot, nb, K, j, L, Dsh)
            if stage == 2:
                continue
            FI.round_block(tot, emax, flags, F, dd[FI.D_SGNSH], fmts[S.D], prm[S.P_MODE], prm[S.P_FRAC],
                           prm[S.P_OVERFLOW] == C.OVERFLOW_INF, prm[S.P_ZPOS] == 1, False, out, r0, nb)
            for i in range(nb):
                X1[i] = np.int64(out[r0 + i])
            dc, fc = dd, S.D


def fda_phases(ins, n: int, repeat: int, kind: str = "normal") -> list[float]:
    """Nanoseconds per row of each of :data:`PHASES` (differences of :func:`fda_stages`' cumulative
    times), or [] where ``ins`` does not take the unscaled integer-lane FDA path."""
    from ..vectors import random_operands
    from . import plan
    pl = plan(ins)
    if not pl.handles or pl.prm[S.P_FAST] != S.FAST_FDA or pl.prm[S.P_SCALED]:
        return []
    a, b, c, _, _ = random_operands(ins, n, np.random.default_rng(0), kind, narrow=True)
    isz = np.array([a.itemsize, b.itemsize, c.itemsize, 8, 8], np.int64)
    out = np.empty(n, np.uint64)
    args = (0, n, a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8), c.view(np.uint8), isz, pl.k,
            pl.fmts, FI.decode_rows(pl.fmts), pl.prm, out)
    cum = [cpu_least(lambda st=st: fda_stages(st, *args), repeat) for st in range(len(PHASES))]
    return [(cum[i] - (cum[i - 1] if i else 0.0)) / n * 1e9 for i in range(len(PHASES))]


def path_rates(ins, n: int, repeat: int) -> list[tuple]:
    """``(kind, shape kernel's rows/s, family kernel's rows/s)`` per vector kind, or [] where the plan
    of ``ins`` chose no kernel of its shape (:func:`golden.kernels.family_kernel`).  The two kernels'
    calls run in turn on the same rows (CPU-time medians), and their results must be the same bits."""
    from ..bench import Rate, time_in_turn
    from ..vectors import random_operands
    from . import family_kernel, plan
    rows = plan(ins).rows
    block = family_kernel(rows)
    if block is rows:
        return []
    out = []
    for kind in ("normal", "bits"):
        a, b, c, sa, sb = random_operands(ins, n, np.random.default_rng(0), kind, narrow=True)
        _, args = kernel_args(ins, a, b, c, sa, sb)
        mine, theirs = np.empty(n, np.uint64), np.empty(n, np.uint64)
        shape_calls, block_calls = time_in_turn([lambda: rows(0, n, *args[:-1], mine),        # noqa: B023
                                                 lambda: block(0, n, *args[:-1], theirs)], repeat)  # noqa: B023
        if not np.array_equal(mine, theirs):
            raise RuntimeError(f"{ins.arch} {ins.name}: its shape's kernel and {block.__name__} differ on {kind} rows")
        out.append((kind, Rate(n, shape_calls).cpu, Rate(n, block_calls).cpu))
    return out


BATCHES = (1, 300, 4096, 65536)


def wall_median(fn, calls: int) -> float:
    """Median wall seconds of ``calls`` calls of ``fn`` after one warm-up call (a call this short is
    below CPU time's resolution)."""
    fn()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def batch_costs(ins, batches=BATCHES) -> list[tuple]:
    """``(rows, golden us, reference us or None)`` per batch size: a call's cost on small batches,
    where the per-call work decides the ratio."""
    from .. import bench_reference
    from ..api import dot_add
    from ..vectors import random_operands
    out = []
    for n in batches:
        a, b, c, sa, sb = random_operands(ins, n, np.random.default_rng(0), "normal", narrow=True)
        calls = 200 if n < 5000 else 20
        gold = wall_median(lambda: dot_add(ins, a, b, c, sa, sb, backend="numba", threads=1), calls)  # noqa: B023
        ref = None
        if bench_reference.available():
            a8, b8, c8, _, _ = random_operands(ins, n, np.random.default_rng(0), "normal")
            call = bench_reference.reference_call(ins, a8, b8, c8)
            ref = None if call is None else wall_median(call, calls)
        out.append((n, gold * 1e6, None if ref is None else ref * 1e6))
    return out


def main(argv=None) -> int:
    from ..catalog import lookup
    from . import pinned
    p = argparse.ArgumentParser(prog="python -m golden.kernels.profile", description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=200_000, help="dot-adds per call (default 200000)")
    p.add_argument("--repeat", type=int, default=5, help="timed calls per measurement (default 5)")
    p.add_argument("--only", default="", metavar="WORDS", help="comma-separated words selecting rows, as golden.bench")
    p.add_argument("--phases", action="store_true", help="also the integer-lane FDA's steps (compiles a copy, ~1 min)")
    p.add_argument("--paths", action="store_true",
                   help="also each shape's kernel against its family's kernel, normal and bits rows")
    p.add_argument("--batches", action="store_true",
                   help="also a call's cost on 1 to 65,536 rows, golden's and the reference model's (median wall time)")
    args = p.parse_args(argv)
    if args.n < 1 or args.repeat < 1:
        print(f"error: -n and --repeat must be at least 1, got {args.n} and {args.repeat}", file=sys.stderr)
        return 2
    words = [w.strip() for w in args.only.split(",") if w.strip()]
    rows = [ins for ins in (lookup(*r) for r in DEFAULT_ROWS)
            if not words or any(w in f"{ins.arch} {ins.name} {ins.algorithm}" for w in words)]
    if not rows:
        print(f"error: --only {args.only!r} matches no row of {', '.join(' '.join(r) for r in DEFAULT_ROWS)}",
              file=sys.stderr)
        return 2
    print(f"one core pinned, CPU-time medians of {args.repeat} calls of {args.n:,} rows (normal operands, own width)")
    print(f"{'arch':8s} {'instruction':30s} {'algorithm':9s} {'dot_add/s':>13s} {'kernel/s':>13s} "
          f"{'bound/s':>13s} {'1-row call':>11s}" + ("  ns/row: " + ", ".join(PHASES) if args.phases else ""))
    with pinned():
        for ins in rows:
            r = call_rates(ins, args.n, args.repeat)
            line = (f"{ins.arch:8s} {ins.name:30s} {ins.algorithm:9s} {r['call']:13,.0f} {r['kernel']:13,.0f} "
                    f"{r['bound']:13,.0f} {r['one_row_us']:8.1f} us")
            if args.phases:
                ph = fda_phases(ins, args.n, args.repeat)
                line += "  " + (" ".join(f"{x:5.1f}" for x in ph) if ph else "-")
            print(line, flush=True)
        if args.paths:
            print(f"\nthe shape's kernel against its family's kernel, rows/s (CPU-time medians of "
                  f"{args.repeat} calls in turn):")
            for ins in rows:
                for kind, shape, block in path_rates(ins, args.n, args.repeat):
                    print(f"{ins.arch:8s} {ins.name:30s} {kind:6s} {shape:13,.0f} {block:13,.0f} "
                          f"{shape / block:5.2f}x", flush=True)
        if args.batches:
            print(f"\none call's cost, median wall time (us): golden (one core) / the reference model, rows: "
                  f"{', '.join(f'{n:,}' for n in BATCHES)}")
            for ins in rows:
                cells = [f"{g:8.1f} / " + (f"{r:9.1f} ({r / g:5.1f}x)" if r is not None else "        -")
                         for _, g, r in batch_costs(ins)]
                print(f"{ins.arch:8s} {ins.name:30s} " + "  ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    exit_with(main)
