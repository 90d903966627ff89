"""What one transfer of a described device carries: one dot-add, or (a tile device) one whole tile.

Everything of the DUT path that depends on it is here, so that the run (:mod:`cosim.dut.run`), the
replay and the backend ask one place: the payload layout, the vector stream, the scoring and
capturing hooks, how many dot-adds a transfer holds, and how the first failure is printed.
"""

from __future__ import annotations

import numpy as np

import golden
from golden.streams import ArrayStream, TileArrayStream, TileStream, VectorStream

from ..payload import PayloadLayout
from ..session import Capture, Score
from .tile import TileCapture, TileLayout, TileScore


def is_tile(desc) -> bool:
    return desc.tile is not None


def layout(desc, ins):
    """The payload of one transfer (:class:`cosim.payload.PayloadLayout` of one lane, or a tile's)."""
    return TileLayout(ins, desc.tile) if is_tile(desc) else PayloadLayout(ins, 1)


def dot_adds(desc, ins) -> int:
    """Dot-adds one transfer computes (a tile: M x N elements times its k-slices)."""
    return layout(desc, ins).dot_adds if is_tile(desc) else 1


def transfers(desc, ins, n: int | None) -> int | None:
    """Transfers that hold at least ``n`` dot-adds (None stays None)."""
    if n is None:
        return None
    per = dot_adds(desc, ins)
    return -(-n // per)


def stream(desc, ins, kind, seed: int):
    """Random transfers from a dot-add generator (a tile device: whole tiles, :class:`golden.streams.TileStream`)."""
    if is_tile(desc):
        t = desc.tile
        return TileStream(ins, t.m, t.n, t.k, kind, seed)
    return VectorStream(ins, kind, seed)


def array_stream(desc, ins, ops):
    """Saved transfers (a replay) as a stream."""
    return TileArrayStream(ins, *ops) if is_tile(desc) else ArrayStream(ins, *ops)


class DutScore(Score):
    """:class:`cosim.session.Score` that also keeps the first results (for the X check) and the whole
    batch around the first difference (for the order diagnosis)."""

    def __init__(self, ins, keep_first: int):
        super().__init__(ins, golden.dot_add)
        self.first = np.zeros(0, np.uint64)
        self.keep_first = keep_first
        self.window = None             # (got, expected, start) of the first batch with a difference

    def finished(self, batch, got) -> None:
        if len(self.first) < self.keep_first:
            self.first = np.concatenate([self.first, got[:self.keep_first - len(self.first)]])
        before = self.count
        super().finished(batch, got)
        if self.count > before and self.window is None:
            self.window = (got, batch.expected[:batch.used], batch.start)

    def partial(self, batch, got) -> None:
        """What came out of a batch the design stopped in (the session's timeout)."""
        if self.window is None:
            self.window = (got, batch.expected[:batch.used], batch.start)


def score(desc, ins, keep_first: int):
    """The scoring hook; ``keep_first``: the transfers kept for the X check."""
    return TileScore(ins, desc.tile, keep_first) if is_tile(desc) else DutScore(ins, keep_first)


def capture(desc, ins, n: int):
    """A hook keeping every transfer's result (tiles: ``d`` is ``[n, M*N]``)."""
    if is_tile(desc):
        return TileCapture(n, desc.tile.m * desc.tile.n)
    return Capture(n)


def print_first(desc, ins, f: dict, out) -> None:
    """The first failing transfer: golden's trace of the dot-add, or of each k-slice of the tile's first
    failing element, named by row and column."""
    from ..failures import print_first as print_dot_add
    if not is_tile(desc):
        print_dot_add(ins, f, golden.dot_add, out)
        return
    from golden.tile import element_traces
    t, e = _first_finite(ins, f)
    got, want = np.asarray(f["got"][t]), np.asarray(f["expected"][t])
    n = desc.tile.n
    bad = np.nonzero(~golden.same_results(ins, got, want))[0]
    width = max(ins.formats[3].storage_bits // 4, 1)
    i, j = divmod(e, n)
    others = ", ".join(f"D[{x // n}][{x % n}]" for x in bad[bad != e][:8]) + (" ..." if len(bad) > 9 else "")
    which = "first failing transaction" if t == 0 else "failing transaction"
    print(f"{which} #{int(f['index'][t])}: {len(bad)} of {got.size} elements differ; "
          f"D[{i}][{j}]: got 0x{int(got[e]):0{width}x}, expected 0x{int(want[e]):0{width}x}"
          + (f" (also {others})" if others else ""), file=out)
    sa = None if f.get("scale_a") is None else f["scale_a"][t]
    sb = None if f.get("scale_b") is None else f["scale_b"][t]
    traces = element_traces(ins, f["a"][t], f["b"][t], f["c"][t], i, j, sa, sb)
    for s, t in enumerate(traces):
        k0 = s * ins.k
        print(f"-- D[{i}][{j}], k-slice {s} (k = {k0}..{k0 + ins.k - 1}, accumulator from "
              f"{'C' if s == 0 else f'k-slice {s - 1}'}):", file=out)
        print(t, file=out)


def _first_finite(ins, f: dict) -> tuple[int, int]:
    """``(transaction, element)`` of the first kept failing element whose expected value is finite (a NaN or
    an infinity says less about a datapath), else of the first failing element."""
    fd = ins.formats[3]
    first = None
    for t in range(len(f["index"])):
        got, want = np.asarray(f["got"][t]), np.asarray(f["expected"][t])
        bad = np.nonzero(~golden.same_results(ins, got, want))[0]
        if not bad.size:
            continue
        first = first or (t, int(bad[0]))
        finite = bad[np.isfinite(golden.to_float(fd, want[bad]))]
        if finite.size:
            return t, int(finite[0])
    return first or (0, 0)
