"""A described design as a function: ``DutBackend(path)(ins, a, b, c)`` returns its ``d`` for every row.

What campaigns (``make campaign DEVICE=dut:path/unit.toml``) and the dissection suite
(``--backend dut:path/unit.toml``) run: the target whose instruction is ``ins`` is built (cached) and
all the rows go through one simulation, under random stalls where the handshake has backpressure,
with a capturing hook (results in input order, as :class:`cosim.RTLBackend`).

A tile device takes its dot-adds as tiles: ``min(M, N)`` rows per transaction, row ``r`` as A's row
``r`` and B's column ``r`` (the diagonal ``D[r][r]``), every other element zero.  Its k must be one
k-slice (the instruction's K): a deeper tile computes chains of dot-adds, not one (co-simulation
checks those whole, ``make cosim DUT=...``).
"""

from __future__ import annotations

import numpy as np

from golden.device import Device
from golden.streams import ArrayStream, TileArrayStream

from ..backend import capture_all
from ..payload import PayloadLayout
from ..units import NoRTL
from . import adapter, transfers
from .builds import build, prepare, x_plusargs


class DutBackend(Device):
    """The design described at ``path``; raises :class:`cosim.NoRTL` for an instruction none of its
    targets is, :class:`cosim.SimError` when the simulation fails."""

    name = "dut"

    def __init__(self, path, stall: float = 0.0, seed: int = 1, build_root=None):
        if not 0.0 <= stall < 1.0:
            raise ValueError(f"stall must be a probability in [0, 1), got {stall}")
        self.prep = prepare(path, root=build_root)
        self.stall, self.seed, self.build_root = stall, seed, build_root
        self.latency_notes: dict = {}          # target number -> the line naming a wrong declared latency
        self.targets = {}
        for t, ins in self.prep.pairs:
            self.targets.setdefault((ins.arch, ins.name), (t, ins))

    @property
    def pairs(self) -> list:
        """``[(target, instruction)]`` of the description, in order (targets may share an instruction)."""
        return list(self.prep.pairs)

    def bound(self, index: int) -> BoundTarget:
        """A backend that runs target ``index`` (0-based) whatever instruction it is called with."""
        return BoundTarget(self, *self.prep.pairs[index])

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
        if (ins.arch, ins.name) not in self.targets:
            raise NoRTL(f"{self.prep.desc.path.name} has no target {ins.arch} {ins.name} "
                        f"(its targets: {', '.join(t.describe() for t, _ in self.prep.pairs)})")
        target, tins = self.targets[(ins.arch, ins.name)]
        return self.run(target, tins, a, b, c, scale_a, scale_b)

    def run(self, target, tins, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
        """``d`` of every row on ``target`` (its instruction ``tins``)."""
        a = np.asarray(a, np.uint64)
        n = a.shape[0]
        if n == 0:
            return np.zeros(0, np.uint64)
        b_ = build(self.prep, target, tins, root=self.build_root)
        where = f"{self.prep.desc.name} as {target.describe()}"
        plusargs = self.prep.desc.plusargs + x_plusargs(self.seed + 1)
        if transfers.is_tile(self.prep.desc):
            return self._tiles(b_, tins, a, b, c, scale_a, scale_b, where, plusargs)
        return capture_all(b_, PayloadLayout(tins, 1), ArrayStream(tins, a, b, c, scale_a, scale_b), n, seed=self.seed,
                           stall=self.stall, where=where, plusargs=plusargs, on_timing=self._timing(target))

    def _timing(self, target):
        """Keep a wrong declared latency as a line (the values still come: a probe names both)."""
        def note(s):
            own = s.latency_measured - adapter.delay(self.prep.desc)
            self.latency_notes[self.prep.desc.targets.index(target)] = (f"latency: {self.prep.desc.path.name} declares "
                                          f"{self.prep.desc.handshake.latency} cycles, the design's first result "
                                          f"came {own} cycles after its first input (no stalls)")
        return note

    def _tiles(self, built, ins, a, b, c, sa, sb, where, plusargs) -> np.ndarray:
        tile = self.prep.desc.tile
        if tile.k != ins.k:
            raise NoRTL(f"{where}: a tile of k = {tile.k} chains {tile.k // ins.k} k-slices of {ins.name}, so its "
                        "results are not single dot-adds; the probe and campaigns take single dot-adds (make cosim "
                        "DUT=... checks the whole tile)")
        A, B, C, SA, SB, count = diagonal_tiles(ins, tile, a, b, c, sa, sb)
        layout = transfers.layout(self.prep.desc, ins)
        D = capture_all(built, layout, TileArrayStream(ins, A, B, C, SA, SB), count, seed=self.seed,
                        stall=self.stall, where=where, plusargs=plusargs, capture=transfers.capture(
                            self.prep.desc, ins, count))
        d = min(tile.m, tile.n)
        diag = D.reshape(count, tile.m, tile.n)[:, np.arange(d), np.arange(d)]
        return diag.reshape(-1)[:a.shape[0]]


class BoundTarget(Device):
    """One target of a :class:`DutBackend`, called like any backend (the instruction it is called with is
    the target's own, or one with the same formats and K)."""

    def __init__(self, dut: DutBackend, target, ins):
        self.dut, self.target, self.ins = dut, target, ins
        self.name = f"dut {target.describe()}"

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
        return self.dut.run(self.target, self.ins, a, b, c, scale_a, scale_b)


def diagonal_tiles(ins, tile, a, b, c, sa=None, sb=None):
    """Rows of dot-adds placed on the diagonals of tiles (every other element zero): ``(A, B, C, SA, SB,
    transactions)``; row ``r`` is element ``D[r % d][r % d]`` of transaction ``r // d``, ``d = min(M, N)``."""
    d = min(tile.m, tile.n)
    n = a.shape[0]
    count = -(-n // d)
    pad = count * d - n
    grow = (lambda x: None if x is None else np.concatenate([x, np.repeat(x[-1:], pad, axis=0)])) if pad else \
        (lambda x: x)
    a, b, c, sa, sb = grow(a), grow(b), grow(c), grow(sa), grow(sb)
    K = ins.k
    idx = np.arange(d)
    A = np.zeros((count, tile.m, K), np.uint64)
    B = np.zeros((count, K, tile.n), np.uint64)
    C = np.zeros((count, tile.m, tile.n), np.uint64)
    A[:, idx, :] = a.reshape(count, d, K)
    B[:, :, idx] = b.reshape(count, d, K).transpose(0, 2, 1)
    C[:, idx, idx] = c.reshape(count, d)
    SA = SB = None
    if sa is not None:
        nb = sa.shape[-1]
        one = _one_scale(ins)
        SA = np.full((count, tile.m, nb), one, np.uint64)
        SB = np.full((count, nb, tile.n), one, np.uint64)
        SA[:, idx, :] = sa.reshape(count, d, nb)
        SB[:, :, idx] = sb.reshape(count, d, nb).transpose(0, 2, 1)
    return A, B, C, SA, SB, count


def _one_scale(ins) -> int:
    from golden.formats import from_float
    return int(from_float(ins.scale_format, 1.0))
