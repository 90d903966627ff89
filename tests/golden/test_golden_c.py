"""The C golden library's FDA and GDFS row kernels (golden_c/src/fused.c, on common.c) through
golden.clib against the numpy path: identical bits on every FDA and GDFS catalog datapath the C library
models (F="exact" included), for every vector kind, in uint64 and in each format's own width; broadcast operands;
a fault planted in the kernel (prm[P_FAULT]) is caught by the same comparison; the designs no
C kernel models, and kernels not built, are refused.

Catalog entries with equal datapaths give the same bits on every input (golden.catalog.Datapath:
clib.dot_add reads nothing else of an instruction), so each datapath runs once, under the first
entry that has it."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess

import numpy as np
import pytest
from c_golden import datapaths, mismatches

import golden
from golden import c_library, clib
from golden.descriptors import KernelCode
from golden.kernels import spec
from golden.vectors import KINDS, random_operands

ROWS = 64               # per vector kind and datapath in the default suite; the slow tier: SLOW_ROWS
SLOW_ROWS = 20_000
BASES = ("FDA", "GDFS")

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")


def _modelled(ins) -> bool:
    return c_library.supports(ins.datapath)


DATAPATHS = datapaths((KernelCode.FDA, KernelCode.GDFS))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The library built afresh for this module (golden.clib.build into a temporary folder)."""
    out = tmp_path_factory.mktemp("golden_c")
    clib.build(out)
    return out


def test_every_fda_and_gdfs_design_is_covered():
    entries = [i for i in golden.CATALOG if i.params.base in BASES and _modelled(i)]
    assert entries and {i.datapath for i in entries} == {i.datapath for i in DATAPATHS}
    assert {i.params.base for i in DATAPATHS} == set(BASES)
    # the numba kernels' integer-lane designs and the float64 ones alike (fused.c runs one path for all)
    kinds = {int(c_library.build_design(i.datapath)[3][spec.P_FAST]) for i in DATAPATHS}
    assert kinds == {spec.FAST_NONE, spec.FAST_FDA, spec.FAST_GDFS}
    assert any(i.params.F == "exact" for i in DATAPATHS)        # CDNA1's exact sums (no compiled numba kernel)


# every third datapath (each algorithm and fast kind among them) in make test, the others under -m slow
EVERY_KIND = [pytest.param(ins, marks=() if j % 3 == 0 else pytest.mark.slow) for j, ins in enumerate(DATAPATHS)]


def test_the_default_third_has_every_algorithm_and_fast_kind():
    third = DATAPATHS[::3]
    assert {i.params.base for i in third} == set(BASES)
    dp = [i.datapath for i in third]
    assert {int(c_library.build_design(d)[3][spec.P_FAST]) for d in dp} == {spec.FAST_NONE, spec.FAST_FDA,
                                                                            spec.FAST_GDFS}


@pytest.mark.parametrize("ins", EVERY_KIND, ids=lambda i: f"{i.arch}-{i.name}")
def test_identical_bits_every_vector_kind(ins, folder):
    assert mismatches(ins, folder, ROWS) == 0


@pytest.mark.slow
@pytest.mark.parametrize("ins", DATAPATHS, ids=lambda i: f"{i.arch}-{i.name}")
def test_identical_bits_many_rows(ins, folder):
    assert mismatches(ins, folder, SLOW_ROWS, seed=1, narrow=False) == 0


# Params changes beside the catalog (every rounding, overflow rule, zero sign, a narrower output, other F
# and e_zero), each on every 8th datapath that accepts it
CHANGES = [{"out_rounding": m} for m in ("RZ", "RD", "RU", "RNE")] + [
    {"overflow": "ieee"}, {"overflow": "inf"}, {"zero_sign": "ieee"}, {"out_frac_bits": 10}, {"e_zero": -100},
    {"F": 20}]


@pytest.mark.parametrize("change", CHANGES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_designs_beside_the_catalog(change, folder):
    tried = 0
    for ins in DATAPATHS[::8]:
        new = dataclasses.replace(ins, params=ins.datapath.params.with_(**change))
        if not _modelled(new):
            continue
        tried += 1
        for i, kind in enumerate(KINDS):
            a, b, c, sa, sb = random_operands(ins, 32, np.random.default_rng([3, i]), kind)
            want = golden.dot_add(new, a, b, c, sa, sb, backend="numpy")
            assert np.array_equal(clib.dot_add(new, a, b, c, sa, sb, folder=folder), want), (ins.name, kind)
    assert tried


def test_broadcast_operands(folder):
    for base in BASES:
        ins = next(i for i in DATAPATHS if i.params.base == base)
        a, b, c, sa, sb = random_operands(ins, 6, np.random.default_rng(7), "normal")
        a = a.reshape(2, 3, ins.k)
        b = b[:3].reshape(3, ins.k)                  # broadcast over the first axis
        c = c[0]                                     # one c for every row
        if sa is not None:
            sa, sb = sa.reshape(2, 3, -1), sb[:3]
        want = golden.dot_add(ins, a, b, c, sa, sb, backend="numpy")
        got = clib.dot_add(ins, a, b, c, sa, sb, folder=folder)
        assert got.shape == want.shape == (2, 3) and np.array_equal(got, want)


def test_chunks_and_threads(folder, monkeypatch):
    monkeypatch.setattr(clib, "BROADCAST_ELEMENTS", 64)     # broadcast rows widened 1024 at a time
    monkeypatch.setattr(clib, "THREAD_MIN_ROWS", 256)
    for base in BASES:
        ins = next(i for i in DATAPATHS if i.params.base == base)
        a, b, c, sa, sb = random_operands(ins, 1500, np.random.default_rng(5), "mixed")
        want = golden.dot_add(ins, a, b, c, sa, sb, backend="numpy")
        assert np.array_equal(clib.dot_add(ins, a, b, c, sa, sb, threads=3, folder=folder), want)
        bc = np.broadcast_to(c[:1], (2, 1500))                  # broadcast: read a chunk at a time
        got = clib.dot_add(ins, a, b, bc, sa, sb, threads=2, folder=folder)
        assert np.array_equal(got, golden.dot_add(ins, a, b, bc, sa, sb, backend="numpy"))
    with pytest.raises(ValueError, match="threads"):
        clib.dot_add(ins, a, b, c, sa, sb, threads=0, folder=folder)


@pytest.mark.parametrize("base", BASES)
def test_planted_fault_is_caught(base, folder):
    ins = next(i for i in DATAPATHS if i.params.base == base)
    with clib.planted_fault():
        assert mismatches(ins, folder, ROWS, narrow=False) > 0
    assert mismatches(ins, folder, ROWS, narrow=False) == 0


def test_refuses_what_no_kernel_models(folder):
    ins = golden.lookup("custom", "k=4,a=f16,c=f32,d=e4m3,base=FDA,F=24,e_zero=-133")   # an e4m3 d: numpy only
    assert not _modelled(ins)
    a, b, c, sa, sb = random_operands(ins, 4, np.random.default_rng(0), "normal")
    with pytest.raises(ValueError, match="supports"):
        clib.dot_add(ins, a, b, c, sa, sb, folder=folder)


def test_refuses_a_kernel_not_built(folder, monkeypatch):
    monkeypatch.setitem(clib.KERNELS, KernelCode.FDA, "golden_not_built_rows")
    ins = next(i for i in DATAPATHS if i.params.base == "FDA")
    a, b, c, sa, sb = random_operands(ins, 4, np.random.default_rng(0), "normal")
    with pytest.raises(ValueError, match="not in the C library"):
        clib.dot_add(ins, a, b, c, sa, sb, folder=folder)


def test_built_once_and_without_warnings(folder):
    so = clib.build(folder)
    assert clib.build(folder) == so and so.stat().st_mtime_ns == clib.build(folder).stat().st_mtime_ns
    cmd = (clib._compiler() + list(clib.CFLAGS) + ["-pedantic", "-Werror", "-fsyntax-only",
           f"-I{folder / 'include'}", f"-I{clib.SOURCE_DIR}", f"-I{clib.INCLUDE_DIR}"]
           + [str(s) for s in clib._sources()])
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
