"""The robustness battery (issue 12): what a new user tries, and what must come of it.

Bad input gets one clear line naming the option and what is valid, exit status 2 and no
traceback; a damaged build cache is rebuilt; a replay file names the unit that failed; the same
dot-add gives the same bits wherever it sits in a batch; memory follows the chunk, not the batch.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import golden

REPO = Path(__file__).resolve().parent.parent


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
    from cosim import failures, run as cr
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
    from cosim import build as bld, run as cr, standin
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


def test_a_truncated_build_and_runtime_cache_are_rebuilt(tmp_path, monkeypatch):
    """A cached harness executable and the shared run-time objects, both truncated (a full disk, a
    killed copy): the next run sees it, builds again and passes; nothing damaged is used."""
    import shutil
    from cosim import build as bld, run as cr, standin
    from cosim.units import StandInUnits
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    shared = bld.build_unit(standin.StandInUnit(ins, 1, latency=3), ins.arch, ins.name,
                            root=bld.BUILD_ROOT / "test")         # test_cosim_infra's clean_build
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
