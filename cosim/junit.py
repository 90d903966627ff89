"""``--report results.xml``: a co-simulation run as JUnit XML (one testcase per instruction), which CI
servers read; with coverage, the suite's ``<properties>`` carry each instruction's
(:func:`golden.cover.report.junit_properties`: ``coverage.<instruction>.hit``, ``.reachable``,
``.unreachable``, ``.holes``)."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from golden.cover.report import junit_properties

from .status import Status

__all__ = ["coverage_properties", "write"]


def coverage_properties(suite: ET.Element, coverages) -> None:
    """Add each coverage's properties to ``suite`` (as its first child, where the JUnit schema has them);
    an instruction measured twice in one suite (two targets of a design) gets ``#2``, ``#3``... in its name."""
    coverages = [c for c in coverages if c is not None]
    if not coverages:
        return
    props = ET.Element("properties")
    seen: dict = {}
    for cov in coverages:
        label = cov.instruction.replace(" ", ".")
        seen[label] = seen.get(label, 0) + 1
        for name, value in junit_properties(cov, label if seen[label] == 1 else f"{label}#{seen[label]}"):
            ET.SubElement(props, "property", name=name, value=value)
    suite.insert(0, props)


def write(path, results, suite_name: str = "cosim") -> Path:
    """Write ``results`` (:class:`cosim.scoring.Result`, one per instruction) to ``path`` as one testsuite."""
    suite = ET.Element("testsuite", name=suite_name, tests=str(len(results)),
                       failures=str(sum(r.status == Status.MISMATCH for r in results)),
                       errors=str(sum(r.status not in (Status.OK, Status.MISMATCH) for r in results)),
                       time=f"{sum(r.seconds for r in results):.3f}")
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=f"{suite_name}.{r.ins.arch}", name=r.ins.name,
                             time=f"{r.seconds:.3f}")
        cov = f" coverage={r.coverage.summary()!r}" if r.coverage is not None else ""
        ET.SubElement(case, "system-out").text = (f"vectors={r.vectors} mismatches={r.mismatches} "
                                                  f"latency={r.latency_measured} ii={r.ii_measured}{cov}")
        if r.status == Status.MISMATCH:
            ET.SubElement(case, "failure", message=r.message, type="mismatch").text = \
                f"replay: {r.failures_file}" if r.failures_file else r.message
        elif r.status != Status.OK:
            ET.SubElement(case, "error", message=r.message, type=str(r.status)).text = r.message
    coverage_properties(suite, [r.coverage for r in results])
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
    return path


def write_or_say(path, write) -> int:
    """``write()`` the JUnit report at ``path`` and say where (0), or one error line (2) when it cannot
    be written: the table above it is the run's result either way."""
    try:
        write()
    except OSError as e:
        print(f"error: --report {path}: the JUnit report could not be written ({e.strerror or e}); "
              "the results are in the table above", file=sys.stderr)
        return 2
    print(f"JUnit report: {path}")
    return 0
