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
from collections.abc import Callable

import golden
from golden.streams import ArrayStream, VectorStream

from . import build as bld
from . import failures
from .coverage import CLOSURE, closure_size, measuring
from .coverage import take as take_coverage
from .payload import PayloadLayout
from .scoring import Config, Result, Status, build_checked, note_wave_format, simulate_and_score
from .session import Score
from .table import header, progress, row
from .units import NoRTL, provider_from_description, unit_provider

__all__ = ["Config", "Result", "run_instruction", "run_many", "replay"]


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
        res.status, res.message = Status.NO_RTL, str(e)
        return res
    except Exception as e:                       # a generator bug: report it, go on with the others
        res.status, res.message = Status.ERROR, f"building the unit raised {type(e).__name__}: {e}"
        return res
    layout = PayloadLayout(ins, cfg.lanes)
    try:
        b = build_checked(component, layout, waves=cfg.waves, root=cfg.build_root)
    except bld.BuildError as e:
        res.status, res.message = Status.ERROR, str(e)
        return res
    if vectors_from is not None:
        stream = ArrayStream(ins, *vectors_from)
        n = len(vectors_from[2])
    else:
        stream = VectorStream(ins, cfg.vectors, cfg.seed)
        n = cfg.n if cfg.n is not None else (2000 if cfg.waves else None)
        if n == CLOSURE:
            n = closure_size(ins, cfg.vectors, cfg.seed)
    score = measuring(Score(ins, reference, None, cfg.max_saved), ins, cfg)
    res = simulate_and_score(
        b, layout, stream, reference, max_saved=cfg.max_saved, n=n, budget_s=cfg.budget_s, min_n=cfg.min_n,
        seed=cfg.seed, stall_in=cfg.stall if cfg.stall_in is None else cfg.stall_in,
        stall_out=cfg.stall if cfg.stall_out is None else cfg.stall_out, batch_vectors=cfg.batch_vectors,
        progress=cfg.progress, keep_run_dir=cfg.keep_run_dir, score=score)
    res.build_seconds, res.build_source, res.build_key = b.seconds, b.source, b.key
    take_coverage(res, score, out)
    note_wave_format(b)
    if res.status == Status.MISMATCH:
        failures.report_failure(res, cfg, provider, reference, lambda: provider(ins, cfg.lanes), out=out,
                                component=component)
    return res


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
    print(header(cfg.coverage), file=out, flush=True)
    if jobs <= 1 or len(instructions) <= 1:
        results = []
        for ins in instructions:
            r = run_instruction(ins, cfg, unit, reference)
            results.append(r)
            print(row(r, coverage=cfg.coverage), file=out, flush=True)
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
                    r, report = Result(instructions[i], status=Status.ERROR,
                                       message=f"worker failed: {type(e).__name__}: {e}"), ""
                results[i] = r
                done += 1
                print(row(r, coverage=cfg.coverage), file=out, flush=True)
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


def replay(path, config: Config | None = None, unit=None) -> Result:
    """Run the vectors saved in ``path`` again: same instruction, and by default the unit that failed
    (its spec, or a custom hw unit rebuilt from its description; a file saved from a unit that
    cannot be rebuilt is refused with a ValueError unless ``unit`` gives it)."""
    meta, arr = failures.load_failures(path)
    ins = golden.lookup(meta["arch"], meta["instr"])
    cfg = dataclasses.replace(config or Config(), lanes=int(meta.get("lanes", 1)))
    provider = unit if unit is not None else saved_unit(meta, ins, path)
    res = run_instruction(ins, cfg, provider, vectors_from=tuple(arr[x] for x in failures.OPERANDS))
    saved_key = meta.get("build_key")
    if unit is None and saved_key and res.build_key and res.build_key != saved_key:
        print(f"note: the unit's Verilog differs from the one that failed (build {saved_key[:16]}, now "
              f"{res.build_key[:16]}): the RTL changed since", file=cfg.out or sys.stdout)
    return res


def saved_unit(meta: dict, ins, path):
    """The unit provider a replay file names (see :func:`cosim.units.describe_unit`)."""
    desc = meta.get("unit_description")
    if "campaign" in meta:              # a campaign's block names its device, which campaign's replay makes
        raise ValueError(f"replay file {path} was saved by a campaign (device {meta.get('device')}): "
                         f"python -m campaign replay {path}")
    if meta.get("dut"):
        raise ValueError(f"replay file {path} was saved by a run of the design {meta['dut']}: "
                         f"python -m cosim.dut replay {path}")
    if meta.get("unit"):
        return meta["unit"]
    if desc:
        return provider_from_description(desc, ins, f"replay file {path}")
    if "board" in meta:                 # an FPGA run's failures: the board runs the catalog hw unit
        return "hw"
    raise ValueError(f"replay file {path} names no unit (saved by an older version from a custom unit?): "
                     "replay it from Python with the unit that failed, cosim.run.replay(path, unit=PROVIDER)")
