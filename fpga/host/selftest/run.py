"""The on-board self-test, host side: the board generates and checks, the host recomputes signatures.

:func:`run_selftest` asks the board (SELFTEST) for the signatures of blocks of vectors its own
generator makes and pushes through the unit at full rate, recomputes the same blocks with the
golden model (:mod:`fpga.board.selftest.model` makes the operands the board made, bit for bit) and
compares.  The host's recomputation (:class:`fpga.host.selftest.check.HostChecker`: compiled, every core
by default) runs on a thread ahead of the board, so it overlaps the link.  The first block whose
signature differs is rerun with its results captured (SELFTEST_CAPTURE, READ, window by window of
the output buffer): the first failing vector is
named (block, index in the block, lane, operands, got and golden's result) with golden's trace,
and the block's failing vectors are saved in cosim's replay format (``python -m fpga replay``,
``python -m cosim replay``).  Ctrl-C stops between requests and keeps what is done.  The checked
blocks' functional coverage (:mod:`golden.coverage`, a random sample of each block's dot-adds) is
measured beside the signatures and summarised with the verdict.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass, field

import numpy as np

import golden
from cosim.failures import print_first, write_failures
from cosim.scoring import Result, Status
from golden.cover.report import measured_line

from ...board.selftest.model import KINDS, SelfTestSpec, block_entries
from ..run import FAILURES_DIR, MAX_SAVED
from .check import HostChecker, cover_sample_of

__all__ = ["run_selftest", "SelfTestReport", "Failure", "first_difference", "DEFAULT_CHUNK"]

DEFAULT_CHUNK = 64          # blocks per SELFTEST request; the host recomputes them after it
HOLES_SHOWN = 12            # holes named in the summary


@dataclass
class Failure:
    """The first failing vector of a run."""

    block: int
    index: int               # entry within the block
    lane: int
    row: int                 # dot-add number in the run's stream: entry * lanes + lane
    got: int
    expected: int
    operands: tuple


@dataclass
class SelfTestReport:
    """What a self-test run found.  ``blocks`` maps each checked block to OK (True) or MISMATCH."""

    spec: SelfTestSpec
    first_block: int
    blocks: dict = field(default_factory=dict)
    failure: Failure | None = None
    failing_vectors: int = 0
    failures_file: object = None
    board_cycles: int = 0
    board_vectors: int = 0
    board_seconds: float = 0.0         # wall time of the SELFTEST requests (the link included)
    golden_seconds: float = 0.0        # the host checker's thread: operands, golden and signatures
    host_waited: float = 0.0           # time the link waited for the host checker (the host behind the board)
    host_warmup: float = 0.0           # the host checker loading (or compiling) its kernels, before the first block
    host_path: str = ""                # "fused", "numba" (compiled stages) or "numpy": check.host_path
    host_threads: int | None = None
    clock_hz: int = 0
    interrupted: bool = False
    problems: list = field(default_factory=list)
    coverage: object = None            # golden.coverage.Coverage of the checked blocks' sampled dot-adds
    cover_sample: int = 0              # dot-adds measured per block
    cover_error: str = ""              # why the coverage stopped (a cover point failed)
    cover_seconds: float = 0.0         # measuring it (golden's trace of the samples)

    @property
    def mismatched(self) -> list:
        return [b for b, ok in self.blocks.items() if not ok]

    @property
    def ok(self) -> bool:
        return not self.mismatched and not self.problems and bool(self.blocks)

    @property
    def vectors(self) -> int:
        return len(self.blocks) * self.spec.block_len * self.spec.lanes

    def summary(self) -> str:
        s = self.spec
        verdict = ("MISMATCH" if self.mismatched else "INTERRUPTED" if self.interrupted and not self.problems
                   else "OK" if self.ok else "FAILED")
        kept = (f" (Ctrl-C: the {len(self.blocks)} block(s) checked before it are kept"
                f"{', all OK' if self.blocks and not self.mismatched else ''})" if self.interrupted else "")
        lines = [f"self-test {s.ins.arch} {s.ins.name}: {verdict}: {len(self.blocks)} blocks of {s.block_len} "
                 f"entries x {s.lanes} lanes ({self.vectors:,} dot-adds), seed {s.seed}, kind {s.kind}{kept}"]
        if self.mismatched:
            shown = ", ".join(map(str, self.mismatched[:10])) + (" ..." if len(self.mismatched) > 10 else "")
            lines.append(f"  mismatching blocks: {len(self.mismatched)} ({shown})")
        if self.board_cycles:
            on_chip = self.board_vectors / (self.board_cycles / self.clock_hz)
            lines.append(f"  board: {self.board_vectors:,} dot-adds in {self.board_cycles:,} cycles "
                         f"({self.board_vectors / self.board_cycles:.2f} a cycle; {on_chip:,.0f} dot-adds/s at "
                         f"{self.clock_hz / 1e6:g} MHz); {self.vectors / max(self.board_seconds, 1e-9):,.0f} "
                         f"dot-adds/s through the link, wall time")
        if self.golden_seconds:
            threads = ("one core" if self.host_path == "numpy" else "every core" if self.host_threads is None
                       else f"{self.host_threads} thread(s)")
            lines.append(f"  golden: the same {self.vectors:,} dot-adds and signatures recomputed in "
                         f"{self.golden_seconds:.2f} s ({self.vectors / self.golden_seconds:,.0f} dot-adds/s; "
                         f"{self.host_path} path, {threads}, beside the link: it waited "
                         f"{self.host_waited:.2f} s for the host; loading its kernels took "
                         f"{self.host_warmup:.2f} s before the first block)")
        lines += self._coverage_lines()
        lines += [f"  error: {p}" for p in self.problems]
        return "\n".join(lines)

    def _coverage_lines(self) -> list[str]:
        """The coverage's summary line, what was measured, and its holes."""
        cov = self.coverage
        if cov is None:
            return []
        out = [f"  {cov.summary()}; {measured_line(cov)}, {self.cover_sample:,} a block, in "
               f"{self.cover_seconds:.2f} s"]
        holes = cov.missed()
        if holes:
            more = f" ... and {len(holes) - HOLES_SHOWN} more" if len(holes) > HOLES_SHOWN else ""
            out.append(f"  holes ({len(holes)}): {', '.join(holes[:HOLES_SHOWN])}{more}")
        if self.cover_error:
            out.append(f"  coverage stopped (a cover point failed; the verdict stands): {self.cover_error}")
        return out


def run_selftest(board, instr=None, seed: int = 1, kind: str = "normal", blocks: int = 16, block_len: int = 1024, *,
                 first_block: int = 0, chunk: int = DEFAULT_CHUNK, progress_every: int | None = None,
                 failures_dir=None, out=None, backend: str | None = None, threads: int | None = None,
                 cover_sample: int | None = None) -> SelfTestReport:
    """Blocks ``first_block .. first_block + blocks - 1`` of the self-test on ``board``, checked
    against golden.

    Parameters
    ----------
    board : fpga.BoardLink
        A dot-add unit's board.
    instr : optional
        The board's instruction (checked; default: the one it runs).
    seed, kind
        The generator's 64-bit seed and kind (``"bits"`` or ``"normal"``).
    blocks, block_len
        Blocks to check and entries per block (``block_len * lanes`` dot-adds a block).
    chunk : int
        Blocks per request.
    progress_every : int, optional
        A progress line every this many blocks (default: about ten lines a run).
    backend, threads
        The host's recomputation (:func:`fpga.host.selftest.check.expected_signatures`): its path
        (default ``$GOLDEN_BACKEND``, else compiled) and cores (default all).
    cover_sample : int, optional
        Dot-adds of each block measured for coverage (a random sample drawn from the seed and the
        block, :func:`fpga.host.selftest.check.cover_rows`; all where it is at least the block; 0: none;
        default 1 in 512 of the block's, at least one: :func:`fpga.host.selftest.check.cover_sample_of`).
    """
    out = out or sys.stdout
    cfg = board.config
    ins = cfg.instruction(instr if instr is not None else cfg.instructions[0])
    spec = SelfTestSpec(ins, cfg.lanes, seed, kind, block_len)
    block_entries(first_block, block_len, blocks)                  # the whole range fits the counter
    if not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk must be a positive number of blocks, not {chunk!r}")
    if cover_sample is not None and (not isinstance(cover_sample, int) or cover_sample < 0):
        raise ValueError(f"cover_sample must be a whole number of dot-adds a block >= 0, not {cover_sample!r}")
    report = SelfTestReport(spec, first_block, clock_hz=cfg.clock_hz, host_threads=threads,
                            cover_sample=cover_sample_of(spec, cover_sample))
    every = progress_every or max(chunk, blocks // 10)
    shown = 0
    requests = [(lo, min(chunk, first_block + blocks - lo)) for lo in range(first_block, first_block + blocks, chunk)]
    with HostChecker(spec, backend=backend, threads=threads, cover_sample=cover_sample) as host:
        report.host_path = host.path
        try:
            queued = 0
            for lo, n in requests:
                while queued < len(requests) and not host.full:     # the host starts before the board
                    host.submit(*requests[queued])
                    queued += 1
                _check_chunk(board, spec, lo, n, report, host)
                if len(report.blocks) - shown >= every and len(report.blocks) < blocks:
                    shown = len(report.blocks)
                    print(f"  {shown}/{blocks} blocks, {len(report.mismatched)} mismatching", file=out, flush=True)
        except KeyboardInterrupt:
            report.interrupted = True
        report.golden_seconds, report.host_waited, report.host_warmup = host.seconds, host.waited, host.warmup
        _coverage(host, report)
    if report.mismatched and not report.interrupted:
        try:
            _rerun(board, spec, report.mismatched[0], report, failures_dir, out)
        except KeyboardInterrupt:
            report.interrupted = True
    return report


def _coverage(host: HostChecker, report: SelfTestReport) -> None:
    """The checked blocks' coverage into ``report`` (its last samples measured now; a Ctrl-C here
    keeps what was measured)."""
    try:
        host.measure_coverage()
    except KeyboardInterrupt:
        report.interrupted = True
    report.coverage, report.cover_error, report.cover_seconds = host.coverage, host.cover_error, host.cover_seconds


def _check_chunk(board, spec: SelfTestSpec, lo: int, n: int, report: SelfTestReport, host: HostChecker) -> None:
    first, _ = block_entries(lo, spec.block_len, n)
    t0 = time.perf_counter()
    sigs, cycles, vectors = board.selftest(spec.seed, KINDS[spec.kind], first, n, spec.block_len)
    report.board_seconds += time.perf_counter() - t0
    expected = host.result(lo)
    report.board_cycles += cycles
    report.board_vectors += vectors
    if vectors != n * spec.block_len * spec.lanes:
        report.problems.append(f"blocks {lo}..{lo + n - 1}: the board counted {vectors} dot-adds, "
                               f"expected {n * spec.block_len * spec.lanes}")
    for b in range(n):
        report.blocks[lo + b] = [int(x) for x in expected[b]] == list(sigs[b])


def _rerun(board, spec: SelfTestSpec, block: int, report: SelfTestReport, failures_dir, out) -> None:
    """The block again with its results read back, window by window: its failing vectors."""
    ins, lanes = spec.ins, spec.lanes
    first, entries = block_entries(block, spec.block_len)
    ops = spec.operands(block)
    expected = golden.dot_add(ins, *ops)
    window = board.config.depth
    got = np.concatenate([board.selftest_capture(spec.seed, KINDS[spec.kind], first + lo, min(window, entries - lo))
                          for lo in range(0, entries, window)])
    bad = golden.mismatching(ins, got, expected)
    if not len(bad):
        report.problems.append(f"block {block}: its signature differs from golden's but every result of its rerun "
                               f"matches: the board is not deterministic, or its signature path is broken")
        return
    row = int(bad[0])
    report.failure = Failure(block, row // lanes, row % lanes, first * lanes + row, int(got[row]), int(expected[row]),
                             tuple(None if x is None else x[row] for x in ops))
    report.failing_vectors = len(bad)
    keep = bad[:MAX_SAVED]
    res = Result(ins, lanes=lanes, latency=board.config.latency, initiation_interval=1, status=Status.MISMATCH,
                 vectors=entries * lanes, mismatches=len(bad),
                 message=f"{len(bad)} of the {entries * lanes} dot-adds of self-test block {block} differ from golden")
    res.failing = {"index": keep + first * lanes, "expected": expected[keep], "got": got[keep],
                   **{k: (None if x is None else x[keep]) for k, x in zip(("a", "b", "c", "scale_a", "scale_b"), ops)}}
    report.failures_file = write_failures(res, failures_dir or FAILURES_DIR, seed=spec.seed, lanes=lanes,
                                          vectors=f"selftest:{spec.kind}", unit=None, stall=0,
                                          board=getattr(board, "url", None), block=block, block_len=spec.block_len,
                                          config_hash=f"{board.config.config_hash:08x}")
    f = report.failure
    print(f"\n{ins.arch} {ins.name}: self-test block {block} differs: {res.message}\n"
          f"first failing vector: block {f.block}, entry {f.index} of {spec.block_len}, lane {f.lane} "
          f"(dot-add #{f.row} of the stream)", file=out)
    print_first(ins, res.failing, golden.dot_add, out)
    print(f"failing vectors of the block ({len(keep)} of {len(bad)}) saved: {report.failures_file}\n"
          f"  on the board again: python -m fpga replay {report.failures_file} --port URL\n"
          f"  in co-simulation:   python -m cosim replay {report.failures_file}", file=out)


def first_difference(ins, params, lanes: int, seed: int, kind: str, block_len: int, blocks: int):
    """``(block, entry, lane)`` of the first dot-add of the self-test stream whose result under
    algorithm ``params`` differs from the catalog's (golden both times), or None: where a unit
    built with ``params`` must be caught."""
    spec = SelfTestSpec(ins, lanes, seed, kind, block_len)
    ops = spec.operands(0, blocks)
    planted = golden.dot_add(dataclasses.replace(ins, params=params), *ops)
    bad = golden.mismatching(ins, planted, golden.dot_add(ins, *ops))
    if not len(bad):
        return None
    row = int(bad[0])
    entry = row // lanes
    return entry // block_len, entry % block_len, row % lanes

