"""The board against the host: how many host cores check one board lane in real time, and the targets.

``python -m fpga bench [ARCH INSTR ...] [--targets] [--clock MHZ] [--reports DIR ...] [--seconds S] [--jobs N]
[--markdown FILE]`` (``make fpga-bench``) prints, for each unit, side by side:

* the board's rate per lane: the design clock, one dot-add a cycle.  The design clock is the frequency
  the bitstream was built and timed for (the board's oscillator or its PLL output); nextpnr's Fmax
  above it is headroom the board does not use.  It comes from the unit's build report
  (``build/fpga/<board>/<design>/report.json``; a named unit is built first when its report is
  missing, or always with ``--build``; a build that misses its clock has no rate, ``timing FAIL``),
  or from ``--clock MHZ`` with no build at all (a clock such a build met: docs/fpga/benchmark.md).
* the host's check rate on one core, pinned to it (``os.sched_setaffinity``) for the timed part:
  what the host recomputes for the self-test (``make fpga-selftest``), the on-chip generator's
  operands, golden's results and the block signatures
  (:func:`fpga.host.selftest.check.expected_signatures`), on blocks of :data:`BLOCK_LEN` entries, for
  the generator's two kinds (``normal`` and ``bits``; the stream is half of each, so its rate is
  their harmonic mean), timed as this thread's CPU time, on three paths:
    - the numpy path (:mod:`fpga.board.selftest.model`, golden's numpy path): the reference;
    - the compiled stages one after another (:mod:`fpga.host.selftest.fast`, golden's numba kernels);
    - the fused path (:func:`fpga.host.selftest.fast.fused_signatures`: generator, golden's row kernel
      and signature in one compiled pass a block), what the self-test runs, with its stages' own
      rates (generator, golden, signatures: the fused kernel stopped after each) to say what limits it.
* host cores per board lane = lane rate / check rate per core, and the target (:data:`TARGETS`, by
  algorithm) with PASS or FAIL; the fused path on ``--jobs`` cores at once (default every core this
  process may use), wall time: how many lanes this host checks in real time.

``--targets``: the units of :data:`TARGET_UNITS` (when none are named), at :data:`TARGET_CLOCK_MHZ`
(unless ``--clock``), and only the fused path on one core unless ``--markdown`` asks for the whole
comparison: the rows ``make bench`` prints.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np

import golden

from ..board.selftest.model import SelfTestSpec
from .selftest.check import STAGES, STEP_ROWS, expected_signatures, host_path
from .selftest.fast import fused_handles, fused_signatures
from .selftest.modes import M_FULL, M_GENERATE, M_GOLDEN

__all__ = ["BLOCK_LEN", "BATCH", "KINDS", "TARGETS", "TARGET_UNITS", "TARGET_CLOCK_MHZ", "Rate", "check_rate",
           "fused_stages", "pinned", "BenchRow", "row_of", "table", "target_table", "markdown", "machine",
           "add_arguments", "main"]

BLOCK_LEN = 1024               # entries per self-test block (the self-test's default)
BATCH = 16 * BLOCK_LEN         # dot-adds per timed call: one SELFTEST request's worth (16 blocks, one lane)
KINDS = ("normal", "bits")
# host cores per 75 MHz-class board lane the check must fit in, by algorithm (the families: CoFDRDA is
# FDRDA's, CoGFDRDA GFDRDA's)
TARGETS = {"FDA": 4, "CoFDA": 4, "FDRDA": 4, "CoFDRDA": 4, "SFMA": 4, "GPS": 4, "GDFS": 8, "GFDRDA": 8, "CoGFDRDA": 8}
# one unit per algorithm of TARGETS: what --targets measures when no unit is named
TARGET_UNITS = (("hopper", "HGMMA.64xNx16.F32"), ("ampere", "HMMA.16816.F32"), ("blackwell", "UTCOMMA.MXF4.E8"),
                ("cdna3", "v_mfma_f32_32x32x8_f16"), ("cdna3", "v_mfma_f32_16x16x16_f16"),
                ("cdna3", "v_mfma_f32_32x32x16_fp8_fp8"), ("cdna3", "v_mfma_f32_16x16x32_fp8_fp8"),
                ("cdna2", "v_mfma_f32_32x32x8_f16"), ("cdna3", "v_mfma_f32_16x16x4_f32"))
TARGET_CLOCK_MHZ = 75.0        # the ECP5 builds' design clock (docs/fpga/benchmark.md)
FUSED_STAGES = ("generator", "golden", "signatures")


@contextlib.contextmanager
def pinned(threads):
    """The calling thread on one core while inside, when ``threads`` is 1 (the others' load then does
    not move it between cores); its affinity restored after.  Nothing where the OS has no affinity."""
    if threads != 1 or not hasattr(os, "sched_setaffinity"):
        yield
        return
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {max(allowed)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def harmonic(rates) -> float:
    """The rate of a stream made of equal shares at ``rates``."""
    rates = list(rates)
    return len(rates) / sum(1 / r for r in rates)


@dataclass(frozen=True)
class Rate:
    """Dot-adds checked per second, per operand kind, and per stage (the stages' own rates)."""

    by_kind: dict
    rows: int                  # dot-adds timed in all
    seconds: float
    stages: dict = field(default_factory=dict)

    @property
    def stream(self) -> float:
        """Equal numbers of each kind: the harmonic mean of the kinds' rates."""
        return harmonic(self.by_kind.values())


def _time_kind(ins, kind: str, path: str, seconds: float, batch: int, threads, stages: dict) -> tuple[int, float]:
    """(rows, seconds) of the host's check of successive blocks, after one untimed warm-up call (the
    first call compiles), called until ``seconds`` pass and at least twice.  One thread: its CPU time
    (the machine's other load is not counted); several: wall time."""
    spec = SelfTestSpec(ins, 1, 1, kind, min(BLOCK_LEN, batch))
    blocks = max(1, batch // spec.block_len)
    expected_signatures(spec, 0, blocks, backend=path, threads=threads)
    clock = time.thread_time if threads == 1 else time.perf_counter
    rows, spent, calls = 0, 0.0, 0
    with pinned(threads):
        while spent < seconds or calls < 2:
            calls += 1
            started = clock()
            expected_signatures(spec, calls * blocks, blocks, backend=path, threads=threads, stages=stages)
            spent += clock() - started
            rows += blocks * spec.block_len
    return rows, spent


def check_rate(instructions, path: str, seconds: float = 2.0, batch: int = BATCH, threads: int | None = 1) -> Rate:
    """The host's self-test check rate for a stream of ``instructions`` (equal shares) on ``path``
    (:data:`fpga.host.selftest.check.HOST_PATHS`) and ``threads`` cores (one: pinned), each kind timed
    for ``seconds`` split among the instructions."""
    if seconds <= 0 or batch < 1:
        raise ValueError(f"seconds must be positive and batch at least 1, not {seconds!r} and {batch!r}")
    rows_total, spent_total, by_kind, stages = 0, 0.0, {}, {}
    for kind in KINDS:
        per_dot_add = 0.0                  # seconds per dot-add of the mix: the mean over instructions
        for ins in instructions:
            rows, spent = _time_kind(ins, kind, path, seconds / len(instructions), batch, threads, stages)
            per_dot_add += spent / rows / len(instructions)
            rows_total, spent_total = rows_total + rows, spent_total + spent
        by_kind[kind] = 1 / per_dot_add
    return Rate(by_kind, rows_total, spent_total, {s: rows_total / stages[s] for s in STAGES if stages.get(s)})


def _fused_seconds(spec, blocks: int, mode: int, seconds: float) -> tuple[int, float]:
    """(rows, CPU seconds) of the fused kernel in ``mode`` on this thread, pinned, after a warm-up call."""
    fused_signatures(spec, 0, blocks, threads=1, mode=mode)
    rows, spent, calls = 0, 0.0, 0
    with pinned(1):
        while spent < seconds or calls < 2:
            calls += 1
            started = time.thread_time()
            fused_signatures(spec, calls * blocks, blocks, threads=1, mode=mode)
            spent += time.thread_time() - started
            rows += blocks * spec.block_len
    return rows, spent


def fused_stages(instructions, seconds: float = 2.0, batch: int = BATCH) -> dict:
    """The fused path's stages' own rates on one core (``{stage: dot-adds/s}``, :data:`FUSED_STAGES`):
    the kernel stopped after the generator, after golden, and whole; a stage's time is the
    difference (absent where the machine's noise makes it negative).  Empty where the fused path
    does not take an instruction."""
    if not all(fused_handles(i) for i in instructions):
        return {}
    per = {m: 0.0 for m in (M_GENERATE, M_GOLDEN, M_FULL)}      # seconds per dot-add of the mix
    for kind in KINDS:
        for ins in instructions:
            spec = SelfTestSpec(ins, 1, 1, kind, min(BLOCK_LEN, batch))
            for m in per:
                rows, spent = _fused_seconds(spec, max(1, batch // spec.block_len), m,
                                             seconds / len(instructions) / len(per))
                per[m] += spent / rows / len(instructions) / len(KINDS)
    own = {"generator": per[M_GENERATE], "golden": per[M_GOLDEN] - per[M_GENERATE],
           "signatures": per[M_FULL] - per[M_GOLDEN]}
    return {k: 1 / v for k, v in own.items() if v > 0}


# --- rows and tables -------------------------------------------------------------------------------

@dataclass(frozen=True)
class BenchRow:
    """One unit: its design clock (from a build report or ``--clock``) and the host's check rates on
    one core (``before``: numpy, ``staged``: the compiled stages, ``after``: fused; None where not
    measured), the fused stages' own rates, and the fused path on ``jobs`` cores."""

    unit: str
    algorithm: str
    lanes: int
    clock_mhz: float
    before: Rate | None        # numpy path, one core
    after: Rate                # fused path (or the compiled stages where it does not take the unit), one core
    all_cores: float | None = None    # fused path on ``jobs`` cores, wall time
    jobs: int = 1
    report: object = None      # fpga.toolchain.build.BuildReport, or None (``--clock``: not built)
    staged: Rate | None = None        # the compiled stages one after another, one core
    stages: dict = field(default_factory=dict)    # the fused path's stages' own rates (fused_stages)

    @property
    def lane_rate(self) -> float | None:
        """Dot-adds per second of one lane (its design clock), or None when the build misses it."""
        if self.report is not None and not self.report.timing_met:
            return None
        return self.clock_mhz * 1e6

    def cores(self, rate: Rate | None) -> float | None:
        """Host cores per board lane at ``rate`` per core."""
        lane = self.lane_rate
        return None if lane is None or rate is None else lane / rate.stream

    @property
    def lanes_checked(self) -> float | None:
        """Lanes this host checks in real time on ``jobs`` cores."""
        lane = self.lane_rate
        return None if lane is None or self.all_cores is None else self.all_cores / lane

    @property
    def target(self) -> int | None:
        """Host cores a lane may take (:data:`TARGETS`; a unit of several algorithms: the loosest), or
        None for an algorithm without one."""
        found = [TARGETS[a] for a in self.algorithm.split(",") if a in TARGETS]
        return max(found) if found else None

    @property
    def verdict(self) -> str:
        """``PASS`` (the fused path's cores per lane within the target), ``FAIL``, or ``-`` (no target
        or no lane rate)."""
        cores = self.cores(self.after)
        if cores is None or self.target is None:
            return "-"
        return "PASS" if cores <= self.target else "FAIL"


def _instructions(unit: str, where: str) -> list:
    if not unit:
        raise ValueError(f"the report in {where} does not say which unit it built "
                         f"(built before fpga.host.bench existed): rebuild it, e.g. python -m fpga build ARCH INSTR")
    arch, names = unit.split(" ", 1)
    return [golden.lookup(arch, n) for n in names.split(",")]


def row_of(unit: str, clock_mhz: float, seconds: float, *, lanes: int = 1, jobs: int | None = None,
           batch: int | None = None, report=None, compare: bool = True) -> BenchRow:
    """Measure the host for ``unit`` (``"ARCH INSTR[,INSTR...]"``) against a lane at ``clock_mhz``: the
    fused path on one core, and with ``compare`` the numpy path and the compiled stages beside it,
    the fused stages' own rates, and the fused path on ``jobs`` cores (None: every core; 0: not run)."""
    found = _instructions(unit, getattr(report, "build_dir", unit))
    batch = batch or BATCH
    compiled = host_path("numba") != "numpy"
    fused = "fused" if compiled and all(fused_handles(i) for i in found) else "numba" if compiled else "numpy"
    after = check_rate(found, fused, seconds, batch)
    before = staged = pooled = None
    stages: dict = {}
    if compare:
        before = check_rate(found, "numpy", seconds, batch)
        staged = check_rate(found, "numba", seconds, batch) if fused != "numpy" else None
        stages = fused_stages(found, seconds, batch) if fused == "fused" else {}
        # every core: a request's worth of rows at once, as the self-test recomputes them (fewer leave threads idle)
        pooled = check_rate(found, fused, seconds, max(batch, STEP_ROWS), threads=jobs).stream if jobs != 0 else None
    algorithms = ",".join(dict.fromkeys(i.algorithm for i in found))
    threads = jobs or _default_threads()
    return BenchRow(unit, algorithms, lanes, clock_mhz, before, after, pooled, threads, report, staged, stages)


def _default_threads() -> int:
    from golden.kernels import available, default_threads
    return default_threads() if available() else 1


def _rate_cell(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def _stream(rate: Rate | None) -> float | None:
    return None if rate is None else rate.stream


COLUMNS = ("unit", "algorithm", "design clock", "lane dot-adds/s", "check/s numpy (1 core)",
           "check/s staged (1 core)", "check/s fused (1 core)", "fused / staged", "cores per lane numpy",
           "cores per lane fused", "target", "verdict", "fused on N cores /s", "lanes checked by this host")
TARGET_COLUMNS = ("unit", "algorithm", "design clock", "check/s fused (1 core)", "cores per lane", "target",
                  "verdict")
STAGE_COLUMNS = ("unit", "generator/s", "golden/s", "signatures/s", "golden's share")


def _clock_cells(r: BenchRow) -> list[str]:
    return [r.unit, r.algorithm, f"{r.clock_mhz:g} MHz" + (" (timing FAIL)" if r.lane_rate is None else "")]


def _cells(r: BenchRow) -> list[str]:
    ratio = None if r.staged is None else r.after.stream / r.staged.stream
    return _clock_cells(r) + [
        _rate_cell(r.lane_rate), _rate_cell(_stream(r.before)), _rate_cell(_stream(r.staged)),
        f"{r.after.stream:,.0f}", "-" if ratio is None else f"{ratio:.2f}x", _rate_cell(r.cores(r.before), 1),
        _rate_cell(r.cores(r.after), 1), _rate_cell(r.target), r.verdict,
        "-" if r.all_cores is None else f"{r.all_cores:,.0f} ({r.jobs})", _rate_cell(r.lanes_checked, 2)]


def _target_cells(r: BenchRow) -> list[str]:
    return _clock_cells(r) + [f"{r.after.stream:,.0f}", _rate_cell(r.cores(r.after), 1), _rate_cell(r.target),
                              r.verdict]


def _stage_cells(r: BenchRow) -> list[str]:
    s = r.stages
    share = (1 / s["golden"]) / sum(1 / v for v in s.values()) if len(s) == len(FUSED_STAGES) else None
    return [r.unit] + [_rate_cell(s.get(k)) for k in FUSED_STAGES] + ["-" if share is None else f"{share:.0%}"]


def _aligned(header, rows) -> list[str]:
    grid = [list(header)] + rows
    widths = [max(len(line[i]) for line in grid) for i in range(len(header))]
    return ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
            for line in grid]


def table(rows: list[BenchRow]) -> str:
    """The rows as aligned text: the rates, then the fused path's stages."""
    lines = _aligned(COLUMNS, [_cells(r) for r in rows]) + ["", "fused path on one core, by stage:"]
    lines += _aligned(STAGE_COLUMNS, [_stage_cells(r) for r in rows])
    return "\n".join(lines) + "\n"


def target_table(rows: list[BenchRow]) -> str:
    """The rows against their targets (``--targets``), with how many pass."""
    lines = _aligned(TARGET_COLUMNS, [_target_cells(r) for r in rows])
    judged = [r for r in rows if r.verdict != "-"]
    lines.append(f"{sum(r.verdict == 'PASS' for r in judged)} of {len(judged)} units within their host-core "
                 f"targets (fused path, one core pinned)")
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


def _md_table(header, rows) -> list[str]:
    return (["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|"]
            + ["| " + " | ".join(c) + " |" for c in rows])


def _versions() -> str:
    try:
        import numba
        return f"numpy {np.__version__}, numba {numba.__version__}"
    except ImportError:
        return f"numpy {np.__version__}, no numba"


def markdown(rows: list[BenchRow], command: str, seconds: float, when: str | None = None) -> str:
    """The tables in markdown with the machine, the versions and the command that made them."""
    host = machine()
    lines = [f"# The board against the host (`python -m fpga bench`) on {host}", "",
             f"Made by `{command}` on {when or date.today().isoformat()}; host: {host}; Python "
             f"{platform.python_version()}, {_versions()}.", "",
             "Lane rate = the design clock (one dot-add a cycle). Check = what the host recomputes for the "
             f"self-test: the on-chip generator's operands, golden, the block signatures, on blocks of {BLOCK_LEN:,} "
             f"entries, {seconds:g} s per path and operand kind, half `normal`, half `bits` (harmonic mean); one core "
             "= this thread's CPU time, pinned to one core. Staged = the compiled stages one after another "
             "(generator, golden's kernels, signatures, each over a request's arrays); fused = the three in one "
             "compiled pass a block, what the self-test runs. Cores per lane = lane rate / check rate per core; "
             "target = the host cores a lane may take (FDA, CoFDA, FDRDA, CoFDRDA, SFMA, GPS: "
             f"{TARGETS['FDA']}; GDFS, GFDRDA, CoGFDRDA: {TARGETS['GDFS']}). The N-core column is wall time on a "
             "shared machine.", ""]
    lines += _md_table(COLUMNS, [_cells(r) for r in rows])
    lines += ["", "The fused path on one core, by stage (each stage's own rate: the kernel stopped after the "
              "generator, after golden, and whole; a stage's time is the difference):", ""]
    lines += _md_table(STAGE_COLUMNS, [_stage_cells(r) for r in rows])
    built = [r for r in rows if r.report is not None]
    if built:
        lines += ["", "Builds:", ""] + [f"- {r.unit}: {r.report.used.lut4:,} LUT4, {r.report.used.ff:,} FF, "
                                         f"{r.report.used.dsp} DSP, {r.report.used.ebr} EBR, Fmax "
                                         f"{r.report.fmax_mhz:.2f} MHz" for r in built]
    return "\n".join(lines) + "\n"


# --- command line ----------------------------------------------------------------------------------

def add_arguments(ap: argparse.ArgumentParser) -> None:
    from ..toolchain.boards import BOARDS
    ap.add_argument("units", nargs="*", metavar="ARCH INSTR", help="units, as pairs: hopper HGMMA.64xNx16.F32 ...")
    ap.add_argument("--clock", type=float, default=None, metavar="MHZ",
                    help="named units: this design clock, no build (default: build, or reuse the build's report)")
    ap.add_argument("--reports", nargs="+", default=[], metavar="DIR",
                    help="build folders (or their report.json) to take as they are")
    ap.add_argument("--board", default="ulx3s-85f", help=f"for named units: one of {', '.join(BOARDS)}")
    ap.add_argument("--lanes", default="1", help="for named units: lanes, or max (default 1)")
    ap.add_argument("--multipliers", default="dsp", choices=("dsp", "lut", "auto"), help="for named units")
    ap.add_argument("--build", action="store_true", help="build named units even when a report exists")
    ap.add_argument("--seconds", type=float, default=2.0, help="timing per unit, path and operand kind (default 2)")
    ap.add_argument("--jobs", type=int, default=None,
                    help="cores for the compiled path's all-core rate (default: every core; 0: skip it)")
    ap.add_argument("--markdown", metavar="FILE", help="write the tables as markdown (docs/fpga/benchmark.md)")
    ap.add_argument("--targets", action="store_true",
                    help=f"the host-core targets: with no unit named, one unit per algorithm; at "
                         f"{TARGET_CLOCK_MHZ:g} MHz unless --clock (no build); the fused path only, unless --markdown")


def _named_units(units: list[str]) -> list[tuple[str, str]]:
    if len(units) % 2:
        raise ValueError(f"units come in pairs ARCH INSTR; {units[-1]!r} has no instruction")
    return [(units[n], units[n + 1]) for n in range(0, len(units), 2)]


def _report_at(path: str):
    from ..toolchain.build import BuildReport
    file = Path(path) / "report.json" if Path(path).is_dir() else Path(path)
    if not file.exists():
        raise ValueError(f"no build report at {file}: build it (python -m fpga build ARCH INSTR) or name "
                         f"the folder holding its report.json")
    return BuildReport.from_json(file.read_text())


def _report_of(arch: str, instr: str, args, build_unit=None):
    """The report of a named unit's build (:func:`fpga.toolchain.builds.build_board`, or ``build_unit(request,
    reuse=)``): an unchanged earlier build is reused unless ``--build``."""
    from ..toolchain.builds import BuildRequest, build_board
    from ..toolchain.fit import parse_lanes
    request = BuildRequest(arch, instr, board=args.board, lanes=parse_lanes(args.lanes), multipliers=args.multipliers)
    return (build_unit or build_board)(request, reuse=not args.build)[0]


def _targets(args, build_unit=None) -> list[tuple[str, float, int, object]]:
    """``(unit, design clock MHz, lanes, report or None)`` of every unit to measure."""
    named = _named_units(args.units)
    if getattr(args, "targets", False):
        named = named or ([] if args.reports else list(TARGET_UNITS))
        if args.clock is None:                 # the targets are per lane at the ECP5 builds' clock: no build
            args.clock = TARGET_CLOCK_MHZ
    if not named and not args.reports:
        raise ValueError("name units (ARCH INSTR pairs), build folders (--reports DIR ...) or --targets to benchmark")
    out = []
    for rep in [_report_at(p) for p in args.reports]:
        _instructions(rep.unit, rep.build_dir)
        out.append((rep.unit, rep.clock_mhz, rep.lanes or 1, rep))
    for arch, instr in named:
        if args.clock is not None:
            lanes = int(args.lanes) if str(args.lanes).isdigit() else 1
            out.append((f"{arch} {','.join(i.name for i in golden.select(arch, instr))}", args.clock, lanes, None))
        else:
            rep = _report_of(arch, instr, args, build_unit)
            out.append((rep.unit, rep.clock_mhz, rep.lanes or 1, rep))
    return out


def main(args, build_unit=None) -> int:
    """``python -m fpga bench``; a named unit is built as ``python -m fpga build`` would
    (:func:`fpga.toolchain.builds.build_board`; ``build_unit(request, reuse=)`` in its place, for a test)."""
    if args.seconds <= 0 or (args.jobs is not None and args.jobs < 0):
        raise ValueError(f"--seconds must be positive and --jobs at least 0, not {args.seconds} and {args.jobs}")
    if args.clock is not None and args.clock <= 0:
        raise ValueError(f"--clock must be a positive frequency in MHz, not {args.clock}")
    targets = _targets(args, build_unit)
    compare = not getattr(args, "targets", False) or bool(args.markdown)
    paths = "numpy, staged and fused on one core, fused on " \
        f"{args.jobs or _default_threads()} core(s)" if compare else "fused on one core"
    print(f"the host's self-test check on {machine()}: {paths}; {args.seconds:g} s per unit, path and kind",
          file=sys.stderr)
    rows = []
    for unit, clock, lanes, rep in targets:
        rows.append(row_of(unit, clock, args.seconds, lanes=lanes, jobs=args.jobs, report=rep, compare=compare))
        r = rows[-1]
        print(f"  {unit}: {r.after.stream:,.0f} dot-adds/s a core, {_rate_cell(r.cores(r.after), 1)} cores a lane "
              f"{r.verdict}", file=sys.stderr, flush=True)
    if not compare:
        print(target_table(rows), end="")
        return 0
    print(table(rows), end="")
    if getattr(args, "targets", False):
        print("\n" + target_table(rows), end="")
    if args.markdown:
        command = "python -m fpga bench " + " ".join(shlex.quote(a) for a in sys.argv[2:]) \
            if sys.argv[1:2] == ["bench"] else "python -m fpga bench"
        Path(args.markdown).write_text(markdown(rows, command, args.seconds))
        print(f"wrote {args.markdown}", file=sys.stderr)
    return 0
