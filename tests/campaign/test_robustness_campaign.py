"""Campaigns under bad input and faults (issue 25): one ``error:`` line and exit status 2 before any
cluster starts, and the database afterwards as it must be (blocks counted once, run records true,
other programs' files byte-identical).

Most cases need no cluster: a small database is filled through :class:`campaign.Store` (the rows a
run would write), and ``engine.cluster_client`` is replaced by one that fails, so a case that got
as far as starting a cluster fails the test.  Two tests start one real cluster each (a client
SIGKILLed, a Ctrl-C at the terminal).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from campaign import Campaign, Store, engine
from campaign.__main__ import main
from campaign.blocks import BlockResult
from golden.streams import BLOCK

pytest.importorskip("distributed")

REPO = Path(__file__).resolve().parent.parent.parent
HMMA = ("hopper", "HMMA.16816.F32")
SPEC = dict(device="golden", block=BLOCK, target=3 * BLOCK, seed=1)
RUN = ["run", *HMMA, "-n", str(3 * BLOCK), "--block", str(BLOCK), "--device", "golden", "--seed", "1",
       "--workers", "1", "--progress", "0"]


@pytest.fixture
def no_cluster(monkeypatch):
    """A case that reaches the cluster fails: every refusal must come before it."""
    def refuse(*a, **k):
        raise AssertionError("a cluster was started for a campaign that should have been refused")
    monkeypatch.setattr(engine, "cluster_client", refuse)


def _two_of_three(db) -> tuple[Store, Campaign]:
    """2 of the 3 blocks of :data:`SPEC`'s campaign written to ``db`` as a run writes them (the store
    left open)."""
    c = Campaign((HMMA,), **SPEC)
    s = Store(db)
    s.begin(c)
    run_id = s.run_started(c.id, 1, "local")
    for j in range(2):
        s.record(c.id, BlockResult(*HMMA, j, vectors=BLOCK, started=time.time(), worker="test:1"), None, run_id)
    s.run_finished(run_id, "interrupted")
    s.release_lease(c.id)
    return s, c


@pytest.fixture
def stored(tmp_path):
    """A database holding 2 of the 3 blocks of :data:`SPEC`'s campaign, written as a run writes them."""
    db = tmp_path / "c.sqlite"
    s, c = _two_of_three(db)
    s.close()
    return db, c


def _one_line(code, capsys, words):
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("note:")]
    assert code == 2, err
    assert "Traceback" not in err and len(lines) == 1 and lines[0].startswith("error: "), err
    assert words in lines[0], lines[0]


def _blocks(db, campaign=None):
    with sqlite3.connect(db) as con:
        if campaign is None:
            return con.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]
        return con.execute("SELECT COUNT(*) FROM blocks WHERE campaign = ?", (campaign,)).fetchone()[0]


# ---- the database refuses what would lose or mix work -------------------------------------------------

def test_fresh_with_resume_is_refused_and_nothing_is_deleted(stored, capsys, no_cluster):
    db, c = stored
    _one_line(main(RUN + ["--db", str(db), "--fresh", "--resume"]), capsys, "give one")
    assert _blocks(db, c.id) == 2


def test_resume_of_another_campaign_names_what_differs(stored, capsys, no_cluster):
    db, c = stored
    argv = [a if a != "1" or RUN[i - 1] != "--seed" else "2" for i, a in enumerate(RUN)]
    _one_line(main(argv + ["--db", str(db), "--resume=on"]), capsys,
              f"the nearest, {c.id}, differs in seed 1 there, 2 here")
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM campaigns").fetchone()[0] == 1
    assert _blocks(db) == 2


def test_a_second_run_of_a_live_campaign_is_refused(stored, capsys, no_cluster):
    """Another process holds the campaign (its lease): a second run would do every block again."""
    db, c = stored
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with sqlite3.connect(db) as con:
            con.execute("INSERT INTO leases VALUES (?, ?, ?, ?, ?)",
                        (c.id, socket.gethostname(), other.pid, time.time(), time.time()))
        _one_line(main(RUN + ["--db", str(db), "--resume"]), capsys, f"being run by process {other.pid}")
        assert _blocks(db, c.id) == 2
    finally:
        other.kill()
        other.wait()
    s = Store(db)                                  # its process gone, the lease lapses at once
    s.take_lease(c.id)
    s.release_lease(c.id)
    s.close()


def test_report_of_a_missing_file_creates_nothing(tmp_path, capsys):
    missing = tmp_path / "nosuch" / "c.sqlite"
    _one_line(main(["report", str(missing)]), capsys, "no such file")
    assert not missing.exists() and not missing.parent.exists()


FOREIGN = {
    "own tables": "CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO things VALUES (1, 'x');",
    "own blocks table": "CREATE TABLE blocks (id INTEGER PRIMARY KEY, shape TEXT); "
                        "INSERT INTO blocks VALUES (7, 'cube');",
}


@pytest.mark.parametrize("kind", sorted(FOREIGN))
@pytest.mark.parametrize("command", ["run", "report"])
def test_another_programs_sqlite_file_is_left_byte_identical(kind, command, tmp_path, capsys, no_cluster):
    db = tmp_path / "theirs.sqlite"
    with sqlite3.connect(db) as con:
        con.executescript(FOREIGN[kind])
    con.close()
    before = db.read_bytes()
    argv = RUN + ["--db", str(db)] if command == "run" else ["report", str(db)]
    _one_line(main(argv), capsys, "is not a campaign results database")
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["theirs.sqlite"]     # no -wal, no -shm


def test_a_read_only_database_is_one_line(stored, capsys, no_cluster, monkeypatch):
    db, c = stored
    before = db.read_bytes()
    if hasattr(os, "geteuid") and os.geteuid() == 0:   # root may write any file: refuse it as a user would be
        import campaign.store as store
        real = os.access
        monkeypatch.setattr(store.os, "access",
                            lambda p, mode: False if Path(p) == db and mode & os.W_OK else real(p, mode))
    db.chmod(0o444)
    try:
        _one_line(main(RUN + ["--db", str(db), "--resume"]), capsys, "is read-only")
    finally:
        db.chmod(0o644)
    assert db.read_bytes() == before


# ---- bad specs: refused before any cluster starts -----------------------------------------------------

SPECS = {
    "golden F=abc": (["--device", "golden:F=abc"], "backend 'golden:F=abc': Params.F='abc' is not valid; valid:"),
    "golden F=-3": (["--device", "golden:F=-3"], "Params.F=-3 is not valid; valid: an integer >= 0"),
    "golden F=99": (["--device", "golden:F=99"], "device 'golden:F=99' cannot run hopper HMMA.16816.F32: "),
    "unit bogus": (["--device", "rtl", "--unit", "bogus"], "unknown unit 'bogus'"),
    "unit pipeline=9": (["--device", "rtl", "--unit", "hw:pipeline=9"], "--unit hw:pipeline=9 (PIPELINE=)"),
    "PIPELINE with golden": (["--unit", "hw:pipeline=2"], "applies to the rtl device"),
    "progress -1": (["--progress", "-1"], "argument --progress: must be seconds >= 0"),
    "resume maybe": (["--resume=maybe"], "RESUME=maybe: expected yes or no"),
}


@pytest.mark.parametrize("case", sorted(SPECS))
def test_bad_specs_are_refused_before_the_cluster(case, tmp_path, capsys, no_cluster):
    extra, words = SPECS[case]
    db = tmp_path / "c.sqlite"
    try:
        code = main(RUN + ["--db", str(db)] + extra)
    except SystemExit as e:                         # the parser's refusals
        code = e.code
    _one_line(code, capsys, words)
    assert not db.exists()


def test_workers_are_capped_at_the_cores_and_at_one_per_board():
    cores = engine.default_workers()
    assert engine.plan_workers(None, "rtl") == (cores, None)
    n, note = engine.plan_workers(500, "rtl")
    assert n == cores and note.startswith(f"note: --workers (WORKERS=) 500 capped at {cores}")
    assert engine.plan_workers(None, "fpga:socket://127.0.0.1:5555") == (1, None)
    assert engine.plan_workers(None, "dut:unit.toml") == (cores, None)     # a simulator: one copy per worker
    n, note = engine.plan_workers(2, "fpga:/dev/ttyUSB0")
    assert n == 1 and "one board, which serves one client at a time" in note


def test_make_takes_the_yes_no_words_for_resume_and_fresh():
    done = subprocess.run(["make", "-n", "-o", ".venv/.installed", "campaign", "RESUME=on", "FRESH=no"],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0 and "--resume=on" in done.stdout and "--fresh=no" in done.stdout
    from campaign.__main__ import build_parser
    args = build_parser().parse_args(["run", "a", "b", "--resume=on", "--fresh=no"])
    assert args.resume is True and args.fresh is False
    assert build_parser().parse_args(["run", "a", "b", "--resume"]).resume is True


# ---- schedulers that are not dask schedulers ----------------------------------------------------------

class _Service:
    """A TCP service on localhost that says ``greeting`` on connect (None: nothing, ever)."""

    def __init__(self, greeting: bytes | None):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.greeting, self.conns = greeting, []
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def address(self) -> str:
        return f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.greeting is not None:
                conn.sendall(self.greeting)

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.mark.parametrize("greeting, words", [
    (None, "accepted the connection but did not greet within 0.5 s"),
    (b"SSH-2.0-OpenSSH_9.6\r\n", "does not speak dask's protocol"),
    (b"", "closed the connection"),
])
def test_a_scheduler_that_is_not_one_is_refused_in_one_line(greeting, words, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(engine, "HANDSHAKE_S", 0.5)
    service = _Service(greeting)
    if greeting == b"":
        service.greeting = None
        threading.Thread(target=lambda: (time.sleep(0.1), [c.close() for c in service.conns]), daemon=True).start()
    try:
        t0 = time.monotonic()
        code = main(RUN[:-4] + ["--db", str(tmp_path / "c.sqlite"), "--scheduler", service.address])
        assert time.monotonic() - t0 < 10
    finally:
        service.close()
    _one_line(code, capsys, words)
    assert _blocks(tmp_path / "c.sqlite") == 0


def test_replay_on_an_unreachable_board_is_one_line(tmp_path, capsys):
    """A replay file whose device is a board that is not there (nothing listens on port 1)."""
    c = Campaign((HMMA,), **SPEC)
    k = 8
    r = BlockResult(*HMMA, 0, vectors=1, mismatches=1)
    r.failing = dict(a=np.zeros((1, k), np.uint64), b=np.zeros((1, k), np.uint64), c=np.zeros(1, np.uint64),
                     got=np.ones(1, np.uint64), expected=np.zeros(1, np.uint64), index=np.zeros(1, np.int64))
    object.__setattr__(c, "device", "fpga:socket://127.0.0.1:1")
    path = engine._write_replay(c, r, tmp_path)
    _one_line(main(["replay", path]), capsys, "cannot open socket://127.0.0.1:1")


# ---- a client killed or interrupted: the database stays true ------------------------------------------

def _start(db, n_blocks):
    """``python -m campaign run`` in its own process group (a terminal's), golden on one worker."""
    argv = [sys.executable, "-m", "campaign", "run", *HMMA, "-n", str(n_blocks * BLOCK), "--block", str(BLOCK),
            "--device", "golden", "--workers", "1", "--progress", "0", "--db", str(db)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # a shell starts a job with SIGINT at its default; a process started with SIGINT ignored keeps it
    # ignored (Python, like nohup'd programs, leaves it so), and a pytest worker may be such a parent
    return subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _sigint_ignored_in(pid: int) -> bool | None:
    """Whether process ``pid`` ignores SIGINT (Linux's /proc SigIgn mask; None where unreadable)."""
    try:
        mask = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("SigIgn:"))
    except (OSError, StopIteration):
        return None
    return bool(int(mask.split()[1], 16) & (1 << (signal.SIGINT - 1)))


def _wait_for_blocks(db, proc, n, limit=120.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        assert proc.poll() is None, proc.communicate()
        try:
            if db.exists() and _blocks(db) >= n:
                return
        except sqlite3.OperationalError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"fewer than {n} blocks in {limit} s")


def _run_record(db):
    with sqlite3.connect(db) as con:
        (runs,) = con.execute("SELECT blocks, outcome FROM runs").fetchall()
        return runs, _blocks(db)


def test_a_sigkilled_client_leaves_a_true_run_record(tmp_path):
    db = tmp_path / "c.sqlite"
    proc = _start(db, 200)
    try:
        _wait_for_blocks(db, proc, 3)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)            # the client, its scheduler and workers, all at once
        proc.communicate()
    (blocks, outcome), stored = _run_record(db)
    assert blocks == stored >= 3 and outcome is None
    c = Campaign((HMMA,), device="golden", block=BLOCK, target=200 * BLOCK)
    import io

    from campaign.report import report
    out = io.StringIO()
    report(db, out=out)
    assert f"{stored:,} block(s), ended without a word (killed)" in out.getvalue()
    s = Store(db)
    s.take_lease(c.id)                                  # the killed client's lease lapsed with it
    s.close()


def test_ctrl_c_stops_the_run_without_worker_tracebacks(tmp_path):
    db = tmp_path / "c.sqlite"
    proc = _start(db, 5000)                            # far more than can finish between the poll and the signal
    try:
        _wait_for_blocks(db, proc, 2)
        ignored = _sigint_ignored_in(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)             # the terminal sends it to the whole group
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the client ignored Ctrl-C for 60 s (SIGINT ignored in it: {ignored}; "
                                 f"in this test process: {_sigint_ignored_in(os.getpid())})") from None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, f"exit {proc.returncode}; stderr: {err!r}; stdout: {out[-600:]!r}"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "rerun with --resume" in err
    (blocks, outcome), stored = _run_record(db)
    assert outcome == "interrupted" and blocks == stored >= 2


# ---- options a device would ignore, blocks that cannot fit, files that are not what they seem ----------

V2K = "dut:examples/dut/dotp_v2k/unit.toml"
IGNORED = {
    "lanes on a design": (["--device", V2K, "--lanes", "4"],
                          f"--lanes 4 (LANES=) applies to the rtl device (the dot-adds per cycle of the unit it "
                          f"builds); the device {V2K} has the lanes its description fixes"),
    "lanes on golden": (["--device", "golden", "--lanes", "1"], "the device golden has none"),
    "lanes on the core": (["--device", "core", "--lanes", "2"], "the device core is a whole tensor core"),
    "stall on golden": (["--device", "golden", "--stall", "0.3"],
                        "--stall 0.3 (STALL=) applies to the simulated devices rtl, core and dut:path/unit.toml"),
    "stall on a drill": (["--device", "golden:F=24", "--stall", "0"], "the device golden:F=24 has none"),
    "a huge block": (["--block", "81920000000"],
                     "BLOCK 81,920,000,000 vectors would not fit in a worker's memory; valid: a multiple of 8,192 "
                     "from 8,192 to 3,833,856"),
    "golden drill on a scaled instruction": (["--device", "golden:F=99"],
                                             "device 'golden:F=99' cannot run blackwell UTCOMMA.MXF4.E8: "),
}


@pytest.mark.parametrize("case", sorted(IGNORED))
def test_options_a_device_ignores_and_huge_blocks_are_refused(case, tmp_path, capsys, no_cluster):
    extra, words = IGNORED[case]
    db = tmp_path / "c.sqlite"
    argv = RUN + ["--db", str(db)] + extra
    if case.startswith("golden drill"):            # a block-scaled instruction: its scales' shape
        argv = ["run", "blackwell", "UTCOMMA.MXF4.E8"] + argv[3:]
    _one_line(main(argv), capsys, words)
    assert not db.exists()


def test_a_campaign_refuses_what_its_device_would_ignore():
    with pytest.raises(ValueError, match="--lanes 4 .* the device golden has none"):
        Campaign((HMMA,), device="golden", lanes=4)
    with pytest.raises(ValueError, match="--stall 0.3 .* the device gpu has none"):
        Campaign((HMMA,), device="gpu", stall=0.3)
    import golden
    from campaign.spec import BLOCK_MEMORY, bytes_per_vector, max_block
    most, size, widest = max_block([HMMA, ("blackwell", "UTCOMMA.MXF4.E8")])
    assert widest == ("blackwell", "UTCOMMA.MXF4.E8") and most % BLOCK == 0
    assert most * size <= BLOCK_MEMORY < (most + BLOCK) * size
    assert size == bytes_per_vector(golden.lookup(*widest))
    Campaign((HMMA,), device="golden", block=most // BLOCK * BLOCK if most <= 3_833_856 else BLOCK)


def test_report_of_a_folder_names_the_file_to_give(stored, capsys):
    db, _ = stored
    _one_line(main(["report", str(db.parent)]), capsys, f"results database {db.parent} is a folder, give the "
                                                        f".sqlite file (DB= / --db); in it: c.sqlite")
    _one_line(main(RUN + ["--db", str(db.parent)]), capsys, "is a folder, give the .sqlite file")


def _unshare_works() -> bool:
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.parametrize("killed", [False, True], ids=["closed", "killed-with-its-wal"])
def test_report_reads_a_database_on_a_read_only_mount(killed, tmp_path):
    """The folder mounted read-only (in a user namespace of its own): SQLite cannot make its WAL index
    there, and the report reads the file anyway; a campaign killed while writing left rows in the
    -wal file, and they are read too."""
    if not _unshare_works():
        pytest.skip("no user namespaces here (unshare -rm) to mount a folder read-only")
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "c.sqlite"
    s, c = _two_of_three(db)
    if killed:
        shutil.copytree(folder, tmp_path / "copy")        # what a killed run leaves: the file, its -wal, -shm
        s.close()
        shutil.rmtree(folder)
        (tmp_path / "copy").rename(folder)
        assert (folder / "c.sqlite-wal").stat().st_size
    else:
        s.close()
    script = (f"mount --bind -o ro {folder} {folder} && touch {folder}/x 2>/dev/null && exit 9; "
              f"exec {sys.executable} -m campaign report {db}")
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 1, done.stderr           # 1: the campaign is incomplete (2 of 3 blocks)
    assert "Traceback" not in done.stderr and "2/3" in done.stdout and "16,384" in done.stdout, done


def test_replay_of_a_designs_run_names_the_command_that_replays_it(tmp_path, capsys):
    """A replay file written by make cosim DUT=... is not a campaign's: the message names the command
    that replays it (python -m cosim replay refuses it too)."""
    import json
    path = tmp_path / "ampere_HMMA.1688.F32_seed1.npz"
    meta = {"arch": "ampere", "instr": "HMMA.1688.F32", "lanes": 1, "seed": 1, "mismatches": 1, "vectors": 1,
            "vectors_kind": "mixed", "dut": "examples/dut/dotp_v2k/unit.toml"}
    np.savez_compressed(path, meta=json.dumps(meta), a=np.zeros((1, 8), np.uint64), b=np.zeros((1, 8), np.uint64),
                        c=np.zeros(1, np.uint64), got=np.ones(1, np.uint64), expected=np.zeros(1, np.uint64),
                        index=np.zeros(1, np.int64))
    _one_line(main(["replay", str(path)]), capsys,
              f"{path}: not a campaign replay file (saved by a run of the design examples/dut/dotp_v2k/unit.toml, "
              f"no campaign/device in its meta data); replay it with python -m cosim.dut replay {path}")


def test_replay_of_a_campaign_whose_device_is_refused_names_the_file(tmp_path, capsys):
    """A campaign's replay file whose design has since been removed."""
    import json
    gone = f"dut:{tmp_path}/gone/unit.toml"
    path = tmp_path / "hopper_HMMA.16816.F32_block0.npz"
    meta = {"arch": "hopper", "instr": "HMMA.16816.F32", "campaign": "0123456789abcdef", "device": gone,
            "block": 0, "seed": 1, "vectors_kind": "mixed", "lanes": 1, "mismatches": 1, "vectors": 1, "unit": None}
    np.savez_compressed(path, meta=json.dumps(meta), a=np.zeros((1, 8), np.uint64), b=np.zeros((1, 8), np.uint64),
                        c=np.zeros(1, np.uint64), got=np.ones(1, np.uint64), expected=np.zeros(1, np.uint64),
                        index=np.zeros(1, np.int64))
    _one_line(main(["replay", str(path)]), capsys, f"{path}: its device {gone} was refused: ")


@pytest.mark.parametrize("package", ["cosim", "cosim.dut"])
def test_a_campaigns_replay_file_given_to_cosim_names_campaign_replay(tmp_path, package):
    """A campaign's replay file (device dut:...) handed to cosim's or cosim.dut's replay: one line naming
    the command that replays it, python -m campaign replay (each pointed at the other before)."""
    import json
    path = tmp_path / "ampere_HMMA.1688.F32_block0.npz"
    meta = {"arch": "ampere", "instr": "HMMA.1688.F32", "campaign": "0123456789abcdef",
            "device": "dut:examples/dut/dotp_v2k/unit.toml", "block": 0, "seed": 1, "vectors_kind": "mixed",
            "lanes": 1, "mismatches": 1, "vectors": 1, "unit": None}
    np.savez_compressed(path, meta=json.dumps(meta), a=np.zeros((1, 8), np.uint64), b=np.zeros((1, 8), np.uint64),
                        c=np.zeros(1, np.uint64), got=np.ones(1, np.uint64), expected=np.zeros(1, np.uint64),
                        index=np.zeros(1, np.int64))
    done = subprocess.run([sys.executable, "-m", package, "replay", str(path)], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("error: ") and f"python -m campaign replay {path}" in lines[0], lines[0]


class _InterruptedAfter:
    """A connection whose statement ``sql`` is carried out and then meets Ctrl-C, as when SIGINT
    arrives while SQLite waits for its lock: Python raises it as the call returns."""

    def __init__(self, db, sql):
        self.db, self.sql = db, sql

    def execute(self, sql, *args):
        cur = self.db.execute(sql, *args)
        if sql == self.sql:
            self.sql = None
            raise KeyboardInterrupt
        return cur

    def __getattr__(self, name):
        return getattr(self.db, name)


@pytest.mark.parametrize("sql", ["BEGIN IMMEDIATE", "COMMIT"])
def test_ctrl_c_on_either_side_of_a_blocks_transaction_keeps_the_run_record(tmp_path, sql):
    """The run's closing record ("interrupted") is written whether Ctrl-C lands after BEGIN (a
    transaction left open would swallow it when the store closes) or after COMMIT (nothing to undo)."""
    db = tmp_path / "c.sqlite"
    s, c = _two_of_three(db)
    run_id = s.run_started(c.id, 1, "local")
    s.db = _InterruptedAfter(s.db, sql)
    with pytest.raises(KeyboardInterrupt):
        s.record(c.id, BlockResult(*HMMA, 2, vectors=BLOCK, started=time.time(), worker="test:1"), None, run_id)
    s.db = s.db.db
    s.run_finished(run_id, "interrupted")
    s.close()
    with sqlite3.connect(db) as con:
        outcome, blocks = con.execute("SELECT outcome, blocks FROM runs WHERE rowid = ?", (run_id,)).fetchone()
    assert outcome == "interrupted" and blocks == (1 if sql == "COMMIT" else 0)
