"""The whole board under Verilator, its serial pins bridged to a TCP socket.

:func:`build_board_sim` turns a board top (an Amaranth component with the ports
``uart_rx: In(1)``, ``uart_tx: Out(1)`` and the ``sync`` domain) into an executable
around ``fpga/host/sim/board_sim.cpp``; :class:`BoardSim` runs it, and the real host
driver talks to the simulated board through pyserial's ``socket://127.0.0.1:PORT``.
The UART models in the executable work at the board's clock-to-baud ratio
(``clocks_per_bit``), so the design sees exactly the bit timing of the board.

Builds are cached like the co-simulation's (:mod:`cosim.build`):
``build/fpga-sim/<name>/<hash>``, the hash covering the Verilog (without its
source paths), the C++ main, the flags and the toolchain; Verilator's run-time
objects are compiled once per toolchain and flags and copied into new builds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from cosim import toolchain
from cosim.build import (
    BuildError,
    checksums,
    locked,
    log_tail,
    normalise_verilog,
    prune_builds,
    read_stamp,
    runtime_ok,
    safe_name,
    save_runtime,
)
from golden.paths import build_dir

__all__ = ["BuildError", "SimError", "SimBuild", "build_board_sim", "BoardSim", "SIM_ROOT", "MAIN_SOURCE"]

SIM_ROOT = build_dir("fpga-sim")
MAIN_SOURCE = Path(__file__).resolve().parent / "board_sim.cpp"
MODULE = "board"
PREFIX = "Vboard"
EXE = "board_sim"
VERILOG_FILE = "board.v"
PORTS = {"clk": "input", "rst": "input", "uart_rx": "input", "uart_tx": "output"}
# a two-domain top's (fpga.board.top.BoardTop(two_domains=True)): the main then drives a second clock,
# unrelated to clk (period 0.37 of clk's), and its reset with rst
FAST_PORTS = {"fast_clk": "input", "fast_rst": "input"}
FAST_DEFINE = "#define BOARD_FAST_CLOCK 1\n"

# Lint warnings are not the simulation's business (cosim.lint).  The C++ of the design, the main
# and the run-time library is compiled with -O2 (Verilator's makefile says -Os).
VERILATOR_FLAGS = ("-Wno-fatal", "-Wno-lint", "-Wno-style", "-O3")
MAKE_OPT = {"OPT_FAST": "-O2", "OPT_GLOBAL": "-O2"}
WAVE_FLAGS = {"fst": ("--trace-fst",), "vcd": ("--trace",)}
RUNTIME_OBJECTS = "verilated*.[od]"
START_TIMEOUT = 30.0          # seconds for the executable to start listening
STOP_TIMEOUT = 10.0           # seconds between SIGTERM and SIGKILL


class SimError(RuntimeError):
    """The board simulation could not start, or stopped wrongly; the message says why."""


@dataclass(frozen=True)
class SimBuild:
    """A built board simulation.

    Members
    -------
    dir : Path
        The build directory (Verilog, C++ main, executable, build.log, stamp.json).
    key : str
        The hash of everything the executable depends on.
    wave_format : str or None
        ``"fst"`` or ``"vcd"`` for a build that can write waveforms, else None.
    source : str
        ``"built"`` or ``"cached"``.
    seconds : float
        Time taken by :func:`build_board_sim`.
    """

    dir: Path
    key: str
    wave_format: str | None
    source: str = "built"
    seconds: float = 0.0

    @property
    def exe(self) -> Path:
        return self.dir / EXE

    @property
    def log(self) -> Path:
        return self.dir / "build.log"


def _declarations(text: str) -> dict:
    """Module ``board``'s ports: ``{name: (direction, width text)}``."""
    m = re.search(rf"\bmodule\s+{MODULE}\s*\(([^)]*)\);(.*?)\bendmodule", text, re.S)
    if not m:
        raise BuildError(f"the generated Verilog has no module {MODULE}")
    return {name: (kind, width) for kind, width, name in
            re.findall(r"^\s*(input|output|inout)\s+(?:wire\s+|reg\s+)?(\[[^\]]*\]\s*)?(\\?\S+)\s*;",
                       m.group(2), re.M)}


def has_fast_clock(text: str) -> bool:
    """Whether module ``board`` takes the second clock (``fast_clk``, ``fast_rst``)."""
    return "fast_clk" in _declarations(text)


def check_board_ports(text: str) -> None:
    """Raise :class:`BuildError` unless module ``board`` has 1-bit ``clk``, ``rst``, ``uart_rx`` inputs and a
    1-bit ``uart_tx`` output (extra outputs are allowed: nothing reads them), and ``fast_clk`` and
    ``fast_rst`` both or neither."""
    decls = _declarations(text)
    problems = []
    ports = {**PORTS, **(FAST_PORTS if any(p in decls for p in FAST_PORTS) else {})}
    for port, kind in ports.items():
        if port not in decls:
            problems.append(f"no {kind} {port}")
        elif decls[port][0] != kind or decls[port][1]:
            problems.append(f"{port} must be a 1-bit {kind}")
    problems += [f"extra input {p} (the simulation drives only clk, rst, uart_rx)"
                 for p, (kind, _) in sorted(decls.items()) if p not in ports and kind != "output"]
    if problems:
        hint = " (a top with no registers has no clk/rst)" if any(p in ("no input clk", "no input rst")
                                                                   for p in problems) else ""
        raise BuildError(f"the board top's ports do not fit the simulation: {'; '.join(problems)}{hint}; "
                         f"it needs uart_rx: In(1), uart_tx: Out(1) and the sync domain")


def board_verilog(top) -> str:
    """The Verilog of the Amaranth board top ``top`` as module ``board``, ports checked."""
    from amaranth.lib import wiring
    if not isinstance(top, wiring.Component):
        raise BuildError(f"{type(top).__name__} is not an amaranth.lib.wiring.Component "
                         f"(the board top needs ports uart_rx: In(1), uart_tx: Out(1))")
    toolchain.find_yosys()
    from amaranth.back import verilog
    text = verilog.convert(top, name=MODULE)
    check_board_ports(text)
    return text


def _flags(wave_format: str | None) -> list[str]:
    """Verilator's flags and (as ``VAR=value``) make's overrides of a build."""
    return (list(VERILATOR_FLAGS) + (list(WAVE_FLAGS[wave_format]) if wave_format else []) +
            [f"{k}={v}" for k, v in MAKE_OPT.items()])


def sim_key(verilog: str, main: str, flags: list[str], tc) -> str:
    """Hash of what the executable depends on: the Verilog without the checkout's paths, the C++ main,
    the flags and the toolchain."""
    h = hashlib.sha256()
    for part in (normalise_verilog(verilog), main, json.dumps(flags), tc.fingerprint(),
                 json.dumps(toolchain.make_overrides(tc))):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def build_board_sim(top, *, name: str = "board", waves: bool = False, root: Path | None = None,
                    force: bool = False, sources=None) -> SimBuild:
    """Build (or find cached) the simulation executable of the board top ``top``.

    Parameters
    ----------
    top : amaranth.lib.wiring.Component
        The board top, with ports ``uart_rx: In(1)``, ``uart_tx: Out(1)`` and the ``sync`` domain.
    name : str
        Names the build's folder (builds of one name share pruning: the 6 most recent are kept).
    waves : bool
        Build the variant that can write a waveform (``BoardSim(..., waves=FILE)``): FST where the
        lz4 headers are installed, else VCD.
    root : Path, optional
        Build root; default ``build/fpga-sim`` next to the co-simulation builds.
    force : bool
        Rebuild even if a cached build exists.
    sources : cosim.build.Sources, optional
        Verilog the top instantiates but does not contain (a design of one's own behind an
        ``Instance``, :mod:`fpga.board.dut`): written or named in the build, hashed into its key.

    Returns
    -------
    SimBuild
        ``source`` says whether it was built or cached.  A failed build raises
        :class:`BuildError` with the tail of the build log.
    """
    tc = toolchain.setup()
    text = board_verilog(top)
    main = (FAST_DEFINE if has_fast_clock(text) else "") + MAIN_SOURCE.read_text()
    wave_format = toolchain.waves_format() if waves else None
    flags = _flags(wave_format)
    key = sim_key(text if sources is None else text + "\n" + sources.digest(), main, flags, tc)
    root = Path(root) if root is not None else SIM_ROOT
    d = root / safe_name(name) / key[:16]
    t0 = time.perf_counter()
    with locked(d.with_name(d.name + ".lock")):
        if not force and _cached(d, key):
            with contextlib.suppress(OSError):
                os.utime(d / "stamp.json")          # recently used: pruning keeps it
            return SimBuild(d, key, wave_format, "cached", time.perf_counter() - t0)
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        (d / VERILOG_FILE).write_text(text)
        (d / MAIN_SOURCE.name).write_text(main)
        extra = []
        if sources is not None:
            for fname, body in sources.generated.items():
                (d / fname).write_text(body)
            extra = [*sources.verilator_args(), *sources.generated, *(str(f) for f in sources.files)]
        runtime = _runtime_cache(flags, tc)
        _compile(d, flags, tc, runtime, extra)
        seconds = time.perf_counter() - t0
        (d / "stamp.json").write_text(json.dumps({"key": key, "name": name, "flags": flags, "wave_format": wave_format,
                                                  "toolchain": tc.fingerprint(), "build_s": round(seconds, 2),
                                                  **checksums(d, EXE)},
                                                 indent=1))
        save_runtime(runtime, d)
        prune_builds(d)
        return SimBuild(d, key, wave_format, "built", seconds)


def _cached(d: Path, key: str) -> bool:
    stamp = read_stamp(d, EXE)              # None when the executable is damaged: built again
    return stamp is not None and stamp.get("key") == key


def _runtime_cache(flags: list[str], tc) -> Path:
    """Where Verilator's run-time objects for these flags and this toolchain are kept (compiling
    them is most of a small build)."""
    tag = json.dumps([tc.runtime_fingerprint(), flags, toolchain.make_overrides(tc)])
    return SIM_ROOT / ".runtime" / hashlib.sha256(tag.encode()).hexdigest()[:16]


def _compile(d: Path, flags: list[str], tc, runtime: Path, extra=()) -> None:
    """Verilate, seed the cached run-time objects, make; output to ``d/build.log``; ``extra``: more
    Verilator arguments (the files and options of a design the top instantiates)."""
    verilate = [tc.verilator.path, "--cc", "--exe", "--top-module", MODULE, "--prefix", PREFIX, "-o", EXE,
                "-Mdir", ".", *(f for f in flags if "=" not in f), VERILOG_FILE, *extra, MAIN_SOURCE.name]
    overrides = [f for f in flags if "=" in f] + [f"{k}={v}" for k, v in toolchain.make_overrides(tc).items()]
    make = [tc.make.path, "-f", f"{PREFIX}.mk", f"-j{os.cpu_count() or 1}", *overrides]
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    with open(d / "build.log", "w") as log:
        for step, cmd in (("verilator", verilate), ("make", make)):
            if step == "make" and runtime_ok(runtime):
                for f in runtime.glob(RUNTIME_OBJECTS):
                    shutil.copy2(f, d / f.name)
                    if f.suffix == ".o":
                        (d / f.name).touch()        # newer than the Vboard.mk they depend on
            log.write(f"$ {' '.join(cmd)}\n")
            log.flush()
            try:
                proc = subprocess.run(cmd, cwd=d, stdout=log, stderr=subprocess.STDOUT, env=env)
            except OSError as e:
                raise BuildError(f"cannot run {step} ({e}) for the board simulation in {d}") from None
            if proc.returncode != 0:
                log.close()
                raise BuildError(f"{step} failed (exit {proc.returncode}) building the board simulation; "
                                 f"log {d / 'build.log'}:\n{log_tail(d / 'build.log')}")
    if not (d / EXE).exists():
        raise BuildError(f"the board simulation build produced no {EXE}; log {d / 'build.log'}:\n"
                         f"{log_tail(d / 'build.log')}")


_STATS = re.compile(r"board_sim: (?P<cycles>\d+) cycles in (?P<seconds>[\d.]+) s "
                    r"\((?P<cycles_per_s>[\d.]+) cycles/s\); "
                    r"bytes to board (?P<to_board>\d+), from board (?P<from_board>\d+), dropped (?P<dropped>\d+), "
                    r"framing errors (?P<framing_errors>\d+), glitches (?P<glitches>\d+)")


def parse_stats(text: str) -> dict:
    """The statistics line the executable prints on stderr at exit, as a dict (empty if absent)."""
    found = list(_STATS.finditer(text))
    if not found:
        return {}
    m = found[-1]                   # the last statistics line
    return {k: (float(v) if k in ("seconds", "cycles_per_s") else int(v)) for k, v in m.groupdict().items()}


class BoardSim:
    """A running board simulation that serves one TCP client at a time.

    Parameters
    ----------
    top_or_exe : Component, SimBuild, str or Path
        A board top (built with :func:`build_board_sim`), a build, or a built executable.
    clocks_per_bit : int
        The board's clock cycles per UART bit (``round(clock_hz / baud)``), at least 4.
    waves : str or Path, optional
        Write a waveform there (needs a waves build; a top is then built with ``waves=True``).
    log : str or Path, optional
        Where the executable's stderr goes (framing errors, statistics); default a temporary file.
    port : int
        TCP port on 127.0.0.1; 0 picks a free one.
    once : bool
        The executable exits when its first client disconnects.
    max_cycles : int, optional
        The executable exits after this many cycles.
    idle_sleep_after : int, optional
        Cycles with nothing on the serial lines after which the executable slows down to one bit-time
        a millisecond, sparing the CPU (default 1,000,000; 0: never).  The design sees only cycles.

    Members
    -------
    url : str
        ``socket://127.0.0.1:PORT``, for ``serial.serial_for_url`` and the driver.
    port : int
        The port it listens on.
    stats : dict
        After :meth:`stop`: cycles, seconds, cycles_per_s, to_board, from_board, dropped,
        framing_errors, glitches (counts of the executable's UART models), returncode and stderr.
    """

    def __init__(self, top_or_exe, clocks_per_bit: int, *, waves=None, log=None, port: int = 0,
                 once: bool = False, max_cycles: int | None = None, idle_sleep_after: int | None = None):
        if not isinstance(clocks_per_bit, int) or isinstance(clocks_per_bit, bool) or clocks_per_bit < 4:
            raise ValueError(f"clocks_per_bit must be an int >= 4 (clock cycles per UART bit), got {clocks_per_bit!r}")
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port must be an int in 0..65535 (0: any free port), got {port!r}")
        if max_cycles is not None and (not isinstance(max_cycles, int) or max_cycles < 1):
            raise ValueError(f"max_cycles must be a positive int or None, got {max_cycles!r}")
        if idle_sleep_after is not None and (not isinstance(idle_sleep_after, int) or idle_sleep_after < 0):
            raise ValueError(f"idle_sleep_after must be an int >= 0 (cycles; 0: never) or None, "
                             f"got {idle_sleep_after!r}")
        self.exe = self._executable(top_or_exe, waves is not None)
        self.clocks_per_bit = clocks_per_bit
        self.waves = Path(waves) if waves is not None else None
        self.log = Path(log) if log is not None else None
        self.requested_port = port
        self.once = once
        self.max_cycles = max_cycles
        self.idle_sleep_after = idle_sleep_after
        self.port: int | None = None
        self.stats: dict = {}
        self._proc = None
        self._log_file = None

    @staticmethod
    def _executable(top_or_exe, waves: bool) -> Path:
        if isinstance(top_or_exe, SimBuild):
            return top_or_exe.exe
        if isinstance(top_or_exe, (str, os.PathLike)):
            exe = Path(top_or_exe)
            if not exe.is_file() or not os.access(exe, os.X_OK):
                raise SimError(f"no board simulation executable at {exe} "
                               f"(build one with fpga.host.sim.build_board_sim)")
            return exe
        return build_board_sim(top_or_exe, waves=waves).exe

    @property
    def url(self) -> str:
        if self.port is None:
            raise SimError("the board simulation is not running (call start() or use it as a context manager)")
        return f"socket://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def command(self) -> list[str]:
        cmd = [str(self.exe), "--port", str(self.requested_port), "--clocks-per-bit", str(self.clocks_per_bit),
               "--exit-with-parent"]
        if self.waves is not None:
            cmd += ["--trace", str(self.waves)]
        if self.max_cycles is not None:
            cmd += ["--max-cycles", str(self.max_cycles)]
        if self.idle_sleep_after is not None:
            cmd += ["--idle-sleep-after", str(self.idle_sleep_after)]
        if self.once:
            cmd.append("--once")
        return cmd

    def start(self, timeout: float = START_TIMEOUT) -> BoardSim:
        """Spawn the executable and wait until it listens; :class:`SimError` (with its stderr) if it does not."""
        if self._proc is not None:
            raise SimError("the board simulation was already started")
        self._log_file = open(self.log, "w+b") if self.log is not None else tempfile.TemporaryFile()
        self._proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=self._log_file)
        line = self._read_line(timeout)
        m = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\s*", line or "")
        if m is None:
            why = "timed out" if line is None else f"said {line.strip()!r}" if line else "exited"
            stats = self.stop()
            raise SimError(f"the board simulation {self.exe.name} did not start listening ({why}; "
                           f"exit {stats['returncode']}): {stats['stderr'].strip() or '(no stderr)'}")
        self.port = int(m.group(1))
        return self

    def _read_line(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        out = self._proc.stdout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([out], [], [], max(0.0, min(0.5, deadline - time.monotonic())))
            if ready:
                return out.readline().decode(errors="replace")   # empty: it exited
            if self._proc.poll() is not None:
                return ""
        return None

    def wait(self, timeout: float | None = None) -> dict:
        """Wait for the executable to exit by itself (``once`` or ``max_cycles``); returns :attr:`stats`."""
        if self._proc is None:
            raise SimError("the board simulation is not running (call start() first)")
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise SimError(f"the board simulation did not exit within {timeout} s") from None
        return self.stop()

    def stop(self) -> dict:
        """Terminate the executable (SIGTERM, then SIGKILL) and return its :attr:`stats`."""
        if self._proc is None:
            return self.stats
        self._terminate()
        text = self._stderr()
        self.stats = {**parse_stats(text), "returncode": self._proc.returncode, "stderr": text}
        self._proc.stdout.close()
        self._log_file.close()
        self._proc = None
        self.port = None
        return self.stats

    def _terminate(self) -> None:
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def _stderr(self) -> str:
        self._log_file.flush()
        self._log_file.seek(0)
        return self._log_file.read().decode(errors="replace")

    def __enter__(self) -> BoardSim:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"listening on {self.url}" if self.port is not None else "stopped"
        return f"BoardSim({self.exe}, clocks_per_bit={self.clocks_per_bit}, {state})"
