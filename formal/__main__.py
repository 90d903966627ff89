"""``python -m formal [--arch A] [--instr I] [--stage S] [--pipelining N] [--timeout s] [--jobs n] [--list]``.

Runs the properties (:func:`formal.suite.all_properties`) that match the filters and prints one
line per property: ``proved``, ``bounded`` (k-induction's base case holds to the depth, its
induction step does not), ``failed`` (with the counterexample VCD that sby wrote), ``timeout``
or ``error`` (with sby's log), the solver's wall time and its engine, then a
summary.  ARCH and INSTR select the properties of the stages those catalog units use (names,
comma lists, ``all``, as :func:`golden.select` takes them); STAGE is a comma list of
:data:`formal.suite.STAGES`; NAME a substring of the property's name.  Exit status 1 when a
property failed or errored (a timeout is reported, not an error).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import sys
import time
from golden.console import exit_with

__all__ = ["main"]


def _parser():
    ap = argparse.ArgumentParser(prog="python -m formal", description=__doc__.split("\n\n")[1])
    ap.add_argument("--arch", default="all", help="architectures (default all)")
    ap.add_argument("--instr", default="all", help="instructions (default all)")
    ap.add_argument("--stage", default="all", help="comma list of stages (default all)")
    ap.add_argument("--name", default="", help="only properties whose name contains this")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per property (default 120)")
    ap.add_argument("--jobs", type=int, default=1, help="properties at a time (default 1)")
    ap.add_argument("--pipelining", type=int, default=0,
                    help="the stages' register stages: a hw.Pipelining level (default 0)")
    ap.add_argument("--list", action="store_true", help="list the selected properties, prove nothing")
    ap.add_argument("--refresh", action="store_true", help="collect the catalog's stage parameters again")
    return ap


def filters(arch="all", instr="all", stage="all"):
    """``(stages, units)`` the filters keep (``units`` None: every unit); ``ValueError`` naming
    what is valid.  Checked before any property is built."""
    from .suite import STAGES
    stages = STAGES if stage in ("", "all") else tuple(s.strip() for s in stage.split(",") if s.strip())
    if not stages:
        raise ValueError(f"--stage {stage!r} names no stage; valid: {', '.join(STAGES)}, all")
    bad = [s for s in stages if s not in STAGES]
    if bad:
        raise ValueError(f"unknown stage {', '.join(bad)}; valid: {', '.join(STAGES)}, all")
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
    if args.timeout <= 0 or args.jobs < 1:
        print("error: --timeout must be positive and --jobs at least 1", file=sys.stderr)
        return 2
    from .suite import all_properties
    try:
        from hw.pipelining import Pipelining
        Pipelining.level(args.pipelining)
        stages, units = filters(args.arch, args.instr, args.stage)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    props = select(all_properties(args.refresh, args.pipelining), stages, units, args.name)
    if not props:                   # a typo in a filter proves nothing: it must not pass
        given = [f"--{k} {v}" for k, v in (("arch", args.arch), ("instr", args.instr), ("stage", args.stage))
                 if v != "all"] + ([f"--name {args.name}"] if args.name else [])
        print(f"error: no property matches {' '.join(given) or 'the filters'}; python -m formal --list "
              f"shows every property's stage and name", file=sys.stderr)
        return 2
    if args.list:
        for p in props:
            print(f"{p.stage:9} {p.mode:5} {p.engine:9} {p.name}")
        print(f"{len(props)} properties")
        return 0
    start, verdicts = time.monotonic(), []
    run = lambda p: p.run(args.timeout)  # noqa: E731
    if args.jobs == 1:              # in this thread: Ctrl-C reaches the runner, which stops its solver
        results = map(run, props)
    else:
        pool = cf.ThreadPoolExecutor(args.jobs)
        results = pool.map(run, props)
    for v in results:
        print(v.line(), flush=True)
        verdicts.append(v)
    if args.jobs > 1:
        pool.shutdown()
    from .runner import STATUSES
    counts = {s: sum(v.status == s for v in verdicts) for s in STATUSES}
    print(f"{len(verdicts)} properties: " + ", ".join(f"{n} {s}" for s, n in counts.items())
          + f" ({time.monotonic() - start:.0f} s wall, timeout {args.timeout:.0f} s, jobs {args.jobs})")
    return 1 if counts["failed"] or counts["error"] else 0


if __name__ == "__main__":
    exit_with(main)
