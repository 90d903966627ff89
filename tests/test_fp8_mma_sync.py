"""The compiled mma.sync m16n8k32 fp8 of Hopper and Blackwell (catalog ``MMA.16832.*``, ``native=False``)
and the measured sets in tests/data/gpu_vectors_unresolved (docs/gpu/unresolved_fp8.md); the counts
golden.provenance claims on them are recomputed in tests/test_gpu_vectors.py."""

from dataclasses import replace

import numpy as np
import pytest

import golden
from golden.cli import main
from golden.formats import from_float, to_float
from golden.provenance import MEASURED_SETS

from gpu_vectors import load

K = np.arange(32)
FP8_SETS = {(s.gpu, s.out): s for s in MEASURED_SETS if s.instruction.startswith("MMA.16832.")}


@pytest.mark.parametrize("arch", ["hopper", "blackwell"])
def test_entries_are_findable_and_marked_not_native(arch):
    found = golden.select(arch, "MMA.16832")
    assert len(found) == 8 and all(not i.native and "compiled path" in i.note for i in found)
    assert {(i.a_format, i.b_format, i.d_format) for i in found} == {
        (x, y, d) for x in ("e4m3", "e5m2") for y in ("e4m3", "e5m2") for d in ("f32", "f16")}
    ins = golden.lookup(arch, "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16")
    assert ins.name == "MMA.16832.F16.E5M2.E4M3"
    assert golden.lookup(arch, "mma.m16n8k32.f32.e4m3.e4m3.f32").name == "MMA.16832.F32.E4M3.E4M3"
    assert all(i.native for i in golden.CATALOG if not i.name.startswith("MMA.16832"))


def test_golden_list_shows_them_with_their_provenance(capsys):
    assert main(["list", "--arch", "blackwell"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if " MMA.16832." in ln]
    assert len(lines) == 8 and all("FDA F=30 L=32" in ln and "compiled" in ln for ln in lines)
    assert [ln for ln in lines if "approximate" in ln] == [ln for ln in lines if "F16.E4M3.E4M3" in ln]


def test_provenance_names_the_measured_sets():
    f32 = golden.lookup("blackwell", "MMA.16832.F32.E4M3.E4M3").provenance
    assert (f32.basis, f32.status, f32.measured) == ("compiled", "verified", (FP8_SETS["B200", "fp32"],))
    for gpu, arch in (("B200", "blackwell"), ("H100", "hopper")):
        p = golden.lookup(arch, "MMA.16832.F16.E4M3.E4M3").provenance
        assert (p.basis, p.status, p.measured) == ("compiled", "approximate", (FP8_SETS[gpu, "fp16"],))
    assert golden.lookup("hopper", "MMA.16832.F32.E4M3.E4M3").provenance.status == "inferred"


def test_planted_fault_f29_is_caught():
    """tests/test_gpu_vectors.py checks the entry on the B200 f32 set; F = 29 would miss one dot-add."""
    ins, a, b, c, want = load(FP8_SETS["B200", "fp32"])
    assert int((golden.dot_add(ins, a, b, c) != want).sum()) == 0
    faulty = replace(ins, params=ins.params.with_(F=29))
    assert int((golden.dot_add(faulty, a, b, c) != want).sum()) == 1


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


@pytest.mark.parametrize("gpu", ["B200", "H100"])
def test_exact_f16_rule_reproduces_every_dot_add(gpu):
    ins, a, b, c16, d16 = load(FP8_SETS[gpu, "fp16"])
    assert int((_compiled_path(ins.arch, a, b, c16) != d16).sum()) == 0
    # planted fault: the two HMMA passes in the other order
    assert int((_compiled_path(ins.arch, a, b, c16, first=K % 4 >= 2) != d16).sum()) > 1000
