"""``python -m fpga sim``: the whole board proven without a board.

The board top (UART PHY included, at the board's real clock-to-baud ratio) is built with
Verilator (:func:`fpga.host.sim.build_board_sim`), started with its serial pins bridged to a TCP socket
(:class:`fpga.host.sim.BoardSim`), and driven by the real driver through ``socket://``: IDENTIFY
(the configuration hash checked against this checkout's golden and hw), random and structured
dot-adds of every instruction scored against golden (:func:`fpga.host.run.run_board`), and the planted
link faults of :func:`fpga.host.run.check_recovery`.
"""

from __future__ import annotations

import contextlib
import sys
import time

from cosim.table import HEADER, row, summarize

from ...board.config import BoardConfig
from ...board.top import BoardTop
from .. import run as board_run
from ..driver import BoardError, BoardLink, LinkTimeout
from .board import BoardSim, BuildError, SimError, build_board_sim

DEFAULT_N = 300                       # dot-adds per instruction: about a minute for an HGMMA unit
# A simulated board runs its UART some 30 to 100 times slower than a real one (and slower still on
# a loaded machine): a 4 KB LOAD frame is a million simulated cycles.  The driver's wait for a
# response is sized for that.
SIM_TIMEOUT_S = 120.0


def build(cfg: BoardConfig, waves: bool = False, out=None, params=None, dut=None, two_domains=False):
    """The simulator executable of ``cfg``'s board top (cached by its Verilog); ``params``: a
    planted fault, the unit built with these algorithm parameters (:class:`fpga.board.top.BoardTop`);
    ``dut``: a design of one's own as the unit (:class:`fpga.board.dut.DutBoard`); ``two_domains``: the
    compute on a second clock the simulation drives unrelated to the link's (:mod:`fpga.board.crossing`)."""
    out = out or sys.stdout
    t0 = time.perf_counter()
    name = (cfg.name if params is None else f"{cfg.name}_planted") + ("_2clk" if two_domains else "")
    try:
        if dut is not None:
            b = build_board_sim(BoardTop(cfg, unit=dut.unit), name=f"dut-{dut.prep.desc.name}", waves=waves,
                                sources=dut.sources)
        else:
            b = build_board_sim(BoardTop(cfg, params=params, two_domains=two_domains), name=name, waves=waves)
    except BuildError as e:
        raise SimError(build_failure(e, dut)) from None
    print(f"board simulator: {b.exe} ({b.source}, {time.perf_counter() - t0:.1f} s)", file=out)
    return b


def build_failure(error: BuildError, dut=None) -> str:
    """A failed build of the simulated board in one line: what failed, the first error it printed
    (Verilator's ``%Error``, the C++ compiler's ``error:``) and where the whole log is."""
    lines = str(error).splitlines()
    first = next((ln.strip() for ln in lines[1:] if ln.lstrip().startswith("%Error") or " error: " in ln
                  or ln.lstrip().startswith("error:")), None)
    head = lines[0].rstrip(":") if lines else "the build failed"
    return ((f"the simulated board of {_what(dut)}" if dut is not None else "the simulated board")
            + " did not build: "
            + (f"{first} ({head})" if first else head))


def _what(dut) -> str:
    return f"the design {dut.prep.desc.name} ({dut.prep.desc.path})" if dut is not None else "the board's unit"


def _stderr_tail(text: str, lines: int = 3) -> str:
    """The executable's last words, on one line (its statistics line left out)."""
    kept = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("board_sim: ")]
    return " | ".join(kept[-lines:])[-400:]


def cause(error: BoardError, sim, dut=None, identified: bool = False, timeout: float = SIM_TIMEOUT_S) -> str:
    """What went wrong when the driver's request to a simulated board failed, in one line.

    The driver words its errors for a real board behind a serial link ("is the board programmed?",
    "cannot open ..."); a simulated board has no cable and no bitstream, so the cause is named
    instead: the simulation stopped (with its last words), or it runs and the design never
    answered (``identified``: the board's own link answered IDENTIFY, so the UART and the link work).
    """
    if not sim.running:
        stats = sim.stop()
        said = _stderr_tail(stats.get("stderr", ""))
        return (f"the simulated board stopped (exit {stats.get('returncode')}) "
                f"{'while running ' + _what(dut) if identified else 'before it answered'}: "
                f"{said or '(it said nothing)'}")
    if isinstance(error, LinkTimeout) and identified:
        hint = (f"; its [handshake] or [reset] in {dut.prep.desc.path} may not match the design (make cosim "
                f"DUT={dut.prep.desc.path} runs it with waveforms)" if dut is not None else "")
        return (f"the design never answered: the simulated board's link answered IDENTIFY, but "
                f"{_what(dut)} gave no result within {timeout:g} s{hint}")
    if isinstance(error, LinkTimeout):
        return (f"the simulated board ran but did not answer IDENTIFY within {timeout:g} s: its board "
                f"top does not run its link (the simulation executable {sim.exe})")
    return f"the simulated board: {error}"


@contextlib.contextmanager
def _named_causes(sim, dut, timeout: float):
    """Driver errors inside become :class:`SimError` with :func:`cause`'s line; the context's value is
    a list whose truth says the board answered IDENTIFY (set by the caller)."""
    identified: list = []
    try:
        yield identified
    except BoardError as e:
        raise SimError(cause(e, sim, dut, bool(identified), timeout)) from None


def main(cfg: BoardConfig, *, n: int | None = None, seed: int = 1, waves: bool = False, serve: bool = False,
         port: int = 0, out=None, dut=None) -> int:
    out = out or sys.stdout
    b = build(cfg, waves, out, dut=dut)
    waves_file = b.dir / f"board.{b.wave_format}" if waves else None
    with BoardSim(b, cfg.clocks_per_bit, port=port, waves=waves_file) as sim:
        if serve:
            return _serve(sim, cfg, out)
        with _named_causes(sim, dut, SIM_TIMEOUT_S) as identified, \
                BoardLink(sim.url, expect=cfg, timeout=SIM_TIMEOUT_S) as board:
            identified.append(True)
            print(board.describe(), file=out, flush=True)
            print(HEADER, file=out, flush=True)
            results = board_run.run_board(board, n=n or DEFAULT_N, seed=seed, out=out)
            for r in results:
                r.build_source, r.build_seconds = b.source, b.seconds
                print(row(r), file=out)
            problems = board_run.check_recovery(board, out)
        status = summarize(results, out)
    print(f"simulated {sim.stats.get('cycles', '?')} cycles at {sim.stats.get('cycles_per_s', '?')} cycles/s"
          f"{f'; waveform: {waves_file}' if waves_file else ''}", file=out)
    for p in problems:
        print(f"error: link recovery: {p}", file=out)
    return status or (1 if problems else 0)


def _serve(sim, cfg: BoardConfig, out) -> int:
    print(f"simulated board ({cfg.name}) listening on {sim.url}\n"
          f"  python -m fpga run --port {sim.url} --timeout {SIM_TIMEOUT_S:g}\n"
          f"  python -m probe {cfg.arch} {cfg.instructions[0]} --backend fpga:{sim.url}\n"
          f"Ctrl-C stops it.", file=out, flush=True)
    try:
        sim.wait()
    except KeyboardInterrupt:
        pass
    return 0


def selftest(cfg: BoardConfig, *, params=None, timeout: float | None = None, out=None, dut=None, **kw):
    """:func:`fpga.host.selftest.run_selftest` on the simulated board of ``cfg`` (its unit built with
    ``params`` when given: a planted fault the self-test must catch; ``dut``: a design of one's own)."""
    from ..selftest import run as board_selftest
    out = out or sys.stdout
    b = build(cfg, out=out, params=params, dut=dut)
    with BoardSim(b, cfg.clocks_per_bit) as sim:
        with _named_causes(sim, dut, timeout or SIM_TIMEOUT_S) as identified, \
                BoardLink(sim.url, expect=cfg, timeout=timeout or SIM_TIMEOUT_S) as board:
            identified.append(True)
            planted = f"; planted fault: its unit built with {params}" if params is not None else ""
            print(board.describe() + planted, file=out, flush=True)
            report = board_selftest.run_selftest(board, out=out, **kw)
    print(f"simulated {sim.stats.get('cycles', '?')} cycles at {sim.stats.get('cycles_per_s', '?')} cycles/s", file=out)
    return report
