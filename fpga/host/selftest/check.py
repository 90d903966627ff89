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
waits on the link).  It also keeps a random sample of each block's operands (:func:`cover_rows`),
and measures the functional coverage (:mod:`golden.coverage`, golden's numpy path) of the samples of
the blocks whose signatures were taken (checked), :data:`COVER_BATCH` dot-adds at a time: golden's
trace costs a few milliseconds a call whatever its size, so batches keep that off the host's rate.
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

__all__ = ["AHEAD", "COVER_EVERY", "HOST_PATHS", "STAGES", "STEP_ROWS", "HostChecker", "cover_rows", "cover_sample_of",
           "expected_signatures", "host_path"]

STEP_ROWS = 1 << 16          # dot-adds recomputed at once (whole blocks): operands and results stay a few MB
AHEAD = 2                    # requests whose signatures may be computed or held at once
WARM_ROWS = 4096             # the warm-up's rows: enough for golden's parallel launch (kernels.PARALLEL_MIN_ROWS)
# dot-adds of each block measured for coverage by default: 1 in COVER_EVERY, at least one.  golden's
# numpy path traces a dot-add in about 3 microseconds, the compiled host recomputes one in about 0.13
# (HGMMA F32, 2 cores): 1 in 512 costs the host about a twentieth of its rate
COVER_EVERY = 512
COVER_BATCH = 1 << 15        # sampled dot-adds measured at once


def host_path(backend: str | None = None, ins=None) -> str:
    """The host's path for golden's backend ``backend`` (or ``$GOLDEN_BACKEND``; ``"fused"`` taken as
    numba): ``"fused"`` (generator, golden's row kernel and signature in one compiled pass a block,
    :func:`fpga.host.selftest.fast.fused_signatures`) where numba imports and the path takes ``ins``
    (or none is named), ``"numba"`` (the compiled stages one after another: generator, golden's
    kernels, signatures) where it does not take it, else ``"numpy"``."""
    name = "numba" if backend == "fused" else resolve_backend(backend)
    if name != "numba" or not selftest_fast.available():
        return "numpy"
    return "fused" if ins is None or selftest_fast.fused_handles(ins) else "numba"


STAGES = ("operands", "golden", "signatures")
HOST_PATHS = ("fused", "numba", "numpy")     # expected_signatures' paths, fastest first


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


def cover_sample_of(spec: SelfTestSpec, sample: int | None = None) -> int:
    """Dot-adds of each block measured for coverage: ``sample`` (at most the block's), by default 1 in
    :data:`COVER_EVERY` of the block's ``block_len * lanes``, at least one."""
    per = spec.block_len * spec.lanes
    return min(sample, per) if sample is not None else max(1, per // COVER_EVERY)


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


def _sample(spec: SelfTestSpec, lo: int, n: int, ops, sample: int) -> tuple:
    """The operands of blocks ``lo .. lo + n - 1``' sampled rows (copies), and the dot-adds they stand for."""
    rows = cover_rows(spec, lo, n, sample)
    return tuple(None if x is None else np.asarray(x)[rows] for x in ops), n * spec.block_len * spec.lanes


def _sample_at(spec: SelfTestSpec, lo: int, n: int, sample: int) -> tuple:
    """:func:`_sample` where the blocks' operands were never in memory (the fused path): the sampled
    rows' entries generated again on their own."""
    rows = cover_rows(spec, lo, n, sample)
    first, _ = block_entries(lo, spec.block_len, n)
    entries, lanes = rows // spec.lanes, rows % spec.lanes
    ops = selftest_fast.operands_at(spec.ins, spec.lanes, spec.seed, spec.kind, first + entries)
    pick = np.arange(len(rows)) * spec.lanes + lanes
    return tuple(None if x is None else x[pick] for x in ops), n * spec.block_len * spec.lanes


def _step(spec: SelfTestSpec, lo: int, n: int, path: str, threads, stages: dict | None = None, samples=None,
          sample: int = 0) -> np.ndarray:
    """Signatures ``[n, lanes]`` of blocks ``lo .. lo + n - 1`` (their sampled operands appended to
    ``samples``, when given)."""
    timer = _Stages(stages, threads)
    if path == "fused":
        sigs = selftest_fast.fused_signatures(spec, lo, n, threads)
        timer.done("fused")
        if samples is not None and sample:
            samples.append(_sample_at(spec, lo, n, sample))
            timer.done("coverage sample")
        return sigs
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
    if samples is not None and sample:
        samples.append(_sample(spec, lo, n, ops, sample))
        timer.done("coverage sample")
    return sigs


def expected_signatures(spec: SelfTestSpec, first_block: int, blocks: int = 1, *, backend: str | None = None,
                        threads: int | None = None, stages: dict | None = None, samples: list | None = None,
                        cover_sample: int | None = None) -> np.ndarray:
    """What the board must answer for blocks ``first_block .. first_block + blocks - 1``: uint64
    ``[blocks, lanes]``.

    Parameters
    ----------
    backend : {"fused", "numba", "numpy"}, optional
        The host path (:data:`HOST_PATHS`; ``"numba"``: the compiled stages one after another; default
        :func:`host_path`: fused where it takes the instruction, else the compiled stages, numpy
        without numba).
    threads : int, optional
        Cores the compiled path splits each step across (default: every core this process may use).
    stages : dict, optional
        Seconds spent per stage (:data:`STAGES`, and ``coverage sample``) are added here (the benchmark's
        breakdown).
    samples : list, optional
        ``(operands, dot-adds they stand for)`` of ``cover_sample`` dot-adds of each block
        (:func:`cover_rows`; default :func:`cover_sample_of`) are appended here, a step at a time.
    """
    block_entries(first_block, spec.block_len, blocks)
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive integer, not {threads!r}")
    path = backend if backend in HOST_PATHS else host_path(backend, spec.ins)
    if path == "fused" and not selftest_fast.fused_handles(spec.ins):
        path = "numba"
    cover_sample = cover_sample_of(spec, cover_sample)
    step = max(1, STEP_ROWS // (spec.block_len * spec.lanes))
    out = np.empty((blocks, spec.lanes), np.uint64)
    for lo in range(first_block, first_block + blocks, step):
        n = min(step, first_block + blocks - lo)
        out[lo - first_block:lo - first_block + n] = _step(spec, lo, n, path, threads, stages, samples,
                                                           cover_sample)
    return out


class HostChecker:
    """Expected signatures of self-test requests on a thread ahead of the board.

    ``submit(lo, n)`` starts a request's signatures (in order; at most :data:`AHEAD` outstanding);
    ``result(lo)`` waits for them.  ``seconds``: the thread's time recomputing; ``waited``: the time
    the caller waited for it (the host behind the board).  ``coverage``: the coverage of the requests
    taken (``cover_sample`` dot-adds a block, default :func:`cover_sample_of`; None where 0), complete
    after :meth:`measure_coverage`; ``cover_seconds`` the time measuring it; ``cover_error`` why it
    stopped where a cover point failed.  Use as a context manager: leaving it (Ctrl-C included) drops what is queued.
    """

    def __init__(self, spec: SelfTestSpec, *, backend: str | None = None, threads: int | None = None,
                 cover_sample: int | None = None):
        self.spec, self.threads = spec, threads
        self.cover_sample = cover_sample_of(spec, cover_sample)
        self.path = host_path(backend, spec.ins)
        self.coverage = golden_coverage.empty(spec.ins) if self.cover_sample else None
        self.cover_error, self.cover_seconds = "", 0.0
        self._taken: list = []                     # sampled operands of the requests taken, not measured yet
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
        """The request's signatures and its blocks' sampled operands (a list; None where not sampled)."""
        t0 = time.perf_counter()
        samples = [] if self.coverage is not None else None
        try:
            return expected_signatures(self.spec, lo, n, backend=self.path, threads=self.threads, samples=samples,
                                       cover_sample=self.cover_sample), samples
        finally:
            self.seconds += time.perf_counter() - t0

    def result(self, lo: int) -> np.ndarray:
        """The signatures of the oldest outstanding request, which must start at block ``lo``; its
        blocks' samples join the coverage (measured :data:`COVER_BATCH` dot-adds at a time)."""
        first, future = self._pending.popleft()
        if first != lo:
            raise RuntimeError(f"results come in order: the oldest request starts at block {first}, not {lo}")
        t0 = time.perf_counter()
        try:
            sigs, samples = future.result()
        finally:
            self.waited += time.perf_counter() - t0
        if samples and self.coverage is not None:
            self._taken += samples
            if sum(len(ops[2]) for ops, _ in self._taken) >= COVER_BATCH:
                self.measure_coverage()
        return sigs

    def measure_coverage(self) -> None:
        """Measure the samples of the requests taken and not yet measured.  A cover point that fails
        stops the coverage (``cover_error``); the signatures are not touched."""
        taken, self._taken = self._taken, []
        if not taken or self.coverage is None or self.cover_error:
            return
        t0 = time.perf_counter()
        ops = [None if taken[0][0][i] is None else np.concatenate([t[0][i] for t in taken]) for i in range(5)]
        try:
            golden_coverage.measure(self.spec.ins, *ops, into=self.coverage)
        except Exception as e:
            self.cover_error = f"{type(e).__name__}: {e}"
            return
        finally:
            self.cover_seconds += time.perf_counter() - t0
        self.coverage.offered += sum(n for _, n in taken) - len(ops[2])
