"""The description of a device under test: one TOML file beside a team's RTL (``unit.toml``).

:func:`load` reads and checks it; every problem is one :class:`DescriptionError` line naming
the file, the field and what is valid.  The fields are documented in ``docs/your-rtl.md``;
paths are relative to the TOML file's folder.  Nothing here runs a tool: the files named are
read by :mod:`cosim.dut.sources`, the top's ports checked by :mod:`cosim.dut.ports`.
"""

from __future__ import annotations

import enum
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


class DescriptionError(ValueError):
    """A description (or what it names) is wrong: one line, naming the field and what is valid."""


class Handshake(str, enum.Enum):
    """How operands go in and results come out."""

    VALID_READY = "valid_ready"    # valid/ready on both sides: random stalls on both
    AXI_STREAM = "axi_stream"      # valid/ready with AXI-Stream names, operands in tdata
    VALID_ONLY = "valid_only"      # in_valid / out_valid, no backpressure
    ENABLE = "enable"              # fixed latency, a global enable (stall) pin
    FIXED = "fixed"                # fixed latency, a new vector every cycle, no handshake


BACKPRESSURE = (Handshake.VALID_READY, Handshake.AXI_STREAM)
NEEDS_LATENCY = (Handshake.ENABLE, Handshake.FIXED)
OPERAND_NAMES = ("a", "b", "c", "d", "scale_a", "scale_b")
REQUIRED_OPERANDS = ("a", "b", "c", "d")
ORDERS = ("lsb_first", "msb_first")
SOURCE_KEYS = ("sources", "filelist", "core")


@dataclass(frozen=True)
class Operand:
    """Where one operand lives: a packed bus (``port``) or one port per element (``ports``, with ``{i}``)."""

    name: str
    element_bits: int
    elements: int = 1
    port: str | None = None
    ports: str | None = None
    order: str = "lsb_first"
    offset: int = 0

    def element_port(self, i: int) -> tuple[str, int]:
        """``(port, bit offset)`` of element ``i``."""
        if self.ports is not None:
            return self.ports.replace("{i}", str(i)), 0
        slot = i if self.order == "lsb_first" else self.elements - 1 - i
        return self.port, self.offset + slot * self.element_bits

    def port_names(self) -> list[str]:
        if self.ports is not None:
            return [self.ports.replace("{i}", str(i)) for i in range(self.elements)]
        return [self.port]

    def bits_needed(self) -> int:
        """The narrowest width a packed port can have (per-element ports: the element)."""
        return self.element_bits if self.ports is not None else self.offset + self.elements * self.element_bits


@dataclass(frozen=True)
class HandshakeSpec:
    kind: Handshake
    in_valid: str | None = None
    in_ready: str | None = None
    out_valid: str | None = None
    out_ready: str | None = None
    enable: str | None = None
    latency: int | None = None

    def ports(self) -> dict:
        """``{role: port}`` of the handshake's pins (role: in_valid, in_ready, ...)."""
        return {k: getattr(self, k) for k in ("in_valid", "in_ready", "out_valid", "out_ready", "enable")
                if getattr(self, k) is not None}


@dataclass(frozen=True)
class Target:
    """One thing the unit must match: a catalog instruction, optional Params changes, constant pins."""

    arch: str
    instr: str
    params: str | None = None
    pins: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Description:
    path: Path
    name: str
    top: str
    sources: tuple = ()
    include_dirs: tuple = ()
    filelist: Path | None = None
    core: Path | None = None
    defines: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    clock: str = "clk"
    reset: str | None = "rst"
    reset_active: str = "high"
    reset_cycles: int = 4
    handshake: HandshakeSpec = HandshakeSpec(Handshake.VALID_READY)
    operands: dict = field(default_factory=dict)
    targets: tuple = ()
    plusargs: tuple = ()

    @property
    def folder(self) -> Path:
        return self.path.parent


# ---- reading ------------------------------------------------------------------------------------------

class _Reader:
    """Typed access to one table of the TOML, each error naming file and field."""

    def __init__(self, path: Path, table: dict, where: str):
        self.path, self.table, self.where = path, table, where

    def fail(self, key: str, what: str):
        raise DescriptionError(f"{self.path}: {self.where}{key}: {what}")

    def get(self, key, kind, default=None, required=False, valid: str = ""):
        if key not in self.table:
            if required:
                self.fail(key, f"missing (required{'; ' + valid if valid else ''})")
            return default
        v = self.table[key]
        if kind is int and (isinstance(v, bool) or not isinstance(v, int)):
            self.fail(key, f"{v!r} is not an integer{'; ' + valid if valid else ''}")
        if kind is not int and not isinstance(v, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            self.fail(key, f"{v!r} is a {type(v).__name__}, expected {names}{'; ' + valid if valid else ''}")
        return v

    def name(self, key, default=None, required=False):
        v = self.get(key, str, default, required, "a port or module name")
        if v is not None and not _is_identifier(v.replace("{i}", "0")):
            self.fail(key, f"{v!r} is not a Verilog identifier")
        return v

    def unknown(self, allowed):
        extra = sorted(set(self.table) - set(allowed))
        if extra:
            self.fail(extra[0], f"unknown field; valid: {', '.join(allowed)}")


def _is_identifier(s: str) -> bool:
    return bool(s) and (s[0].isalpha() or s[0] == "_") and all(ch.isalnum() or ch in "_$" for ch in s)


def load(path) -> Description:
    """Read and check the description at ``path`` (:class:`DescriptionError`, one line, if it is wrong)."""
    path = Path(path)
    if path.is_dir() and (path / "unit.toml").exists():
        path = path / "unit.toml"
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise DescriptionError(f"{path}: no such description file (DUT=path/unit.toml)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DescriptionError(f"{path}: cannot be read ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise DescriptionError(f"{path}: not valid TOML ({e})") from None
    path = path.resolve()
    top = _Reader(path, data, "")
    top.unknown(("dut", "clock", "reset", "handshake", "operands", "target"))
    dut = _Reader(path, top.get("dut", dict, required=True, valid="a [dut] table with name and top"), "[dut] ")
    dut.unknown(("name", "top", "sources", "include_dirs", "filelist", "core", "defines", "parameters", "plusargs"))
    kw = _read_dut(path, dut)
    kw.update(_read_clock_reset(path, top))
    hs = _read_handshake(path, top)
    ops = _read_operands(path, top, hs)
    targets = _read_targets(path, top)
    return Description(path=path, handshake=hs, operands=ops, targets=targets, **kw)


def _read_dut(path: Path, dut: _Reader) -> dict:
    name = dut.get("name", str, required=True, valid="a short name used in reports and build folders")
    top = dut.name("top", required=True)
    given = [k for k in SOURCE_KEYS if k in dut.table]
    if len(given) != 1:
        dut.fail(given[1] if given else "sources",
                 ("give exactly one of " if given else "missing: give one of ") +
                 "sources = [files] (with include_dirs), filelist = \"files.f\", core = \"unit.core\"")
    files = dut.get("sources", list, [])
    if not all(isinstance(f, str) for f in files) or ("sources" in dut.table and not files):
        dut.fail("sources", "expected a non-empty list of file paths")
    incs = dut.get("include_dirs", list, [])
    if not all(isinstance(f, str) for f in incs):
        dut.fail("include_dirs", "expected a list of folder paths")
    if incs and "sources" not in dut.table:
        dut.fail("include_dirs", "goes with sources = [...]; a filelist or core names its own include folders")
    folder = path.parent
    fl, core = dut.get("filelist", str), dut.get("core", str)
    defines = dut.get("defines", dict, {})
    for k, v in defines.items():
        if not _is_identifier(k) or isinstance(v, (dict, list, float)):
            dut.fail(f"defines.{k}", "a define is NAME = integer, string or true")
    params = dut.get("parameters", dict, {})
    for k, v in params.items():
        if not _is_identifier(k) or isinstance(v, (dict, list, float)):
            dut.fail(f"parameters.{k}",
                     "a parameter is NAME = integer, true/false or a SystemVerilog expression string")
    plusargs = dut.get("plusargs", list, [])
    if not all(isinstance(p, str) and p.startswith("+") for p in plusargs):
        dut.fail("plusargs", "expected a list of simulator plusargs, each starting with '+'")
    return dict(name=name, top=top, sources=tuple(folder / f for f in files),
                include_dirs=tuple(folder / d for d in incs), filelist=None if fl is None else folder / fl,
                core=None if core is None else folder / core, defines=dict(defines), parameters=dict(params),
                plusargs=tuple(plusargs))


def _read_clock_reset(path: Path, top: _Reader) -> dict:
    clk = _Reader(path, top.get("clock", dict, {}), "[clock] ")
    clk.unknown(("name",))
    rst = _Reader(path, top.get("reset", dict, {}), "[reset] ")
    rst.unknown(("name", "active", "cycles"))
    active = rst.get("active", str, "high")
    if active not in ("high", "low"):
        rst.fail("active", f"{active!r}; valid: high, low")
    cycles = rst.get("cycles", int, 4)
    if not 1 <= cycles <= 1000:
        rst.fail("cycles", f"{cycles}; valid: 1 to 1000 cycles held at reset")
    reset = None if rst.table.get("name") == "" else rst.name("name", "rst")     # "": the top has no reset
    return dict(clock=clk.name("name", "clk"), reset=reset, reset_active=active, reset_cycles=cycles)


_HS_FIELDS = {
    Handshake.VALID_READY: ("in_valid", "in_ready", "out_valid", "out_ready"),
    Handshake.AXI_STREAM: ("in_prefix", "out_prefix"),
    Handshake.VALID_ONLY: ("in_valid", "out_valid"),
    Handshake.ENABLE: ("enable",),
    Handshake.FIXED: (),
}


def _read_handshake(path: Path, top: _Reader) -> HandshakeSpec:
    hs = _Reader(path, top.get("handshake", dict, required=True, valid="a [handshake] table with kind"),
                 "[handshake] ")
    kinds = ", ".join(k.value for k in Handshake)
    kind_s = hs.get("kind", str, required=True, valid=kinds)
    try:
        kind = Handshake(kind_s)
    except ValueError:
        hs.fail("kind", f"{kind_s!r}; valid: {kinds}")
    hs.unknown(("kind", "latency") + _HS_FIELDS[kind])
    latency = hs.get("latency", int)
    if latency is None and kind in NEEDS_LATENCY:
        hs.fail("latency", f"missing: a {kind.value} handshake needs latency = N (cycles from input to result)")
    if latency is not None and not 0 <= latency <= 100_000:
        hs.fail("latency", f"{latency}; valid: 0 to 100000 cycles")
    if kind is Handshake.AXI_STREAM:
        pi, po = hs.name("in_prefix", "s_axis"), hs.name("out_prefix", "m_axis")
        return HandshakeSpec(kind, f"{pi}_tvalid", f"{pi}_tready", f"{po}_tvalid", f"{po}_tready", latency=latency)
    names = {k: hs.name(k, k if k != "enable" else "en") for k in _HS_FIELDS[kind]}
    return HandshakeSpec(kind, latency=latency, **names)


def _read_operands(path: Path, top: _Reader, hs: HandshakeSpec) -> dict:
    table = top.get("operands", dict, required=True, valid="an [operands] table mapping a, b, c, d to ports")
    ops = _Reader(path, table, "[operands] ")
    ops.unknown(OPERAND_NAMES)
    out = {}
    for name in OPERAND_NAMES:
        if name not in table:
            if name in REQUIRED_OPERANDS:
                ops.fail(name, f"missing: {name} = {{ port = \"...\", element_bits = N"
                         f"{', elements = K' if name in 'ab' else ''} }}")
            continue
        out[name] = _read_operand(path, name, ops.get(name, dict), hs)
    return out


def _read_operand(path: Path, name: str, table: dict, hs: HandshakeSpec) -> Operand:
    r = _Reader(path, table, f"[operands] {name}.")
    r.unknown(("port", "ports", "element_bits", "elements", "order", "offset"))
    port, ports = r.name("port"), r.get("ports", str)
    if port is None and ports is None and hs.kind is Handshake.AXI_STREAM:
        port = (hs.out_valid if name == "d" else hs.in_valid).removesuffix("tvalid") + "tdata"
    if (port is None) == (ports is None):
        r.fail("port", "give exactly one of port = \"bus\" (packed elements) or ports = \"name_{i}\" (one per element)")
    if ports is not None:
        if "{i}" not in ports:
            r.fail("ports", f"{ports!r} has no {{i}} (replaced by the element number 0, 1, ...)")
        r.name("ports")
    bits = r.get("element_bits", int, required=True, valid="the bits of one element")
    if not 1 <= bits <= 64:
        r.fail("element_bits", f"{bits}; valid: 1 to 64")
    elements = r.get("elements", int, 1)
    if not 1 <= elements <= 4096:
        r.fail("elements", f"{elements}; valid: 1 to 4096")
    order = r.get("order", str, "lsb_first")
    if order not in ORDERS:
        r.fail("order", f"{order!r}; valid: {', '.join(ORDERS)}")
    offset = r.get("offset", int, 0)
    if offset < 0:
        r.fail("offset", f"{offset}; valid: a bit offset >= 0")
    return Operand(name, bits, elements, port, ports, order, offset)


def _read_targets(path: Path, top: _Reader) -> tuple:
    raw = top.get("target", list, required=True, valid="one or more [[target]] tables with arch and instr")
    if not raw:
        top.fail("target", "no [[target]]: give at least one (arch, instr)")
    targets = []
    for i, t in enumerate(raw):
        if not isinstance(t, dict):
            top.fail("target", "use [[target]] tables")
        r = _Reader(path, t, f"[[target]] #{i + 1} ")
        r.unknown(("arch", "instr", "params", "pins"))
        pins = r.get("pins", dict, {})
        for k, v in pins.items():
            if not _is_identifier(k) or isinstance(v, bool) or not isinstance(v, int) or v < 0:
                r.fail(f"pins.{k}", f"{v!r}; a pin is PORT = non-negative integer")
        targets.append(Target(r.get("arch", str, required=True, valid="a catalog architecture"),
                              r.get("instr", str, required=True, valid="a catalog instruction name"),
                              r.get("params", str), dict(pins)))
    return tuple(targets)
