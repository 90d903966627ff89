"""The self-test's operand generator in gateware: entry counter in, a unit input beat out.

The gateware of :func:`fpga.board.selftest.model.operands` (the numpy model states the construction and
is the reference; a test shows them equal bit for bit).  Stateless: the operands of entry ``v``
depend on ``(seed, kind, v)`` alone, so any block of a run can be rerun by starting the counter
there.
"""

from __future__ import annotations

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from cosim.payload import PayloadLayout
from golden.formats import get_format
from hw.pipeline import delayed
from hw.unit import lane_layout

from .model import KEY_STEP, KINDS, ROUNDS, exponent_window, lane_words

__all__ = ["SelfTestGenerator"]


def _rol(x, n: int):
    return Cat(x[32 - n:], x[:32 - n])


class SelfTestGenerator(wiring.Component):
    """``lanes`` dot-adds of one instruction per entry index, :attr:`latency` cycles later.

    One register per ARX round (:data:`fpga.board.selftest.model.ROUNDS`, each a 32-bit add, rotates
    and xors, no multipliers), then one for cutting the words into the lane layout and the
    ``normal`` kind's exponent windows.  Put it under an ``EnableInserter`` to stall it.

    Parameters
    ----------
    ins : golden.Instruction
    lanes : int

    Members
    -------
    seed : In(64)
        Held for the whole run.
    kind : In(1)
        0: ``bits``, 1: ``normal`` (:data:`fpga.board.selftest.model.KINDS`); held for the whole run.
    index : In(32)
        The entry counter.
    valid : In(1)
        ``index`` is an entry to make (delayed to ``o_valid`` with it).
    payload : Out(ArrayLayout(lane_layout(ins), lanes))
        The unit's input beat of entry ``index`` of :attr:`latency` cycles ago.
    o_valid : Out(1)
    """

    def __init__(self, ins, lanes: int = 1):
        if not isinstance(lanes, int) or lanes < 1:
            raise ValueError(f"lanes must be a positive integer, not {lanes!r}")
        self.ins = ins
        self.lanes = lanes
        self.words = lane_words(ins)
        self.layout = PayloadLayout(ins, 1)
        assert self.layout.in_width == lane_layout(ins).size
        super().__init__({
            "seed": In(64), "kind": In(1), "index": In(32), "valid": In(1),
            "payload": Out(data.ArrayLayout(lane_layout(ins), lanes)), "o_valid": Out(1),
        })

    @property
    def latency(self) -> int:
        """Cycles from ``index`` to its ``payload``: a register per round and one for the layout."""
        return ROUNDS + 1

    def elaborate(self, platform):
        m = Module()
        halves = (self.seed[:32], self.seed[32:])
        keys = [Signal(32, name=f"key{r}") for r in range(ROUNDS)]
        for r, key in enumerate(keys):               # constant during a run: off the pipeline
            m.d.comb += key.eq(halves[r % 2] + (r * KEY_STEP & 0xFFFFFFFF))
        for lane in range(self.lanes):
            words = [self._arx(m, keys, lane * self.words + w) for w in range(self.words)]
            bits = Cat(*words)
            shaped = Cat(*[self._field(bits, f) for f in self.layout.fields])
            m.d.sync += self.payload[lane].as_value().eq(shaped)
        m.d.comb += self.o_valid.eq(delayed(m, "valid_wait", 1, self.latency, self.valid))
        return m

    def _arx(self, m, keys, j: int):
        """The 64-bit word ``j`` of the entry, after ``ROUNDS`` registered rounds."""
        x, y = self.index, C(j, 32)
        for r, key in enumerate(keys):
            nx, ny = Signal(32, name=f"x{j}_{r}"), Signal(32, name=f"y{j}_{r}")
            mixed = ((_rol(x, 24) + y)[:32]) ^ key
            m.d.sync += [nx.eq(mixed), ny.eq(_rol(y, 3) ^ mixed)]
            x, y = nx, ny
        return Cat(y, x)

    def _field(self, bits, f):
        """One element of the lane: as generated, or its exponent field forced into the window."""
        x = bits[f.offset:f.offset + f.width]
        fmt = {"a": self.ins.formats[0], "b": self.ins.formats[1], "c": self.ins.formats[2]}.get(f.name)
        win = exponent_window(fmt if fmt is not None else get_format(self.ins.scale_format))
        exp = x[win.offset:win.offset + win.width]
        forced = (win.lo + exp[:win.wb])[:win.width]
        normal = Cat(x[:win.offset], forced, x[win.offset + win.width:])
        return Mux(self.kind == KINDS["normal"], normal, x)

