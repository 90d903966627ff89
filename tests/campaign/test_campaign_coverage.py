"""A campaign's coverage: measured on the workers, stored with each block, merged over workers and resumed runs."""

from __future__ import annotations

import dataclasses
import io
import json
import sqlite3

import numpy as np
import pytest

import golden
from campaign import Campaign, Store, run, run_block
from campaign.__main__ import main
from campaign.blocks import operands
from campaign.coverage import CampaignCoverage, block_coverage
from campaign.report import report
from golden import coverage as golden_coverage
from golden.cover.model import Coverage
from golden.streams import BLOCK

pytest.importorskip("distributed")

HMMA = ("hopper", "HMMA.16816.F32")


class Stop(Exception):
    """Raised from ``on_block``: the run stops as a killed client's would, its stored blocks kept."""


def _measured_over(c: Campaign, blocks, sample=None) -> Coverage:
    """golden.coverage.measure over exactly the vectors of ``blocks`` (all of them, or each block's
    sample as a worker draws it)."""
    ins = golden.lookup(*c.instructions[0])
    cov = golden_coverage.empty(ins)
    if sample is None:
        parts = [operands(c, ins, j, narrow=True) for j in blocks]
        ops = [None if parts[0][i] is None else np.concatenate([p[i] for p in parts]) for i in range(5)]
        return golden_coverage.measure(ins, *ops, into=cov)
    for j in blocks:
        golden_coverage.measure(ins, *operands(c, ins, j, narrow=True), sample=sample, seed=[c.seed, j], into=cov)
    return cov


def _same(got: Coverage, want: Coverage) -> None:
    assert got.hits == want.hits, {b: (got.hits[b], want.hits[b]) for b in got.hits if got.hits[b] != want.hits[b]}
    assert (got.dot_adds, got.offered, got.unreachable) == (want.dot_adds, want.offered, want.unreachable)


def test_two_workers_a_killed_run_and_a_resume_measure_every_vector_once(tmp_path, capsys):
    """Every vector measured (the sample is the block): two workers, a run stopped after two blocks, a
    stored block's coverage made stale (other cover points), a resume: the campaign's coverage is
    golden.coverage.measure over exactly the campaign's vectors, and the report writes it as JSON."""
    c = Campaign((HMMA,), device="golden", block=BLOCK, target=5 * BLOCK, seed=4, cover_sample=BLOCK)
    db = tmp_path / "c.sqlite"
    stored = []

    def stop_after_two(result):
        stored.append(result.block)
        if len(stored) == 2:
            raise Stop

    with pytest.raises(Stop):
        run(c, db, workers=2, progress_s=0, window=2, on_block=stop_after_two)
    with sqlite3.connect(db) as con:
        done = [j for (j,) in con.execute("SELECT block FROM blocks ORDER BY block")]
        assert len(done) == 2 and con.execute("SELECT COUNT(*) FROM coverage").fetchone()[0] == 2
        con.execute("UPDATE coverage SET model = 'older-points' WHERE block = ?", (done[0],))
    _same(_counted(db, c, stale=1), _measured_over(c, done[1:]))
    capsys.readouterr()
    assert run(c, db, workers=2, progress_s=1e-6, resume=True) == {"blocks": 3, "skipped": 2}
    captured = capsys.readouterr()
    assert "1 stored block(s) measured with other cover points or not at all" in captured.out
    assert "coverage: " in captured.err.splitlines()[-1]                  # the progress line
    _same(_counted(db, c, stale=0), _measured_over(c, range(5)))
    out = io.StringIO()
    assert report(db, out=out, coverage_json=tmp_path / "cov.json", coverage_html=tmp_path / "cov.html") == 0
    want = _measured_over(c, range(5))
    assert f"hopper HMMA.16816.F32: {want.summary()}" in out.getvalue()
    doc = json.loads((tmp_path / "cov.json").read_text())
    _same(Coverage.from_dict(doc["coverage"][0]), want)
    assert want.summary() in (tmp_path / "cov.html").read_text()


def _counted(db, c: Campaign, stale: int) -> Coverage:
    s = Store(db, write=False)
    try:
        cc = CampaignCoverage.of_store(s, c)
    finally:
        s.close()
    assert cc.stale[HMMA] == stale
    return cc.coverages[HMMA]


def test_a_block_stored_twice_is_counted_once_and_the_sample_is_the_workers(tmp_path):
    """The default sample on golden (a stated number of dot-adds a block, seeded by seed and block):
    two stores of the same block add its hits once."""
    c = Campaign((HMMA,), device="golden", block=BLOCK, target=2 * BLOCK, seed=2)
    assert c.cover_rows == 256 and Campaign((HMMA,), device="rtl", block=BLOCK).cover_rows == BLOCK
    db = tmp_path / "c.sqlite"
    s = Store(db)
    s.begin(c)
    r = run_block(c, *HMMA, 1)
    assert r.coverage["dot_adds"] == 256 and r.coverage["offered"] == BLOCK
    assert s.record(c.id, r) and not s.record(c.id, run_block(c, *HMMA, 1))
    cc = CampaignCoverage.of_store(s, c)
    s.close()
    assert cc.blocks[HMMA] == 1
    _same(cc.coverages[HMMA], _measured_over(c, [1], sample=256))


def test_the_coverage_sample_is_no_part_of_the_campaign_and_is_checked():
    a = Campaign((HMMA,), device="golden")
    assert a.id == Campaign((HMMA,), device="golden", cover_sample=0).id
    assert Campaign.from_json(a.to_json()) == a
    with pytest.raises(ValueError, match="--cover-sample"):
        Campaign((HMMA,), device="golden", cover_sample=-1)


def test_bad_cover_sample_on_the_command_line_is_one_line(capsys):
    with pytest.raises(SystemExit):
        main(["run", *HMMA, "--device", "golden", "--cover-sample", "-3"])
    assert "--cover-sample" in capsys.readouterr().err


def test_a_cover_point_that_fails_leaves_the_verdict_and_no_row(tmp_path, monkeypatch):
    c = Campaign((HMMA,), device="golden", block=BLOCK, target=BLOCK)

    def broken(*args, **kw):
        raise ZeroDivisionError("a broken cover point")
    monkeypatch.setattr(golden_coverage, "measure", broken)
    r = run_block(c, *HMMA, 0)
    assert r.status == "done" and r.mismatches == 0 and "a broken cover point" in r.coverage["error"]
    s = Store(tmp_path / "c.sqlite")
    s.begin(c)
    assert s.record(c.id, r)
    assert s.coverage_rows(c.id) == [] and s.uncovered(c.id, {HMMA: "x"}) == [(*HMMA, 0)]
    s.close()


def test_a_database_from_before_coverage_reports_its_blocks_as_unmeasured(tmp_path):
    c = Campaign((HMMA,), device="golden", block=BLOCK, target=BLOCK)
    db = tmp_path / "c.sqlite"
    s = Store(db)
    s.begin(c)
    s.record(c.id, dataclasses.replace(run_block(c, *HMMA, 0), coverage=None))
    s.release_lease(c.id)
    s.db.execute("DROP TABLE coverage")                # the file as an earlier campaign wrote it
    s.close()
    out = io.StringIO()
    assert report(db, out=out) == 0
    assert "1 block(s) stored without coverage; a resumed run (RESUME=1) measures them" in out.getvalue()
    assert block_coverage(dataclasses.replace(c, cover_sample=0), golden.lookup(*HMMA), 0, ()) is None
