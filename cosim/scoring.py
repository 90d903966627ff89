"""One co-simulation scored against a reference, as a :class:`Result`; what a run is asked to do (:class:`Config`).

The layer between a :mod:`cosim.session` (batches in, outputs to a hook) and the commands that
run instructions (:mod:`cosim.run`), report their failures (:mod:`cosim.failures`) or run a whole
tensor core (:mod:`cosim.tensor_core`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import golden

from . import build as bld
from . import session
from .payload import PayloadLayout
from .status import Status

__all__ = ["Config", "Result", "check_budget", "simulate_and_score", "build_checked", "note_wave_format"]


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
    coverage: bool = False             # measure the cover points on every vector checked (cosim.coverage)
    coverage_sample: int | None = None  # ... only on the first this many


def check_budget(budget) -> None:
    """A ``--budget`` (make's BUDGET=) as the commands take it: None (not given) or a positive, finite number of
    seconds; ``-3``, ``0``, ``nan`` and ``inf`` are a ValueError in one line."""
    if budget is not None and not (math.isfinite(budget) and budget > 0):
        raise ValueError(f"--budget must be a positive number of seconds, got {budget:g}")


@dataclass
class Result:
    ins: golden.Instruction
    status: Status = Status.OK
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
    build_key: str = ""                # the unit's build (cosim.build.Build.key)
    failing: dict | None = None        # first failing vectors: a, b, c, scale_a, scale_b, expected, got, index
    coverage: object = None            # golden.cover.model.Coverage of the vectors checked, when measured

    @property
    def ok(self) -> bool:
        return self.status == Status.OK

    @property
    def rate(self) -> float:
        return self.vectors / self.seconds if self.seconds > 0 else 0.0

    @property
    def cycles_per_s(self) -> float:
        return self.cycles / self.sim_seconds if self.sim_seconds > 0 else 0.0


# ---- one build, scored -------------------------------------------------------------------------------

def simulate_and_score(b: bld.Build, layout, stream, reference: Callable, *, mismatching: Callable | None = None,
                       max_saved: int = 1000, score: session.Score | None = None, **schedule) -> Result:
    """A :func:`cosim.session.simulate` of ``b`` with a :class:`cosim.session.Score` hook, as a :class:`Result`.

    ``schedule``: :func:`cosim.session.simulate`'s keywords (n, budget_s, seed, stall_in, ...); ``score``:
    a :class:`cosim.session.Score` of the caller's (one that keeps more), else a plain one.
    """
    score = score or session.Score(layout.ins, reference, mismatching, max_saved)
    s = session.simulate(b, layout, stream, score, **schedule)
    res = Result(layout.ins, lanes=layout.lanes, latency=s.latency, initiation_interval=s.initiation_interval,
                 latency_measured=s.latency_measured, ii_measured=s.ii_measured, vectors=s.vectors,
                 mismatches=score.count, seconds=s.seconds, cycles=s.cycles, sim_seconds=s.sim_seconds,
                 run_dir=s.run_dir, waves_file=s.waves_file)
    if s.error:
        res.status, res.message = Status.ERROR, s.error
        return res
    res.failing = score.failing
    if s.timing_error:
        res.status, res.message = Status.ERROR, s.timing_error
    if score.count:
        also = f"; also: {res.message}" if res.message else ""
        res.status = Status.MISMATCH
        res.message = f"{score.count} of {s.vectors} results differ from the reference{also}"
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
