"""Dot-adds through a board, real or simulated, scored bit for bit against golden.

:func:`run_board` streams vectors (golden's reproducible :class:`golden.streams.VectorStream`:
uniform random bits, normal values and the structured edge cases) through
:meth:`fpga.BoardLink.dot_add` for each instruction the board runs, compares every result with
:func:`golden.dot_add` under the instruction's NaN rule (:func:`golden.mismatching`), and returns
:class:`cosim.Result` rows, so the table is the one ``make cosim`` prints.  Failing vectors are
saved as an ``.npz`` that ``python -m fpga replay`` (on a board) and ``python -m cosim replay``
(in co-simulation) both read.

:func:`check_recovery` plants the link faults a cable can cause (a corrupted frame, a truncated
one) and checks that the board reports each and stays usable.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

import golden
from cosim.failures import load_failures, print_first, write_failures
from cosim.scoring import Result, Status
from cosim.table import progress
from golden.paths import build_dir
from golden.streams import ArrayStream, VectorStream

from ..board import protocol

FAILURES_DIR = build_dir("fpga", "failures")
MAX_SAVED = 1000                       # failing vectors kept per instruction
DEFAULT_VECTORS = "all"                # a third each: random bits, normal values, structured edge cases


def run_board(board, instructions=None, *, n: int = 10_000, seed: int = 1, vectors=DEFAULT_VECTORS,
              batch: int | None = None, failures_dir=None, out=None) -> list[Result]:
    """Score ``n`` dot-adds of each instruction (default: all the board runs) against golden.

    On a tensor core running several of them the instructions go through mixed, entry by entry
    (:meth:`fpga.BoardLink.dot_add_mixed`), as a GPU issues them.

    Parameters
    ----------
    board : fpga.BoardLink
        A connected board (``fpga.BoardLink(url)``), or anything with its ``dot_add`` and ``config``.
    instructions : list of golden.Instruction, optional
        A subset of the board's instructions.
    n, seed, vectors
        Vectors per instruction, the stream's seed and generator (``golden.streams.resolve``).
    batch : int, optional
        Dot-adds per call to the board (default: one full input buffer).
    """
    out = out or sys.stdout
    pool = list(instructions) if instructions is not None else list(board.config.instruction_objects)
    batch = batch or board.config.depth * board.config.lanes
    streams = [VectorStream(ins, vectors, seed) for ins in pool]
    if board.config.core and len(pool) > 1:
        scores = score_mixed(board, streams, n, max(1, batch // len(pool)))
    else:
        scores = [score_stream(board, s, n, batch) for s in streams]
    results = [sc.result() for sc in scores]
    for res in results:
        if res.mismatches:
            res.failures_file = save_failures(res, board, seed, vectors, failures_dir)
            report_first(res, out)
    return results


class Score:
    """One instruction's tally: results compared with golden, the first failing vectors kept."""

    def __init__(self, board, ins):
        self.ins = ins
        self.res = Result(ins, lanes=board.config.lanes, latency=board.config.latency, initiation_interval=1)
        self.kept = {k: [] for k in ("index", "a", "b", "c", "scale_a", "scale_b", "expected", "got")}
        self.started = time.perf_counter()

    def add(self, ops, got) -> None:
        a, b, c, sa, sb = ops
        expected = golden.dot_add(self.ins, a, b, c, sa, sb)
        bad = golden.mismatching(self.ins, got, expected)
        res = self.res
        room = MAX_SAVED - sum(len(x) for x in self.kept["index"])
        if len(bad) and room > 0:
            keep = bad[:room]
            for key, arr in (("a", a), ("b", b), ("c", c), ("scale_a", sa), ("scale_b", sb),
                             ("expected", expected), ("got", got)):
                if arr is not None:
                    self.kept[key].append(np.asarray(arr)[keep])
            self.kept["index"].append(keep + res.vectors)
        res.mismatches += len(bad)
        res.vectors += len(c)
        res.seconds = time.perf_counter() - self.started
        progress(f"{self.ins.arch} {self.ins.name}: {res.vectors} dot-adds, {res.mismatches} mismatches, "
                 f"{res.rate:.0f}/s")

    def result(self) -> Result:
        progress(None)
        res = self.res
        if res.mismatches:
            res.status = Status.MISMATCH
            res.message = f"{res.mismatches} of {res.vectors} results differ from golden"
            res.failing = {k: (np.concatenate(v) if v else None) for k, v in self.kept.items()}
        return res


def score_stream(board, stream, n: int, batch: int) -> Score:
    """One instruction: ``n`` vectors of ``stream`` through ``board`` in batches, compared with golden."""
    score = Score(board, stream.ins)
    while score.res.vectors < n:
        ops = stream.take(min(batch, n - score.res.vectors))
        score.add(ops, board.dot_add(stream.ins, *ops))
    return score


def score_mixed(board, streams, n: int, batch: int) -> list[Score]:
    """Several instructions of a tensor core at once: each batch interleaves all of them."""
    scores = [Score(board, s.ins) for s in streams]
    started = time.perf_counter()
    while scores[0].res.vectors < n:
        ops = [s.take(min(batch, n - scores[0].res.vectors)) for s in streams]
        got = board.dot_add_mixed([(s.ins, *o) for s, o in zip(streams, ops)])
        for sc, o, d in zip(scores, ops, got):
            sc.add(o, d)
    for sc in scores:                          # one run for all: each instruction's share of the time
        sc.res.seconds = (time.perf_counter() - started)
    return scores


def save_failures(res: Result, board, seed: int, vectors, failures_dir=None) -> Path:
    """The failing vectors in cosim's replay format (``python -m cosim replay`` reads it too)."""
    return write_failures(res, failures_dir or FAILURES_DIR, seed=seed, lanes=board.config.lanes, vectors=vectors,
                          unit=None, stall=0, board=getattr(board, "url", None),
                          config_hash=f"{board.config.config_hash:08x}")


def report_first(res: Result, out) -> None:
    """The first failing vector with golden's trace, and where the rest were saved."""
    print(f"\n{res.ins.arch} {res.ins.name}: {res.message}", file=out)
    print_first(res.ins, res.failing, golden.dot_add, out)
    print(f"failing vectors ({len(res.failing['index'])} of {res.mismatches}) saved: {res.failures_file}\n"
          f"  on the board again: python -m fpga replay {res.failures_file} --port URL\n"
          f"  in co-simulation:   python -m cosim replay {res.failures_file}", file=out)


def replay(board, path) -> Result:
    """Run a saved failure file's vectors through ``board`` again and score them."""
    meta, arrays = load_failures(path)
    ins = golden.lookup(meta["arch"], meta["instr"])
    cfg = board.config
    if ins.arch != cfg.arch or ins.name not in cfg.instructions:
        raise ValueError(f"{path} holds vectors of {ins.arch} {ins.name}; the board at {board.url} runs "
                         f"{cfg.arch} {', '.join(cfg.instructions)}: replay it on a board built for {ins.name} "
                         f"(make fpga-program ARCH={ins.arch} INSTR={ins.name})")
    stream = ArrayStream(ins, arrays["a"], arrays["b"], arrays["c"], arrays["scale_a"], arrays["scale_b"])
    return score_stream(board, stream, stream.n, board.config.depth * board.config.lanes).result()


# ---- the link under planted faults ------------------------------------------------------------------

def check_recovery(board, out=None) -> list[str]:
    """Plant a corrupted frame and a truncated one; each must be answered with its error status,
    counted, and leave the board answering IDENTIFY.  Returns the problems found (empty: all good)."""
    out = out or sys.stdout
    problems = []
    before = board.counters()
    good = protocol.encode_request(protocol.Command.IDENTIFY)
    corrupted = bytearray(good)
    corrupted[-1] ^= 0x5A                                   # the CRC's last byte
    for name, frame, status, counter in (
            ("corrupted frame (bad CRC)", bytes(corrupted), protocol.Status.BAD_CRC, "crc_errors"),
            ("truncated frame", good[:3], protocol.Status.TIMEOUT, "timeouts")):
        got = board.raw_exchange(frame)
        ok = got == status
        after = board.counters()
        counted = after[counter] == before[counter] + 1
        board.identify()
        print(f"  planted {name}: board answered {_status_name(got)}"
              f"{'' if counted else f', but {counter} did not count it'}; IDENTIFY afterwards ok", file=out)
        if not ok:
            problems.append(f"{name}: expected status {status.name}, got {_status_name(got)}")
        if not counted:
            problems.append(f"{name}: counter {counter} went {before[counter]} -> {after[counter]}")
        before = board.counters()
    return problems


def _status_name(status: int) -> str:
    try:
        return protocol.Status(status).name
    except ValueError:
        return f"status 0x{status:02x}"
