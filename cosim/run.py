"""Co-simulate dot-add units against the golden model: build, drive, score, report.

``run_instruction`` does one instruction: get the unit (``hw.dot_add_unit`` by
default), build it inside ``tb/cosim_harness.sv`` (cached), then run the cocotb
test ``tb.cosim_tb`` in a simulator process while this process generates the
next batches of vectors, computes their golden results and scores the batches
the simulator has finished: two processes, no per-cycle Python.

Batch 0 is a calibration batch without stalls: its cycle counts give the
measured latency (first output minus first input) and initiation interval,
which must equal what the unit declares.  The other batches run with the
requested valid/ready stall probability on both sides.

On a mismatch: the golden trace of the first failing vector is printed, the
failing vectors are saved to an ``.npz`` for ``python -m cosim replay FILE``,
and they are rerun on an FST-tracing build whose waveform path is printed.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

import golden
from golden.formats import NAN, decode

from . import build as bld
from .payload import PayloadLayout, from_words32, to_words32
from .vectors import ArrayStream, VectorStream

EXACT_NAN_ALGORITHMS = ("FDA", "CoFDA", "GDFS")   # NVIDIA: the canonical NaN is part of the result
CAL_BEATS = 256                                   # calibration batch (no stalls)
FAILURES_DIR = bld.BUILD_ROOT / "failures"


class NoRTL(Exception):
    """The unit provider has no RTL for this instruction (yet)."""


# ---- unit providers ----------------------------------------------------------------------------------

class HwUnits:
    """``hw.dot_add_unit(instr, lanes=...)``, imported when first used."""

    spec = "hw"
    reference = None                       # golden.dot_add

    def __call__(self, ins, lanes: int):
        try:
            import hw
        except ImportError as e:
            raise NoRTL(f"the hw package cannot be imported ({e})") from None
        fn = getattr(hw, "dot_add_unit", None)
        if fn is None:
            raise NoRTL("hw has no dot_add_unit yet")
        try:
            return fn(ins, lanes=lanes)
        except NotImplementedError as e:
            raise NoRTL(str(e) or f"no RTL for algorithm {ins.algorithm}") from None


class StandInUnits:
    """:class:`cosim.standin.StandInUnit` (testing the machinery); its own reference function."""

    def __init__(self, latency: int = 3, initiation_interval: int = 1, bug: bool = False):
        self.latency, self.initiation_interval, self.bug = latency, initiation_interval, bug
        from .standin import reference
        self.reference = reference
        self.spec = f"standin:latency={latency},ii={initiation_interval},bug={int(bug)}"

    def __call__(self, ins, lanes: int):
        from .standin import StandInUnit
        return StandInUnit(ins, lanes, self.latency, self.initiation_interval, self.bug)


def unit_provider(spec=None):
    """``None``/``"hw"``, ``"standin[:latency=3,ii=1,bug=0]"``, or a callable ``(ins, lanes) -> component``."""
    if spec is None or spec == "hw":
        return HwUnits()
    if callable(spec):
        return spec
    if spec.startswith("standin"):
        opts = {"latency": 3, "ii": 1, "bug": 0}
        tail = spec.partition(":")[2]
        for item in filter(None, tail.split(",")):
            k, _, v = item.partition("=")
            if k not in opts:
                raise ValueError(f"unit {spec!r}: unknown option {k!r} (latency, ii, bug)")
            opts[k] = int(v)
        return StandInUnits(opts["latency"], opts["ii"], bool(opts["bug"]))
    raise ValueError(f"unknown unit {spec!r}: hw, or standin[:latency=N,ii=N,bug=0|1]")


class FixedReference:
    """Expected results known in advance (measured on a GPU, say) for a fixed vector list.

    Use with ``run_instruction(..., vectors_from=ops, reference=FixedReference(d))``: batches
    ask for results in stream order (wrapping around like the padded vector stream).
    """

    def __init__(self, d):
        self.d = np.asarray(d, np.uint64).reshape(-1)
        self.pos = 0

    def __call__(self, ins, a, *rest):
        idx = (self.pos + np.arange(len(a))) % max(len(self.d), 1)
        self.pos += len(a)
        return self.d[idx]


# ---- configuration and results -----------------------------------------------------------------------

@dataclass
class Config:
    """How to co-simulate.  ``n=None`` runs for ``budget_s`` seconds and at least ``min_n`` vectors."""

    n: int | None = None
    budget_s: float = 60.0
    min_n: int = 100_000
    seed: int = 1
    stall: float = 0.1                 # probability, each side, per cycle / per new input
    stall_in: float | None = None      # override one side
    stall_out: float | None = None
    lanes: int = 1
    vectors: object = "mixed"          # generator: name, "module:function" or callable
    waves: bool = False
    batch_vectors: int = 65536
    progress: float = 15.0             # seconds between progress lines; 0: none
    build_root: Path | None = None
    failures_dir: Path | None = None
    max_saved: int = 1000              # failing vectors kept for replay
    rerun_with_waves: bool = True
    rerun_max: int = 64                # failing vectors rerun with waves
    keep_run_dir: bool = False
    out: object = None                 # stream for reports (default sys.stdout)


@dataclass
class Result:
    ins: golden.Instruction
    status: str = "ok"                 # ok | MISMATCH | no RTL | ERROR
    message: str = ""
    lanes: int = 1
    latency: int | None = None
    initiation_interval: int | None = None
    latency_measured: int | None = None
    ii_measured: float | None = None
    vectors: int = 0
    mismatches: int = 0
    seconds: float = 0.0
    build_seconds: float = 0.0
    build_source: str = ""
    cycles: int = 0
    sim_seconds: float = 0.0
    failures_file: Path | None = None
    waves_file: Path | None = None
    run_dir: Path | None = None
    failing: dict | None = None        # first failing vectors: a, b, c, scale_a, scale_b, expected, got, index

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def rate(self) -> float:
        return self.vectors / self.seconds if self.seconds > 0 else 0.0

    @property
    def cycles_per_s(self) -> float:
        return self.cycles / self.sim_seconds if self.sim_seconds > 0 else 0.0


def nan_equal(ins) -> bool:
    """Whether any NaN counts as equal to any other: not where the canonical NaN is specified."""
    return ins.algorithm not in EXACT_NAN_ALGORITHMS


def mismatching(ins, got, expected) -> np.ndarray:
    """Indices where ``got`` differs from ``expected`` bit for bit (NaN payloads aside where allowed)."""
    bad = np.nonzero(np.asarray(got, np.uint64) != np.asarray(expected, np.uint64))[0]
    if bad.size and nan_equal(ins):
        fd = ins.formats[3]
        both = (decode(fd, got[bad]).cls == NAN) & (decode(fd, expected[bad]).cls == NAN)
        bad = bad[~both]
    return bad


# ---- the simulation of one build ---------------------------------------------------------------------

class SimError(RuntimeError):
    pass


def _write_json(path: Path, obj) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj))
    os.replace(tmp, path)


def _stall16(p: float) -> int:
    if not 0.0 <= p < 1.0:
        raise ValueError(f"stall probability must be in [0, 1), got {p}")
    return min(int(round(p * 65536)), 65535)


def _ensure_importable():
    """The simulator's Python imports ``tb.cosim_tb`` through PYTHONPATH, which the runner takes from sys.path."""
    repo = str(bld.REPO)
    if repo not in sys.path:
        sys.path.insert(0, repo)


@dataclass
class _Batch:
    index: int
    start: int
    beats: int
    ops: tuple
    expected: np.ndarray


def simulate(b: bld.Build, layout: PayloadLayout, stream, reference: Callable, *, n: int | None,
             budget_s: float = 60.0, min_n: int = 0, seed: int = 1, stall_in: float = 0.0,
             stall_out: float = 0.0, batch_vectors: int = 65536, max_saved: int = 1000,
             progress: float = 0.0, label: str = "", keep_run_dir: bool = False, out=None) -> Result:
    """Run vectors from ``stream`` through the built harness and score them against ``reference``."""
    from cocotb_tools.runner import get_runner

    out = out or sys.stdout
    ins, lanes = layout.ins, layout.lanes
    res = Result(ins, lanes=lanes, latency=b.latency, initiation_interval=b.initiation_interval)
    beats_per_batch = max(1, batch_vectors // lanes)
    total = None if n is None else -(-n // lanes) * lanes
    p_max = max(stall_in, stall_out)
    watchdog = 4 * (b.latency + b.initiation_interval) + 1000 + \
        (int(math.ceil(40 / -math.log(p_max))) if p_max > 0 else 0)
    run_dir = Path(tempfile.mkdtemp(prefix=f"run-{time.strftime('%Y%m%d-%H%M%S')}-", dir=b.dir))
    res.run_dir = run_dir
    _write_json(run_dir / "job.json", {"watchdog": watchdog, "clock_impl": "gpi",
                                       "drain_cycles": 2 * (b.latency + b.initiation_interval) + 16})
    fst = run_dir / f"dump.{b.wave_format or 'fst'}"
    _ensure_importable()
    sim_error: list = []

    def run_sim():
        runner = get_runner("verilator")
        try:
            runner.test(hdl_toplevel=bld.TOP, hdl_toplevel_lang="verilog", test_module="tb.cosim_tb",
                        build_dir=str(b.dir), test_dir=str(run_dir),
                        plusargs=[f"+COSIM_IN={run_dir / 'cur_in.bin'}", f"+COSIM_OUT={run_dir / 'cur_out.bin'}"],
                        extra_env={"COSIM_RUN_DIR": str(run_dir), "COCOTB_LOG_LEVEL": "WARNING",
                                   "GPI_LOG_LEVEL": "WARNING"},
                        waves=b.waves, test_args=(["--trace-file", str(fst)] if b.waves else []),
                        log_file=str(run_dir / "sim.log"), results_xml=str(run_dir / "results.xml"))
        except BaseException as e:       # the runner exits (SystemExit) or raises on a failing test
            sim_error.append(e)

    pending: deque = deque()
    produced = scored = batch_no = 0
    done_producing = False
    t0 = time.perf_counter()
    last_progress = t0
    first_fail: list = []
    fail_count = 0
    thread = threading.Thread(target=run_sim, name="cosim-sim", daemon=True)
    thread.start()
    gc.collect()
    gc.freeze()          # the elaborated design's many objects need no more scans by the collector

    def finish_producing():
        nonlocal done_producing
        done_producing = True
        _write_json(run_dir / "end.json", {"batches": batch_no})

    try:
        while True:
            if not done_producing and len(pending) < 2:
                if total is not None:
                    remaining = total - produced
                else:
                    elapsed = time.perf_counter() - t0
                    remaining = None if (elapsed < budget_s or produced < min_n) else 0
                if remaining == 0:
                    finish_producing()
                    continue
                beats = CAL_BEATS if batch_no == 0 else beats_per_batch
                if remaining is not None:
                    beats = min(beats, remaining // lanes)
                count = beats * lanes
                ops = stream.take(count)
                expected = np.asarray(reference(ins, *ops), np.uint64).reshape(-1)
                words = layout.pack(*ops)
                (run_dir / f"in_{batch_no}.bin").write_bytes(to_words32(words, layout.in_width))
                cal = batch_no == 0
                _write_json(run_dir / f"in_{batch_no}.json", {
                    "beats": beats, "seed": (seed * 1000003 + batch_no) & 0xFFFFFFFF,
                    "stall_in": 0 if cal else _stall16(stall_in), "stall_out": 0 if cal else _stall16(stall_out)})
                pending.append(_Batch(batch_no, produced, beats, ops, expected))
                produced += count
                batch_no += 1
                continue
            if pending and (run_dir / f"out_{pending[0].index}.json").exists():
                bt = pending.popleft()
                stats = json.loads((run_dir / f"out_{bt.index}.json").read_text())
                res.cycles += stats["cycles"]
                res.sim_seconds += stats["wall"]
                if stats["load_error"] or stats["timeout"]:
                    raise SimError(_protocol_message(bt, stats, watchdog))
                outp = run_dir / f"out_{bt.index}.bin"
                got = layout.unpack_out(from_words32(outp.read_bytes(), layout.out_width, rows=bt.beats))
                outp.unlink()
                if bt.index == 0:
                    res.latency_measured = stats["first_out"] - stats["first_in"]
                    if bt.beats > 1:
                        res.ii_measured = (stats["last_in"] - stats["first_in"]) / (bt.beats - 1)
                used = bt.beats * lanes if n is None else min(bt.beats * lanes, n - bt.start)
                got, bt.expected = got[:used], bt.expected[:used]     # the rest pads the last beat
                # a layout may score its own rows (the tensor core: each row's instruction has its NaN rule)
                score = getattr(layout, "mismatching", None)
                bad = score(got, bt.expected, bt.ops) if score else mismatching(ins, got, bt.expected)
                if bad.size:
                    fail_count += bad.size
                    keep = bad[:max(0, max_saved - sum(len(f["index"]) for f in first_fail))]
                    if keep.size:
                        first_fail.append(_failing(bt, keep, got))
                scored += used
                now = time.perf_counter()
                if progress and now - last_progress >= progress:
                    last_progress = now
                    _progress(f"  {label or ins.name}: {scored:,} vectors checked, {fail_count:,} mismatches, "
                              f"{scored / (now - t0):,.0f} dot-adds/s")
                continue
            if done_producing and not pending:
                break
            if not thread.is_alive():
                raise SimError("the simulator stopped early" + _sim_failure(run_dir, sim_error))
            time.sleep(0.0005)
        thread.join(timeout=120)
        if thread.is_alive():
            raise SimError("the simulator did not finish" + _sim_failure(run_dir, sim_error))
        final = run_dir / "final.json"
        if not final.exists():
            raise SimError("the simulator ended without completing" + _sim_failure(run_dir, sim_error))
        extra = json.loads(final.read_text())["extra"]
        if extra:
            raise SimError(f"the unit produced {extra} output(s) more than it was given inputs")
    except BaseException as e:
        gc.unfreeze()
        _progress(None)
        (run_dir / "abort").touch()
        thread.join(timeout=10)
        res.seconds = time.perf_counter() - t0
        res.vectors = scored
        res.mismatches = fail_count
        if isinstance(e, SimError):
            res.status, res.message = "ERROR", str(e)
            return res
        raise
    gc.unfreeze()
    _progress(None)
    res.seconds = time.perf_counter() - t0
    res.vectors = scored
    res.mismatches = fail_count
    if first_fail:
        res.failing = {k: (None if first_fail[0][k] is None else np.concatenate([f[k] for f in first_fail]))
                       for k in first_fail[0]}
    if res.latency_measured is not None and res.latency_measured != b.latency:
        res.status = "ERROR"
        res.message = (f"the unit declares latency {b.latency} but its first output came "
                       f"{res.latency_measured} cycles after its first input (no stalls)")
    elif res.ii_measured is not None and res.ii_measured != b.initiation_interval:
        res.status = "ERROR"
        res.message = (f"the unit declares initiation interval {b.initiation_interval} but accepted "
                       f"inputs at one per {res.ii_measured:g} cycles (no stalls)")
    if fail_count:
        also = f"; also: {res.message}" if res.message else ""
        res.status = "MISMATCH"
        res.message = f"{fail_count} of {scored} results differ from the reference{also}"
    if res.ok and not (keep_run_dir or b.waves):
        shutil.rmtree(run_dir, ignore_errors=True)
        res.run_dir = None
    if b.waves and fst.exists():
        res.waves_file = fst
    return res


_shown = [0]


def _progress(line: str | None) -> None:
    """A progress line on stderr: rewritten in place on a terminal, one line each time otherwise."""
    tty = sys.stderr.isatty()
    if line is None:
        if tty and _shown[0]:
            print("\r" + " " * _shown[0] + "\r", end="", file=sys.stderr, flush=True)
        _shown[0] = 0
        return
    if tty:
        print("\r" + line.ljust(_shown[0]), end="", file=sys.stderr, flush=True)
        _shown[0] = len(line)
    else:
        print(line, file=sys.stderr, flush=True)


OPERANDS = ("a", "b", "c", "scale_a", "scale_b")


def _failing(bt: _Batch, idx: np.ndarray, got: np.ndarray) -> dict:
    # a unit's own operand tuple (the tensor core's starts with the opcode) keeps its order as op0, op1, ...
    names = OPERANDS if len(bt.ops) == len(OPERANDS) else tuple(f"op{i}" for i in range(len(bt.ops)))
    rec = {name: None if x is None else x[idx] for name, x in zip(names, bt.ops)}
    rec.update(expected=bt.expected[idx], got=got[idx], index=bt.start + idx)
    return rec


def _protocol_message(bt: _Batch, stats: dict, watchdog: int) -> str:
    if stats["load_error"]:
        return f"batch {bt.index}: the harness could not read its {bt.beats} input payloads"
    return (f"batch {bt.index}: the unit made no progress for {watchdog} cycles: {stats['n_in']} of {bt.beats} "
            f"inputs accepted, {stats['n_out']} outputs delivered (a stuck ready/valid, or a lost output)")


def _sim_failure(run_dir: Path, errors) -> str:
    log = run_dir / "sim.log"
    tail = bld._tail(log, 30) if log.exists() else "(no simulator log)"
    why = f" ({errors[0]!r})" if errors else ""
    return f"{why}; simulator log {log}:\n{tail}"


# ---- one instruction ---------------------------------------------------------------------------------

def run_instruction(ins, config: Config | None = None, unit=None, reference: Callable | None = None,
                    *, vectors_from: tuple | None = None) -> Result:
    """Build and co-simulate one instruction's unit; see the module docstring.

    ``unit``: a provider (:func:`unit_provider` spec or callable ``(ins, lanes) -> component``).
    ``reference``: ``(ins, a, b, c, scale_a, scale_b) -> d``; default the provider's, else golden.dot_add.
    ``vectors_from``: fixed operands ``(a, b, c, scale_a, scale_b)`` instead of a generator (replay).
    """
    cfg = config or Config()
    out = cfg.out or sys.stdout
    provider = unit_provider(unit)
    reference = reference or getattr(provider, "reference", None) or golden.dot_add
    res = Result(ins, lanes=cfg.lanes)
    try:
        component = provider(ins, cfg.lanes)
    except NoRTL as e:
        res.status, res.message = "no RTL", str(e)
        return res
    except Exception as e:                       # a generator bug: report it, go on with the others
        res.status, res.message = "ERROR", f"building the unit raised {type(e).__name__}: {e}"
        return res
    layout = PayloadLayout(ins, cfg.lanes)
    try:
        iface = bld.unit_interface(component)
        if (iface.in_width, iface.out_width) != (layout.in_width, layout.out_width):
            raise bld.BuildError(f"the unit's payloads are {iface.in_width} -> {iface.out_width} bits; "
                                 f"{cfg.lanes} lane(s) of {ins.name} need {layout.in_width} -> {layout.out_width} "
                                 "(see cosim/payload.py for the layout)")
        b = bld.build_unit(component, ins.arch, ins.name, waves=cfg.waves, root=cfg.build_root)
    except bld.BuildError as e:
        res.status, res.message = "ERROR", str(e)
        return res
    if vectors_from is not None:
        stream = ArrayStream(ins, *vectors_from)
        n = len(vectors_from[2])
    else:
        stream = VectorStream(ins, cfg.vectors, cfg.seed)
        n = cfg.n if cfg.n is not None else (2000 if cfg.waves else None)
    s_in = cfg.stall if cfg.stall_in is None else cfg.stall_in
    s_out = cfg.stall if cfg.stall_out is None else cfg.stall_out
    res = simulate(b, layout, stream, reference, n=n, budget_s=cfg.budget_s, min_n=cfg.min_n, seed=cfg.seed,
                   stall_in=s_in, stall_out=s_out, batch_vectors=cfg.batch_vectors, max_saved=cfg.max_saved,
                   progress=cfg.progress, keep_run_dir=cfg.keep_run_dir, out=out)
    res.build_seconds, res.build_source = b.seconds, b.source
    _note_wave_format(b, out)
    if res.status == "MISMATCH":
        _report_failure(res, cfg, provider, reference, component_for_waves=lambda: provider(ins, cfg.lanes),
                        out=out)
    return res


def _report_failure(res: Result, cfg: Config, provider, reference, component_for_waves, out):
    ins, f = res.ins, res.failing
    fd = ins.formats[3]
    width = max(fd.storage_bits // 4, 1)
    print(f"\n{ins.arch} {ins.name}: {res.message}", file=out)
    if f is not None and len(f["index"]):
        i = 0
        print(f"first failing vector #{int(f['index'][i])}: got 0x{int(f['got'][i]):0{width}x}, "
              f"expected 0x{int(f['expected'][i]):0{width}x}", file=out)
        if reference is golden.dot_add:
            sa = None if f["scale_a"] is None else f["scale_a"][i]
            sb = None if f["scale_b"] is None else f["scale_b"][i]
            print(golden.trace(ins, f["a"][i], f["b"][i], f["c"][i], sa, sb), file=out)
        else:
            print(f"  a={_hex(f['a'][i])}\n  b={_hex(f['b'][i])}\n  c=0x{int(f['c'][i]):x}", file=out)
        res.failures_file = save_failures(res, cfg, provider)
        print(f"failing vectors ({len(f['index'])} of {res.mismatches}) saved: {res.failures_file}\n"
              f"  replay: python -m cosim replay {res.failures_file}", file=out)
        if cfg.rerun_with_waves and not cfg.waves:
            k = min(cfg.rerun_max, len(f["index"]))
            wcfg = dataclasses.replace(cfg, waves=True, stall=0.0, stall_in=None, stall_out=None, n=None,
                                       progress=0, rerun_with_waves=False)
            ops = tuple(None if f[x] is None else f[x][:k] for x in ("a", "b", "c", "scale_a", "scale_b"))
            print(f"rerunning {k} failing vector(s) with waveforms (no stalls)...", file=out, flush=True)
            try:
                wres = _run_component(ins, component_for_waves(), wcfg, FixedReference(f["expected"][:k]), ops)
            except bld.BuildError as e:
                print(f"  the waveform build failed: {e}", file=out)
                return
            res.waves_file = wres.waves_file
            if wres.status == "ERROR":
                print(f"  waveform run failed: {wres.message}", file=out)
            else:
                print(f"  {wres.mismatches} of {k} mismatch again" +
                      ("" if wres.mismatches else ": the failure depends on the stall pattern or on earlier "
                       "vectors; rerun the whole run with WAVES=1 and the same SEED and N") , file=out)
            print(f"  waves: {wres.waves_file}", file=out)
    elif f is None:
        print("(no failing vectors were kept)", file=out)


_noted: set = set()


def _note_wave_format(b: bld.Build, out) -> None:
    if b.wave_format == "vcd" and "vcd" not in _noted:
        _noted.add("vcd")
        from .toolchain import FST_HINT
        print(f"note: {FST_HINT}", file=sys.stderr)


def _run_component(ins, component, cfg: Config, reference, ops) -> Result:
    layout = PayloadLayout(ins, cfg.lanes)
    b = bld.build_unit(component, ins.arch, ins.name, waves=cfg.waves, root=cfg.build_root)
    _note_wave_format(b, sys.stderr)
    return simulate(b, layout, ArrayStream(ins, *ops), reference, n=len(ops[2]), seed=cfg.seed,
                    batch_vectors=cfg.batch_vectors, progress=0, keep_run_dir=True)


def _hex(x) -> str:
    return "[" + ", ".join(f"0x{int(v):x}" for v in np.asarray(x).reshape(-1)) + "]"


def save_failures(res: Result, cfg: Config, provider) -> Path:
    """The failing vectors of ``res`` as an .npz that ``python -m cosim replay`` reads."""
    d = Path(cfg.failures_dir) if cfg.failures_dir else FAILURES_DIR
    d.mkdir(parents=True, exist_ok=True)
    ins = res.ins
    path = d / f"{ins.arch}_{bld._safe(ins.name)}_seed{cfg.seed}_{time.strftime('%Y%m%d-%H%M%S')}.npz"
    meta = {"arch": ins.arch, "instr": ins.name, "lanes": cfg.lanes, "seed": cfg.seed,
            "unit": getattr(provider, "spec", None), "mismatches": res.mismatches, "vectors": res.vectors,
            "stall": cfg.stall, "vectors_kind": cfg.vectors if isinstance(cfg.vectors, str) else repr(cfg.vectors)}
    arrays = {k: v for k, v in res.failing.items() if v is not None}
    np.savez_compressed(path, meta=json.dumps(meta), **arrays)
    return path


def load_failures(path) -> tuple[dict, dict]:
    """``(meta, arrays)`` of a saved failure file."""
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        arrays = {k: z[k] for k in z.files if k != "meta"}
    for k in ("scale_a", "scale_b"):
        arrays.setdefault(k, None)
    return meta, arrays


def replay(path, config: Config | None = None, unit=None) -> Result:
    """Run the vectors saved in ``path`` again (same instruction; the unit spec saved with them by default)."""
    meta, arr = load_failures(path)
    ins = golden.lookup(meta["arch"], meta["instr"])
    cfg = dataclasses.replace(config or Config(), lanes=int(meta.get("lanes", 1)))
    spec = unit if unit is not None else meta.get("unit") or "hw"
    ops = (arr["a"], arr["b"], arr["c"], arr["scale_a"], arr["scale_b"])
    return run_instruction(ins, cfg, spec, vectors_from=ops)


# ---- many instructions ---------------------------------------------------------------------------------

def select(arch: str, instr: str | None) -> list:
    """Catalog instructions matching ``instr`` (name or family; all when None or "all") on ``arch``
    ("all": every architecture; "a,b": several); clear errors for unknown names."""
    instr = None if instr in (None, "", "all") else instr
    if arch and "," in arch:                         # several architectures: volta,ampere
        return [i for a in arch.split(",") if a.strip() for i in select(a.strip(), instr)]
    if arch in (None, "", "all"):
        found = golden.instructions(None, instr)
        if not found:
            raise ValueError(f"no instruction matches {instr!r} on any architecture")
        return found
    found = golden.instructions(arch, instr)         # raises for an unknown architecture
    if not found:
        golden.lookup(arch, instr)                   # raises with close matches / where it exists
        raise ValueError(f"no instruction matches {instr!r} on {arch}")
    return found


HEADER = (f"{'arch':13s} {'instruction':42s} {'algorithm':9s} {'lanes':>5s} {'lat':>4s} {'II':>3s} {'vectors':>9s} "
          f"{'mismatch':>8s} {'build s':>8s} {'time s':>7s} {'dot-adds/s':>10s}  status")


def row(r: Result) -> str:
    lat = "-" if r.latency is None else str(r.latency)
    ii = "-" if r.initiation_interval is None else str(r.initiation_interval)
    build = "-" if not r.build_source else ("cached" if r.build_source == "cached" else f"{r.build_seconds:.1f}")
    status = r.status if r.ok else f"{r.status}: {r.message.splitlines()[0][:80]}" if r.message else r.status
    return (f"{r.ins.arch:13s} {r.ins.name:42s} {r.ins.algorithm:9s} {r.lanes:5d} {lat:>4s} {ii:>3s} {r.vectors:9d} "
            f"{r.mismatches:8d} {build:>8s} {r.seconds:7.1f} {r.rate:10.0f}  {status}")


def run_many(instructions, config: Config | None = None, unit=None, reference=None, jobs: int = 1) -> list:
    """Co-simulate each instruction and print a table row as each finishes.

    ``jobs`` > 1 runs that many instructions at once in worker processes (each also runs a
    simulator process): rows then come in the order the runs finish, and the reports of a failing
    run are printed whole after its row.  Instructions whose units elaborate to the same Verilog
    share one build (the build cache locks each configuration).
    """
    cfg = config or Config()
    out = cfg.out or sys.stdout
    print(HEADER, file=out, flush=True)
    if jobs <= 1 or len(instructions) <= 1:
        results = []
        for ins in instructions:
            r = run_instruction(ins, cfg, unit, reference)
            results.append(r)
            print(row(r), file=out, flush=True)
        return results
    if not (unit is None or isinstance(unit, str)) or reference is not None:
        raise ValueError("jobs > 1 takes the unit as a spec string (hw, standin:...) and the golden reference")
    import concurrent.futures as cf
    import multiprocessing as mp
    worker_cfg = dataclasses.replace(cfg, out=None, progress=0.0)
    results: list = [None] * len(instructions)
    t0, done = time.perf_counter(), 0
    # spawn, not fork: the parent may hold threads and open simulator pipes from earlier runs
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as pool:
        futures = {pool.submit(_run_in_worker, ins, worker_cfg, unit): i
                   for i, ins in enumerate(instructions)}
        try:
            for fut in cf.as_completed(futures):
                i = futures[fut]
                try:
                    r, report = fut.result()
                except Exception as e:                  # the worker died: report it, go on
                    r, report = Result(instructions[i], status="ERROR",
                                       message=f"worker failed: {type(e).__name__}: {e}"), ""
                results[i] = r
                done += 1
                print(row(r), file=out, flush=True)
                if report.strip() and not r.ok:
                    print(report.rstrip(), file=out, flush=True)
                if cfg.progress:
                    _progress(f"[{done}/{len(instructions)} done, {time.perf_counter() - t0:.0f} s, "
                              f"{jobs} jobs]")
        except KeyboardInterrupt:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    _progress(None)
    return results


def _run_in_worker(ins, cfg: Config, unit):
    """One instruction in a worker process; returns the result and what the run printed."""
    import io
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from . import toolchain
    toolchain.setup()
    buf = io.StringIO()
    r = run_instruction(ins, dataclasses.replace(cfg, out=buf), unit)
    return r, buf.getvalue()


def summarize(results, out=None) -> int:
    """Summary lines and the exit status: 0 only when every instruction ran and matched."""
    out = out or sys.stdout
    bad = [r for r in results if r.status in ("MISMATCH", "ERROR")]
    missing = [r for r in results if r.status == "no RTL"]
    ok = [r for r in results if r.ok]
    print(f"{len(results)} instruction(s): {len(ok)} ok, {len(bad)} failing, {len(missing)} without RTL",
          file=out)
    for r in bad:
        if r.status == "ERROR":
            print(f"error: {r.ins.name}: {r.message}", file=out)
    if missing:
        algs = sorted({r.ins.algorithm for r in missing})
        print(f"no RTL yet for algorithm(s) {', '.join(algs)}: "
              f"{', '.join(r.ins.name for r in missing[:8])}{' ...' if len(missing) > 8 else ''} "
              f"({missing[0].message})", file=out)
    return 0 if not bad and not missing else 1
