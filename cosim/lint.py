"""Verilator's lint (``--lint-only -Wall``) on a unit's generated Verilog and the harness around it.

Every warning is either fixed or waived in ``cosim/lint_waivers.vlt``, each waiver with its
reason in the ``//`` comment above it (:func:`read_waivers` refuses one without).
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import toolchain
from .build import HARNESS, TOP, UNIT_FILE, UNIT_MODULE, check_ports, elaborate, unit_interface

WAIVERS = Path(__file__).resolve().parent / "lint_waivers.vlt"


@dataclass(frozen=True)
class Waiver:
    rule: str
    file: str
    match: str
    reason: str


@dataclass
class LintMessage:
    severity: str            # Warning | Error
    rule: str
    file: str
    line: int
    text: str
    waiver: Waiver | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file else ""
        return f"%{self.severity}-{self.rule}: {where}: {self.text}"


@dataclass
class LintReport:
    sources: list
    messages: list
    returncode: int
    command: list

    @property
    def active(self) -> list:
        return [m for m in self.messages if m.waiver is None]

    @property
    def waived(self) -> list:
        return [m for m in self.messages if m.waiver is not None]

    @property
    def ok(self) -> bool:
        return not self.active

    def summary(self) -> str:
        counts: dict = {}
        for m in self.waived:
            counts[m.rule] = counts.get(m.rule, 0) + 1
        waived = ", ".join(f"{r} x{n}" for r, n in sorted(counts.items()))
        return (f"{len(self.active)} warning(s)" + (f", {len(self.waived)} waived ({waived})" if waived else ""))

    def __str__(self) -> str:
        return "\n".join([str(m) for m in self.active] + [self.summary()])


def read_waivers(path: Path = WAIVERS) -> list:
    """Waivers of a Verilator config file: ``lint_off -rule R [-file "glob"] [-match "glob"]``.

    Each needs its reason in the ``//`` comment lines just above it (consecutive
    waivers share the comment above the first).
    """
    waivers, comment, prev = [], [], ""
    for raw in Path(path).read_text().splitlines():
        line = raw.strip()
        if line.startswith("//"):
            if prev != "comment":
                comment = []
            comment.append(line[2:].strip())
            prev = "comment"
            continue
        if not line:
            comment, prev = [], ""
            continue
        if line.startswith("`verilator_config"):
            continue
        m = re.match(r'lint_off\s+-rule\s+(\w+)(?:\s+-file\s+"([^"]*)")?(?:\s+-match\s+"([^"]*)")?\s*$', line)
        if not m:
            raise ValueError(f"{path}: cannot read waiver line {raw!r}")
        if not comment:
            raise ValueError(f"{path}: waiver {line!r} has no reason (a // comment above it)")
        waivers.append(Waiver(m.group(1), m.group(2) or "*", m.group(3) or "*", " ".join(comment)))
        prev = "waiver"
    return waivers


_MSG = re.compile(r"^%(Warning|Error)(?:-([A-Z0-9_]+))?:\s*(?:([^:\s]+):(\d+):(?:\d+:)?)?\s*(.*)$")


def parse_lint(output: str, waivers=()) -> list:
    msgs = []
    for line in output.splitlines():
        m = _MSG.match(line)
        if not m:
            continue
        severity, rule, file, lineno, text = m.groups()
        if severity == "Error" and text.startswith("Exiting due to"):
            continue
        msg = LintMessage(severity, rule or "ERROR", file or "", int(lineno or 0), text.strip())
        for w in waivers:
            if w.rule == msg.rule and fnmatch.fnmatch(msg.file, w.file) and fnmatch.fnmatch(msg.text, w.match):
                msg.waiver = w
                break
        msgs.append(msg)
    return msgs


def lint(sources, top: str, *, parameters=None, waivers: Path | None = WAIVERS, extra_args=()) -> LintReport:
    """``verilator --lint-only -Wall`` on ``sources``; warnings matched against the written-down waivers."""
    tc = toolchain.setup()
    cmd = [tc.verilator.path, "--lint-only", "-Wall", "-Wno-fatal", "--top-module", top,
           *[f"-G{k}={v}" for k, v in (parameters or {}).items()], *extra_args, *map(str, sources)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    ws = read_waivers(waivers) if waivers else []
    return LintReport([str(s) for s in sources], parse_lint(proc.stdout + proc.stderr, ws), proc.returncode, cmd)


def lint_unit(component, directory: Path, *, with_harness: bool = True) -> LintReport:
    """Lint a unit's generated Verilog (written to ``directory/cosim_unit.v``), and the harness around it."""
    iface = unit_interface(component)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / UNIT_FILE
    text = elaborate(component)
    check_ports(text)
    path.write_text(text)
    if with_harness:
        return lint([HARNESS, path], TOP, parameters={"IN_W": iface.in_width, "OUT_W": iface.out_width})
    return lint([path], UNIT_MODULE)
