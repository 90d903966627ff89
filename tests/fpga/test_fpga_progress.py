"""fpga.toolchain.progress: a build's phases and the router's progress on the way, and a route that does not
converge stopped at its limit, shown with a fake nextpnr (a script that writes router lines to its
log) so the tests cost seconds, not a place and route.
"""

from __future__ import annotations

import io
import sys
import textwrap

import pytest

from fpga.toolchain import build, progress
from fpga.toolchain.progress import Phase, PnrState, parse_line

# lines as nextpnr-ecp5 0.11.1 writes them (router1), and router2's summary line
ECP5_LOG = """\
Info: Packing IOs..
Info: Device utilisation:
Info: \t          TRELLIS_IO:       5/    365     1%
Info: \t        TRELLIS_COMB:    7241/  83640     8%
Info: \t              DP16KD:      11/    208     5%
Info: Placed 6 cells based on constraints.
Info: Running simulated annealing placer for refinement.
Info: Max frequency for clock '$glbnet$clk': 21.21 MHz (FAIL at 25.00 MHz)
Info: Routing globals...
Info: Routing..
Info:    IterCnt |  w/ripup   wo/ripup |  w/r  wo/r |      arcs| batch(sec) total(sec)|
Info:       1000 |      234        765 |  234   765 |     32821|       0.81       0.81|
Info:       2000 |      549       1450 |  315   685 |     32214|       0.37       1.18|
"""


def _fed(text: str) -> PnrState:
    state = PnrState()
    for line in text.splitlines():
        parse_line(state, line, now=1.0)
    return state


def test_parse_reads_phase_utilisation_placed_fmax_and_router1_progress():
    state = _fed(ECP5_LOG)
    assert state.phase is Phase.ROUTING and state.routing_started == 1.0
    assert (state.metric, state.first, state.last, state.iteration) == ("arcs left", 32821, 32214, 2000)
    assert state.fmax_placed == {"$glbnet$clk": (21.21, 25.0)}
    assert state.utilisation["TRELLIS_COMB"] == (7241, 83640)
    assert "21.21 MHz" in state.best_report() and "TRELLIS_COMB 7,241/83,640" in state.best_report()
    assert state.progress_text() == "32,214 arcs left (was 32,821; iteration 2,000)"
    # the signoff Fmax after routing is not the placement estimate
    parse_line(state, "Info: Routing complete.")
    parse_line(state, "Info: Max frequency for clock '$glbnet$clk': 20.07 MHz (FAIL at 25.00 MHz)")
    assert state.phase is Phase.TIMING and state.fmax_placed["$glbnet$clk"][0] == 21.21


def test_parse_reads_router2_overuse():
    state = _fed("Info: Routing..\nInfo:     iter=7 wires=81234 overused=44012 overuse=51234 archfail=NA\n"
                 "Info:     iter=8 wires=81200 overused=43980 overuse=51000 archfail=NA\n")
    assert (state.metric, state.first, state.last, state.iteration) == ("overused wires", 44012, 43980, 8)
    assert state.timing_failing is None and "timing" not in state.progress_text()


def test_parse_reads_router2_timing_ripup_and_a_legal_route_is_not_a_stall():
    """With --tmg-ripup router2 goes on past 0 overused wires, re-routing the arcs that fail timing
    (nextpnr 0.11.1's lines, from the SFMA board top): said, and never called a stall."""
    state = _fed("Info: Routing..\n"
                 "Info:     iter=3 wires=276301 overused=5324 overuse=6102 tmgfail=1204 archfail=NA\n")
    for i, at in enumerate(range(100, 1000, 100)):           # 15 minutes at 0, from 1.0 s on
        parse_line(state, f"Info:     iter={290 + i} wires=276127 overused=0 overuse=0 tmgfail=267 archfail=NA",
                   now=1.0 + at)
    assert (state.last, state.timing_failing) == (0, 267)
    assert state.progress_text() == ("0 overused wires (was 5,324; iteration 298), 267 arcs failing timing "
                                     "(timing rip-up)")
    assert state.stalled_for(901.0) == 0


# a nextpnr stand-in: writes ``lines`` to its --log file, one every ``pause`` seconds, then exits 0
FAKE = textwrap.dedent("""\
    import sys, time
    log = sys.argv[sys.argv.index("--log") + 1]
    lines, pause = {lines!r}, {pause!r}
    with open(log, "w") as f:
        for line in lines:
            f.write(line + "\\n"); f.flush(); time.sleep(pause)
    """)


def _fake(tmp_path, lines, pause):
    script = tmp_path / "fake_nextpnr.py"
    script.write_text(FAKE.format(lines=lines, pause=pause))
    return [sys.executable, str(script), "--log", str(tmp_path / "top.tim")]


def _router_lines(n: int, left: int) -> list[str]:
    """``n`` router1 rows whose remaining arcs stay near ``left`` (a route that does not converge)."""
    return [f"Info:    {1000 * (i + 1):7d} |  {i:7d}  {i:9d} |  {i:3d} {i:5d} | {left - i % 3:9d}|  0.5  {i:9.2f}|"
            for i in range(n)]


def test_progress_lines_come_while_routing_and_the_route_finishes(tmp_path):
    lines = ECP5_LOG.splitlines() + _router_lines(10, 900) + ["Info: Routing complete.",
                                                              "Info: Program finished normally."]
    out = io.StringIO()
    rc, state = progress.run_tool(_fake(tmp_path, lines, 0.06), tmp_path, tmp_path / "pnr.out",
                                  tmp_path / "top.tim", "place and route", out=out, interval=0.1, route_timeout=60)
    said = out.getvalue().splitlines()
    assert rc == 0 and state.phase is Phase.DONE
    assert any(line.startswith("place and route: placement, ") for line in said)
    routing = [line for line in said if line.startswith("place and route: routing, ")]
    assert routing and any("arcs left (was 32,821" in line for line in routing)
    assert said[-1].startswith("place and route: done")


def test_a_route_that_does_not_converge_stops_at_its_limit_with_the_best_report(tmp_path):
    lines = ECP5_LOG.splitlines() + _router_lines(400, 44000)        # 400 x 0.02 s: longer than the limit
    out = io.StringIO()
    with pytest.raises(progress.RouteTimeout) as stopped:
        progress.run_tool(_fake(tmp_path, lines, 0.02), tmp_path, tmp_path / "pnr.out", tmp_path / "top.tim",
                          "place and route", out=out, interval=0.2, route_timeout=1.0)
    message = str(stopped.value)
    assert "\n" not in message
    assert "routing did not converge within --route-timeout 1 s" in message
    assert "arcs left (was 32,821" in message and "Fmax after placement 21.21 MHz" in message
    # progress was shown at least every interval while routing
    assert sum("routing, " in line for line in out.getvalue().splitlines()) >= 3


def test_build_run_turns_a_timeout_into_one_line_build_error_and_keeps_it(tmp_path):
    lines = ECP5_LOG.splitlines() + _router_lines(400, 44000)
    command = _fake(tmp_path, lines, 0.02)
    with pytest.raises(build.RouteTimedOut) as stopped:
        build._run(command, tmp_path, "top.tim", "place and route", route_timeout=0.5)
    assert "\n" not in str(stopped.value) and str(tmp_path / "top.tim") in str(stopped.value)
    assert "did not converge" in (tmp_path / "route_timeout.txt").read_text()


def test_bad_limits_are_refused(tmp_path):
    with pytest.raises(ValueError):
        progress.run_tool(["true"], tmp_path, tmp_path / "o", None, "x", route_timeout=0)


def test_route_timeout_option_is_checked_by_the_parser(capsys):
    from fpga.__main__ import main
    with pytest.raises(SystemExit) as done:
        main(["build", "hopper", "HGMMA.64xNx16.F32", "--route-timeout", "-5"])
    assert done.value.code == 2
    assert "is not a positive number of seconds" in capsys.readouterr().err


def test_elapsed_text():
    assert [progress.elapsed_text(s) for s in (5, 185, 3720)] == ["5s", "3m 05s", "1h 02m"]


def test_an_earlier_runs_log_is_not_read_as_this_runs_progress(tmp_path):
    (tmp_path / "top.tim").write_text(ECP5_LOG + "Info: Routing complete.\n" * 50)    # a finished run
    out = io.StringIO()
    lines = ["Info: Packing IOs..", "Info: Placed 6 cells based on constraints."]
    rc, state = progress.run_tool(_fake(tmp_path, lines, 0.3), tmp_path, tmp_path / "pnr.out", tmp_path / "top.tim",
                                  "place and route", out=out, interval=0.1)
    assert rc == 0 and state.phase is Phase.PLACEMENT and state.last is None


def test_a_log_rewritten_from_the_start_is_read_again(tmp_path):
    log = tmp_path / "log"
    log.write_text("Info: Packing IOs..\n" * 20)
    tail = progress._LogTail(log)
    assert len(tail.lines()) == 20
    log.write_text("Info: Routing..\n")
    assert tail.lines() == ["Info: Routing.."]


def _router1_line(iteration: int, arcs: int) -> str:
    return f"Info: {iteration:>10} |      234        765 |  234   765 | {arcs:>9}|       0.81       0.81|"


def test_a_route_that_stops_falling_is_called_not_converging():
    """The CoGFDRDA top's route here: 104,778 arcs, then about 101,000 for a quarter of an hour."""
    from fpga.toolchain.progress import STALL_S, _status
    state = _fed(ECP5_LOG.split("Info:    IterCnt")[0])
    t = 0.0
    for n, arcs in enumerate((104_778, 103_100, 101_534, 102_400, 100_816)):
        t = n * STALL_S / 2
        parse_line(state, _router1_line(1000 * (n + 1), arcs), now=t)
    assert "not converging" in _status("place and route", state, 0.0, t)
    assert "down by under 5% in the last" in _status("place and route", state, 0.0, t)
    assert "--router router2 may route it" in _status("place and route", state, 0.0, t)     # router1's advice
    converging = _fed(ECP5_LOG.split("Info:    IterCnt")[0])
    for n, arcs in enumerate((104_778, 90_000, 60_000, 30_000, 9_000)):
        parse_line(converging, _router1_line(1000 * (n + 1), arcs), now=n * STALL_S / 2)
    assert "not converging" not in _status("place and route", converging, 0.0, t)
