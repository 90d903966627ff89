"""The Verilator board simulation (fpga.host.sim): serial pins bridged to TCP, talked to through pyserial.

The board tops here are stand-ins written for the bridge: a pin loopback (what goes in comes back,
so both UART models of the executable are proven at once) and a top that plants faults in the
line (a flipped data bit, a broken stop bit), which the comparison and the executable's framing
check must catch.  One build per top for the whole module (~15 s each the first time, cached after).
"""

import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import serial
from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from cosim import toolchain
from fpga.host.sim import BoardSim, BuildError, SimError, board_verilog, build_board_sim, check_board_ports

FAULT_CPB = 25


class PinLoopback(wiring.Component):
    """uart_tx follows uart_rx one cycle later (registered, so the top has the sync domain)."""

    uart_rx: In(1)
    uart_tx: Out(1, init=1)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.uart_tx.eq(self.uart_rx)
        return m


class FaultyLoopback(wiring.Component):
    """A loopback that breaks every frame it passes: even frames get data bit 2 inverted, odd frames
    a stop bit pulled low for its first three quarters (the line is high again before the next
    start bit, so the receiver can resynchronise)."""

    uart_rx: In(1)
    uart_tx: Out(1, init=1)

    def __init__(self, clocks_per_bit: int):
        self.cpb = clocks_per_bit
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        cpb = self.cpb
        busy = Signal()                       # inside a frame; count = cycles since its start bit fell
        count = Signal(range(10 * cpb + 1))
        odd = Signal()
        with m.If(~busy & ~self.uart_rx):
            m.d.sync += [busy.eq(1), count.eq(1)]
        with m.Elif(busy):
            m.d.sync += count.eq(count + 1)
            with m.If(count == 10 * cpb - 1):
                m.d.sync += [busy.eq(0), odd.eq(~odd)]
        data_bit_2 = (count >= 3 * cpb) & (count < 4 * cpb)
        stop_bit = (count >= 9 * cpb) & (count < 9 * cpb + 3 * cpb // 4)
        flip = busy & ((~odd & data_bit_2) | (odd & stop_bit))
        m.d.sync += self.uart_tx.eq(self.uart_rx ^ flip)
        return m


def _build(top, name, waves=False):
    try:
        toolchain.setup()
    except toolchain.ToolchainError as e:
        pytest.skip(f"no Verilator toolchain: {e}")
    return build_board_sim(top, name=name, waves=waves)


@pytest.fixture(scope="module")
def loopback():
    return _build(PinLoopback(), "test-loopback")


@pytest.fixture(scope="module")
def faulty():
    return _build(FaultyLoopback(FAULT_CPB), "test-faulty")


def exchange(url: str, data: bytes, expect: int | None = None, timeout: float = 20.0) -> bytes:
    """Write ``data`` through pyserial (as the driver does) and read ``expect`` (default: as many) bytes
    back, then whatever else arrives within 0.2 s (fewer on timeout)."""
    port = serial.serial_for_url(url, timeout=timeout)
    try:
        port.write(data)
        got = port.read(len(data) if expect is None else expect)
        port.timeout = 0.2
        return got + port.read(len(data))
    finally:
        port.close()


def test_second_build_is_cached(loopback):
    again = build_board_sim(PinLoopback(), name="test-loopback")
    assert again.source == "cached" and again.exe == loopback.exe


@pytest.mark.parametrize("cpb", [25, 8])
def test_loopback_returns_every_byte(loopback, cpb):
    rng = np.random.default_rng(cpb)
    data = bytes(range(256)) * 4 + rng.integers(0, 256, 3072, dtype=np.uint8).tobytes()
    with BoardSim(loopback, cpb) as sim:
        got = exchange(sim.url, data)
    assert got == data
    s = sim.stats
    assert s["returncode"] == 0
    assert (s["to_board"], s["from_board"], s["framing_errors"], s["glitches"]) == (len(data), len(data), 0, 0)
    assert s["cycles"] >= 10 * cpb * len(data)         # the bytes took their bit times


def test_planted_faults_are_caught(faulty):
    data = np.random.default_rng(1).integers(0, 256, 40, dtype=np.uint8).tobytes()
    with BoardSim(faulty, FAULT_CPB) as sim:
        got = exchange(sim.url, data, expect=len(data) // 2)
    assert got != data                                  # the loopback comparison fails
    assert got == bytes(b ^ 0x04 for b in data[0::2])   # exactly: bit 2 flipped, broken stop bits dropped
    s = sim.stats
    assert (s["to_board"], s["from_board"], s["framing_errors"]) == (40, 20, 20)
    assert s["stderr"].count("framing error at cycle") == 10 and "further ones only counted" in s["stderr"]


def test_clock_ratio_mismatch_is_caught(faulty):
    """The harness at another clocks-per-bit than the top: the top's fault windows land elsewhere."""
    data = bytes(range(0, 256, 7))
    with BoardSim(faulty, 16) as sim:
        got = exchange(sim.url, data, timeout=0.5)
    assert got != data and got != bytes(b ^ 0x04 for b in data[0::2])


def test_stop_exits_cleanly_and_releases_the_port(loopback):
    with BoardSim(loopback, 8) as sim:
        port = sim.port
        assert exchange(sim.url, b"hello") == b"hello"
    assert sim.stats["returncode"] == 0 and sim.stats["cycles"] > 0 and sim.stats["cycles_per_s"] > 0
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    with BoardSim(loopback, 8, port=port) as again:      # the same port can be listened on again
        assert again.port == port and exchange(again.url, b"again") == b"again"


def test_next_client_is_served(loopback):
    with BoardSim(loopback, 8) as sim:
        assert exchange(sim.url, b"first") == b"first"
        assert exchange(sim.url, b"second") == b"second"


def test_once_and_max_cycles_exit_by_themselves(loopback):
    sim = BoardSim(loopback, 8, once=True).start()
    assert exchange(sim.url, b"bye") == b"bye"
    assert sim.wait(timeout=10)["returncode"] == 0
    stats = BoardSim(loopback, 8, max_cycles=5000).start().wait(timeout=10)
    assert stats["returncode"] == 0 and stats["cycles"] == 5000


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"   # exited, not yet reaped
    except OSError:
        return True


def test_a_forgotten_simulation_exits_with_its_parent(loopback):
    code = (f"import os; from fpga.host.sim import BoardSim; sim = BoardSim({str(loopback.exe)!r}, 8).start(); "
            f"print(sim._proc.pid, flush=True); os._exit(0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[2])
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 10
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid)


def test_port_in_use_is_a_clear_error(loopback):
    with BoardSim(loopback, 8) as sim:
        with pytest.raises(SimError, match=rf"did not start listening.*cannot listen on 127.0.0.1:{sim.port}"):
            BoardSim(loopback, 8, port=sim.port).start()


def test_bad_arguments_are_clear_errors(loopback, tmp_path):
    with pytest.raises(ValueError, match="clocks_per_bit must be an int >= 4"):
        BoardSim(loopback, 3)
    with pytest.raises(SimError, match="no board simulation executable at"):
        BoardSim(tmp_path / "missing", 8)
    with pytest.raises(SimError, match="needs a build with waveforms"):
        BoardSim(loopback.exe, 8, waves=tmp_path / "w.vcd").start()
    proc = subprocess.run([str(loopback.exe), "--clocks-per-bit", "2"], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 2 and "--clocks-per-bit must be an integer in 4.." in proc.stderr


class NoRegisters(wiring.Component):
    uart_rx: In(1)
    uart_tx: Out(1)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.uart_tx.eq(self.uart_rx)
        return m


class WideTx(wiring.Component):
    uart_rx: In(1)
    uart_tx: Out(2)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.uart_tx.eq(self.uart_rx)
        return m


def test_wrong_ports_are_clear_build_errors():
    with pytest.raises(BuildError, match="no input clk.*a top with no registers has no clk/rst"):
        board_verilog(NoRegisters())
    with pytest.raises(BuildError, match="uart_tx must be a 1-bit output"):
        board_verilog(WideTx())
    with pytest.raises(BuildError, match="is not an amaranth.lib.wiring.Component"):
        board_verilog("not a top")
    with pytest.raises(BuildError, match="no module board"):
        check_board_ports("module other(clk); input clk; endmodule")


def test_failed_compile_shows_the_log(loopback, tmp_path, monkeypatch):
    broken = tmp_path / "board_sim.cpp"
    broken.write_text("int main() { this is not C++; }\n")
    monkeypatch.setattr("fpga.host.sim.board.MAIN_SOURCE", broken)
    with pytest.raises(BuildError, match=r"(?s)make failed.*build\.log.*error"):
        build_board_sim(PinLoopback(), name="broken", root=tmp_path / "builds")


def test_idle_simulation_slows_down_and_wakes_up(loopback):
    with BoardSim(loopback, 25, idle_sleep_after=10_000) as sim:
        time.sleep(0.5)                                   # nobody connected: 10k cycles, then 25 a millisecond
        t0 = time.perf_counter()
        assert exchange(sim.url, b"wake") == b"wake"
        woke = time.perf_counter() - t0
    assert sim.stats["cycles"] < 200_000                  # at full speed: millions
    assert woke < 0.5 + 0.2                               # 4 bytes need 1000 cycles; the trailing read 0.2 s


@pytest.mark.slow
def test_waveform_build_writes_a_trace(tmp_path):
    build = _build(PinLoopback(), "test-loopback-waves", waves=True)
    wave = tmp_path / f"board.{build.wave_format}"
    with BoardSim(build, 8, waves=wave) as sim:
        assert exchange(sim.url, b"\x55") == b"\x55"
    assert sim.stats["returncode"] == 0
    head = wave.read_bytes()[:4096]
    assert build.wave_format == "fst" or (b"uart_rx" in head and b"uart_tx" in head)
