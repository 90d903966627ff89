"""Functional coverage of a co-simulation: measured on every vector the run checked, reported per run.

:class:`Measuring` wraps a session's scoring hook (:class:`cosim.session.Score` or a DUT's): each
batch whose outputs were checked is also measured against the instruction's cover points
(:func:`golden.coverage.measure`; a tile device's transactions as the chained dot-adds they are), into
a :class:`golden.cover.model.Coverage` that the run's :class:`cosim.scoring.Result` carries.

:func:`report_run` prints each instruction's summary line (and its holes), writes the run's HTML page
and JSON (:mod:`golden.cover.report`) into a folder under ``build/coverage/`` unless told where, and
says where.  :func:`closure_size` is ``-n closure``: the rows of the solved closure
(:func:`golden.cover.directed.solve`) that the ``cover`` vectors start with.
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import numpy as np

from golden import coverage as gcov
from golden.cover import report as creport
from golden.paths import build_dir

__all__ = ["Measuring", "measuring", "tile_dot_adds", "closure_size", "parse_count", "report_run", "report_folder",
           "default_folder", "holes_line", "run_meta", "require_closed", "take", "add_options", "check_options",
           "CLOSURE"]

CLOSURE = "closure"            # -n closure / N=closure: the solved closure's size (--vectors cover)


class Measuring:
    """A session hook that scores with ``score`` and measures the coverage of what was scored.

    Every attribute of ``score`` (``count``, ``failing``, a DUT score's ``first`` and ``window``...) reads
    through, so the wrapper goes wherever the score went.

    Parameters
    ----------
    score : cosim.session.Hook
        The scoring hook.
    ins : golden.Instruction
    tile : cosim.dut.description.Tile, optional
        A tile device's tile: its transactions are measured as their chained dot-adds.
    into : golden.cover.model.Coverage, optional
        Add to this measurement (a second session of the same target), else a new one.
    sample : int, optional
        Measure only the first ``sample`` dot-adds checked (the rest are counted as offered, not measured).
    """

    def __init__(self, score, ins, tile=None, into=None, sample: int | None = None):
        self.score, self.ins, self.tile, self.sample = score, ins, tile, sample
        self.coverage = into if into is not None else gcov.empty(ins)
        self.error = None              # why the measurement stopped (a cover point's failure), if it did

    def __getattr__(self, name):
        return getattr(self.score, name)

    @property
    def failed(self) -> bool:
        return self.score.failed

    def produced(self, batch) -> None:
        self.score.produced(batch)

    def finished(self, batch, got) -> None:
        self.score.finished(batch, got)
        if self.coverage is None:
            return
        try:
            self._measure(batch)
        except Exception as e:         # a cover point's bug must not stop a co-simulation: said, not raised
            self.coverage, self.error = None, f"{type(e).__name__}: {e}"

    def _measure(self, batch) -> None:
        ops = batch.used_ops()
        if self.tile is not None:
            ops = tile_dot_adds(self.ins, *ops)
        rows = len(ops[2])
        room = rows if self.sample is None else max(0, self.sample - self.coverage.dot_adds)
        if room < rows:
            ops = tuple(None if x is None else x[:room] for x in ops)
            self.coverage.offered += rows - room
        if room:
            gcov.measure(self.ins, *ops, into=self.coverage)

    def progress_note(self) -> str:
        return self.score.progress_note()


def measuring(score, ins, cfg, tile=None, into=None):
    """``score`` wrapped in :class:`Measuring` when ``cfg.coverage`` (a :class:`cosim.scoring.Config`), else
    ``score`` itself."""
    return Measuring(score, ins, tile, into, cfg.coverage_sample) if cfg.coverage else score


def tile_dot_adds(ins, A, B, C, scale_A=None, scale_B=None) -> tuple:
    """The dot-adds of ``t`` tile transactions (``A [t, M, k]``, ``B [t, k, N]``, ``C [t, M, N]``) as rows
    ``(a [R, K], b [R, K], c [R], scale_a, scale_b)``: each element's k-slices, k-slice ``s`` from the
    accumulator k-slice ``s - 1`` left (golden.tile.tile_partials), ``R = t * M * N * slices``."""
    from golden.tile import slices, tile_partials
    A, B, C = (np.asarray(x, np.uint64) for x in (A, B, C))
    t, M, k = A.shape
    N, K = B.shape[2], ins.k
    accumulators = [C] + tile_partials(ins, A, B, C, scale_A, scale_B)[:-1]
    parts = []
    for s in range(slices(ins, k)):
        a = np.broadcast_to(A[:, :, None, s * K:(s + 1) * K], (t, M, N, K)).reshape(-1, K)
        b = np.broadcast_to(np.swapaxes(B[:, s * K:(s + 1) * K, :], 1, 2)[:, None], (t, M, N, K)).reshape(-1, K)
        c = np.asarray(accumulators[s], np.uint64).reshape(-1)
        sa = sb = None
        if ins.scale_format:
            nb = K // ins.block_size
            sa = np.broadcast_to(np.asarray(scale_A)[:, :, None, s * nb:(s + 1) * nb], (t, M, N, nb)).reshape(-1, nb)
            sb = np.broadcast_to(np.swapaxes(np.asarray(scale_B)[:, s * nb:(s + 1) * nb, :], 1, 2)[:, None],
                                 (t, M, N, nb)).reshape(-1, nb)
        parts.append((a, b, c, sa, sb))
    return tuple(None if parts[0][i] is None else np.concatenate([p[i] for p in parts]) for i in range(5))


# ---- -n closure ---------------------------------------------------------------------------------------

def parse_count(text: str):
    """``-n``: a whole number of at least 1, or ``closure`` (the solved closure's size)."""
    import argparse
    if str(text).strip().lower() == CLOSURE:
        return CLOSURE
    closure = f"or {CLOSURE}: with --vectors cover, the fewest vectors that hit every reachable bin"
    try:
        value = int(str(text).replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number ({closure}), got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value} ({closure})")
    return value


def closure_size(ins, vectors, seed: int) -> int:
    """The rows of the solved closure that the ``cover`` stream of ``seed`` starts with: its first block's
    solution (the same generator state as :class:`golden.streams.VectorStream`'s block 0)."""
    if vectors != "cover":
        raise ValueError(f"-n {CLOSURE} (N={CLOSURE}) sizes the run to the solved closure of VECTORS=cover; "
                         f"got --vectors {vectors}: give a number of vectors, or --vectors cover")
    from golden.cover.directed import solve
    return max(1, solve(ins, np.random.default_rng([int(seed), 0])).rows)


# ---- the run's report ---------------------------------------------------------------------------------

def default_folder(what: str) -> Path:
    """``build/coverage/<what>-<UTC time>``: a folder per run (``MMA_BUILD_DIR`` moves ``build/``)."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in what)[:80]
    return build_dir("coverage", f"{safe}-{stamp}")


def holes_line(cov) -> str:
    missed = cov.missed()
    shown = ", ".join(missed[:12]) + (f" and {len(missed) - 12} more" if len(missed) > 12 else "")
    return f"  holes: {shown}" if missed else ""


def report_run(results, *, title: str, meta: dict, folder, table: bool = False, out=None):
    """Print each measured instruction's summary line (and holes; ``table``: its bins too), write the
    run's HTML and JSON into ``folder`` (:func:`report_folder`) and print where.

    Returns
    -------
    list of golden.cover.model.Coverage
        The instructions' coverage, in the results' order (those that were measured).
    """
    out = out or sys.stdout
    coverages = [r.coverage for r in results if getattr(r, "coverage", None) is not None]
    if not coverages:
        return []
    for cov in coverages:
        if table:
            print(creport.text_table(cov), file=out)
        else:
            print(f"{cov.instruction}: {cov.summary()}", file=out)
            if cov.offered > cov.dot_adds:
                print(f"  {creport.measured_line(cov)}", file=out)
        if cov.missed():
            print(holes_line(cov), file=out)
    page, doc = creport.write_reports(coverages, folder, title, meta)
    print(f"coverage report: {_shown(page)} (JSON: {doc.name} beside it)", file=out, flush=True)
    return coverages


def run_meta(**facts) -> dict:
    """The facts a report's page shows: those given (None left out), then the date."""
    meta = {k.replace("_", " "): v for k, v in facts.items() if v is not None}
    meta["date (UTC)"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")
    return meta


def require_closed(results, out=None) -> int:
    """``--require-closed``: 0 when every reachable bin of every instruction that ran was hit, else 1 with
    a line per instruction that is open or was not measured."""
    out = out or sys.stdout
    status = 0
    for r in results:
        c = getattr(r, "coverage", None)
        if c is None and r.ok:
            print(f"coverage not closed: {r.ins.arch} {r.ins.name}: not measured", file=out)
            status = 1
        elif c is not None and not c.closed():
            print(f"coverage not closed: {c.instruction}: {len(c.missed())} hole(s)", file=out)
            status = 1
    return status


def take(res, score, out=None) -> None:
    """Put a session's measured coverage on its Result (``res.coverage``); a measurement that failed is
    said in a note (the run's verdict is the simulation's)."""
    res.coverage = getattr(score, "coverage", None)
    error = getattr(score, "error", None) if isinstance(score, Measuring) else None
    if error:
        print(f"note: the coverage of {res.ins.arch} {res.ins.name} was not measured: {error}",
              file=out or sys.stdout)


# ---- the command lines' options -------------------------------------------------------------------------

def add_options(parser, report: bool = True) -> None:
    """The coverage options of ``python -m cosim run`` and ``python -m cosim.dut run`` (``report``: and
    ``--report FILE``, JUnit XML)."""
    from golden.options import whole_number, yes_no_option
    parser.add_argument("--no-coverage", dest="coverage", action="store_false",
                        help="do not measure coverage (default: the cover points, on every vector checked)")
    parser.add_argument("--coverage-dir", default=None, metavar="DIR",
                        help=f"write the coverage report ({creport.HTML_NAME}, {creport.JSON_NAME}) into DIR "
                             "(default: a folder per run under build/coverage/)")
    parser.add_argument("--coverage-sample", type=whole_number(1), default=None, metavar="N",
                        help="measure only the first N dot-adds checked of each instruction (default: every one; "
                             "measuring costs about as much golden time again as checking)")
    parser.add_argument("--coverage-table", action="store_true",
                        help="print every bin's hits after the table, not only each instruction's summary line")
    parser.add_argument("--require-closed", nargs="?", const=True, default=False, type=yes_no_option("CLOSED"),
                        metavar="YES|NO", help="exit 1 when a reachable bin was not hit (make's CLOSED=yes); "
                                               "holes are otherwise reported, not an error")
    if report:
        parser.add_argument("--report", default=None, metavar="FILE",
                            help="write JUnit XML here, coverage in its properties (checked before the run)")


def report_folder(args, name: str) -> Path:
    """Where the run's report goes (``--coverage-dir``, else :func:`default_folder` of ``name``), checked
    writable before the run (an OutputError, one line)."""
    from golden.console import check_output
    folder = Path(args.coverage_dir) if args.coverage_dir is not None else default_folder(name)
    check_output(folder / creport.HTML_NAME, "--coverage-dir" if args.coverage_dir is not None else "the report")
    return folder


def check_options(args) -> None:
    """The coverage options and ``--report``, checked before anything is built (ValueError, one line);
    ``args.report`` becomes a Path."""
    from golden.console import check_output
    if args.coverage_sample is not None and not args.coverage:
        raise ValueError("--coverage-sample needs coverage measured; leave out --no-coverage")
    if args.require_closed and not args.coverage:
        raise ValueError("--require-closed (CLOSED=yes) needs coverage measured; leave out --no-coverage")
    if args.coverage_dir is not None:
        folder = Path(args.coverage_dir)
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"--coverage-dir {folder}: is a file; give the folder to write the coverage report into")
    if getattr(args, "report", None) is not None:
        args.report = check_output(args.report, "--report")


def _shown(path: Path) -> str:
    """``path`` relative to the working directory where it lies below it (what a user can paste), else whole."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
