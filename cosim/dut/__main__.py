"""Command line: ``python -m cosim.dut run | lint | ports | replay | export | bench``.

Examples::

    python -m cosim.dut run examples/dut/dotp_vr/unit.toml            # every target (make cosim DUT=...)
    python -m cosim.dut run unit.toml --arch ampere --instr HMMA.16816.F32 -n 100000 --report results.xml
    python -m cosim.dut run unit.toml --vectors cover -n closure --require-closed     # make coverage DUT=... CLOSED=yes
    python -m cosim.dut lint unit.toml                                 # make lint-rtl DUT=...
    python -m cosim.dut ports unit.toml                                # the top's ports, checked
    python -m cosim.dut signals unit.toml -n 8                         # the signal map, checked on a working design
    python -m cosim.dut replay build/cosim/failures/....npz --waves
    python -m cosim.dut export volta HMMA.884.F16.F16 build/hmma       # a hw unit as a DUT (--force: overwrite)
    python -m cosim.dut bench volta HMMA.884.F16.F16 -n 200000         # DUT path vs native, per vector
    python -m cosim.dut bench volta HMMA.884.F16.F16 --plant F=22      # ... both built with a planted fault
    python -m cosim.dut throughput tile/unit.toml lane/unit.toml       # devices side by side, the same dot-adds

Every wrong description, missing file, wrong port, compile error or option out of range is one ``error:``
line, exit 2, before anything is built; a file the command will write (``--report``, an export's files) is
checked before the work too.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from golden.console import OutputError, check_output, exit_with  # noqa: E402
from golden.options import Parser, whole_number, yes_no_option  # noqa: E402

from .. import build as bld  # noqa: E402
from .. import coverage as cov  # noqa: E402
from .. import table, toolchain  # noqa: E402
from ..failures import FailureFileError  # noqa: E402
from ..scoring import Config, check_budget  # noqa: E402
from ..session import no_progress_limit  # noqa: E402
from ..units import NoRTL  # noqa: E402
from .description import DescriptionError  # noqa: E402


def _config(args) -> Config:
    check_budget(args.budget)
    if not 0.0 <= args.stall < 1.0:
        raise ValueError(f"--stall must be in [0, 1), got {args.stall}")
    from golden.streams import resolve
    resolve(args.vectors)                        # an unknown generator: one line, before any build
    if args.n == cov.CLOSURE and args.vectors != "cover":
        raise ValueError(f"-n {cov.CLOSURE} sizes a run to the solved closure of --vectors cover (N=closure with "
                         f"VECTORS=cover); got --vectors {args.vectors}: give -n a number or --vectors cover")
    return Config(n=args.n, budget_s=args.budget, min_n=args.min_n, seed=args.seed, stall=args.stall,
                  waves=args.waves, progress=0.0 if args.quiet else 15.0, vectors=args.vectors,
                  coverage=getattr(args, "coverage", False), coverage_sample=getattr(args, "coverage_sample", None))


def cmd_run(args) -> int:
    from .. import icarus
    from .. import junit as cosim_junit
    from . import junit
    from .builds import prepare
    from .run import run_target
    sim = icarus.choose(args.simulator)
    if args.min_n is None:
        args.min_n = icarus.MIN_VECTORS if sim == "icarus" else 100_000
    cfg = _config(args)
    if sim == "icarus":
        icarus.find_iverilog()
        if args.waves:
            raise ValueError("waveforms are not supported under Icarus (SIM=icarus): run WAVES=1 under Verilator")
        cfg.rerun_with_waves = False
    cov.check_options(args)
    report = args.report
    bld.check_build_root()
    prep = prepare(args.description, args.arch, args.instr)
    if cfg.coverage:
        args.coverage_dir = cov.report_folder(args, prep.desc.name)
    print(f"{prep.desc.name}: {prep.desc.top} ({prep.desc.handshake.kind.value}), {len(prep.pairs)} target(s)")
    print(table.header(cfg.coverage), flush=True)
    results = []
    for target, ins in prep.pairs:
        dr = run_target(prep, target, ins, cfg)
        results.append(dr)
        print(table.row(dr.result, target_name(target, ins), coverage=cfg.coverage), flush=True)
        said = [f"params {target.params}" if target.params else "", f"{ins.arch} {ins.name}" if target.custom else "",
                " ".join(f"{k}={v}" for k, v in target.pins.items())]
        said = [x for x in said if x]
        head = f"target {prep.desc.targets.index(target) + 1}: " if said else ""
        said = "; ".join(([head + "; ".join(said)] if said else []) + dr.notes)
        if said:
            print(f"{'':13s} ({said})")
    status = table.summarize([d.result for d in results])
    if cfg.coverage:
        meta = cov.run_meta(design=str(prep.desc.path), vectors=cfg.vectors, n=cfg.n, seed=cfg.seed, stall=cfg.stall,
                            coverage_sample=cfg.coverage_sample)
        cov.report_run([d.result for d in results], title=f"python -m cosim.dut run {args.description}",
                       meta=meta, folder=args.coverage_dir, table=args.coverage_table)
        if args.require_closed:
            status |= cov.require_closed([d.result for d in results])
    # the report's path was checked before the run; the table above is kept whatever happens
    if report is not None and cosim_junit.write_or_say(report, lambda: junit.write(report, prep, results)):
        return 2
    return status


def target_name(target, ins) -> str:
    """What the table calls a target: its label, an instruction of your own by its shape and formats."""
    if target.label:
        return target.label
    if target.custom:
        return f"k{ins.k} {ins.a_format}*{ins.b_format}+{ins.c_format}->{ins.d_format}"
    return ins.name


def cmd_lint(args) -> int:
    from .lint import lint
    return lint(args.description)


def cmd_ports(args) -> int:
    from .builds import prepare
    prep = prepare(args.description)
    for p in prep.ports.values():
        print(f"{p.name:24s} {p.describe()}")
    print(f"{prep.desc.path}: every port the description uses is there, with the right direction and width")
    return 0


def cmd_signals(args) -> int:
    from .builds import prepare
    from .signals import check_map
    return check_map(prepare(args.description, args.arch, args.instr), _config(args), n=args.n or 8)


def cmd_replay(args) -> int:
    from .run import replay
    dr = replay(args.file, Config(waves=args.waves, seed=args.seed))
    r = dr.result
    print(table.HEADER)
    print(table.row(r))
    if r.waves_file:
        print(f"waves: {r.waves_file}")
    return 0 if r.ok else 1


def cmd_export(args) -> int:
    import golden

    from .export import DESCRIPTION, MODULE, export
    ins = golden.lookup(args.arch, args.instr)
    folder = Path(args.folder)
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"FOLDER={args.folder}: is a file; give the folder to write {DESCRIPTION} and "
                          f"{MODULE}.v into")
    for name in (DESCRIPTION, f"{MODULE}.v"):          # before the unit is elaborated
        path = folder / name
        if path.is_file() and not args.force:
            raise OutputError(f"{path} already exists and would be overwritten; give another folder, remove it, "
                              "or add --force to overwrite it")
        check_output(path, "FOLDER")
    path = export(ins, folder)
    print(f"wrote {path} and {path.parent / f'{MODULE}.v'}")
    return 0


def cmd_throughput(args) -> int:
    from .throughput import compare
    if not 0.0 <= args.stall < 1.0:
        raise ValueError(f"--stall must be in [0, 1), got {args.stall}")
    return compare(args.descriptions, n=args.n or 1_000_000, seed=args.seed, stall=args.stall)


def cmd_bench(args) -> int:
    from .bench import bench
    return bench(args.arch, args.instr, n=args.n, seed=args.seed, plant=args.plant)


def main(argv=None) -> int:
    bld.quiet_unused_designs()
    ap = Parser(prog="python -m cosim.dut", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="co-simulate a described design against golden")
    r.add_argument("description")
    r.add_argument("--arch", default=None)
    r.add_argument("--instr", default=None)
    r.add_argument("-n", type=cov.parse_count, default=None, help="vectors per target, at least 1 (default: "
                   "--budget seconds); closure: with --vectors cover, the fewest that hit every reachable bin")
    r.add_argument("--budget", type=float, default=60.0, help="seconds per target when -n is not given (default 60)")
    r.add_argument("--min-n", type=whole_number(0), default=None,
                   help="vectors per target at least, when the budget runs out first (default 100,000; "
                        "1,000 under Icarus)")
    r.add_argument("--simulator", choices=("verilator", "icarus"), default=None,
                   help="verilator (default) or icarus (cosim/icarus.py; make's SIM=icarus)")
    r.add_argument("--seed", type=whole_number(0), default=1)
    r.add_argument("--stall", type=float, default=0.1)
    r.add_argument("--waves", nargs="?", const=True, default=False, type=yes_no_option("WAVES"), metavar="YES|NO",
                   help="build with waveforms and trace the whole run (also --waves=yes|no, make's WAVES=)")
    r.add_argument("--vectors", default="mixed", help="generator: a name (mixed, bits, normal, structured, all) or "
                   "module:function; with mixed, a clean run ends with 4,096 structured vectors (the structured pass)")
    cov.add_options(r)
    r.add_argument("--quiet", action="store_true")
    for name in ("lint", "ports"):
        p = sub.add_parser(name)
        p.add_argument("description")
    p = sub.add_parser("signals", help="check a description's signal map on random dot-adds of a design that works")
    p.add_argument("description")
    p.add_argument("--arch", default=None)
    p.add_argument("--instr", default=None)
    p.add_argument("-n", type=whole_number(1), default=None, help="dot-adds per target, at least 1 (default 8)")
    p.add_argument("--seed", type=whole_number(0), default=1)
    p.add_argument("--vectors", default="normal", help="generator (default normal: finite operands, whose every "
                   "stage is the datapath's)")
    p.set_defaults(budget=60.0, min_n=0, stall=0.0, waves=False, quiet=True)
    p = sub.add_parser("replay")
    p.add_argument("file")
    p.add_argument("--waves", action="store_true")
    p.add_argument("--seed", type=whole_number(0), default=1)
    p = sub.add_parser("export", help="a hw unit as a design of one's own: FOLDER/unit.toml and FOLDER/mma_unit.v")
    p.add_argument("arch")
    p.add_argument("instr")
    p.add_argument("folder")
    p.add_argument("--force", action="store_true", help="overwrite FOLDER/unit.toml and FOLDER/mma_unit.v when they "
                   "exist (without it, existing files are refused)")
    p = sub.add_parser("throughput", help="devices side by side on the same dot-adds: per clock and per second")
    p.add_argument("descriptions", nargs="+")
    p.add_argument("-n", type=whole_number(1), default=None, help="dot-adds per target, at least 1 (default 1,000,000)")
    p.add_argument("--seed", type=whole_number(0), default=1)
    p.add_argument("--stall", type=float, default=0.1)
    p = sub.add_parser("bench")
    p.add_argument("arch")
    p.add_argument("instr")
    p.add_argument("-n", type=whole_number(1), default=200_000, help="vectors, at least 1 (default 200,000)")
    p.add_argument("--seed", type=whole_number(0), default=1)
    p.add_argument("--plant", default=None, metavar="FIELD=VALUE",
                   help="build both units with this Params change (e.g. F=22), score both against the catalog")
    args = ap.parse_args(argv)
    try:
        no_progress_limit()                      # a wrong MMA_COSIM_NO_PROGRESS: one line, before any build
        return {"run": cmd_run, "lint": cmd_lint, "ports": cmd_ports, "replay": cmd_replay, "export": cmd_export,
                "bench": cmd_bench, "signals": cmd_signals, "throughput": cmd_throughput}[args.cmd](args)
    except (DescriptionError, FailureFileError, bld.BuildError, toolchain.ToolchainError, ValueError, KeyError,
            NotImplementedError, NoRTL) as e:          # the last two: the RTL refuses a planted change
        msg = str(e).strip("\"'").splitlines()[0]
        print(f"error: {msg}", file=sys.stderr)
        return 2
    except OSError as e:                         # a folder that cannot be written, a full disk
        where = f"{e.filename}: " if e.filename else ""
        print(f"error: {where}{e.strerror or e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    exit_with(main)
