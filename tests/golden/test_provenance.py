"""Every catalog entry says how far to trust it, and every claim it makes is checked against its data.

The measured sets' reproduction counts are recomputed from the data in tests/golden/test_gpu_vectors.py; here:
each entry has a provenance, measured ones name data files that exist, live checks match their records,
the bases are assigned as documented, and the README's table is what the command prints.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import golden
from golden.cli import main
from golden.provenance import BASES, LIVE_CHECKS, MEASURED_SETS, STATUSES

REPO = Path(__file__).resolve().parents[2]


def test_every_entry_has_a_provenance():
    for ins in golden.CATALOG:
        p = ins.provenance
        assert p.basis in BASES and p.status in STATUSES, (ins.arch, ins.name, p)
        assert p.summary().startswith(p.status)
        if p.basis == "measured":
            assert p.measured, (ins.arch, ins.name)
        if p.status == "verified":
            assert p.measured or p.live, (ins.arch, ins.name)
        if p.basis == "compiled" and not p.measured:       # inferred from the lowering's measured entries
            assert p.same_lowering_as and all(golden.lookup(*x.split()).params == ins.params
                                              for x in p.same_lowering_as), (ins.arch, ins.name)
        if p.basis == "datapath":
            for name in p.same_datapath_as:
                other = golden.lookup(ins.arch, name)
                assert other.datapath == ins.datapath and other.provenance.status == "verified"


@pytest.mark.parametrize("s", MEASURED_SETS, ids=lambda s: f"{s.id}-{s.instruction}")
def test_measured_entries_name_their_data(s):
    ins = golden.lookup(s.arch, s.instruction)
    assert (REPO / s.path).is_file(), s.path
    p = ins.provenance
    assert s in p.measured
    assert s.id in p.summary() and s.path in p.describe()
    assert p.status == ("verified" if all(m.exact for m in p.measured) else "approximate")


def _record_lines(check):
    text = (REPO / check.record).read_text()
    pattern = (rf"^{check.arch} {re.escape(check.instruction)} on torch on {re.escape(check.gpu)} .*?: "
               r"([\d,]+) dot-adds, ([\d,]+) mismatches")
    return [(int(n.replace(",", "")), int(m.replace(",", ""))) for n, m in re.findall(pattern, text, re.M)]


@pytest.mark.parametrize("check", LIVE_CHECKS, ids=lambda c: c.instruction)
def test_live_checks_match_their_records(check):
    runs = _record_lines(check)
    assert runs, f"{check.record} has no run of {check.instruction}"
    clean = sum(n for n, m in runs if m == 0)
    assert check.mismatches == 0 and clean == check.dot_adds, runs
    assert check in golden.lookup(check.arch, check.instruction).provenance.live


def test_bases_follow_the_evidence():
    measured = golden.lookup("hopper", "HMMA.16816.F32").provenance
    assert (measured.basis, measured.status) == ("measured", "verified")
    live = golden.lookup("hopper", "HGMMA.64xNx16.F32").provenance
    assert (live.basis, live.status) == ("live", "verified") and live.live[0].dot_adds == 33_554_432
    same = golden.lookup("hopper", "HGMMA.64xNx16.F16").provenance
    assert (same.basis, same.status, same.same_datapath_as) == ("datapath", "inferred", ("HMMA.16816.F16",))
    paper = golden.lookup("cdna3", "v_mfma_f32_32x32x8_f16").provenance
    assert (paper.basis, paper.status) == ("paper", "inferred")


def test_a_stale_claim_is_seen():
    """Planted: a measured set that claims fewer reproduced rows makes its entry approximate."""
    from dataclasses import replace

    import golden.provenance as prov
    s = MEASURED_SETS[0]
    planted = replace(s, reproduced=s.rows - 1)
    ins = golden.lookup(s.arch, s.instruction)
    prov._EVIDENCE.clear()
    try:
        prov.MEASURED_SETS = (planted,) + MEASURED_SETS[1:]
        assert ins.provenance.status == "approximate"
    finally:
        prov.MEASURED_SETS = MEASURED_SETS
        prov._EVIDENCE.clear()
    assert ins.provenance.status == "verified"


def test_golden_list_shows_provenance(capsys):
    assert main(["list", "hopper", "HMMA.16816.F32"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.endswith("verified (measured: H100-fp16-dfp32 (5,000 of 5,000))")
    assert main(["list", "hopper", "HMMA.16816.F32", "-v"]) == 0
    assert "tests/data/gpu_vectors/H100_fp16.npz" in capsys.readouterr().out


def test_the_readme_table_is_what_the_command_prints(capsys):
    assert main(["list", "--counts"]) == 0
    table = capsys.readouterr().out
    readme = (REPO / "README.md").read_text()
    assert table in readme, "README's provenance table is stale: paste `python -m golden list --counts`"
    total = int(re.search(r"^\| all \|.*\| (\d+) \|$", table, re.M).group(1))
    assert total == len(golden.CATALOG)
