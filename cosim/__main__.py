"""Command line: ``python -m cosim run | tensor-core | replay | lint | bench | toolchain``.

ARCH and INSTR take a name, a comma list or ``all`` everywhere (``golden.select``).  ``run`` measures the
cover points on every vector it checks (cosim.coverage): a coverage column, each instruction's summary line and
an HTML + JSON report per run.

Examples::

    python -m cosim run hopper HGMMA                 # every HGMMA: ~1 min each, >= 100,000 vectors
    python -m cosim run ampere HMMA.16816.F32 -n 1000000 --seed 7 --stall 0.3
    python -m cosim run all all -n 100000            # every instruction (make cosim-all)
    python -m cosim run volta,turing HMMA.884 -n 20000   # comma lists
    python -m cosim run hopper HGMMA --unit standin  # the machinery, on the stand-in unit
    python -m cosim run hopper HGMMA.64xNx16.F32 --vectors cover -n closure --coverage-table --require-closed
                                                     # make coverage VECTORS=cover CLOSED=yes: every reachable bin
    python -m cosim replay build/cosim/failures/hopper_HGMMA.64xNx16.F32_seed1_....npz --waves
    python -m cosim lint hopper HGMMA                # verilator --lint-only -Wall on the generated RTL
    python -m cosim bench                            # throughput: stand-in and HGMMA unit, 1-8 lanes
    python -m cosim tensor-core volta                # the whole Volta tensor core, mixed opcodes
    python -m cosim tensor-core volta,turing --vectors bits   # each core in turn
    python -m cosim toolchain
"""

from __future__ import annotations

import os

# numpy's BLAS threads would compete with the simulator process for the cores (set before numpy loads)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import golden  # noqa: E402
from golden.console import exit_with
from golden.options import Parser, whole_number, yes_no  # noqa: E402,F401  (make's WAVES= words: one parser)
from golden.paths import build_dir  # noqa: E402
from golden.streams import check_generator  # noqa: E402
from golden.streams import resolve as resolve_vectors

from . import build as bld  # noqa: E402
from . import coverage as cov  # noqa: E402
from . import failures, junit, table, toolchain  # noqa: E402
from . import lint as lnt  # noqa: E402
from . import run as cr  # noqa: E402
from .scoring import Status, check_budget  # noqa: E402
from .session import no_progress_limit  # noqa: E402
from .units import NoRTL, unit_provider  # noqa: E402


def _check_common(args) -> None:
    """The options every sub-command shares, checked before anything is built."""
    if args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {args.seed}")
    if not 0.0 <= args.stall < 1.0:
        raise ValueError(f"--stall must be in [0, 1), got {args.stall}")
    if getattr(args, "progress", 0) < 0:
        raise ValueError(f"--progress must be >= 0 seconds, got {args.progress}")
    check_budget(getattr(args, "budget", None))
    if getattr(args, "waves_word", None) is not None:
        args.waves = args.waves or yes_no(args.waves_word, "WAVES")


def _config(args) -> cr.Config:
    _check_common(args)
    cfg = cr.Config(seed=args.seed, stall=args.stall, lanes=args.lanes, waves=args.waves, progress=args.progress)
    if getattr(args, "n", None) is not None:
        if args.n != cov.CLOSURE and args.n < 1:
            raise ValueError(f"-n must be >= 1, got {args.n}")
        cfg.n = args.n
    if getattr(args, "budget", None) is not None:
        cfg.budget_s = args.budget
    if getattr(args, "vectors", None):
        cfg.vectors = args.vectors
    if cfg.n == cov.CLOSURE and cfg.vectors != "cover":
        raise ValueError(f"-n {cov.CLOSURE} sizes a run to the solved closure of --vectors cover (N=closure with "
                         f"VECTORS=cover); got --vectors {cfg.vectors}: give -n a number or --vectors cover")
    cfg.coverage = getattr(args, "coverage", False)
    cfg.coverage_sample = getattr(args, "coverage_sample", None)
    if getattr(args, "jobs", 1) < 1:
        raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
    if args.lanes < 1:
        raise ValueError(f"--lanes must be >= 1, got {args.lanes}")
    return cfg


def _what(cfg) -> str:
    """How many vectors each instruction gets, for the run's first line."""
    if cfg.n == cov.CLOSURE:
        return "the solved closure's vectors (the fewest that hit every reachable bin)"
    if cfg.n:
        return f"{cfg.n:,} vectors"
    return f"{cfg.budget_s:g} s and >= {cfg.min_n:,} vectors" if not cfg.waves else "2,000 vectors (waves)"


def _report(args, instrs, cfg, results) -> int:
    """The coverage report, --require-closed and the JUnit report after the table; the exit status they add."""
    status = 0
    if cfg.coverage:
        title = f"python -m cosim run {args.arch} {args.instr or 'all'}"
        meta = cov.run_meta(vectors=cfg.vectors, n=cfg.n, seed=cfg.seed, stall=cfg.stall, lanes=cfg.lanes,
                            unit=args.unit or "hw", pipeline=args.pipeline, coverage_sample=cfg.coverage_sample)
        cov.report_run(results, title=title, meta=meta, folder=args.coverage_dir, table=args.coverage_table)
        if args.require_closed:
            status |= cov.require_closed(results)
    if args.report is not None and junit.write_or_say(args.report, lambda: junit.write(args.report, results)):
        return 2
    return status


def cmd_run(args) -> int:
    from . import icarus
    sim = icarus.choose(args.simulator)
    instrs = golden.select(args.arch, args.instr)
    cfg = _config(args)
    if sim == "icarus":
        icarus.find_iverilog()
        if args.waves:
            raise ValueError("waveforms are not supported under Icarus (SIM=icarus): run WAVES=1 under Verilator")
        cfg.min_n, cfg.rerun_with_waves = icarus.MIN_VECTORS, False
    cov.check_options(args)
    if cfg.coverage:
        name = f"{instrs[0].arch}_{instrs[0].name}" if len(instrs) == 1 else f"{args.arch}_{args.instr or 'all'}"
        args.coverage_dir = cov.report_folder(args, name)
    for ins in instrs:                                # fail early: a bad generator name or what it returns
        check_generator(ins, cfg.vectors, cfg.seed)
    unit = unit_provider(args.unit, args.pipeline)
    toolchain.setup()
    what = _what(cfg)
    print(f"co-simulating {len(instrs)} instruction(s), {what} each, seed {cfg.seed}, stall {cfg.stall:g}, "
          f"{cfg.lanes} lane(s), unit {getattr(unit, 'spec', unit)}"
          + (f", simulator {sim}" if sim != "verilator" else "")
          + (f", {args.jobs} at a time" if args.jobs > 1 else ""), file=sys.stderr, flush=True)
    results = cr.run_many(instrs, cfg, unit.spec if args.jobs > 1 and hasattr(unit, "spec") else unit,
                          jobs=args.jobs)
    for r in results:
        if r.waves_file and r.status != Status.MISMATCH:
            print(f"waves: {r.ins.name}: {r.waves_file}")
    status = table.summarize(results)
    return _report(args, instrs, cfg, results) or status


def cmd_tensor_core(args) -> int:
    from . import tensor_core
    if args.n is not None and args.n < 1:
        raise ValueError(f"-n must be >= 1, got {args.n}")
    _check_common(args)
    resolve_vectors(args.vectors)                     # clear errors for bad names, before any build
    golden.select(args.arch, args.instr)
    from hw.pipelining import Pipelining
    Pipelining.parse(args.pipeline or "0")            # a bad spec: one line, before any build
    toolchain.setup()
    return tensor_core.main(args)


def cmd_replay(args) -> int:
    cfg = _config(args)
    meta, arrays = failures.load_failures(args.file)
    explicit = args.unit is not None or args.pipeline is not None
    if not explicit:
        cr.saved_unit(meta, golden.lookup(meta["arch"], meta["instr"]), args.file)   # refused before a word
    desc = meta.get("unit_description") or {}
    if meta.get("unit"):
        saved = meta["unit"]
    elif "hw" in desc:
        saved = "hw with " + ", ".join(f"{k}={v}" for k, v in _params_changes(desc["hw"]).items())
    else:
        saved = "hw (a board's run)" if "board" in meta else "a custom unit"
    print(f"replaying {len(arrays['c'])} vector(s) of {meta['arch']} {meta['instr']} "
          f"(saved with unit {saved}, {meta.get('lanes', 1)} lane(s))", file=sys.stderr)
    r = cr.replay(args.file, cfg, unit_provider(args.unit, args.pipeline) if explicit else None)
    print(table.HEADER)
    print(table.row(r))
    if r.waves_file and r.status != Status.MISMATCH:
        print(f"waves: {r.waves_file}")
    return table.summarize([r])


def _params_changes(hw_desc: dict) -> dict:
    """The Params fields and pipelining of a described hw unit that differ from its instruction's."""
    import dataclasses
    base = dataclasses.asdict(golden.lookup(hw_desc["arch"], hw_desc["instr"]).params)
    changed = {k: v for k, v in hw_desc["params"].items() if base.get(k) != v}
    if hw_desc.get("pipeline", "0") != "0":
        changed["pipeline"] = hw_desc["pipeline"]
    return changed or {"params": "unchanged"}


def cmd_lint(args) -> int:
    explicit = args.arch not in (None, "all") or args.instr not in (None, "all")
    instrs = golden.select(args.arch, args.instr)
    unit = unit_provider(args.unit, args.pipeline)
    root = bld.BUILD_ROOT / "lint"
    seen: dict = {}
    linted, missing, failing = 0, [], 0
    for ins in instrs:
        try:
            comp = unit(ins, args.lanes)
        except NoRTL as e:
            missing.append((ins, str(e)))
            continue
        text = bld.elaborate(comp)
        key = bld.normalise_verilog(text)
        if key in seen:
            print(f"{ins.arch:13s} {ins.name:42s} same RTL as {seen[key]}")
            continue
        seen[key] = f"{ins.arch} {ins.name}"
        rep = lnt.lint_unit(comp, root / bld.safe_name(ins.arch) / bld.safe_name(ins.name))
        linted += 1
        failing += not rep.ok
        print(f"{ins.arch:13s} {ins.name:42s} {rep.summary()}")
        for m in rep.active:
            print(f"    {m}")
    print(f"{linted} design(s) linted, {failing} with warnings; waivers and their reasons: {lnt.WAIVERS}")
    if missing:
        algs = sorted({i.algorithm for i, _ in missing})
        print(f"{len(missing)} instruction(s) without RTL yet (algorithms {', '.join(algs)})")
    if failing or (explicit and missing) or linted == 0:
        return 1
    return 0


def cmd_bench(args) -> int:
    """Co-simulation throughput: the stand-in unit and the real unit at several lane counts."""
    instrs = golden.select(args.arch, args.instr)
    resolve_vectors(args.vectors)
    if any(lanes < 1 for lanes in args.lanes_list):
        raise ValueError(f"--lanes must be >= 1 each, got {args.lanes_list}")
    units = [("standin", unit_provider("standin"), "bits")] + \
        ([] if args.standin_only else [("hw", unit_provider("hw"), args.vectors)])
    toolchain.setup()
    print(f"{'unit':8s} {'instruction':24s} {'lanes':>5s} {'vectors':>9s} {'build s':>8s} {'time s':>7s} "
          f"{'dot-adds/s':>11s} {'sim cycles/s':>12s}  status")
    status = 0
    for ins in instrs:
        for name, unit, kind in units:
            for lanes in args.lanes_list:
                cfg = cr.Config(n=args.n, lanes=lanes, progress=0, vectors=kind, rerun_with_waves=False,
                                stall=0.0, build_root=bld.BUILD_ROOT / "bench" if name == "standin" else None)
                r = cr.run_instruction(ins, cfg, unit)
                status |= not r.ok
                build = "cached" if r.build_source == "cached" else f"{r.build_seconds:.1f}"
                print(f"{name:8s} {ins.name:24s} {lanes:5d} {r.vectors:9d} {build:>8s} {r.seconds:7.2f} "
                      f"{r.rate:11,.0f} {r.cycles_per_s:12,.0f}  {r.status}", flush=True)
    return status


def cmd_toolchain(args) -> int:
    return toolchain.main()


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m cosim", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp):
        sp.add_argument("--seed", type=int, default=1, help="vector and stall seed (default 1)")
        sp.add_argument("--stall", type=float, default=cr.Config.stall,
                        help=f"valid/ready stall probability on each side, 0 <= p < 1 (default {cr.Config.stall:g})")
        sp.add_argument("--lanes", type=int, default=1, help="dot-adds per unit input (default 1)")
        sp.add_argument("--waves", action="store_true", help="dump an FST waveform (tracing build)")
        sp.add_argument("--waves-word", default=None, help=argparse.SUPPRESS)     # make's WAVES=yes|no|...
        sp.add_argument("--unit", default=None,
                        help="hw (default: hw.dot_add_unit), hw:pipeline=SPEC, hw:params=FIELD=VALUE,... "
                             "(golden.Params changes for the unit and its reference, e.g. "
                             "hw:params=specials=later_model; both: hw:pipeline=2,params=...), "
                             "or standin[:latency=N,ii=N,bug=0|1]")
        sp.add_argument("--pipeline", default=None, metavar="SPEC",
                        help="the hw unit's pipelining: a level 0..3 and/or FIELD=N, e.g. 2 or 2,align=2 (default 0)")
        sp.add_argument("--progress", type=float, default=cr.Config.progress,
                        help=f"seconds between progress lines (0: none; default {cr.Config.progress:g})")

    run = sub.add_parser("run", help="build and co-simulate matching instructions")
    run.add_argument("arch", help="architecture, several separated by commas, or all")
    run.add_argument("instr", nargs="?", default=None,
                     help="name or family, several separated by commas, or all (default: all)")
    run.add_argument("-n", type=cov.parse_count, default=None,
                     help="vectors per instruction (default: ~1 minute each and at least 100,000; 2,000 with --waves); "
                          "closure: with --vectors cover, the fewest vectors that hit every reachable bin")
    run.add_argument("--budget", type=float, default=None,
                     help="seconds per instruction when -n is not given, a positive number (default 60)")
    run.add_argument("--vectors", default="mixed",
                     help="generator: bits, normal, mixed (default), a registered name or module:function")
    run.add_argument("-j", "--jobs", type=int, default=1,
                     help="instructions co-simulated at once, each in its own processes (default 1)")
    run.add_argument("--simulator", choices=("verilator", "icarus"), default=None,
                     help="verilator (default) or icarus (Icarus Verilog through cocotb, cosim/icarus.py; "
                          "make's SIM=icarus)")
    cov.add_options(run)
    common(run)
    run.set_defaults(func=cmd_run)

    tc = sub.add_parser("tensor-core", help="co-simulate an architecture's opcode-selected tensor core")
    tc.add_argument("arch", help="architecture (one core each), several separated by commas, or all")
    tc.add_argument("instr", nargs="?", default=None,
                    help="only the instructions matching this name or family, or a comma list (default: all)")
    tc.add_argument("-n", type=int, default=None, help="dot-adds (default: ~1 minute and at least 100,000)")
    tc.add_argument("--budget", type=float, default=None, help="seconds when -n is not given, a positive number "
                    "(default 60)")
    tc.add_argument("--vectors", default="mixed",
                    help="generator: bits, normal, mixed (default), a registered name or module:function")
    tc.add_argument("--seed", type=int, default=1, help="vector and stall seed (default 1)")
    tc.add_argument("--stall", type=float, default=cr.Config.stall,
                    help=f"valid/ready stall probability on each side (default {cr.Config.stall:g})")
    tc.add_argument("--progress", type=float, default=cr.Config.progress, help="seconds between progress lines")
    tc.add_argument("--pipeline", default=None, metavar="SPEC",
                    help="the datapaths' pipelining: a level 0..3 and/or FIELD=N, e.g. 2 (default 0)")
    tc.set_defaults(func=cmd_tensor_core)

    rp = sub.add_parser("replay", help="rerun the vectors saved by a failing run")
    rp.add_argument("file", type=Path)
    common(rp)
    rp.set_defaults(func=cmd_replay)

    ln = sub.add_parser("lint", help="verilator --lint-only -Wall on the generated Verilog")
    ln.add_argument("arch", nargs="?", default="all",
                    help="architecture, several separated by commas, or all (default: all)")
    ln.add_argument("instr", nargs="?", default=None,
                    help="name or family, several separated by commas, or all (default: all)")
    ln.add_argument("--lanes", type=int, default=1, help="dot-adds per unit input (default 1)")
    ln.add_argument("--pipeline", default=None, metavar="SPEC",
                    help="the hw unit's pipelining: a level 0..3 and/or FIELD=N (default 0)")
    ln.add_argument("--unit", default=None,
                    help="hw (default: hw.dot_add_unit), or standin[:latency=N,ii=N,bug=0|1]")
    ln.set_defaults(func=cmd_lint)

    be = sub.add_parser("bench", help="co-simulation throughput (stand-in and real unit, several lane counts)")
    be.add_argument("arch", nargs="?", default="hopper",
                    help="architecture, several separated by commas, or all (default: hopper)")
    be.add_argument("instr", nargs="?", default="HGMMA.64xNx16.F32",
                    help="name or family, several separated by commas, or all (default: HGMMA.64xNx16.F32)")
    be.add_argument("-n", type=int, default=1_000_000, help="vectors per run (default 1,000,000)")
    be.add_argument("--lanes", dest="lanes_list", type=lambda t: [int(x) for x in t.split(",")], default=[1, 2, 4, 8],
                    help="comma-separated lane counts (default 1,2,4,8)")
    be.add_argument("--standin-only", action="store_true", help="only the stand-in unit")
    be.add_argument("--vectors", default="mixed",
                    help="generator for the real unit: bits, normal, mixed (default), a registered name or "
                         "module:function")
    be.set_defaults(func=cmd_bench)

    tc = sub.add_parser("toolchain", help="show the tools found")
    tc.set_defaults(func=cmd_toolchain)
    return p


def os_error_line(e: OSError) -> str:
    """One line for an OSError; one in the build folder says how to put the folder elsewhere."""
    where = e.filename or ""
    line = f"{where}: {e.strerror or e}" if where else str(e)
    root = build_dir()
    try:
        inside = Path(where).resolve().is_relative_to(root) if where else False
    except (OSError, ValueError):
        inside = False
    if inside or not where:
        line += (f" (the build folder {root} must be writable: set MMA_BUILD_DIR to another folder, "
                 "e.g. MMA_BUILD_DIR=/tmp/mma-build)")
    return line


def main(argv=None) -> int:
    bld.quiet_unused_designs()
    args = build_parser().parse_args(argv)
    try:
        if args.cmd != "toolchain":
            no_progress_limit()                     # a wrong MMA_COSIM_NO_PROGRESS: one line, before any build
            bld.check_build_root()
        return args.func(args)
    except (ValueError, TypeError, toolchain.ToolchainError, bld.BuildError, NoRTL) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:                            # a build folder that cannot be written, a full disk
        print(f"error: {os_error_line(e)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    exit_with(main)
