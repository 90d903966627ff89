"""Campaigns: regenerable blocks, results that survive in SQLite, a killed worker, a planted fault, resume."""

from __future__ import annotations

import os
import signal
import sqlite3

import numpy as np
import pytest

import golden
from campaign import Campaign, Store, run, run_block
from campaign.__main__ import main
from campaign.blocks import operands
from campaign.report import report
from campaign.store import CampaignExists
from golden.streams import BLOCK, VectorStream

pytest.importorskip("distributed")

HMMA = ("hopper", "HMMA.16816.F32")
SMALL = dict(block=BLOCK, target=3 * BLOCK)


def test_a_block_is_the_cosim_streams_vectors_whoever_makes_it():
    c = Campaign((HMMA,), block=2 * BLOCK, target=6 * BLOCK, seed=5)
    ins = golden.lookup(*HMMA)
    stream = VectorStream(ins, "mixed", 5).take(6 * BLOCK)
    for j in (2, 0, 1):                        # any order, any process
        block = operands(c, ins, j)
        for got, want in zip(block, stream):
            if want is not None:
                np.testing.assert_array_equal(got, want[j * c.block:(j + 1) * c.block])


def test_the_id_separates_campaigns_but_not_their_targets():
    a = Campaign((HMMA,), device="golden:F=24")
    assert a.id == Campaign((HMMA,), device="golden:F=24", target=10 ** 9).id
    assert a.id != Campaign((HMMA,), device="golden:F=23").id
    assert a.id != Campaign((HMMA,), device="golden:F=24", seed=2).id
    assert Campaign.from_json(a.to_json()) == a


@pytest.mark.parametrize("kw, message", [
    (dict(target=0), "N (vectors per instruction) must be at least 1"),
    (dict(seed=-1), "SEED must be a non-negative integer"),
    (dict(block=1000), "BLOCK must be a positive multiple of 8,192"),
    (dict(stall=1.5), "STALL must be a probability"),
    (dict(vectors="nosuch"), "unknown vector generator 'nosuch'"),
])
def test_bad_campaigns_are_refused_up_front(kw, message):
    with pytest.raises(ValueError) as e:
        Campaign((HMMA,), **kw)
    assert message in str(e.value)


def test_a_planted_fault_is_named_by_instruction_block_and_vector(tmp_path, capsys):
    """Golden with F off by one as the device: the database names where it first differs."""
    c = Campaign((HMMA, ("hopper", "HMMA.16816.F16")), device="golden:F=24", **SMALL)
    db = tmp_path / "c.sqlite"
    assert run(c, db, workers=1, progress_s=0)["blocks"] == 6
    rows = sqlite3.connect(db).execute(
        "SELECT arch, instr, block, first_index, first_got, first_expected, replay FROM blocks "
        "WHERE mismatches > 0 ORDER BY instr, block").fetchall()
    assert rows, "F=24 against F=25 must mismatch"
    arch, instr, block, index, got, expected, replay = rows[-1]
    ins = golden.lookup(arch, instr)
    a, b, cc, _, _ = operands(c, ins, block)
    i = index - block * c.block
    assert got != expected and int(golden.dot_add(ins, a[i], b[i], cc[i])) == expected
    bad = golden.dot_add(_with_F(ins, 24), a[i], b[i], cc[i])
    assert int(bad) == got
    assert report(db) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and f"block {rows[0][2]}" in out and "replay: python -m campaign replay" in out
    assert main(["replay", replay]) == 1                        # the failure is still there
    assert "mismatch again" in capsys.readouterr().out


def _with_F(ins, F):
    from dataclasses import replace
    p = replace(ins.params, F=F)
    return replace(ins, params=p)


def test_resume_does_no_work_and_a_second_run_without_it_is_refused(tmp_path, capsys):
    c = Campaign((HMMA,), device="golden", **SMALL)
    db = tmp_path / "c.sqlite"
    seen = []

    def report_while_running(_result):              # a second connection, as `make campaign-report` is
        import io
        buf = io.StringIO()
        report(db, out=buf)
        seen.append(buf.getvalue())

    assert run(c, db, workers=1, progress_s=0, on_block=report_while_running) == {"blocks": 3, "skipped": 0}
    assert "1/3" in seen[0] and "incomplete" in seen[0] and "block(s), running" in seen[0]
    assert "3/3" in seen[-1]
    assert run(c, db, workers=1, progress_s=0, resume=True) == {"blocks": 0, "skipped": 3}
    with pytest.raises(CampaignExists, match="RESUME=1"):
        run(c, db, workers=1, progress_s=0)
    bigger = Campaign((HMMA,), device="golden", block=BLOCK, target=5 * BLOCK)   # same campaign, larger N
    assert run(bigger, db, workers=1, progress_s=0, resume=True) == {"blocks": 2, "skipped": 3}
    other = Campaign((HMMA,), device="golden", block=BLOCK, target=BLOCK, seed=9)  # another campaign, same file
    assert run(other, db, workers=1, progress_s=0)["blocks"] == 1
    s = Store(db)
    assert {x.id: s.blocks_done(x.id) for x in s.campaigns()} == {c.id: 5, other.id: 1}
    assert report(db) == 0


def test_a_killed_worker_loses_no_block_and_counts_none_twice(tmp_path):
    """Two workers; one is killed (SIGKILL) after the first blocks are stored; dask reruns its blocks."""
    c = Campaign((HMMA, ("hopper", "HGMMA.64xNx16.F16")), device="golden", block=BLOCK, target=12 * BLOCK)
    db = tmp_path / "c.sqlite"
    killed = []

    def kill_one(result):
        if not killed:
            pid = int(result.worker.rsplit(":", 1)[1])
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)

    assert run(c, db, workers=2, progress_s=0, window=8, on_block=kill_one)["blocks"] == 24
    rows = sqlite3.connect(db).execute("SELECT instr, block, vectors, worker FROM blocks").fetchall()
    assert len(rows) == 24 and len({(r[0], r[1]) for r in rows}) == 24
    assert sum(r[2] for r in rows) == 24 * BLOCK
    assert killed and any(r[3].endswith(f":{killed[0]}") for r in rows)
    assert any(not r[3].endswith(f":{killed[0]}") for r in rows), "the other worker finished the campaign"


def test_a_device_that_fails_is_reported_not_counted(tmp_path, capsys):
    c = Campaign((HMMA,), device="golden:F=24", **SMALL)
    # golden refuses F=99 (not exact in f64); the client now refuses it up front, so it is planted past
    # that check: a device that fails only on the workers, as a board or a GPU can
    object.__setattr__(c, "device", "golden:F=99")
    r = run_block(c, *HMMA, 0)
    assert r.status == "error" and "F" in r.message
    db = tmp_path / "c.sqlite"
    run(c, db, workers=1, progress_s=0)
    assert Store(db).blocks_done(c.id) == 0
    assert report(db) == 1
    assert "ERROR" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["run", "hopper", "HMMA.16816.F32", "-n", "-5"], "must be at least 1"),
    (["run", "hopper", "HMMA.16816.F32", "--seed", "-1"], "must be at least 0"),
    (["run", "hoper", "HMMA"], "unknown architecture 'hoper'"),
    (["run", "hopper", "HMMA.16816.F32", "--device", "nosuch"], "unknown backend 'nosuch'"),
    (["run", "hopper", "HMMA.16816.F32", "--device", "golden:G=1"], "'G' is not a golden.Params field"),
    (["replay", "/nonexistent.npz"], "not a campaign replay file"),
])
def test_bad_command_lines_get_one_clear_line(argv, message, capsys, tmp_path):
    if argv[0] == "run":
        argv = argv + ["--db", str(tmp_path / "x.sqlite"), "--workers", "1"]
    try:
        code = main(argv)
    except SystemExit as e:                    # argparse's own refusals
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "x.sqlite").exists(), "nothing is created for a refused campaign"


@pytest.mark.slow                      # about 21 s; DEVICE=core (a Verilator device) stays below
def test_an_rtl_campaign_gives_the_verdicts_of_cosim(tmp_path):
    """The Verilator units (builds shared with tests/cosim/test_cosim_rtl.py): the same vectors, the same verdict."""
    from cosim import run as cr
    pairs = (("hopper", "HGMMA.64xNx16.F32"),)
    c = Campaign(pairs, device="rtl", block=BLOCK, target=BLOCK, seed=3, stall=0.2)
    db = tmp_path / "c.sqlite"
    run(c, db, workers=1, progress_s=0)
    rows = Store(db).per_instruction(c.id)
    for pair in pairs:
        ins = golden.lookup(*pair)
        r = cr.run_instruction(ins, cr.Config(n=BLOCK, seed=3, stall=0.2, progress=0, rerun_with_waves=False))
        if r.status == "no RTL":
            pytest.skip(r.message)
        assert (r.status, r.vectors, r.mismatches) == ("ok", rows[pair]["vectors"], rows[pair]["mismatches"])


@pytest.mark.slow      # make test's budget: the core's Verilator build runs in tests/hw/test_tensor_core.py
def test_the_tensor_core_as_the_device(tmp_path):
    """DEVICE=core: each instruction through the Volta core's opcode (the build make cosim-core and
    tests/hw/test_tensor_core.py share)."""
    pairs = (("volta", "HMMA.884.F32.F32"), ("volta", "HMMA.884.F16.F16"))
    c = Campaign(pairs, device="core", block=BLOCK, target=BLOCK, stall=0.2)
    db = tmp_path / "c.sqlite"
    assert run(c, db, workers=1, progress_s=0)["blocks"] == 2
    rows = Store(db).per_instruction(c.id)
    assert all(rows[p]["vectors"] == BLOCK and rows[p]["mismatches"] == 0 for p in pairs)
    assert Campaign(pairs, device="core", stall=0.2).id != Campaign(pairs, device="rtl", stall=0.2).id


@pytest.mark.slow                      # a unit build of its own
def test_a_planted_rtl_fault_gets_cosims_verdict_and_first_vector(tmp_path):
    """The RTL with F one short (unit spec hw:params=F=22 on Volta's F = 23): campaign and cosim,
    both scored against the catalog's golden, fail on the same first vector of the same stream."""
    from cosim import run as cr
    pair = ("volta", "HMMA.884.F16.F16")
    c = Campaign((pair,), device="rtl", unit="hw:params=F=22", block=BLOCK, target=2 * BLOCK, seed=4)
    db = tmp_path / "c.sqlite"
    run(c, db, workers=1, progress_s=0)
    first = Store(db).first_failure(c.id, *pair)
    ins = golden.lookup(*pair)
    r = cr.run_instruction(ins, cr.Config(n=2 * BLOCK, seed=4, progress=0, rerun_with_waves=False),
                           "hw:params=F=22", reference=golden.dot_add)
    assert r.status == "MISMATCH" and first is not None
    assert int(r.failing["index"][0]) == first["index"]
    assert Store(db).per_instruction(c.id)[pair]["mismatches"] == r.mismatches


def test_the_bench_runs_and_prints_its_table(capsys):
    import argparse

    from campaign.bench import main as bench
    args = argparse.Namespace(instr="volta:HMMA.884.F16.F16", device="golden", blocks=1, workers="1")
    assert bench(args) == 0
    out = capsys.readouterr().out
    assert "golden.dot_add on this process" in out and "speed-up" in out
    assert [ln.split()[0] for ln in out.splitlines() if ln.strip().endswith("x")] == ["1"]
