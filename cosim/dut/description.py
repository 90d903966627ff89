"""The description of a device under test: one TOML file beside a team's RTL (``unit.toml``).

:func:`load` reads and checks it; every problem is one :class:`DescriptionError` line naming
the file, the field and what is valid.  The fields are documented in ``docs/your-rtl.md``;
paths are relative to the TOML file's folder.  Nothing here runs a tool: the files named are
read by :mod:`cosim.dut.sources`, the top's ports checked by :mod:`cosim.dut.ports`.

Two kinds of device: a **dot-add device** takes one dot-add per transfer (its operands' ``elements``
are the instruction's K); a **tile device** (a ``[tile]`` table) takes a whole instruction, A, B, C
(and scale) tiles over beats, ``lanes`` elements of each per beat in a stated ``layout``, and gives D
over beats (:class:`Tile`).  An operand's elements sit on one packed bus (``port``, with ``offset``),
one port each (``ports = "a_{i}"``), or any named ports and bit ranges (``ports = ["op_a[15:0]",
"op_b[15:0]"]``); several operands may share a port where their bits do not overlap.  A target is a
catalog entry (``arch``, ``instr``) or an instruction of your own (``k``, ``formats``, ``params``:
:mod:`golden.custom`).
"""

from __future__ import annotations

import enum
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from golden.catalog import CUSTOM

from .reader import DescriptionError, Reader, is_identifier
from .signal_map import read_signals


class Handshake(enum.StrEnum):
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
INPUT_OPERANDS = ("a", "b", "c", "scale_a", "scale_b")
ORDERS = ("lsb_first", "msb_first")
SOURCE_KEYS = ("sources", "filelist", "core")
EXAMPLE = "examples/dut/dotp_vr/unit.toml"        # what a message shows as a description's path
_SLICE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_$]*(?:\{i\}[A-Za-z0-9_$]*)?)(?:\[(?P<hi>\d+):(?P<lo>\d+)\])?$")


@dataclass(frozen=True)
class Operand:
    """Where one operand lives.

    Members
    -------
    name : str
        ``a``, ``b``, ``c``, ``d``, ``scale_a`` or ``scale_b``.
    element_bits : int
        Bits of one element's field (a narrow format sits in its low bits).
    elements : int
        Elements per transfer: the dot-add's K for a and b (1 for c and d), or, on a tile device, the
        lanes of one beat.
    port : str or None
        A packed bus holding every element (``order``, ``offset``).
    ports : str or None
        A pattern with ``{i}``: one port per element, each at bit ``offset``.
    places : tuple of (port, offset)
        Element ``i`` at bit ``offset`` of ``port`` (a list ``ports = ["x[15:0]", "y"]``).
    layout, fragment_order, first_beat : tile devices only
        The tile's element order (:mod:`golden.layouts`), and the first beat of the transaction
        that carries this operand.
    """

    name: str
    element_bits: int
    elements: int = 1
    port: str | None = None
    ports: str | None = None
    order: str = "lsb_first"
    offset: int = 0
    places: tuple = ()
    layout: str = "row_major"
    fragment_order: str = "thread"
    first_beat: int = 0

    def element_port(self, i: int) -> tuple[str, int]:
        """``(port, bit offset)`` of element ``i``."""
        if self.places:
            return self.places[i]
        if self.ports is not None:
            return self.ports.replace("{i}", str(i)), self.offset
        slot = i if self.order == "lsb_first" else self.elements - 1 - i
        return self.port, self.offset + slot * self.element_bits

    def fields(self) -> list[tuple[str, int, int]]:
        """``(port, bit offset, bits)`` of each element, in element order."""
        return [(*self.element_port(i), self.element_bits) for i in range(self.elements)]

    def port_names(self) -> list[str]:
        """The ports the operand uses, each once, in order."""
        return list(dict.fromkeys(port for port, _, _ in self.fields()))

    def bits_needed(self, port: str | None = None) -> int:
        """The narrowest width ``port`` (default: the packed bus) can have to hold this operand's fields."""
        port = self.port if port is None else port
        return max((off + bits for p, off, bits in self.fields() if p == port), default=0)

    @property
    def packed(self) -> bool:
        return self.port is not None


@dataclass(frozen=True)
class Tile:
    """A tile device's transaction: ``D [m, n] = C + A [m, k] @ B [k, n]``, ``k`` a multiple of the target's K
    (the k-slices chained through the accumulator: :mod:`golden.tile`)."""

    m: int
    n: int
    k: int

    def shape(self, operand: str, block: int | None = None) -> tuple[int, int]:
        """``(rows, cols)`` of an operand's tile."""
        if operand == "a":
            return self.m, self.k
        if operand == "b":
            return self.k, self.n
        if operand == "scale_a":
            return self.m, self.k // block
        if operand == "scale_b":
            return self.k // block, self.n
        return self.m, self.n


@dataclass(frozen=True)
class HandshakeSpec:
    kind: Handshake
    in_valid: str | None = None
    in_ready: str | None = None
    out_valid: str | None = None
    out_ready: str | None = None
    enable: str | None = None
    latency: int | None = None
    in_last: str | None = None         # tile devices: high on a transaction's last input beat
    out_last: str | None = None        # tile devices: the design marks its last output beat

    def ports(self) -> dict:
        """``{role: port}`` of the handshake's pins (role: in_valid, in_ready, ...)."""
        return {k: getattr(self, k) for k in ROLES if getattr(self, k) is not None}


ROLES = ("in_valid", "in_ready", "out_valid", "out_ready", "enable", "in_last", "out_last")
OUTPUT_ROLES = ("in_ready", "out_valid", "out_last")


@dataclass(frozen=True)
class Target:
    """One thing the unit must match: a catalog instruction with optional Params changes, or an
    instruction of your own (``arch = "custom"``, ``instr`` its spec: :mod:`golden.custom`); constant pins;
    ``label``: what reports call it (default: the instruction's name)."""

    arch: str
    instr: str
    params: str | None = None
    pins: dict = field(default_factory=dict)
    label: str | None = None

    @property
    def custom(self) -> bool:
        return self.arch == CUSTOM

    def describe(self) -> str:
        """The target in a line: its label, or arch and instruction."""
        return self.label or (f"{self.arch} {self.instr}" if not self.custom else self.instr)


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
    tile: Tile | None = None
    signals: dict = field(default_factory=dict)       # golden's stage values -> the design's signals

    @property
    def folder(self) -> Path:
        return self.path.parent


# ---- reading ------------------------------------------------------------------------------------------

def load(path) -> Description:
    """Read and check the description at ``path`` (:class:`DescriptionError`, one line, if it is wrong)."""
    if not str(path).strip():                   # DEVICE=dut:, --backend dut:, DUT= with nothing after it
        raise DescriptionError(f"dut: needs the description's path, e.g. dut:{EXAMPLE} (DUT={EXAMPLE})")
    path = Path(path)
    if path.is_dir():
        if not (path / "unit.toml").exists():
            raise DescriptionError(f"{path}: is a folder without a unit.toml; give the description's path, "
                                   f"e.g. {EXAMPLE}")
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
    top = Reader(path, data, "")
    top.unknown(("dut", "clock", "reset", "handshake", "tile", "operands", "signals", "target"))
    dut = Reader(path, top.get("dut", dict, required=True, valid="a [dut] table with name and top"), "[dut] ")
    dut.unknown(("name", "top", "sources", "include_dirs", "filelist", "core", "defines", "parameters", "plusargs"))
    kw = _read_dut(path, dut)
    kw.update(_read_clock_reset(path, top))
    tile = _read_tile(path, top)
    hs = _read_handshake(path, top, tile)
    ops = _read_operands(path, top, hs, tile)
    targets = _read_targets(path, top)
    desc = Description(path=path, handshake=hs, operands=ops, targets=targets, tile=tile, **kw)
    if "signals" in data:                        # the signal map: golden's stages -> the design's signals
        desc = _replace(desc, signals=read_signals(path, top.get("signals", dict), tile))
    return desc


def _replace(desc: Description, **changes) -> Description:
    from dataclasses import replace
    return replace(desc, **changes)


def _read_dut(path: Path, dut: Reader) -> dict:
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
        if not is_identifier(k) or isinstance(v, (dict, list, float)):
            dut.fail(f"defines.{k}", "a define is NAME = integer, string or true")
    params = dut.get("parameters", dict, {})
    for k, v in params.items():
        if not is_identifier(k) or isinstance(v, (dict, list, float)):
            dut.fail(f"parameters.{k}",
                     "a parameter is NAME = integer, true/false or a SystemVerilog expression string")
    plusargs = dut.get("plusargs", list, [])
    if not all(isinstance(p, str) and p.startswith("+") for p in plusargs):
        dut.fail("plusargs", "expected a list of simulator plusargs, each starting with '+'")
    return dict(name=name, top=top, sources=tuple(folder / f for f in files),
                include_dirs=tuple(folder / d for d in incs), filelist=None if fl is None else folder / fl,
                core=None if core is None else folder / core, defines=dict(defines), parameters=dict(params),
                plusargs=tuple(plusargs))


def _read_clock_reset(path: Path, top: Reader) -> dict:
    clk = Reader(path, top.get("clock", dict, {}), "[clock] ")
    clk.unknown(("name",))
    rst = Reader(path, top.get("reset", dict, {}), "[reset] ")
    rst.unknown(("name", "active", "cycles"))
    active = rst.choice("active", ("high", "low"), "high")
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


TILE_HANDSHAKES = BACKPRESSURE            # a tile device's beats need backpressure on both sides
LAST_FIELDS = ("in_last", "out_last")


def _read_handshake(path: Path, top: Reader, tile: Tile | None) -> HandshakeSpec:
    hs = Reader(path, top.get("handshake", dict, required=True, valid="a [handshake] table with kind"),
                 "[handshake] ")
    kinds = ", ".join(k.value for k in Handshake)
    kind_s = hs.get("kind", str, required=True, valid=kinds)
    try:
        kind = Handshake(kind_s)
    except ValueError:
        hs.fail("kind", f"{kind_s!r}; valid: {kinds}")
    if tile is not None and kind not in TILE_HANDSHAKES:
        hs.fail("kind", f"{kind.value!r}: a tile device moves its beats with backpressure; valid with [tile]: "
                        f"{', '.join(k.value for k in TILE_HANDSHAKES)}")
    hs.unknown(("kind", "latency") + _HS_FIELDS[kind] + (LAST_FIELDS if tile is not None else ()))
    latency = hs.get("latency", int)
    if latency is None and kind in NEEDS_LATENCY:
        hs.fail("latency", f"missing: a {kind.value} handshake needs latency = N (cycles from input to result)")
    if latency is not None and not 0 <= latency <= 100_000:
        hs.fail("latency", f"{latency}; valid: 0 to 100000 cycles")
    last = {k: hs.name(k) for k in LAST_FIELDS}
    if kind is Handshake.AXI_STREAM:
        pi, po = hs.name("in_prefix", "s_axis"), hs.name("out_prefix", "m_axis")
        return HandshakeSpec(kind, f"{pi}_tvalid", f"{pi}_tready", f"{po}_tvalid", f"{po}_tready", latency=latency,
                             **last)
    names = {k: hs.name(k, k if k != "enable" else "en") for k in _HS_FIELDS[kind]}
    return HandshakeSpec(kind, latency=latency, **names, **last)


def _read_tile(path: Path, top: Reader) -> Tile | None:
    if "tile" not in top.table:
        return None
    t = Reader(path, top.get("tile", dict), "[tile] ")
    t.unknown(("m", "n", "k"))
    dims = {}
    for name in ("m", "n", "k"):
        v = t.get(name, int, required=True, valid="the tile's rows of A and D (m), columns of B and D (n), "
                                                   "depth (k, a multiple of the target's K)")
        if not 1 <= v <= 4096:
            t.fail(name, f"{v}; valid: 1 to 4096")
        dims[name] = v
    return Tile(**dims)


def _read_operands(path: Path, top: Reader, hs: HandshakeSpec, tile: Tile | None) -> dict:
    table = top.get("operands", dict, required=True, valid="an [operands] table mapping a, b, c, d to ports")
    ops = Reader(path, table, "[operands] ")
    ops.unknown(OPERAND_NAMES)
    out = {}
    for name in OPERAND_NAMES:
        if name not in table:
            if name in REQUIRED_OPERANDS:
                count = "lanes = L" if tile is not None else "elements = K" if name in "ab" else ""
                more = f", {count}" if count else ""
                ops.fail(name, f"missing: {name} = {{ port = \"...\", element_bits = N{more} }}")
            continue
        out[name] = _read_operand(path, name, ops.get(name, dict), hs, tile)
    return out


_OPERAND_FIELDS = ("port", "ports", "element_bits", "order", "offset")
_TILE_FIELDS = ("lanes", "layout", "fragment_order", "first_beat")


def _read_operand(path: Path, name: str, table: dict, hs: HandshakeSpec, tile: Tile | None) -> Operand:
    r = Reader(path, table, f"[operands] {name}.")
    if tile is not None:
        if "elements" in table:
            r.fail("elements", "a tile device's operands give lanes = L (elements per beat), not elements")
        r.unknown(_OPERAND_FIELDS + _TILE_FIELDS)
    else:
        for key in _TILE_FIELDS:
            if key in table:
                r.fail(key, "goes with a tile device (a [tile] table); a dot-add device gives elements = K")
        r.unknown(_OPERAND_FIELDS + ("elements",))
    port = r.name("port")
    ports = r.get("ports", (str, list))
    if port is None and ports is None and hs.kind is Handshake.AXI_STREAM:
        port = (hs.out_valid if name == "d" else hs.in_valid).removesuffix("tvalid") + "tdata"
    if (port is None) == (ports is None):
        r.fail("port", "give exactly one of port = \"bus\" (packed elements), ports = \"name_{i}\" (one per element) "
                       "or ports = [\"x[15:0]\", \"y\", ...] (each element's port and bits)")
    count_key = "lanes" if tile is not None else "elements"
    places, pattern, width = (), None, None
    if isinstance(ports, list):
        places, width = _read_port_list(r, ports)
    elif ports is not None:
        if "{i}" not in ports:
            r.fail("ports", f"{ports!r} has no {{i}} (replaced by the element number 0, 1, ...)")
        r.name("ports")
        pattern = ports
    bits = r.get("element_bits", int, width, required=width is None, valid="the bits of one element")
    if not 1 <= bits <= 64:
        r.fail("element_bits", f"{bits}; valid: 1 to 64")
    if width is not None and bits != width:
        r.fail("element_bits", f"{bits}, but the bit ranges in ports are {width} bits wide")
    elements = r.get(count_key, int, len(places) or 1)
    if not 1 <= elements <= 4096:
        r.fail(count_key, f"{elements}; valid: 1 to 4096")
    if places and elements != len(places):
        r.fail(count_key, f"{elements}, but ports lists {len(places)} element(s)")
    order = r.choice("order", ORDERS, "lsb_first")
    offset = r.get("offset", int, 0)
    if offset < 0:
        r.fail("offset", f"{offset}; valid: a bit offset >= 0")
    if places and "offset" in table:
        r.fail("offset", "a list of ports gives each element's bits itself (name[hi:lo])")
    tile_kw = _read_tile_operand(r, tile) if tile is not None else {}
    return Operand(name, bits, elements, port, pattern, order, offset, places, **tile_kw)


def _read_port_list(r: Reader, ports: list) -> tuple[tuple, int | None]:
    """``["x[15:0]", "y", ...]``: ``((port, offset), ...)`` and the ranges' common width (None: no range)."""
    if not ports or not all(isinstance(x, str) for x in ports):
        r.fail("ports", "a list gives one port name (or name[hi:lo]) per element, "
                        "e.g. [\"op_a[15:0]\", \"op_b[15:0]\"]")
    places, widths = [], set()
    for item in ports:
        m = _SLICE.match(item.strip())
        if m is None or "{i}" in item:
            r.fail("ports", f"{item!r} is not a port name or name[hi:lo]")
        if m["hi"] is None:
            places.append((m["name"], 0))
            widths.add(None)
            continue
        hi, lo = int(m["hi"]), int(m["lo"])
        if hi < lo:
            r.fail("ports", f"{item!r}: write the range [hi:lo] with hi >= lo")
        places.append((m["name"], lo))
        widths.add(hi - lo + 1)
    ranged = widths - {None}
    if len(ranged) > 1:
        r.fail("ports", f"the bit ranges differ in width ({', '.join(map(str, sorted(ranged)))}); every element of "
                        "an operand has the same width")
    return tuple(places), (ranged.pop() if ranged else None)


def _read_tile_operand(r: Reader, tile: Tile) -> dict:
    from golden.layouts import LAYOUTS
    from golden.layouts import ORDERS as FRAGMENT_ORDERS
    layout = r.choice("layout", LAYOUTS, "row_major")
    frag = r.choice("fragment_order", FRAGMENT_ORDERS, "thread")
    first = r.get("first_beat", int, 0)
    if first < 0:
        r.fail("first_beat", f"{first}; valid: a beat number >= 0")
    return dict(layout=layout, fragment_order=frag, first_beat=first)


def _read_targets(path: Path, top: Reader) -> tuple:
    raw = top.get("target", list, required=True, valid="one or more [[target]] tables (arch and instr, or k, "
                                                       "formats and params)")
    if not raw:
        top.fail("target", "no [[target]]: give at least one (arch, instr)")
    targets = []
    for i, t in enumerate(raw):
        if not isinstance(t, dict):
            top.fail("target", "use [[target]] tables")
        r = Reader(path, t, f"[[target]] #{i + 1} ")
        pins = r.get("pins", dict, {})
        for k, v in pins.items():
            if not is_identifier(k) or isinstance(v, bool) or not isinstance(v, int) or v < 0:
                r.fail(f"pins.{k}", f"{v!r}; a pin is PORT = non-negative integer")
        label = r.get("name", str)
        if "instr" in t or "arch" in t:
            r.unknown(("arch", "instr", "params", "pins", "name"))
            params = r.get("params", (str, dict))
            targets.append(Target(r.get("arch", str, required=True, valid="a catalog architecture"),
                                  r.get("instr", str, required=True, valid="a catalog instruction name"),
                                  None if params is None else params_text(r, params), dict(pins), label))
        else:
            r.unknown(CUSTOM_TARGET_FIELDS)
            targets.append(Target(CUSTOM, custom_spec(r), None, dict(pins), label))
    return tuple(targets)


CUSTOM_TARGET_FIELDS = ("name", "k", "m", "n", "formats", "block", "params", "pins")
FORMAT_KEYS = ("a", "b", "c", "d", "scale")


def params_text(r: Reader, params) -> str:
    """A target's ``params``, a spec string or a table of fields, as the one params grammar's text
    (``golden.params.parse_params`` reads it; a table's values are written as that grammar's words)."""
    if isinstance(params, str):
        return params
    items = []
    for k, v in params.items():
        if isinstance(v, (dict, list, float)):
            r.fail(f"params.{k}", f"{v!r}; a field's value is a word, an integer or true/false")
        items.append(f"{k}={str(v).lower() if isinstance(v, bool) else v}")
    if not items:
        r.fail("params", "an empty table; give the fields, e.g. { base = \"FDA\", F = \"exact\" }")
    return ",".join(items)


def custom_spec(r: Reader) -> str:
    """An instruction-of-your-own target (``k``, ``formats``, ``params``; :mod:`golden.custom`) as its spec."""
    k = r.get("k", int, required=True, valid="a catalog target gives arch and instr; one of your own gives k "
                                             "(products per dot-add), formats and params")
    items = [f"k={k}"]
    for dim in ("m", "n"):
        if dim in r.table:
            items.append(f"{dim}={r.get(dim, int)}")
    fmts = r.get("formats", dict, required=True, valid="formats = { a = \"f16\", c = \"f32\" } (b, d, scale too)")
    fr = Reader(r.path, fmts, f"{r.where}formats.")
    fr.unknown(FORMAT_KEYS)
    for key in FORMAT_KEYS:
        v = fr.get(key, str, required=key in ("a", "c"), valid="a format name (python -m golden formats)")
        if v is not None:
            items.append(f"{key}={v}")
    if "block" in r.table:
        items.append(f"block={r.get('block', int)}")
    params = r.get("params", (str, dict), required=True, valid="the design's golden.Params: "
                                                               "{ base = \"FDA\", F = \"exact\", ... }")
    items.append(params_text(r, params))
    return ",".join(items)


def check_roles(desc: Description) -> dict:
    """One port given two jobs: the clock, the reset, a handshake pin or a target's constant pin on the same port
    (an AXI-Stream handshake's pins are its prefixes' ``_tvalid``/``_tready``): one line naming both.  Returns
    ``{port: its job}``, for :func:`check_conflicts`."""
    fixed: dict = {}

    def claim(port: str, role: str, pin: bool = False) -> None:
        other = fixed.get(port)
        if other is not None and not (pin and other[1]):      # every target may set the same pin
            axi = desc.handshake.kind is Handshake.AXI_STREAM and "[handshake]" in role + other[0]
            how = " (an axi_stream handshake's pins are in_prefix and out_prefix + _tvalid, _tready)" if axi else ""
            raise DescriptionError(f"{desc.path}: {role} is {port}, which is also {other[0]}{how}; each needs a "
                                   "port of its own")
        fixed.setdefault(port, (role, pin))

    claim(desc.clock, "[clock] name")
    if desc.reset:
        claim(desc.reset, "[reset] name")
    for role, name in desc.handshake.ports().items():
        claim(name, f"[handshake] {role}")
    for t in desc.targets:
        for pin in t.pins:
            claim(pin, f"[[target]] {t.describe()} pins.{pin}", pin=True)
    return {port: role for port, (role, _) in fixed.items()}


def check_conflicts(desc: Description) -> None:
    """A port given two jobs (:func:`check_roles`), two operands on the same bits of a port, an operand on a
    clock, reset, handshake or pin port, or a tile operand whose beats do not fit: one line naming both."""
    fixed = check_roles(desc)
    bits: dict = {}
    for op in desc.operands.values():
        for i, (port, off, width) in enumerate(op.fields()):
            where = f"{op.name}[{i}]"
            if port in fixed:
                raise DescriptionError(f"{desc.path}: [operands] {where} sits on {port}, which is also "
                                       f"{fixed[port]}; an operand needs a port of its own")
            beats = _beats(desc, op)
            for lo, hi, other, other_beats in bits.get(port, ()):
                if off < hi and lo < off + width and (beats & other_beats):
                    raise DescriptionError(f"{desc.path}: [operands] {where} ({port}[{off + width - 1}:{off}]) "
                                           f"overlaps {other} ({port}[{hi - 1}:{lo}])")
            bits.setdefault(port, []).append((off, off + width, where, beats))


def _beats(desc: Description, op: Operand) -> set:
    """The beats of a transaction that carry ``op`` (a dot-add device: beat 0; d: the output side)."""
    if op.name == "d":
        return {"out"}
    if desc.tile is None:
        return {0}
    return set(range(op.first_beat, op.first_beat + beats_of(desc, op)))


def beats_of(desc: Description, op: Operand, block: int | None = None) -> int:
    """Beats a tile operand takes (its tile's elements over its lanes; scales need the block size)."""
    rows, cols = desc.tile.shape(op.name, block or 1)
    return -(-rows * cols // op.elements)
