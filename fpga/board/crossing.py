"""The board's clock-domain crossing: the link on the slow ``sync`` clock, the compute on ``fast``.

:class:`ComputeBridge` sits in :class:`fpga.board.link.HostLink` where the self-test engine sits on a
one-clock board, and shows the link the engine's members (``start`` and its parameters in;
``busy``, ``cycles``, ``vectors`` and the ``sigs`` stream out), plus ``run``/``run_count`` for
RUN.  Behind it, on the ``fast`` domain, :class:`Executor` holds the engine and RUN's
sequencer; it reads the input buffer and writes the output buffer through their ``fast`` ports
(block RAM, one port per domain) and drives the unit.

Every crossing is one of four approved kinds:

- a start pulse slow -> fast and a done pulse fast -> slow, each through a
  :class:`amaranth.lib.cdc.PulseSynchronizer` (a toggle and two flops);
- multi-bit control values under a handshake: the run's parameters are registers on the slow
  side, written only while no run is under way and read on the fast side only after the start
  pulse has crossed; ``cycles`` and ``vectors`` are registers on the fast side, written before
  the done pulse and read on the slow side only after it has crossed (and before the next start);
- the signature stream through an :class:`amaranth.lib.fifo.AsyncFIFO`;
- the buffers' block RAMs, written in one domain and read in the other.

``plant="done"`` removes the done pulse's synchroniser (the slow side samples the fast pulse
directly): the fault the clock-domain tests must catch.
"""

from __future__ import annotations

from amaranth import Module, Signal
from amaranth.hdl import DomainRenamer
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import PulseSynchronizer
from amaranth.lib.fifo import AsyncFIFO
from amaranth.lib.wiring import In, Out

from .domains import Domain
from .selftest.engine import SIGNATURE_BITS, SelfTestEngine

__all__ = ["ComputeBridge", "Executor", "PLANTS", "FAST", "SLOW"]

SLOW, FAST = Domain.SYNC, Domain.FAST      # the link side, the compute side
PLANTS = ("done",)             # crossings a test may remove (planted faults)
SIGS_FIFO_DEPTH = 4
# the run's parameters, in both domains: (name, width)
_PARAMS = (("capture", 1), ("seed", 64), ("kind", 1), ("first", 32), ("blocks", 16), ("block_len", 16),
           ("run_count", 16))


def _param_members():
    return {name: In(width) for name, width in _PARAMS}


def _compute_members(config, depth: int, selftest: bool) -> dict:
    """The compute side's ports: the unit's streams and the buffers' fast-side ports."""
    members = {
        "unit_i": Out(stream.Signature(config.in_shape)),
        "unit_o": In(stream.Signature(config.out_shape)),
        "in_addr": Out(range(depth)), "in_en": Out(1), "in_data": In(config.in_bytes * 8),
        "out_addr": Out(range(depth)), "out_data": Out(config.out_bits), "out_en": Out(1),
    }
    if selftest:
        members["sigs"] = Out(stream.Signature(config.lanes * SIGNATURE_BITS))
    return members


class Executor(wiring.Component):
    """RUN's sequencer and the self-test engine, on one clock (``sync`` here; the bridge renames it).

    ``start`` (a pulse) begins RUN when ``run`` is high, else the engine with the parameters; the
    parameters must be stable from ``start`` until ``done``.  ``done`` pulses once when it is
    over; ``cycles`` and ``vectors`` hold its counts from then until the next ``start``.
    """

    def __init__(self, config):
        self.config = config
        self.selftest = not config.core
        super().__init__({"start": In(1), "run": In(1), **_param_members(),
                          "done": Out(1), "cycles": Out(32), "vectors": Out(32),
                          **_compute_members(config, config.depth, self.selftest)})

    def elaborate(self, platform):
        cfg, m = self.config, Module()
        running, writing = Signal(), Signal()          # RUN under way; results go to the output buffer
        m.d.sync += self.done.eq(0)                    # a one-cycle pulse: assignments below win
        issue, holding, counting, count = Signal(range(cfg.depth + 1)), Signal(), Signal(), Signal(32)
        done, done_inc = Signal(range(cfg.depth + 1)), Signal(range(cfg.depth + 2), init=1)
        with m.If(self.start):
            m.d.sync += [running.eq(self.run), writing.eq(self.run | self.capture), issue.eq(0), holding.eq(0),
                         counting.eq(0), count.eq(0), done.eq(0), done_inc.eq(1)]
        advance = ~holding | self.unit_i.ready
        m.d.comb += [self.in_addr.eq(issue), self.in_en.eq(advance),
                     self.unit_i.valid.eq(holding & running), self.unit_i.payload.eq(self.in_data[:cfg.in_bits]),
                     self.unit_o.ready.eq(1),
                     self.out_addr.eq(done), self.out_data.eq(self.unit_o.payload),
                     self.out_en.eq(self.unit_o.valid & writing)]
        with m.If(running):
            with m.If(advance):
                m.d.sync += holding.eq(issue < self.run_count)
                with m.If(issue < self.run_count):
                    m.d.sync += issue.eq(issue + 1)
            issued = holding & self.unit_i.ready
            m.d.sync += counting.eq(counting | issued)
            with m.If(counting | issued):
                m.d.sync += count.eq(count + 1)
        with m.If(self.unit_o.valid & writing):
            m.d.sync += [done.eq(done_inc), done_inc.eq(done_inc + 1)]
            with m.If(running & (done_inc == self.run_count)):
                m.d.sync += [running.eq(0), writing.eq(0), self.cycles.eq(count + 1), self.vectors.eq(0),
                             self.done.eq(1)]
        if self.selftest:
            self._engine(m, writing)
        return m

    def _engine(self, m, writing):
        m.submodules.engine = engine = SelfTestEngine(self.config)
        m.d.comb += [engine.start.eq(self.start & ~self.run)]
        m.d.comb += [getattr(engine, name).eq(getattr(self, name)) for name, _ in _PARAMS if name != "run_count"]
        m.d.comb += [engine.results.valid.eq(self.unit_o.valid), engine.results.payload.eq(self.unit_o.payload),
                     engine.unit_i.ready.eq(self.unit_i.ready)]
        wiring.connect(m, engine.sigs, wiring.flipped(self.sigs))
        with m.If(engine.busy):
            m.d.comb += [self.unit_i.valid.eq(engine.unit_i.valid), self.unit_i.payload.eq(engine.unit_i.payload)]
        was_busy = Signal()
        m.d.sync += was_busy.eq(engine.busy)
        with m.If(was_busy & ~engine.busy):
            m.d.sync += [self.cycles.eq(engine.cycles), self.vectors.eq(engine.vectors), self.done.eq(1),
                         writing.eq(0)]


class ComputeBridge(wiring.Component):
    """The link's view of the compute side across the two clocks (see the module's docstring).

    Parameters
    ----------
    config : fpga.board.config.BoardConfig
    plant : str, optional
        One of :data:`PLANTS`: remove that crossing's synchroniser (a planted fault).

    Members
    -------
    start, run : In(1)
        Pulses (slow): start the self-test engine / RUN, with the parameters (latched here).
    busy : Out(1)
        From ``start``/``run`` until the fast side's done pulse has crossed back.
    cycles, vectors : Out(32)
        The last run's counts, valid while ``busy`` is low.
    sigs : Out(stream.Signature(lanes * 32))
        The engine's signatures, in the slow domain.
    The compute-side members (``unit_i``, ``unit_o``, buffer ports) are in the ``fast`` domain.
    """

    def __init__(self, config, *, plant: str | None = None):
        if plant is not None and plant not in PLANTS:
            self._MustUse__silence = True       # refused, not forgotten: no "never used" warning
            raise ValueError(f"plant must be one of {', '.join(PLANTS)}, not {plant!r}")
        self.config, self.plant = config, plant
        self.selftest = not config.core
        members = {"start": In(1), "run": In(1), **_param_members(),
                   "busy": Out(1), "cycles": Out(32), "vectors": Out(32),
                   **_compute_members(config, config.depth, self.selftest)}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.executor = ex = _fast(Executor(self.config))
        # the values that cross under the start/done handshake (fpga.board.cdc_check approves them)
        self.handshaked = [ex.run, *(getattr(ex, name) for name, _ in _PARAMS), ex.cycles, ex.vectors]
        # ---- slow -> fast: parameters held in slow registers, the start pulse synchronised ----
        begin = self.start | self.run
        with m.If(begin):
            m.d.sync += [ex.run.eq(self.run), self.busy.eq(1)]
            m.d.sync += [getattr(ex, name).eq(getattr(self, name)) for name, _ in _PARAMS]
        m.submodules.start_sync = start_sync = PulseSynchronizer(SLOW, FAST)
        m.d.comb += [start_sync.i.eq(begin), ex.start.eq(start_sync.o)]
        # ---- fast -> slow: the done pulse synchronised, then the counts (stable since) taken ----
        done = Signal()
        if self.plant == "done":
            m.d.comb += done.eq(ex.done)               # planted: a fast pulse sampled by the slow clock
        else:
            m.submodules.done_sync = done_sync = PulseSynchronizer(FAST, SLOW)
            m.d.comb += [done_sync.i.eq(ex.done), done.eq(done_sync.o)]
        with m.If(done):
            m.d.sync += [self.busy.eq(0), self.cycles.eq(ex.cycles), self.vectors.eq(ex.vectors)]
        # ---- the compute side's ports, fast, straight through ----
        for name in ("in_addr", "in_en", "out_addr", "out_data", "out_en"):
            m.d.comb += getattr(self, name).eq(getattr(ex, name))
        m.d.comb += ex.in_data.eq(self.in_data)
        wiring.connect(m, wiring.flipped(self.unit_i), ex.unit_i)
        wiring.connect(m, ex.unit_o, wiring.flipped(self.unit_o))
        if self.selftest:
            m.submodules.sigs_fifo = fifo = AsyncFIFO(width=len(self.sigs.payload), depth=SIGS_FIFO_DEPTH,
                                                      w_domain=FAST, r_domain=SLOW)
            m.d.comb += [fifo.w_data.eq(ex.sigs.payload), fifo.w_en.eq(ex.sigs.valid), ex.sigs.ready.eq(fifo.w_rdy),
                         self.sigs.valid.eq(fifo.r_rdy), self.sigs.payload.eq(fifo.r_data),
                         fifo.r_en.eq(self.sigs.ready)]
        return m


def _fast(component):
    return DomainRenamer(FAST)(component)
