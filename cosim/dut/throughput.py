"""``python -m cosim.dut throughput A.toml B.toml ...``: devices side by side, one run, the same dot-adds each.

A tile device and a single-lane device of the same arithmetic (``tile_engine`` and ``dotp_en``, both
ampere HMMA.1684.F32.TF32) answer different questions at once: how many dot-adds the hardware does
per clock (its lanes and its K loop, under the same random stalls), and how fast the co-simulation
checks it.  Every description's targets are built (or found cached) first, outside the timing; each
then runs ``n`` dot-adds with the same seed and stall probability, its rates printed beside the
first description's as ratios (this machine is shared: ratios from one run, not absolute figures).
"""

from __future__ import annotations

import io
import sys

from ..scoring import Config
from . import transfers
from .builds import build, prepare
from .run import run_target

HEADER = (f"{'device':14s} {'target':28s} {'transfer':>9s} {'dot-adds':>10s} {'cycles':>10s} {'dot-adds/cycle':>14s} "
          f"{'sim s':>7s} {'dot-adds/s':>11s} {'vs first':>8s}  status")


def compare(paths, n: int = 1_000_000, seed: int = 1, stall: float = 0.1, out=None) -> int:
    """Run each description's targets on ``n`` dot-adds and print the table; 0 when every run is clean."""
    out = out or sys.stdout
    preps = [prepare(p) for p in paths]
    for prep in preps:                         # every build made first, outside the timing
        for target, ins in prep.pairs:
            build(prep, target, ins)
    print(f"{n:,} dot-adds per target, stall {stall}, seed {seed} (one run)", file=out)
    print(HEADER, file=out, flush=True)
    first, status = None, 0
    for prep in preps:
        for target, ins in prep.pairs:
            cfg = Config(n=n, seed=seed, stall=stall, progress=0.0, out=io.StringIO(), rerun_with_waves=False)
            r = run_target(prep, target, ins, cfg).result
            rate = r.vectors / r.seconds if r.seconds else 0.0
            first = first or rate
            per = transfers.dot_adds(prep.desc, ins)
            what = "tile" if transfers.is_tile(prep.desc) else "dot-add"
            print(f"{prep.desc.name:14s} {target.describe()[:28]:28s} {what:>9s} {r.vectors:10,d} {r.cycles:10,d} "
                  f"{r.vectors / max(r.cycles, 1):14.2f} {r.seconds:7.1f} {rate:11,.0f} {rate / first:7.2f}x  "
                  f"{r.status}" + (f" ({per} dot-adds a transfer)" if per > 1 else ""), file=out, flush=True)
            status |= not r.ok
    return int(status)
