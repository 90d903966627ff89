"""The C golden library's SFMA, GPS and FDRDA/GFDRDA row kernels (golden_c/src/sfma.c, gps.c, amd.c)
against the numpy path: identical bits on every catalog datapath those kernels model, for every
vector kind; a fault planted in a kernel (prm[P_FAULT]) is caught by the same comparison.

The kernels are called through their row ABI (golden_c/src/rows.h) with the arrays
golden.kernels.spec.build gives, as golden.kernels.run hands them to the numba row kernels.  The
shared object is compiled here (cc, C99) from golden_c/src and the golden_spec.h that
golden.c_library writes.
"""

from __future__ import annotations

import ctypes
import dataclasses
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import golden
from golden import api, c_library, kernels
from golden.catalog import instructions, lookup
from golden.descriptors import KernelCode
from golden.kernels import spec
from golden.rules import FloorRounding, Specials, ZeroSign
from golden.vectors import KINDS, random_operands

ROWS = 64                # per vector kind and datapath in the default suite; the slow tier: SLOW_ROWS
SLOW_ROWS = 20_000
SRC = Path(__file__).resolve().parents[2] / "golden_c" / "src"
SOURCES = ("common.c", "sfma.c", "gps.c", "amd.c")
ENTRY = {KernelCode.SFMA: "golden_sfma_rows", KernelCode.GPS: "golden_gps_rows",
         KernelCode.FDRDA: "golden_fdrda_rows", KernelCode.GFDRDA: "golden_fdrda_rows"}

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")


def _modelled(dp) -> bool:
    """The kernels' predicate (golden.kernels.supports: what golden.kernels.handles asks, less
    numba's own fma check, which the C kernels, on C99's fma, do not need)."""
    return spec.kernel_code(dp.params) in ENTRY and kernels.supports(dp.params, dp.formats, dp.k, dp.scale_format,
                                                                     dp.block_size)


def _datapaths():
    seen = {}
    for ins in instructions():
        if _modelled(ins.datapath):
            seen.setdefault(ins.datapath, ins)
    return list(seen.values())


DATAPATHS = _datapaths()


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    """The kernels' shared object, compiled from golden_c/src into a temporary folder."""
    out = tmp_path_factory.mktemp("golden_c")
    c_library.write_spec_header(out)
    so = out / "libgolden_kernels.so"
    cmd = ["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-fPIC", "-shared", "-I", str(out), "-I", str(SRC),
           *(str(SRC / s) for s in SOURCES), "-o", str(so), "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr, done.stderr
    handle = ctypes.CDLL(str(so))
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    for name in set(ENTRY.values()):
        fn = getattr(handle, name)
        fn.argtypes = [i64, i64, p, p, p, p, p, p, i64, p, p, p, p, p, p]
        fn.restype = None
    return handle


def _ptr(x):
    return None if x is None else x.ctypes.data


def c_dot_add(lib, ins, a, b, c, sa=None, sb=None, fault: bool = False) -> np.ndarray:
    """d's bits from the C row kernel, as golden.kernels.run/_launch call a row kernel (one chunk,
    operands as uint8 views with their item sizes)."""
    dp = ins.datapath
    fmts, vtab, etab, prm = spec.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)
    prm = prm.copy()
    prm[spec.P_FAULT] = int(fault)
    ops = api.Operands(ins, a, b, c, sa, sb)
    R = ops.count
    packed = [kernels._operand(x) for x in ops.rows(0, R)]
    views = [None if x is None else v for (v, _), x in zip(packed, ops.rows(0, R))]
    isz = np.array([s for _, s in packed], np.int64)
    order = np.ascontiguousarray(kernels._order(dp.params, dp.k), np.int64)
    fmts, vtab, etab = (np.ascontiguousarray(x) for x in (fmts, vtab, etab))
    out = np.zeros(R, np.uint64)
    rows = getattr(lib, ENTRY[spec.kernel_code(dp.params)])
    rows(0, R, *(_ptr(v) for v in views), _ptr(isz), dp.k, _ptr(fmts), _ptr(vtab), _ptr(etab), _ptr(prm),
         _ptr(order), _ptr(out))
    return out.astype(dp.d_format.dtype).reshape(ops.batch)


def mismatches(lib, ins, n: int, kinds=KINDS, seed: int = 0, fault: bool = False) -> int:
    """Rows where the C kernel and the numpy path differ, over ``n`` rows of each vector kind."""
    bad = 0
    for i, kind in enumerate(kinds):
        a, b, c, sa, sb = random_operands(ins, n, np.random.default_rng([seed, i]), kind)
        want = golden.dot_add(ins, a, b, c, sa, sb, backend="numpy")
        got = c_dot_add(lib, ins, a, b, c, sa, sb, fault=fault)
        assert got.dtype == want.dtype and got.shape == want.shape
        bad += int((got != want).sum())
    return bad


def test_every_family_is_covered():
    assert {spec.kernel_code(i.params) for i in DATAPATHS} == set(ENTRY)


@pytest.mark.parametrize("ins", DATAPATHS, ids=lambda i: f"{i.arch}-{i.name}")
def test_identical_bits_every_vector_kind(lib, ins):
    assert mismatches(lib, ins, ROWS) == 0


@pytest.mark.slow
@pytest.mark.parametrize("ins", DATAPATHS, ids=lambda i: f"{i.arch}-{i.name}")
def test_identical_bits_many_rows(lib, ins):
    assert mismatches(lib, ins, SLOW_ROWS, seed=1) == 0


# one instruction per kernel (and per FDRDA variant)
FAULT_UNITS = [("cdna2", "v_mfma_f32_16x16x4_f32"), ("hopper", "DMMA.16x8x16"), ("cdna2", "v_mfma_f32_32x32x8_f16"),
               ("cdna2", "v_mfma_f32_32x32x4bf16"), ("cdna3", "v_mfma_f32_32x32x8_f16"),
               ("cdna3", "v_mfma_f32_16x16x8_xf32"), ("cdna3", "v_mfma_f32_16x16x32_fp8_fp8")]


@pytest.mark.parametrize("unit", FAULT_UNITS, ids=lambda u: f"{u[0]}-{u[1]}")
def test_planted_fault_is_caught(lib, unit):
    ins = lookup(*unit)
    assert mismatches(lib, ins, 4 * ROWS, kinds=("normal", "structured")) == 0
    assert mismatches(lib, ins, 4 * ROWS, kinds=("normal", "structured"), fault=True) > 0


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
def test_identical_bits_off_catalog_designs(lib, ins):
    assert mismatches(lib, ins, ROWS) == 0


@pytest.mark.slow
@pytest.mark.parametrize("ins", VARIANTS)
def test_identical_bits_off_catalog_designs_many_rows(lib, ins):
    assert mismatches(lib, ins, SLOW_ROWS // 4, seed=2) == 0
