"""Instructions of your own (golden.custom), whole tiles (golden.tile), element layouts (golden.layouts) and the
stable names of trace stages (golden.stages)."""

from __future__ import annotations

import numpy as np
import pytest

import golden
import golden.vectors as gv
from golden.custom import CustomError, parse, spec
from golden.formats import from_float
from golden.layouts import FRAGMENTS, LayoutError, positions
from golden.stages import Stage
from golden.tile import element_traces, slices, tile_mma, tile_partials

EXACT_F16 = "k=2,a=f16,c=f32,base=FDA,F=exact,e_zero=-126,out_rounding=RNE,overflow=ieee,zero_sign=ieee754"


def test_a_spec_is_a_first_class_instruction():
    ins = golden.lookup("custom", EXACT_F16)
    assert (ins.arch, ins.k, ins.a_format, ins.b_format, ins.c_format, ins.d_format) == ("custom", 2, "f16", "f16",
                                                                                         "f32", "f32")
    assert ins.name == spec(ins) and golden.lookup("custom", ins.name) == ins      # the name gives it back
    assert golden.select("custom", ins.name) == [ins]
    assert ins.params.pass_size == 2                   # one pass of all k: one spelling of the design
    assert ins.provenance.basis == "design" and ins.vendor == "custom"
    # the same arithmetic as a catalog entry changed by the same Params computes the same bits
    rng = np.random.default_rng(3)
    a, b, c, _, _ = gv.random_operands(ins, 2000, rng, "mixed")
    ref = golden.lookup("ampere", "HMMA.1688.F32")
    from dataclasses import replace
    twin = replace(ref, k=2, params=ins.params)
    assert (golden.dot_add(ins, a, b, c) == golden.dot_add(twin, a, b, c)).all()


def test_spec_spellings_are_one_name():
    a = parse("a=f16,k=2,c=f32,base=FDA,e_zero=-126,F=exact,out_rounding=RNE,overflow=ieee,zero_sign=ieee754")
    b = parse(EXACT_F16 + ",b=f16,d=f32,pass_size=2")
    assert a == b and a.name == b.name


def test_scaled_custom_instruction():
    ins = golden.lookup("custom", "k=64,a=e2m1,c=f32,scale=ue8m0,block=32,base=GDFS,F=35,e_zero=-139,group=16")
    ref = golden.lookup("blackwell", "UTCOMMA.MXF4.E8")
    rng = np.random.default_rng(1)
    a, b, c, sa, sb = gv.random_operands(ref, 500, rng, "mixed")
    assert (golden.dot_add(ins, a, b, c, sa, sb) == golden.dot_add(ref, a, b, c, sa, sb)).all()


@pytest.mark.parametrize("text, words", [
    ("k=2,a=f16,c=f32", "base is missing"),
    ("k=0,a=f16,c=f32,base=FDA", "k=0; valid: a positive integer"),
    ("k=2,a=f17,c=f32,base=FDA", "a='f17' is not a format golden knows"),
    ("k=4,a=e2m1,c=f32,scale=ue8m0,block=3,base=GDFS", "block=3; valid: a positive divisor of k=4"),
    ("k=4,a=e2m1,c=f32,scale=f16,block=2,base=GDFS", "scale='f16'; valid:"),
    ("k=4,a=e2m1,c=f32,scale=ue8m0,base=GDFS", "scale and block go together"),
    ("k=2,a=f16,c=f32,base=FDA,F=200,e_zero=-10", "Params.F=200 is not valid for this custom instruction; "
                                                   "valid: 0..49 or 'exact'"),
    ("k=2,a=f16,c=f32,base=FDA,F=exact,e_zero=-126,nan_bits=0x7e00", "not a NaN of the output format f32"),
    ("k=2,a=f16,c=f32,k=3,base=FDA", "'k' given twice"),
    ("k=2,a=f16,c=f32,base=FDA,G=3", "'G' is not a golden.Params field"),
])
def test_bad_specs_are_one_line(text, words):
    with pytest.raises(CustomError, match=None) as e:
        golden.lookup("custom", text)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_custom_goes_alone_on_the_command_line():
    with pytest.raises(ValueError, match="custom goes alone"):
        golden.select("custom,hopper", EXACT_F16)
    with pytest.raises(ValueError, match="needs INSTR=SPEC"):
        golden.select("custom", None)


def test_tile_chains_k_slices_through_the_accumulator():
    ins = golden.lookup("ampere", "HMMA.1684.F32.TF32")
    rng = np.random.default_rng(0)
    a, b, c, _, _ = gv.random_operands(ins, 48, rng, "normal")       # rows of K = 4
    A, B, C = a.reshape(3, 4, 16)[..., :8], a.reshape(3, 4, 16)[..., 8:].swapaxes(1, 2), c.reshape(3, 4, 4)
    parts = tile_partials(ins, A, B, C)
    assert len(parts) == 2 and (parts[-1] == tile_mma(ins, A, B, C)).all()
    d0 = golden.dot_add(ins, A[2, 1, :4], B[2, :4, 3], C[2, 1, 3])
    assert parts[0][2, 1, 3] == d0
    assert parts[1][2, 1, 3] == golden.dot_add(ins, A[2, 1, 4:], B[2, 4:, 3], d0)
    tr = element_traces(ins, A[2], B[2], C[2], 1, 3)
    assert [t.d for t in tr] == [int(parts[0][2, 1, 3]), int(parts[1][2, 1, 3])]
    with pytest.raises(ValueError, match="multiple of"):
        slices(ins, 6)
    with pytest.raises(ValueError, match="needs C's format to be D's"):
        slices(golden.lookup("volta", "HMMA.884.F32.F16"), 8)


def test_one_slice_tile_is_mma():
    ins = golden.lookup("ampere", "HMMA.16816.F32")
    rng = np.random.default_rng(5)
    a, b, c, _, _ = gv.random_operands(ins, 16 * 8, rng, "mixed")     # rows of K = 16
    A, B, C = a[:16], b[16:24].T, c.reshape(16, 8)
    assert (tile_mma(ins, A, B, C) == golden.mma(ins, A, B, C)).all()


def test_layouts_are_permutations_and_follow_the_ptx_formulas():
    for name, f in FRAGMENTS.items():
        p = positions(name, f.rows, f.cols)
        assert len({(r, c) for r, c in p}) == f.rows * f.cols
    # mma.m16n8k16 A (f16): lane 5 is groupID 1, threadID_in_group 1; its a2 sits at row 9, col 2
    p = positions("mma.m16n8k16.a.f16", 16, 16)
    assert tuple(p[5 * 8 + 2]) == (9, 2) and tuple(p[5 * 8 + 4]) == (1, 10)
    q = positions("mma.m16n8k16.a.f16", 16, 16, "register")
    assert tuple(q[2 * 32 + 5]) == (9, 2)
    assert positions("col_major", 4, 8)[:5].tolist() == [[0, 0], [1, 0], [2, 0], [3, 0], [0, 1]]
    with pytest.raises(LayoutError, match="16 x 16 fragment"):
        positions("mma.m16n8k16.a.f16", 4, 8)
    with pytest.raises(LayoutError, match="valid: row_major, col_major"):
        positions("diagonal", 4, 4)


def test_trace_values_have_stable_names():
    ins = golden.lookup("ampere", "HMMA.16816.F32")
    a = from_float("f16", np.arange(16.0))
    b = from_float("f16", np.full(16, 1.5))
    t = golden.trace(ins, a, b, from_float("f32", 0.5))
    v = t.values()
    assert {"products.value", "max_exponent.e_max", "aligned.products", "aligned.c", "sum.sum",
            "rounded.d"} <= set(v)
    assert "pass1.aligned.products" in v and v["aligned.products"].shape == (8,)
    assert all(getattr(label, "stage", None) in Stage for label, _ in t.stages)


def test_gemm_takes_an_instruction_of_your_own():
    """golden.gemm over a spec: the K loop chains the instruction's dot-adds through the accumulator, as
    golden.tile chains k-slices (both start from +0 here)."""
    spec = "k=2,a=f16,c=f32,base=FDA,F=exact,e_zero=-126,out_rounding=RNE,overflow=ieee,zero_sign=ieee754"
    ins = golden.lookup("custom", spec)
    rng = np.random.default_rng(9)
    A = from_float("f16", rng.standard_normal((6, 8)))
    B = from_float("f16", rng.standard_normal((8, 5)))
    D = golden.gemm(A, B, arch="custom", instr=spec)
    assert D.shape == (6, 5) and (D == golden.gemm(A, B, instr=ins)).all()
    assert (D == tile_mma(ins, A, B, np.zeros((6, 5), np.uint32))).all()
