"""The board against the host: how many host cores the golden model needs to keep up with one board.

``python -m fpga bench [ARCH INSTR ...] [--reports DIR ...] [--seconds S] [--jobs N]`` (``make
fpga-bench``) takes, for each unit, its build report (``build/fpga/<board>/<design>/report.json``;
a unit named on the command line is built first when its report is missing, or always with
``--build``) and prints, side by side:

* the board's rate: lanes x the design clock, in dot-adds per second.  The design clock is the
  frequency the bitstream was built and timed for (the board's oscillator or its PLL output) and
  that the report says it meets; nextpnr's Fmax above it is headroom the board does not use, so it
  is shown but not multiplied.  A build that misses its clock has no rate (``timing FAIL``).
* golden's rate on one host core for the same stream: ``golden.dot_add`` (the bit API) on batches
  of :data:`BATCH` rows, as a host recomputing a board's results would call it, for
  ``golden.vectors.random_operands`` kinds ``"normal"`` (finite values with nearby exponents) and
  ``"bits"`` (uniform bit patterns); the stream is half of each, so its rate is their harmonic
  mean.  A tensor core's stream is its instructions in equal shares.
* host cores needed: board rate / golden's stream rate per core.

``--jobs N`` also runs N copies of golden's measurement at once in a process pool and reports their
summed rate against N times one core's (how golden scales over this machine's cores).
``--markdown FILE`` writes the table with the machine (``lscpu`` model name and cores) and the
command that made it.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

import golden
from golden.vectors import random_operands

__all__ = ["BATCH", "KINDS", "GoldenRate", "golden_rate", "BenchRow", "row_of", "table", "markdown",
           "machine", "add_arguments", "main"]

BATCH = 16_384                 # rows per golden.dot_add call: a board's few RUNs' worth
KINDS = ("normal", "bits")


@dataclass(frozen=True)
class GoldenRate:
    """golden's dot-adds per second on one core, per operand kind, and for the half-and-half stream."""

    by_kind: dict
    rows: int                  # dot-adds timed in all
    seconds: float

    @property
    def stream(self) -> float:
        """Equal numbers of each kind: the harmonic mean of the kinds' rates."""
        return len(self.by_kind) / sum(1 / r for r in self.by_kind.values())


def _time_kind(ins, kind: str, seconds: float, batch: int, seed: int) -> tuple[int, float]:
    """(rows, seconds) of ``golden.dot_add`` on one pre-made batch, called until ``seconds`` pass
    (at least twice, after one untimed warm-up call)."""
    a, b, c, sa, sb = random_operands(ins, batch, np.random.default_rng(seed), kind)
    golden.dot_add(ins, a, b, c, sa, sb)
    rows, spent, calls = 0, 0.0, 0
    while spent < seconds or calls < 2:
        started = time.perf_counter()
        golden.dot_add(ins, a, b, c, sa, sb)
        spent += time.perf_counter() - started
        rows, calls = rows + batch, calls + 1
    return rows, spent


def golden_rate(instructions, seconds: float = 2.0, batch: int = BATCH, seed: int = 1) -> GoldenRate:
    """golden's rate on this process's core for a stream of ``instructions`` (equal shares), each
    kind timed for ``seconds`` split among the instructions."""
    if seconds <= 0 or batch < 1:
        raise ValueError(f"seconds must be positive and batch at least 1, not {seconds!r} and {batch!r}")
    rows_total, spent_total, by_kind = 0, 0.0, {}
    for kind in KINDS:
        per_dot_add = 0.0                  # seconds per dot-add of the mix: the mean over instructions
        for ins in instructions:
            rows, spent = _time_kind(ins, kind, seconds / len(instructions), batch, seed)
            per_dot_add += spent / rows / len(instructions)
            rows_total, spent_total = rows_total + rows, spent_total + spent
        by_kind[kind] = 1 / per_dot_add
    return GoldenRate(by_kind, rows_total, spent_total)


def _pooled_worker(arg) -> float:
    names, seconds, batch, seed = arg
    return golden_rate([golden.lookup(a, n) for a, n in names], seconds, batch, seed).stream


def pooled_rate(instructions, jobs: int, seconds: float, batch: int = BATCH) -> float:
    """The summed stream rate of ``jobs`` processes measuring at once (each its own seed)."""
    names = [(i.arch, i.name) for i in instructions]
    with ProcessPoolExecutor(jobs) as pool:
        return sum(pool.map(_pooled_worker, [(names, seconds, batch, seed) for seed in range(1, jobs + 1)]))


# --- rows and tables -------------------------------------------------------------------------------

@dataclass(frozen=True)
class BenchRow:
    """One unit: its build report's facts and golden's rate."""

    unit: str
    algorithm: str
    lanes: int
    multipliers: str
    report: object             # fpga.build.BuildReport
    golden: GoldenRate
    pooled: float | None = None
    jobs: int = 1

    @property
    def board_rate(self) -> float | None:
        """lanes x design clock (dot-adds/s), or None when the build misses its clock."""
        if not self.report.timing_met:
            return None
        return self.lanes * self.report.clock_mhz * 1e6

    @property
    def cores(self) -> float | None:
        rate = self.board_rate
        return None if rate is None else rate / self.golden.stream


def _instructions(report) -> list:
    if not report.unit:
        raise ValueError(f"the report in {report.build_dir} does not say which unit it built "
                         f"(built before fpga.bench existed): rebuild it, e.g. python -m fpga build ARCH INSTR")
    arch, names = report.unit.split(" ", 1)
    return [golden.lookup(arch, n) for n in names.split(",")]


def row_of(report, seconds: float, jobs: int = 1, batch: int = BATCH) -> BenchRow:
    """Measure golden for the unit of ``report``; a :class:`BenchRow`."""
    found = _instructions(report)
    rate = golden_rate(found, seconds, batch)
    pooled = pooled_rate(found, jobs, seconds, batch) if jobs > 1 else None
    algorithms = ",".join(dict.fromkeys(i.algorithm for i in found))
    return BenchRow(report.unit, algorithms, report.lanes or 1, report.multipliers, report, rate, pooled, jobs)


COLUMNS = ("unit", "algorithm", "lanes", "multipliers", "LUT4", "FF", "DSP", "EBR", "design clock", "Fmax",
           "board dot-adds/s", "golden normal/s", "golden bits/s", "golden stream/s (1 core)",
           "host cores per board")


def _cells(r: BenchRow) -> list[str]:
    rep = r.report
    rate, cores = r.board_rate, r.cores
    cells = [r.unit, r.algorithm, str(r.lanes), r.multipliers, f"{rep.used.lut4:,}", f"{rep.used.ff:,}",
             f"{rep.used.dsp}", f"{rep.used.ebr}", f"{rep.clock_mhz:g} MHz",
             f"{rep.fmax_mhz:.2f} MHz" + ("" if rep.timing_met else " (FAIL)"),
             "timing FAIL" if rate is None else f"{rate:,.0f}",
             f"{r.golden.by_kind['normal']:,.0f}", f"{r.golden.by_kind['bits']:,.0f}", f"{r.golden.stream:,.0f}",
             "-" if cores is None else f"{cores:,.1f}"]
    return cells


def _pool_line(r: BenchRow) -> str | None:
    if r.pooled is None:
        return None
    return (f"{r.unit}: {r.jobs} processes at once {r.pooled:,.0f} dot-adds/s, "
            f"{r.pooled / (r.jobs * r.golden.stream):.0%} of {r.jobs} x one core")


def table(rows: list[BenchRow]) -> str:
    """The rows as aligned text."""
    grid = [list(COLUMNS)] + [_cells(r) for r in rows]
    widths = [max(len(line[i]) for line in grid) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
             for line in grid]
    lines += [line for line in map(_pool_line, rows) if line]
    return "\n".join(lines) + "\n"


def machine() -> str:
    """``lscpu``'s model name and the cores this process may use, e.g. ``AMD EPYC 7B13, 2 cores``."""
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"}).stdout
        model = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), "")
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model or platform.processor() or 'unknown CPU'}, {cores} cores"


def markdown(rows: list[BenchRow], command: str, seconds: float, when: str | None = None) -> str:
    """The table in markdown with the machine, the tools and the command that made it."""
    tools = sorted({"; ".join(f"{t} {v}" for t, v in r.report.tools.items()) for r in rows})
    lines = ["# The board against the host (`python -m fpga bench`)", "",
             f"Made by `{command}` on {when or date.today().isoformat()}; host: {machine()}; Python "
             f"{platform.python_version()}, numpy {np.__version__}; FPGA tools: {', '.join(tools) or '-'}.", "",
             "Board rate = lanes x design clock (the clock the bitstream is timed for and meets; Fmax above it "
             "is not used). golden = `golden.dot_add` on batches of "
             f"{BATCH:,} rows on one core, {seconds:g} s per operand kind; stream = half `normal`, half `bits` "
             "(harmonic mean). Host cores per board = board rate / golden stream rate.", "",
             "| " + " | ".join(COLUMNS) + " |",
             "|" + "|".join("---" if i < 4 else "---:" for i in range(len(COLUMNS))) + "|"]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    pools = [line for line in map(_pool_line, rows) if line]
    if pools:
        lines += ["", "Scaling of golden over this machine's cores (a process pool):", ""] + [f"- {p}" for p in pools]
    return "\n".join(lines) + "\n"


# --- command line ----------------------------------------------------------------------------------

def add_arguments(ap: argparse.ArgumentParser) -> None:
    from .boards import BOARDS
    ap.add_argument("units", nargs="*", metavar="ARCH INSTR", help="units, as pairs: hopper HGMMA.64xNx16.F32 ...")
    ap.add_argument("--reports", nargs="+", default=[], metavar="DIR",
                    help="build folders (or their report.json) to take as they are")
    ap.add_argument("--board", default="ulx3s-85f", help=f"for named units: one of {', '.join(BOARDS)}")
    ap.add_argument("--lanes", default="1", help="for named units: lanes, or max (default 1)")
    ap.add_argument("--multipliers", default="dsp", choices=("dsp", "lut", "auto"), help="for named units")
    ap.add_argument("--build", action="store_true", help="build named units even when a report exists")
    ap.add_argument("--seconds", type=float, default=2.0, help="golden's timing per unit and operand kind (default 2)")
    ap.add_argument("--jobs", type=int, default=1, help="also time N golden processes at once (scaling check)")
    ap.add_argument("--markdown", metavar="FILE", help="write the table as markdown (docs/fpga/benchmark.md)")


def _named_units(units: list[str]) -> list[tuple[str, str]]:
    if len(units) % 2:
        raise ValueError(f"units come in pairs ARCH INSTR; {units[-1]!r} has no instruction")
    return [(units[n], units[n + 1]) for n in range(0, len(units), 2)]


def _report_at(path: str):
    from .build import BuildReport
    file = Path(path) / "report.json" if Path(path).is_dir() else Path(path)
    if not file.exists():
        raise ValueError(f"no build report at {file}: build it (python -m fpga build ARCH INSTR) or name "
                         f"the folder holding its report.json")
    return BuildReport.from_json(file.read_text())


def _report_of(arch: str, instr: str, args, build_unit=None):
    """The report of a named unit's build (:func:`fpga.builds.build_board`, or ``build_unit(request,
    reuse=)``): an unchanged earlier build is reused unless ``--build``."""
    from .builds import BuildRequest, build_board
    from .fit import parse_lanes
    request = BuildRequest(arch, instr, board=args.board, lanes=parse_lanes(args.lanes), multipliers=args.multipliers)
    return (build_unit or build_board)(request, reuse=not args.build)[0]


def main(args, build_unit=None) -> int:
    """``python -m fpga bench``; a named unit is built as ``python -m fpga build`` would
    (:func:`fpga.builds.build_board`; ``build_unit`` in its place, for a test)."""
    if args.seconds <= 0 or args.jobs < 1:
        raise ValueError(f"--seconds must be positive and --jobs at least 1, not {args.seconds} and {args.jobs}")
    named = _named_units(args.units)
    if not named and not args.reports:
        raise ValueError("name units (ARCH INSTR pairs) or build folders (--reports DIR ...) to benchmark")
    reports = [_report_at(p) for p in args.reports] + [_report_of(a, i, args, build_unit) for a, i in named]
    rows = []
    print(f"golden on one core of {machine()}, {args.seconds:g} s per unit and kind", file=sys.stderr)
    for report in reports:
        rows.append(row_of(report, args.seconds, args.jobs))
        print(f"  {report.unit}: golden {rows[-1].golden.stream:,.0f} dot-adds/s", file=sys.stderr, flush=True)
    print(table(rows), end="")
    if args.markdown:
        command = "python -m fpga bench " + " ".join(shlex.quote(a) for a in sys.argv[2:]) \
            if sys.argv[1:2] == ["bench"] else "python -m fpga bench"
        Path(args.markdown).write_text(markdown(rows, command, args.seconds))
        print(f"wrote {args.markdown}", file=sys.stderr)
    return 0
