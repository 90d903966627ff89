"""The run table of ``python -m cosim run``: its header, one row per instruction, the summary,
and the progress line on stderr.  A run that measures coverage (cosim.coverage) has a ``coverage``
column before the status: reachable bins hit of those reachable (``15/15``)."""

from __future__ import annotations

import sys

from .status import Status


def header(coverage: bool = False) -> str:
    """The table's header; ``coverage``: with the coverage column."""
    return (f"{'arch':13s} {'instruction':42s} {'algorithm':9s} {'lanes':>5s} {'lat':>4s} {'II':>3s} {'vectors':>9s} "
            f"{'mismatch':>8s} {'build s':>8s} {'time s':>7s} {'dot-adds/s':>10s}"
            + (f" {'coverage':>9s}" if coverage else "") + "  status")


HEADER = header()


def coverage_cell(r) -> str:
    """``hit/reachable`` of a result's coverage, ``-`` where none was measured."""
    cov = getattr(r, "coverage", None)
    return "-" if cov is None else f"{len(cov.hit())}/{len(cov.reachable())}"


def row(r, name: str | None = None, coverage: bool = False) -> str:
    """One :class:`cosim.Result` as a row under :func:`header` (``name``: what to call the instruction,
    default its name; ``coverage``: with the coverage column)."""
    lat = "-" if r.latency is None else str(r.latency)
    ii = "-" if r.initiation_interval is None else str(r.initiation_interval)
    build = "-" if not r.build_source else ("cached" if r.build_source == "cached" else f"{r.build_seconds:.1f}")
    status = r.status if r.ok else f"{r.status}: {r.message.splitlines()[0][:80]}" if r.message else r.status
    name = name or r.ins.name
    return (f"{r.ins.arch:13s} {name:42s} {r.ins.algorithm:9s} {r.lanes:5d} {lat:>4s} {ii:>3s} {r.vectors:9d} "
            f"{r.mismatches:8d} {build:>8s} {r.seconds:7.1f} {r.rate:10.0f}"
            + (f" {coverage_cell(r):>9s}" if coverage else "") + f"  {status}")


def summarize(results, out=None) -> int:
    """Summary lines and the exit status: 0 only when every instruction ran and matched."""
    out = out or sys.stdout
    bad = [r for r in results if r.status in (Status.MISMATCH, Status.ERROR)]
    missing = [r for r in results if r.status == Status.NO_RTL]
    ok = [r for r in results if r.ok]
    print(f"{len(results)} instruction(s): {len(ok)} ok, {len(bad)} failing, {len(missing)} without RTL",
          file=out)
    for r in bad:
        if r.status == Status.ERROR:
            print(f"error: {r.ins.name}: {r.message}", file=out)
    if missing:
        algs = sorted({r.ins.algorithm for r in missing})
        print(f"no RTL yet for algorithm(s) {', '.join(algs)}: "
              f"{', '.join(r.ins.name for r in missing[:8])}{' ...' if len(missing) > 8 else ''} "
              f"({missing[0].message})", file=out)
    return 0 if not bad and not missing else 1


_shown = [0]           # length of the progress line now on the terminal


def progress(line: str | None) -> None:
    """A progress line on stderr: rewritten in place on a terminal, one line each time otherwise;
    None clears it."""
    tty = sys.stderr.isatty()
    if line is None:
        if tty and _shown[0]:
            print("\r" + " " * _shown[0] + "\r", end="", file=sys.stderr, flush=True)
        _shown[0] = 0
        return
    if tty:
        print("\r" + line.ljust(_shown[0]), end="", file=sys.stderr, flush=True)
        _shown[0] = len(line)
    else:
        print(line, file=sys.stderr, flush=True)
