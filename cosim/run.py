"""Co-simulate dot-add units against the golden model: one instruction, or many.

``run_instruction`` does one instruction: get the unit (``hw.dot_add_unit`` by default,
:mod:`cosim.units`), build it inside ``tb/cosim_harness.sv`` (cached, :mod:`cosim.build`), then
run a :mod:`cosim.session` that scores every output against the reference (``golden.dot_add``
by default) while the simulator runs.  On a mismatch :mod:`cosim.failures` prints golden's trace
of the first failing vector, saves the failing vectors for ``python -m cosim replay FILE`` and
reruns them on a waveform-tracing build.  ``run_many`` does a list, printing the table of
:mod:`cosim.table` as the runs finish.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import golden

from . import build as bld
from . import failures
from . import session
from .payload import PayloadLayout
from .table import HEADER, progress, row
from .units import NoRTL, unit_provider
from .vectors import ArrayStream, VectorStream


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


# ---- one build, scored -------------------------------------------------------------------------------

def simulate_and_score(b: bld.Build, layout, stream, reference: Callable, *, mismatching: Callable | None = None,
                       max_saved: int = 1000, **schedule) -> Result:
    """A :func:`cosim.session.simulate` of ``b`` with a :class:`cosim.session.Score` hook, as a :class:`Result`.

    ``schedule``: :func:`cosim.session.simulate`'s keywords (n, budget_s, seed, stall_in, ...).
    """
    score = session.Score(layout.ins, reference, mismatching, max_saved)
    s = session.simulate(b, layout, stream, score, **schedule)
    res = Result(layout.ins, lanes=layout.lanes, latency=s.latency, initiation_interval=s.initiation_interval,
                 latency_measured=s.latency_measured, ii_measured=s.ii_measured, vectors=s.vectors,
                 mismatches=score.count, seconds=s.seconds, cycles=s.cycles, sim_seconds=s.sim_seconds,
                 run_dir=s.run_dir, waves_file=s.waves_file)
    if s.error:
        res.status, res.message = "ERROR", s.error
        return res
    res.failing = score.failing
    if s.timing_error:
        res.status, res.message = "ERROR", s.timing_error
    if score.count:
        also = f"; also: {res.message}" if res.message else ""
        res.status = "MISMATCH"
        res.message = f"{score.count} of {s.vectors} results differ from the reference{also}"
    return res


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
        b = build_checked(component, layout, waves=cfg.waves, root=cfg.build_root)
    except bld.BuildError as e:
        res.status, res.message = "ERROR", str(e)
        return res
    if vectors_from is not None:
        stream = ArrayStream(ins, *vectors_from)
        n = len(vectors_from[2])
    else:
        stream = VectorStream(ins, cfg.vectors, cfg.seed)
        n = cfg.n if cfg.n is not None else (2000 if cfg.waves else None)
    res = simulate_and_score(
        b, layout, stream, reference, max_saved=cfg.max_saved, n=n, budget_s=cfg.budget_s, min_n=cfg.min_n,
        seed=cfg.seed, stall_in=cfg.stall if cfg.stall_in is None else cfg.stall_in,
        stall_out=cfg.stall if cfg.stall_out is None else cfg.stall_out, batch_vectors=cfg.batch_vectors,
        progress=cfg.progress, keep_run_dir=cfg.keep_run_dir)
    res.build_seconds, res.build_source = b.seconds, b.source
    note_wave_format(b)
    if res.status == "MISMATCH":
        failures.report_failure(res, cfg, provider, reference, lambda: provider(ins, cfg.lanes), out=out)
    return res


def build_checked(component, layout: PayloadLayout, *, waves: bool = False, root=None) -> bld.Build:
    """Build ``component`` after checking that its payloads are ``layout``'s (BuildError if not)."""
    ins = layout.ins
    iface = bld.unit_interface(component)
    if (iface.in_width, iface.out_width) != (layout.in_width, layout.out_width):
        raise bld.BuildError(f"the unit's payloads are {iface.in_width} -> {iface.out_width} bits; "
                             f"{layout.lanes} lane(s) of {ins.name} need {layout.in_width} -> {layout.out_width} "
                             "(see cosim/payload.py for the layout)")
    return bld.build_unit(component, ins.arch, ins.name, waves=waves, root=root)


_noted: set = set()


def note_wave_format(b: bld.Build) -> None:
    """Say once why the waveforms are VCD where FST was asked for."""
    if b.wave_format == "vcd" and "vcd" not in _noted:
        _noted.add("vcd")
        from .toolchain import FST_HINT
        print(f"note: {FST_HINT}", file=sys.stderr)


# ---- many instructions ---------------------------------------------------------------------------------

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
    return _run_in_workers(instructions, cfg, unit, jobs, out)


def _run_in_workers(instructions, cfg: Config, unit, jobs: int, out) -> list:
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
                    progress(f"[{done}/{len(instructions)} done, {time.perf_counter() - t0:.0f} s, {jobs} jobs]")
        except KeyboardInterrupt:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    progress(None)
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
