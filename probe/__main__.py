"""``python -m probe ARCH INSTR [--backend golden|rtl|torch|golden:F=24] [--json PATH]``,
``python -m probe --all``, ``python -m probe findings --out docs/findings``,
``python -m probe compare ARCH INSTR... --backend torch -n 2048`` (random dot-adds, bit for bit)."""

from __future__ import annotations

import argparse
import json
import sys
import time

import golden

from .backends import BackendError, Unavailable, backend_from_name
from .infer import probe


def _groups(instrs):
    """One representative per identical datapath (params, formats, K, scales)."""
    seen: dict = {}
    for ins in instrs:
        key = (ins.params, ins.formats, ins.k, ins.scale_format, ins.block_size)
        seen.setdefault(key, []).append(ins)
    return seen


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "findings":
        from .findings import main as findings_main
        return findings_main(argv[1:])
    try:
        if argv and argv[0] == "compare":
            from .compare import main as compare_main
            return compare_main(argv[1:])
        return _probe_main(argv)
    except Unavailable as e:
        print(f"skipped: {e}", file=sys.stderr)
        return 0
    except (ValueError, TypeError, BackendError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def _probe_main(argv) -> int:
    ap = argparse.ArgumentParser(prog="python -m probe",
                                 description="Derive an MMA instruction's arithmetic from black-box tests "
                                             "and compare it with the catalog.")
    ap.add_argument("arch", nargs="?", help="architecture (hopper, cdna3, ...)")
    ap.add_argument("instr", nargs="?", help="instruction name (paper, PTX or ISA name)")
    ap.add_argument("--all", action="store_true", help="every catalog instruction (one line each)")
    ap.add_argument("--group", action="store_true",
                    help="with --all: probe one instruction per identical datapath and apply its result to the rest")
    ap.add_argument("--backend", default="golden",
                    help="golden (default), rtl (co-simulation), torch (GPU), or golden:FIELD=VALUE,... "
                         "(a mis-parameterised golden)")
    ap.add_argument("--json", metavar="PATH", help="write the report(s) as JSON to PATH ('-': stdout)")
    ap.add_argument("--quiet", action="store_true", help="only the comparison line")
    args = ap.parse_args(argv)
    backend = backend_from_name(args.backend)
    if args.all:
        pool = golden.instructions(args.arch) if args.arch else list(golden.CATALOG)
        reports, bad, t0 = [], 0, time.perf_counter()
        groups = _groups(pool) if args.group else {i: [i] for i in pool}
        for members in groups.values():
            r = probe(members[0], backend)
            reports.append(r)
            for ins in members:
                ok = r.matches if ins is members[0] else _same(ins, r)
                bad += not ok
                print(f"{ins.arch:13s} {ins.name:44s} {r.family or '?':9s} "
                      f"{'matches' if ok else r.summary()}", flush=True)
        print(f"{len(pool)} instruction(s), {len(groups)} probed, {len(pool) - bad} match the catalog, "
              f"{bad} differ ({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
        if args.json:
            _write(args.json, [r.to_json() for r in reports])
        return 0 if bad == 0 else 1
    if not (args.arch and args.instr):
        ap.error("give ARCH and INSTR, or --all, or the findings command")
    ins = golden.lookup(args.arch, args.instr)
    r = probe(ins, backend)
    print(r.summary() if args.quiet else r.text())
    if args.json:
        _write(args.json, r.to_json())
    return 0 if r.matches else 1


def _same(ins, r) -> bool:
    from .infer import compare
    diffs, _ = compare(ins, r.base, r.family, r.fields)
    return not diffs


def _write(path, obj):
    text = json.dumps(obj, indent=2)
    if path == "-":
        print(text)
    else:
        with open(path, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
