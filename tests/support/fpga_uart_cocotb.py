"""cocotb test: UART echoes (tests/fpga/test_fpga_uart.py's ``EchoBench``) against cocotbext-uart.

An independent UART model talks to each echo of the bench: ``UartSource`` drives its ``rx_<name>``
pin with random bytes, ``UartSink`` decodes its ``tx_<name>`` pin, and the bytes must come back
identical and in order.  The bench's clock, the echoes and their bauds, and the byte count come
from the ``UART_ECHO_BENCH`` environment variable (JSON, written by the pytest side); one cocotb
test per echo.
"""

from __future__ import annotations

import json
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Timer
from cocotbext.uart import UartSink, UartSource

BENCH = json.loads(os.environ.get("UART_ECHO_BENCH", '{"clock_ns": 40, "bytes": 0, "seed": 0, "echoes": {}}'))


async def start(dut):
    """Clock running, every rx pin idle, reset released."""
    cocotb.start_soon(Clock(dut.clk, BENCH["clock_ns"], unit="ns").start())
    for name in BENCH["echoes"]:
        getattr(dut, f"rx_{name}").value = 1
    dut.rst.value = 1
    await ClockCycles(dut.clk, 4)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 4)


@cocotb.test()
@cocotb.parametrize(echo=sorted(BENCH["echoes"]))
async def echo_random_bytes(dut, echo):
    baud = BENCH["echoes"][echo]
    await start(dut)
    source = UartSource(getattr(dut, f"rx_{echo}"), baud=baud)
    sink = UartSink(getattr(dut, f"tx_{echo}"), baud=baud)
    rng = random.Random(BENCH["seed"])
    sent = bytes(rng.randrange(256) for _ in range(BENCH["bytes"]))
    await Timer(1013, "ns")                  # the first start bit lands off the clock edges
    await source.write(sent)
    await source.wait()
    await Timer(3 * 10 * round(1e9 / baud), "ns")   # three frames: the echo takes about one and a half
    got = bytes(sink.read_nowait())
    first = next((k for k, (a, b) in enumerate(zip(sent, got)) if a != b), None)
    assert got == sent, (f"echo {echo} at {baud} baud: sent {len(sent)} bytes, got {len(got)}; "
                         + (f"first mismatch at byte {first}: sent 0x{sent[first]:02x}, got 0x{got[first]:02x}"
                            if first is not None else "no mismatch in the common prefix"))
