"""CDNA1 (MI100): the catalog's tenth architecture, from the authors' later reference model.

The entries' data (names as the CDNA1 ISA writes them, formats, the chain of exact fused passes), their
arithmetic on hand-built vectors (each pass is the exact sum rounded once to f32; the chain rounds
between passes; zero signs and special values), and their provenance: the reference model named, its
record (docs/cdna1/mmasim_check.txt, written by tools/mmasim_check.py) showing 0 mismatches for every
instruction and vector kind.  The comparison with the model itself is tests/golden/test_mmasim.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import golden
from golden.formats import from_float, to_float
from golden.params import EXACT
from golden.provenance import REFERENCE_MODELS
from golden.vectors import KINDS

REPO = Path(__file__).resolve().parents[2]
CDNA1 = golden.instructions("cdna1")
FMAX = float(np.finfo(np.float32).max)


def _dot(name, a, b, c, fmt):
    ins = golden.lookup("cdna1", name)
    A = from_float(fmt, np.asarray(a, np.float64)[None, :]).astype(np.uint64)
    B = from_float(fmt, np.asarray(b, np.float64)[None, :]).astype(np.uint64)
    C = from_float("f32", np.asarray([c], np.float64)).astype(np.uint64)
    return int(golden.dot_add(ins, A, B, C)[0])


def test_the_mfma_list_of_the_cdna1_isa():
    assert len(CDNA1) == 15
    assert {i.a_format for i in CDNA1} == {"f32", "f16", "bf16"} and {i.d_format for i in CDNA1} == {"f32"}
    ins = golden.lookup("MI100", "V_MFMA_F32_32X32X8F16")          # the ISA's spelling, the GPU's name
    assert (ins.arch, ins.name, ins.m, ins.n, ins.k) == ("cdna1", "v_mfma_f32_32x32x8f16", 32, 32, 8)
    assert golden.lookup("gfx908", "v_mfma_f32_32x32x8_f16") is ins   # the CDNA3 spelling is an alias
    # the original bf16 MFMAs (K per 2), not CDNA2's _1k ones
    assert golden.lookup("cdna1", "f32_16x16x8bf16").k == 8
    with pytest.raises(ValueError, match="not available on cdna1"):
        golden.lookup("cdna1", "v_mfma_f32_16x16x16bf16_1k")


@pytest.mark.parametrize("fmt,L", [("f16", 4), ("bf16", 2), ("f32", None)])
def test_parameters_per_operand_format(fmt, L):
    for ins in (i for i in CDNA1 if i.a_format == fmt):
        p = ins.params
        if fmt == "f32":
            assert (p.base, ins.algorithm) == ("SFMA", "SFMA")
            continue
        assert (p.base, p.F, p.pass_size, p.out_rounding, p.overflow, p.zero_sign) == \
            ("FDA", EXACT, min(L, ins.k), "RNE", "ieee", "ieee")
        assert ins.algorithm == ("CoFDA" if ins.k > L else "FDA")


def test_a_pass_is_the_exact_sum_rounded_once():
    # 1 + 2**-24 + 2**-40: an alignment window of 24 bits would drop the 2**-40 and tie to 1
    assert _dot("f32_32x32x4f16", [2.0 ** -12, 2.0 ** -20, 0, 0], [2.0 ** -12, 2.0 ** -20, 0, 0], 1.0, "f16") \
        == 0x3F800001
    # large cancellation inside a pass loses nothing: 2**15 * 2**15 - 2**15 * 2**15 + 2**-24 * 2**-24 + c
    assert to_float("f32", _dot("f32_32x32x4f16", [2.0 ** 15, -(2.0 ** 15), 2.0 ** -24, 0],
                                [2.0 ** 15, 2.0 ** 15, 2.0 ** -24, 0], 0.0, "f16")) == 2.0 ** -48


def test_the_chain_rounds_between_passes():
    # K = 8, L = 4: 1 + 2**-24 rounds to 1 (tie to even) in pass 0; pass 1 adds 2**-24 once more -> 1 again;
    # one pass of 8 would see 1 + 2**-23 exactly
    a = [1.0, 0, 0, 0, 1.0, 0, 0, 0]
    b = [2.0 ** -24, 0, 0, 0, 2.0 ** -24, 0, 0, 0]
    assert _dot("f32_32x32x8f16", a, b, 1.0, "f16") == 0x3F800000
    ins = golden.lookup("cdna1", "f32_32x32x8f16")
    one_pass = ins.with_params(pass_size=8)
    A = from_float("f16", np.asarray([a])).astype(np.uint64)
    B = from_float("f16", np.asarray([b])).astype(np.uint64)
    assert int(golden.dot_add(one_pass, A, B, from_float("f32", np.asarray([1.0])).astype(np.uint64))[0]) \
        == 0x3F800001


def test_zero_signs_and_special_values():
    # every term -0: +0 (the model's exact sum of zeros); a negative sum below half the smallest
    # subnormal: -0 (bf16 products reach 2**-266)
    assert _dot("f32_32x32x2bf16", [-0.0, 0.0], [1.0, -1.0], -0.0, "bf16") == 0
    assert _dot("f32_32x32x2bf16", [-(2.0 ** -130), 0.0], [2.0 ** -130, 0.0], 0.0, "bf16") == 0x80000000
    # a product beyond f32 is not an infinity while the exact sum comes back into range
    assert to_float("f32", _dot("f32_32x32x2bf16", [2.0 ** 100, -(2.0 ** 100)], [2.0 ** 100, 2.0 ** 100], 1.0,
                                "bf16")) == 1.0
    assert _dot("f32_32x32x2bf16", [2.0 ** 127, 0.0], [2.0 ** 127, 0.0], 0.0, "bf16") == 0x7F800000
    assert _dot("f32_32x32x4f16", [np.inf, 0, 0, 0], [1.0, 0, 0, 0], -np.inf, "f16") == 0x7FFFFFFF
    assert _dot("f32_32x32x4f16", [np.inf, 0, 0, 0], [0.0, 0, 0, 0], 1.0, "f16") == 0x7FFFFFFF
    # the exact sum just below the overflow threshold rounds to the largest finite (the reference model's
    # float64 sum rounds it onto the threshold and gives +inf: docs/cdna1/README.md, "Where they differ")
    assert _dot("f32_32x32x2bf16", [2.0 ** 52, -(2.0 ** 30)], [2.0 ** 51, 2.0 ** 30], FMAX, "bf16") == 0x7F7FFFFF


def test_provenance_names_the_reference_model_and_its_record():
    ref = REFERENCE_MODELS["cdna1"]
    for ins in CDNA1:
        p = ins.provenance
        assert (p.basis, p.status, p.reference) == ("reference", "inferred", ref), ins.name
        assert "not measured, not in the paper" in p.summary() and ref.model in p.summary()
    assert all(i.provenance.basis != "reference" for i in golden.CATALOG if i.arch != "cdna1")


def test_the_record_shows_every_instruction_and_kind_without_a_mismatch():
    ref = REFERENCE_MODELS["cdna1"]
    text = (REPO / ref.record).read_text()
    rows = re.findall(r"^(v_mfma_\S+)\s+\S+\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s", text, re.MULTILINE)
    seen = {(name, kind) for name, kind, *_ in rows}
    assert seen == {(i.name, k) for i in CDNA1 for k in KINDS}
    assert all(int(n) == 20_000 and int(bad) == 0 for _, _, n, _, bad in rows)
    assert re.search(rf"^0 mismatches against {re.escape(ref.model)}$", text, re.MULTILINE)
