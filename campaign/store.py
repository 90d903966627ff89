"""A campaign's results in SQLite: one row per finished block, written as each block finishes.

The database is a plain file (WAL mode: ``python -m campaign report DB`` reads it while a campaign
writes it).  Rows are keyed by ``(campaign, arch, instr, block)``: a block that two workers finished (a
worker was thought dead and its block rerun) is counted once, and a block that no worker finished has no
row, so a resumed campaign runs it.  Blocks whose device failed or could not run are kept apart
(``problems``) and retried on resume.  Several campaigns may share one file; their rows never mix.

A file that is not a campaign database (another program's SQLite file, a file with its own ``blocks``
table) is refused before anything is written to it.  A run holds a lease on its campaign (a row of
``leases``, renewed with every block): a second run of the same campaign on the same file is refused
while the first one lives, so the work is not done twice.  A run's record counts its blocks as they
are stored, so it stays true when the client is killed.  A block's coverage (its bin hits,
:mod:`campaign.coverage`) is a row of ``coverage`` with the block's key, written in the block's
transaction: a block's hits are counted once, as the block is.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from pathlib import Path

from .spec import Campaign

SCHEMA = """
CREATE TABLE IF NOT EXISTS campaigns (
    id TEXT PRIMARY KEY, spec TEXT NOT NULL, target INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS blocks (
    campaign TEXT NOT NULL, arch TEXT NOT NULL, instr TEXT NOT NULL, block INTEGER NOT NULL,
    vectors INTEGER NOT NULL, mismatches INTEGER NOT NULL, unsupported INTEGER NOT NULL,
    started REAL NOT NULL, seconds REAL NOT NULL, finished REAL NOT NULL, worker TEXT NOT NULL,
    first_index INTEGER, first_got INTEGER, first_expected INTEGER, replay TEXT,
    PRIMARY KEY (campaign, arch, instr, block));
CREATE TABLE IF NOT EXISTS problems (
    campaign TEXT NOT NULL, arch TEXT NOT NULL, instr TEXT NOT NULL, block INTEGER NOT NULL,
    status TEXT NOT NULL, message TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    campaign TEXT NOT NULL, started REAL NOT NULL, finished REAL, workers INTEGER, scheduler TEXT,
    blocks INTEGER NOT NULL DEFAULT 0, outcome TEXT);
CREATE TABLE IF NOT EXISTS coverage (
    campaign TEXT NOT NULL, arch TEXT NOT NULL, instr TEXT NOT NULL, block INTEGER NOT NULL,
    model TEXT NOT NULL, dot_adds INTEGER NOT NULL, offered INTEGER NOT NULL, hits TEXT NOT NULL,
    PRIMARY KEY (campaign, arch, instr, block));
CREATE TABLE IF NOT EXISTS leases (
    campaign TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, since REAL NOT NULL, beat REAL NOT NULL);
"""
LEASE_S = 300.0          # a lease of another host not renewed for this long is taken over (its run is gone)


def _columns(db, table: str) -> tuple:
    return tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})"))


def _our_tables() -> dict:
    """``{table: its columns}`` of :data:`SCHEMA`."""
    mem = sqlite3.connect(":memory:")
    mem.executescript(SCHEMA)
    names = [r[0] for r in mem.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    out = {name: _columns(mem, name) for name in names}
    mem.close()
    return out


OUR_TABLES = _our_tables()


class CampaignExists(ValueError):
    """The database already holds rows of this campaign and the run did not ask to resume."""


class CampaignBusy(ValueError):
    """Another live run holds the campaign's lease in this database."""


def _foreign(db, path: Path) -> str | None:
    """Why the open database ``db`` is not a campaign database (None when it is one, or empty)."""
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                       "AND name NOT LIKE 'sqlite_%'")]
    if not tables:
        return None
    others = sorted(set(tables) - set(OUR_TABLES))
    changed = sorted(t for t in set(tables) & set(OUR_TABLES) if _columns(db, t) != OUR_TABLES[t])
    if "campaigns" in tables and not others and not changed:
        return None
    what = (f"its table(s) {', '.join(changed)} have other columns" if changed
            else f"it holds the table(s) {', '.join(sorted(tables))}")
    return (f"{path} is not a campaign results database ({what}); it was left as it is: "
            f"DB= (--db) names another file")


class Store:
    """The results database at ``path``.

    Parameters
    ----------
    path : str or Path
    write : bool
        True (a campaign run): created with its folder when missing, switched to WAL, and refused
        up front when it cannot be written.  False (a report): it must exist; nothing is written.
    """

    def __init__(self, path, write: bool = True):
        self.path = Path(path)
        if self.path.is_dir():
            found = sorted(p.name for p in self.path.glob("*.sqlite"))
            raise ValueError(f"results database {self.path} is a folder, give the .sqlite file (DB= / --db)"
                             + (f"; in it: {', '.join(found[:5])}" if found else ""))
        if not write and not self.path.is_file():
            raise ValueError(f"results database {self.path}: no such file (a campaign run creates it; "
                             f"make campaign-report DB= names another)")
        try:
            if write:
                self._check_writable()
                self.db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            else:
                self.db = self._open_for_reading()
            why = _foreign(self.db, self.path)       # before anything is written to the file
            if why:
                self.db.close()
                raise ValueError(why)
            if write:
                self.db.execute("PRAGMA journal_mode=WAL")
                # WAL + NORMAL: a committed row survives a crash of this process
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as e:
            raise ValueError(f"results database {self.path}: {e}") from None

    def _open_for_reading(self) -> sqlite3.Connection:
        """A connection that reads the database wherever it lies: as a campaign's own connection where
        its folder can be written (SQLite keeps its WAL index beside the file), read-only where the
        file or its folder cannot (a read-only copy, a read-only mount), and, where even that cannot
        open it (SQLite cannot make the index file on a read-only mount), as an immutable file,
        which is safe when no WAL file holds rows beside it."""
        folder = self.path.absolute().parent
        if os.access(self.path, os.W_OK) and os.access(folder, os.W_OK | os.X_OK):
            return sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        uri = self.path.absolute().as_uri()
        try:
            db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30.0, isolation_level=None)
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError as e:
            wal = self.path.with_name(self.path.name + "-wal")
            if wal.exists() and wal.stat().st_size:
                raise ValueError(
                    f"results database {self.path}: cannot be read where it lies ({e}): it is read-only and "
                    f"its {wal.name} holds rows not yet in the file (a campaign killed while writing), which "
                    f"SQLite reads only through an index file it cannot make there; copy {self.path.name} "
                    f"and {wal.name} to a writable folder and report the copy") from None
        return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)

    def _check_writable(self) -> None:
        """A campaign writes a row per block (and SQLite its WAL beside the file): say so before any work."""
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and not os.access(self.path, os.W_OK):
            raise ValueError(f"results database {self.path} is read-only: a campaign writes a row per block "
                             f"(make it writable, or DB= (--db) names another file)")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ValueError(f"results database {self.path}: its folder {folder} cannot be written (SQLite "
                             f"keeps its journal beside the file); DB= (--db) names another file")

    def close(self) -> None:
        self.db.close()

    # ---- the lease: one live run per campaign ------------------------------------------------------------

    def _holder(self, campaign: str) -> dict | None:
        """The live run holding ``campaign``'s lease, or None (no lease, or its run is gone)."""
        if "leases" not in self._tables():
            return None
        row = self.db.execute("SELECT host, pid, since, beat FROM leases WHERE campaign = ?", (campaign,)).fetchone()
        if row is None:
            return None
        host, pid, since, beat = row
        if host == socket.gethostname():
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return None
            except PermissionError:
                pass
        elif time.time() - beat > LEASE_S:
            return None
        return dict(host=host, pid=pid, since=since, beat=beat)

    def _tables(self) -> set:
        return {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def take_lease(self, campaign: str) -> None:
        """Hold ``campaign`` for this process; :class:`CampaignBusy` while another live run holds it."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            held = self._holder(campaign)
            if held is not None and (held["host"], held["pid"]) != (socket.gethostname(), os.getpid()):
                since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(held["since"]))
                raise CampaignBusy(
                    f"campaign {campaign} in {self.path} is being run by process {held['pid']} on {held['host']} "
                    f"(since {since}): a second run would do its blocks twice; wait for it, stop it, or "
                    f"DB= (--db) names another file")
            now = time.time()
            self.db.execute("INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?)",
                            (campaign, socket.gethostname(), os.getpid(), now, now))
            self.db.execute("COMMIT")
        except BaseException:
            self._abandon()
            raise

    def release_lease(self, campaign: str) -> None:
        self.db.execute("DELETE FROM leases WHERE campaign = ? AND host = ? AND pid = ?",
                        (campaign, socket.gethostname(), os.getpid()))

    def running(self, campaign: str) -> bool:
        """A live run holds the campaign now."""
        return self._holder(campaign) is not None

    # ---- campaigns -------------------------------------------------------------------------------------

    def begin(self, c: Campaign, resume: bool = False, fresh: bool = False) -> int:
        """Register ``c`` and take its lease; returns how many of its blocks are already done.  Refuses
        to add to existing rows unless ``resume`` (or discards them with ``fresh``), ``resume`` of a
        campaign this file does not hold while it holds others, and a campaign another run holds."""
        if resume and fresh:
            raise ValueError("RESUME (--resume) continues the stored blocks and FRESH (--fresh) discards them: "
                             "give one of them")
        self.take_lease(c.id)
        try:
            return self._register(c, resume, fresh)
        except BaseException:
            self.release_lease(c.id)
            raise

    def _register(self, c: Campaign, resume: bool, fresh: bool) -> int:
        done = self.blocks_done(c.id)
        if resume:
            self._check_resumable(c)
        if done and fresh:
            for table in ("blocks", "problems", "runs", "coverage"):
                self.db.execute(f"DELETE FROM {table} WHERE campaign = ?", (c.id,))
            done = 0
        elif done and not resume:
            raise CampaignExists(
                f"{self.path} already holds {done:,} finished block(s) of campaign {c.id}: RESUME=1 (--resume) "
                f"continues it, FRESH=1 (--fresh) discards them, or DB= names another file")
        self.db.execute("INSERT OR IGNORE INTO campaigns VALUES (?, ?, ?, ?)",
                        (c.id, c.to_json(), c.target, time.time()))
        self.db.execute("UPDATE campaigns SET target = MAX(target, ?) WHERE id = ?", (c.target, c.id))
        return done

    def _check_resumable(self, c: Campaign) -> None:
        """``resume`` of a campaign the file does not hold, while it holds others: name the nearest one's
        differences instead of silently starting a new campaign."""
        if self.db.execute("SELECT 1 FROM campaigns WHERE id = ?", (c.id,)).fetchone():
            return
        others = self.campaigns()
        if not others:
            return                                   # nothing stored yet: the first run of a resumable campaign
        mine = c.identity()

        def differences(o):
            theirs = o.identity()
            return [k for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)]
        near = min(others, key=lambda o: len(differences(o)))
        diff = ", ".join(f"{k} {_short(near.identity().get(k))} there, {_short(mine.get(k))} here"
                         for k in differences(near))
        raise ValueError(f"--resume (RESUME=1): {self.path} holds no campaign {c.id} but {len(others)} other(s); "
                         f"the nearest, {near.id}, differs in {diff}: give its settings, or leave out "
                         f"--resume to start this one")

    def campaigns(self) -> list[Campaign]:
        rows = self.db.execute("SELECT spec, target FROM campaigns ORDER BY created").fetchall()
        out = []
        for spec, target in rows:
            c = Campaign.from_json(spec)
            out.append(c if c.target == target else _with_target(c, target))
        return out

    # ---- blocks ----------------------------------------------------------------------------------------

    def blocks_done(self, campaign: str) -> int:
        return self.db.execute("SELECT COUNT(*) FROM blocks WHERE campaign = ?", (campaign,)).fetchone()[0]

    def done_keys(self, campaign: str) -> set[tuple[str, str, int]]:
        rows = self.db.execute("SELECT arch, instr, block FROM blocks WHERE campaign = ?", (campaign,))
        return {(a, i, b) for a, i, b in rows}

    def record(self, campaign: str, r, replay: str | None = None, run_id: int | None = None) -> bool:
        """Store a finished block, count it in run ``run_id``'s record and renew the lease, in one
        transaction; False if it was already there (it is then not counted again)."""
        first = (None, None, None)
        if r.failing is not None:
            f = r.failing
            first = (int(f["index"][0]), int(f["got"][0]), int(f["expected"][0]))
        try:
            self.db.execute("BEGIN IMMEDIATE")
            cur = self.db.execute(
                "INSERT OR IGNORE INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (campaign, r.arch, r.instr, r.block, r.vectors, r.mismatches, r.unsupported, r.started, r.seconds,
                 time.time(), r.worker, *first, replay))
            new = cur.rowcount == 1
            if new:
                self._put_coverage(campaign, r.arch, r.instr, r.block, r.coverage)
            if new and run_id is not None:
                self.db.execute("UPDATE runs SET blocks = blocks + 1 WHERE rowid = ?", (run_id,))
            self.db.execute("UPDATE leases SET beat = ? WHERE campaign = ?", (time.time(), campaign))
            self.db.execute("COMMIT")
        except BaseException:
            self._abandon()
            raise
        return new

    def _put_coverage(self, campaign: str, arch: str, instr: str, block: int, measured: dict | None) -> None:
        """A block's coverage row (replacing one measured with other cover points); nothing where it
        was not measured."""
        if not measured or "error" in measured:
            return
        self.db.execute("INSERT OR REPLACE INTO coverage VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (campaign, arch, instr, block, measured["model"], int(measured["dot_adds"]),
                         int(measured["offered"]), json.dumps(measured["hits"], sort_keys=True)))

    def remeasured(self, campaign: str, arch: str, instr: str, block: int, measured: dict | None) -> bool:
        """Store a stored block's coverage measured again (its row replaced); False where the block is
        not stored (nothing is written)."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            there = self.db.execute("SELECT 1 FROM blocks WHERE campaign = ? AND arch = ? AND instr = ? AND "
                                    "block = ?", (campaign, arch, instr, block)).fetchone()
            if there:
                self._put_coverage(campaign, arch, instr, block, measured)
            self.db.execute("COMMIT")
        except BaseException:
            self._abandon()
            raise
        return there is not None

    def coverage_rows(self, campaign: str) -> list[tuple]:
        """``(arch, instr, block, measured)`` of every stored block's coverage (none in a file written
        before coverage was measured)."""
        if "coverage" not in self._tables():
            return []
        rows = self.db.execute("SELECT c.arch, c.instr, c.block, c.model, c.dot_adds, c.offered, c.hits FROM "
                               "coverage c JOIN blocks b USING (campaign, arch, instr, block) WHERE c.campaign = ? "
                               "ORDER BY c.arch, c.instr, c.block", (campaign,))
        return [(a, i, j, {"model": m, "dot_adds": n, "offered": o, "hits": json.loads(h)})
                for a, i, j, m, n, o, h in rows]

    def uncovered(self, campaign: str, models: dict) -> list[tuple[str, str, int]]:
        """Stored blocks of the instructions in ``models`` (``{(arch, instr): model id}``) whose coverage
        is missing or was measured with other cover points."""
        rows = self.db.execute("SELECT b.arch, b.instr, b.block, c.model FROM blocks b LEFT JOIN coverage c "
                               "USING (campaign, arch, instr, block) WHERE b.campaign = ? ORDER BY b.block, "
                               "b.arch, b.instr", (campaign,))
        return [(a, i, j) for a, i, j, m in rows if (a, i) in models and m != models[a, i]]

    def problem(self, campaign: str, r) -> None:
        self.db.execute("INSERT INTO problems VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (campaign, r.arch, r.instr, r.block, r.status, r.message, time.time()))

    def clear_problems(self, campaign: str) -> None:
        """A resumed campaign tries its failed blocks again; their old messages go."""
        self.db.execute("DELETE FROM problems WHERE campaign = ?", (campaign,))

    # ---- runs ------------------------------------------------------------------------------------------

    def run_started(self, campaign: str, workers: int, scheduler: str) -> int:
        cur = self.db.execute("INSERT INTO runs (campaign, started, workers, scheduler) VALUES (?, ?, ?, ?)",
                              (campaign, time.time(), workers, scheduler))
        return cur.lastrowid

    def _abandon(self) -> None:
        """Roll back the transaction a Ctrl-C (or any error) left open. The interrupt can land on either
        side of BEGIN or COMMIT (Python raises it when the SQLite call returns), so whether one is open
        is asked, not assumed: a transaction left open would swallow the run's closing record."""
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def run_finished(self, run_id: int, outcome: str) -> None:
        """Close run ``run_id``'s record (its blocks were counted as they came)."""
        self._abandon()
        self.db.execute("UPDATE runs SET finished = ?, outcome = ? WHERE rowid = ?", (time.time(), outcome, run_id))

    # ---- the report's queries --------------------------------------------------------------------------

    def per_instruction(self, campaign: str) -> dict[tuple[str, str], dict]:
        rows = self.db.execute(
            "SELECT arch, instr, COUNT(*), SUM(vectors), SUM(mismatches), SUM(unsupported), SUM(seconds), "
            "MIN(started), MAX(finished) FROM blocks WHERE campaign = ? GROUP BY arch, instr", (campaign,))
        out = {}
        for arch, instr, blocks, vectors, mism, unsup, secs, t0, t1 in rows:
            out[arch, instr] = dict(blocks=blocks, vectors=vectors, mismatches=mism, unsupported=unsup,
                                    busy_s=secs, wall_s=max(t1 - t0, 1e-9))
        return out

    def first_failure(self, campaign: str, arch: str, instr: str) -> dict | None:
        row = self.db.execute(
            "SELECT block, first_index, first_got, first_expected, replay FROM blocks WHERE campaign = ? AND "
            "arch = ? AND instr = ? AND mismatches > 0 ORDER BY block LIMIT 1", (campaign, arch, instr)).fetchone()
        if row is None:
            return None
        return dict(zip(("block", "index", "got", "expected", "replay"), row))

    def problems(self, campaign: str) -> list[dict]:
        rows = self.db.execute("SELECT arch, instr, block, status, message FROM problems WHERE campaign = ? "
                               "ORDER BY at", (campaign,))
        return [dict(zip(("arch", "instr", "block", "status", "message"), r)) for r in rows]

    def runs(self, campaign: str) -> list[dict]:
        rows = self.db.execute("SELECT started, finished, workers, scheduler, blocks, outcome FROM runs "
                               "WHERE campaign = ? ORDER BY started", (campaign,))
        return [dict(zip(("started", "finished", "workers", "scheduler", "blocks", "outcome"), r)) for r in rows]


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _with_target(c: Campaign, target: int) -> Campaign:
    d = json.loads(c.to_json())
    d["target"] = target
    return Campaign.from_json(json.dumps(d))
