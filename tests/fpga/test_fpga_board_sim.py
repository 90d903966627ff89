"""The whole board proven without a board: ``make fpga-sim`` end to end.

The real board top (UART PHY at the ULX3S's 25 clocks per bit, host link, buffers, the unit or a
tensor core) runs under Verilator with its serial pins on a TCP socket, and the real driver talks
to it through ``socket://``: identify with the configuration hash, random and structured dot-adds
equal to golden, planted link faults reported and recovered from.  One FDA, one block-scaled GDFS
and one FDRDA unit and a tensor core of three instructions, briefly here and at length under the
slow marker.  A board simulation build takes ~10-15 s (cached by its Verilog afterwards).
"""

import io

import numpy as np
import pytest

import golden
from cosim import toolchain
from fpga import BoardConfig, BoardLink, BoardMismatch
from fpga.host import run as board_run
from fpga.host.sim import BoardSim
from fpga.host.sim.cli import SIM_TIMEOUT_S, build

CONFIGS = {
    "FDA": ("hopper", "HGMMA.64xNx16.F32"),
    "GDFS": ("blackwell", "UTCOMMA.MXF4.E8"),
    "FDRDA": ("cdna3", "v_mfma_f32_32x32x8_f16"),
    "core": ("hopper", "HGMMA.64xNx16.F32,HGMMA.64xNx16.F16,QGMMA.64xNx32.F32.E4M3.E4M3"),
}


def config(kind: str) -> BoardConfig:
    arch, instr = CONFIGS[kind]
    return BoardConfig.from_names(arch, instr, core=kind == "core")


@pytest.fixture(scope="module")
def built():
    """Board simulators by kind, built on first use."""
    try:
        toolchain.setup()
    except toolchain.ToolchainError as e:
        pytest.skip(f"no Verilator toolchain: {e}")
    cache = {}

    def get(kind):
        if kind not in cache:
            cache[kind] = build(config(kind), out=io.StringIO())
        return cache[kind]
    return get


def run_sim(built, kind: str, n: int, tmp_path) -> tuple[list, list, str]:
    cfg = config(kind)
    out = io.StringIO()
    with BoardSim(built(kind), cfg.clocks_per_bit) as sim, \
            BoardLink(sim.url, expect=cfg, timeout=SIM_TIMEOUT_S) as board:
        results = board_run.run_board(board, n=n, seed=3, failures_dir=tmp_path, out=out)
        problems = board_run.check_recovery(board, out)
    return results, problems, out.getvalue()


def check(results, problems, cfg, n):
    assert [r.ins.name for r in results] == list(cfg.instructions)
    for r in results:
        assert r.vectors == n and r.mismatches == 0 and r.ok, r.message
    assert problems == []


# Every board top runs under slow (a Verilator build of a board top costs about a minute of CPU on
# the 2-core machine): make test builds one board top in tests/fpga/test_fpga_selftest.py (the
# self-test over the simulated UART, a planted fault caught), and checks the link's recovery from
# damaged and cut frames in Amaranth's simulator (tests/fpga/test_fpga_link.py)
@pytest.mark.slow
@pytest.mark.parametrize("kind", list(CONFIGS))
def test_board_simulation_matches_golden_and_recovers(built, kind, tmp_path):
    n = 24
    results, problems, out = run_sim(built, kind, n, tmp_path)
    check(results, problems, config(kind), n)
    assert "planted corrupted frame (bad CRC): board answered BAD_CRC" in out
    assert "planted truncated frame: board answered TIMEOUT" in out


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(CONFIGS))
def test_board_simulation_at_length(built, kind, tmp_path):
    n = 1500
    results, problems, _ = run_sim(built, kind, n, tmp_path)
    check(results, problems, config(kind), n)


@pytest.mark.slow                      # about 18 s; the self-test's planted fault stays in make test
def test_a_planted_wrong_result_is_caught_saved_and_traced(built, tmp_path, monkeypatch):
    """The scoring is a real check: one flipped bit in what the board returns is a MISMATCH, with the
    failing vector saved in cosim's replay format and golden's trace printed."""
    cfg = config("FDRDA")
    ins = cfg.instruction_objects[0]
    original = BoardLink.dot_add
    flipped = []

    def flip_one(self, *args):
        d = original(self, *args)
        for i in range(len(d)):                # the first result where a flipped bit is not NaN for NaN
            wrong = d.copy()
            wrong[i] ^= 1
            if not golden.same_results(ins, wrong[i:i + 1], d[i:i + 1]).all():
                flipped.append(i)
                return wrong
        raise AssertionError("no result to plant a fault in")
    monkeypatch.setattr(BoardLink, "dot_add", flip_one)
    out = io.StringIO()
    with BoardSim(built("FDRDA"), cfg.clocks_per_bit) as sim, BoardLink(sim.url, timeout=SIM_TIMEOUT_S) as board:
        (res,) = board_run.run_board(board, n=16, failures_dir=tmp_path, out=out)
        assert res.status == "MISMATCH" and res.mismatches == 1
        assert int(res.failing["index"][0]) == flipped[0]
        assert f"first failing vector #{flipped[0]}" in out.getvalue() and "python -m fpga replay" in out.getvalue()
        from cosim.failures import load_failures
        meta, arrays = load_failures(res.failures_file)
        assert (meta["arch"], meta["instr"]) == (ins.arch, ins.name)
        assert arrays["got"][0] == arrays["expected"][0] ^ 1
        monkeypatch.setattr(BoardLink, "dot_add", original)
        again = board_run.replay(board, res.failures_file)
        assert again.ok and again.vectors == 1            # the board itself was right


@pytest.mark.slow   # make test's 8-minute budget (docs/verification.md)
def test_driver_refuses_a_board_running_something_else(built):
    cfg = config("FDRDA")
    other = BoardConfig.from_names("cdna3", "v_mfma_f32_32x32x8_bf16")
    with BoardSim(built("FDRDA"), cfg.clocks_per_bit) as sim:
        with pytest.raises(BoardMismatch, match=r"runs cdna3 v_mfma_f32_32x32x8_f16 .*expected cdna3 "
                                                r"v_mfma_f32_32x32x8_bf16"):
            BoardLink(sim.url, expect=other, timeout=SIM_TIMEOUT_S)
        # without expect: rebuilt from the blob, checked
        with BoardLink(sim.url, timeout=SIM_TIMEOUT_S) as board:
            assert board.config == cfg
            rng = np.random.default_rng(0)
            a, b, c, _, _ = golden.vectors.random_operands(board.config.instruction_objects[0], 300, rng)
            d = board.dot_add(board.config.instructions[0], a, b, c)    # 300 rows: two buffer loads
            assert (d == golden.dot_add(board.config.instruction_objects[0], a, b, c)).all()


@pytest.mark.slow                      # a board build of its own (FDRDA), about 22 s
def test_probe_backend_runs_on_the_simulated_board(built):
    from probe import Unavailable, backend_from_name
    cfg = config("FDRDA")
    ins = cfg.instruction_objects[0]
    with BoardSim(built("FDRDA"), cfg.clocks_per_bit) as sim:
        backend = backend_from_name(f"fpga:{sim.url}", timeout=SIM_TIMEOUT_S)
        try:
            rng = np.random.default_rng(1)
            a, b, c, _, _ = golden.vectors.random_operands(ins, 40, rng)
            assert (backend(ins, a, b, c) == golden.dot_add(ins, a, b, c)).all()
            with pytest.raises(Unavailable,
                               match=r"runs cdna3 v_mfma_f32_32x32x8_f16, not cdna3 v_mfma_f32_32x32x8_bf16"):
                backend(golden.lookup("cdna3", "v_mfma_f32_32x32x8_bf16"), a, b, c)
        finally:
            backend.close()
