"""A described design as a function: ``DutBackend(path)(ins, a, b, c)`` returns its ``d`` for every row.

What campaigns (``make campaign DEVICE=dut:path/unit.toml``) and the dissection suite
(``--backend dut:path/unit.toml``) run: the target whose instruction is ``ins`` is built (cached) and
all the rows go through one simulation, under random stalls where the handshake has backpressure,
with a :class:`cosim.session.Capture` hook (results in input order, as :class:`cosim.RTLBackend`).
"""

from __future__ import annotations

import numpy as np

from golden.streams import ArrayStream

from ..backend import capture_all
from ..payload import PayloadLayout
from ..units import NoRTL
from .run import build, prepare, x_plusargs


class DutBackend:
    """The design described at ``path``; raises :class:`cosim.NoRTL` for an instruction none of its
    targets is, :class:`cosim.SimError` when the simulation fails."""

    name = "dut"

    def __init__(self, path, stall: float = 0.0, seed: int = 1, build_root=None):
        if not 0.0 <= stall < 1.0:
            raise ValueError(f"stall must be a probability in [0, 1), got {stall}")
        self.prep = prepare(path, root=build_root)
        self.stall, self.seed, self.build_root = stall, seed, build_root
        self.targets = {(ins.arch, ins.name): (t, ins) for t, ins in self.prep.pairs}

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
        a = np.asarray(a, np.uint64)
        n = a.shape[0]
        if (ins.arch, ins.name) not in self.targets:
            raise NoRTL(f"{self.prep.desc.path.name} has no target {ins.arch} {ins.name} "
                        f"(its targets: {', '.join(' '.join(k) for k in self.targets)})")
        if n == 0:
            return np.zeros(0, np.uint64)
        target, tins = self.targets[(ins.arch, ins.name)]
        b_ = build(self.prep, target, tins, root=self.build_root)
        return capture_all(b_, PayloadLayout(tins, 1), ArrayStream(tins, a, b, c, scale_a, scale_b), n, seed=self.seed,
                           stall=self.stall, where=f"{self.prep.desc.name} as {ins.arch} {ins.name}",
                           plusargs=self.prep.desc.plusargs + x_plusargs(self.seed + 1))
