"""The compiled mma.sync m16n8k32 fp8 of Hopper and Blackwell (catalog ``MMA.16832.*``, ``native=False``)
and the measured sets in tests/data/gpu_vectors_unresolved (docs/gpu/unresolved_fp8.md); the counts
golden.provenance claims on them are recomputed in tests/golden/test_gpu_vectors.py."""

from dataclasses import replace

import numpy as np
import pytest
from gpu_vectors import load

import golden
from golden.cli import main
from golden.formats import from_float, to_float
from golden.provenance import MEASURED_SETS

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
    assert len(lines) == 8 and all("CoFDA F=25 L=16" in ln and "compiled" in ln for ln in lines)
    assert all("operands as f16, passes interleave runs of 2, c added last" in ln for ln in lines)
    assert not [ln for ln in lines if "approximate" in ln]


def test_provenance_names_the_measured_sets():
    f32 = golden.lookup("blackwell", "MMA.16832.F32.E4M3.E4M3").provenance
    assert (f32.basis, f32.status, f32.measured) == ("compiled", "verified", (FP8_SETS["B200", "fp32"],))
    for gpu, arch in (("B200", "blackwell"), ("H100", "hopper")):
        p = golden.lookup(arch, "MMA.16832.F16.E4M3.E4M3").provenance
        assert (p.basis, p.status, p.measured) == ("compiled", "verified", (FP8_SETS[gpu, "fp16"],))
    assert golden.lookup("hopper", "MMA.16832.F32.E4M3.E4M3").provenance.status == "inferred"


# which parts of the lowering the measured sets pin down (docs/gpu/unresolved_fp8.md says the same):
# the pass split only shows where the passes round (f16 results), c last everywhere; F and the f16
# conversion are HMMA.16816's (measured on its own sets) because these narrow operands keep every
# pass exact
SEEN = {"pass_interleave=None": ("fp16",), "pass_interleave=1": ("fp16",), "c_last=False": ("fp16", "fp32"),
        "F=24": (), "operand_format=None": ()}


@pytest.mark.parametrize("gpu, out", [("B200", "fp32"), ("B200", "fp16"), ("H100", "fp16")])
@pytest.mark.parametrize("plant", list(SEEN))
def test_what_the_measured_sets_pin_down(gpu, out, plant):
    """Planted faults (halves instead of byte pairs, single products interleaved, c first, a narrower
    pass, fp8 exponents kept): each is caught where the data can see it, and only there."""
    ins, a, b, c, want = load(FP8_SETS[gpu, out])
    assert int((golden.dot_add(ins, a, b, c) != want).sum()) == 0
    field, value = plant.split("=")
    faulty = replace(ins, params=ins.params.with_(**{field: None if value == "None" else
                                                      False if value == "False" else int(value)}))
    wrong = int((golden.dot_add(faulty, a, b, c) != want).sum())
    assert (wrong > 0) == (out in SEEN[plant]), f"{plant} on {gpu} {out}: {wrong} mismatches"


def _lowering_from_catalog(ins, a, b, c):
    """The lowering the note states, built from catalog HMMA.16816 calls and an independent add:
    operands to f16, HMMA over k % 4 < 2 from +0, HMMA over k % 4 >= 2 onto it, then + c (RNE)."""
    d = ins.d_format
    hmma = golden.lookup(ins.arch, f"HMMA.16816.{d.upper()}")

    def f16(fmt, x):
        v = to_float(fmt, x)
        return np.where(np.isnan(v), 0x7FFF, from_float("f16", v, "RNE")).astype(np.uint64)

    fa, fb = ins.a_format, ins.b_format
    h = np.zeros(len(c), np.uint64)
    first = K % 4 < 2
    for group in (first, ~first):
        h = golden.dot_add(hmma, f16(fa, a[:, group]), f16(fb, b[:, group]), h)
    if d == "f16":
        s = to_float("f16", h) + to_float("f16", c)
        out = np.where(np.isnan(s), 0x7FFF, from_float("f16", s, "RNE"))
    else:
        from golden.fma import fma_f32
        out = fma_f32(h.astype(np.uint32), np.full(len(c), 0x3F800000, np.uint32), np.asarray(c, np.uint32))
        out = np.where(np.isnan(to_float("f32", out)), 0x7FFFFFFF, out)
    return np.where(out == (0x8000 if d == "f16" else 0x80000000), 0, out).astype(np.uint64)


@pytest.mark.parametrize("arch", ["hopper", "blackwell"])
@pytest.mark.parametrize("name", [f"MMA.16832.{d}.{x}.{y}" for d in ("F32", "F16")
                                  for x in ("E4M3", "E5M2") for y in ("E4M3", "E5M2")])
def test_the_entry_is_the_lowering_of_catalog_instructions(arch, name):
    """Uniform bit patterns (NaN, infinities, subnormals, wide exponents) and normal values: the entry
    equals its lowering built from the catalog's own HMMA.16816 and an IEEE add."""
    ins = golden.lookup(arch, name)
    rng = np.random.default_rng(3)
    for kind in ("bits", "normal"):
        from golden.vectors import random_operands
        a, b, c, _, _ = random_operands(ins, 4000, rng, kind)
        got = golden.dot_add(ins, a, b, c)
        want = _lowering_from_catalog(ins, a, b, c)
        assert golden.same_results(ins, got, want).all(), (kind, int((got != want).sum()))


def test_the_lowering_is_traced():
    ins = golden.lookup("blackwell", "MMA.16832.F16.E4M3.E4M3")
    a = from_float("e4m3", np.r_[1.0, 2.0, np.zeros(30)])
    t = str(golden.trace(ins, a, a, from_float("f16", 0.5)))
    assert "c added by one IEEE add, RNE" in t and "pass 1" in t
