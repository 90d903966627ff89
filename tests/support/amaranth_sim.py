"""Shared Amaranth simulation drivers of the RTL tests.

:func:`stream_run` drives a component's valid/ready streams ``i`` and ``o`` with random stalls on
both sides (the unit and tensor core tests); :func:`simulate` feeds dot-adds to a
:func:`hw.dot_add_unit`; :func:`run_stage` feeds a bare pipelined stage.  Import them with
``from amaranth_sim import ...`` (tests/conftest.py puts tests/support on the path).
"""

from __future__ import annotations

import numpy as np
from amaranth.sim import Simulator


def stream_run(dut, payloads, stall_in: float = 0.0, stall_out: float = 0.0, seed: int = 0,
               max_cycles: int | None = None) -> tuple[list, int]:
    """Offer ``payloads`` in order on ``dut.i`` and collect as many ``dut.o`` payloads.

    Each cycle the input is offered with probability ``1 - stall_in`` and the output accepted with
    probability ``1 - stall_out`` (one seeded generator draws both).  Returns the output payloads
    as sampled (Amaranth values) and the cycle count; fails if the results stop coming.
    """
    rng = np.random.default_rng(seed)
    n = len(payloads)
    limit = max_cycles if max_cycles is not None else 50 * (n + 50)
    out = []
    cycles = [0]

    async def bench(ctx):
        i = 0
        while len(out) < n:
            give = i < n and rng.random() >= stall_in
            if give:
                ctx.set(dut.i.payload, payloads[i])
            ctx.set(dut.i.valid, give)
            ctx.set(dut.o.ready, rng.random() >= stall_out)
            # values sampled at the clock edge: (clk, rst, *signals)
            _, _, accepted, produced, ready, value = await ctx.tick().sample(
                dut.i.ready, dut.o.valid, dut.o.ready, dut.o.payload)
            if give and accepted:
                i += 1
            if produced and ready:
                out.append(value)
            cycles[0] += 1
            assert cycles[0] < limit, "the design stopped producing results"

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return out, cycles[0]


def simulate(unit, a, b, c, sa=None, sb=None, stall_in=0.0, stall_out=0.0, seed=0):
    """One dot-add per accepted cycle into a one-lane unit; returns d bits in order and the cycle count."""
    lanes = []
    for i in range(len(c)):
        lane = {"a": [int(x) for x in a[i]], "b": [int(x) for x in b[i]], "c": int(c[i])}
        if sa is not None:
            lane["scale_a"] = [int(x) for x in sa[i]]
            lane["scale_b"] = [int(x) for x in sb[i]]
        lanes.append([lane])
    out, cycles = stream_run(unit, lanes, stall_in, stall_out, seed)
    return np.array([int(v[0]) for v in out], np.uint64), cycles


def run_stage(stage, inputs: dict, n: int):
    """Feed ``n`` operand sets to a bare pipelined stage (never stalled); return its single output per set."""
    (out_name,) = [name for name, member in stage.signature.members.items() if member.flow.name == "Out"]
    port = getattr(stage, out_name)
    got = []

    async def bench(ctx):
        for t in range(n + stage.latency):
            if t < n:
                for name, values in inputs.items():
                    ctx.set(getattr(stage, name), int(values[t]))
            await ctx.tick()
            got.append(ctx.get(port))

    sim = Simulator(stage)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return np.array(got[stage.latency - 1:stage.latency - 1 + n], np.uint64)
