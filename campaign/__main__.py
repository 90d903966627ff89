"""Command line: ``python -m campaign run | report | replay | bench``.

Examples::

    python -m campaign run hopper HGMMA -n 10000000                 # the Verilator units, every core here
    python -m campaign run all all -n 1000000 --db build/campaign/all.sqlite --resume
    python -m campaign run hopper HMMA.16816.F32 --device golden:F=24   # a planted-fault drill
    python -m campaign run hopper HGMMA --scheduler tcp://head:8786  # a running dask cluster
    python -m campaign report build/campaign/campaign.sqlite
    python -m campaign report build/campaign/campaign.sqlite --coverage-json build/campaign/coverage.json
    python -m campaign replay build/campaign/campaign-replays/<id>/hopper_HMMA.16816.F32_block0.npz
"""

from __future__ import annotations

import argparse
import sqlite3
import sys

import golden
from golden.console import exit_with, on_interrupt
from golden.options import Parser, whole_number, yes_no_option
from golden.paths import build_dir

DEFAULT_DB = str(build_dir("campaign", "campaign.sqlite"))


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not v >= 0:
        raise argparse.ArgumentTypeError(f"must be seconds >= 0 (0: no progress lines), got {text}")
    return v


def cmd_run(args) -> int:
    from .engine import run
    from .report import report
    from .spec import STALL, Campaign, check_applies
    for option in ("lanes", "stall"):             # given to a device that would ignore it: refused
        if getattr(args, option) is not None:
            check_applies(option, getattr(args, option), args.device)
    if args.device.startswith("dut:"):           # the design's targets, ARCH/INSTR filtering them
        from .spec import dut_instructions
        pick = lambda x: None if x in (None, "", "all") else x  # noqa: E731
        instructions = dut_instructions(args.device, pick(args.arch), pick(args.instr))
    else:
        instructions = golden.select(args.arch, args.instr)
    c = Campaign.of(instructions, device=args.device, target=args.n,
                    vectors=args.vectors, seed=args.seed, block=args.block,
                    lanes=1 if args.lanes is None else args.lanes, unit=args.unit,
                    stall=STALL if args.stall is None else args.stall, cover_sample=args.cover_sample)
    # Ctrl-C ends the command through golden.console.exit_with: "interrupted", this note, status 130
    on_interrupt("the finished blocks are in the database; rerun with --resume (RESUME=1)")
    run(c, args.db, scheduler=args.scheduler, workers=args.workers, resume=args.resume, fresh=args.fresh,
        progress_s=args.progress)
    print()
    return report(args.db, only=c.id)


def cmd_report(args) -> int:
    from .report import report
    return report(args.db, coverage_json=args.coverage_json, coverage_html=args.coverage_html)


def cmd_replay(args) -> int:
    from .replay import replay
    return replay(args.file)


def cmd_bench(args) -> int:
    from .bench import main as bench
    return bench(args)


def build_parser() -> argparse.ArgumentParser:
    from .spec import COVER_SAMPLE, DEFAULT_BLOCK, DEVICES_HELP
    p = Parser(prog="python -m campaign",
                                description="Verification campaigns on dask: blocks of vectors, results in SQLite.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run (or resume) a campaign")
    r.add_argument("arch", help="architecture(s): a name, alias, comma list or all")
    r.add_argument("instr", help="instruction name(s) or families, a comma list, or all")
    r.add_argument("-n", type=whole_number(1), default=1_000_000, help="vectors per instruction (default 1000000)")
    r.add_argument("--device", default="rtl", help=f"device under test: {DEVICES_HELP}")
    r.add_argument("--vectors", default="mixed", help="vector generator (default mixed)")
    r.add_argument("--seed", type=whole_number(0), default=1)
    r.add_argument("--block", type=whole_number(1), default=DEFAULT_BLOCK,
                   help=f"vectors per block (default {DEFAULT_BLOCK})")
    r.add_argument("--lanes", type=whole_number(1), default=None,
                   help="dot-adds per cycle of the rtl device's unit (default 1; rtl only)")
    r.add_argument("--unit", default="hw", help="unit provider of the rtl device (hw, hw:pipeline=3, standin:...)")
    r.add_argument("--stall", type=float, default=None,
                   help="handshake stall probability of the rtl, core and dut devices (default 0.1)")
    r.add_argument("--db", default=DEFAULT_DB, help=f"results database (default {DEFAULT_DB})")
    r.add_argument("--resume", nargs="?", const=True, default=False, type=yes_no_option("RESUME"), metavar="YES|NO",
                   help="continue the campaign's rows in the database (also --resume=yes|no, make's RESUME=)")
    r.add_argument("--fresh", nargs="?", const=True, default=False, type=yes_no_option("FRESH"), metavar="YES|NO",
                   help="discard the campaign's rows in the database first (also --fresh=yes|no, make's FRESH=)")
    r.add_argument("--scheduler", help="a running dask scheduler (tcp://host:8786); default an embedded cluster")
    r.add_argument("--workers", type=whole_number(1), help="workers of the embedded cluster (default every core)")
    r.add_argument("--progress", type=_seconds, default=10.0, help="seconds between progress lines (0: none)")
    r.add_argument("--cover-sample", type=whole_number(0), default=None,
                   help=f"dot-adds of each block measured for coverage, a random sample (default: every vector "
                        f"on rtl, core and dut:, {COVER_SAMPLE} on the others; 0: none)")
    r.set_defaults(func=cmd_run)
    rp = sub.add_parser("report", help="the results table of a database (also while a campaign runs)")
    rp.add_argument("db", nargs="?", default=DEFAULT_DB)
    rp.add_argument("--coverage-json", metavar="FILE", help="write the coverage of the stored blocks as JSON")
    rp.add_argument("--coverage-html", metavar="FILE", help="write golden's coverage page (HTML)")
    rp.set_defaults(func=cmd_report)
    rr = sub.add_parser("replay", help="rerun a campaign's saved failing vectors on its device")
    rr.add_argument("file")
    rr.set_defaults(func=cmd_replay)
    b = sub.add_parser("bench", help="campaign throughput against workers, and golden's rates")
    b.add_argument("--instr", default="hopper:HMMA.16816.F32", help="ARCH:INSTR (default hopper:HMMA.16816.F32)")
    b.add_argument("--device", default="golden", help="device (default golden: golden against itself)")
    b.add_argument("--blocks", type=whole_number(1), default=64, help="blocks per measurement")
    b.add_argument("--workers", default=None, help="comma list of worker counts (default 1,2,every core)")
    b.set_defaults(func=cmd_bench)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from golden.device import DeviceError
    try:
        return args.func(args)
    except (ValueError, TypeError, DeviceError) as e:   # CampaignExists and CampaignBusy are ValueErrors
        print(f"error: {e}", file=sys.stderr)
        return 2
    except sqlite3.Error as e:
        print(f"error: results database: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    exit_with(main)
