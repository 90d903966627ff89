"""Blackwell's compiled mma.sync m16n8k32 fp8 (catalog ``MMA.16832.*``, ``native=False``) against the
measured sets in tests/data/gpu_vectors_unresolved (docs/gpu/unresolved_fp8.md)."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import golden
from golden.catalog import APPROXIMATE, approximation
from golden.cli import main
from golden.formats import from_float, to_float

DATA = Path(__file__).parent / "data"
K = np.arange(32)


def _load(gpu):
    """a, b (e4m3 bits), c as f32 words and as f16 bits (RNE, as the f16 runs took it), d32, d16 bits."""
    z = np.load(DATA / "gpu_vectors_unresolved" / f"{gpu}_E4M3.npz")
    a, b = z["a"].astype(np.uint64), z["b"].astype(np.uint64)
    c32 = z["c"].astype(np.uint64)
    c16 = from_float("f16", z["c"].view(np.float32).astype(np.float64), "RNE").astype(np.uint64)
    d16 = from_float("f16", z["d_fp16"].view(np.float32).astype(np.float64), "RNE")
    assert (to_float("f16", d16) == z["d_fp16"].view(np.float32)).all(), "d_fp16 holds f16 values"
    d32 = z["d_fp32"] if "d_fp32" in z.files else None
    return a, b, c32, c16, d32, d16


def test_entries_are_findable_and_marked_not_native():
    found = golden.select("blackwell", "MMA.16832")
    assert len(found) == 8 and all(not i.native and "compiled path" in i.note for i in found)
    assert {(i.a_format, i.b_format, i.d_format) for i in found} == {
        (x, y, d) for x in ("e4m3", "e5m2") for y in ("e4m3", "e5m2") for d in ("f32", "f16")}
    ins = golden.lookup("blackwell", "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16")
    assert ins.name == "MMA.16832.F16.E5M2.E4M3"
    assert golden.lookup("b200", "mma.m16n8k32.f32.e4m3.e4m3.f32").name == "MMA.16832.F32.E4M3.E4M3"
    assert all(i.native for i in golden.CATALOG if not i.name.startswith("MMA.16832"))


def test_golden_list_shows_them(capsys):
    assert main(["list", "--arch", "blackwell"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if " MMA.16832." in ln]
    assert len(lines) == 8 and all("FDA F=30 L=32" in ln for ln in lines)


def test_b200_f32_set_bit_exact():
    a, b, c32, _, d32, _ = _load("B200")
    ins = golden.lookup("blackwell", "MMA.16832.F32.E4M3.E4M3")
    got = golden.dot_add(ins, a, b, c32)
    assert int((got != d32).sum()) == 0


def test_planted_fault_f29_is_caught():
    a, b, c32, _, d32, _ = _load("B200")
    ins = golden.lookup("blackwell", "MMA.16832.F32.E4M3.E4M3")
    faulty = replace(ins, params=ins.params.with_(F=29))
    assert int((golden.dot_add(faulty, a, b, c32) != d32).sum()) == 1


@pytest.mark.parametrize("key", sorted(APPROXIMATE))
def test_documented_reproduction_count_is_current(key):
    ins = golden.lookup(*key)
    claim = approximation(ins)
    gpu = {"blackwell": "B200", "hopper": "H100"}[ins.arch]
    assert claim.measured_set == f"gpu_vectors_unresolved/{gpu}_E4M3.npz d_fp16"
    a, b, _, c16, _, d16 = _load(gpu)
    got = golden.dot_add(ins, a, b, c16)
    assert (int((got == d16).sum()), len(d16)) == (claim.reproduced, claim.total)
    # the check can fail: another design reproduces a different count
    other = replace(ins, params=ins.params.with_(pass_size=16))
    assert int((golden.dot_add(other, a, b, c16) == d16).sum()) != claim.reproduced


def _compiled_path(arch, a, b, c16, first=K % 4 < 2):
    """The exact rule the note states, from catalog instructions: HMMA.16816.F16 over the products
    ``first`` with a zero accumulator, HMMA.16816.F16 over the others onto it, then + c (f16 RNE)."""
    hmma = golden.lookup(arch, "HMMA.16816.F16")

    def f16(x):
        return from_float("f16", to_float("e4m3", x), "RNE").astype(np.uint64)

    h = np.zeros(len(c16), np.uint64)
    for group in (first, ~first):
        h = golden.dot_add(hmma, f16(a[:, group]), f16(b[:, group]), h)
    return from_float("f16", to_float("f16", h) + to_float("f16", c16), "RNE")


@pytest.mark.parametrize("gpu,arch", [("B200", "blackwell"), ("H100", "hopper")])
def test_exact_f16_rule_reproduces_every_dot_add(gpu, arch):
    a, b, _, c16, _, d16 = _load(gpu)
    assert int((_compiled_path(arch, a, b, c16) != d16).sum()) == 0
    # planted fault: the two HMMA passes in the other order
    assert int((_compiled_path(arch, a, b, c16, first=K % 4 >= 2) != d16).sum()) > 1000
