"""The robustness battery (issue 12): what a new user tries, and what must come of it.

Bad input gets one clear line naming the option and what is valid, exit status 2 and no
traceback; a damaged build cache is rebuilt; a replay file names the unit that failed; the same
dot-add gives the same bits wherever it sits in a batch; memory follows the chunk, not the batch.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import golden

REPO = Path(__file__).resolve().parent.parent.parent


def _cli(package, *argv, env=None, timeout=120):
    """``python -m package argv...`` in the checkout, as a user runs it."""
    return subprocess.run([sys.executable, "-m", package, *argv], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def _one_clear_line(proc, words) -> bool:
    """Exit status 2, no traceback, and one ``error:`` line (notes aside) that says ``words``."""
    lines = [x for x in proc.stderr.splitlines() if x.strip() and not x.startswith("note:")]
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert words in lines[0], lines[0]
    return True


# ---- the same dot-add, the same bits -------------------------------------------------------------

def test_gps_nan_bits_do_not_depend_on_the_row():
    """numpy's SIMD lanes and its scalar tail make different NaN bits; golden's GPS result must not."""
    ins = golden.lookup("cdna2", "v_mfma_f32_16x16x16_bf16")
    rows = 17
    a = np.zeros((rows, ins.k))
    a[:, :3] = [np.inf, -np.inf, np.nan]
    b = np.zeros((rows, ins.k))
    b[:, :3] = 1.0
    d = golden.dot_add(ins, a, b, np.zeros(rows))
    assert set(d.tolist()) == {0x7FC00000}           # the canonical quiet NaN, as hw.gps computes it
    for n in (1, 5, 16, 33):                        # alone, or in batches with and without a tail
        assert set(golden.dot_add(ins, a[:1].repeat(n, 0), b[:1].repeat(n, 0), np.zeros(n)).tolist()) == {0x7FC00000}


# ---- a replay file names what failed ----------------------------------------------------------------

SMALL = ("volta", "HMMA.884.F16.F16")           # the smallest hw unit: a build of a few seconds


def _quiet(tmp_path, **kw):
    from cosim import run as cr
    base = dict(progress=0, rerun_with_waves=False, failures_dir=tmp_path, stall=0.1)
    base.update(kw)
    return cr.Config(**base)


def test_custom_hw_unit_failure_replays_on_the_same_unit(tmp_path):
    """A custom unit (a callable, other Params) fails; its replay rebuilds that unit and fails again."""
    import hw
    from cosim import failures
    from cosim import run as cr
    ins = golden.lookup(*SMALL)

    def narrow(i, lanes):                       # F=12 instead of 23: wrong against golden's catalog design
        return hw.dot_add_unit(i, lanes=lanes, params=i.params.with_(F=12))
    r = cr.run_many([ins], _quiet(tmp_path, n=3000), narrow)[0]
    assert r.status == "MISMATCH" and r.mismatches > 10
    meta, arrays = failures.load_failures(r.failures_file)
    assert meta["unit"] is None and meta["unit_description"]["hw"]["params"]["F"] == 12
    assert meta["build_key"] == r.build_key
    again = cr.replay(r.failures_file, _quiet(tmp_path))
    assert again.status == "MISMATCH" and again.mismatches == again.vectors == r.mismatches
    assert again.build_key == r.build_key and again.build_source == "cached"
    # the catalog unit passes these vectors: the replay is of the custom unit, not of the catalog's
    assert cr.replay(r.failures_file, _quiet(tmp_path), unit="hw").status == "ok"


def test_a_custom_unit_that_cannot_be_rebuilt_is_refused_by_name(tmp_path):
    from cosim import build as bld
    from cosim import run as cr
    from cosim import standin
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")

    def planted(i, lanes):                      # the stand-in's build of test_cosim_infra (cached)
        return standin.StandInUnit(i, lanes, latency=5, initiation_interval=2, bug=True)
    planted.reference = standin.reference
    cfg = _quiet(tmp_path, n=3000, lanes=3, build_root=bld.BUILD_ROOT / "test")
    r = cr.run_instruction(ins, cfg, planted)
    assert r.status == "MISMATCH"
    with pytest.raises(ValueError, match=r"custom unit \(cosim\.standin\.StandInUnit made by .*planted\)"):
        cr.replay(r.failures_file, cfg)
    proc = _cli("cosim", "replay", str(r.failures_file))
    assert _one_clear_line(proc, "cannot be rebuilt from the file")
    again = cr.replay(r.failures_file, cfg, unit=planted)           # with the unit given: fails again
    assert again.status == "MISMATCH" and again.mismatches == again.vectors == r.mismatches


# ---- a damaged build cache is rebuilt -----------------------------------------------------------------

def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 3])


@pytest.mark.slow                      # about 13 s: two Verilator builds
def test_a_truncated_build_and_runtime_cache_are_rebuilt(tmp_path, monkeypatch):
    """A cached harness executable and the shared run-time objects, both truncated (a full disk, a
    killed copy): the next run sees it, builds again and passes; nothing damaged is used."""
    import shutil

    from cosim import build as bld
    from cosim import run as cr
    from cosim import standin
    from cosim.units import StandInUnits
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    shared = bld.build_unit(standin.StandInUnit(ins, 1, latency=3), ins.arch, ins.name,
                            root=bld.BUILD_ROOT / "test")         # test_cosim_infra's clean_build
    if not bld.runtime_ok(bld._runtime_cache(shared.meta, bld.toolchain.setup())):
        # a build kept from before the run-time cache's key changed: build once more to save it
        shared = bld.build_unit(standin.StandInUnit(ins, 1, latency=3), ins.arch, ins.name, root=tmp_path / "first")
    # a private copy of the build and of the run-time cache: other tests may use the shared ones meanwhile
    root = tmp_path / "root"
    mine = root / shared.dir.relative_to(bld.BUILD_ROOT / "test")
    shutil.copytree(shared.dir, mine, ignore=shutil.ignore_patterns("run-*"))
    runtime = bld._runtime_cache(shared.meta, bld.toolchain.setup())
    monkeypatch.setattr(bld, "BUILD_ROOT", tmp_path)
    my_runtime = bld._runtime_cache(shared.meta, bld.toolchain.setup())
    shutil.copytree(runtime, my_runtime)
    assert bld.runtime_ok(my_runtime)
    _truncate(mine / bld.EXE)
    _truncate(my_runtime / "verilated.o")
    r = cr.run_instruction(ins, _quiet(tmp_path, n=2000, build_root=root), StandInUnits(latency=3))
    assert r.status == "ok" and r.build_source == "built" and r.vectors == 2000, r.message
    assert bld.runtime_ok(my_runtime)                   # saved again, whole
    assert not list(mine.parent.glob(".*.tmp*"))         # the scratch folder became the build
    again = bld.build_unit(standin.StandInUnit(ins, 1, latency=3), ins.arch, ins.name, root=root)
    assert again.source == "cached" and again.dir == mine


# ---- memory follows the chunk, not the batch --------------------------------------------------------

def test_dot_add_widens_and_broadcasts_a_chunk_at_a_time():
    """(250, 1, 16) against (4000, 16): 1,000,000 dot-adds from 70 KB of operands.  Broadcast and
    widened to uint64 whole, a and b alone would take 256 MB; chunked, the peak is the chunk's."""
    import tracemalloc
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    rng = np.random.default_rng(3)
    a = rng.integers(0, 0x7C00, (250, 1, ins.k), dtype=np.uint16)
    b = rng.integers(0, 0x7C00, (4000, ins.k), dtype=np.uint16)
    tracemalloc.start()
    try:
        d = golden.dot_add(ins, a, b, np.uint32(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert d.shape == (250, 4000)
    assert peak < 48e6, f"peak {peak / 1e6:.0f} MB"
    # the same results as the rows one by one
    for i, j in ((0, 0), (249, 3999), (17, 2345)):
        assert d[i, j] == golden.dot_add(ins, a[i, 0], b[j], np.uint32(0))


def test_scales_broadcast_with_the_batch():
    ins = golden.lookup("blackwell", "UTCOMMA.4X")
    nblk = ins.k // ins.block_size
    rng = np.random.default_rng(4)
    a = rng.integers(0, 16, (1, ins.k), dtype=np.uint8)                 # one row of a ...
    b = rng.integers(0, 16, (1, ins.k), dtype=np.uint8)
    sa = rng.integers(0x30, 0x48, (5, nblk), dtype=np.uint8)           # ... five scale rows: a batch of 5
    sb = np.full((1, nblk), 0x38, np.uint8)
    d = golden.dot_add(ins, a, b, np.uint32(0), sa, sb)
    assert d.shape == (5,)
    assert d.tolist() == [int(golden.dot_add(ins, a[0], b[0], np.uint32(0), sa[i], sb[0])) for i in range(5)]


# ---- the battery: bad input is one clear line, exit status 2, no traceback --------------------------

HGMMA = ["hopper", "HGMMA.64xNx16.F32"]
TRACE = ["trace", *HGMMA]


def inexact_floats(ins, n, rng):
    """A VECTORS=module:function generator of floats that f16 cannot hold (0.1)."""
    return np.full((n, ins.k), 0.1), np.ones((n, ins.k)), np.zeros(n), None, None


def exact_floats(ins, n, rng):
    """A generator of exactly representable floats, which golden.dot_add takes as they are."""
    return np.full((n, ins.k), 1.5), np.ones((n, ins.k)), np.zeros(n), None, None


GOLDEN_CASES = {
    "a-too-wide": (TRACE + ["--a", "0x1ffffffffffffffff"], "--a: bit pattern 0x1ffffffffffffffff is wider than f16"),
    "a-not-a-number": (TRACE + ["--a", "1,2,x"], "--a: 'x' is neither a number nor a 0x bit pattern"),
    "a-bad-hex": (TRACE + ["--a", "0xZZ"], "--a: '0xZZ' is not a hexadecimal bit pattern"),
    "a-empty-items": (TRACE + ["--a", ",,,"], "--a ',,,': value 1 is empty"),
    "a-too-many": (TRACE + ["--a", ",".join(["1"] * 17)], "17 values given, the instruction has K=16"),
    "scale-on-unscaled": (TRACE + ["--scale-a", "1"], "--scale-a: hopper HGMMA.64xNx16.F32 takes no block scales"),
    "scale-blocks": (["trace", "blackwell", "UTCOMMA.4X", "--scale-a", "1,1,1,1,1"],
                     "5 values given, the instruction has 4 scale blocks (K=64 / block size 16)"),
    "scale-negative": (["trace", "blackwell", "UTCOMMA.4X", "--scale-a", "-1"], "ue4m3 is unsigned"),
    "n-huge": (["run", *HGMMA, "-n", "1000000000000"], "-n must be at least 1 and at most 1,000,000,000"),
    "n-negative": (["run", *HGMMA, "-n", "-5"], "-n must be at least 1"),
    "seed-negative": (["run", *HGMMA, "-n", "5", "--seed", "-1"], "--seed must be a non-negative integer"),
}


def _junk_files(d: Path) -> dict:
    """Replay files a user may hand over by mistake, and what the one line must say of each."""
    d.mkdir(exist_ok=True)
    (d / "empty.npz").write_bytes(b"")
    (d / "random.npz").write_bytes(np.random.default_rng(0).bytes(4096))
    meta = '{"arch": "hopper", "instr": "HGMMA.64xNx16.F32", "lanes": 1, "unit": "standin"}'
    ok_ops = dict(a=np.zeros((2, 16), np.uint64), b=np.zeros((2, 16), np.uint64), c=np.zeros(2, np.uint64))
    np.savez(d / "nometa.npz", **ok_ops)
    np.savez(d / "noarch.npz", meta='{"lanes": 1}', **ok_ops)
    np.savez(d / "badmeta.npz", meta="lanes: 1", **ok_ops)
    np.savez(d / "noc.npz", meta=meta, a=ok_ops["a"], b=ok_ops["b"])
    np.savez(d / "zero.npz", meta=meta, a=np.zeros((0, 16), np.uint64), b=np.zeros((0, 16), np.uint64),
             c=np.zeros(0, np.uint64))
    np.savez(d / "floats.npz", meta=meta, **{k: v.astype(np.float64) for k, v in ok_ops.items()})
    return {
        "folder": (d, "is a folder; give one .npz file"),
        "missing": (d / "nothing.npz", "does not exist"),
        "empty": (d / "empty.npz", "is empty"),
        "random-bytes": (d / "random.npz", "is not a readable .npz"),
        "no-meta": (d / "nometa.npz", "has no meta data"),
        "no-arch": (d / "noarch.npz", "names no instruction (arch, instr)"),
        "meta-not-json": (d / "badmeta.npz", "its meta data is not JSON"),
        "no-c": (d / "noc.npz", "lacks the operand array(s) c"),
        "zero-rows": (d / "zero.npz", "holds no vectors"),
        "float-operands": (d / "floats.npz", "operand a holds float64 values, not bit patterns"),
    }


COSIM_CASES = {
    # make cosim SEED=-1 / BUDGET=-5 / WAVES=maybe call this entry point with these options
    "seed-negative": (["run", *HGMMA, "--seed", "-1"], "--seed must be a non-negative integer"),
    "budget-negative": (["run", *HGMMA, "--budget", "-5"], "--budget must be a positive number of seconds"),
    "waves-word": (["run", *HGMMA, "--waves-word", "maybe"], "WAVES=maybe: expected yes or no"),
    "inexact-generator": (["run", *HGMMA, "-n", "10", "--vectors", "tests.project.test_robustness:inexact_floats"],
                          "a: value 0.1 is not exactly representable in f16"),
    "tensor-core-seed": (["tensor-core", "volta", "--seed", "-1"], "--seed must be a non-negative integer"),
}


@pytest.mark.parametrize("case", sorted(GOLDEN_CASES))
def test_golden_bad_input(case):
    argv, words = GOLDEN_CASES[case]
    proc = _cli("golden", *argv)
    assert _one_clear_line(proc, words)
    assert proc.stdout == ""                          # no table header before the error


@pytest.mark.parametrize("case", sorted(COSIM_CASES))
def test_cosim_bad_input(case):
    argv, words = COSIM_CASES[case]
    proc = _cli("cosim", *argv)
    assert _one_clear_line(proc, words)
    assert proc.stdout == ""


REPLAY_CASES = ("folder", "missing", "empty", "random-bytes", "no-meta", "no-arch", "meta-not-json", "no-c",
                "zero-rows", "float-operands")


@pytest.mark.parametrize("case", REPLAY_CASES)
def test_replay_of_what_is_not_a_failure_file(case, tmp_path_factory):
    path, words = _junk_files(tmp_path_factory.mktemp("junk"))[case]
    proc = _cli("cosim", "replay", str(path))
    assert _one_clear_line(proc, words)
    assert "pickled" not in proc.stderr


def test_an_unwritable_build_folder_names_the_setting(tmp_path):
    (tmp_path / "file").write_text("")               # a folder below a file: no user can write it
    proc = _cli("cosim", "run", *HGMMA, "--unit", "standin", "-n", "10",
                env={"MMA_BUILD_DIR": str(tmp_path / "file" / "build")})
    assert _one_clear_line(proc, "cannot be written (Not a directory): set MMA_BUILD_DIR")
    assert proc.stdout == ""


def test_negative_values_take_either_spelling():
    spaced = _cli("golden", *TRACE, "--a", "-2048,2048", "--b", "2048,2048", "--c", "-1")
    joined = _cli("golden", *TRACE, "--a=-2048,2048", "--b=2048,2048", "--c=-1")
    assert spaced.returncode == joined.returncode == 0, spaced.stderr
    assert spaced.stdout == joined.stdout and "=> d = 0xbf800000 (-1.0)" in spaced.stdout


def test_api_bad_input_is_a_clear_error():
    from golden.formats import from_float
    with pytest.raises(TypeError, match="instruction name or family is a string.*got 5"):
        golden.lookup("hopper", 5)
    with pytest.raises(ValueError, match="ue8m0 is unsigned: negative value -4.0"):
        from_float("ue8m0", -4.0)
    assert int(from_float("ue8m0", 4.0)) == 129


def test_waves_takes_common_yes_no_words():
    from cosim.__main__ import yes_no
    assert all(yes_no(w, "WAVES") for w in ("1", "yes", "Y", "true", "on", "enable", "ON"))
    assert not any(yes_no(w, "WAVES") for w in ("0", "no", "n", "false", "off", "disable"))
    with pytest.raises(ValueError, match="WAVES=perhaps: expected yes or no"):
        yes_no("perhaps", "WAVES")


def test_a_generator_of_exact_floats_gives_their_bit_patterns():
    from golden.streams import VectorStream
    ins = golden.lookup(*HGMMA)
    a, b, c, sa, sb = VectorStream(ins, "tests.project.test_robustness:exact_floats").take(3)
    assert a.dtype == np.uint64 and set(a.ravel().tolist()) == {0x3E00}     # 1.5 in f16, not the pattern 1
    assert set(b.ravel().tolist()) == {0x3C00} and sa is None


def test_an_error_run_leaves_no_run_folder(tmp_path, monkeypatch):
    """A generator that fails in the middle of a run: the error reaches the caller, no run-* stays."""
    from cosim import build as bld
    from cosim import run as cr
    from cosim import standin
    from cosim.units import StandInUnits
    ins = golden.lookup(*HGMMA)
    calls = []

    def breaks_later(i, n, rng):
        calls.append(n)
        if len(calls) > 1:
            raise ValueError("the generator broke")
        return exact_floats(i, n, rng)
    b = bld.build_unit(standin.StandInUnit(ins, 1, latency=3), ins.arch, ins.name, root=bld.BUILD_ROOT / "test")
    before = set(b.dir.glob("run-*"))
    with pytest.raises(ValueError, match="the generator broke"):
        cr.run_instruction(ins, _quiet(tmp_path, n=20_000, vectors=breaks_later, build_root=bld.BUILD_ROOT / "test"),
                           StandInUnits(latency=3))
    assert set(b.dir.glob("run-*")) == before


# ---- issue 25: golden, hw, formal, probe and the console scripts ---------------------------------------

def test_list_with_the_arch_option_honours_the_name():
    proc = _cli("golden", "list", "--arch", "volta", "HMMA.884.F32.F32")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() and all("HMMA.884.F32.F32" in x for x in proc.stdout.splitlines())
    assert _one_clear_line(_cli("golden", "list", "--arch", "volta", "turing", "HMMA"), "two positionals")


def test_a_huge_broadcast_is_refused_on_its_size_before_any_scan():
    """10**12 rows of a broadcast_to view: refused from the shapes alone (a scan would read 10**13 elements)."""
    import time
    ins = golden.lookup("volta", "HMMA.884.F16.F16")
    a = np.broadcast_to(np.zeros(ins.k, np.uint16), (10 ** 12, ins.k))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"a batch of 1,000,000,000,000 dot-adds .* split it into smaller batches"):
        golden.dot_add(ins, a, a, np.zeros(1, np.uint16))
    with pytest.raises(ValueError, match="split it"):
        from golden.api import prepare_operands
        prepare_operands(ins, a, a, np.zeros(1, np.uint16), None, None)
    assert time.perf_counter() - t0 < 1.0


def test_a_unit_of_a_million_lanes_is_refused_before_it_is_built():
    import time

    import hw
    ins = golden.lookup(*SMALL)
    t0 = time.perf_counter()
    for lanes in (10 ** 6, 0, True, 2.5):
        with pytest.raises(ValueError, match=r"lanes must be a whole number 1\.\.256"):
            hw.dot_add_unit(ins, lanes=lanes)
    assert time.perf_counter() - t0 < 1.0


def test_a_formal_filter_that_selects_nothing_is_an_error(monkeypatch, capsys):
    """A typo in a filter proves nothing; it must not pass (the suite is stubbed: the selection is real)."""
    import types

    import formal.suite
    from formal.__main__ import main as formal_main
    props = [types.SimpleNamespace(stage="round", name="round.f32.RNE", units=[("hopper", "HGMMA")], mode="prove",
                                   engine="smtbmc")]
    monkeypatch.setattr(formal.suite, "all_properties", lambda refresh, pipelining: props)
    for argv, words in ((["--name", "zzzznomatch"], "no property matches --name zzzznomatch"),
                        (["--stage", ","], "--stage ',' names no stage"),
                        (["--stage", "align", "--name", "round"], "no property matches --stage align --name round")):
        assert formal_main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: ") and words in err, err
    assert formal_main(["--name", "round", "--list"]) == 0


@pytest.mark.parametrize("script, module, argv", [
    ("mma-hw", "amaranth", ["volta"]),
    ("mma-cosim", "amaranth", ["run", *SMALL, "-n", "10"]),
    ("mma-fpga", "serial", ["identify", "--port", "socket://127.0.0.1:1"]),
    ("mma-formal", "amaranth", ["--list"]),
])
def test_a_console_script_without_its_extra_names_the_extra(script, module, argv):
    from golden.launch import COMMANDS
    extra = COMMANDS[script][2]
    code = (f"import sys; sys.modules[{module!r}] = None\n"
            f"from golden.launch import launch\nsys.exit(launch({script!r}, {argv!r}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert _one_clear_line(proc, f"{script} needs the [{extra}] extra ({module} is not installed): "
                                 f"pip install 'mma-rtl[{extra}]'")


def test_every_console_script_goes_through_the_launcher():
    import tomllib

    from golden import launch
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts.pop("mma-golden") == "golden.cli:main"          # golden needs no extra
    assert set(scripts) == set(launch.COMMANDS)
    for _name, target in scripts.items():
        module, _, function = target.partition(":")
        assert module == "golden.launch" and callable(getattr(launch, function))


def test_probing_several_where_the_backend_cannot_run_some_is_not_a_pass(capsys):
    """A board runs one instruction, a GPU some: the others are listed as not run, and exit 2."""
    import argparse

    from golden.device import Unavailable
    from probe.__main__ import _many
    runs = golden.lookup("volta", "HMMA.884.F32.F32")

    def backend(ins, a, b, c, scale_a=None, scale_b=None):
        if ins is not runs:
            raise Unavailable(f"this backend runs {runs.name}, not {ins.name}")
        return golden.dot_add(ins, a, b, c, scale_a, scale_b)
    pool = [runs, golden.lookup("volta", "HMMA.884.F16.F16")]
    assert _many(pool, backend, argparse.Namespace(group=False, json=None)) == 2
    out, err = capsys.readouterr()
    assert "HMMA.884.F32.F32" in out and "HMMA.884.F16.F16" in out and "cannot run on this backend" in out
    assert "2 instruction(s), 1 probed, 1 match the catalog, 0 differ, 1 could not run" in err
    assert err.splitlines()[-1] == ("error: 1 instruction(s) could not run on the backend (first: volta "
                                    "HMMA.884.F16.F16: this backend runs HMMA.884.F32.F32, not HMMA.884.F16.F16)")


# ---- a reader that stops reading --------------------------------------------------------------

def _first_line_then_close(argv: list[str]) -> tuple[int, str]:
    """Run ``argv``, read one line of its output, close the pipe (as ``| head -1`` does); its exit
    status and what it wrote to stderr."""
    # A pipe holds 64 KB by default: an output that fits would be written whole before the reader
    # closes, and the command would never meet the closed pipe. The pipe is made one page deep.
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen(argv, stdout=write_end, stderr=subprocess.PIPE, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    os.close(write_end)
    with os.fdopen(read_end, "rb") as out:
        out.readline()
    err = proc.stderr.read().decode()
    return proc.wait(timeout=60), err


def test_a_closed_pipe_ends_a_command_without_a_traceback():
    """``python -m golden list | head -1`` (56 KB of output; every package's ``__main__`` ends
    through golden.console.exit_with)."""
    from golden.console import BROKEN_PIPE
    status, err = _first_line_then_close([sys.executable, "-m", "golden", "list"])
    assert (status, err) == (BROKEN_PIPE, "")
    # planted: the entry point as it was, sys.exit(main()), reports the closed pipe with a traceback
    status, err = _first_line_then_close([sys.executable, "-c", "import sys; from golden.cli import main; "
                                          "sys.exit(main(['list']))"])
    assert status != 0 and "BrokenPipeError" in err


def test_every_package_command_ends_through_exit_with():
    mains = [p for p in sorted(REPO.glob("*/__main__.py")) + sorted(REPO.glob("*/*/__main__.py"))
             if not p.parts[len(REPO.parts)].startswith(".")]
    assert len(mains) >= 8
    assert [str(p.relative_to(REPO)) for p in mains if "exit_with(main)" not in p.read_text()] == []
