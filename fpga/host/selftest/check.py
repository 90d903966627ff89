"""The self-test's host side at the board's rate: expected signatures, recomputed beside the link.

What the host recomputes for a block of the self-test is everything the board did, from
``(seed, kind, block)`` alone: the on-chip generator's operands, golden's results and the
signatures.  :func:`expected_signatures` does it on the compiled path (:mod:`fpga.host.selftest.fast`
and golden's kernels, every core by default) or on the numpy path (:mod:`fpga.board.selftest.model` and
golden's numpy path: the reference, and the path without numba), a bounded number of rows at a
time (:data:`STEP_ROWS`) whatever the request.

:class:`HostChecker` runs it on a thread ahead of the board: the expected signatures of a
request are started before the board is asked for it and the next request's while the board
works, so the host's work hides behind the link's (the kernels release the GIL; the main thread
waits on the link).  It also measures the functional coverage (:mod:`golden.coverage`) of a random
sample of each block's dot-adds (:func:`cover_rows`), on golden's numpy path beside the signatures;
a request's coverage counts once its block signatures are taken (checked).
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import golden
from golden import coverage as golden_coverage
from golden.api import resolve_backend

from ...board.selftest.model import SelfTestSpec, block_entries
from . import fast as selftest_fast

__all__ = ["AHEAD", "COVER_SAMPLE", "STAGES", "STEP_ROWS", "HostChecker", "cover_rows", "expected_signatures",
           "host_path"]

STEP_ROWS = 1 << 16          # dot-adds recomputed at once (whole blocks): operands and results stay a few MB
AHEAD = 2                    # requests whose signatures may be computed or held at once
WARM_ROWS = 4096             # the warm-up's rows: enough for golden's parallel launch (kernels.PARALLEL_MIN_ROWS)
# dot-adds of each block measured for coverage: golden's numpy path traces them at about a microsecond
# each, so a sample keeps the host at the board's rate (1,024 a step of 16 blocks of 4,096)
COVER_SAMPLE = 64


def host_path(backend: str | None = None) -> str:
    """``"numba"`` (compiled generator, golden kernels, compiled signatures) or ``"numpy"``: golden's
    backend as ``backend`` or ``$GOLDEN_BACKEND`` resolve it, numpy where numba does not import."""
    name = resolve_backend(backend)
    return "numba" if name == "numba" and selftest_fast.available() else "numpy"


STAGES = ("operands", "golden", "signatures")


class _Stages:
    """Seconds per stage, added to ``into`` (a dict) when given: this thread's CPU time on one
    thread (the stages then run on it alone), wall time on several."""

    def __init__(self, into: dict | None, threads):
        self.into = into
        self.clock = time.thread_time if threads == 1 else time.perf_counter
        self.t = self.clock() if into is not None else 0.0

    def done(self, stage: str) -> None:
        if self.into is not None:
            now = self.clock()
            self.into[stage] = self.into.get(stage, 0.0) + now - self.t
            self.t = now


def cover_rows(spec: SelfTestSpec, lo: int, n: int, sample: int) -> np.ndarray:
    """The rows (of blocks ``lo .. lo + n - 1``' operands, the board's order) measured for coverage:
    ``sample`` of each block's ``block_len * lanes`` dot-adds (all where that is fewer), drawn without
    replacement by ``numpy.random.default_rng([seed, block])``, so a block's sample is the same
    whatever request holds it."""
    per = spec.block_len * spec.lanes
    if sample >= per:
        return np.arange(n * per)
    return np.concatenate([(b - lo) * per + np.sort(np.random.default_rng([spec.seed, b]).choice(per, sample,
                                                                                                replace=False))
                           for b in range(lo, lo + n)])


def _measure(spec: SelfTestSpec, lo: int, n: int, ops, coverage, sample: int) -> None:
    """Add the coverage of blocks ``lo .. lo + n - 1``' sampled rows into ``coverage``."""
    rows = cover_rows(spec, lo, n, sample)
    picked = [None if x is None else np.asarray(x)[rows] for x in ops]
    golden_coverage.measure(spec.ins, *picked, into=coverage)
    coverage.offered += n * spec.block_len * spec.lanes - len(rows)


def _step(spec: SelfTestSpec, lo: int, n: int, path: str, threads, stages: dict | None = None, coverage=None,
          sample: int = COVER_SAMPLE) -> np.ndarray:
    """Signatures ``[n, lanes]`` of blocks ``lo .. lo + n - 1`` (and their coverage added into
    ``coverage``, when given)."""
    timer = _Stages(stages, threads)
    if path == "numpy":
        ops = spec.operands(lo, n)
        timer.done("operands")
        d = golden.dot_add(spec.ins, *ops, backend="numpy")
        timer.done("golden")
        sigs = spec.signatures(d)
    else:
        first, entries = block_entries(lo, spec.block_len, n)
        ops = selftest_fast.operands(spec.ins, spec.lanes, spec.seed, spec.kind, first, entries, threads)
        timer.done("operands")
        d = golden.dot_add(spec.ins, *ops, backend="numba", threads=threads)
        timer.done("golden")
        sigs = selftest_fast.signatures(spec.ins, spec.lanes, d, spec.block_len, threads)
    timer.done("signatures")
    if coverage is not None and sample:
        _measure(spec, lo, n, ops, coverage, sample)
        timer.done("coverage")
    return sigs


def expected_signatures(spec: SelfTestSpec, first_block: int, blocks: int = 1, *, backend: str | None = None,
                        threads: int | None = None, stages: dict | None = None, coverage=None,
                        cover_sample: int = COVER_SAMPLE) -> np.ndarray:
    """What the board must answer for blocks ``first_block .. first_block + blocks - 1``: uint64
    ``[blocks, lanes]``.

    Parameters
    ----------
    backend : {"numpy", "numba"}, optional
        The host path (:func:`host_path`; default ``$GOLDEN_BACKEND``, else compiled).
    threads : int, optional
        Cores the compiled path splits each step across (default: every core this process may use).
    stages : dict, optional
        Seconds spent per stage (:data:`STAGES`, and ``coverage``) are added here (the benchmark's breakdown).
    coverage : golden.coverage.Coverage, optional
        The blocks' coverage is added here: ``cover_sample`` dot-adds of each block (:func:`cover_rows`).
    """
    block_entries(first_block, spec.block_len, blocks)
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive integer, not {threads!r}")
    path = host_path(backend)
    step = max(1, STEP_ROWS // (spec.block_len * spec.lanes))
    out = np.empty((blocks, spec.lanes), np.uint64)
    for lo in range(first_block, first_block + blocks, step):
        n = min(step, first_block + blocks - lo)
        out[lo - first_block:lo - first_block + n] = _step(spec, lo, n, path, threads, stages, coverage,
                                                           cover_sample)
    return out


class HostChecker:
    """Expected signatures of self-test requests on a thread ahead of the board.

    ``submit(lo, n)`` starts a request's signatures (in order; at most :data:`AHEAD` outstanding);
    ``result(lo)`` waits for them.  ``seconds``: the thread's time recomputing; ``waited``: the time
    the caller waited for it (the host behind the board).  ``coverage``: the coverage of the requests
    taken so far (``cover_sample`` dot-adds a block; None where 0), ``cover_error`` why it stopped
    where a cover point failed.  Use as a context manager: leaving it (Ctrl-C included) drops what is
    queued.
    """

    def __init__(self, spec: SelfTestSpec, *, backend: str | None = None, threads: int | None = None,
                 cover_sample: int = COVER_SAMPLE):
        self.spec, self.threads, self.cover_sample = spec, threads, cover_sample
        self.path = host_path(backend)
        self.coverage = golden_coverage.empty(spec.ins) if cover_sample else None
        self.cover_error = ""
        self._no_cover = False
        self.seconds = self.waited = 0.0
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="selftest-host")
        self._pending: deque = deque()
        self.warmup = 0.0
        self._pool.submit(self._warm)              # first, on the thread: loading the kernels is not checking

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._pool.shutdown(wait=False, cancel_futures=True)

    @property
    def full(self) -> bool:
        return len(self._pending) >= AHEAD

    def submit(self, lo: int, n: int) -> None:
        if self.full:
            raise RuntimeError(f"{AHEAD} requests are outstanding: take a result first")
        self._pending.append((lo, self._pool.submit(self._timed, lo, n)))

    def _warm(self) -> None:
        """One block of :data:`WARM_ROWS` rows: the compiled path's kernels loaded (or compiled)
        and its parallel launch started, timed apart as ``warmup``."""
        t0 = time.perf_counter()
        spec = dataclasses.replace(self.spec, block_len=max(1, WARM_ROWS // self.spec.lanes))
        expected_signatures(spec, 0, 1, backend=self.path, threads=self.threads)
        self.warmup = time.perf_counter() - t0

    def _timed(self, lo: int, n: int) -> tuple:
        """The request's signatures and its coverage (None where not measured), or the error that
        stopped the coverage (the signatures are then computed without it)."""
        t0 = time.perf_counter()
        try:
            cov = golden_coverage.empty(self.spec.ins) if self.coverage is not None and not self._no_cover else None
            try:
                sigs = expected_signatures(self.spec, lo, n, backend=self.path, threads=self.threads, coverage=cov,
                                           cover_sample=self.cover_sample)
            except Exception as e:
                if cov is None:
                    raise
                self._no_cover = True             # a failing cover point: the later requests go without
                return expected_signatures(self.spec, lo, n, backend=self.path, threads=self.threads,
                                           coverage=None), f"{type(e).__name__}: {e}"
            return sigs, cov
        finally:
            self.seconds += time.perf_counter() - t0

    def result(self, lo: int) -> np.ndarray:
        """The signatures of the oldest outstanding request, which must start at block ``lo``."""
        first, future = self._pending.popleft()
        if first != lo:
            raise RuntimeError(f"results come in order: the oldest request starts at block {first}, not {lo}")
        t0 = time.perf_counter()
        try:
            sigs, cov = future.result()
        finally:
            self.waited += time.perf_counter() - t0
        if isinstance(cov, str):
            self.cover_error = self.cover_error or cov
        elif cov is not None and self.coverage is not None:
            self.coverage = self.coverage.merge(cov)
        return sigs
