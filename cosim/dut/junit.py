"""``REPORT=results.xml``: the DUT run as JUnit XML (one testcase per target), which CI servers read; with
coverage, each target's in the suite's properties (:func:`cosim.junit.coverage_properties`)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ..junit import coverage_properties
from ..status import Status


def write(path, prep, results) -> Path:
    """Write ``results`` (:class:`cosim.dut.run.DutResult`) of the design ``prep`` to ``path``."""
    suite = ET.Element("testsuite", name=f"cosim.dut.{prep.desc.name}", tests=str(len(results)),
                       failures=str(sum(r.result.status == Status.MISMATCH for r in results)),
                       errors=str(sum(r.result.status not in (Status.OK, Status.MISMATCH) for r in results)),
                       time=f"{sum(r.result.seconds for r in results):.3f}")
    for dr in results:
        r = dr.result
        case = ET.SubElement(suite, "testcase", classname=f"{prep.desc.name}.{r.ins.arch}", name=r.ins.name,
                             time=f"{r.seconds:.3f}")
        ET.SubElement(case, "system-out").text = (
            f"vectors={r.vectors} mismatches={r.mismatches} latency={r.latency_measured} ii={r.ii_measured} "
            f"diagnosis={dr.diagnosis} dut={prep.desc.path}")
        if r.status == Status.MISMATCH:
            ET.SubElement(case, "failure", message=r.message, type=dr.diagnosis).text = \
                f"replay: {r.failures_file}" if r.failures_file else r.message
        elif r.status != Status.OK:
            ET.SubElement(case, "error", message=r.message, type=dr.diagnosis).text = r.message
    coverage_properties(suite, [dr.result.coverage for dr in results])
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
    return path
