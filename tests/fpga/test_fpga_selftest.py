"""The on-board self-test: its operand generator and signatures equal their numpy model bit for bit,
and on the simulated board it matches golden and catches a planted datapath fault at the right vector.
"""

import numpy as np
import pytest
from amaranth.sim import Simulator

import golden
from cosim.payload import PayloadLayout
from fpga.board.config import BoardConfig
from fpga.board.selftest import model
from fpga.board.selftest.crc import SplitCRC
from fpga.board.selftest.engine import SelfTestEngine
from fpga.board.selftest.generator import SelfTestGenerator

# scaled and unscaled, 16-, 32-bit and narrow formats; a CRC over 16- and 32-bit results; NaN
# canonicalised (FDRDA: exact_nan False) and not
GENERATOR_CASES = [("hopper", "HMMA.1684.F32.TF32", 2), ("blackwell", "UTCOMMA.MXF4.E8", 2),
                   ("cdna3", "v_mfma_f32_32x32x8_f16", 3), ("hopper", "HGMMA.64xNx16.F16", 1)]


def _words(ins, lanes, ops) -> list:
    words = PayloadLayout(ins, lanes).pack(*ops)
    return [sum(int(w) << (64 * i) for i, w in enumerate(row)) for row in words]


@pytest.mark.parametrize("kind", list(model.KINDS))
@pytest.mark.parametrize("arch,name,lanes", GENERATOR_CASES)
def test_generator_gateware_equals_its_model(arch, name, lanes, kind):
    """Many cycles, several lanes, both kinds, entry counters crossing 2**32: every beat equals the model."""
    ins = golden.lookup(arch, name)
    dut = SelfTestGenerator(ins, lanes)
    seed, first, n = 0x0123456789ABCDEF ^ len(name) << 40, 0xFFFFFFF0, 64
    got = []

    async def bench(ctx):
        ctx.set(dut.seed, seed)
        ctx.set(dut.kind, model.KINDS[kind])
        for cycle in range(n + dut.latency):
            ctx.set(dut.index, (first + cycle) & 0xFFFFFFFF)
            ctx.set(dut.valid, cycle < n)
            await ctx.tick()
            if ctx.get(dut.o_valid):
                got.append(ctx.get(dut.payload.as_value()))
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert got == _words(ins, lanes, model.operands(ins, lanes, seed, kind, first, n))


def test_normal_kind_gives_finite_normal_values_near_one_another():
    from golden.formats import NORMAL, decode
    for arch, name, _ in GENERATOR_CASES:
        ins = golden.lookup(arch, name)
        a, b, c, sa, sb = model.operands(ins, 1, 7, "normal", 0, 200)
        for fmt, x in ((ins.formats[0], a), (ins.formats[1], b), (ins.formats[2], c),
                       (ins.scale_format, sa), (ins.scale_format, sb)):
            if x is None:
                continue
            d = decode(fmt, x)
            assert (d.cls == NORMAL).all() and d.exp.max() - d.exp.min() <= 3, (name, fmt)
        d = decode(ins.formats[0], model.operands(ins, 1, 7, "bits", 0, 200)[0])
        assert len(np.unique(d.cls)) >= 3, name          # bits: specials and subnormals too


def test_signature_model_is_amaranths_crc():
    from amaranth.lib.crc.catalog import CRC32_MPEG_2
    rng = np.random.default_rng(5)
    for width in (16, 32, 64, 6):
        words = rng.integers(0, 1 << min(width, 63), (3, 9), dtype=np.uint64)
        assert [int(x) for x in model.crc32(words, width)] == \
            [CRC32_MPEG_2(data_width=width).compute([int(w) for w in row]) for row in words]


@pytest.mark.parametrize("width", [16, 32, 64, 6])
def test_the_split_crc_is_the_models_crc_over_gaps_and_restarts(width):
    """SplitCRC's register two cycles after each chain's last word is the model's CRC of the chain
    (words with idle cycles between them, each chain from the initial value)."""
    rng = np.random.default_rng(width)
    chains = [rng.integers(0, 1 << min(width, 63), n, dtype=np.uint64) for n in (1, 5, 3, 8)]
    dut, got = SplitCRC(width), []

    async def bench(ctx):
        for chain in chains:
            for i, word in enumerate(chain):
                while rng.random() < 0.3:               # an idle cycle
                    ctx.set(dut.valid, 0)
                    await ctx.tick()
                ctx.set(dut.valid, 1)
                ctx.set(dut.first, i == 0)
                ctx.set(dut.data, int(word))
                await ctx.tick()
            ctx.set(dut.valid, 0)
            await ctx.tick().repeat(2)
            got.append(ctx.get(dut.crc))
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert got == [int(model.crc32(chain[None, :], width)[0]) for chain in chains]


def _fake_result(ins, payload_lane: int) -> int:
    """What the stand-in unit answers for one lane: bits of the operands (NaNs among them)."""
    fd = ins.formats[3]
    d = (payload_lane ^ payload_lane >> 77) & ((1 << fd.storage_bits) - 1)
    if d & 3 == 0:                                  # a quarter NaNs, with all sorts of payloads
        d |= ((1 << fd.exp_bits) - 1) << fd.man_bits | 1
    return d


@pytest.mark.parametrize("arch,name,lanes", [("cdna3", "v_mfma_f32_32x32x8_f16", 2),
                                             ("hopper", "HGMMA.64xNx16.F16", 1)])
def test_engine_signatures_equal_the_model_under_stalls(arch, name, lanes):
    """The engine's stream into a stand-in unit (random stalls, results after random delays) is the
    generator's, and its signatures are the model's, while a slow reader fills the signature FIFO."""
    cfg = BoardConfig(arch, name, lanes=lanes)
    ins = cfg.instruction_objects[0]
    dut = SelfTestEngine(cfg)
    rng = np.random.default_rng(11)
    seed, kind, first, blocks, block_len = 0xFEEDF00DCAFEBEEF, 0, 0xFFFFFFF7, 7, 5
    lane_bits = PayloadLayout(ins, 1).in_width
    issued, sigs, state = [], [], {}

    async def bench(ctx):
        for sig, value in ((dut.seed, seed), (dut.kind, kind), (dut.first, first), (dut.blocks, blocks),
                           (dut.block_len, block_len), (dut.capture, 0), (dut.start, 1)):
            ctx.set(sig, value)
        await ctx.tick()
        ctx.set(dut.start, 0)
        queue = []
        for _ in range(3000):
            ready, take_sig = rng.random() < 0.7, rng.random() < 0.08
            ctx.set(dut.unit_i.ready, ready)
            ctx.set(dut.sigs.ready, take_sig)
            if queue and rng.random() < 0.6:
                ctx.set(dut.results.valid, 1)
                ctx.set(dut.results.payload.as_value(), queue.pop(0))
            else:
                ctx.set(dut.results.valid, 0)
            if ready and ctx.get(dut.unit_i.valid):
                word = ctx.get(dut.unit_i.payload.as_value())
                issued.append(word)
                lanes_d = [_fake_result(ins, word >> (j * lane_bits) & ((1 << lane_bits) - 1)) for j in range(lanes)]
                queue.append(sum(d << (j * ins.formats[3].storage_bits) for j, d in enumerate(lanes_d)))
            if take_sig and ctx.get(dut.sigs.valid):
                sigs.append(ctx.get(dut.sigs.payload))
            await ctx.tick()
            if not ctx.get(dut.busy) and not ctx.get(dut.sigs.valid) and not queue:
                break
        state["vectors"], state["cycles"] = ctx.get(dut.vectors), ctx.get(dut.cycles)
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    n = blocks * block_len
    ops = model.operands(ins, lanes, seed, kind, first, n)
    assert issued == _words(ins, lanes, ops)
    d = np.array([_fake_result(ins, w) for w in PayloadLayout(ins, 1).pack(*ops).astype(object)
                  .dot([1 << (64 * i) for i in range(PayloadLayout(ins, 1).in_words)])], np.uint64)
    expected = model.signatures(ins, lanes, d, block_len)
    assert [[s >> (32 * j) & 0xFFFFFFFF for j in range(lanes)] for s in sigs] == expected.tolist()
    assert state["vectors"] == n * lanes and state["cycles"] >= n
    if not ins.params.exact_nan:               # the NaN rule was exercised
        assert (model.canonical_results(ins, d) != d).any()


def _engine_signatures(ins, lanes, seed, kind, first, blocks, block_len):
    """The model's signatures of a run of the engine on a unit that returns ``_fake_result``."""
    ops = model.operands(ins, lanes, seed, kind, first, blocks * block_len)
    layout = PayloadLayout(ins, 1)
    d = np.array([_fake_result(ins, w) for w in layout.pack(*ops).astype(object)
                  .dot([1 << (64 * i) for i in range(layout.in_words)])], np.uint64)
    return model.signatures(ins, lanes, d, block_len).tolist()


def test_a_run_between_two_selftests_leaves_the_signatures_alone():
    """The unit is shared: a RUN's results reach the engine while it is idle.  They must not advance
    its block counter or push a signature (they did: the self-test after a RUN that followed a
    self-test read stale signatures first, found on the two-clock Verilator board)."""
    cfg = BoardConfig("cdna3", "v_mfma_f32_32x32x8_f16", lanes=1)
    ins = cfg.instruction_objects[0]
    dut = SelfTestEngine(cfg)
    lane_bits = PayloadLayout(ins, 1).in_width
    runs = [(7, 0, 0, 2, 3), (9, 1, 40, 3, 4)]              # seed, kind, first, blocks, block_len
    sigs = []

    async def one_run(ctx, seed, kind, first, blocks, block_len):
        for sig, value in ((dut.seed, seed), (dut.kind, kind), (dut.first, first), (dut.blocks, blocks),
                           (dut.block_len, block_len), (dut.capture, 0), (dut.start, 1)):
            ctx.set(sig, value)
        await ctx.tick()
        ctx.set(dut.start, 0)
        ctx.set(dut.unit_i.ready, 1)
        ctx.set(dut.sigs.ready, 1)
        pending = []
        for _ in range(200):
            ctx.set(dut.results.valid, bool(pending))
            if pending:
                ctx.set(dut.results.payload.as_value(), pending.pop(0))
            if ctx.get(dut.unit_i.valid):
                pending.append(_fake_result(ins, ctx.get(dut.unit_i.payload.as_value()) & ((1 << lane_bits) - 1)))
            if ctx.get(dut.sigs.valid):
                sigs.append([ctx.get(dut.sigs.payload)])
            await ctx.tick()
            if not ctx.get(dut.busy) and not ctx.get(dut.sigs.valid) and not pending:
                break
        ctx.set(dut.results.valid, 0)

    async def bench(ctx):
        await one_run(ctx, *runs[0])
        ctx.set(dut.sigs.ready, 0)                           # what the engine pushes now is read below
        for n in range(11):                                  # a RUN's results, the engine idle
            ctx.set(dut.results.valid, 1)
            ctx.set(dut.results.payload.as_value(), 0x3F800000 + n)
            await ctx.tick()
        ctx.set(dut.results.valid, 0)
        await one_run(ctx, *runs[1])
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert sigs == [s for run in runs for s in _engine_signatures(ins, 1, *run)]


# ---- on the simulated board ------------------------------------------------------------------------

BOARD = ("hopper", "HMMA.1684.F32.TF32", 2)          # small: a board simulation builds in ~40 s
PLANT_SEED, PLANT_KIND, PLANT_BLOCK_LEN, PLANT_BLOCKS = 6, "normal", 16, 8


def _board_config():
    arch, name, lanes = BOARD
    return BoardConfig(arch, name, lanes=lanes)


@pytest.fixture(scope="module")
def sim_board():
    """``open(params=None)``: a connected BoardLink on the simulated board (its unit built with ``params``)."""
    import contextlib
    import io

    from cosim import toolchain
    from fpga import BoardLink
    from fpga.host.sim import BoardSim
    from fpga.host.sim.cli import SIM_TIMEOUT_S, build
    try:
        toolchain.setup()
    except toolchain.ToolchainError as e:
        pytest.skip(f"no Verilator toolchain: {e}")

    @contextlib.contextmanager
    def open_board(params=None):
        cfg = _board_config()
        b = build(cfg, out=io.StringIO(), params=params)
        with BoardSim(b, cfg.clocks_per_bit) as sim, BoardLink(sim.url, expect=cfg, timeout=SIM_TIMEOUT_S) as board:
            yield board
    return open_board


@pytest.mark.slow   # make test's 8-minute budget (docs/verification.md)
def test_selftest_on_the_simulated_board_matches_golden(sim_board, tmp_path):
    import io

    from fpga import BoardError
    from fpga.board.protocol import Command, selftest_request
    from fpga.host.selftest import run_selftest
    out = io.StringIO()
    with sim_board() as board:
        report = run_selftest(board, seed=PLANT_SEED, kind="bits", blocks=6, block_len=24, first_block=3, chunk=4,
                              failures_dir=tmp_path, out=out)
        assert report.ok, report.summary()
        assert sorted(report.blocks) == list(range(3, 9)) and report.board_vectors == 6 * 24 * 2
        assert report.board_cycles >= 6 * 24                  # an entry a cycle at best
        # the capture path returns what golden computes for the same generated operands
        spec = report.spec
        got = board.selftest_capture(spec.seed, model.KINDS["bits"], 5 * 24, 24)
        assert np.array_equal(got, golden.dot_add(spec.ins, *spec.operands(5)))
        # refusals: a kind, an opcode the board does not have, no blocks
        for payload in (selftest_request(1, 2, 0, 0, 1, 8), selftest_request(1, 0, 1, 0, 1, 8),
                        selftest_request(1, 0, 0, 0, 0, 8), selftest_request(1, 0, 0, 0, 1, 0)):
            with pytest.raises(BoardError, match="BAD_RANGE"):
                board.request(Command.SELFTEST, payload)
        assert run_selftest(board, seed=1, kind="normal", blocks=2, block_len=8, out=out).ok   # still works
    assert "differs" not in out.getvalue()


def _first_planted_difference(ins, params):
    """Independently of the self-test's host code: golden with the catalog's parameters and with
    ``params`` over the model's operand stream; (block, entry, lane) of the first difference and
    the blocks that differ."""
    import dataclasses
    lanes = BOARD[2]
    a, b, c, sa, sb = model.operands(ins, lanes, PLANT_SEED, PLANT_KIND, 0, PLANT_BLOCKS * PLANT_BLOCK_LEN)
    right = golden.dot_add(ins, a, b, c, sa, sb)
    wrong = golden.dot_add(dataclasses.replace(ins, params=params), a, b, c, sa, sb)
    rows = golden.mismatching(ins, wrong, right)
    entries = rows // lanes
    first = int(rows[0])
    return ((first // lanes) // PLANT_BLOCK_LEN, (first // lanes) % PLANT_BLOCK_LEN, first % lanes, first,
            sorted({int(e) // PLANT_BLOCK_LEN for e in entries}), wrong[first], right[first])


def test_selftest_catches_a_planted_datapath_fault_at_the_right_vector(sim_board, tmp_path):
    """The board's unit is built with F one larger than the catalog's while it identifies as the
    catalog's: the self-test names exactly the first vector golden says differs (not in block 0)."""
    import io

    from cosim.failures import load_failures
    from fpga.host.selftest import run_selftest
    cfg = _board_config()
    ins = cfg.instruction_objects[0]
    params = ins.params.with_(F=ins.params.F + 1)
    block, entry, lane, row, blocks, wrong, right = _first_planted_difference(ins, params)
    assert block > 0 and lane == 1                  # the choice of seed makes "right block, right lane" mean something
    out = io.StringIO()
    with sim_board(params) as board:
        report = run_selftest(board, seed=PLANT_SEED, kind=PLANT_KIND, blocks=PLANT_BLOCKS,
                              block_len=PLANT_BLOCK_LEN, failures_dir=tmp_path, out=out)
    assert not report.ok and report.mismatched == blocks, report.summary()
    f = report.failure
    assert (f.block, f.index, f.lane, f.row) == (block, entry, lane, row)
    assert (f.got, f.expected) == (int(wrong), int(right))
    text = out.getvalue()
    assert f"first failing vector: block {block}, entry {entry} of {PLANT_BLOCK_LEN}, lane {lane}" in text
    assert f"first failing vector #{row}:" in text and "=> d = " in text          # golden's trace
    meta, arrays = load_failures(report.failures_file)
    assert (meta["arch"], meta["instr"], meta["block"]) == (ins.arch, ins.name, block)
    assert int(arrays["index"][0]) == row and int(arrays["got"][0]) == int(wrong)


@pytest.mark.parametrize("argv,message", [
    (["--block-len", "0"], "argument --block-len: must be 1..65535, got 0"),
    (["--blocks", "0"], "argument --blocks: must be at least 1, got 0"),
    (["--first-block", str(1 << 22)], "do not fit the self-test's 32-bit entry counter"),
    (["--plant", "Q+1"], "has no integer parameter 'Q'"),
    (["--plant", "F"], "expected PARAM+N"),
    (["--plant", "F+1", "--port", "socket://127.0.0.1:1"], "--plant builds a simulated board"),
])
def test_selftest_command_line_refuses_bad_input_in_one_line(argv, message, capsys):
    from fpga.__main__ import main
    try:
        code = main(["selftest", "hopper", "HMMA.1684.F32.TF32", *argv])
    except SystemExit as e:                         # the parser's own refusals: one line too
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
