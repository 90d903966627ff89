"""A campaign's results in SQLite: one row per finished block, written as each block finishes.

The database is a plain file (WAL mode: ``python -m campaign report DB`` reads it while a campaign
writes it).  Rows are keyed by ``(campaign, arch, instr, block)``: a block that two workers finished (a
worker was thought dead and its block rerun) is counted once, and a block that no worker finished has no
row, so a resumed campaign runs it.  Blocks whose device failed or could not run are kept apart
(``problems``) and retried on resume.  Several campaigns may share one file; their rows never mix.
"""

from __future__ import annotations

import json
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
"""


class CampaignExists(ValueError):
    """The database already holds rows of this campaign and the run did not ask to resume."""


class Store:
    """The results database at ``path`` (created with its folder when missing)."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")     # WAL + NORMAL: a committed row survives a crash of this process
            self.db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as e:
            raise ValueError(f"results database {self.path}: {e}") from None

    def close(self) -> None:
        self.db.close()

    # ---- campaigns -------------------------------------------------------------------------------------

    def begin(self, c: Campaign, resume: bool = False, fresh: bool = False) -> int:
        """Register ``c``; returns how many of its blocks are already done.  Refuses to add to existing
        rows unless ``resume`` (or discards them with ``fresh``)."""
        done = self.blocks_done(c.id)
        if done and fresh:
            for table in ("blocks", "problems", "runs"):
                self.db.execute(f"DELETE FROM {table} WHERE campaign = ?", (c.id,))
            done = 0
        elif done and not resume:
            raise CampaignExists(
                f"{self.path} already holds {done:,} finished block(s) of campaign {c.id}: RESUME=1 (--resume) "
                f"continues it, FRESH=1 (--fresh) discards them, or DB= names another file")
        self.db.execute("INSERT OR IGNORE INTO campaigns VALUES (?, ?, ?, ?)", (c.id, c.to_json(), c.target, time.time()))
        self.db.execute("UPDATE campaigns SET target = MAX(target, ?) WHERE id = ?", (c.target, c.id))
        return done

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

    def record(self, campaign: str, r, replay: str | None = None) -> bool:
        """Store a finished block; False if it was already there (it is then not counted again)."""
        first = (None, None, None)
        if r.failing is not None:
            f = r.failing
            first = (int(f["index"][0]), int(f["got"][0]), int(f["expected"][0]))
        cur = self.db.execute(
            "INSERT OR IGNORE INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (campaign, r.arch, r.instr, r.block, r.vectors, r.mismatches, r.unsupported, r.started, r.seconds,
             time.time(), r.worker, *first, replay))
        return cur.rowcount == 1

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

    def run_finished(self, run_id: int, blocks: int, outcome: str) -> None:
        self.db.execute("UPDATE runs SET finished = ?, blocks = ?, outcome = ? WHERE rowid = ?",
                        (time.time(), blocks, outcome, run_id))

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


def _with_target(c: Campaign, target: int) -> Campaign:
    d = json.loads(c.to_json())
    d["target"] = target
    return Campaign.from_json(json.dumps(d))
