"""The test designs of examples/dut (issue 20) against the golden model, through tools/dut_selfcheck.py.

The default tier builds one design (dotp_en) and checks that it equals its catalog entry on
20,000 dot-adds and that its planted wrong-latency fault is caught (same build); every design
lints clean.  The slow tier runs every design and every planted fault with its diagnosis.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from tool_scripts import load_tool

REPO = Path(__file__).resolve().parents[2]
DUT = REPO / "examples" / "dut"
DESIGNS = ("dotp_vr", "dotp_en", "dotp_axis", "dotp_mf", "dotp_v2k")
N = 20000


def _tool():
    return load_tool("dut_selfcheck")


sc = _tool()


@pytest.fixture(scope="module", autouse=True)
def _toolchain(tmp_path_factory):
    from cosim.toolchain import ToolchainError, setup
    try:
        setup()
    except ToolchainError as e:
        pytest.skip(str(e))
    if os.environ.get("MMA_BUILD_DIR"):              # a shared build cache is used as it is
        yield
        return
    os.environ["MMA_BUILD_DIR"] = str(tmp_path_factory.mktemp("build"))   # else builds stay out of the checkout
    try:
        yield
    finally:
        del os.environ["MMA_BUILD_DIR"]                # the other tests' builds go where they did


def _run(path: Path, seeds=(1,)):
    return sc.run(sc.load(path), N, seeds)


# the designs through the real DUT path run in make test (tests/cosim/test_dut_examples.py); this independent
# self-check harness (a second testbench) runs under slow
@pytest.mark.slow
def test_dotp_en_matches_and_wrong_latency_is_caught():
    clean = _run(DUT / "dotp_en" / "unit.toml")
    assert [(r.received, r.mismatches, r.extra, r.missing) for r in clean] == [(N, 0, 0, 0)]
    late = _run(DUT / "dotp_en" / "faults" / "wrong_latency.toml")      # the same build, declared 5 not 4
    assert late[0].received == N and late[0].mismatches > N // 2


@pytest.mark.parametrize("design", DESIGNS)
def test_design_lints_clean(design):
    assert sc.lint(sc.load(DUT / design / "unit.toml")) == ""


def test_fault_tomls_differ_only_in_defines_or_latency():
    for design in DESIGNS:
        base = sc.load(DUT / design / "unit.toml")
        for f in sorted((DUT / design / "faults").glob("*.toml")):
            u = sc.load(f)
            assert (u.files, u.include_dirs, u.top, u.operands, u.targets) == \
                (base.files, base.include_dirs, base.top, base.operands, base.targets), f
            changed = (u.defines != base.defines) + (u.handshake != base.handshake)
            assert changed == 1, f


def test_operand_packing_follows_order_and_offset():
    u = sc.load(DUT / "dotp_mf" / "unit.toml")                   # msb_first: element 0 on top
    a = np.arange(1, 9, dtype=np.uint64)[None, :]
    ports = sc.pack(u, a, a, np.array([0xABCD], np.uint64))
    assert ports["a"][0] >> 112 == 1 and ports["a"][0] & 0xFFFF == 8 and ports["c"] == [0xABCD]
    u = sc.load(DUT / "dotp_axis" / "unit.toml")                 # three fields of one tdata
    ports = sc.pack(u, a, a + np.uint64(8), np.array([0x12345678], np.uint64))
    word = ports["s_axis_tdata"][0]
    assert word & 0xFFFFFFFF == 0x12345678 and (word >> 32) & 0xFFFF == 1 and (word >> 160) & 0xFFFF == 9


@pytest.mark.parametrize("text, what", [
    ('[dut]\nname = "x"\ntop = "x"\nsources = ["nope.sv"]\n', "missing"),
    ('[dut]\nname = "x"\ntop = "x"\n', "exactly one of"),
    ('[dut]\nname = "x"\ntop = "x"\nsources = []\n[handshake]\nkind = "credit"\n', "kind must be one of"),
    ('[dut]\nname = "x"\ntop = "x"\nsources = []\n[handshake]\nkind = "enable"\n', "needs latency"),
])
def test_bad_description_is_one_clear_error(tmp_path, text, what):
    p = tmp_path / "unit.toml"
    p.write_text(text)
    with pytest.raises(sc.DescriptionError, match=what):
        sc.load(p)


def test_bad_target_params_are_named():
    with pytest.raises(sc.DescriptionError, match="'G' is not a golden.Params field"):
        sc.instruction({"arch": "ampere", "instr": "HMMA.1688.F32", "params": "G=3"})
    ins = sc.instruction({"arch": "ampere", "instr": "HMMA.1688.F32", "params": "out_rounding=RNE,F=25"})
    assert (ins.params.out_rounding, ins.params.F) == ("RNE", 25)


@pytest.mark.slow
@pytest.mark.parametrize("design", DESIGNS)
def test_design_matches_every_target(design):
    results = _run(DUT / design / "unit.toml", seeds=(1, 2))
    assert results and all(r.clean and r.received == N for r in results), [r.target for r in results if not r.clean]


def _diagnosis_arithmetic(results):
    return all(r.received == N and not r.extra and not r.missing for r in results) and \
        any(r.mismatches for r in results)


# fault TOML -> what the self-check must see (the diagnosis cosim should give: examples/dut/README.md)
FAULTS = {
    "dotp_vr/acc_wrap": _diagnosis_arithmetic,
    "dotp_vr/drop_on_stall": lambda rs: all(r.missing > 0 for r in rs),
    "dotp_en/flush_subnormal": lambda rs: _diagnosis_arithmetic(rs) and
    all(got == 0 and exp & 0x7F800000 == 0 for r in rs for _, got, exp in r.first_mismatches),
    "dotp_en/wrong_latency": _diagnosis_arithmetic,
    "dotp_axis/nan_encoding": lambda rs: _diagnosis_arithmetic(rs) and
    all((got, exp) == (0x7FC00000, 0x7FFFFFFF) for r in rs for _, got, exp in r.first_mismatches),
    "dotp_axis/duplicate": lambda rs: all(r.extra > 0 and not r.missing for r in rs),
    "dotp_mf/ties_up": lambda rs: _diagnosis_arithmetic(rs) and
    all((r.mismatches > 0) == ("RNE" in r.target) for r in rs) and
    all(got == exp + 1 for r in rs for _, got, exp in r.first_mismatches),     # one ulp up in magnitude
    "dotp_mf/x_after_reset": lambda rs: all(r.extra > 0 for r in rs),
    "dotp_v2k/short_align": _diagnosis_arithmetic,
}


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_planted_fault_is_caught(fault):
    design, name = fault.split("/")
    results = _run(DUT / design / "faults" / f"{name}.toml", seeds=(1, 2, 3))
    assert FAULTS[fault](results), [(r.target, r.seed, r.mismatches, r.extra, r.missing) for r in results]


def test_every_fault_toml_is_checked():
    # the self-check harness takes dot-add devices with catalog targets: the tile and split-port designs run
    # through the DUT path only (tests/cosim/test_dut_tile.py)
    found = {f"{p.parent.parent.name}/{p.stem}" for p in DUT.glob("*/faults/*.toml") if p.parent.parent.name in DESIGNS}
    assert found == set(FAULTS)
