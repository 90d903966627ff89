"""The top's real ports, read with Verilator, and the description checked against them.

:func:`read_ports` elaborates the sources (``verilator --json-only``) with the top instantiated
under the description's parameters, so that widths are those the build will see, and returns
``{name: Port}``.  :func:`check` compares every port the description uses (clock, reset,
handshake, operands, pins) with them: each problem is one :class:`DescriptionError` line naming
the port and what the top has.  A file Verilator cannot compile is one line too, with the path
of the full log.  This runs in seconds, before any build.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import toolchain
from .description import OUTPUT_ROLES, Description, DescriptionError
from .sources import SourceSet

PROBE_TOP = "mma_dut_ports_probe"
KEYWORD_BITS = {"int": 32, "integer": 32, "byte": 8, "shortint": 16, "longint": 64, "bit": 1, "logic": 1,
                "reg": 1, "wire": 1, "time": 64}


class Direction:
    INPUT = "INPUT"
    OUTPUT = "OUTPUT"
    INOUT = "INOUT"


@dataclass(frozen=True)
class Port:
    name: str
    direction: str           # Direction
    width: int | None        # None: a type whose width is not a plain bit count (unpacked array, ...)

    def describe(self) -> str:
        w = "?" if self.width is None else str(self.width)
        return f"{self.direction.lower()} [{w} bits]"


def sv_value(v) -> str:
    """A parameter or define value as SystemVerilog text (strings are expressions, as written)."""
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def instantiation(top: str, params: dict, inst: str, connections: str = "") -> str:
    """``top #(.P(v), ...) inst (connections);``"""
    plist = ", ".join(f".{k}({sv_value(v)})" for k, v in params.items())
    return f"{top} {'#(' + plist + ') ' if plist else ''}{inst} ({connections});"


def verilator_source_args(src: SourceSet) -> list:
    """Verilator arguments naming the include folders, defines and files of ``src``."""
    args = [f"+incdir+{d}" for d in src.include_dirs]
    for k, v in src.defines.items():
        args.append(f"+define+{k}" if v is True else f"+define+{k}={sv_value(v)}")
    return args + [str(f) for f in src.files]


def read_ports(desc: Description, src: SourceSet, work: Path) -> dict:
    """``{name: Port}`` of the description's top, elaborated with its parameters (see the module docstring)."""
    tc = toolchain.setup()
    work.mkdir(parents=True, exist_ok=True)
    probe = work / f"{PROBE_TOP}.sv"
    params = {**src.parameters, **desc.parameters}
    probe.write_text(f"module {PROBE_TOP};\n  {instantiation(desc.top, params, 'u')}\nendmodule\n")
    log = work / "ports.log"
    cmd = [tc.verilator.path, "--json-only", "-Wno-fatal", "-Wno-lint", "-Wno-style", "--top-module", PROBE_TOP,
           "--Mdir", str(work / "obj"), *verilator_source_args(src), str(probe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    log.write_text(" ".join(cmd) + "\n" + r.stdout + r.stderr)
    if r.returncode != 0:
        first = first_error(r.stderr)
        if PROBE_TOP in first and f"module: '{desc.top}'" in first:
            raise DescriptionError(f"{desc.path}: [dut] top: no module {desc.top!r} in the sources (full log {log})")
        raise DescriptionError(f"{desc.path}: the sources do not compile: {first} (full log {log})")
    tree = json.loads((work / "obj" / f"V{PROBE_TOP}.tree.json").read_text())
    return ports_of(tree, desc.top, desc.path)


def first_error(text: str) -> str:
    """The first ``%Error`` of a Verilator log, on one line."""
    for line in text.splitlines():
        if line.startswith("%Error"):
            return re.sub(r"\s+", " ", line.strip())
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[0].strip() if lines else "Verilator failed with no message"


def _index(node, out: dict) -> None:
    if isinstance(node, dict):
        if "addr" in node:
            out[node["addr"]] = node
        for v in node.values():
            _index(v, out)
    elif isinstance(node, list):
        for v in node:
            _index(v, out)


def ports_of(tree: dict, top: str, where) -> dict:
    modules = [m for m in tree.get("modulesp", []) if m.get("type") == "MODULE" and m.get("origName") == top]
    if not modules:
        raise DescriptionError(f"{where}: [dut] top: no module {top!r} in the sources")
    nodes: dict = {}
    _index(tree, nodes)
    ports = {}
    for item in modules[0].get("stmtsp", []):
        if item.get("type") == "VAR" and item.get("direction") in ("INPUT", "OUTPUT", "INOUT"):
            name = demangle(item.get("verilogName") or item.get("origName") or item["name"])
            ports[name] = Port(name, item["direction"], width_of(nodes, item.get("dtypep")))
    return ports


def demangle(name: str) -> str:
    """A name as written in the source (Verilator writes ``__`` as ``___05F``, other characters ``__0HH``)."""
    return re.sub(r"__0([0-9A-F]{2})", lambda m: chr(int(m[1], 16)), name)


def width_of(nodes: dict, addr, depth: int = 0) -> int | None:
    """Bits of the data type at ``addr`` (None for one that is not a packed bit vector)."""
    n = nodes.get(addr)
    if n is None or depth > 32:
        return None
    t = n.get("type")
    if t == "BASICDTYPE":
        if n.get("range"):
            hi, lo = (int(x) for x in n["range"].split(":"))
            return abs(hi - lo) + 1
        return KEYWORD_BITS.get(n.get("keyword"), None)
    if t in ("REFDTYPE", "ENUMDTYPE", "CONSTDTYPE"):
        return width_of(nodes, n.get("refDTypep") or n.get("subDTypep"), depth + 1)
    if t == "PACKARRAYDTYPE":
        m = re.fullmatch(r"\[(-?\d+):(-?\d+)\]", n.get("declRange", ""))
        sub = width_of(nodes, n.get("refDTypep") or n.get("subDTypep"), depth + 1)
        return None if m is None or sub is None else (abs(int(m[1]) - int(m[2])) + 1) * sub
    if t in ("STRUCTDTYPE", "UNIONDTYPE") and n.get("packed", True):
        widths = [width_of(nodes, mem.get("dtypep") or mem.get("refDTypep"), depth + 1)
                  for mem in n.get("membersp", [])]
        if not widths or None in widths:
            return None
        return sum(widths) if t == "STRUCTDTYPE" else max(widths)
    return None


def check(desc: Description, ports: dict, pins_of_targets=True) -> None:
    """Every port the description uses exists with the right direction and a width that fits."""
    have = lambda: ", ".join(f"{p.name} ({p.describe()})" for p in ports.values())  # noqa: E731

    def need(name, direction, width=None, what=""):
        p = ports.get(name)
        if p is None:
            close = [q for q in ports if q.lower() == name.lower() or name.lower() in q.lower()]
            hint = f"; did you mean {', '.join(close)}?" if close else f"; the top has {have()}"
            raise DescriptionError(f"{desc.path}: {what}: the top {desc.top} has no port {name!r}{hint}")
        if p.direction != direction:
            raise DescriptionError(f"{desc.path}: {what}: port {name} is an {p.direction.lower()} of "
                                   f"{desc.top}, expected an {direction.lower()}")
        if width is not None and p.width is not None and p.width < width:
            raise DescriptionError(f"{desc.path}: {what}: port {name} is {p.width} bits wide in {desc.top}, "
                                   f"the description needs at least {width}")
        if width == 1 and p.width not in (1, None):
            raise DescriptionError(f"{desc.path}: {what}: port {name} is {p.width} bits wide in {desc.top}, "
                                   "expected 1 bit")
        return p

    need(desc.clock, Direction.INPUT, 1, "[clock] name")
    if desc.reset:
        need(desc.reset, Direction.INPUT, 1, "[reset] name")
    for role, name in desc.handshake.ports().items():
        need(name, Direction.OUTPUT if role in OUTPUT_ROLES else Direction.INPUT, 1, f"[handshake] {role}")
    for op in desc.operands.values():
        direction = Direction.OUTPUT if op.name == "d" else Direction.INPUT
        if not op.packed:
            for name in op.port_names():
                need(name, direction, op.bits_needed(name), f"[operands] {op.name}")
            continue
        p = need(op.port, direction, op.bits_needed(), f"[operands] {op.name}")
        if p.width is not None and p.width > op.bits_needed() and op.offset == 0 and not _shared(desc, op.port):
            raise DescriptionError(f"{desc.path}: [operands] {op.name}: port {op.port} is {p.width} bits wide in "
                                   f"{desc.top}, but {op.elements} x {op.element_bits} bits = {op.bits_needed()} "
                                   "(element_bits or elements wrong?)")
    if pins_of_targets:
        for t in desc.targets:
            for pin, value in t.pins.items():
                p = need(pin, Direction.INPUT, None, f"[[target]] {t.describe()} pins")
                if p.width is not None and value >> p.width:
                    raise DescriptionError(f"{desc.path}: [[target]] {t.describe()} pins.{pin} = {value} does not "
                                           f"fit port {pin} ({p.width} bits)")


def _shared(desc: Description, port: str) -> bool:
    """Whether more than one operand lives in ``port`` (fields of one bus)."""
    return sum(port in op.port_names() for op in desc.operands.values()) > 1
