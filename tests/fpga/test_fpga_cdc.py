"""The link on a slow clock, the compute on an unrelated fast one (fpga.board.crossing), in Amaranth's simulator.

The same requests go to a one-clock link and to a two-clock link (fast clock 0.37 or 2.3 times the
slow clock's period): the results, RUN's cycles (counted on the compute clock), the self-test's
signatures and its capture are the same bytes.  A crossing without its synchroniser (a planted
fault) hangs the board, and the test sees it.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from amaranth.hdl import DomainRenamer
from amaranth.lib import wiring
from amaranth.sim import Simulator

import golden
from fpga.board.config import BoardConfig
from fpga.board.crossing import FAST
from fpga.board.link import HostLink
from fpga.board.protocol import Command, Status, capture_request, encode_request, parse_selftest, selftest_request
from tests.fpga.test_fpga_link import CLOCKS_PER_BIT, Host, Linked, operands, run_and_read, small_config

SLOW_PERIOD = 1e-6
FAST_PERIODS = {"fast-unrelated": 0.37e-6, "fast-slower": 2.3e-6}


class TwoClocks(Linked):
    """The link on ``sync``, the unit on ``fast`` (or both on ``sync`` without ``two_domains``)."""

    def __init__(self, config, two_domains, plant=None):
        self.link = HostLink(config, CLOCKS_PER_BIT, two_domains=two_domains, plant=plant)
        unit = config.unit()
        self.unit = DomainRenamer(FAST)(unit) if two_domains else unit
        wiring.Component.__init__(self, {})


def simulate(config, scenario, fast_period=None, plant=None):
    dut = TwoClocks(config, fast_period is not None, plant)

    async def bench(ctx):
        await scenario(Host(ctx, dut.link))

    sim = Simulator(dut)
    sim.add_clock(SLOW_PERIOD)
    if fast_period is not None:
        sim.add_clock(fast_period, domain=FAST)
    sim.add_testbench(bench)
    sim.run()


def _selftest_config():
    return BoardConfig.from_names("hopper", "HMMA.1684.F32.TF32", lanes=2, depth=16, timeout_bytes=3,
                                  clock_hz=4_000_000)


def _session(cfg, seen):
    ins = cfg.instruction_objects[0]
    ops = operands(ins, 13, seed=7)

    async def scenario(host):
        seen["d"], seen["cycles"] = await run_and_read(host, cfg, ins, ops)
        seen["d2"], seen["cycles2"] = await run_and_read(host, cfg, ins, ops)     # a second run: done re-arms
        if not cfg.core:
            body = await host.ok(Command.SELFTEST, selftest_request(5, 1, 0, 0xFFFFFFFE, 3, 4))
            seen["sigs"], _, seen["vectors"] = parse_selftest(body, 3, cfg.lanes)
            await host.ok(Command.SELFTEST_CAPTURE, capture_request(5, 1, 0, 0xFFFFFFFE, 6))
            seen["captured"] = await host.ok(Command.READ, struct.pack("<HH", 0, 6))
    return ins, ops, scenario


def test_two_clocks_answer_the_bytes_one_clock_answers():
    """The same session on one clock, then with the compute clock faster and unrelated to the
    link's, then slower: the same results, counts, signatures and captures."""
    cfg = _selftest_config()
    one = {}
    ins, ops, scenario = _session(cfg, one)
    simulate(cfg, scenario)
    want = golden.dot_add(ins, *ops[:3])
    for fast in sorted(FAST_PERIODS):
        two = {}
        _, _, scenario2 = _session(cfg, two)
        simulate(cfg, scenario2, fast_period=FAST_PERIODS[fast])
        assert np.array_equal(two["d"], want) and np.array_equal(two["d2"], want), fast
        assert two["cycles"] == one["cycles"] == two["cycles2"] == 13 // cfg.lanes + 1 + cfg.latency, fast
        assert two["sigs"] == one["sigs"] and two["vectors"] == one["vectors"] == 12 * cfg.lanes, fast
        assert two["captured"] == one["captured"] and len(set(two["captured"])) > 1, fast


def test_a_done_flag_crossing_without_its_synchroniser_is_caught():
    """Planted fault: the fast side's one-cycle done pulse read by the slow clock directly; some RUN's
    answer never comes."""
    cfg = _selftest_config()
    ins = cfg.instruction_objects[0]
    ops = operands(ins, 13, seed=7)

    async def scenario(host):
        await host.ok(Command.LOAD, struct.pack("<H", 0) + cfg.pack(ins, *ops)[:7 * cfg.in_bytes])
        for _ in range(8):                               # RUN alone: its answer waits on the done pulse
            host.send(encode_request(Command.RUN, struct.pack("<H", 7)))
            status, _ = await host.response(limit=3000)
            assert status == Status.OK

    with pytest.raises(AssertionError, match="the board hung"):
        simulate(cfg, scenario, fast_period=FAST_PERIODS["fast-unrelated"], plant="done")
    simulate(cfg, scenario, fast_period=FAST_PERIODS["fast-unrelated"])            # the same without the plant


def test_a_plant_needs_two_domains():
    with pytest.raises(ValueError, match="two_domains"):
        HostLink(small_config(), CLOCKS_PER_BIT, plant="done")
    with pytest.raises(ValueError, match="plant must be one of"):
        HostLink(small_config(), CLOCKS_PER_BIT, two_domains=True, plant="start")


# ---- the board top ---------------------------------------------------------------------------------

@pytest.mark.slow                      # about 8 s
def test_board_top_without_a_platform_takes_a_fast_clock_port_when_asked():
    from amaranth.back import verilog

    from fpga.board.top import BoardTop
    from tests.fpga.test_fpga_link import _ports
    two = verilog.convert(BoardTop(small_config(), two_domains=True), name="board")
    assert _ports(two) == {"clk", "rst", "fast_clk", "fast_rst", "uart_rx", "uart_tx"}
    assert _ports(verilog.convert(BoardTop(small_config()), name="board")) == {"clk", "rst", "uart_rx", "uart_tx"}


@pytest.mark.slow      # two board tops prepared; make test: test_fpga_clocks' 16 MHz top has the bridge and both clocks
def test_a_pll_board_defaults_to_two_domains_with_the_link_on_the_oscillator():
    boards = pytest.importorskip("amaranth_boards.ulx3s")
    from fpga.board.top import BoardTop
    cfg = _selftest_config()                         # 4 MHz design clock from the 25 MHz oscillator
    two = boards.ULX3S_85F_Platform().prepare(BoardTop(cfg), name="board").files
    one = boards.ULX3S_85F_Platform().prepare(BoardTop(cfg, two_domains=False), name="board").files
    assert "EHXPLLL" in two["board.il"] and "EHXPLLL" in one["board.il"]
    assert "bridge" in two["board.il"] and "bridge" not in one["board.il"]
    # nextpnr is told both clocks: the oscillator's (the link) and the PLL's (the compute)
    assert "fast_clk\" 4000000.0 HZ" in two["board.lpf"] and "\" 25000000.0 HZ" in two["board.lpf"]


# ---- the whole board under Verilator, the compute clock unrelated to the link's ---------------------

@pytest.mark.slow
def test_two_domain_board_simulation_runs_dot_adds_and_the_selftest(tmp_path):
    """``fpga.host.sim``'s main drives ``fast_clk`` (period 0.37 of ``clk``'s): the driver's dot-adds equal
    golden and the self-test passes, as on the one-clock board."""
    import io

    from cosim import toolchain
    from fpga import BoardLink
    from fpga.host import run as board_run
    from fpga.host.selftest import run_selftest
    from fpga.host.sim import BoardSim, has_fast_clock
    from fpga.host.sim.cli import SIM_TIMEOUT_S, build
    try:
        toolchain.setup()
    except toolchain.ToolchainError as e:
        pytest.skip(f"no Verilator toolchain: {e}")
    cfg = BoardConfig("hopper", "HMMA.1684.F32.TF32", lanes=2)
    b = build(cfg, out=io.StringIO(), two_domains=True)
    assert has_fast_clock((b.dir / "board.v").read_text())
    out = io.StringIO()
    with BoardSim(b, cfg.clocks_per_bit) as sim, BoardLink(sim.url, expect=cfg, timeout=SIM_TIMEOUT_S) as board:
        results = board_run.run_board(board, n=40, seed=3, failures_dir=tmp_path, out=out)
        assert all(r.ok for r in results), out.getvalue()
        report = run_selftest(board, seed=6, kind="bits", blocks=4, block_len=16, chunk=2, failures_dir=tmp_path,
                              out=out)
        assert report.ok, report.summary()


# ---- the structural check (fpga.board.cdc_check) -----------------------------------------------------------

def test_every_crossing_of_the_two_domain_top_is_approved_and_a_bare_flag_is_found():
    from fpga.board.cdc_check import crossings
    from fpga.board.top import BoardTop
    cfg = _selftest_config()
    assert crossings(BoardTop(cfg, two_domains=True)) == []
    assert crossings(BoardTop(cfg, two_domains=False)) == []
    # planted: the done pulse without its synchroniser
    assert crossings(BoardTop(cfg, two_domains=True, plant="done")) == ["ComputeBridge: done (fast) -> sync"]


def test_the_check_sees_handshaked_values_that_are_not_declared(monkeypatch):
    """Planted: the bridge forgets to declare its handshaked registers; the check lists every one of
    them that a register of the other domain reads."""
    from fpga.board import cdc_check
    from fpga.board.top import BoardTop
    monkeypatch.setattr(cdc_check._Walk, "fragment", _forgetting(cdc_check._Walk.fragment))
    found = cdc_check.crossings(BoardTop(_selftest_config(), two_domains=True))
    assert any("cycles (fast) -> sync" in f for f in found) and any("run_count (sync) -> fast" in f for f in found)
    assert any("seed (sync) -> fast" in f for f in found)


def _forgetting(fragment):
    def walk(self, frag, renames, approved):
        fragment(self, frag, renames, approved)
        self.handshaked.clear()
    return walk
