"""Building a board's bitstream from what a user asks for: the functions the command line
(``python -m fpga build|program``) and the benchmark (:mod:`fpga.host.bench`) both call.

:class:`BuildRequest` holds what ``python -m fpga build`` takes (its attributes are the parser's
names, so the command line's namespace serves as one too); :func:`build_board` turns it into a
:class:`fpga.board.config.BoardConfig`, a top (the board top, the stand-in, or a design of one's own) and
a build (:func:`fpga.toolchain.build.build`); :func:`config_from` is the board configuration alone (also
for ``sim`` and ``selftest``); :func:`timing_advice` says what to do about a missed clock.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass

import golden

from ..board.config import BoardConfig
from ..board.top import BoardTop
from . import build as _build  # looked up at each call: a test plants a fake build there
from .boards import board as find_board
from .families import PlaceAndRoute
from .fit import board_config
from .progress import ROUTE_TIMEOUT_S

__all__ = ["BuildRequest", "AUTO", "build_board", "resolve_defaults", "say", "config_from", "dut_config",
           "timing_advice", "timing_failure"]

AUTO = "auto"        # --clock / --pipeline: the board's family's default


@dataclass
class BuildRequest:
    """A build as ``python -m fpga build ARCH INSTR [options]`` asks for it (the options' names).

    Members
    -------
    arch, instr : str
        The architecture and its instruction(s) (several make a tensor core).
    board : str
        A board of :data:`fpga.toolchain.boards.BOARDS`.
    lanes : int or "max"
    core : bool
        A tensor core even for one instruction.
    baud, clock : int, optional
        The UART rate and the design clock in Hz (default: the board's).
    pipeline : str
        ``hw.Pipelining``'s spec (``"0"`` .. ``"3"``, ``"2,align=2"``).
    multipliers : str
        ``dsp``, ``lut`` or ``auto`` (:mod:`fpga.toolchain.multipliers`).
    seed : int
        nextpnr's placement seed.
    yosys : str, optional
        A YoWASP Yosys release, ``env``, ``auto`` (the default: the family's pin unless a record or
        the family's known aborts name another, :func:`fpga.toolchain.records.yosys_choice`), or None (the pin).
    dut : str, optional
        A design of one's own (``UNIT.TOML``).
    route_timeout : float, optional
        Seconds routing may last (:mod:`fpga.toolchain.progress`).
    router, placer : str, optional
        nextpnr's router and placer, or ``auto`` (the default: the ones the design's record names,
        else the family's, :func:`fpga.toolchain.records.pnr_choice`).
    tmg_ripup : bool, optional
        nextpnr's timing-driven rip-up while routing; None (the default): as the design's record.
    """

    arch: str
    instr: str
    board: str = "ulx3s-85f"
    lanes: int | str = 1
    core: bool = False
    baud: int | None = None
    clock: int | None = None
    pipeline: str = "0"
    multipliers: str = "dsp"
    seed: int = 1
    yosys: str | None = AUTO
    dut: str | None = None
    route_timeout: float | None = ROUTE_TIMEOUT_S
    router: str | None = AUTO
    placer: str | None = AUTO
    tmg_ripup: bool | None = None
    cmd: str = "build"


def config_from(args, **kw) -> BoardConfig:
    """The board ``args`` names (a :class:`BuildRequest` or the command line's namespace): several
    instructions make a tensor core of them."""
    if AUTO in (getattr(args, "clock", None), getattr(args, "pipeline", None)):
        raise ValueError(f"--clock auto and --pipeline auto apply to build and program (the board family's "
                         f"defaults), not to {args.cmd}: give a number")
    several = len(golden.select(args.arch, args.instr)) > 1
    if args.baud:
        kw["baud"] = args.baud
    if args.clock:
        kw["clock_hz"] = args.clock
    kw.update(_passed_through(args))
    if args.lanes == "max":
        raise ValueError(f"--lanes max applies to build and program (it synthesises to find how many fit), "
                         f"not to {args.cmd}: give a number")
    if args.core or several:
        return BoardConfig.from_names(args.arch, args.instr, lanes=args.lanes, core=True, **kw)
    return board_config(args.arch, args.instr, args.lanes, **kw)     # buffers shallower where wide entries need it


def _passed_through(args) -> dict:
    """BoardConfig keyword arguments of options other modules add (``--pipeline``: ``pipelining``)."""
    for name in ("pipelining", "pipeline"):
        if getattr(args, name, None) not in (None, False):
            return {"pipelining": getattr(args, name)}
    return {}


def _refuse_unit_options(args, clock: bool) -> None:
    """The options that shape the hw unit (``--lanes``, ``--core``, ``--pipeline``, and the design clock
    of a simulation, which runs at the board's) do not apply to a design of one's own: given with
    ``--dut``, they are refused in one line instead of dropped."""
    given = [flag for flag, on in (
        ("--lanes", getattr(args, "lanes", 1) not in (1, "1")),
        ("--core", getattr(args, "core", False)),
        ("--pipeline", getattr(args, "pipeline", None) not in (None, "0", AUTO)),
        ("--clock", not clock and getattr(args, "clock", None) not in (None, AUTO))) if on]
    if given:
        raise ValueError(f"--dut {args.dut} builds your design as it is: its description fixes the lanes (one "
                         f"dot-add a beat), the pipeline and the unit; leave out {', '.join(given)}"
                         + (" (a simulated board runs at the board's clock)" if "--clock" in given else ""))


def dut_config(args, clock: bool = False):
    """``(board config, fpga.board.dut.DutBoard)`` of ``--dut UNIT.TOML``: its first target, ARCH/INSTR filtering
    them (``all``: every target); ``(config_from(args), None)`` without ``--dut``.  ``clock``: the
    command takes ``--clock`` with a design of one's own (a bitstream build does, a simulation not)."""
    if not getattr(args, "dut", None):
        return config_from(args), None
    _refuse_unit_options(args, clock)
    from ..board.dut import dut_board
    pick = lambda x: None if x in (None, "", "all") else x  # noqa: E731
    dut = dut_board(args.dut, pick(args.arch), pick(args.instr))
    return board_config(dut.ins.arch, dut.ins.name, 1, **({"baud": args.baud} if args.baud else {})), dut


def build_board(args, standin: bool = False, reuse: bool = True):
    """The bitstream of the board top (or the stand-in) ``args`` names (a :class:`BuildRequest`, or the
    command line's namespace): ``(BuildReport, BoardConfig)``."""
    brd = find_board(args.board)
    yosys_auto = getattr(args, "yosys", None) == AUTO
    chosen = resolve_defaults(args, brd, standin)
    if getattr(args, "dut", None):
        return _built_dut(args, brd, standin, reuse)
    lanes_fit, dsp_lanes = _lanes_to_build(args, brd, standin)
    cfg = config_from(args, clock_hz=args.clock or brd.clock_hz)
    if cfg.clock_hz != brd.clock_hz:
        if standin:
            raise ValueError(f"--clock applies to the board top; the stand-in runs at the {brd.name}'s "
                             f"{brd.clock_hz / 1e6:g} MHz clock (leave out --clock, or --standin)")
        brd.family.check_clock(brd.clock_hz, cfg.clock_hz)   # a clock it cannot make: one line, before minutes of work
    if standin:
        from ..board.standin import StandInTop
        top = StandInTop(cfg.unit())
        design = f"standin-{cfg.name}"
    else:
        top, design = BoardTop(cfg), cfg.name
    if cfg.clock_hz != brd.clock_hz:                   # its own build folder: a 25 MHz build stays
        design += f"_{cfg.clock_hz / 1e6:g}MHz"
    pll = "" if cfg.clock_hz == brd.clock_hz else f" (PLL from {brd.clock_hz / 1e6:g} MHz)"
    say(chosen)
    print(f"building {design} for {brd.name} ({brd.device}, {cfg.clock_hz / 1e6:g} MHz{pll}): "
          f"synthesis, place and route, pack (minutes; an unchanged design is reused)", file=sys.stderr, flush=True)
    if args.multipliers != "dsp":                       # its own build folder too
        design += f"_{args.multipliers}" + (f"{dsp_lanes}" if args.multipliers == "auto" else "")
    if args.seed != 1:                                  # another placement seed keeps seed 1's build (and record)
        design += f"_seed{args.seed}"

    def run(yosys):
        return _build.build(top, brd, design, seed=args.seed, allow_timing_fail=True, yosys_version=yosys,
                            reuse=reuse, clock_hz=cfg.clock_hz, multipliers=args.multipliers,
                            lanes=None if cfg.core else cfg.lanes, dsp_lanes=dsp_lanes, lanes_fit=lanes_fit,
                            unit=f"{cfg.arch} {','.join(cfg.instructions)}",
                            route_timeout=getattr(args, "route_timeout", ROUTE_TIMEOUT_S),
                            pnr=PlaceAndRoute.requested(args))
    fallback = yosys_auto and brd.family.yosys_version not in (None, _build.ENV_YOSYS)
    return (_with_yosys_fallback(run, args, brd) if fallback else run(args.yosys)), cfg


# what a Yosys release that cannot build a design ends in (fpga.toolchain.build._run's messages), where
# another may get through
TOOL_FAILURES = ("synthesis failed", "place and route failed")


def _with_yosys_fallback(run, args, brd):
    """``run(args.yosys)``, the release ``--yosys auto`` chose (the family's pin, or the environment's
    where a record or the family's known aborts say so); when synthesis or place and route fails with
    it, once more with the other of the two, said in one line: a build with no options does not stop
    at a release's abort that neither the records nor the known list name yet."""
    first = args.yosys
    try:
        return run(first)
    except (_build.RouteTimedOut, _build.DoesNotFit):
        raise
    except _build.BuildError as e:
        if not str(e).startswith(TOOL_FAILURES):
            raise
        other = None if first == _build.ENV_YOSYS else _build.ENV_YOSYS
        names = {None: f"the {brd.family.name} pin {brd.family.yosys_version}",
                 _build.ENV_YOSYS: "the environment's release"}
        print(f"yosys: {names.get(first, f'release {first}')} did not build {args.arch} {args.instr} "
              f"({str(e)[:160]}); building again with {names[other]} "
              f"(--yosys {other or brd.family.yosys_version})", file=sys.stderr, flush=True)
        args.yosys = other
        return run(other)


def _built_dut(args, brd, standin: bool, reuse: bool):
    """The bitstream of the board top around a design of one's own (``--dut UNIT.TOML``): one lane, the
    design's files read by Yosys beside the top (one that Yosys cannot read is refused before any work)."""
    from ..board.dut import platform_files
    if standin or args.lanes not in (1, "1") or args.multipliers != "dsp" or args.pipeline not in (None, "0"):
        raise ValueError("--dut builds your design as it is: leave out --standin, --lanes, --multipliers "
                         "and --pipeline")
    cfg, dut = dut_config(args, clock=True)
    cfg = dataclasses.replace(cfg, clock_hz=args.clock or brd.clock_hz)
    if cfg.clock_hz != brd.clock_hz:
        brd.family.check_clock(brd.clock_hz, cfg.clock_hz)
    design = f"dut-{dut.prep.desc.name}" + (f"_{cfg.clock_hz / 1e6:g}MHz" if cfg.clock_hz != brd.clock_hz else "")
    print(f"building {design} ({dut.prep.desc.path}) for {brd.name} ({brd.device}, {cfg.clock_hz / 1e6:g} MHz): "
          "synthesis, place and route, pack (minutes; an unchanged design is reused)", file=sys.stderr, flush=True)
    report = _build.build(BoardTop(cfg, unit=dut.unit), brd, design, seed=args.seed, allow_timing_fail=True,
                          yosys_version=args.yosys, reuse=reuse, clock_hz=cfg.clock_hz, lanes=1,
                          unit=f"{cfg.arch} {','.join(cfg.instructions)}", verilog=platform_files(dut),
                          route_timeout=getattr(args, "route_timeout", ROUTE_TIMEOUT_S),
                          pnr=PlaceAndRoute.requested(args))
    return report, cfg


def _lanes_to_build(args, brd, standin: bool) -> tuple:
    """(lanes that fit or None, DSP lanes of an ``auto`` build or None); ``args.lanes`` becomes a number."""
    from .fit import dsp_lanes_for, fit_unit, lane_cost
    many = args.core or len(golden.select(args.arch, args.instr)) > 1
    if many and (args.lanes != 1 or args.multipliers == "auto"):
        raise ValueError("a tensor core has one lane: --lanes and --multipliers auto apply to a dot-add unit")
    if standin and args.lanes == "max":
        raise ValueError("--lanes max sizes the board top; give --standin a number of lanes")
    kw = {"clock_hz": args.clock or brd.clock_hz, **_passed_through(args)}
    if args.baud:
        kw["baud"] = args.baud
    lanes_fit = None
    if args.lanes == "max":
        print(f"fitting {args.arch} {args.instr} lanes on {brd.name} ({args.multipliers} multipliers): "
              f"syntheses with 1 and 2 lanes (minutes; kept for next time)", file=sys.stderr, flush=True)
        found = fit_unit(args.arch, args.instr, brd, args.multipliers, yosys_version=args.yosys, **kw)
        print(found.text(), end="", file=sys.stderr)
        if found.lanes == 0:
            raise ValueError(f"no lane fits the {brd.name}: {found.answer()}")
        args.lanes = lanes_fit = found.lanes
        return lanes_fit, found.dsp_lanes if args.multipliers == "auto" else None
    if args.multipliers == "auto":
        board_config(args.arch, args.instr, args.lanes, **kw)          # bad names: one line before any synthesis
        cost = lane_cost(args.arch, args.instr, brd, "dsp", yosys_version=args.yosys, **kw)
        return None, dsp_lanes_for(args.lanes, _build.device_capacity(brd).dsp, cost)
    return None, None


def timing_advice(report, brd, baud: int) -> str:
    """What to do about a build that misses timing: a design clock that would pass, if any."""
    mhz = _build.passing_clock_mhz(report.fmax_mhz, brd.clock_hz, baud, family=brd.family)
    slower = f"a slower design clock: --clock {mhz} (CLOCK={mhz}); " if mhz else ""
    return f"{slower}fewer instructions or another board"


# the link's domain runs at the oscillator whatever --clock says: a slower design clock does not help it
SYNC_ADVICE = ("another placement seed (--seed 2); a slower --clock does not help: the UART and host link run at "
               "the board's oscillator")


def timing_failure(report, brd, baud: int) -> str:
    """The one line of a build that misses timing: each failing clock domain, what reaches it and
    what to try (a design clock that passes for ``fast``; for ``sync``, the link's, :data:`SYNC_ADVICE`)."""
    failing = report.failing_domains
    keep = "--allow-timing-fail to keep the bitstream anyway"
    if failing == [_build.SYNC] and not report.through_pll or failing == [_build.FAST]:
        return (f"timing FAIL: Fmax {report.fmax_mhz:.2f} MHz is below the {report.clock_text} "
                f"({keep}; {timing_advice(report, brd, baud)})")
    advice = [timing_advice(report, brd, baud) if name == _build.FAST else SYNC_ADVICE for name in failing]
    return (f"timing FAIL: {'; '.join(map(report.domain_text, failing))} ({keep}; try {'; and '.join(advice)})")


def resolve_defaults(args, brd, standin: bool = False) -> list[str]:
    """Replace ``auto`` in ``args.pipeline``, ``args.clock`` and ``args.yosys``; the lines that say what
    was chosen and why (:func:`say`, once the request is known to be valid: bad input stays one line).

    The level is the family's (:attr:`fpga.toolchain.families.base.Family.default_pipeline`); the clock the
    fastest one a record of this board top at that level closed (:func:`fpga.toolchain.records.fastest_clock`),
    else the family's default clock at the family's level, else the board's own (and always for the
    stand-in); Yosys the family's pin unless a record or the family's known aborts name another
    (:func:`fpga.toolchain.records.yosys_choice`); nextpnr's router, placer and timing rip-up the ones a record of
    the design names, else the family's (:func:`fpga.toolchain.records.pnr_choice`).  A design of one's own
    (``--dut``) is built as it is: level 0 at the board's clock, nextpnr's defaults.
    """
    from . import records
    family, dut = brd.family, getattr(args, "dut", None)
    chose, why, lines = [], "", []
    pnr_auto = _pnr_left_to_auto(args)
    manifest = records.load() if pnr_auto or AUTO in (getattr(args, "pipeline", None), getattr(args, "clock", None),
                                                      getattr(args, "yosys", None)) else []
    if getattr(args, "pipeline", None) == AUTO:
        args.pipeline, spec_why = ("0", "") if dut else _auto_pipeline(args, brd, standin, manifest)
        chose.append(f"pipelining {args.pipeline}" if spec_why else f"pipelining level {args.pipeline}")
        if spec_why:
            lines.append(f"pipelining: {args.pipeline} for {args.arch} {args.instr}: {spec_why} "
                         f"(PIPELINE= chooses another)")
    if getattr(args, "clock", None) == AUTO:
        mhz, why = (None, "") if dut else _auto_clock(args, brd, standin, manifest)
        args.clock = round(mhz * 1_000_000) if mhz else None
        chose.append(f"a {(mhz or brd.clock_hz / 1e6):g} MHz design clock")
    if chose and not dut:
        lines.append(f"defaults for {family.name} ({brd.name}): {' and '.join(chose)}" + (f": {why}" if why else "")
                     + " (PIPELINE= and CLOCK= choose others)")
    if getattr(args, "yosys", None) == AUTO:
        args.yosys, why = (None, "") if dut else \
            records.yosys_choice(manifest, family, args.arch, args.instr, brd.name, getattr(args, "pipeline", None))
        if args.yosys:
            lines.append(f"yosys: {args.yosys} (--yosys {args.yosys}) for {args.arch} {args.instr}: {why} "
                         f"(--yosys VERSION chooses another)")
    if pnr_auto:
        chosen, why = (family.default_pnr(), "") if dut else \
            records.pnr_choice(manifest, family, args.arch, args.instr, brd.name, getattr(args, "pipeline", None))
        for key in pnr_auto:
            setattr(args, key, getattr(chosen, key))
        taken = PlaceAndRoute(**{key: getattr(chosen, key) for key in pnr_auto}).options()
        if why and taken:
            lines.append(f"place and route: {taken} for {args.arch} {args.instr}: {why} "
                         f"(--router, --placer and --no-tmg-ripup choose others)")
    return lines


def _pnr_left_to_auto(args) -> list[str]:
    """The fields of nextpnr's choices (:class:`PlaceAndRoute`) that ``args`` leaves to ``auto``."""
    left = [key for key in ("router", "placer") if getattr(args, key, None) == AUTO]
    return left + (["tmg_ripup"] if hasattr(args, "tmg_ripup") and args.tmg_ripup is None else [])


def say(lines: list[str]) -> None:
    """Print :func:`resolve_defaults`'s lines on stderr."""
    for line in lines:
        print(line, file=sys.stderr, flush=True)


def _auto_pipeline(args, brd, standin: bool, manifest) -> tuple[str, str]:
    """(spec, why) of ``--pipeline auto``: the family's level, or an override of it that a record of this
    board top closed timing with where no record closed the plain level
    (:func:`fpga.toolchain.records.pipeline_choice`)."""
    from . import records
    level = brd.family.default_pipeline
    if standin:
        return level, ""
    lanes = args.lanes if isinstance(args.lanes, int) else -1
    return records.pipeline_choice(manifest, args.arch, args.instr, brd.name, level, lanes, args.multipliers)


def _auto_clock(args, brd, standin: bool, manifest) -> tuple:
    """(MHz or None for the board's own, why) of ``--clock auto``."""
    from . import records
    family = brd.family
    if standin:
        return None, f"the stand-in runs at the {brd.name}'s own"
    lanes = args.lanes if isinstance(args.lanes, int) else -1
    found = records.fastest_clock(manifest, args.arch, args.instr, brd.name, str(args.pipeline), lanes,
                                  args.multipliers)
    if found is not None:
        fmax = ", ".join(f"{d} {mhz:.2f}" for d, mhz in found.result.fmax.items())
        return found.clock_mhz, f"the fastest its record closed ({found.name}: {fmax} MHz)"
    # the family's level with overrides (3,merge=3) deepens it: the family's clock still applies
    if str(args.pipeline).split(",")[0] != family.default_pipeline:
        return None, f"the {brd.name}'s own: no record of level {args.pipeline} closes a faster one"
    if family.default_clock_mhz:
        return family.default_clock_mhz, (f"the {family.name} default at level {family.default_pipeline}; "
                                          "no record of this design closes a faster one")
    return None, f"the {brd.name}'s own"
