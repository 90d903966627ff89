"""The FPGA command line and the board driver under bad input and faults (issue 25).

Bad options are refused by the parser, in one line, before any simulator or bitstream is built.  A
board that goes away (reset, unplugged, the simulated board stopped) is the driver's own
:class:`fpga.host.driver.LinkLost`, one line, in ``identify``, ``run``, ``selftest`` and ``probe --device
fpga:``; a busy board is named as busy.  The board is :class:`tests.fpga.test_fpga_driver.FakeBoard` (a
board in Python) behind a TCP socket, as ``python -m fpga sim --serve`` serves the simulated one, so
no Verilator build is needed.
"""

from __future__ import annotations

import socket
import threading
import types

import numpy as np
import pytest

pytest.importorskip("serial")

import golden  # noqa: E402
from fpga.__main__ import _parser, config_from, main  # noqa: E402
from fpga.board.config import BoardConfig  # noqa: E402
from fpga.host.driver import BoardError, BoardLink, LinkLost, LinkTimeout  # noqa: E402
from tests.fpga.test_fpga_driver import FakeBoard  # noqa: E402

TF32 = ("hopper", "HMMA.1684.F32.TF32")


class Served:
    """``FakeBoard(cfg)`` behind ``socket://127.0.0.1:PORT``, one client at a time (as the simulated
    board serves); ``answers``: requests answered before the connection is dropped (a board reset)."""

    def __init__(self, cfg: BoardConfig, answers: int | None = None, faults=()):
        self.cfg, self.answers, self.faults = cfg, answers, faults
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"socket://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self):
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        board = FakeBoard(self.cfg, faults=self.faults)
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                board.write(data)
                if self.answers is not None and len(board.log) > self.answers:
                    return                             # dropped mid-request, as a board reset drops it
                conn.sendall(board.read(1 << 20))

    def close(self):
        self.sock.close()


@pytest.fixture
def served():
    made = []

    def make(cfg=None, answers=None, faults=()):
        s = Served(cfg or BoardConfig.from_names(*TF32, depth=4), answers, faults)
        made.append(s)
        return s
    yield make
    for s in made:
        s.close()


def _one_line(code, capsys, words):
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2, err
    assert "Traceback" not in err and len(lines) == 1 and lines[0].startswith("error: "), err
    assert words in lines[0], lines[0]


def _code(argv):
    try:
        return main(argv)
    except SystemExit as e:                            # the parser's refusals
        return e.code


# ---- options refused by the parser, before any build ----------------------------------------------------

HGMMA = ["hopper", "HGMMA.64xNx16.F32"]
OPTIONS = {
    "run -n 0": (["run", "--port", "socket://127.0.0.1:1", "-n", "0"], "argument -n: must be at least 1, got 0"),
    "run -n -5": (["run", "--port", "socket://127.0.0.1:1", "-n", "-5"], "argument -n: must be at least 1"),
    "sim -n -1": (["sim", *HGMMA, "-n", "-1"], "argument -n: must be at least 1, got -1"),
    "baud 0": (["sim", *HGMMA, "--baud", "0"], "argument --baud: must be at least 1, got 0"),
    "port 99999": (["sim", *HGMMA, "--serve", "--port", "99999"], "argument --port: must be 0..65535, got 99999"),
    "seed -4": (["sim", *HGMMA, "--seed", "-4"], "argument --seed: must be at least 0, got -4"),
    "waves maybe": (["sim", *HGMMA, "--waves=maybe"], "WAVES=maybe: expected yes or no"),
    "yosys bogus": (["fit", *HGMMA, "--yosys", "0.0.0.bogus"], "is not a YoWASP Yosys release number"),
    "selftest blocks 0": (["selftest", *HGMMA, "--blocks", "0"], "argument --blocks: must be at least 1, got 0"),
    "selftest block-len 0": (["selftest", *HGMMA, "--block-len", "0"], "argument --block-len: must be 1..65535"),
    "selftest seed -1": (["selftest", *HGMMA, "--seed", "-1"], "argument --seed: must be 0..18446744073709551615"),
    "selftest kind": (["selftest", *HGMMA, "--kind", "9"], "argument --kind: invalid choice: '9'"),
}


@pytest.mark.parametrize("case", sorted(OPTIONS))
def test_bad_options_are_one_line_before_any_build(case, capsys):
    argv, words = OPTIONS[case]
    _one_line(_code(argv), capsys, words)


def test_waves_takes_the_yes_no_words_from_make():
    import subprocess
    from pathlib import Path
    done = subprocess.run(["make", "-n", "-o", ".venv/.installed", "fpga-sim", "WAVES=on"],
                          cwd=Path(__file__).resolve().parent.parent.parent, capture_output=True, text=True)
    assert done.returncode == 0 and "--waves=on" in done.stdout
    for word, want in (("on", True), ("yes", True), ("no", False), ("0", False)):
        assert _parser().parse_args(["sim", *HGMMA, f"--waves={word}"]).waves is want
    assert _parser().parse_args(["sim", *HGMMA, "--waves"]).waves is True


# ---- the board driver: a board that goes away, a busy board -------------------------------------------

def test_a_board_reset_mid_run_is_one_line_in_identify_and_run(served, capsys):
    _one_line(main(["identify", "--port", served(answers=1).url]), capsys, "was lost while")
    _one_line(main(["run", "--port", served(answers=1).url, "-n", "8"]), capsys, "was lost while")


def test_a_board_reset_mid_selftest_is_one_line(served, capsys):
    argv = ["selftest", *TF32, "--blocks", "1", "--block-len", "4"]
    cfg = config_from(_parser().parse_args(argv))
    _one_line(main(argv + ["--port", served(cfg, answers=1).url]), capsys, "was lost while")


def test_probe_on_a_board_that_goes_away_or_runs_another_instruction(served, capsys):
    from probe.__main__ import main as probe_main
    _one_line(probe_main([*TF32, "--device", f"fpga:{served(answers=1).url}"]), capsys, "was lost while")
    _one_line(probe_main([*HGMMA, "--device", f"fpga:{served().url}"]), capsys,
              "runs hopper HMMA.1684.F32.TF32, not hopper HGMMA.64xNx16.F32")


def test_a_busy_board_is_named_as_busy(served):
    s = served()
    first = BoardLink(s.url, timeout=2.0)                  # holds the board
    try:
        with pytest.raises(LinkTimeout, match="is another client connected to it"):
            BoardLink(s.url, timeout=0.3)
    finally:
        first.close()


def test_the_driver_refuses_bad_selftest_requests_before_packing_them():
    import re
    cfg = BoardConfig.from_names(*TF32, depth=4)
    fake = FakeBoard(cfg)
    board = BoardLink(fake)
    sent = len(fake.log)
    for kw, words in ((dict(seed=-1), "seed must be an integer in 0..2**64-1"),
                      (dict(seed=1 << 64), "seed must be an integer in 0..2**64-1"),
                      (dict(kind=9), "unknown self-test kind 9"),
                      (dict(block_len=0), "block_len must be 1..65535"),
                      (dict(blocks=0), "at least one block")):
        args = {**dict(seed=1, kind=1, first=0, blocks=1, block_len=4), **kw}
        with pytest.raises(ValueError, match=re.escape(words)):
            board.selftest(**args)
    assert len(fake.log) == sent                       # nothing was sent for any of them
    with pytest.raises(ValueError, match="seed must be"):
        board.selftest_capture(-1, 1, 0, 1)
    assert not isinstance(LinkLost("x"), ValueError) and isinstance(LinkLost("x"), BoardError)


def test_ctrl_c_during_a_selftest_keeps_what_is_done():
    """The board answers one request, then the user presses Ctrl-C: the blocks checked are kept."""
    from fpga.board.selftest.model import SelfTestSpec
    from fpga.host.selftest import run_selftest
    cfg = BoardConfig.from_names(*TF32, depth=4)
    spec = SelfTestSpec(cfg.instruction_objects[0], cfg.lanes, 1, "normal", 4)
    calls = []

    def selftest(seed, kind, first, n, block_len):
        calls.append(first)
        if len(calls) > 1:
            raise KeyboardInterrupt
        lo = first // block_len
        sigs = spec.signatures(golden.dot_add(spec.ins, *spec.operands(lo, n)))
        return [list(map(int, s)) for s in sigs], 100, n * block_len * cfg.lanes
    board = types.SimpleNamespace(config=cfg, selftest=selftest)
    report = run_selftest(board, blocks=6, block_len=4, chunk=2)
    assert report.interrupted and sorted(report.blocks) == [0, 1] and all(report.blocks.values())
    line = report.summary().splitlines()[0]
    assert ": INTERRUPTED: 2 blocks" in line and "the 2 block(s) checked before it are kept, all OK" in line


def test_replay_of_a_file_for_another_instruction_names_it(served, capsys, tmp_path):
    from cosim.failures import write_failures
    ins = golden.lookup(*HGMMA)
    z = np.zeros((1, ins.k), np.uint64)
    res = types.SimpleNamespace(ins=ins, mismatches=1, vectors=1, failing=dict(
        a=z, b=z, c=np.zeros(1, np.uint64), got=np.ones(1, np.uint64), expected=np.zeros(1, np.uint64),
        index=np.zeros(1, np.int64)))
    path = write_failures(res, tmp_path, seed=1, lanes=1, vectors="mixed")
    _one_line(main(["replay", str(path), "--port", served().url]), capsys,
              "holds vectors of hopper HGMMA.64xNx16.F32; the board at socket://127.0.0.1:")


@pytest.mark.skipif(not hasattr(__import__("os"), "openpty"), reason="needs a pseudo-terminal")
def test_a_serial_port_another_program_holds_is_busy():
    """A serial port is opened exclusively: a second opener is told the board is busy, by name."""
    import os

    from fpga.host.driver import BoardBusy, _open
    master, slave = os.openpty()
    path = os.ttyname(slave)
    first = _open(path, 115200, 0.05)
    try:
        with pytest.raises(BoardBusy, match=f"the board at {path} is busy: another program holds its port"):
            _open(path, 115200, 0.05)
    finally:
        first.close()
        os.close(master)
        os.close(slave)


# ---- a design of one's own: options it would ignore, a simulated board's real causes ---------------------

V2K = "examples/dut/dotp_v2k/unit.toml"


@pytest.mark.parametrize("argv, given", [
    (["sim", "all", "all", "--dut", V2K, "--lanes", "2"], "--lanes"),
    (["sim", "all", "all", "--dut", V2K, "--core"], "--core"),
    (["sim", "all", "all", "--dut", V2K, "--pipeline", "2"], "--pipeline"),
    (["sim", "all", "all", "--dut", V2K, "--clock", "50"], "--clock"),
    (["selftest", "all", "all", "--dut", V2K, "--lanes", "2"], "--lanes"),
    (["build", "all", "all", "--dut", V2K, "--core"], "--core"),
])
def test_unit_options_with_a_design_of_ones_own_are_refused(argv, given, capsys, monkeypatch):
    """The description fixes the design: --lanes and the other unit options were dropped without a word
    by fpga sim and selftest; now refused in one line, before Yosys or Verilator is run."""
    import fpga.board.dut
    monkeypatch.setattr(fpga.board.dut, "dut_board", lambda *a, **k: pytest.fail("the design was read: too late"))
    code = _code(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"error: --dut {V2K} builds your design as it is: "
                                                                 f"its description fixes the lanes"), err
    assert f"leave out {given}" in err, err


class _FakeSim:
    """A simulated board in Python: ``served``'s socket, ``running`` as given, the executable's last words."""

    def __init__(self, url, running=True, stderr=""):
        self.url, self._running, self.exe = url, running, "build/fpga-sim/x/board_sim"
        self.stats = {}
        self._stderr = stderr

    @property
    def running(self):
        return self._running

    def stop(self):
        self.stats = {"returncode": None if self._running else -11, "stderr": self._stderr}
        return self.stats

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _simulated(monkeypatch, sim):
    import fpga.host.sim.cli as cli
    build = types.SimpleNamespace(source="cached", seconds=0.0, dir=None, wave_format=None)
    monkeypatch.setattr(cli, "build", lambda *a, **k: build)
    monkeypatch.setattr(cli, "BoardSim", lambda *a, **k: sim)
    monkeypatch.setattr(cli, "SIM_TIMEOUT_S", 0.5)


def test_a_simulated_design_that_never_answers_is_named_not_the_serial_link(served, capsys, monkeypatch):
    """The board's link answers IDENTIFY, the design never gives a result: the driver's "is the board
    programmed?" is a real board's question; a simulated one says the design never answered."""
    argv = ["sim", *TF32, "-n", "2"]
    cfg = config_from(_parser().parse_args(argv))
    board = served(cfg, faults=[None] + ["silence"] * 50)
    _simulated(monkeypatch, _FakeSim(board.url))
    _one_line(_code(argv), capsys, "the design never answered: the simulated board's link answered IDENTIFY, "
                                   "but the board's unit gave no result within 0.5 s")
    err = capsys.readouterr().err
    assert "programmed" not in err and "baud" not in err


def test_a_simulated_design_that_never_answers_names_its_description(served, monkeypatch):
    import fpga.host.sim.cli as cli
    from fpga.host.sim import SimError
    cfg = BoardConfig.from_names(*TF32, depth=4)
    board = served(cfg, faults=[None] + ["silence"] * 50)
    _simulated(monkeypatch, _FakeSim(board.url))
    dut = types.SimpleNamespace(prep=types.SimpleNamespace(desc=types.SimpleNamespace(name="mute",
                                                                                       path="x/unit.toml")))
    with pytest.raises(SimError, match=r"the design never answered: .* the design mute \(x/unit.toml\) gave no "
                                       r"result within 0.5 s; its \[handshake\] or \[reset\] in x/unit.toml "
                                       r"may not match"):
        cli.main(cfg, n=2, dut=dut, out=__import__("io").StringIO())


def test_a_simulated_board_that_stopped_is_named_with_its_last_words(served, capsys, monkeypatch):
    """The simulation executable died (a design's $fatal, a crash): not "cannot open socket" or "was the
    board reset": the simulation stopped, and what it said last."""
    argv = ["sim", *TF32, "-n", "2"]
    cfg = config_from(_parser().parse_args(argv))
    board = served(cfg, answers=1)
    _simulated(monkeypatch, _FakeSim(board.url, running=False,
                                     stderr="%Error: dotp.v:40: Assertion failed\nboard_sim: 12 cycles in 0.1 s"))
    _one_line(_code(argv), capsys, "the simulated board stopped (exit -11) while running the board's unit: "
                                   "%Error: dotp.v:40: Assertion failed")


def test_a_simulated_board_that_does_not_build_is_one_line_naming_the_error(capsys, monkeypatch):
    """Verilator refuses the design (here a delay it needs --timing for): the error it printed, in one
    line with the build log's path; it was a traceback (the co-simulation's BuildError escaped)."""
    import fpga.host.sim.cli as cli
    from cosim.build import BuildError

    def refuse(*a, **k):
        raise BuildError("verilator failed (exit 1) building the board simulation; log b/build.log:\n"
                         "$ verilator --cc board.v dotp.v\n"
                         "%Error-NEEDTIMINGOPT: dotp.v:36:17: Use --timing or --no-timing to specify how delays "
                         "should be handled\n%Error: Exiting due to 1 error(s)")
    monkeypatch.setattr(cli, "build_board_sim", refuse)
    _one_line(_code(["sim", *TF32, "-n", "2"]), capsys,
              "the simulated board did not build: %Error-NEEDTIMINGOPT: dotp.v:36:17: Use --timing or --no-timing "
              "to specify how delays should be handled (verilator failed (exit 1) building the board simulation; "
              "log b/build.log)")


# ---- records from builds: files that are not what they should be --------------------------------------

@pytest.mark.parametrize("text, words", [
    ('{"design": "x",\n  "used": {oops}\n}', "report.json: not valid JSON at line 2, column 12: Expecting property"),
    ('{"design": "x"}', "report.json: not a report python -m fpga build writes: no field 'timing_met'"),
    ("[1, 2]", "report.json: not a report python -m fpga build writes (a JSON list, not an object)"),
])
@pytest.mark.parametrize("give", ["folder", "file"])
def test_records_from_a_build_with_a_bad_report_name_the_file(text, words, give, tmp_path, capsys):
    import shutil

    from fpga.toolchain.records import MANIFEST
    manifest = tmp_path / "records.toml"
    shutil.copy(MANIFEST, manifest)
    before = manifest.read_bytes()
    build = tmp_path / "build"
    build.mkdir()
    (build / "report.json").write_text(text)
    where = build if give == "folder" else build / "report.json"
    _one_line(_code(["records", "--manifest", str(manifest), "--from-build", str(where)]), capsys,
              f"{build / words}")
    assert manifest.read_bytes() == before
