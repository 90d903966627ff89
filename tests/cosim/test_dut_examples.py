"""The SystemVerilog test designs of examples/dut through the DUT path (cosim.dut) and the probe.

Each design, written independently of hw/, must pass ``make cosim DUT=...`` with 0 mismatches on
every target, and each planted fault must be caught with its own diagnosis (examples/dut/README.md
lists what each should give).  make test runs one design through cosim (one Verilator build) and
checks which designs Yosys reads (the board's condition); the probe's inference of that design, every
design, target and fault, and the board simulation of the Verilog-2005 design dotp_v2k, run under
``-m slow`` (make test probes a DUT in test_dut.py).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from cosim.dut import run as drun
from cosim.dut.builds import prepare, sources_for
from cosim.scoring import Config

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples" / "dut"
N = 8192


def _run(toml: str, n: int = N) -> list:
    """``[(instruction name, target params, DutResult)]`` for every target of ``toml``."""
    prep = prepare(EXAMPLES / toml)
    out = []
    for target, ins in prep.pairs:
        cfg = Config(n=n, progress=0, out=io.StringIO(), rerun_with_waves=False, seed=7)
        out.append((ins.name, target.params, drun.run_target(prep, target, ins, cfg)))
    return out


def test_valid_ready_design_passes_cosim():
    """dotp_vr (ampere HMMA.1688.F32): 0 mismatches under random stalls, the structured pass and the X
    check."""
    [(_, _, dr)] = _run("dotp_vr/unit.toml", n=4096)
    r = dr.result
    assert r.status == "ok" and r.mismatches == 0 and r.vectors == 4096, r.message
    assert any("structured" in note for note in dr.notes)


# about 20 s of CPU; make test probes a DUT in test_dut.py (the design with a wrong latency)
@pytest.mark.slow
def test_the_probe_infers_the_valid_ready_design():
    """The probe, on dotp_vr's build, finds the entry's parameters and reproduces the design."""
    import golden
    from probe import probe
    from probe.backends import backend_from_name
    rep = probe(golden.lookup("ampere", "HMMA.1688.F32"), backend_from_name(f"dut:{EXAMPLES / 'dotp_vr/unit.toml'}"))
    assert rep.matches, rep.summary()
    assert rep.verification and rep.verification.get("mismatches", 1) == 0


@pytest.mark.slow
@pytest.mark.parametrize("design", ["dotp_vr", "dotp_en", "dotp_axis", "dotp_mf", "dotp_v2k", "tile_engine",
                                    "sdotp_split"])
def test_every_design_passes_every_target(design):
    results = _run(f"{design}/unit.toml")
    assert results
    for name, params, dr in results:
        assert dr.result.status == "ok" and dr.result.mismatches == 0, f"{name} {params}: {dr.result.message}"


# fault TOML -> (targets that must fail: "all" or "RNE" for the params targets only, diagnosis, words in the message)
FAULTS = {
    "dotp_vr/faults/acc_wrap.toml": ("all", "wrong", "differ from the reference"),
    "dotp_vr/faults/drop_on_stall.toml": ("all", "lost", "lost"),
    "dotp_en/faults/flush_subnormal.toml": ("all", "wrong", "the structured pass"),
    "dotp_en/faults/wrong_latency.toml": ("all", "latency", "the design's latency is 4"),
    "dotp_axis/faults/nan_encoding.toml": ("all", "wrong", "differ from the reference"),
    "dotp_axis/faults/duplicate.toml": ("all", "duplicated", "duplicated"),
    "dotp_mf/faults/ties_up.toml": ("RNE", "wrong", "differ from the reference"),
    "dotp_mf/faults/x_after_reset.toml": ("all", "x", "uninitialised state (X)"),
    "dotp_v2k/faults/short_align.toml": ("all", "wrong", "differ from the reference"),
    "tile_engine/faults/swap_lanes.toml": ("all", "wrong", "D elements differ from golden"),
    "tile_engine/faults/transpose_b.toml": ("all", "wrong", "D elements differ from golden"),
    "tile_engine/faults/no_carry.toml": ("all", "wrong", "D elements differ from golden"),
}


def test_every_fault_toml_has_an_expected_diagnosis():
    assert {str(p.relative_to(EXAMPLES)) for p in EXAMPLES.glob("*/faults/*.toml")} == set(FAULTS)


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(FAULTS))
def test_planted_fault_is_caught_with_its_diagnosis(fault):
    which, diagnosis, words = FAULTS[fault]
    for name, params, dr in _run(fault):
        must_fail = which == "all" or (params or "").find("out_rounding=RNE") >= 0
        if not must_fail:
            assert dr.result.ok, f"{name} {params}: {dr.result.message}"
            continue
        assert not dr.result.ok, f"{fault} {name} {params} passed"
        assert dr.diagnosis == diagnosis, f"{name} {params}: {dr.diagnosis}: {dr.result.message}"
        assert words in dr.result.message, dr.result.message


@pytest.mark.slow
@pytest.mark.parametrize("fault,instr", [("dotp_vr/faults/acc_wrap.toml", "HMMA.1688.F32"),
                                         ("dotp_axis/faults/nan_encoding.toml", "HMMA.1688.F32.BF16"),
                                         ("dotp_en/faults/flush_subnormal.toml", "HMMA.1684.F32.TF32")])
def test_probe_never_says_matches_on_an_arithmetic_fault(fault, instr):
    import golden
    from probe import probe
    from probe.backends import backend_from_name
    rep = probe(golden.lookup("ampere", instr), backend_from_name(f"dut:{EXAMPLES / fault}"))
    assert not rep.matches, rep.summary()


# ---- the board (make fpga-sim DUT=...) -----------------------------------------------------------------

def test_yosys_reads_the_verilog_design_and_refuses_the_systemverilog_one():
    """dotp_v2k (Verilog-2005) passes the board's Yosys check; dotp_vr (structs, functions returning
    them, casts to typedefs) is refused in one line before anything is built."""
    from cosim.dut.description import DescriptionError
    from fpga.board.dut import dut_board
    board = dut_board(EXAMPLES / "dotp_v2k/unit.toml")
    assert board.ins.name == "HMMA.1688.F32" and board.iface.latency >= 3
    with pytest.raises(DescriptionError, match="Yosys cannot read the design"):
        dut_board(EXAMPLES / "dotp_vr/unit.toml")


@pytest.mark.slow
@pytest.mark.parametrize("toml,rc,status", [("dotp_v2k/unit.toml", 0, " ok"),
                                            ("dotp_v2k/faults/short_align.toml", 1, "MISMATCH: ")])
def test_fpga_sim_runs_the_verilog_design_end_to_end(capsys, toml, rc, status):
    """make fpga-sim DUT=examples/dut/dotp_v2k/unit.toml: the design in the board top, behind the host
    link and the UART, driven by the board driver under Verilator, 0 mismatches against golden; its
    planted fault (every aligned term one fraction bit short) is a MISMATCH on the board too."""
    from fpga import __main__ as fpga_cli
    got = fpga_cli.main(["sim", "all", "all", "--dut", str(EXAMPLES / toml), "-n", "300"])
    out, err = capsys.readouterr()
    assert got == rc and "HMMA.1688.F32" in out and status in out, out + err


def test_a_bitstream_build_carries_the_designs_files_and_options():
    """make fpga DUT=: the build plan carries the adapter, the design's files (a .f list nesting another,
    include folders) under dut/, and the -D/-I options Yosys reads them with."""
    from fpga.board.dut import DutBoard, platform_files
    prep = prepare(EXAMPLES / "dotp_mf/unit.toml")
    target, ins = prep.pairs[0]
    srcs, _ = sources_for(prep, target, ins)
    files, options = platform_files(DutBoard(prep, ins, srcs, None))
    assert "dut/cosim_unit.sv" in files and any(n.endswith("fda_pkg.sv") for n in files)
    assert any(n.endswith("fda_defs.svh") for n in files)                   # an include folder's file
    assert "-DDOTP_MF_OUTPUT_REG" in options and "-Idut/" in options
    for name in files:
        assert name.startswith("dut/") and ".." not in name


def test_a_bitstream_build_of_a_design_refuses_unit_options(capsys):
    from fpga import __main__ as fpga_cli
    assert fpga_cli.main(["build", "all", "all", "--dut", str(EXAMPLES / "dotp_v2k/unit.toml"), "--lanes", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --dut builds your design as it is"), err


@pytest.mark.slow
def test_a_bitstream_of_the_verilog_design(capsys):
    """make fpga DUT=examples/dut/dotp_v2k/unit.toml CLOCK=19: synthesis, place and route and a
    bitstream of the board top around the design (Fmax about 20 MHz: the design's own)."""
    from fpga import __main__ as fpga_cli
    got = fpga_cli.main(["build", "all", "all", "--dut", str(EXAMPLES / "dotp_v2k/unit.toml"), "--clock", "19"])
    out = capsys.readouterr().out
    assert got == 0 and "design dut-dotp_v2k" in out and "bitstream:" in out, out
