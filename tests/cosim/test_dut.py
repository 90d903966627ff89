"""The DUT path (cosim.dut): a design of one's own, described by a TOML file, co-simulated against golden.

The design is the project's own volta HMMA.884.F16.F16 unit exported to Verilog (cosim.dut.export),
once behind tests/data/dut/mma_wrap.sv, whose faults a plusarg plants at run time: one Verilator
build serves the clean run and every planted fault.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import golden
from cosim.dut import __main__ as cli
from cosim.dut import export
from cosim.dut import run as drun
from cosim.dut.builds import prepare
from cosim.dut.description import DescriptionError, load
from cosim.scoring import Config

DATA = Path(__file__).resolve().parents[1] / "data" / "dut"
INS = ("volta", "HMMA.884.F16.F16")
REPO = Path(__file__).resolve().parent.parent.parent


def _write(folder: Path, name: str, text: str) -> Path:
    p = folder / name
    p.write_text(text)
    return p


@pytest.fixture(scope="module")
def design(tmp_path_factory):
    """A folder with the exported unit (mma_unit.v), the fault wrapper and a description maker."""
    folder = tmp_path_factory.mktemp("dut")
    ins = golden.lookup(*INS)
    export.export(ins, folder)
    shutil.copy(DATA / "mma_wrap.sv", folder)

    def describe(name="unit", plant=0, latency=5):
        text = export.description_text(ins, top="mma_wrap", sources=("mma_unit.v", "mma_wrap.sv"), latency=latency,
                                       name="wrap", plusargs=(f"+PLANT={plant}",) if plant else ())
        return _write(folder, f"{name}.toml", text)
    describe.folder = folder
    describe.ins = ins
    return describe


def _edit(path: Path, old: str, new: str, name: str) -> Path:
    text = path.read_text()
    assert old in text, old
    out = path.with_name(name + ".toml")
    out.write_text(text.replace(old, new))
    return out


def _error_line(capsys, argv) -> str:
    rc = cli.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: "), (rc, err)
    return err[0]


# ---- bad descriptions: one line, exit 2, before any build ---------------------------------------------

@pytest.mark.parametrize("old, new, expect", [
    ('in_valid = "i__valid"', 'in_valid = "in_valid"', "no port 'in_valid'"),
    ('element_bits = 16, elements = 4, offset = 0', 'element_bits = 16, elements = 4, offset = 100',
     "i__payload is 144 bits wide in mma_wrap, the description needs at least 164"),
    ('sources = ["mma_unit.v", "mma_wrap.sv"]', 'sources = ["mma_unit.v", "nowhere.sv"]', "nowhere.sv does not exist"),
    ('kind = "valid_ready"', 'kind = "ready_valid"', "valid: valid_ready, axi_stream, valid_only, enable, fixed"),
    ('kind = "valid_ready"\nin_valid = "i__valid"\nin_ready = "i__ready"\nout_valid = "o__valid"\n'
     'out_ready = "o__ready"\nlatency = 5', 'kind = "fixed"', "a fixed handshake needs latency"),
    ('kind = "valid_ready"\nin_valid = "i__valid"\nin_ready = "i__ready"\nout_valid = "o__valid"\n'
     'out_ready = "o__ready"', 'kind = "enable"', "[handshake] enable: the top mma_wrap has no port 'en'"),
    ('elements = 4, offset = 0', 'elements = 8, offset = 0', "a.elements = 8, but HMMA.884.F16.F16 has 4"),
    ('instr = "HMMA.884.F16.F16"', 'instr = "HMMA.999"', "[[target]] volta HMMA.999"),
    ('[reset]', '[reset]\npolarity = "low"', "[reset] polarity: unknown field"),
])
def test_bad_description_is_one_line(design, capsys, old, new, expect):
    path = _edit(design(), old, new, "bad")
    line = _error_line(capsys, ["ports", str(path)])
    assert expect in line, line


def test_compile_error_names_the_log(design, capsys):
    broken = design.folder / "broken.sv"
    broken.write_text((design.folder / "mma_wrap.sv").read_text().replace("assign o__valid", "assign o__valid ="))
    path = _edit(design(), '"mma_wrap.sv"', '"broken.sv"', "broken")
    line = _error_line(capsys, ["ports", str(path)])
    assert "do not compile" in line and "%Error" in line and "full log" in line, line


def test_no_description_file(capsys):
    assert "no such description file" in _error_line(capsys, ["run", "/nonexistent/unit.toml"])


def test_sources_from_a_filelist_and_a_core(tmp_path):
    from cosim.dut import sources
    (tmp_path / "rtl" / "inc").mkdir(parents=True)
    for f in ("rtl/a.sv", "rtl/b.sv", "rtl/inc/defs.svh"):
        (tmp_path / f).write_text("")
    (tmp_path / "rtl" / "more.f").write_text("b.sv  // the second\n")
    (tmp_path / "files.f").write_text("# the design\n+incdir+rtl/inc\n+define+FAST+W=8\nrtl/a.sv\n-f rtl/more.f\n")
    (tmp_path / "u.core").write_text("CAPI=2:\nname: t:u\nfilesets:\n  rtl:\n    files:\n      - rtl/a.sv\n"
                                     "      - rtl/inc/defs.svh: {is_include_file: true}\n      - rtl/b.sv\n"
                                     "    file_type: systemVerilogSource\ntargets:\n  default:\n"
                                     "    filesets: [rtl]\n    toplevel: top\n")
    base = '[dut]\nname = "t"\ntop = "top"\n{}\n[handshake]\nkind = "valid_ready"\n[operands]\n' \
           'a = {{ port = "a", element_bits = 16, elements = 4 }}\n' \
           'b = {{ port = "b", element_bits = 16, elements = 4 }}\n' \
           'c = {{ port = "c", element_bits = 16 }}\nd = {{ port = "d", element_bits = 16 }}\n' \
           '[[target]]\narch = "volta"\ninstr = "HMMA.884.F16.F16"\n'
    for spec in ('filelist = "files.f"', 'core = "u.core"'):
        (tmp_path / "unit.toml").write_text(base.format(spec))
        s = sources.resolve(load(tmp_path / "unit.toml"))
        assert [f.name for f in s.files] == ["a.sv", "b.sv"] and [d.name for d in s.include_dirs] == ["inc"]
    assert sources.resolve(load(tmp_path / "unit.toml")).defines == {}
    (tmp_path / "unit.toml").write_text(base.format('filelist = "files.f"'))
    assert sources.resolve(load(tmp_path / "unit.toml")).defines == {"FAST": True, "W": "8"}
    (tmp_path / "files.f").write_text("-y libdir\n")
    with pytest.raises(DescriptionError, match=r"files.f:1: '-y' is not supported"):
        sources.resolve(load(tmp_path / "unit.toml"))


def test_order_diagnosis():
    import numpy as np

    from cosim.dut.order import Diagnosis, diagnose
    e = np.arange(100, 140, dtype=np.uint64)
    assert diagnose(np.delete(e, 7), e)[0] is Diagnosis.LOST
    assert diagnose(np.insert(e, 8, e[7])[:40], e)[0] is Diagnosis.DUPLICATED
    repeated = np.concatenate([e[:5], [e[4], e[4]], e[5:9], [e[8]], e[9:30]])   # a result held over, twice
    assert diagnose(repeated, e)[0] is Diagnosis.DUPLICATED
    rng = np.random.default_rng(1)
    r = rng.integers(0, 2**32, 300, dtype=np.uint64)
    junk_then_repeats = np.concatenate([[np.uint64(5)] * 5, r[:3], [r[2]], r[3:7], [r[6]], r[7:]])
    assert diagnose(junk_then_repeats, r)[0] is Diagnosis.DUPLICATED      # stale outputs first, then repeats
    assert diagnose(np.delete(r, [10, 14, 17, 40]), r)[0] is Diagnosis.LOST  # several losses in one run
    two_wrong = r.copy()
    two_wrong[[5, 9]] ^= np.uint64(1)
    assert diagnose(two_wrong, r)[0] is Diagnosis.WRONG
    s = e.copy()
    s[[5, 6]] = s[[6, 5]]
    assert diagnose(s, e)[0] is Diagnosis.REORDERED
    w = e.copy()
    w[3] = 7
    assert diagnose(w, e)[0] is Diagnosis.WRONG and diagnose(e, e)[0] is Diagnosis.NONE


# ---- runs: one build of the wrapper, faults planted by plusarg ------------------------------------------

def _run(path, n=3000, **kw):
    prep = prepare(path)
    (target, ins), = prep.pairs
    import io
    out = io.StringIO()
    cfg = Config(n=n, progress=0.0, out=out, rerun_with_waves=kw.pop("waves", False), **kw)
    return drun.run_target(prep, target, ins, cfg), out.getvalue()


def test_clean_design_matches(design, tmp_path):
    dr, _ = _run(design(), failures_dir=tmp_path)
    r = dr.result
    assert r.ok, r.message
    assert (r.vectors, r.mismatches, r.latency_measured, r.latency) == (3000, 0, 5, 5)


@pytest.mark.parametrize("plant, diagnosis, words", [
    (1, "lost", "result lost"),
    pytest.param(2, "duplicated", "result duplicated", marks=pytest.mark.slow),
    pytest.param(3, "x", "uninitialised state (X)", marks=pytest.mark.slow),
    pytest.param(4, "timeout", "the design never answered", marks=pytest.mark.slow),
])
def test_planted_fault_is_caught(design, tmp_path, plant, diagnosis, words):
    dr, report = _run(design(f"plant{plant}", plant=plant), failures_dir=tmp_path)
    assert not dr.result.ok and dr.diagnosis == diagnosis and words in dr.result.message, dr.result.message


def test_wrong_latency_is_named_when_the_values_are_wrong_too(design, tmp_path):
    """A design whose values are wrong (plant 5) and whose declared latency is too: both are said."""
    dr, _ = _run(design("late5", plant=5, latency=6), n=600, failures_dir=tmp_path)
    m = dr.result.message
    assert dr.result.status == "MISMATCH" and "differ from the reference" in m, m
    assert m.startswith("latency: late5.toml declares 6 cycles, the design's first result came 5 cycles"), m


def test_the_probe_names_a_wrong_latency_beside_wrong_values(design, capsys):
    """make probe DUT=: a design whose declared latency is wrong and whose values are wrong (plant 5): the
    probe runs, says the values are not the target's, and names the latency."""
    from probe.__main__ import main as probe_main
    assert probe_main(["--device", f"dut:{design('late5p', plant=5, latency=6)}", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "latency: late5p.toml declares 6 cycles, the design's first result came 5 cycles" in out, out
    assert "DIFFERS" in out and "target(s) differ from what the description says" in out, out


def test_lint_elaborates_string_parameters(tmp_path, capsys):
    """make lint-rtl DUT=: the top under the description's parameters, a SystemVerilog expression included;
    one that does not elaborate is one line, exit 2."""
    from cosim.dut.lint import lint
    en = REPO / "examples" / "dut" / "dotp_en"
    text = (en / "unit.toml").read_text().replace('"../common', f'"{en.parent}/common').replace(
        '"rtl/dotp_en.sv"', f'"{en}/rtl/dotp_en.sv"')
    good = _write(tmp_path, "good.toml", text.replace("[dut]\n", '[dut]\nparameters = { FMT = "fda_pkg::FMT_F16" }\n'))
    assert lint(good) == 0 and "FMT=fda_pkg::FMT_F16" in capsys.readouterr().out
    bad = _write(tmp_path, "bad.toml", text.replace("[dut]\n", '[dut]\nparameters = { FMT = "fda_pkg::NOPE" }\n'))
    assert lint(bad) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not elaborate under the description's parameters" in err[0] and "NOPE" in err[0]


@pytest.mark.slow
def test_wrong_declared_latency_is_caught(design, tmp_path):
    dr, _ = _run(design("late", latency=6), n=600, failures_dir=tmp_path)
    assert dr.result.status == "ERROR" and "declares 6 cycles" in dr.result.message and "came 5" in dr.result.message


@pytest.mark.slow
def test_failure_report_replay_and_junit(design, tmp_path):
    dr, report = _run(design("plant3", plant=3), failures_dir=tmp_path, waves=True)
    assert "first failing vector" in report and "replay: python -m cosim.dut replay" in report
    assert dr.result.waves_file is not None and Path(dr.result.waves_file).exists()
    rep = drun.replay(dr.result.failures_file, Config(out=None))
    assert rep.result.mismatches == len(dr.result.failing["index"])
    from cosim.dut import junit
    prep = prepare(design("plant3", plant=3))
    x = junit.write(tmp_path / "results.xml", prep, [dr]).read_text()
    assert "<testcase" in x and "<failure" in x


@pytest.mark.slow
def test_make_cosim_dut_command_line(design, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    p = subprocess.run([sys.executable, "-m", "cosim.dut", "run", str(design()), "-n", "1000", "--quiet",
                        "--report", str(tmp_path / "r.xml")], capture_output=True, text=True, env=env, cwd=REPO)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "HMMA.884.F16.F16" in p.stdout and (tmp_path / "r.xml").exists()


_TARGET = '[[target]]\narch = "volta"\ninstr = "HMMA.884.F16.F16"\n'
_ABC = ('a = { port = "a", element_bits = 16, elements = 4 }\n'
        'c = { port = "c", element_bits = 16 }\nd = { port = "d", element_bits = 16 }\n')
HANDSHAKES = {
    "hs_axis": ('[clock]\nname = "aclk"\n[reset]\nname = "aresetn"\nactive = "low"\n'
                '[handshake]\nkind = "axi_stream"\nlatency = 5\n[operands]\n'
                'a = { element_bits = 16, elements = 4 }\nb = { element_bits = 16, elements = 4, offset = 64 }\n'
                'c = { element_bits = 16, offset = 128 }\nd = { element_bits = 16 }\n'),
    "hs_valid_only": ('[handshake]\nkind = "valid_only"\n[operands]\n'
                      'a = { ports = "a{i}", element_bits = 16, elements = 4 }\n'
                      'b = { port = "b", element_bits = 16, elements = 4 }\n'
                      'c = { port = "c", element_bits = 16 }\nd = { port = "d", element_bits = 16 }\n'),
    "hs_enable": ('[handshake]\nkind = "enable"\nenable = "en"\nlatency = 5\n[operands]\n' + _ABC +
                  'b = { port = "b_msb_first", element_bits = 16, elements = 4, order = "msb_first" }\n'),
    "hs_fixed": ('[reset]\nname = "rst_n"\nactive = "low"\ncycles = 3\n'
                 '[handshake]\nkind = "fixed"\nlatency = 5\n[operands]\n' + _ABC +
                 'b = { port = "b", element_bits = 16, elements = 4 }\n'),
}


@pytest.mark.slow
@pytest.mark.parametrize("top", sorted(HANDSHAKES))
def test_every_handshake(design, tmp_path, top):
    """Each handshake's adapter, on the same unit behind each kind of port list: 0 mismatches, latency 5."""
    shutil.copy(DATA / "handshakes.sv", design.folder)
    path = _write(design.folder, f"{top}.toml", f'[dut]\nname = "{top}"\ntop = "{top}"\n'
                  'sources = ["mma_unit.v", "handshakes.sv"]\n' + HANDSHAKES[top] + _TARGET)
    dr, _ = _run(path, n=5000, failures_dir=tmp_path)
    assert dr.result.ok, dr.result.message
    assert (dr.result.vectors, dr.result.latency_measured) == (5000, 5)
    if top in ("hs_enable", "hs_fixed"):       # a declared latency one too long: named as such
        late = _edit(path, "latency = 5", "latency = 6", f"{top}_late")
        dr, _ = _run(late, n=3000, failures_dir=tmp_path)
        assert dr.diagnosis == "latency" and "the design's latency is 5" in dr.result.message, dr.result.message


# ---- the board (make fpga-sim DUT=...) -----------------------------------------------------------------

def test_a_design_yosys_cannot_read_is_one_line(design, capsys):
    """Verilator reads a cast to a typedef'd type; Yosys (what a board's build uses) does not."""
    text = (design.folder / "mma_wrap.sv").read_text().replace(
        "    int plant;",
        "    typedef logic [7:0] byte_t;\n    wire [7:0] unused_cast = byte_t'(8'd3);\n    int plant;")
    (design.folder / "cast_wrap.sv").write_text(text)
    path = _edit(design(), '"mma_wrap.sv"', '"cast_wrap.sv"', "cast")
    from fpga import __main__ as fpga_cli
    rc = fpga_cli.main(["sim", "all", "all", "--dut", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "Yosys cannot read the design" in err[0], err


@pytest.mark.slow
def test_fpga_sim_runs_the_design(design, capsys):
    """The exported unit behind the adapter in the board top, driven by the real driver: 0 mismatches."""
    from fpga import __main__ as fpga_cli
    bare = _write(design.folder, "bare.toml", export.description_text(design.ins, latency=5))   # mma_unit alone
    rc = fpga_cli.main(["sim", "all", "all", "--dut", str(bare), "-n", "20"])
    out, err = capsys.readouterr()
    assert rc == 0 and "HMMA.884.F16.F16" in out and " ok" in out, out + err


# ---- campaigns (make campaign DEVICE=dut:...) ----------------------------------------------------------

def test_campaign_refuses_a_bad_dut_device_in_one_line(design, capsys, tmp_path):
    from campaign import __main__ as camp
    bad = _edit(design(), 'in_valid = "i__valid"', 'in_valid = "in_valid"', "camp_bad")
    rc = camp.main(["run", "all", "all", "-n", "8192", "--device", f"dut:{bad}", "--db", str(tmp_path / "c.sqlite")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "no port 'in_valid'" in err[0], err


@pytest.mark.slow
def test_campaign_runs_the_design(design, capsys, tmp_path):
    from campaign import __main__ as camp
    rc = camp.main(["run", "all", "all", "-n", "8192", "--block", "8192", "--device", f"dut:{design()}",
                    "--db", str(tmp_path / "c.sqlite"), "--workers", "1"])
    out = capsys.readouterr().out
    assert rc == 0 and "HMMA.884.F16.F16" in out and "0 mismatches" in out, out


def test_description_defaults_and_no_reset(design):
    desc = load(design())
    assert (desc.clock, desc.reset, desc.reset_active, desc.handshake.kind.value) == \
        ("clk", "rst", "high", "valid_ready")
    assert desc.operands["b"].element_port(2) == ("i__payload", 64 + 32)
    assert load(_edit(design(), 'name = "rst"', 'name = ""', "noreset")).reset is None
