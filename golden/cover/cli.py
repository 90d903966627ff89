"""``python -m golden coverage``: the coverage golden's own vectors reach, and the bins of each algorithm.

Examples::

    python -m golden coverage hopper HGMMA.64xNx16.F32 -n 1000000            # random (mixed) vectors
    python -m golden coverage hopper HGMMA.64xNx16.F32 --vectors cover       # solved: every reachable bin
    python -m golden coverage hopper HGMMA.64xNx16.F32 --bins                # the bins, as a markdown table

No RTL runs here: this is what the vectors reach in golden's arithmetic (what ``make coverage`` also
measures on the vectors a co-simulation checked).
"""

from __future__ import annotations

import time

import numpy as np

from ..options import check_whole

MAX_N = 100_000_000


def _bins_table(ins) -> str:
    """The instruction's cover points as a markdown table (a row per point: its bins and what it
    measures), then its unreachable bins with their reasons."""
    from ..coverage import cover_points, empty
    cov = empty(ins)
    lines = [f"{ins.arch} {ins.name} ({ins.params.base}): {len(cov.bins)} bins, {len(cov.reachable())} "
             f"reachable", "", "| point | bins | what it measures |", "|---|---|---|"]
    for p in cover_points(ins):
        if p.name in cov.inapplicable:
            continue
        lines.append(f"| `{p.name}` | {', '.join(f'`{b.name}`' for b in p.bins)} | {p.description} |")
    if cov.inapplicable:
        lines += ["", "| point not applicable | because |", "|---|---|"]
        lines += [f"| `{p}` | {why} |" for p, why in cov.inapplicable.items()]
    if cov.unreachable:
        lines += ["", "| unreachable bin | because |", "|---|---|"]
        lines += [f"| `{b}` | {why} |" for b, why in cov.unreachable.items()]
    return "\n".join(lines)


def _measure(ins, n: int, kind: str, seed: int):
    from ..coverage import measure
    from ..vectors import random_operands
    from .directed import solve
    rng = np.random.default_rng(seed)
    if kind == "cover" and n is None:
        sol = solve(ins, rng)
        return sol.coverage, sol.rows
    n = 100_000 if n is None else n
    a, b, c, sa, sb = random_operands(ins, n, rng, kind)
    return measure(ins, a, b, c, sa, sb), n


def cmd_coverage(args) -> int:
    from ..catalog import select
    if args.n is not None:
        check_whole(args.n, "-n", 1, MAX_N)
    check_whole(args.seed, "--seed", 0)
    found = select(args.arch, args.instr)
    if args.bins:
        print("\n\n".join(_bins_table(ins) for ins in found))
        return 0
    out = []
    for ins in found:
        t0 = time.perf_counter()
        cov, rows = _measure(ins, args.n, args.vectors, args.seed)
        dt = time.perf_counter() - t0
        print(f"{ins.arch} {ins.name}: {rows:,} {args.vectors} vectors, {dt:.1f} s; {cov.summary()}", flush=True)
        for hole in cov.missed():
            print(f"  hole: {hole}: {cov.bins[hole]}")
        out.append(cov)
    if args.json:
        import json
        with open(args.json, "w") as f:
            json.dump([c.to_dict() for c in out], f, indent=1)
        print(f"wrote {args.json}")
    return 0


def add_parser(sub, arch_help: str, instr_help: str) -> None:
    """``coverage`` on the ``python -m golden`` command line."""
    from ..vectors import VECTOR_KINDS
    p = sub.add_parser("coverage", help="cover points reached by golden's own vectors, or the bins (--bins)")
    p.add_argument("arch", help=arch_help)
    p.add_argument("instr", help=instr_help)
    p.add_argument("-n", type=int, default=None, help=f"dot-adds per instruction, 1..{MAX_N:,} (default 100000; "
                   "with --vectors cover, the solved vectors: every reachable bin with the fewest)")
    p.add_argument("--vectors", choices=VECTOR_KINDS, default="mixed", help="vector distribution (default mixed)")
    p.add_argument("--seed", type=int, default=1, help="random seed, 0 or more (default 1)")
    p.add_argument("--bins", action="store_true", help="print each instruction's bins (markdown) and exit")
    p.add_argument("--json", metavar="PATH", help="write the coverage of each instruction as JSON")
    p.set_defaults(func=cmd_coverage)
