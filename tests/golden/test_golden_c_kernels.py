"""The C golden library's SFMA, GPS and FDRDA/GFDRDA row kernels (golden_c/src/sfma.c, gps.c, amd.c)
through golden.clib against the numpy path: identical bits on every catalog datapath those kernels
model, for every vector kind, operands in uint64, in their formats' own widths and in mixed widths;
off-catalog designs the kernels also model (golden.c_library.supports); a fault planted in a kernel
(prm[P_FAULT]) is caught by the same comparison.

Catalog entries with equal datapaths give the same bits on every input (golden.catalog.Datapath), so
each datapath runs once, under the first entry that has it.
"""

from __future__ import annotations

import dataclasses
import shutil

import c_golden
import numpy as np
import pytest
from c_golden import datapaths

import golden
from golden import c_library, clib
from golden.catalog import lookup
from golden.descriptors import KernelCode
from golden.kernels import spec
from golden.rules import FloorRounding, Specials, ZeroSign
from golden.vectors import random_operands

ROWS = 64                # per vector kind and datapath in the default suite; the slow tier: SLOW_ROWS
SLOW_ROWS = 20_000
CODES = (KernelCode.SFMA, KernelCode.GPS, KernelCode.FDRDA, KernelCode.GFDRDA)

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")


def _modelled(dp) -> bool:
    """The C library's predicate (golden.c_library.supports: golden.kernels.supports, less numba's own
    fma check, which the C kernels, on C99's fma, do not need) for these kernels."""
    return spec.kernel_code(dp.params) in CODES and c_library.supports(dp)


DATAPATHS = datapaths(CODES)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The library built afresh for this module (golden.clib.build into a temporary folder)."""
    out = tmp_path_factory.mktemp("golden_c_kernels")
    clib.build(out)
    return out


def mismatches(ins, folder, n: int, **options) -> int:
    """c_golden.mismatches, the operands also in mixed widths."""
    return c_golden.mismatches(ins, folder, n, mixed=True, **options)


def test_every_family_is_covered():
    assert {spec.kernel_code(i.params) for i in DATAPATHS} == set(CODES)


@pytest.mark.parametrize("ins", DATAPATHS, ids=lambda i: f"{i.arch}-{i.name}")
def test_identical_bits_every_vector_kind(ins, folder):
    assert mismatches(ins, folder, ROWS) == 0


@pytest.mark.slow
@pytest.mark.parametrize("ins", DATAPATHS, ids=lambda i: f"{i.arch}-{i.name}")
def test_identical_bits_many_rows(ins, folder):
    assert mismatches(ins, folder, SLOW_ROWS, seed=1) == 0


def test_broadcast_operands(folder):
    """Broadcast a, b and c (golden.clib reads them a row block at a time) give the numpy path's bits."""
    for code in CODES:
        ins = next(i for i in DATAPATHS if spec.kernel_code(i.params) == code)
        a, b, c, _, _ = random_operands(ins, 6, np.random.default_rng(7), "normal")
        a, b, c = a.reshape(2, 3, ins.k), b[:3].reshape(3, ins.k), c[0]
        want = golden.dot_add(ins, a, b, c, backend="numpy")
        got = clib.dot_add(ins, a, b, c, folder=folder)
        assert got.shape == want.shape == (2, 3) and np.array_equal(got, want)


@pytest.mark.parametrize("ins", DATAPATHS, ids=lambda i: f"{i.arch}-{i.name}")
def test_identical_bits_on_cover_vectors(ins, folder):
    """The dot-adds golden.cover's directed closure finds for every cover bin of the datapath."""
    from golden.cover.directed import solve
    ops = solve(ins, np.random.default_rng(3), seconds=5.0).operands
    want = golden.dot_add(ins, *ops, backend="numpy")
    assert len(want) and np.array_equal(clib.dot_add(ins, *ops, folder=folder), want)


def _bf16(values) -> np.ndarray:
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def test_gps_flushes_a_subnormal_pair_sum(folder):
    """A pair sum below 2**-126 is flushed before the next level adds it (the vectors rarely reach one):
    (1.25 * 2**-125 - 2**-125) + (2**-126 + 0) is 2**-126, not 1.5 * 2**-126."""
    ins = lookup("cdna2", "v_mfma_f32_32x32x8_bf16")                   # group 4
    assert ins.params.group == 4 and ins.k == 8
    a = _bf16([1.25 * 2.0 ** -60, -(2.0 ** -60), 2.0 ** -60, 0, 1.25 * 2.0 ** -60, -(2.0 ** -60), 0, 0])
    b = _bf16([2.0 ** -65, 2.0 ** -65, 2.0 ** -66, 0, 2.0 ** -65, 2.0 ** -65, 0, 0])
    c = np.zeros(1, np.uint32)
    want = golden.dot_add(ins, a[None], b[None], c, backend="numpy")
    assert want[0] == np.float32(2.0 ** -126).view(np.uint32)
    assert np.array_equal(clib.dot_add(ins, a[None], b[None], c, folder=folder), want)


# one instruction per kernel (and per FDRDA variant)
FAULT_UNITS = [("cdna2", "v_mfma_f32_16x16x4_f32"), ("hopper", "DMMA.16x8x16"), ("cdna2", "v_mfma_f32_32x32x8_f16"),
               ("cdna2", "v_mfma_f32_32x32x4bf16"), ("cdna3", "v_mfma_f32_32x32x8_f16"),
               ("cdna3", "v_mfma_f32_16x16x8_xf32"), ("cdna3", "v_mfma_f32_16x16x32_fp8_fp8")]


@pytest.mark.parametrize("unit", FAULT_UNITS, ids=lambda u: f"{u[0]}-{u[1]}")
def test_planted_fault_is_caught(unit, folder):
    ins = lookup(*unit)
    assert mismatches(ins, folder, 4 * ROWS, kinds=("normal", "structured")) == 0
    with clib.planted_fault():
        assert mismatches(ins, folder, 4 * ROWS, kinds=("normal", "structured"), narrow=False) > 0


AMD_CHANGES = ({"specials": Specials.LATER_MODEL}, {"floor_rounding": FloorRounding.RZ}, {"c_drop": 24},
               {"out_frac_bits": 10}, {"specials": Specials.LATER_MODEL, "c_drop": 24}, {"c_drop": 0},
               {"product_overflow": False}, {"zero_sign": ZeroSign.POSITIVE}, {"F": 30},
               {"d_format": "f16"}, {"c_format": "f16", "d_format": "f16"},
               {"c_format": "f16", "d_format": "f16", "specials": Specials.LATER_MODEL, "c_drop": 12},
               {"k": 48}, {"k": 64, "pass_size": 16}, {"k": 320, "pass_size": 320},
               {"k": 24, "pass_size": 8, "specials": Specials.LATER_MODEL})
GPS_CHANGES = ({"group": 8}, {"group": 16}, {"zero_sign": ZeroSign.POSITIVE}, {"k": 24, "group": 8},
               {"k": 64, "group": 16})
SFMA_CHANGES = ({"k": 1}, {"k": 33}, {"zero_sign": ZeroSign.POSITIVE})
VARIED = [(("cdna3", "v_mfma_f32_32x32x8_f16"), AMD_CHANGES), (("cdna3", "v_mfma_f32_16x16x16_bf16"), AMD_CHANGES),
          (("cdna3", "v_mfma_f32_16x16x32_fp8_bf8"), AMD_CHANGES), (("cdna3", "v_mfma_f32_16x16x8_xf32"), AMD_CHANGES),
          (("cdna2", "v_mfma_f32_16x16x16_f16"), GPS_CHANGES), (("cdna2", "v_mfma_f32_16x16x8bf16"), GPS_CHANGES),
          (("hopper", "DMMA.16x8x16"), SFMA_CHANGES), (("cdna2", "v_mfma_f32_16x16x4_f32"), SFMA_CHANGES)]


def _variants():
    """Designs off the catalog these kernels also model (each where golden.kernels.supports it): the
    later model's specials, toward-zero floors, c dropped, a narrower or f16 d, no product overflow,
    another F, other K and pass sizes (chains); GPS with other group sizes and K; SFMA with other K."""
    out = []
    for unit, changes in VARIED:
        ins = lookup(*unit)
        for change in changes:
            fields = {k: v for k, v in change.items() if k in ("c_format", "d_format", "k")}
            try:
                params = ins.params.with_(**{k: v for k, v in change.items() if k not in fields})
                new = dataclasses.replace(ins, params=params, **fields)
                _ = new.datapath
            except (TypeError, ValueError):
                continue
            if _modelled(new.datapath):
                out.append(pytest.param(new, id=f"{ins.name}-{'-'.join(f'{k}={v}' for k, v in change.items())}"))
    return out


VARIANTS = _variants()


def test_variants_are_modelled():
    assert len(VARIANTS) >= 40


@pytest.mark.parametrize("ins", VARIANTS)
def test_identical_bits_off_catalog_designs(ins, folder):
    assert mismatches(ins, folder, ROWS) == 0


@pytest.mark.slow
@pytest.mark.parametrize("ins", VARIANTS)
def test_identical_bits_off_catalog_designs_many_rows(ins, folder):
    assert mismatches(ins, folder, SLOW_ROWS // 4, seed=2) == 0
