"""The host-link controller (fpga.board.link.HostLink) with its unit, byte by byte in Amaranth's simulator.

No UART here: request bytes go straight into the link's ``rx`` stream and response bytes come off
its ``tx`` stream.  Results are compared bit for bit with golden.dot_add; every fault the link
must survive (bad CRC, a truncated frame, bad commands, lengths and ranges, overflow) is planted
and the board is shown to answer the next request.  The last tests run the real driver
(fpga.host.driver.BoardLink) against the simulated gateware through a port object.
"""

from __future__ import annotations

import struct
from collections import deque

import numpy as np
import pytest
from amaranth import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

import golden
import hw
from fpga.board.config import BoardConfig
from fpga.board.link import HostLink
from fpga.board.protocol import REQUEST_SYNC, Command, FrameParser, Status, crc16, encode_request, parse_counters
from golden.vectors import random_operands

CLOCKS_PER_BIT = 4             # a byte-time is 40 cycles
TIMEOUT_BYTES = 3              # so the inter-byte timeout is 120 cycles


def small_config(**kw) -> BoardConfig:
    """A K=4 FDA unit: small enough to simulate thousands of cycles a second."""
    kw = {"depth": 16, "timeout_bytes": TIMEOUT_BYTES, "clock_hz": 4_000_000, **kw}
    return BoardConfig.from_names("hopper", "HMMA.1684.F32.TF32", **kw)


class Linked(wiring.Component):
    """The link and a unit, streams connected; the byte streams are the testbench's."""

    def __init__(self, config, unit=None):
        self.link = HostLink(config, CLOCKS_PER_BIT)
        self.unit = unit if unit is not None else config.unit()
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.link, m.submodules.unit = self.link, self.unit
        wiring.connect(m, self.link.unit_i, self.unit.i)
        wiring.connect(m, self.unit.o, self.link.unit_o)
        return m


class Host:
    """The host's side of the byte streams, one clock cycle per :meth:`step`.

    ``gap``: idle cycles between request bytes; ``tx_stall``: probability that the board's
    next byte is not taken this cycle.
    """

    def __init__(self, ctx, link, gap=0, tx_stall=0.0, seed=0):
        self.ctx, self.link = ctx, link
        self.gap, self.tx_stall = gap, tx_stall
        self.rng = np.random.default_rng(seed)
        self.queue = deque()
        self.wait = 0
        self.parser = FrameParser()
        self.cycle = 0
        self.framing_error = False

    async def step(self):
        ctx, link = self.ctx, self.link
        drive = bool(self.queue) and self.wait == 0
        if drive:
            ctx.set(link.rx.payload, self.queue.popleft())
            self.wait = self.gap
        elif self.wait:
            self.wait -= 1
        ctx.set(link.rx.valid, drive)
        ctx.set(link.framing_error, self.framing_error)
        self.framing_error = False
        ready = self.rng.random() >= self.tx_stall
        ctx.set(link.tx.ready, ready)
        _, _, valid, byte = await ctx.tick().sample(link.tx.valid, link.tx.payload)
        if valid and ready:
            self.parser.feed(bytes([byte]))
        self.cycle += 1

    def send(self, raw: bytes):
        self.queue.extend(raw)

    async def response(self, limit=20_000):
        """The next response frame ``(status, payload)``; fails when none comes in ``limit`` cycles."""
        start = self.cycle
        while (frame := self.parser.frame()) is None:
            assert self.cycle - start < limit, f"no response in {limit} cycles: the board hung"
            await self.step()
        return frame

    async def request(self, cmd, payload=b""):
        self.send(encode_request(cmd, payload))
        return await self.response()

    async def ok(self, cmd, payload=b""):
        status, body = await self.request(cmd, payload)
        assert status == Status.OK, f"{Command(cmd).name} answered {Status(status).name}"
        return body

    async def idle(self, cycles):
        for _ in range(cycles):
            await self.step()


def simulate(config, scenario, unit=None, **host_kw):
    """Run ``scenario(host)`` (an async function) against the link and the unit."""
    dut = Linked(config, unit)

    async def bench(ctx):
        await scenario(Host(ctx, dut.link, **host_kw))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


def load_payload(index, entries: bytes) -> bytes:
    return struct.pack("<H", index) + entries


def operands(ins, rows, seed=0):
    return random_operands(ins, rows, np.random.default_rng(seed))


async def run_and_read(host, config, ins, ops, frame_entries=8):
    """LOAD (frames of ``frame_entries``), RUN, READ (the same frames): the results and RUN's cycles."""
    rows = ops[2].shape[0]
    entries = config.entries(rows)
    data = config.pack(ins, *ops)
    for first in range(0, entries, frame_entries):
        n = min(frame_entries, entries - first)
        body = await host.ok(Command.LOAD,
                             load_payload(first, data[first * config.in_bytes:(first + n) * config.in_bytes]))
        assert struct.unpack("<H", body) == (n,)
    (cycles,) = struct.unpack("<I", await host.ok(Command.RUN, struct.pack("<H", entries)))
    out = b""
    for first in range(0, entries, frame_entries):
        out += await host.ok(Command.READ, struct.pack("<HH", first, min(frame_entries, entries - first)))
    return config.unpack(ins, out, rows), cycles


def flip_bit(results: np.ndarray, row: int, bit: int) -> np.ndarray:
    bad = results.copy()
    bad[row] ^= bad.dtype.type(1 << bit)
    return bad


# ---- results -------------------------------------------------------------------------------------

@pytest.mark.parametrize("gap, tx_stall", [(0, 0.0), (3, 0.5)], ids=["back-to-back", "gaps-and-stalls"])
def test_identify_load_run_read_match_golden(gap, tx_stall):
    cfg = small_config()
    ins = cfg.instruction_objects[0]
    ops = operands(ins, 13, seed=gap)
    want = golden.dot_add(ins, *ops[:3])
    seen = {}

    async def scenario(host):
        seen["blob"] = await host.ok(Command.IDENTIFY)
        seen["d"], seen["cycles"] = await run_and_read(host, cfg, ins, ops)
        seen["counters"] = parse_counters(await host.ok(Command.COUNTERS))

    simulate(cfg, scenario, gap=gap, tx_stall=tx_stall)
    assert seen["blob"] == cfg.identify_blob
    assert seen["d"].dtype == want.dtype and np.array_equal(seen["d"], want)
    assert not np.array_equal(flip_bit(seen["d"], 5, 0), want)         # the comparison sees one bit
    if not tx_stall:                                                   # the unit never waits
        assert seen["cycles"] == 13 + cfg.latency
    assert seen["counters"] == {"frames_ok": 7, "crc_errors": 0, "bad_frames": 0, "timeouts": 0,
                                "rx_overflows": 0, "framing_errors": 0, "skipped_bytes": 0}


def test_a_wrong_datapath_is_caught():
    """Planted fault: the board's unit rounds with F=20 instead of the instruction's F."""
    cfg = small_config()
    ins = cfg.instruction_objects[0]
    wrong = hw.dot_add_unit(ins, params=ins.params.with_(F=20))
    assert wrong.latency == cfg.latency
    ops = operands(ins, 16, seed=3)
    seen = {}

    async def scenario(host):
        seen["d"], _ = await run_and_read(host, cfg, ins, ops)

    simulate(cfg, scenario, unit=wrong)
    assert not np.array_equal(seen["d"], golden.dot_add(ins, *ops[:3]))


def test_tensor_core_subset_mixes_instructions_in_one_run():
    cfg = BoardConfig("hopper", ("HMMA.1684.F32.TF32", "HMMA.1688.F16", "HMMA.1688.F32.BF16"), core=True,
                      depth=16, timeout_bytes=TIMEOUT_BYTES, clock_hz=4_000_000)
    rows = 5
    cases = [(ins, operands(ins, rows, seed=n)) for n, ins in enumerate(cfg.instruction_objects)]
    seen = {}

    async def scenario(host):
        data = b"".join(cfg.pack(ins, *ops) for ins, ops in cases)
        await host.ok(Command.LOAD, load_payload(0, data))
        await host.ok(Command.RUN, struct.pack("<H", rows * len(cases)))
        seen["out"] = await host.ok(Command.READ, struct.pack("<HH", 0, rows * len(cases)))

    simulate(cfg, scenario)
    size = rows * cfg.out_bytes
    for n, (ins, ops) in enumerate(cases):
        got = cfg.unpack(ins, seen["out"][n * size:(n + 1) * size], rows)
        assert np.array_equal(got, golden.dot_add(ins, *ops[:3])), ins.name


# ---- damaged frames ------------------------------------------------------------------------------

def test_bad_crc_is_answered_and_the_board_stays_usable():
    cfg = small_config()
    seen = {}

    async def scenario(host):
        frame = bytearray(encode_request(Command.IDENTIFY))
        frame[-1] ^= 0x40
        host.send(bytes(frame))
        seen["bad"] = await host.response()
        seen["blob"] = await host.ok(Command.IDENTIFY)
        seen["counters"] = parse_counters(await host.ok(Command.COUNTERS))

    simulate(cfg, scenario)
    assert seen["bad"] == (Status.BAD_CRC, b"")
    assert seen["blob"] == cfg.identify_blob
    assert seen["counters"]["crc_errors"] == 1 and seen["counters"]["frames_ok"] == 2


def test_a_truncated_frame_times_out():
    cfg = small_config()
    ins = cfg.instruction_objects[0]
    timeout = TIMEOUT_BYTES * 10 * CLOCKS_PER_BIT
    seen = {}

    async def scenario(host):
        frame = encode_request(Command.LOAD, load_payload(0, cfg.pack(ins, *operands(ins, 2))))
        host.send(frame[:len(frame) // 2])
        while host.queue:
            await host.step()
        sent = host.cycle
        seen["timeout"] = await host.response()
        seen["after"] = host.cycle - sent
        seen["blob"] = await host.ok(Command.IDENTIFY)
        seen["counters"] = parse_counters(await host.ok(Command.COUNTERS))

    simulate(cfg, scenario)
    assert seen["timeout"] == (Status.TIMEOUT, b"")
    assert timeout <= seen["after"] <= timeout + 20          # not early, and the header is 4 bytes more
    assert seen["blob"] == cfg.identify_blob
    assert seen["counters"]["timeouts"] == 1


def test_bytes_sent_while_the_board_is_busy_overflow_and_are_reported():
    cfg = small_config()
    seen = {}

    async def scenario(host):
        counters = encode_request(Command.COUNTERS)
        host.send(encode_request(Command.IDENTIFY) + counters * 8)   # 48 bytes while the blob goes out
        seen["blob"] = await host.response()
        seen["next"] = [Status((await host.response(limit=500))[0]) for _ in range(3)]
        seen["counters"] = parse_counters(await host.ok(Command.COUNTERS))

    simulate(cfg, scenario)
    assert seen["blob"] == (Status.OK, cfg.identify_blob)
    # the FIFO kept 16 bytes: two whole COUNTERS frames and the start of a third; 32 were dropped
    assert seen["next"] == [Status.OVERFLOW, Status.OK, Status.TIMEOUT]
    assert seen["counters"]["rx_overflows"] == 48 - 16
    assert seen["counters"]["timeouts"] == 1


# ---- malformed requests --------------------------------------------------------------------------

def test_bad_command_length_and_range_are_refused():
    cfg = small_config(depth=4)
    ins = cfg.instruction_objects[0]
    ops = operands(ins, 4, seed=7)
    entries = cfg.pack(ins, *ops)
    other = cfg.pack(ins, *operands(ins, 2, seed=8))
    seen = {}

    async def scenario(host):
        await host.ok(Command.LOAD, load_payload(0, entries))
        refusals = {
            "unknown command": (0x7E, b""),
            "IDENTIFY with a payload": (Command.IDENTIFY, b"\x00"),
            "RUN without its count": (Command.RUN, b"\x01"),
            "LOAD with a partial entry": (Command.LOAD, load_payload(0, other[:-1])),
            "LOAD past the end": (Command.LOAD, load_payload(3, other)),
            "LOAD at a huge index": (Command.LOAD, load_payload(0xFFFF, other[:cfg.in_bytes])),
            "RUN of nothing": (Command.RUN, struct.pack("<H", 0)),
            "RUN past the end": (Command.RUN, struct.pack("<H", 5)),
            "READ past the end": (Command.READ, struct.pack("<HH", 2, 3)),
        }
        seen["refusals"] = {what: await host.request(cmd, payload) for what, (cmd, payload) in refusals.items()}
        seen["d"], _ = await run_and_read(host, cfg, ins, ops, frame_entries=4)
        seen["counters"] = parse_counters(await host.ok(Command.COUNTERS))

    simulate(cfg, scenario)
    got = {what: Status(status).name for what, (status, body) in seen["refusals"].items() if not body}
    assert got == {"unknown command": "BAD_COMMAND", "IDENTIFY with a payload": "BAD_LENGTH",
                   "RUN without its count": "BAD_LENGTH", "LOAD with a partial entry": "BAD_LENGTH",
                   "LOAD past the end": "BAD_RANGE", "LOAD at a huge index": "BAD_RANGE",
                   "RUN of nothing": "BAD_RANGE", "RUN past the end": "BAD_RANGE", "READ past the end": "BAD_RANGE"}
    # and the board still computes (run_and_read loads all four entries again: the partial LOAD wrote some)
    assert np.array_equal(seen["d"], golden.dot_add(ins, *ops[:3]))
    assert seen["counters"]["bad_frames"] == len(seen["refusals"])


def test_refused_range_load_leaves_the_buffer_alone():
    cfg = small_config(depth=4)
    ins = cfg.instruction_objects[0]
    ops = operands(ins, 4, seed=9)
    seen = {}

    async def scenario(host):
        await host.ok(Command.LOAD, load_payload(0, cfg.pack(ins, *ops)))
        junk = cfg.pack(ins, *operands(ins, 2, seed=10))
        seen["refused"] = await host.request(Command.LOAD, load_payload(3, junk))
        await host.ok(Command.RUN, struct.pack("<H", 4))
        seen["out"] = await host.ok(Command.READ, struct.pack("<HH", 0, 4))

    simulate(cfg, scenario)
    assert seen["refused"] == (Status.BAD_RANGE, b"")
    assert np.array_equal(cfg.unpack(ins, seen["out"], 4), golden.dot_add(ins, *ops[:3]))


def test_an_overlong_length_is_answered_at_once_and_skipped():
    cfg = small_config(depth=2)
    seen = {}

    async def scenario(host):
        header = bytes([REQUEST_SYNC, Command.LOAD]) + struct.pack("<H", cfg.max_length + 1)
        host.send(header)
        seen["early"] = await host.response(limit=40)          # long before any payload could come
        host.send(b"\x00" * 9)                                  # the payload, then a good frame
        seen["blob"] = await host.ok(Command.IDENTIFY)
        seen["counters"] = parse_counters(await host.ok(Command.COUNTERS))

    simulate(cfg, scenario)
    assert seen["early"] == (Status.BAD_LENGTH, b"")
    assert seen["blob"] == cfg.identify_blob
    assert seen["counters"]["skipped_bytes"] == 9 and seen["counters"]["bad_frames"] == 1


def test_counters_count_skips_and_framing_errors_and_reset_clears_them():
    cfg = small_config()
    seen = {}

    async def scenario(host):
        host.send(b"\x00\x11\x5a")                             # noise before a frame
        seen["blob"] = await host.ok(Command.IDENTIFY)
        host.framing_error = True
        await host.step()
        seen["before"] = parse_counters(await host.ok(Command.COUNTERS))
        seen["reset"] = await host.request(Command.RESET)
        seen["after"] = parse_counters(await host.ok(Command.COUNTERS))

    simulate(cfg, scenario)
    assert seen["blob"] == cfg.identify_blob
    assert seen["before"] == {"frames_ok": 2, "crc_errors": 0, "bad_frames": 0, "timeouts": 0,
                              "rx_overflows": 0, "framing_errors": 1, "skipped_bytes": 3}
    assert seen["reset"] == (Status.OK, b"")
    assert seen["after"] == {**{k: 0 for k in seen["before"]}, "frames_ok": 1}


def test_link_crc_is_the_protocol_crc():
    """The check value of CRC-16/CCITT-FALSE (a published constant), on the host and the gateware."""
    from amaranth import Signal
    from amaranth.sim import Simulator as Sim

    from fpga.board.link import crc16_step
    assert crc16(b"123456789") == 0x29B1
    crc, byte = Signal(16), Signal(8)
    step = crc16_step(crc, byte)
    got = []

    async def bench(ctx):
        value = 0xFFFF
        for b in b"123456789":
            ctx.set(crc, value)
            ctx.set(byte, b)
            value = ctx.get(step)
        got.append(value)

    m = Module()
    m.d.comb += Signal(16).eq(step)
    sim = Sim(m)
    sim.add_testbench(bench)
    sim.run()
    assert got == [0x29B1]


# ---- the driver against the gateware -------------------------------------------------------------

class SimPort:
    """pyserial's read/write/reset_input_buffer with the simulated link at the far end.

    The simulation advances while the driver reads (no thread).  ``damage``: the index of one
    host-to-board byte to flip in transit.
    """

    name = "sim://link"

    def __init__(self, config, damage=None, cycles_per_read=4000):
        self.dut = Linked(config)
        self.to_board, self.from_board = deque(), bytearray()
        self.sent, self.damage = 0, damage
        self.cycles_per_read = cycles_per_read
        self.sim = Simulator(self.dut)
        self.sim.add_clock(1e-6)
        self.sim.add_testbench(self._bench)

    async def _bench(self, ctx):
        link = self.dut.link
        ctx.set(link.tx.ready, 1)
        while True:
            drive = bool(self.to_board)
            if drive:
                ctx.set(link.rx.payload, self.to_board.popleft())
            ctx.set(link.rx.valid, drive)
            _, _, valid, byte = await ctx.tick().sample(link.tx.valid, link.tx.payload)
            if valid:
                self.from_board.append(byte)

    def write(self, data):
        for byte in data:
            self.to_board.append(byte ^ (0x10 if self.sent == self.damage else 0))
            self.sent += 1
        return len(data)

    def read(self, n):
        for _ in range(2 * self.cycles_per_read):                # two clock edges a cycle
            if len(self.from_board) >= n:
                break
            self.sim.advance()
        got = bytes(self.from_board[:n])
        del self.from_board[:n]
        return got

    def reset_input_buffer(self):
        self.from_board.clear()

    def close(self):
        pass


def test_driver_runs_batches_on_the_gateware():
    from fpga.host.driver import BoardLink
    cfg = small_config(depth=2, lanes=2)                         # 4 rows a batch: 11 rows take 3
    ins = cfg.instruction_objects[0]
    a, b, c, _, _ = operands(ins, 11, seed=11)
    board = BoardLink(SimPort(cfg), expect=cfg)
    got = board.dot_add(ins, a, b, c)
    assert np.array_equal(got, golden.dot_add(ins, a, b, c))
    assert board.cycles == 2 + cfg.latency                       # the last batch: 3 rows, 2 entries
    assert board.counters()["frames_ok"] == 1 + 3 * 3 + 1 and board.retries == 0


def test_a_request_damaged_in_transit_is_refused_by_the_board_and_resent():
    from fpga.host.driver import BoardLink
    cfg = small_config(depth=4)
    ins = cfg.instruction_objects[0]
    a, b, c, _, _ = operands(ins, 4, seed=12)
    identify = len(encode_request(Command.IDENTIFY))
    board = BoardLink(SimPort(cfg, damage=identify + 40), expect=cfg)   # a byte inside the LOAD's entries
    assert np.array_equal(board.dot_add(ins, a, b, c), golden.dot_add(ins, a, b, c))
    assert board.retries == 1 and board.counters()["crc_errors"] == 1


# ---- the board top (needs fpga.board.uart) -------------------------------------------------------------

def _board_verilog(config) -> str:
    pytest.importorskip("fpga.board.uart", reason="fpga/board/uart.py (the UART helper's) is not in this checkout yet")
    from amaranth.back import verilog

    from fpga.board.top import BoardTop
    return verilog.convert(BoardTop(config), name="board")


def _ports(text: str) -> set:
    import re
    return set(re.search(r"module board\((.*?)\);", text, re.S).group(1).replace(",", " ").split())


def test_board_top_converts_with_serial_ports():
    assert _ports(_board_verilog(small_config())) == {"clk", "rst", "uart_rx", "uart_tx"}


@pytest.mark.slow
def test_board_top_converts_for_hopper_hgmma():
    assert _ports(_board_verilog(BoardConfig.from_names("hopper", "HGMMA.64xNx16.F32"))) == \
        {"clk", "rst", "uart_rx", "uart_tx"}


def test_board_top_takes_the_platforms_pins_and_checks_its_clock():
    pytest.importorskip("fpga.board.uart", reason="fpga/board/uart.py (the UART helper's) is not in this checkout yet")
    boards = pytest.importorskip("amaranth_boards.ulx3s")
    from fpga.board.top import BoardTop
    plan = boards.ULX3S_85F_Platform().prepare(BoardTop(small_config(clock_hz=25_000_000)), name="board")
    rtlil = plan.files["board.il"]
    assert all(pin in rtlil for pin in ("uart_0__rx", "uart_0__tx", "led_0", "led_1", "rx_pin", "tx_pin"))
    assert "EHXPLLL" not in rtlil
    # another design clock comes from the PLL (tests/fpga/test_fpga_clocks.py), one it cannot make is refused
    assert "EHXPLLL" in boards.ULX3S_85F_Platform().prepare(BoardTop(small_config()), name="board").files["board.il"]
    with pytest.raises(ValueError, match="the ECP5 PLL cannot make exactly 4.000001 MHz from 25 MHz; the nearest"):
        boards.ULX3S_85F_Platform().prepare(BoardTop(small_config(clock_hz=4_000_001)), name="board")
