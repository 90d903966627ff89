"""Icarus Verilog as the second simulator of the cocotb co-simulation (cosim/icarus.py, SIM=icarus).

make test runs one small check: the stand-in unit (cosim.standin) built with ``iverilog -g2012`` inside
``tb/cosim_harness.sv`` (with COSIM_FILE_IO), run through cocotb's Icarus runner with stalls on both sides, scored
against its reference (0 mismatches, the declared latency and II measured), and the planted bug of the
stand-in found.  It skips, saying so, where Icarus Verilog is not installed.  Under ``-m slow``: one
unit of each algorithm family (FDA, GDFS, FDRDA, GFDRDA, GPS, SFMA) and the Verilog-2005 example design
examples/dut/dotp_v2k against golden, as ``make cosim ... SIM=icarus`` runs them.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import golden
from cosim import build as bld
from cosim import icarus, standin
from cosim import run as cr
from cosim.payload import PayloadLayout
from cosim.scoring import simulate_and_score
from cosim.status import Status
from golden.streams import VectorStream

ROOT = bld.BUILD_ROOT / "test"
EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples" / "dut"
needs_icarus = pytest.mark.skipif(not icarus.available(), reason="Icarus Verilog is not installed (iverilog and "
                                  "vvp on PATH; Debian/Ubuntu: apt-get install iverilog): the SIM=icarus checks skip")

# one unit of each algorithm family (docs/spec.md)
FAMILIES = [
    ("hopper", "HGMMA.64xNx16.F32"),                 # FDA
    ("blackwell", "UTCOMMA.MXF4.E8"),                # GDFS
    ("cdna3", "v_mfma_f32_32x32x8_bf16"),            # FDRDA
    ("cdna3", "v_mfma_f32_32x32x16_bf8_bf8"),        # GFDRDA
    ("cdna2", "v_mfma_f32_16x16x2bf16"),             # GPS
    ("hopper", "DMMA.16x8x16"),                      # SFMA
]


@pytest.fixture
def use_icarus(monkeypatch):
    monkeypatch.setenv(icarus.SIM_ENV, "icarus")


def test_simulator_choice(monkeypatch):
    monkeypatch.delenv(icarus.SIM_ENV, raising=False)
    assert icarus.current() == "verilator"                # the default everywhere
    monkeypatch.setenv(icarus.SIM_ENV, "questa")
    with pytest.raises(ValueError, match="verilator or icarus"):
        icarus.current()


def test_one_harness_with_dpi_or_file_io_routines_of_the_same_names():
    """Icarus builds tb/cosim_harness.sv itself with COSIM_FILE_IO: the five DPI-C imports become module
    routines of the same names, and nothing else of the harness differs."""
    import re
    assert icarus.HARNESS == bld.HARNESS
    dpi, file_io = bld.HARNESS.read_text().split("`ifndef COSIM_FILE_IO")[1].split("`endif")[0].split("`else")
    names = re.findall(r'import "DPI-C" function \w+\s+(\w+)\(', dpi)
    assert names == ["cosim_load", "cosim_get", "cosim_begin_out", "cosim_put", "cosim_save"]
    assert [re.search(rf"(?:task|function) automatic (?:\w+ )?{n}\(", file_io) is not None for n in names] == \
        [True] * 5 and "DPI" not in file_io


@needs_icarus
def test_standin_under_icarus(use_icarus):
    """A clean stand-in: every output equals the reference under stalls; a buggy one is caught."""
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    for bug, lat in ((False, 3), (True, 4)):
        unit = standin.StandInUnit(ins, 2, latency=lat, bug=bug)
        b = bld.build_unit(unit, ins.arch, ins.name + (".bug" if bug else ""), root=ROOT)
        assert b.meta["simulator"] == "icarus" and (b.dir / icarus.EXE).exists()
        assert b.dir.relative_to(ROOT).parts[0] == "icarus"
        res = simulate_and_score(b, PayloadLayout(ins, 2), VectorStream(ins, "bits", 5), standin.reference,
                                 n=1024, seed=5, stall_in=0.2, stall_out=0.2)
        assert res.message == "" or bug, res.message
        assert (res.latency_measured, res.ii_measured) == (lat, 1.0)
        assert res.vectors == 1024
        if bug:
            assert res.mismatches > 0 and res.status == Status.MISMATCH
        else:
            assert res.mismatches == 0 and res.status == Status.OK


@needs_icarus
@pytest.mark.slow
@pytest.mark.parametrize("arch, name", FAMILIES)
def test_family_unit_under_icarus(use_icarus, arch, name):
    ins = golden.lookup(arch, name)
    cfg = cr.Config(n=500, progress=0, out=io.StringIO(), rerun_with_waves=False)
    r = cr.run_instruction(ins, cfg)
    assert r.status == Status.OK and r.mismatches == 0 and r.vectors == 500, r.message
    assert r.build_key and (bld.BUILD_ROOT / "icarus").exists()


@needs_icarus
@pytest.mark.slow
def test_verilog_example_design_under_icarus(use_icarus):
    from cosim.dut import run as drun
    from cosim.dut.builds import prepare
    prep = prepare(EXAMPLES / "dotp_v2k/unit.toml")
    [(target, ins)] = prep.pairs
    cfg = cr.Config(n=1000, progress=0, out=io.StringIO(), rerun_with_waves=False, seed=7)
    dr = drun.run_target(prep, target, ins, cfg)
    r = dr.result
    assert r.status == Status.OK and r.mismatches == 0, r.message
