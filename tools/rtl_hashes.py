"""Hash the generated RTL of every catalog unit at every pipelining level, to prove a refactor
changed no bit of the hardware.

    python tools/rtl_hashes.py --out before.json            # on the old tree
    python tools/rtl_hashes.py --check before.json          # on the new one: exit 1 on any difference

One unit per distinct catalog datapath (the unit of its first instruction), levels 0..3.  The text
hashed is Amaranth's RTLIL with the ``src`` attributes (source file and line, which any edit moves)
removed: the Verilog is Yosys's deterministic translation of exactly that text, so equal RTLIL
gives byte-identical Verilog, at a fraction of the time (about 1 s a unit, ~10 minutes for all).
``--only NAME`` restricts to units whose name contains NAME, ``--sample`` to one unit per kind of
datapath (a quick look); ``-j N`` runs N processes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys

_SRC = re.compile(r'^\s*attribute \\src "[^"]*"\n', re.M)


def rtl_hash(unit) -> str:
    """sha256 of ``unit``'s RTLIL without its ``src`` attributes."""
    from amaranth.back import rtlil
    text = _SRC.sub("", rtlil.convert(unit, name="unit"))
    return hashlib.sha256(text.encode()).hexdigest()


def _one(task) -> tuple[str, str]:
    import golden
    from hw.unit import dot_add_unit
    level, arch, name = task
    return f"{level} {arch} {name}", rtl_hash(dot_add_unit(golden.lookup(arch, name), pipelining=level))


def unit_hashes(levels=(0, 1, 2, 3), only: str | None = None, jobs: int = 1, sample: bool = False) -> dict:
    """``{"LEVEL arch NAME": sha256}`` of every distinct catalog unit's RTLIL (src attributes removed),
    on ``jobs`` processes; ``sample``: one unit per algorithm, compiled path or not, scaled or not, d
    format and a/b formats alike or not (17 units instead of every datapath's)."""
    import golden
    from hw.lowered import is_lowered
    from hw.unit import SUPPORTED
    first: dict = {}
    for ins in golden.select("all", "all"):
        if ins.params.base in SUPPORTED:
            key = ins.datapath if not sample else (ins.params.base, is_lowered(ins.params), ins.scale_format,
                                                   ins.d_format, ins.a_format == ins.b_format)
            first.setdefault(key, ins)
    tasks = [(level, ins.arch, ins.name) for level in levels for ins in first.values()
             if not only or only in ins.name]
    if jobs == 1:
        return dict(map(_one, tasks))
    import concurrent.futures as cf
    import multiprocessing
    with cf.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        return dict(pool.map(_one, tasks, chunksize=4))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the hashes to this JSON file")
    ap.add_argument("--check", help="compare with the hashes of this JSON file (exit 1 on a difference)")
    ap.add_argument("--levels", default="0,1,2,3", help="pipelining levels (default 0,1,2,3)")
    ap.add_argument("--only", help="only units whose name contains this")
    ap.add_argument("--sample", action="store_true", help="one unit per kind of datapath (a quick check)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="processes (default 1)")
    args = ap.parse_args(argv)
    try:
        levels = tuple(int(x) for x in args.levels.split(","))
    except ValueError:
        print(f"error: --levels takes whole numbers such as 0,1,2,3, not {args.levels!r}", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print(f"error: --jobs must be 1 or more, not {args.jobs}", file=sys.stderr)
        return 2
    got = unit_hashes(levels, args.only, args.jobs, args.sample)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
    if args.check:
        with open(args.check) as f:
            want = json.load(f)
        keys = [k for k in want if k in got] if args.only or args.sample else list(want)
        bad = [k for k in keys if got.get(k) != want[k]] + [k for k in got if k not in want]
        for k in bad:
            print(f"differs: {k}")
        print(f"{len(keys) - len(bad)} of {len(keys)} units identical")
        return 1 if bad else 0
    print(f"{len(got)} units hashed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
