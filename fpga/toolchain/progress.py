"""Builds that show progress: each tool's phase, its elapsed time and, while nextpnr routes, how
far the router has come; and a route that does not converge stopped at a limit.

:func:`run_tool` starts one tool (Yosys, nextpnr, a packer) and, while it runs, reads the log the
tool writes (Yosys ``-l``, nextpnr ``--log``: both written line by line) and prints one line to
``out`` whenever the phase changes and at least every ``interval`` seconds::

    place and route: routing, 4m 10s (routing 1m 2s), 12,345 arcs left (was 33,538; iteration 21,000)

:func:`parse_line` turns nextpnr's log lines into a :class:`PnrState`: the phase (packing,
placement, routing), the post-placement Fmax estimate, the utilisation it printed, and the
router's progress, from either of nextpnr's routers:

* router1 (nextpnr-ecp5's default) prints a table row every 1,000 arcs routed:
  ``Info:      53000 |    17292      33978 |    7   771 |       547|       0.28      23.92|``,
  the last number before the times being the arcs still to route (with rip-up, it can grow);
* router2 prints ``Info:     iter=3 wires=...  overused=1234  overuse=2345  archfail=NA``, the
  overused wires it still has to resolve.

A route that does not converge (the issue that asked for this: overuse flat near 44,000 for
thousands of iterations, twenty silent minutes) is stopped once routing has lasted
``route_timeout`` seconds: :class:`RouteTimeout`, one line naming the limit, how far the router
got and the best report the log holds (packed utilisation, Fmax after placement).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TextIO

__all__ = ["Phase", "PnrState", "RouteTimeout", "parse_line", "run_tool", "elapsed_text", "ROUTE_TIMEOUT_S",
           "PROGRESS_INTERVAL_S"]

ROUTE_TIMEOUT_S = 3 * 3600      # generous: the longest whole build recorded in docs/fpga/ took 13 minutes
PROGRESS_INTERVAL_S = 30.0      # a line at least this often while a tool runs
POLL_S = 0.25                   # how often the log is read


class Phase(StrEnum):
    """What a tool is doing, as its log says."""

    STARTING = "starting"
    SYNTHESIS = "synthesis"
    PACKING = "packing"
    PLACEMENT = "placement"
    ROUTING = "routing"
    TIMING = "timing analysis"
    DONE = "done"


# nextpnr's log lines that start a phase (both routers, every architecture's packer)
_PHASE_STARTS = ((re.compile(r"^Info: Pack(ing)? "), Phase.PACKING),
                 (re.compile(r"^Info: (Placed|Running main analytical placer|Creating initial analytic placement|"
                             r"Running simulated annealing placer|Running placement)"), Phase.PLACEMENT),
                 (re.compile(r"^Info: (Routing globals|Routing\.\.|Running router2)"), Phase.ROUTING),
                 (re.compile(r"^Info: (Routing complete|Router\d? time)"), Phase.TIMING),
                 (re.compile(r"^Info: Program finished normally"), Phase.DONE))
_ROUTER1 = re.compile(r"^Info:\s+(\d+) \|\s*\d+\s+\d+ \|\s*\d+\s+\d+ \|\s*(\d+)\|")
_ROUTER2 = re.compile(r"iter=(\d+)\s+wires=\d+\s+overused=(\d+)\s+overuse=(\d+)(?:\s+tmgfail=(\d+))?")
_FMAX = re.compile(r"Max frequency for clock\s+'([^']+)': ([\d.]+) MHz \((PASS|FAIL) at ([\d.]+) MHz\)")
_UTIL = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%")
_YOSYS_PASS = re.compile(r"^[\d.]+\. Executing (\w+) pass")


# A route whose arcs left (or overused wires) have not fallen by STALL_FALL in STALL_S seconds is
# called "not converging" on every progress line (router1 rips up and re-routes, so its count
# wanders; a converging route here fell by thousands every 30 s: docs/fpga/families.md).
STALL_FALL, STALL_S = 0.05, 300.0


@dataclass
class PnrState:
    """What nextpnr's log has said so far.

    Members
    -------
    phase : Phase
    routing_started : float or None
        ``time.monotonic()`` when routing began.
    metric : str
        ``"arcs left"`` (router1) or ``"overused wires"`` (router2).
    first, last, iteration : int or None
        The router's first and latest reading of ``metric``, and its iteration.
    fmax_placed : dict
        Clock -> (Fmax MHz, constraint MHz) after placement (nextpnr's estimate before routing).
    utilisation : dict
        Bel type -> (used, available), as the log's "Device utilisation" lists them.
    yosys_pass : str
        The last Yosys pass begun (synthesis).
    timing_failing : int or None
        router2's arcs failing timing (``tmgfail``, printed with ``--tmg-ripup``): once no wire is
        overused it goes on ripping up and re-routing those, up to its iteration limit.
    mark, mark_at : int or None, float or None
        The router's reading when it last fell by :data:`STALL_FALL` or more, and when (the
        stall check: :meth:`stalled_for`).
    """

    phase: Phase = Phase.STARTING
    routing_started: float | None = None
    metric: str = ""
    first: int | None = None
    last: int | None = None
    iteration: int | None = None
    fmax_placed: dict = field(default_factory=dict)
    utilisation: dict = field(default_factory=dict)
    yosys_pass: str = ""
    timing_failing: int | None = None
    mark: int | None = None
    mark_at: float | None = None

    def stalled_for(self, now: float) -> float:
        """Seconds since the router's reading last fell by :data:`STALL_FALL` (0 before routing)."""
        return 0.0 if self.mark_at is None else now - self.mark_at

    def progress_text(self) -> str:
        """``12,345 arcs left (was 33,538; iteration 21,000)``, or "" before the router has said anything."""
        if self.last is None:
            return ""
        failing = "" if self.timing_failing is None else \
            f", {self.timing_failing:,} arcs failing timing (timing rip-up)"
        return f"{self.last:,} {self.metric} (was {self.first:,}; iteration {self.iteration:,}){failing}"

    def best_report(self) -> str:
        """The most the log tells without a finished route: Fmax after placement and the utilisation."""
        said = []
        if self.fmax_placed:
            said.append("Fmax after placement " + ", ".join(f"{mhz:.2f} MHz for {clk!r} ({want:g} MHz wanted)"
                                                          for clk, (mhz, want) in self.fmax_placed.items()))
        used = [f"{bel} {u:,}/{a:,}" for bel, (u, a) in self.utilisation.items() if u]
        if used:
            said.append("packed " + ", ".join(used))
        return "; ".join(said) or "nothing reported before routing"


def parse_line(state: PnrState, line: str, now: float | None = None) -> PnrState:
    """Update ``state`` from one line of a tool's log (nextpnr's or Yosys's); ``state`` back."""
    for pattern, phase in _PHASE_STARTS:
        if pattern.search(line):
            if phase is Phase.ROUTING and state.routing_started is None:
                state.routing_started = time.monotonic() if now is None else now
            if phase is not Phase.PLACEMENT or state.phase in (Phase.STARTING, Phase.PACKING):
                state.phase = phase
            return state
    if (found := _ROUTER1.search(line)) and state.phase is Phase.ROUTING:
        state.metric, state.iteration, value = "arcs left", int(found.group(1)), int(found.group(2))
    elif found := _ROUTER2.search(line):
        state.metric, state.iteration, value = "overused wires", int(found.group(1)), int(found.group(2))
        state.timing_failing = None if found.group(4) is None else int(found.group(4))
    elif found := _FMAX.search(line):
        if state.phase in (Phase.PACKING, Phase.PLACEMENT):
            state.fmax_placed[found.group(1)] = (float(found.group(2)), float(found.group(4)))
        return state
    elif (found := _UTIL.search(line)) and state.phase in (Phase.STARTING, Phase.PACKING):
        state.utilisation[found.group(1)] = (int(found.group(2)), int(found.group(3)))
        return state
    elif found := _YOSYS_PASS.search(line):
        state.phase, state.yosys_pass = Phase.SYNTHESIS, found.group(1)
        return state
    else:
        return state
    state.first = value if state.first is None else state.first
    state.last = value
    now = time.monotonic() if now is None else now
    if state.mark is None or value <= state.mark * (1 - STALL_FALL):
        state.mark, state.mark_at = value, now
    return state


class RouteTimeout(RuntimeError):
    """Routing lasted longer than its limit; the message is one line with how far it got."""

    def __init__(self, message: str, state: PnrState):
        super().__init__(message)
        self.state = state


def elapsed_text(seconds: float) -> str:
    """``42s``, ``3m 05s``, ``1h 02m``."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


def _status(step: str, state: PnrState, started: float, now: float) -> str:
    phase = state.phase.value if state.phase is not Phase.STARTING else "starting"
    if state.phase is Phase.SYNTHESIS and state.yosys_pass:
        phase += f" ({state.yosys_pass})"
    line = f"{step}: {phase}, {elapsed_text(now - started)}"
    if state.phase is Phase.ROUTING and state.routing_started is not None:
        line += f" (routing {elapsed_text(now - state.routing_started)})"
        if state.progress_text():
            line += f", {state.progress_text()}"
        if state.stalled_for(now) >= STALL_S:
            line += (f"; not converging: {state.metric} down by under {STALL_FALL:.0%} in the last "
                     f"{elapsed_text(state.stalled_for(now))} ("
                     + ("--router router2 may route it; " if state.metric == "arcs left" else "")
                     + "--route-timeout stops it)")
    return line


class _LogTail:
    """The lines appended to a file since the last read (the file may not exist yet)."""

    def __init__(self, path: Path):
        self.path, self.offset, self.partial = path, 0, ""

    def lines(self) -> list[str]:
        try:
            with open(self.path, errors="replace") as f:
                if f.seek(0, 2) < self.offset:        # rewritten from the start (a tool truncates its log)
                    self.offset, self.partial = 0, ""
                f.seek(self.offset)
                text = f.read()
                self.offset = f.tell()
        except FileNotFoundError:
            return []
        text, self.partial = self.partial + text, ""
        lines = text.split("\n")
        self.partial = lines.pop()             # an unfinished last line waits for the rest
        return lines


def run_tool(command: list[str], cwd: Path, output: Path, log: Path | None, step: str, *,
             out: TextIO | None = None, interval: float = PROGRESS_INTERVAL_S,
             route_timeout: float | None = None, state: PnrState | None = None) -> tuple[int, PnrState]:
    """Run ``command`` in ``cwd`` (stdout and stderr to ``output``), printing its progress to ``out``.

    Parameters
    ----------
    log : Path, optional
        The log the tool writes as it goes (read for its phase and the router's progress); None:
        elapsed time only.
    interval : float
        Seconds between progress lines when nothing changes (a phase change prints at once).
    route_timeout : float, optional
        Stop the tool once routing has lasted this long: :class:`RouteTimeout`.

    Returns
    -------
    (exit status, PnrState)
    """
    if interval <= 0 or (route_timeout is not None and route_timeout <= 0):
        raise ValueError(f"interval and route_timeout must be positive seconds, not {interval}, {route_timeout}")
    out = sys.stderr if out is None else out
    state = PnrState() if state is None else state
    if log is not None and log != output:
        log.unlink(missing_ok=True)                   # an earlier run's log is not this run's progress
    tail = _LogTail(log) if log is not None else None
    started = last_print = time.monotonic()
    shown_phase = None
    with open(output, "w") as sink:
        process = subprocess.Popen(command, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT)
        try:
            while process.poll() is None:
                time.sleep(POLL_S)
                now = time.monotonic()
                for line in tail.lines() if tail else ():
                    parse_line(state, line, now)
                    if state.phase != shown_phase:             # every phase shown, however short
                        print(_status(step, state, started, now), file=out, flush=True)
                        shown_phase, last_print = state.phase, now
                if state.phase != shown_phase or now - last_print >= interval:
                    print(_status(step, state, started, now), file=out, flush=True)
                    shown_phase, last_print = state.phase, now
                if (route_timeout is not None and state.routing_started is not None
                        and now - state.routing_started > route_timeout):
                    raise RouteTimeout(_timeout_message(step, state, route_timeout), state)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    for line in tail.lines() if tail else ():
        parse_line(state, line)
    return process.returncode, state


def _timeout_message(step: str, state: PnrState, limit: float) -> str:
    progress = state.progress_text() or "the router reported no progress"
    return (f"{step} stopped: routing did not converge within --route-timeout {limit:g} s "
            f"({progress}); best report: {state.best_report()}")
