"""The algorithm descriptors (golden.descriptors): every algorithm has every layer's part, and the
parts agree with what they describe (docs/extending.md, "A new algorithm")."""

from __future__ import annotations

import dataclasses

import pytest
import reference_model  # noqa: F401  (registers the reference model's parts)

import formal.catalog  # noqa: F401  (registers formal's parts)
import golden
import hw  # noqa: F401  (registers hw's parts)
import probe  # noqa: F401  (registers the probe's parts)
from golden import descriptors
from golden.descriptors import (
    ALGORITHMS,
    Algorithm,
    KernelCode,
    Part,
    Unsupported,
    describe,
    missing_parts,
    part,
    parts,
)
from hw.pipelining import STAGE_KINDS, StageKind

FIELDS = {f.name for f in dataclasses.fields(golden.Params)}


def test_every_algorithm_has_every_part():
    assert missing_parts() == []


def test_kernel_codes_are_explicit_and_each_has_a_kernel():
    """golden.kernels dispatch by the descriptor's kernel_code (never the order of describe() calls)."""
    from golden import kernels
    codes = [a.kernel_code for a in ALGORITHMS.values() if a.kernel_code is not None]
    assert len(codes) == len(set(codes)) and set(codes) == set(KernelCode) == set(kernels._families())
    with pytest.raises(ValueError, match="kernel code FDA of NEW is FDA's already"):
        describe(Algorithm("NEW", lambda *a: None, (), kernel_code=KernelCode.FDA))
    assert "NEW" not in ALGORITHMS


def test_a_missing_part_is_named(monkeypatch):
    """Planted: an algorithm described in golden with no layer's part, and one part taken away."""
    monkeypatch.setattr(descriptors, "ALGORITHMS", dict(ALGORITHMS))
    monkeypatch.setattr(descriptors, "_PARTS", {k: dict(v) for k, v in descriptors._PARTS.items()})
    describe(Algorithm("NEW", lambda *a: None, ("F",)))
    del descriptors._PARTS["FDA"][Part.PROBE]
    missing = descriptors.missing_parts()
    assert ("FDA", Part.PROBE) in missing and {p for n, p in missing if n == "NEW"} == set(Part)
    with pytest.raises(Unsupported, match="probe.infer has no part for algorithm FDA.*docs/extending.md"):
        descriptors.part("FDA", Part.PROBE)


def test_a_part_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        descriptors.register("FDA", Part.HW_UNION, False)
    with pytest.raises(ValueError, match="unknown algorithm 'XYZ'; valid: SFMA, GPS"):
        descriptors.register("XYZ", Part.HW_UNION, True)


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_the_golden_descriptor_is_consistent(name):
    alg = ALGORITHMS[name]
    assert set(alg.fields_read) <= FIELDS and set(alg.requires) <= FIELDS
    given = {f: v for f, v in dict(F=24, e_zero=-133, group=4).items() if f in alg.fields_read}
    assert golden.Params(base=name, **given).fields_read == alg.fields_read
    for field in alg.requires:           # each required field refused when missing, in the descriptor's words
        with pytest.raises(ValueError, match=f"{name} needs"):
            golden.Params(base=name, **{f: v for f, v in given.items() if f != field})


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_the_layer_parts_agree(name):
    assert name in part(name, Part.HW_DATAPATH).BASES
    kinds = part(name, Part.PIPELINING)
    assert kinds and all(isinstance(k, StageKind) for k in kinds)
    assert isinstance(part(name, Part.HW_UNION), bool) and isinstance(part(name, Part.FORMAL), dict)
    assert callable(part(name, Part.REFERENCE)) and callable(part(name, Part.PROBE).recognise)
    lowered = part(name, Part.HW_LOWERED)            # a compiled path's datapath exactly where golden has one
    assert (lowered is not None) == ALGORITHMS[name].lowering and (lowered is None or name in lowered.BASES)


def test_every_stage_kind_has_a_row_and_a_reader():
    assert set(STAGE_KINDS) == set(StageKind)
    read = {k for kinds in parts(Part.PIPELINING).values() for k in kinds}
    assert read == set(StageKind)
    assert len({p.rank for p in parts(Part.PROBE).values()}) == len(ALGORITHMS)


def test_the_union_bases_come_from_the_descriptors():
    from hw.tensor_core import UNION_BASES
    assert UNION_BASES == tuple(n for n in ALGORITHMS if part(n, Part.HW_UNION)) and UNION_BASES


def test_instruction_algorithm_is_derived_and_with_params_keeps_it_true():
    assert "algorithm" not in {f.name for f in dataclasses.fields(golden.Instruction)}
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    chained = ins.with_params(pass_size=4)
    assert (ins.algorithm, chained.algorithm) == ("FDA", "CoFDA") and chained.name == ins.name
    gps = golden.lookup("cdna2", "v_mfma_f32_32x32x8_f16")
    assert gps.with_params(golden.Params(base="FDA", F=24, e_zero=-133)).algorithm == "FDA"
    with pytest.raises(ValueError, match="SFMA runs IEEE fused multiply-adds in one format"):
        ins.with_params(golden.Params(base="SFMA"))         # f16 operands: no SFMA golden can run
    with pytest.raises(ValueError, match="not both"):
        ins.with_params(ins.params, F=3)


def test_the_passes_take_a_datapath():
    """The algorithms take one golden.Datapath; run() with the formats spelled out is the same call."""
    import numpy as np

    from golden.algorithms import run, run_datapath
    ins = golden.lookup("ampere", "HMMA.16816.F32")
    rng = np.random.default_rng(1)
    a, b = (rng.integers(0, 1 << 16, (64, ins.k), dtype=np.uint64) for _ in range(2))
    c = rng.integers(0, 1 << 32, 64, dtype=np.uint64)
    d = run_datapath(ins.datapath, a, b, c)
    assert np.array_equal(d, run(ins.params, a, b, c, *ins.formats))
    assert np.array_equal(d, golden.dot_add(ins, a, b, c))
