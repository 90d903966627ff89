"""cocotb testbench: serves batches of vectors to ``tb/cosim_harness.sv`` with no per-cycle Python.

The co-simulation driver (``cosim.session``) starts this test through
``cocotb_tools.runner`` and talks to it through files in the run directory, as
:mod:`tb.protocol` defines them, so that vector generation and scoring (in the
driver's process) overlap with simulation (in this one).

The clock is cocotb's C-level (GPI) clock: between ``go`` and ``done`` the
simulator runs alone.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

from tb import protocol as pr

POLL_S = 0.0005


def _wait_for_batch(run: Path, i: int, give_up_s: float, parent: int) -> pr.BatchControl | None:
    """The control record of batch i, or None at the end of the run (or on abort)."""
    t0 = time.monotonic()
    ctl = run / pr.in_control(i)
    end = run / pr.END
    while True:
        if ctl.exists():
            return pr.BatchControl.read(ctl)
        if (run / pr.ABORT).exists():
            return None
        if end.exists() and pr.End.read(end).batches <= i:
            return None
        if os.getppid() != parent:
            raise RuntimeError("the co-simulation driver has gone")
        if time.monotonic() - t0 > give_up_s:
            raise TimeoutError(f"no batch {i} from the driver after {give_up_s:.0f} s")
        time.sleep(POLL_S)


@cocotb.test()
async def serve_batches(dut):
    run = Path(os.environ[pr.RUN_DIR_ENV])
    job = pr.Job.read(run / pr.JOB)
    cur_in, cur_out = run / pr.CURRENT_IN, run / pr.CURRENT_OUT
    parent = os.getppid()

    cocotb.start_soon(Clock(dut.clk, 2, unit="ns", impl=job.clock_impl).start())
    dut.go.value = 0
    dut.n.value = 0
    dut.seed.value = 1
    dut.stall_in.value = 0
    dut.stall_out.value = 0
    dut.watchdog.value = job.watchdog
    dut.unit_rst.value = 1
    await ClockCycles(dut.clk, 4)
    dut.unit_rst.value = 0
    await ClockCycles(dut.clk, 2)

    i = 0
    while True:
        ctl = _wait_for_batch(run, i, job.give_up_s, parent)
        if ctl is None:
            break
        os.replace(run / pr.in_payloads(i), cur_in)
        dut.n.value = ctl.beats
        dut.seed.value = ctl.seed & 0xFFFFFFFF
        dut.stall_in.value = ctl.stall_in
        dut.stall_out.value = ctl.stall_out
        t0 = time.perf_counter()
        dut.go.value = 1
        await RisingEdge(dut.done)
        wall = time.perf_counter() - t0
        stats = pr.BatchStats(**{k: int(getattr(dut, k).value) for k in pr.STAT_PORTS}, wall=wall)
        dut.go.value = 0
        await ClockCycles(dut.clk, 2)
        if cur_out.exists():
            os.replace(cur_out, run / pr.out_payloads(i))
        stats.write(run / pr.out_stats(i))
        assert not stats.load_error, f"batch {i}: the harness could not read {ctl.beats} payloads"
        assert not stats.timeout, (f"batch {i}: no handshake for {job.watchdog} cycles; "
                                   f"{stats.n_in} inputs accepted, {stats.n_out} of {ctl.beats} outputs")
        i += 1

    # anything the unit emits after the last expected output is a protocol error
    await ClockCycles(dut.clk, job.drain_cycles)
    pr.Final(batches=i, extra=int(dut.extra.value)).write(run / pr.FINAL)
