"""The build records the project vouches for, and their re-check (``python -m fpga records``,
``make fpga-records``).

A record (:class:`BuildRecord`) is one configuration's exact build command (the fields of
:class:`fpga.toolchain.builds.BuildRequest`: architecture, instruction, board, pipelining level, design
clock, lanes, multipliers, Yosys release, placement seed, stand-in or board top) and what that
build gave (:class:`Result`: LUT4, FF, DSP and EBR after packing, the Fmax of each clock domain,
the verdict, the tools, the commit, the date and the machine).  All records are one manifest,
``fpga/toolchain/records.toml`` (:data:`MANIFEST`), read by :func:`load` and written by :func:`dump`.

:func:`record_from_build` makes a record from a finished build folder (its ``report.json`` and
nextpnr's ``top.report.json``); the re-check (:mod:`fpga.toolchain.records_check`) rebuilds each record and
compares (:func:`compare`): a resource or an Fmax that moved by more than the placement noise
(:data:`NOISE`), or a changed verdict, is flagged.  The defaults of a build come from here too:
:func:`fastest_clock` (``--clock auto``: the fastest clock a record of the design closed) and
:func:`yosys_choice` (the Yosys release a record or the family's known aborts name).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import subprocess
import tomllib
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path

from golden import paths

from ..board.domains import Domain
from .families import PlaceAndRoute

__all__ = ["MANIFEST", "NOISE", "Noise", "BuildRecord", "Result", "RecordError", "load", "dump", "parse", "record_name",
           "record_from_build", "record_from_log", "request_of_report", "compare", "fastest_clock", "yosys_choice",
           "PASS", "FAIL", "ERROR"]

MANIFEST = Path(__file__).with_name("records.toml")        # package data beside this module
RECORDS_README = paths.REPO / "docs" / "fpga" / "README.md"  # the human docs, whose "Records" table shows it
PASS, FAIL, ERROR = "PASS", "FAIL", "ERROR"      # a record's verdict (ERROR: the rebuild did not finish)
RESOURCE_KEYS = ("lut4", "ff", "dsp", "ebr")
FAST_DOMAIN, SYNC_DOMAIN = Domain.FAST, Domain.SYNC      # the domains a record times (fpga.board.domains)


@dataclass(frozen=True)
class Noise:
    """How far a rebuild of an unchanged design may move before it is flagged: ``fmax`` and
    ``resources`` as fractions of the record's value."""

    fmax: float
    resources: float
    provisional: bool
    measured: str


# Measured: the HGMMA F32 board top at the defaults (level 3, 100 MHz, two domains) built from one
# commit (fced116) with placement seeds 1 and 2 (``python -m fpga build hopper HGMMA.64xNx16.F32
# [--seed 2]`` at that commit; the manifest now holds a later main's seed-1 build): LUT4, FF, DSP
# and EBR identical (packing comes before placement), Fmax fast 103.07 / 101.38 MHz (1.6 %), sync
# 85.08 / 80.96 MHz (4.8 %).  With the same seed the tools
# are deterministic (the same top on wip-cdc 9f508a4 and main da59687: the same numbers to the
# hundredth).  One pair of seeds: 5 % Fmax covers it; resources may not move at all between
# seeds, so 1 % is left only for a change of tool behaviour too small to matter.
NOISE = Noise(fmax=0.05, resources=0.01, provisional=False,
              measured="5 % Fmax (seeds 1 and 2 of the HGMMA F32 top: 1.6 % fast, 4.8 % sync), "
                       "1 % resources (identical across seeds)")


class RecordError(ValueError):
    """A manifest or a record that cannot be read; one line naming the file, the record and the field."""


# the request's fields a record keeps, with their types and defaults (BuildRequest's names; clock in MHz)
REQUEST_FIELDS = {"arch": (str, None), "instr": (str, None), "board": (str, "ulx3s-85f"), "pipeline": (str, "0"),
                  "clock_mhz": ((int, float), None), "lanes": (int, 1), "multipliers": (str, "dsp"),
                  "yosys": (str, None), "router": (str, None), "placer": (str, None), "tmg_ripup": (bool, False),
                  "seed": (int, 1), "standin": (bool, False)}


@dataclass
class Result:
    """What a build of a record's request gave."""

    verdict: str
    lut4: int
    ff: int
    dsp: int
    ebr: int
    fmax: dict[str, float]               # clock domain (fpga.toolchain.build.DOMAINS) -> achieved MHz
    clocks: dict[str, float]             # clock domain -> its clock, MHz
    selftest: bool                       # the board top has the self-test engine
    two_domains: bool                    # the link on the oscillator, the unit on the PLL's clock
    tools: dict[str, str] = field(default_factory=dict)
    commit: str = ""
    date: str = ""
    machine: str = ""
    wall_s: float = 0.0
    source: str = ""                     # where the numbers were read (a build folder or a log in docs/fpga/)

    def resources(self) -> dict[str, int]:
        return {key: getattr(self, key) for key in RESOURCE_KEYS}


@dataclass
class BuildRecord:
    """One configuration: its request (what ``python -m fpga build`` is given) and its result."""

    name: str
    arch: str
    instr: str
    board: str = "ulx3s-85f"
    pipeline: str = "0"
    clock_mhz: float | None = None       # None: the board's own clock
    lanes: int = 1
    multipliers: str = "dsp"
    yosys: str | None = None             # None: the family's pin; "env": the environment's
    router: str | None = None            # None: the family's default router (nextpnr's own)
    placer: str | None = None            # None: the family's default placer (nextpnr's own)
    tmg_ripup: bool = False              # nextpnr's timing-driven rip-up in routing
    seed: int = 1
    standin: bool = False
    result: Result | None = None

    def request(self) -> dict:
        """The fields of the :class:`fpga.toolchain.builds.BuildRequest` that rebuilds it (clock in Hz)."""
        return dict(arch=self.arch, instr=self.instr, board=self.board, lanes=self.lanes,
                    clock=None if self.clock_mhz is None else round(self.clock_mhz * 1_000_000),
                    pipeline=self.pipeline, multipliers=self.multipliers, seed=self.seed, yosys=self.yosys,
                    router=self.router, placer=self.placer, tmg_ripup=self.tmg_ripup)

    def pnr(self) -> PlaceAndRoute:
        """nextpnr's choices the record was placed and routed with."""
        return PlaceAndRoute(router=self.router, placer=self.placer, tmg_ripup=self.tmg_ripup)

    def command(self) -> str:
        """``python -m fpga build ARCH INSTR ...``: the same build from the command line."""
        from .boards import board as find_board
        mhz = self.clock_mhz or find_board(self.board).clock_hz / 1e6
        words = ["python -m fpga build", self.arch, self.instr, "--pipeline", self.pipeline, "--clock", f"{mhz:g}"]
        for option, value, default in (("--board", self.board, "ulx3s-85f"), ("--lanes", self.lanes, 1),
                                       ("--multipliers", self.multipliers, "dsp"), ("--yosys", self.yosys, None)):
            if value != default:
                words += [option, str(value)]
        words += self.pnr().words() + (["--seed", str(self.seed)] if self.seed != 1 else [])
        return " ".join(words + (["--standin"] if self.standin else []))


def record_name(arch: str, instr: str, *, board: str = "ulx3s-85f", pipeline: str = "0",
                clock_mhz: float | None = None, lanes: int = 1, multipliers: str = "dsp", seed: int = 1,
                standin: bool = False) -> str:
    """``hopper/HGMMA.64xNx16.F32/p3/100MHz`` (with ``/standin``, ``/lanes2``, ``/lut``, ``/seed2``,
    and the board first when it is not the ULX3S-85F): what ``--only`` matches."""
    parts = [] if board == "ulx3s-85f" else [board]
    parts += [arch, instr, f"p{pipeline}", f"{clock_mhz:g}MHz" if clock_mhz else "board-clock"]
    parts += (["standin"] if standin else []) + ([f"lanes{lanes}"] if lanes != 1 else [])
    parts += ([multipliers] if multipliers != "dsp" else []) + ([f"seed{seed}"] if seed != 1 else [])
    return "/".join(parts)


# --- the manifest --------------------------------------------------------------------------------

def load(path: Path | str | None = None) -> list[BuildRecord]:
    """The records of the manifest (default :data:`MANIFEST`; none when it does not exist); RecordError
    in one line."""
    path = Path(path or MANIFEST)
    if not path.exists():
        return []
    return parse(path.read_text(), str(path))


def parse(text: str, where: str = "records.toml") -> list[BuildRecord]:
    """The records of a manifest's text (``where`` names it in errors)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RecordError(f"{where}: not a records manifest: {e}") from None
    unknown = set(data) - {"record"}
    if unknown:
        raise RecordError(f"{where}: unknown table {sorted(unknown)[0]!r}; a manifest holds [[record]] tables only")
    records, names = [], set()
    for index, table in enumerate(data.get("record", []), 1):
        record = _record(table, f"{where}: record {index} ({table.get('name', 'no name')})")
        if record.name in names:
            raise RecordError(f"{where}: record {index}: the name {record.name!r} is used twice")
        names.add(record.name)
        records.append(record)
    return records


def _record(table: dict, where: str) -> BuildRecord:
    table = dict(table)
    result = table.pop("result", None)
    valid = {"name", *REQUEST_FIELDS}
    for key, value in table.items():
        if key not in valid:
            raise RecordError(f"{where}: unknown field {key!r}; valid: {', '.join(sorted(valid))}, [result]")
        kind = str if key == "name" else REQUEST_FIELDS[key][0]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise RecordError(f"{where}: {key} = {value!r} is not {_type_name(kind)}")
    missing = [key for key in ("name", "arch", "instr") if key not in table]
    if missing:
        raise RecordError(f"{where}: missing {', '.join(missing)}")
    if not re.fullmatch(r"\d(,\w+=\d+)*|\w+=\d+(,\w+=\d+)*", table.get("pipeline", "0")):
        raise RecordError(f"{where}: pipeline = {table['pipeline']!r} is not a level 0..3 and/or FIELD=N overrides")
    record = BuildRecord(**table)
    if result is not None:
        record.result = _result(result, where)
    return record


def _result(table, where: str) -> Result:
    if not isinstance(table, dict):
        raise RecordError(f"{where}: result is not a table")
    names = {f.name: f for f in fields(Result)}
    for key, _value in table.items():
        if key not in names:
            raise RecordError(f"{where}: unknown result field {key!r}; valid: {', '.join(names)}")
    missing = [f.name for f in fields(Result) if f.name not in table
               and f.default is MISSING and f.default_factory is MISSING]
    if missing:
        raise RecordError(f"{where}: result lacks {', '.join(missing)}")
    if table["verdict"] not in (PASS, FAIL, ERROR):
        raise RecordError(f"{where}: verdict = {table['verdict']!r}; valid: {PASS}, {FAIL}, {ERROR}")
    for key in RESOURCE_KEYS:
        if not isinstance(table[key], int) or table[key] < 0:
            raise RecordError(f"{where}: {key} = {table[key]!r} is not a count")
    for key in ("fmax", "clocks"):
        if not isinstance(table[key], dict) or not all(isinstance(v, (int, float)) for v in table[key].values()):
            raise RecordError(f"{where}: {key} is not a table of clock domain = MHz")
    return Result(**table)


def _type_name(kind) -> str:
    return {str: "a string", int: "an integer", bool: "true or false"}.get(kind, "a number")


def dump(records: list[BuildRecord], path: Path | str | None = None) -> None:
    """Write the manifest (default :data:`MANIFEST`: a header, then one ``[[record]]`` per record, the
    command as a comment)."""
    Path(path or MANIFEST).write_text(dumps(records))


HEADER = """\
# The FPGA builds the project vouches for (docs/fpga/README.md, "Records").  Each [[record]] is a
# build request (the options of python -m fpga build; clock_mhz absent: the board's own clock;
# yosys absent: the family's pinned release) and [record.result] what that build gave.
# python -m fpga records rebuilds them and flags what moved; --update rewrites this file;
# python -m fpga records --from-build FOLDER adds the record of a finished build.
"""


def dumps(records: list[BuildRecord]) -> str:
    """The manifest's text."""
    out = [HEADER]
    for record in records:
        out.append(f"\n# {record.command()}\n[[record]]\n")
        fields_ = asdict(record)
        result = fields_.pop("result")
        for key, value in fields_.items():
            default = REQUEST_FIELDS.get(key, (None, None))[1]
            if value is not None and (key in ("name", "arch", "instr", "pipeline") or value != default):
                out.append(f"{key} = {_toml(value)}\n")
        if result is not None:
            out.append("[record.result]\n")
            out += [f"{key} = {_toml(value)}\n" for key, value in result.items() if value not in ("", None)]
    return "".join(out)


def _toml(value) -> str:
    """A TOML value of a string, number, bool or table of them (JSON's string escapes are TOML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, float):
        return repr(round(value, 4))
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value))


# --- a record from a build -----------------------------------------------------------------------

def _read_json(path: Path):
    """The JSON in ``path``; a :class:`RecordError` naming the file, and the line and column, when it
    is not JSON."""
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not valid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise RecordError(f"{path}: cannot be read ({e})") from None


def record_from_build(folder: Path | str, request=None, *, commit: str | None = None, machine: str | None = None,
                      name: str | None = None) -> BuildRecord:
    """The record of the finished build in ``folder`` (``report.json``, nextpnr's ``top.report.json``).

    ``request``: the :class:`fpga.toolchain.builds.BuildRequest` (or a :class:`BuildRecord`) it was built from;
    None reads it back from the folder (:func:`request_of_report`).  ``commit``: the commit the build
    was made from (default this checkout's HEAD); ``machine``: default this machine's description;
    the date is the report's.
    """
    from .build import BuildReport, clock_domains
    folder = Path(folder)
    report_path = folder / "report.json"
    if not report_path.exists():
        raise RecordError(f"{folder}: no report.json: not a finished build folder (python -m fpga build writes one)")
    fields_ = _read_json(report_path)
    try:
        if not isinstance(fields_, dict):
            raise TypeError(f"a JSON {type(fields_).__name__}, not an object")
        report = BuildReport.from_json(json.dumps(fields_))
    except KeyError as e:
        raise RecordError(f"{report_path}: not a report python -m fpga build writes: no field {e}") from None
    except (TypeError, ValueError, AttributeError) as e:
        raise RecordError(f"{report_path}: not a report python -m fpga build writes ({e})") from None
    record = request_of_report(report, folder) if request is None else _as_record(request)
    domains = report.domains
    pnr_path = folder / "top.report.json"
    if not domains and pnr_path.exists():
        pnr = _read_json(pnr_path)
        try:
            domains = clock_domains(pnr, report.clock_mhz * 1e6, (report.board_clock_mhz or report.clock_mhz) * 1e6)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise RecordError(f"{pnr_path}: not a report nextpnr writes ({type(e).__name__}: {e})") from None
    if not domains:
        raise RecordError(f"{folder}: neither report.json nor top.report.json gives the clock domains' Fmax")
    date = datetime.datetime.fromtimestamp(report_path.stat().st_mtime, datetime.UTC)
    record.result = Result(
        verdict=PASS if all(d["fmax_mhz"] >= d["clock_mhz"] for d in domains.values()) else FAIL,
        **asdict(report.used), fmax={k: d["fmax_mhz"] for k, d in domains.items()},
        clocks={k: d["clock_mhz"] for k, d in domains.items()},
        selftest=not record.standin and "_core" not in report.design,       # fpga.board.link: dot-add units only
        two_domains=len(domains) > 1 and not record.standin, tools=dict(report.tools),
        commit=commit or head_commit(), date=date.strftime("%Y-%m-%d %H:%M UTC"), machine=machine or this_machine(),
        wall_s=round(sum(seconds for _, seconds in report.steps), 1),
        source=f"build folder fpga/{folder.parent.name}/{folder.name}")      # not one machine's path
    if name:
        record.name = name
    return record


def record_from_log(path: Path | str) -> BuildRecord:
    """The record of a build log kept in docs/fpga/ (``make_fpga_*.txt``): its first line the command
    (``$ python -m fpga build ...``), its second ``# DATE, branch ... at commit SHA, MACHINE``, then the
    report the build printed (resources, one Fmax line, tools, wall time).  Such logs predate the two
    clock domains (one Fmax: the design clock's); the self-test engine is in the top exactly when the
    report has its lanes line (printed from the commit that added the engine on)."""
    path = Path(path)
    lines = path.read_text().splitlines()
    where = f"{path.name}"
    command = lines[0].split() if lines else []
    if command[:5] != ["$", "python", "-m", "fpga", "build"]:
        raise RecordError(f"{where}: the first line is not a '$ python -m fpga build ...' command")
    record = _logged_request(command[5:], where)
    text = "\n".join(lines)
    said = re.search(r"^# ([\d-]+), .*?commit (\w+)[^,]*, (.*)$", lines[1], re.M) if len(lines) > 1 else None
    fmax = re.search(r"^Fmax ([\d.]+) MHz for a ([\d.]+) MHz (design|board) clock", text, re.M)
    counts = {key: re.search(rf"^{title}\s+([\d,]+)\s", text, re.M)
              for key, title in zip(RESOURCE_KEYS, ("LUT4", "FF", r"DSP \(\w+\)", r"EBR \(\w+\)"))}
    if said is None or fmax is None or not all(counts.values()):
        raise RecordError(f"{where}: not a build log (its date and commit line, the resources and the Fmax line)")
    domain = FAST_DOMAIN if fmax.group(3) == "design" else SYNC_DOMAIN
    tools = re.search(r"^tools: yosys (.*?); (\S+) (\S+)$", text, re.M)
    wall = re.search(r"^wall time: (.*)$", text, re.M)
    mhz = float(fmax.group(1))
    record.result = Result(
        verdict=PASS if mhz >= float(fmax.group(2)) else FAIL,
        **{key: int(found.group(1).replace(",", "")) for key, found in counts.items()},
        fmax={domain: mhz}, clocks={domain: float(fmax.group(2))},
        selftest=not record.standin and re.search(r"^\d+ lanes?, ", text, re.M) is not None, two_domains=False,
        tools={"yosys": tools.group(1), tools.group(2): tools.group(3)} if tools else {},
        commit=said.group(2), date=said.group(1), machine=said.group(3),
        wall_s=round(sum(float(x) for x in re.findall(r"([\d.]+) s", wall.group(1))), 1) if wall else 0.0,
        source=f"docs/fpga/{path.name}")
    return record


# the options a kept log's command may give, and the BuildRecord field each sets (the rest are refused)
LOG_OPTIONS = {"--clock": ("clock_mhz", float), "--pipeline": ("pipeline", str), "--yosys": ("yosys", str),
               "--router": ("router", str), "--placer": ("placer", str),
               "--seed": ("seed", int), "--board": ("board", str), "--lanes": ("lanes", int),
               "--multipliers": ("multipliers", str)}
# the flags a kept log's command may give, and the BuildRecord field each sets true
LOG_FLAGS = {"--tmg-ripup": "tmg_ripup", "--standin": "standin"}


def _logged_request(words: list[str], where: str) -> BuildRecord:
    """The record of ``ARCH INSTR [options]`` (a kept log's ``python -m fpga build`` command)."""
    if len(words) < 2:
        raise RecordError(f"{where}: the command names no ARCH and INSTR")
    kw, rest = {"arch": words[0], "instr": words[1]}, iter(words[2:])
    for word in rest:
        if word in LOG_FLAGS:
            kw[LOG_FLAGS[word]] = True
        elif word in LOG_OPTIONS:
            key, kind = LOG_OPTIONS[word]
            kw[key] = kind(next(rest, ""))
        elif word != "--allow-timing-fail":
            raise RecordError(f"{where}: the command's option {word!r} is not one a record keeps "
                              f"({', '.join([*LOG_OPTIONS, *LOG_FLAGS])})")
    return _named_record(kw)


def _named_record(kw: dict) -> BuildRecord:
    """The record of a request's fields, named by those that make its build folder (:func:`record_name`)."""
    kept = {key: kw.pop(key) for key in ("yosys", "router", "placer", "tmg_ripup") if key in kw}
    return BuildRecord(name=record_name(**kw), **kept, **kw)


def _as_record(request) -> BuildRecord:
    if isinstance(request, BuildRecord):
        return replace(request, result=None)
    clock = getattr(request, "clock", None)
    kw = dict(arch=request.arch, instr=request.instr, board=request.board, pipeline=str(request.pipeline),
              clock_mhz=None if clock in (None, "auto") else clock / 1e6, lanes=int(request.lanes),
              multipliers=request.multipliers, seed=request.seed, standin=bool(getattr(request, "standin", False)))
    return _named_record(dict(kw, yosys=None if request.yosys == "auto" else request.yosys,
                              **asdict(PlaceAndRoute.requested(request))))


def request_of_report(report, folder: Path | None = None) -> BuildRecord:
    """The request a build report was made from, read back: the unit, board and clocks from the
    report, the pipelining level from the design's name (``_p3``), the seed, router, placer and timing
    rip-up from Amaranth's build plan (nextpnr's ``--seed``, ``--router``, ``--placer``, ``--tmg-ripup``),
    the Yosys release from the version
    the report names (the family's pin, else ``env``)."""
    from .families import family as find_family
    if not report.unit:
        raise RecordError(f"{report.design}: not a board top or stand-in of this project's units (no unit in the "
                          "report); give the request")
    arch, instr = report.unit.split(" ", 1)
    level = re.search(r"_p(\d[^_]*(?:_[a-z]+\d+)*?)(?:_\d+(?:\.\d+)?MHz|_lut|_auto\d*|_seed\d+|$)", report.design)
    pipeline = re.sub(r"([a-z]+)(\d+)", r"\1=\2", level.group(1)).replace("_", ",") if level else "0"
    seed, pnr = 1, {}
    plan = (folder / "build_top.json") if folder else None
    if plan and plan.exists():                  # Amaranth's plan: each command a list of words
        for command in json.loads(plan.read_text()).get("commands", []):
            if "--seed" in command[:-1]:
                seed = int(command[command.index("--seed") + 1])
            pnr.update({key: command[command.index(option) + 1] for option, key in (("--router", "router"),
                        ("--placer", "placer")) if option in command[:-1]})
            if "--tmg-ripup" in command:
                pnr["tmg_ripup"] = True
    pin = find_family(report.family).yosys_version
    said = report.tools.get("yosys", "")
    yosys = None if pin is None or said.startswith(".".join(pin.split(".")[:2]) + " ") else "env"
    kw = dict(arch=arch, instr=instr, board=report.board, pipeline=pipeline,
              clock_mhz=report.clock_mhz if report.through_pll else None, lanes=report.lanes or 1,
              multipliers=report.multipliers, seed=seed, standin=report.design.startswith("standin-"))
    return _named_record(dict(kw, yosys=yosys, **pnr))


def head_commit() -> str:
    """This checkout's commit (short), or ``unknown``."""
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=paths.REPO, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def this_machine() -> str:
    """``x86_64, 2 cores (Intel Xeon ...), 15.6 GiB``: what a record's build ran on."""
    model = ""
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    memory = ""
    try:
        memory = f", {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.1f} GiB"
    except (ValueError, OSError, AttributeError):
        pass
    return f"{platform.machine()}, {os.cpu_count()} cores" + (f" ({model})" if model else "") + memory


# --- comparing -----------------------------------------------------------------------------------

def compare(old: Result, new: Result, noise: Noise = NOISE) -> list[str]:
    """What moved from ``old`` to ``new`` by more than ``noise`` (each a short phrase); [] when nothing did."""
    moved = []
    if new.verdict != old.verdict:
        moved.append(f"verdict {old.verdict} -> {new.verdict}")
    if new.verdict == ERROR:                     # nothing built: nothing else to compare
        return moved
    for key in ("selftest", "two_domains"):
        if getattr(new, key) != getattr(old, key):
            moved.append(f"design changed: {key} {getattr(old, key)} -> {getattr(new, key)}")
    for key in RESOURCE_KEYS:
        before, now = getattr(old, key), getattr(new, key)
        if abs(now - before) > noise.resources * max(before, 1):
            moved.append(f"{key.upper()} {before:,} -> {now:,} ({_percent(before, now)})")
    for domain in sorted(set(old.fmax) & set(new.fmax)):
        before, now = old.fmax[domain], new.fmax[domain]
        if abs(now - before) > noise.fmax * before:
            moved.append(f"Fmax {domain} {before:.2f} -> {now:.2f} MHz ({_percent(before, now)})")
    return moved


def _percent(before: float, now: float) -> str:
    return f"{100 * (now - before) / before:+.1f} %" if before else "new"


# --- defaults from the records -------------------------------------------------------------------

def fastest_clock(records: list[BuildRecord], arch: str, instr: str, board: str, pipeline: str,
                  lanes: int = 1, multipliers: str = "dsp") -> BuildRecord | None:
    """The record of this board top (not a stand-in) at this level with the fastest design clock
    that passed, or None."""
    passed = [r for r in records if (r.arch, r.instr, r.board, r.pipeline, r.lanes, r.multipliers)
              == (arch, instr, board, pipeline, lanes, multipliers) and not r.standin and r.clock_mhz
              and r.result is not None and r.result.verdict == PASS]
    return max(passed, key=lambda r: r.clock_mhz, default=None)


def pipeline_choice(records: list[BuildRecord], arch: str, instr: str, board: str, level: str, lanes: int = 1,
                    multipliers: str = "dsp") -> tuple[str, str]:
    """``(spec, why)`` for a build that names no pipelining: ``level`` (the family's), or an override of
    it (``3,merge=3``) that a record of this board top passed with where no record at ``level`` passed."""
    def passed(spec):
        return fastest_clock(records, arch, instr, board, spec, lanes, multipliers)
    if passed(level):
        return level, ""
    overrides = sorted({r.pipeline for r in records if r.pipeline.startswith(f"{level},") and passed(r.pipeline)})
    if overrides:
        found = passed(overrides[0])
        return overrides[0], (f"no record at level {level} closed timing; its record {found.name} closed it "
                              f"with {overrides[0]}")
    return level, ""


def yosys_choice(records: list[BuildRecord], family, arch: str, instr: str, board: str,
                 pipeline: str | None = None) -> tuple[str | None, str]:
    """``(release, why)`` for a build that names no Yosys: the release a record of this design was
    built with where it is not the family's pin (a record of the same ``pipeline`` first), else the
    environment's where the family's pin is known to abort on the instruction's algorithm
    (``Family.yosys_aborts``), else (None: the pin, "")."""
    import golden
    built = [r for r in records if (r.arch, r.instr, r.board) == (arch, instr, board) and r.yosys
             and r.result is not None and r.result.verdict != ERROR]
    built.sort(key=lambda r: (r.pipeline != pipeline, r.seed != 1))       # stable otherwise: the manifest's order
    if built:
        return built[0].yosys, f"its record {built[0].name} was built with it"
    algorithms = {ins.algorithm for ins in golden.select(arch, instr)}
    known = sorted(algorithms & set(getattr(family, "yosys_aborts", {})))
    if known:
        return "env", (f"the {family.name} pin {family.yosys_version} is known to fail on {known[0]}: "
                       f"{family.yosys_aborts[known[0]]}")
    return None, ""


def pnr_choice(records: list[BuildRecord], family, arch: str, instr: str, board: str,
               pipeline: str | None = None) -> tuple[PlaceAndRoute, str]:
    """``(choices, why)`` for a build that leaves nextpnr's router, placer or timing rip-up to ``auto``:
    the three a record of this design was placed and routed with where it names any (router2 where
    router1 did not converge; the static placer and timing rip-up where they closed timing), taken
    together; a record of the same ``pipeline`` first, then one that closed timing, then seed 1's.  Else
    ``(family.default_pnr(), "")``."""
    named = [r for r in records if (r.arch, r.instr, r.board) == (arch, instr, board) and r.pnr() != PlaceAndRoute()
             and r.result is not None and r.result.verdict != ERROR]
    named.sort(key=lambda r: (r.pipeline != pipeline, r.result.verdict != PASS, r.seed != 1))   # stable otherwise
    if named:
        return named[0].pnr(), f"its record {named[0].name} was placed and routed with them"
    return family.default_pnr(), ""
