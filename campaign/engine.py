"""Run a campaign on dask.distributed: blocks out to workers, results into SQLite as they come back.

By default an embedded :class:`distributed.LocalCluster` with one single-threaded worker process per core
of this machine (numpy kernels and Verilator are single-threaded; processes, not threads, because the
GIL would serialise the Python around them); ``scheduler="tcp://host:8786"`` joins a running cluster
instead (workers started by hand with ``dask worker`` or by ``dask-jobqueue``; they need this project
installed, see the README).

The client keeps a window of blocks in flight, interleaved across instructions so each advances, and
writes every finished block to the :class:`~campaign.store.Store` before it submits another.  dask
reruns the blocks of a worker that dies; the store counts a block once however many times it ran.
Interrupting the run (Ctrl-C) loses only the blocks in flight.  Each block's coverage comes back with
it and is stored with it (:mod:`campaign.coverage`); a resumed run first measures again the stored
blocks whose coverage is missing or was measured with other cover points.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import struct
import sys
import time
from pathlib import Path

import numpy as np

from .blocks import BlockResult, measure_block, run_block
from .coverage import CampaignCoverage
from .spec import Campaign, is_hardware
from .store import Store

HANDSHAKE_S = 10.0           # a scheduler that accepts the connection but says nothing for this long is refused
MAX_FRAME = 1 << 24          # a dask scheduler's greeting is a few hundred bytes


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def plan_workers(requested: int | None, device: str) -> tuple[int, str | None]:
    """Workers of the embedded cluster and a note when the request was capped: at most one per core
    (each is a single-threaded process: more only slow each other), and one per board (a board serves
    one client at a time: a second worker would find it busy)."""
    cores = default_workers()
    one_board = is_hardware(device)
    cap, why = (1, f"the device {device} is one board, which serves one client at a time") if one_board \
        else (cores, f"the {cores} core(s) this machine gives the campaign")
    if requested is None:
        return cap, None
    if requested > cap:
        return cap, f"note: --workers (WORKERS=) {requested} capped at {cap}: {why}"
    return requested, None


def check_scheduler(address: str, timeout: float | None = None) -> None:
    """Refuse, in one line and within ``timeout`` seconds, a ``tcp://`` address that does not greet
    like a dask scheduler: dask's own connect waits for the greeting without a limit, and reads any
    other service's first bytes as a frame length (``Unable to allocate 3.01 EiB``)."""
    timeout = HANDSHAKE_S if timeout is None else timeout
    scheme, _, rest = address.partition("://")
    if scheme != "tcp" or not rest:
        return                                   # tls://, inproc://, ...: dask's own connect decides
    host, _, port = rest.rpartition(":")
    bad = f"the dask scheduler {address}"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as s:
            s.settimeout(timeout)
            head = _read_exactly(s, 8)
            (n,) = struct.unpack("<Q", head)
            if not 8 <= n <= MAX_FRAME:
                raise ValueError(f"{bad} does not speak dask's protocol (its first bytes {head!r} are not a "
                                 f"dask frame): is that the scheduler's port (8786 by default)?")
    except TimeoutError:
        raise ValueError(f"{bad} accepted the connection but did not greet within {timeout:g} s, as a dask "
                         f"scheduler does at once: is that the scheduler's port (8786 by default)?") from None
    except (OSError, ValueError) as e:
        if isinstance(e, ValueError) and str(e).startswith(bad):
            raise
        raise ValueError(f"cannot reach {bad}: {e}") from None


def _read_exactly(s, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ValueError(f"closed the connection after {len(data)} byte(s), before a dask greeting")
        data += chunk
    return data


@contextlib.contextmanager
def cluster_client(scheduler: str | None = None, workers: int | None = None, dashboard: bool = True):
    """A :class:`distributed.Client`: of a new local cluster (``workers`` processes), or of ``scheduler``."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ValueError("dask.distributed is not installed: make campaign installs it (pip install "
                         "'dask[distributed]')") from None
    if scheduler:
        check_scheduler(scheduler)
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError, MemoryError) as e:
            raise ValueError(f"cannot reach the dask scheduler {scheduler}: {e}") from None
        try:
            yield client
        finally:
            client.close()
        return
    n = workers or default_workers()
    if n < 1:
        raise ValueError(f"WORKERS must be at least 1, got {n}")
    with _sigint_ignored():                  # Ctrl-C is the client's to handle: workers started now ignore it
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, silence_logs=logging.ERROR,
                               dashboard_address=":0" if dashboard else None, memory_limit=0)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@contextlib.contextmanager
def _sigint_ignored():
    """SIGINT ignored while worker processes start: they inherit it (Python leaves an ignored SIGINT
    ignored), so a Ctrl-C at the terminal reaches only the client, which stops the run and closes the
    cluster, instead of every worker printing its own KeyboardInterrupt traceback."""
    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:                       # not the main thread: nothing to change
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _order(c: Campaign, done: set) -> list[tuple[str, str, int]]:
    """Blocks still to run, interleaved across instructions."""
    return [(arch, name, j) for j in range(c.blocks) for arch, name in c.instructions
            if (arch, name, j) not in done]


class Progress:
    """The console line: blocks done, dot-adds/s, mismatches, time left, the campaign's coverage
    (``covered``: a :class:`~campaign.coverage.CampaignCoverage` of the stored blocks, or None)."""

    def __init__(self, total: int, every: float, out=None, covered: CampaignCoverage | None = None):
        self.total, self.every, self.out, self.covered = total, every, out or sys.stderr, covered
        self.t0 = self.last = time.perf_counter()
        self.blocks = self.vectors = self.mismatches = 0

    def add(self, r: BlockResult) -> None:
        self.blocks += 1
        self.vectors += r.vectors
        self.mismatches += r.mismatches
        if self.covered is not None:
            self.covered.add(r.arch, r.instr, r.coverage)
        now = time.perf_counter()
        if self.every and (now - self.last >= self.every or self.blocks == self.total):
            self.last = now
            print(self.line(), file=self.out, flush=True)

    def line(self) -> str:
        dt = max(time.perf_counter() - self.t0, 1e-9)
        rate = self.blocks / dt
        left = (self.total - self.blocks) / rate if rate else float("inf")
        cover = f", {self.covered.summary()}" if self.covered is not None else ""
        return (f"[{self.blocks:,}/{self.total:,} blocks, {self.vectors:,} dot-adds, {self.vectors / dt:,.0f}/s, "
                f"{self.mismatches:,} mismatches, {dt:.0f} s, ~{left:.0f} s left{cover}]")


def run(c: Campaign, db: str | Path, *, scheduler: str | None = None, workers: int | None = None,
        resume: bool = False, fresh: bool = False, progress_s: float = 10.0, window: int | None = None,
        replay_dir: str | Path | None = None, out=None, on_block=None) -> dict:
    """Run the blocks of ``c`` not yet in ``db``; returns ``{"blocks": run now, "skipped": already done}``.

    ``on_block(result)`` is called in the client after each block is stored (tests use it to kill a
    worker mid-run).
    """
    out = out or sys.stdout
    if resume and fresh:
        raise ValueError("RESUME (--resume) continues the stored blocks and FRESH (--fresh) discards them: give one")
    if not progress_s >= 0:
        raise ValueError(f"progress must be seconds >= 0 (0: no progress lines), got {progress_s}")
    n_local, note = plan_workers(workers, c.device) if not scheduler else (workers, None)
    store = Store(db)
    try:
        already = store.begin(c, resume=resume, fresh=fresh)
        try:
            return _run_leased(c, store, already, scheduler, n_local, note, progress_s, window, replay_dir, out,
                               on_block)
        finally:
            store.release_lease(c.id)
    finally:
        store.close()


def _coverage_plan(c: Campaign, store: Store, out) -> tuple[CampaignCoverage | None, list]:
    """The stored blocks' coverage (for the progress line) and the stored blocks to measure again
    (coverage missing, or measured with other cover points), with a line saying how many."""
    if not c.cover_rows:
        print("coverage: not measured (--cover-sample 0)", file=out)
        return None, []
    covered = CampaignCoverage.of_store(store, c)
    again = store.uncovered(c.id, covered.models)
    sample = "every vector" if c.cover_rows >= c.block else f"a random sample of {c.cover_rows:,} dot-adds"
    print(f"coverage: {sample} of each block measured (golden.coverage)", file=out)
    if again:
        print(f"coverage: {len(again):,} stored block(s) measured with other cover points or not at all (golden's "
              f"cover points changed, or stored before coverage): measuring them again first", file=out, flush=True)
    return covered, again


def _run_leased(c, store, already, scheduler, workers, note, progress_s, window, replay_dir, out, on_block) -> dict:
    store.clear_problems(c.id)
    todo = _order(c, store.done_keys(c.id))
    print(c.describe(), file=out)
    print(f"results: {store.path}" + (f" ({already:,} block(s) already done)" if already else ""), file=out,
          flush=True)
    covered, again = _coverage_plan(c, store, out)
    if not todo and not again:
        print("nothing to run: every block of this campaign is in the database", file=out)
        return {"blocks": 0, "skipped": already}
    if note:
        print(note, file=sys.stderr, flush=True)
    replays = Path(replay_dir) if replay_dir else store.path.with_name(store.path.stem + "-replays") / c.id
    with cluster_client(scheduler, workers) as client:
        n_workers = max(1, len(client.scheduler_info(n_workers=-1).get("workers", {})) or (workers or 1))
        link = client.dashboard_link if getattr(client, "dashboard_link", None) else None
        print(f"dask: {n_workers} worker(s) at {client.scheduler.address}"
              + (f", dashboard {link}" if link else ""), file=out, flush=True)
        run_id = store.run_started(c.id, n_workers, scheduler or "local")
        outcome = "interrupted"
        try:
            stored = _drive(client, c, [(measure_block, x) for x in again] + [(run_block, x) for x in todo],
                            store, run_id, replays, window or 4 * n_workers,
                            Progress(len(todo), progress_s, covered=covered), on_block)
            outcome = "finished"
        finally:
            store.run_finished(run_id, outcome)
    return {"blocks": stored, "skipped": already}


def _drive(client, c: Campaign, tasks, store: Store, run_id: int, replays: Path, window: int, progress: Progress,
           on_block) -> int:
    """Run ``tasks`` (``(run_block or measure_block, (arch, instr, block))``) on the workers, ``window``
    in flight, storing each result as it comes; returns the blocks stored."""
    from distributed import as_completed
    pending = iter(tasks)
    stopped: set = set()                    # instructions whose device failed: no more blocks of them
    what: dict = {}                         # future key -> (task, arch, name, block)

    def submit(n):
        futures = []
        for fn, (arch, name, j) in pending:
            if (arch, name) in stopped:
                continue
            kind = "block" if fn is run_block else "coverage"
            fut = client.submit(fn, c, arch, name, j, pure=False, retries=1,
                                key=f"{kind}-{c.id}-{arch}-{name}-{j}-{time.monotonic_ns()}")
            what[fut.key] = (fn, arch, name, j)
            futures.append(fut)
            if len(futures) == n:
                break
        return futures

    stored = 0
    queue = as_completed(submit(window), with_results=False)
    for fut in queue:
        fn, *key = what.pop(fut.key)
        if fn is run_block:
            r = _block_result(fut, key)
            stored += _store_block(c, r, store, run_id, replays, progress, stopped)
            if on_block is not None:
                on_block(r)
        else:
            _store_remeasured(c, fut, key, store, progress.covered)
        fut.release()
        for f in submit(1):
            queue.add(f)
    return stored


def _block_result(fut, key) -> BlockResult:
    try:
        return fut.result()
    except Exception as e:                  # the task itself failed (its worker died too often, ...)
        return BlockResult(*key, status="error", message=f"{type(e).__name__}: {e}")


def _store_block(c: Campaign, r: BlockResult, store: Store, run_id: int, replays: Path, progress: Progress,
                 stopped: set) -> int:
    """Store a finished block (1 where it was new) or its problem (0)."""
    if r.status == "done":
        _say_coverage_error(r.arch, r.instr, r.coverage)
        replay = _write_replay(c, r, replays) if r.failing is not None else None
        if store.record(c.id, r, replay, run_id):
            progress.add(r)
            return 1
        return 0
    store.problem(c.id, r)
    if (r.arch, r.instr) not in stopped:
        stopped.add((r.arch, r.instr))
        print(f"{r.arch} {r.instr}: {r.status}: {r.message} (no more blocks of it in this run)",
              file=sys.stderr, flush=True)
    return 0


def _store_remeasured(c: Campaign, fut, key, store: Store, covered: CampaignCoverage | None) -> None:
    """A stored block's coverage measured again: stored, and counted in the progress line."""
    try:
        measured = fut.result()
    except Exception as e:
        measured = {"error": f"{type(e).__name__}: {e}"}
    _say_coverage_error(key[0], key[1], measured)
    if store.remeasured(c.id, *key, measured) and covered is not None:
        covered.add(key[0], key[1], measured)


_said: set = set()


def _say_coverage_error(arch: str, instr: str, measured: dict | None) -> None:
    """A block whose coverage could not be measured: one line per instruction and process (the block's
    verdict stands; it has no coverage row, so a resumed run measures it again)."""
    if measured and "error" in measured and (arch, instr) not in _said:
        _said.add((arch, instr))
        print(f"{arch} {instr}: coverage not measured: {measured['error']} (the blocks' verdicts stand)",
              file=sys.stderr, flush=True)


def _write_replay(c: Campaign, r: BlockResult, folder: Path) -> str:
    """The block's failing vectors in ``cosim.failures``' replay format, with the device named."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{r.arch}_{r.instr.replace('/', '_')}_block{r.block}.npz"
    meta = {"arch": r.arch, "instr": r.instr, "campaign": c.id, "device": c.device, "block": r.block,
            "seed": c.seed, "vectors_kind": c.vectors, "lanes": c.lanes, "mismatches": r.mismatches,
            "vectors": r.vectors, "unit": c.unit if c.device == "rtl" else None}
    arrays = {k: np.asarray(v) for k, v in r.failing.items() if v is not None}
    np.savez_compressed(path, meta=json.dumps(meta), **arrays)
    return str(path)
