"""cocotb testbench: serves batches of vectors to ``tb/cosim_harness.sv`` with no per-cycle Python.

The co-simulation driver (``cosim.run``) starts this test through
``cocotb_tools.runner`` and talks to it through files in the run directory
(``COSIM_RUN_DIR``), so that vector generation and scoring (in the driver's
process) overlap with simulation (in this one):

``job.json``        written before the simulator starts: watchdog, drain cycles
``in_<i>.bin``      batch i's input payloads (raw 32-bit words, see tb/cosim_dpi.cpp)
``in_<i>.json``     batch i is ready: ``{"beats", "seed", "stall_in", "stall_out"}``
``end.json``        ``{"batches": n}``: no batch after n-1
``abort``           stop now
``out_<i>.bin``     batch i's output payloads, in arrival order
``out_<i>.json``    batch i's cycle statistics (written after ``out_<i>.bin``)
``final.json``      the run ended cleanly: outputs seen after the last batch

The clock is cocotb's C-level (GPI) clock: between ``go`` and ``done`` the
simulator runs alone.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

POLL_S = 0.0005
STATS = ("n_in", "n_out", "extra", "cycles", "first_in", "last_in", "first_out", "last_out",
         "timeout", "load_error")


def _write_json(path: Path, obj) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj))
    os.replace(tmp, path)


def _wait_for_batch(run: Path, i: int, give_up_s: float, parent: int):
    """The control dict of batch i, or None at the end of the run (or on abort)."""
    t0 = time.monotonic()
    ctl = run / f"in_{i}.json"
    end = run / "end.json"
    while True:
        if ctl.exists():
            return json.loads(ctl.read_text())
        if (run / "abort").exists():
            return None
        if end.exists() and json.loads(end.read_text())["batches"] <= i:
            return None
        if os.getppid() != parent:
            raise RuntimeError("the co-simulation driver has gone")
        if time.monotonic() - t0 > give_up_s:
            raise TimeoutError(f"no batch {i} from the driver after {give_up_s:.0f} s")
        time.sleep(POLL_S)


@cocotb.test()
async def serve_batches(dut):
    run = Path(os.environ["COSIM_RUN_DIR"])
    job = json.loads((run / "job.json").read_text())
    cur_in, cur_out = run / "cur_in.bin", run / "cur_out.bin"
    parent = os.getppid()

    cocotb.start_soon(Clock(dut.clk, 2, unit="ns", impl=job.get("clock_impl", "gpi")).start())
    dut.go.value = 0
    dut.n.value = 0
    dut.seed.value = 1
    dut.stall_in.value = 0
    dut.stall_out.value = 0
    dut.watchdog.value = job["watchdog"]
    dut.unit_rst.value = 1
    await ClockCycles(dut.clk, 4)
    dut.unit_rst.value = 0
    await ClockCycles(dut.clk, 2)

    i = 0
    while True:
        ctl = _wait_for_batch(run, i, job.get("give_up_s", 600), parent)
        if ctl is None:
            break
        os.replace(run / f"in_{i}.bin", cur_in)
        dut.n.value = ctl["beats"]
        dut.seed.value = ctl["seed"] & 0xFFFFFFFF
        dut.stall_in.value = ctl["stall_in"]
        dut.stall_out.value = ctl["stall_out"]
        t0 = time.perf_counter()
        dut.go.value = 1
        await RisingEdge(dut.done)
        wall = time.perf_counter() - t0
        stats = {k: int(getattr(dut, k).value) for k in STATS}
        stats["wall"] = wall
        dut.go.value = 0
        await ClockCycles(dut.clk, 2)
        if cur_out.exists():
            os.replace(cur_out, run / f"out_{i}.bin")
        _write_json(run / f"out_{i}.json", stats)
        assert not stats["load_error"], f"batch {i}: the harness could not read {ctl['beats']} payloads"
        assert not stats["timeout"], (f"batch {i}: no handshake for {job['watchdog']} cycles; "
                                      f"{stats['n_in']} inputs accepted, {stats['n_out']} of {ctl['beats']} outputs")
        i += 1

    # anything the unit emits after the last expected output is a protocol error
    await ClockCycles(dut.clk, job["drain_cycles"])
    _write_json(run / "final.json", {"batches": i, "extra": int(dut.extra.value)})
