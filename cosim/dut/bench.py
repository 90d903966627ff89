"""``python -m cosim.dut bench ARCH INSTR``: the DUT path's cost per vector against the native path.

The instruction's hw unit runs twice on the same vectors, seed and stalls: natively (``make cosim``)
and exported to Verilog behind a description (:mod:`cosim.dut.export`), through the adapter.  Both
builds are made (or found cached) first; the times compared are the co-simulation sessions'.  The
DUT path's X check (a rerun of its first vectors under another X seed) is shown on its own.
"""

from __future__ import annotations

import io
import time

import golden

from .. import build as bld
from ..run import run_instruction
from ..scoring import Config
from . import export, targets
from .builds import prepare
from .run import run_target


def bench(arch: str, instr: str, n: int = 200_000, seed: int = 1, stall: float = 0.1, out=None,
          plant: str | None = None) -> int:
    """Print the two runs side by side; ``plant``: a Params change (``F=22``) both units are built with while
    both are scored against the catalog entry (the verdicts must then be the same mismatch counts)."""
    ins = golden.lookup(arch, instr)
    built_as = None
    if plant:
        from ..units import HwUnits
        built_as = HwUnits(params=targets.params_changes(plant)).instruction(ins)
    tag = "" if not plant else "-" + plant.replace("=", "").replace(",", "-")
    folder = bld.BUILD_ROOT / "dut-bench" / bld.safe_name(f"{ins.arch}-{ins.name}{tag}")
    prep = prepare(export.export(ins, folder, built_as=built_as))
    unit = None if built_as is None else _Planted(built_as)
    (target, dins), = prep.pairs

    def cfg(k):
        return Config(n=k, seed=seed, stall=stall, progress=0.0, out=io.StringIO(), rerun_with_waves=False)

    run_instruction(ins, cfg(1000), unit)              # builds (or finds) both, outside the timing
    run_target(prep, target, dins, cfg(1000))
    native = run_instruction(ins, cfg(n), unit)
    t0 = time.perf_counter()
    dut = run_target(prep, target, dins, cfg(n))
    wall = time.perf_counter() - t0
    d = dut.result
    print(f"{ins.arch} {ins.name}, {n:,} vectors, stall {stall}, seed {seed}"
          f"{f', both units built with {plant} (planted)' if plant else ''}", file=out)
    print(f"{'path':8s} {'status':8s} {'mismatch':>8s} {'session s':>10s} {'us/vector':>10s} {'lat':>4s}", file=out)
    for name, r in (("native", native), ("dut", d)):
        print(f"{name:8s} {r.status:8s} {r.mismatches:8d} {r.seconds:10.2f} "
              f"{1e6 * r.seconds / max(r.vectors, 1):10.2f} "
              f"{r.latency_measured!s:>4s}", file=out)
    ratio = (d.seconds / max(d.vectors, 1)) / (native.seconds / max(native.vectors, 1))
    print(f"DUT / native cost per vector: {ratio:.2f}x (target <= 1.2x); the DUT path's own checks add "
          f"{wall - d.seconds:.1f} s (its first {min(n, 4096):,} vectors under a second X seed; on a clean run, "
          f"the structured pass)", file=out)
    same = (native.status, native.mismatches) == (d.status, d.mismatches)
    print(f"verdicts: native {native.status}, dut {d.status}: {'the same' if same else 'DIFFERENT'}", file=out)
    return 0 if same else 1


class _Planted:
    """The native path's unit provider for a planted fault: the unit built for ``built_as``, scored
    against golden's catalog entry (an ``hw:params=`` spec would score it against the same change)."""

    def __init__(self, built_as):
        self.built_as = built_as

    def __call__(self, ins, lanes):
        import hw
        return hw.dot_add_unit(self.built_as, lanes=lanes)
