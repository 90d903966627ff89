"""One co-simulation session: a built harness, a stream of vectors in, every output back.

:func:`simulate` starts the simulator (the cocotb test ``tb.cosim_tb``, in its own process)
on a thread and, while it runs, writes the next batches of input payloads and reads back the
batches it has finished, talking through the run directory's files (:mod:`tb.protocol`): two
processes, no per-cycle Python.  What happens to each batch's vectors and outputs is a
:class:`Hook`'s business: :class:`Score` compares them with a reference and keeps the failing
vectors (``python -m cosim run``), :class:`Capture` keeps every output in input order (the RTL
backend).

Batch 0 is a calibration batch without stalls: its cycle counts give the measured latency
(first output minus first input) and initiation interval, which must equal what the unit
declares.  The other batches run with the requested valid/ready stall probability on both sides.

Two watchdogs stop a unit that hangs.  The harness's cycle watchdog ends a batch in which no
handshake happens for a number of cycles (a stuck ready/valid, a lost output).  A unit that stops
simulated time itself (a loop inside one evaluation that never ends, a combinational loop the
simulator keeps evaluating) is stopped by the wall clock: when no batch has finished for
:func:`no_progress_limit` seconds (the environment variable :data:`NO_PROGRESS_ENV`, default
:data:`NO_PROGRESS_S`, and never less than ten times the slowest batch so far), the simulator
process is killed and the session fails with one line saying so.  The simulator process is also
killed when the session ends early for any other reason (Ctrl-C included), so none is left behind.
"""

from __future__ import annotations

import gc
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import golden
from tb import protocol as pr

from . import build as bld
from .table import progress as show_progress

CAL_BEATS = 256                                   # calibration batch (no stalls)
OPERANDS = ("a", "b", "c", "scale_a", "scale_b")
NO_PROGRESS_ENV = "MMA_COSIM_NO_PROGRESS"          # seconds without a finished batch before the simulator is stopped
NO_PROGRESS_S = 300.0
SLOWEST_BATCH_FACTOR = 10                         # ... and never less than this many times the slowest batch


def no_progress_limit() -> float:
    """The wall-clock seconds a session waits for a batch before it stops a simulator that makes no
    progress (:data:`NO_PROGRESS_ENV`, default :data:`NO_PROGRESS_S`); a ValueError (one line) when
    the variable is not a positive number of seconds.  Commands call it before they build anything."""
    text = os.environ.get(NO_PROGRESS_ENV, "").strip()
    if not text:
        return NO_PROGRESS_S
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{NO_PROGRESS_ENV}={text}: expected a positive number of seconds (how long a simulation "
                         f"may go without finishing a batch before it is stopped; default {NO_PROGRESS_S:g})")
    return v


class SimError(RuntimeError):
    """The simulation failed: the simulator stopped, the unit broke the stream protocol or hung."""


@dataclass
class Batch:
    """Vectors ``start .. start + used - 1`` of the stream, in ``beats`` payloads (the rest pads the last)."""

    index: int
    start: int
    beats: int
    ops: tuple                         # the operands of every lane of every beat
    used: int
    expected: np.ndarray | None = None     # set by a hook that knows the results in advance

    def used_ops(self) -> tuple:
        return tuple(None if x is None else x[:self.used] for x in self.ops)


class Hook:
    """What a session does with its vectors and outputs (this one: nothing)."""

    failed = False                     # the run directory is kept for a look when set

    def produced(self, batch: Batch) -> None:
        """Batch ``batch`` is written (the simulator is busy with earlier ones meanwhile)."""

    def finished(self, batch: Batch, got: np.ndarray) -> None:
        """``got``: the outputs of ``batch``'s ``used`` vectors, in input order."""

    def progress_note(self) -> str:
        return ""


class Score(Hook):
    """Compare each output with ``reference(ins, *ops)``; count the differences, keep the first
    ``max_saved`` failing vectors.

    ``mismatching(got, expected, ops) -> indices``; default: ``golden.mismatching`` under ``ins``'s
    NaN rule.  A unit whose rows are different instructions (the tensor core) passes its own.
    """

    def __init__(self, ins, reference: Callable, mismatching: Callable | None = None, max_saved: int = 1000):
        self.ins, self.reference, self.max_saved = ins, reference, max_saved
        self.mismatching = mismatching or (lambda got, expected, ops: golden.mismatching(ins, got, expected))
        self.count = 0
        self._kept: list = []
        self._kept_count = 0

    @property
    def failed(self) -> bool:
        return self.count > 0

    def produced(self, batch: Batch) -> None:
        batch.expected = np.asarray(self.reference(self.ins, *batch.ops), np.uint64).reshape(-1)

    def finished(self, batch: Batch, got: np.ndarray) -> None:
        expected = batch.expected[:batch.used]
        bad = self.mismatching(got, expected, batch.used_ops())
        if not bad.size:
            return
        self.count += bad.size
        keep = bad[:max(0, self.max_saved - self._kept_count)]
        if keep.size:
            self._kept.append(self._record(batch, keep, got, expected))
            self._kept_count += keep.size

    def progress_note(self) -> str:
        return f", {self.count:,} mismatches"

    @property
    def failing(self) -> dict | None:
        """The kept failing vectors: operands, ``expected``, ``got`` and their stream ``index``."""
        if not self._kept:
            return None
        first = self._kept[0]
        return {k: None if first[k] is None else np.concatenate([f[k] for f in self._kept]) for k in first}

    @staticmethod
    def _record(batch: Batch, idx: np.ndarray, got: np.ndarray, expected: np.ndarray) -> dict:
        # a unit's own operand tuple (the tensor core's starts with the opcode) keeps its order as op0, op1, ...
        names = OPERANDS if len(batch.ops) == len(OPERANDS) else tuple(f"op{i}" for i in range(len(batch.ops)))
        rec = {name: None if x is None else x[idx] for name, x in zip(names, batch.ops)}
        rec.update(expected=expected[idx], got=got[idx], index=batch.start + idx)
        return rec


class Capture(Hook):
    """Keep every output: ``d[v]`` is the output of vector ``v`` of the stream (``n`` of them)."""

    def __init__(self, n: int):
        self.d = np.zeros(n, np.uint64)
        self.filled = 0

    def finished(self, batch: Batch, got: np.ndarray) -> None:
        self.d[batch.start:batch.start + len(got)] = got
        self.filled += len(got)


@dataclass
class SessionResult:
    """What the simulation measured; what its outputs meant is the hook's."""

    latency: int                        # declared by the unit
    initiation_interval: int
    vectors: int = 0                    # vectors whose outputs reached the hook
    seconds: float = 0.0
    cycles: int = 0
    sim_seconds: float = 0.0
    latency_measured: int | None = None
    ii_measured: float | None = None
    run_dir: Path | None = None
    waves_file: Path | None = None
    error: str | None = None            # the simulation failed (a SimError)
    timing_error: str | None = None     # the calibration batch disagrees with the declared timing


def simulate(b: bld.Build, layout, stream, hook: Hook, *, n: int | None, budget_s: float = 60.0,
             min_n: int = 0, seed: int = 1, stall_in: float = 0.0, stall_out: float = 0.0,
             batch_vectors: int = 65536, progress: float = 0.0, label: str = "",
             keep_run_dir: bool = False, plusargs: tuple = ()) -> SessionResult:
    """Run vectors from ``stream`` (``n`` of them, or for ``budget_s`` seconds and at least ``min_n``)
    through the built harness, handing each batch to ``hook``.

    ``layout`` packs the operands (``pack``, ``unpack_out``, ``in_width``, ``out_width``,
    ``lanes``); ``stall_in``/``stall_out``: stall probabilities after the calibration batch.
    """
    return _Session(b, layout, stream, hook, n=n, budget_s=budget_s, min_n=min_n, seed=seed,
                    stall_in=stall_in, stall_out=stall_out, batch_vectors=batch_vectors, progress=progress,
                    label=label or layout.ins.name, keep_run_dir=keep_run_dir, plusargs=plusargs).run()


class _Session:
    def __init__(self, b, layout, stream, hook, *, n, budget_s, min_n, seed, stall_in, stall_out,
                 batch_vectors, progress, label, keep_run_dir, plusargs=()):
        self.plusargs = list(plusargs)
        self.b, self.layout, self.stream, self.hook = b, layout, stream, hook
        self.n, self.budget_s, self.min_n, self.seed = n, budget_s, min_n, seed
        self.stall_in, self.stall_out = pr.stall16(stall_in), pr.stall16(stall_out)
        self.lanes = layout.lanes
        if b.meta.get("simulator") == "icarus":              # cosim.icarus: a slower simulator, shorter batches
            from .icarus import BATCH_VECTORS
            batch_vectors = min(batch_vectors, BATCH_VECTORS)
        self.beats_per_batch = max(1, batch_vectors // self.lanes)
        self.total = None if n is None else -(-n // self.lanes) * self.lanes
        self.progress, self.label, self.keep_run_dir = progress, label, keep_run_dir
        p_max = max(stall_in, stall_out)
        self.watchdog = 4 * (b.latency + b.initiation_interval) + 1000 + \
            (int(math.ceil(40 / -math.log(p_max))) if p_max > 0 else 0)
        self.run_dir = Path(tempfile.mkdtemp(prefix=f"run-{time.strftime('%Y%m%d-%H%M%S')}-", dir=b.dir))
        self.waves = self.run_dir / f"dump.{b.wave_format or 'fst'}"
        self.res = SessionResult(b.latency, b.initiation_interval, run_dir=self.run_dir)
        self.pending: deque = deque()
        self.produced = self.batch_no = 0
        self.done_producing = False
        self.sim_errors: list = []
        self.limit_s = no_progress_limit()
        self.slowest_batch = 0.0

    def run(self) -> SessionResult:
        pr.Job(watchdog=self.watchdog, drain_cycles=2 * (self.b.latency + self.b.initiation_interval) + 16
               ).write(self.run_dir / pr.JOB)
        self.t0 = self.last_progress = time.perf_counter()
        self.thread = threading.Thread(target=self._run_simulator, name="cosim-sim", daemon=True)
        self.thread.start()
        gc.collect()
        gc.freeze()          # the elaborated design's many objects need no more scans by the collector
        try:
            self._serve()
            self._finish()
        except BaseException as e:
            self._stop(wait=10.0 if isinstance(e, SimError) else 1.0)   # a failed unit's testbench ends itself
            if isinstance(e, SimError):
                self.res.error = str(e)
                return self.res
            if not self.keep_run_dir:              # nothing to look at: a generator's error, an interrupt
                shutil.rmtree(self.run_dir, ignore_errors=True)
            raise
        finally:
            gc.unfreeze()
            show_progress(None)
            self.res.seconds = time.perf_counter() - self.t0
        self._check_timing()
        if not (self.res.timing_error or self.hook.failed or self.keep_run_dir or self.b.waves):
            shutil.rmtree(self.run_dir, ignore_errors=True)
            self.res.run_dir = None
        if self.b.waves and self.waves.exists():
            self.res.waves_file = self.waves
        return self.res

    def _run_simulator(self):
        from cocotb_tools.runner import get_runner
        b, run_dir = self.b, self.run_dir
        _ensure_importable()
        try:
            get_runner(b.meta.get("simulator", "verilator")).test(
                hdl_toplevel=bld.TOP, hdl_toplevel_lang="verilog", test_module=pr.TEST_MODULE,
                build_dir=str(b.dir), test_dir=str(run_dir), plusargs=pr.plusargs(run_dir) + self.plusargs,
                extra_env={pr.RUN_DIR_ENV: str(run_dir), "COCOTB_LOG_LEVEL": "WARNING", "GPI_LOG_LEVEL": "WARNING"},
                waves=bool(b.waves), test_args=(["--trace-file", str(self.waves)] if b.waves else []),
                log_file=str(run_dir / "sim.log"), results_xml=str(run_dir / "results.xml"))
        except BaseException as e:       # the runner exits (SystemExit) or raises on a failing test
            self.sim_errors.append(e)

    def _serve(self) -> None:
        """Keep two batches ahead of the simulator; hand each finished batch to the hook."""
        self.last_progress_t = time.perf_counter()
        while True:
            if not self.done_producing and len(self.pending) < 2:
                self._produce()
                self.last_progress_t = time.perf_counter()      # the wait for the simulator starts now
            elif self.pending and (self.run_dir / pr.out_stats(self.pending[0].index)).exists():
                self._collect(self.pending.popleft())
                self.last_progress_t = time.perf_counter()
            elif self.done_producing and not self.pending:
                return
            elif not self.thread.is_alive():
                raise SimError(self._stopped_early())
            else:
                self._check_progress()
                time.sleep(0.0005)

    def _limit(self) -> float:
        return max(self.limit_s, SLOWEST_BATCH_FACTOR * self.slowest_batch)

    def _check_progress(self) -> None:
        """A SimError when no batch has finished for the limit's seconds (the simulator is killed first)."""
        waited = time.perf_counter() - self.last_progress_t
        if waited > self._limit():
            self._kill_simulator()
            raise SimError(self._no_progress_message())

    def _no_progress_message(self) -> str:
        design = self.b.meta.get("design") or f"the unit ({self.label})"
        return (f"the simulation made no progress for {self._limit():.0f} s: {design} stopped simulated time, stuck "
                "inside one evaluation (a loop in the design that never ends, or a combinational loop the simulator "
                f"keeps evaluating); the simulator was stopped ({NO_PROGRESS_ENV}=SECONDS sets the limit)")

    def _simulator_pids(self) -> list[int]:
        """The simulator processes of this session: children of this process working in its run directory."""
        me, run_dir, found = os.getpid(), os.path.realpath(self.run_dir), []
        try:
            entries = os.listdir("/proc")
        except OSError:
            return found
        for entry in entries:
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rpartition(")")[2].split()[1])
                if ppid == me and os.path.realpath(f"/proc/{entry}/cwd") == run_dir:
                    found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
        return found

    def _kill_simulator(self) -> None:
        """Kill the simulator process (a hung one does not read the abort file) and wait for its thread."""
        for pid in self._simulator_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.thread.join(timeout=10)

    def _remaining(self) -> int | None:
        """Vectors still to produce; None while the time budget runs."""
        if self.total is not None:
            return self.total - self.produced
        elapsed = time.perf_counter() - self.t0
        return None if (elapsed < self.budget_s or self.produced < self.min_n) else 0

    def _produce(self) -> None:
        remaining = self._remaining()
        if remaining == 0:
            self.done_producing = True
            pr.End(batches=self.batch_no).write(self.run_dir / pr.END)
            return
        calibrating = self.batch_no == 0
        beats = CAL_BEATS if calibrating else self.beats_per_batch
        if remaining is not None:
            beats = min(beats, remaining // self.lanes)
        count = beats * self.lanes
        used = count if self.n is None else min(count, self.n - self.produced)
        batch = Batch(self.batch_no, self.produced, beats, self.stream.take(count), used)
        self.hook.produced(batch)
        words = self.layout.pack(*batch.ops)
        (self.run_dir / pr.in_payloads(batch.index)).write_bytes(pr.to_words32(words, self.layout.in_width))
        pr.BatchControl(beats=beats, seed=(self.seed * 1000003 + batch.index) & 0xFFFFFFFF,
                        stall_in=0 if calibrating else self.stall_in,
                        stall_out=0 if calibrating else self.stall_out).write(self.run_dir / pr.in_control(batch.index))
        self.pending.append(batch)
        self.produced += count
        self.batch_no += 1

    def _collect(self, batch: Batch) -> None:
        stats = pr.BatchStats.read(self.run_dir / pr.out_stats(batch.index))
        self.res.cycles += stats.cycles
        self.res.sim_seconds += stats.wall
        self.slowest_batch = max(self.slowest_batch, stats.wall)
        if stats.timeout and hasattr(self.hook, "partial"):     # what came out before the unit stopped
            path = self.run_dir / pr.out_payloads(batch.index)
            if path.exists() and stats.n_out:
                got = self.layout.unpack_out(pr.from_words32(path.read_bytes(), self.layout.out_width))
                self.hook.partial(batch, got[:min(stats.n_out * self.lanes, batch.used)])
        if stats.load_error or stats.timeout:
            raise SimError(self._protocol_message(batch, stats))
        path = self.run_dir / pr.out_payloads(batch.index)
        got = self.layout.unpack_out(pr.from_words32(path.read_bytes(), self.layout.out_width, rows=batch.beats))
        path.unlink()
        if batch.index == 0:
            self.res.latency_measured = stats.first_out - stats.first_in
            if batch.beats > 1:
                self.res.ii_measured = (stats.last_in - stats.first_in) / (batch.beats - 1)
        self.hook.finished(batch, got[:batch.used])
        self.res.vectors += batch.used
        now = time.perf_counter()
        if self.progress and now - self.last_progress >= self.progress:
            self.last_progress = now
            show_progress(f"  {self.label}: {self.res.vectors:,} vectors checked{self.hook.progress_note()}, "
                          f"{self.res.vectors / (now - self.t0):,.0f} dot-adds/s")

    def _finish(self) -> None:
        t0 = time.perf_counter()
        while self.thread.is_alive():
            self.thread.join(timeout=0.05)
            if time.perf_counter() - t0 > self._limit():
                self._kill_simulator()
                raise SimError(self._no_progress_message())
        final = self.run_dir / pr.FINAL
        if not final.exists():
            raise SimError(self._stopped_early("the simulator ended without completing"))
        extra = pr.Final.read(final).extra
        if extra:
            raise SimError(f"the unit produced {extra} output(s) more than it was given inputs")

    def _stop(self, wait: float) -> None:
        """End the simulator: the abort file for a running testbench, then the process itself if it is
        still there ``wait`` seconds later (a hung one never reads the file; after Ctrl-C nothing waits
        long for it; a testbench that saw the unit fail ends itself, its log and waveform complete)."""
        try:
            (self.run_dir / pr.ABORT).touch()
        except OSError:
            pass
        self.thread.join(timeout=wait)
        if self.thread.is_alive():
            self._kill_simulator()

    def _check_timing(self) -> None:
        res, b = self.res, self.b
        checked = b.meta.get("check_timing", ("latency", "ii"))     # a design may declare neither
        if "latency" in checked and res.latency_measured is not None and res.latency_measured != b.latency:
            res.timing_error = (f"the unit declares latency {b.latency} but its first output came "
                                f"{res.latency_measured} cycles after its first input (no stalls)")
        elif "ii" in checked and res.ii_measured is not None and res.ii_measured != b.initiation_interval:
            res.timing_error = (f"the unit declares initiation interval {b.initiation_interval} but accepted "
                                f"inputs at one per {res.ii_measured:g} cycles (no stalls)")

    def _protocol_message(self, batch: Batch, stats: pr.BatchStats) -> str:
        if stats.load_error:
            return f"batch {batch.index}: the harness could not read its {batch.beats} input payloads"
        return (f"batch {batch.index}: the unit made no progress for {self.watchdog} cycles: {stats.n_in} of "
                f"{batch.beats} inputs accepted, {stats.n_out} outputs delivered (a stuck ready/valid, or a lost "
                "output)")

    def _failure(self) -> str:
        log = self.run_dir / "sim.log"
        tail = bld.log_tail(log, 30) if log.exists() else "(no simulator log)"
        why = f" ({self.sim_errors[0]!r})" if self.sim_errors else ""
        return f"{why}; simulator log {log}:\n{tail}"

    def _stopped_early(self, what: str = "the simulator stopped early") -> str:
        """Why the simulator ended: the unit's logic that did not settle named (its signals, from the
        build's warnings), else the simulator's own first error line, then the log."""
        log = self.run_dir / "sim.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        design = self.b.meta.get("design") or f"the unit ({self.label})"
        m = re.search(r"%Error-DIDNOTCONVERGE: [^\n]*?: (\w+ region did not converge[^\n]*)", text)
        if m:
            loops = circular_signals(self.b)
            where = (f": a combinational loop through {', '.join(loops)}" if loops else
                     ": a combinational loop (Verilator's UNOPTFLAT warnings in the build log name its signals: "
                     f"{self.b.log})")
            return (f"{design}: its combinational logic never settled (Verilator: {m.group(1).strip()}){where}; "
                    f"simulator log {log}")
        first = next((ln.strip() for ln in text.splitlines() if ln.startswith("%Error")), None)
        if first:
            return f"{what}: {first}; simulator log {log}"
        return what + self._failure()


_UNOPTFLAT = re.compile(r"%Warning-UNOPTFLAT: (?P<file>[^:\n]+):(?P<line>\d+):\d+: .*?'(?P<signal>[^']+)'")


def circular_signals(b: bld.Build, most: int = 4) -> list[str]:
    """``signal (file:line)`` of the signals Verilator's build found in circular combinational logic
    (UNOPTFLAT in the build log), the unit's own first; the hierarchy above the unit left out."""
    try:
        text = b.log.read_text(errors="replace")
    except OSError:
        return []
    prefix = b.meta.get("hierarchy", f"{bld.TOP}.unit.")
    found, theirs = [], []
    for m in _UNOPTFLAT.finditer(text):
        name = m["signal"]
        mine = name.startswith(prefix)
        item = f"{name.removeprefix(prefix) if mine else name} ({m['file']}:{m['line']})"
        (found if mine else theirs).append(item)
    items = list(dict.fromkeys(found + theirs))
    return items[:most] + ([f"{len(items) - most} more"] if len(items) > most else [])


def _ensure_importable():
    """The simulator's Python imports ``tb.cosim_tb`` through PYTHONPATH, which the runner takes from sys.path."""
    repo = str(bld.REPO)
    if repo not in sys.path:
        sys.path.insert(0, repo)
