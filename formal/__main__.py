"""``python -m formal [--arch A] [--instr I] [--stage S] [--pipelining N] [--timeout s] [--jobs n] [--list]``.

Runs the properties (:func:`formal.suite.all_properties`) that match the filters and prints one
line per property: ``proved``, ``bounded`` (k-induction's base case holds to the depth, its
induction step does not), ``failed`` (with the counterexample VCD that sby wrote), ``timeout``
or ``error`` (with sby's log), the solver's wall time and its engine, then a
summary.  ARCH and INSTR select the properties of the stages those catalog units use (names,
comma lists, ``all``, as :func:`golden.select` takes them); STAGE is a comma list of
:data:`formal.suite.STAGES`; NAME a substring of the property's name.  Exit status 1 when a
property was not proved: it failed, errored, timed out or was bounded, unless it is declared in
:data:`formal.expected.EXPECTED` with that verdict and a reason (the summary names each declared
one and its reason; a declared one that is proved is reported so, and passes).  Exit status 2 for
bad options or filters that select nothing.  The YoWASP tools are started once before the timed
proofs, so that their one-time compile on a fresh machine is not counted against a proof.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import math
import sys
import time

from golden.console import exit_with
from golden.options import Parser, whole_number

__all__ = ["main"]

MAX_TIMEOUT = 86400             # a day per property
MAX_JOBS = 64


def _seconds(text: str) -> float:
    """An argparse ``type``: a number of seconds, more than 0 and at most :data:`MAX_TIMEOUT`."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not (0 < v <= MAX_TIMEOUT) or math.isnan(v):
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most {MAX_TIMEOUT} seconds, got {text}")
    return v


_seconds.__name__ = "seconds"


def _parser():
    ap = Parser(prog="python -m formal", description=__doc__.split("\n\n")[1])
    ap.add_argument("--arch", default="all", help="architectures (default all)")
    ap.add_argument("--instr", default="all", help="instructions (default all)")
    ap.add_argument("--stage", default="all", help="comma list of stages (default all)")
    ap.add_argument("--name", default=None, help="only properties whose name contains this")
    ap.add_argument("--timeout", type=_seconds, default=120, help="seconds per property (default 120)")
    ap.add_argument("--jobs", type=whole_number(1, MAX_JOBS), default=1,
                    help=f"properties at a time, 1..{MAX_JOBS} (default 1)")
    ap.add_argument("--pipelining", type=int, default=0,
                    help="the stages' register stages: a hw.Pipelining level (default 0)")
    ap.add_argument("--list", action="store_true", help="list the selected properties, prove nothing")
    ap.add_argument("--refresh", action="store_true", help="collect the catalog's stage parameters again")
    return ap


def filters(arch="all", instr="all", stage="all", name=None):
    """``(stages, units)`` the filters keep (``units`` None: every unit); ``ValueError`` naming
    what is valid.  Checked before any property is built: an empty filter (``--stage ''``) is
    refused, not read as "all"."""
    from .suite import STAGES
    valid = f"valid: {', '.join(STAGES)}, all (or a comma list)"
    for option, value in (("--arch", arch), ("--instr", instr), ("--stage", stage)):
        if not str(value).strip():
            more = valid if option == "--stage" else "give a name, a comma list or all"
            raise ValueError(f"{option} is empty; {more}")
    if name is not None and not name.strip():
        raise ValueError("--name is empty; give part of a property's name (python -m formal --list shows them)")
    stages = STAGES if stage == "all" else tuple(s.strip() for s in stage.split(",") if s.strip())
    if not stages:
        raise ValueError(f"--stage {stage!r} names no stage; {valid}")
    bad = [s for s in stages if s not in STAGES]
    if bad:
        raise ValueError(f"unknown stage {', '.join(bad)}; {valid}")
    units = None
    if (arch, instr) != ("all", "all"):
        import golden
        units = {(i.arch, i.name) for i in golden.select(arch, instr)}
        if not units:
            raise ValueError(f"no catalog instruction matches ARCH={arch} INSTR={instr} (python -m golden list)")
    return stages, units


def select(props, stages, units, name=""):
    """The properties of ``stages`` whose name contains ``name`` and, unless ``units`` is None,
    that a unit of ``units`` uses."""
    return [p for p in props if p.stage in stages and name in p.name
            and (units is None or units & set(p.units))]


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    from .suite import all_properties
    try:
        from hw.pipelining import Pipelining
        Pipelining.level(args.pipelining)
        stages, units = filters(args.arch, args.instr, args.stage, args.name)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    every = all_properties(args.refresh, args.pipelining)
    props = select(every, stages, units, args.name or "")
    if not props:                   # a typo in a filter proves nothing: it must not pass
        given = [f"--{k} {v}" for k, v in (("arch", args.arch), ("instr", args.instr), ("stage", args.stage))
                 if v != "all"] + ([f"--name {args.name}"] if args.name else [])
        print(f"error: no property matches {' '.join(given) or 'the filters'}; python -m formal --list "
              f"shows every property's stage and name", file=sys.stderr)
        return 2
    from .expected import EXPECTED, judge, mark
    if args.list:
        for p in props:
            e = EXPECTED.get(p.name)
            print(f"{p.stage:9} {p.mode:5} {p.engine:9} {p.name}" + (f"  (declared: {e.verdict})" if e else ""))
        print(f"{len(props)} properties")
        return 0
    from .runner import warm
    from .verdicts import STATUSES
    started = time.monotonic()
    warm()                          # a fresh machine compiles the YoWASP tools here, outside every timeout
    if time.monotonic() - started > 5:
        print(f"(the solver tools took {time.monotonic() - started:.0f} s to start: their one-time compile, "
              f"not counted in any proof's time)", flush=True)
    start, verdicts = time.monotonic(), []
    run = lambda p: p.run(args.timeout)  # noqa: E731
    if args.jobs == 1:              # in this thread: Ctrl-C reaches the runner, which stops its solver
        results = map(run, props)
    else:
        pool = cf.ThreadPoolExecutor(args.jobs)
        results = pool.map(run, props)
    for v in results:
        print(v.line() + mark(v), flush=True)
        verdicts.append(v)
    if args.jobs > 1:
        pool.shutdown()
    counts = {s: sum(v.status == s for v in verdicts) for s in STATUSES}
    print(f"{len(verdicts)} properties: " + ", ".join(f"{n} {s}" for s, n in counts.items())
          + f" ({time.monotonic() - start:.0f} s wall, timeout {args.timeout:g} s, jobs {args.jobs})")
    lines, status = judge(verdicts)
    for line in lines:
        print(line)
    if not args.pipelining:         # a declaration that names no property hides nothing, but misleads
        stale = sorted(set(EXPECTED) - {p.name for p in every})
        if stale:
            print(f"note: formal/expected.py declares {', '.join(stale)}, which no property is called; "
                  f"the entry can go")
    return status


if __name__ == "__main__":
    exit_with(main)
