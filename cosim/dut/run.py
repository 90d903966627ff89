"""Co-simulate a described design (:mod:`cosim.dut.description`) against the golden model.

A run starts from :func:`cosim.dut.builds.prepare` (every check that needs no build, in seconds).
:func:`run_target` builds the harness around the generated adapter (:mod:`cosim.dut.adapter`) and the
design's files (one cached build per target, :func:`cosim.dut.builds.build`), runs the same session as
``make cosim`` (:func:`cosim.scoring.simulate_and_score`: calibration batch,
random stalls, every result compared with golden), then:

* tells lost, duplicated and reordered results from wrong ones (:mod:`cosim.dut.order`);
* reruns the first vectors with another seed of Verilator's ``--x-assign``/``--x-initial`` randomisation
  and compares: results that change are uninitialised state (X) reaching the outputs;
* on a failure, prints golden's trace of the first failing vector (a tile device: each k-slice of its first
  failing element, then the structure probe, :mod:`cosim.dut.structure`), saves a replay file naming the
  description and its SHA-256, reruns the failing vectors on a waveform build and, with a signal map,
  names the first stage where design and golden part (:mod:`cosim.dut.signals`).
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field

import numpy as np

import golden

from .. import build as bld
from .. import failures
from ..coverage import CLOSURE, closure_size, measuring
from ..coverage import take as take_coverage
from ..scoring import Config, Result, Status, simulate_and_score
from ..session import simulate
from . import adapter, order, transfers
from .builds import Prepared, build, prepare, x_plusargs
from .description import DescriptionError, Handshake, Target
from .signals import report_divergence
from .structure import report_structure

X_CHECK_VECTORS = 4096                                          # vectors rerun under a second X seed
NO_HANDSHAKE_OUT = (Handshake.ENABLE, Handshake.FIXED)        # results marked valid by the declared latency
STRUCTURED_KIND, STRUCTURED_VECTORS = "structured", 4096                # the structured pass after a clean run


@dataclass
class DutResult:
    """A :class:`cosim.scoring.Result` and what the DUT path adds to it."""

    result: Result
    target: Target
    diagnosis: str = "none"             # order.Diagnosis value, or "x" for uninitialised state
    notes: list = field(default_factory=list)


def run_target(prep: Prepared, target: Target, ins, cfg: Config | None = None) -> DutResult:
    """Build and co-simulate one target; see the module docstring.

    With the default vectors (``mixed``), a clean run is followed by the structured pass: the first
    :data:`STRUCTURED_VECTORS` of ``VECTORS=structured`` (cancellations, subnormals, specials: a flush of
    subnormal results hides from random operands), scored the same way; its failure is the result.
    """
    cfg = cfg or Config()
    out = cfg.out or sys.stdout
    if cfg.n == CLOSURE:
        cfg = dataclasses.replace(cfg, n=closure_size(ins, cfg.vectors, cfg.seed))
    res = Result(ins)
    try:
        b = build(prep, target, ins, root=cfg.build_root)
    except bld.BuildError as e:
        res.status, res.message = Status.ERROR, str(e).splitlines()[0]
        return DutResult(res, target)
    dr = _session(prep, target, ins, b, cfg, x_check=True)
    if dr.result.ok and cfg.vectors == "mixed" and (cfg.n is None or cfg.n >= STRUCTURED_VECTORS):
        more = _session(prep, target, ins, b, dataclasses.replace(cfg, vectors=STRUCTURED_KIND, n=STRUCTURED_VECTORS),
                        x_check=False, coverage=dr.result.coverage)
        if not more.result.ok:
            more.result.message += f" (the structured pass: VECTORS={STRUCTURED_KIND}, {STRUCTURED_VECTORS:,} vectors)"
            dr = more
        else:
            dr.notes.append(f"and {more.result.vectors:,} structured {_unit(prep)}: 0 mismatches")
        dr.result.coverage = more.result.coverage           # both passes' vectors, measured into one
    if dr.result.failing is not None and dr.result.status in (Status.MISMATCH, Status.ERROR):
        _report_failure(prep, dr, cfg, out)
    return dr


def _unit(prep: Prepared) -> str:
    return "dot-adds" if transfers.is_tile(prep.desc) else "vectors"


def _schedule(prep: Prepared, ins, cfg: Config) -> dict:
    """The session's keywords, its counts in transfers (a tile device's transfer holds many dot-adds)."""
    per = transfers.dot_adds(prep.desc, ins)
    return dict(n=transfers.transfers(prep.desc, ins, cfg.n), budget_s=cfg.budget_s,
                min_n=transfers.transfers(prep.desc, ins, cfg.min_n), seed=cfg.seed,
                stall_in=cfg.stall if cfg.stall_in is None else cfg.stall_in,
                stall_out=cfg.stall if cfg.stall_out is None else cfg.stall_out,
                batch_vectors=max(16, cfg.batch_vectors // per))


def _session(prep: Prepared, target: Target, ins, b: bld.Build, cfg: Config, x_check: bool,
             coverage=None) -> DutResult:
    """One scored session of the built target, diagnosed (order, latency) and, with ``x_check``, X-checked;
    with ``cfg.coverage`` its vectors are measured (into ``coverage``, a Coverage of an earlier session, when given)."""
    desc = prep.desc
    keep = transfers.transfers(desc, ins, X_CHECK_VECTORS)
    score = measuring(transfers.score(desc, ins, keep), ins, cfg, desc.tile, coverage)
    res = simulate_and_score(
        b, transfers.layout(desc, ins), transfers.stream(desc, ins, cfg.vectors, cfg.seed), golden.dot_add,
        score=score, progress=cfg.progress, keep_run_dir=cfg.keep_run_dir,
        plusargs=desc.plusargs + x_plusargs(cfg.seed + 1), **_schedule(prep, ins, cfg))
    res.build_seconds, res.build_source, res.build_key = b.seconds, b.source, b.key
    take_coverage(res, score, cfg.out)
    _report_timing(prep, res)
    if transfers.is_tile(desc):
        _tile_counts(prep, res, score)
    dr = DutResult(res, target)
    _diagnose(dr, score, prep)
    # the X check reruns under another seed of Verilator's X randomisation; Icarus keeps X as X (cosim.icarus)
    if x_check and len(score.first) and dr.diagnosis != order.Diagnosis.LATENCY.value \
            and b.meta.get("simulator") != "icarus":
        _x_check(prep, dr, b, score.first, cfg)
    return dr


def _tile_counts(prep: Prepared, res: Result, score) -> None:
    """A tile device's result in dot-adds and D elements (the session counts transactions), and a wrong
    ``out_last`` named."""
    layout = transfers.layout(prep.desc, res.ins)
    tx = res.vectors
    res.vectors = tx * layout.dot_adds
    if res.status == Status.MISMATCH:
        res.message = res.message.replace(
            f"{score.count} of {tx} results differ from the reference",
            f"{score.count} of {tx * layout.out_elements:,} D elements differ from golden "
            f"({score.bad_transactions:,} of {tx:,} transactions)")
    if score.framing:
        line = (f"out_last: the design's last-beat mark was wrong in transaction #{score.framing[0]}"
                + (f" and {len(score.framing) - 1} more" if len(score.framing) > 1 else "")
                + f" (it must mark output beat {layout.out_elements // prep.desc.operands['d'].elements - 1}, "
                  "the last of D)")
        res.status = Status.ERROR if res.status == Status.OK else res.status
        res.message = f"{line}; {res.message}" if res.message else line


def _report_timing(prep: Prepared, res: Result) -> None:
    """Latencies as the design's own (the adapter's cycles taken off); a wrong declared latency named
    even when the values are wrong too."""
    extra = adapter.delay(prep.desc)
    res.latency = prep.desc.handshake.latency
    if res.latency_measured is not None:
        res.latency_measured -= extra
    if res.latency is None:
        res.latency = res.latency_measured
    res.initiation_interval = None if res.ii_measured is None else round(res.ii_measured)
    said = "the unit declares latency"
    if said in res.message:
        what = "last output beat" if transfers.is_tile(prep.desc) else "first result"
        line = (f"latency: {prep.desc.path.name} declares {prep.desc.handshake.latency} cycles, the design's "
                f"{what} came {res.latency_measured} cycles after its first input (no stalls)")
        head, _, _ = res.message.partition(said)
        head = head.removesuffix("; also: ")
        res.message = f"{line}; {head}" if head else line


def _diagnose(dr: DutResult, score, prep: Prepared) -> None:
    """Name what the results' order says (a wrong declared latency, lost, duplicated, reordered results)."""
    res = dr.result
    if score.window is None:
        if res.status == Status.ERROR and " 0 outputs delivered" in res.message:
            dr.diagnosis = "timeout"
            res.message = f"the design never answered: {res.message}"
        return
    got, expected, start = score.window
    declared = prep.desc.handshake.latency
    k = order.latency_shift(got, expected) if prep.desc.handshake.kind in NO_HANDSHAKE_OUT else None
    if k is not None:
        kind = order.Diagnosis.LATENCY
        line = (f"latency: the results come {abs(k)} cycle(s) {'earlier' if k > 0 else 'later'} than the declared "
                f"latency = {declared}: the design's latency is {declared - k} (most results are those of the vector "
                f"{abs(k)} place(s) {'later' if k > 0 else 'earlier'})")
    else:
        kind, line = order.diagnose(got, expected, start)
        if transfers.is_tile(prep.desc):
            line = line.replace("vector", "transaction")
    if kind in (order.Diagnosis.LATENCY, order.Diagnosis.LOST, order.Diagnosis.DUPLICATED, order.Diagnosis.REORDERED):
        dr.diagnosis = kind.value
        res.status = Status.ERROR if res.status == Status.OK else res.status
        res.message = f"{line}; {res.message}" if res.message else line
    elif kind is order.Diagnosis.WRONG:
        dr.diagnosis = kind.value


def _x_check(prep: Prepared, dr: DutResult, b: bld.Build, first: np.ndarray, cfg: Config) -> None:
    """Rerun the first vectors under another X seed; results that change come from uninitialised state."""
    ins, n, desc = dr.result.ins, len(first), prep.desc
    cap = transfers.capture(desc, ins, n)
    sched = _schedule(prep, ins, cfg)
    sched.update(n=n, budget_s=60.0, min_n=0)
    s = simulate(b, transfers.layout(desc, ins), transfers.stream(desc, ins, cfg.vectors, cfg.seed), cap,
                 plusargs=desc.plusargs + x_plusargs(cfg.seed + 2), **sched)
    if s.run_dir is not None and not s.error:
        import shutil
        shutil.rmtree(s.run_dir, ignore_errors=True)
    same = cap.d[:cap.filled] == first[:cap.filled]
    differ = np.nonzero(~same.reshape(len(same), -1).all(axis=1))[0]
    failed_alike = s.error and dr.result.status == Status.ERROR     # both runs failed: the order diagnosis speaks
    if differ.size or (s.error and not failed_alike):
        res = dr.result
        v = int(differ[0]) if differ.size else None
        what = "transaction" if transfers.is_tile(desc) else "vector"
        shown = "" if v is None else _x_values(first[v], cap.d[v])
        line = ("uninitialised state (X): " + (f"the result of {what} #{v} differs between X seeds {cfg.seed + 1} "
                f"and {cfg.seed + 2} ({shown})" if v is not None else
                f"the run under X seed {cfg.seed + 2} failed where seed {cfg.seed + 1} did not "
                f"({s.error.splitlines()[0]})")
                + "; a register without reset or an X reaching the outputs")
        dr.diagnosis = "x"
        res.status = Status.ERROR if res.status == Status.OK else res.status
        res.message = f"{line}; {res.message}" if res.message else line


def _x_values(one, other) -> str:
    one, other = np.atleast_1d(one), np.atleast_1d(other)
    e = int(np.nonzero(one != other)[0][0])
    where = f"element {e}: " if one.size > 1 else ""
    return f"{where}0x{int(one[e]):x} vs 0x{int(other[e]):x}"


def _report_failure(prep: Prepared, dr: DutResult, cfg: Config, out) -> None:
    res, ins = dr.result, dr.result.ins
    print(f"\n{prep.desc.name} as {dr.target.describe()}: {res.message}", file=out)
    if res.status != Status.MISMATCH:
        return
    transfers.print_first(prep.desc, ins, res.failing, out)
    res.failures_file = failures.write_failures(
        res, cfg.failures_dir or failures.FAILURES_DIR, seed=cfg.seed, lanes=1, vectors=cfg.vectors,
        dut=str(prep.desc.path), dut_sha256=prep.sha256, target=dataclasses.asdict(dr.target),
        build_key=res.build_key, stall=cfg.stall)
    what = "transactions" if transfers.is_tile(prep.desc) else "vectors"
    print(f"failing {what} ({len(res.failing['index'])} kept) saved: {res.failures_file}\n"
          f"  replay: python -m cosim.dut replay {res.failures_file}", file=out)
    if transfers.is_tile(prep.desc):
        report_structure(prep, dr, build(prep, dr.target, ins, root=cfg.build_root), cfg, out)
    if cfg.rerun_with_waves and not cfg.waves:
        tile = dict(layout=transfers.layout(prep.desc, ins),
                    stream=lambda ops: transfers.array_stream(prep.desc, ins, ops),
                    reference=_reference(prep, ins), score=transfers.score(prep.desc, ins, 0)) \
            if transfers.is_tile(prep.desc) else {}
        failures.rerun_with_waves(res, cfg, lambda: build(prep, dr.target, ins, waves=True, root=cfg.build_root),
                                  out, plusargs=prep.desc.plusargs + x_plusargs(cfg.seed + 1), **tile)
    if prep.desc.signals:
        report_divergence(prep, dr, cfg, out)


def _reference(prep: Prepared, ins):
    from .tile import reference
    return reference(ins, prep.desc.tile)


def replay(path, cfg: Config | None = None) -> DutResult:
    """Run the vectors of a DUT replay file again on the design it names (a note if the description changed)."""
    cfg = cfg or Config()
    out = cfg.out or sys.stdout
    meta, arr = failures.load_failures(path)
    if "dut" not in meta:
        command = "python -m campaign replay" if "campaign" in meta else "python -m cosim replay"
        saved = f"a campaign's file (device {meta.get('device')})" if "campaign" in meta else "not saved by a DUT run"
        raise DescriptionError(f"replay file {path}: {saved}; replay it with {command} {path}")
    prep = prepare(meta["dut"], meta["arch"], meta["instr"], cfg.build_root)
    if prep.sha256 != meta.get("dut_sha256"):
        print(f"note: {prep.desc.path} changed since the failure was saved", file=out)
    saved = meta.get("target") or {}
    same = [(t, i) for t, i in prep.pairs if (t.instr, t.params, t.pins) ==
            (saved.get("instr", t.instr), saved.get("params"), saved.get("pins", {}))]
    target, ins = (same or prep.pairs)[0]
    ops = tuple(arr[x] for x in failures.OPERANDS)
    b = build(prep, target, ins, waves=cfg.waves, root=cfg.build_root)
    desc = prep.desc
    score = transfers.score(desc, ins, 0)
    res = simulate_and_score(b, transfers.layout(desc, ins), transfers.array_stream(desc, ins, ops), golden.dot_add,
                             score=score, n=len(ops[2]), seed=cfg.seed, stall_in=0.0, stall_out=0.0,
                             keep_run_dir=cfg.waves, plusargs=desc.plusargs + x_plusargs(cfg.seed + 1))
    _report_timing(prep, res)
    if transfers.is_tile(desc):
        _tile_counts(prep, res, score)
    return DutResult(res, target)
