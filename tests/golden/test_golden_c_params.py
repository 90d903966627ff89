"""Every golden.Params field in the C golden library, against golden's numpy path bit for bit.

The fields (and values) the C library models beyond golden.kernels' compiled kernels
(golden.c_library.CSlot): F="exact" (CDNA1's exact sums, so every catalog entry is in C), nan_bits,
fma_rounding and zero_sign="ieee754".  For every field of golden.params.FIELDS a design that
sets it gives golden's bits, and bits that differ from the same design at another value of the field
(so C really reads it); flush_subnormals, which no algorithm reads (GPS flushes anyway), gives
golden's bits and the same bits as without it.  A fault planted in the exact sum's rounding is
caught.  The slow tier runs the exact designs and the field cases over 20,000 rows of every vector kind.
"""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest

import golden
from golden import c_library, clib
from golden.formats import from_float, get_format, special_bits
from golden.params import FIELDS
from golden.vectors import KINDS, random_operands

ROWS = 32
SLOW_ROWS = 20_000

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")

HGMMA = ("hopper", "HGMMA.64xNx16.F32")
FDRDA_F16 = ("cdna3", "v_mfma_f32_32x32x8_f16")
FDRDA_XF32 = ("cdna3", "v_mfma_f32_16x16x8_xf32")
GFDRDA = ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8")
GPS = ("cdna2", "v_mfma_f32_16x16x16_f16")
SFMA32 = ("cdna2", "v_mfma_f32_16x16x4_f32")
LOWERED = ("hopper", "MMA.16832.F32.E4M3.E4M3")          # operand_format, pass_interleave, c_last
# with F=8, the f16 exponents of fp8 subnormals (below e4m3's emin) move the window: operand_format shows
LOWERED_F8 = dataclasses.replace(golden.lookup(*LOWERED), params=golden.lookup(*LOWERED).params.with_(F=8))
CDNA1 = ("cdna1", "v_mfma_f32_16x16x16f16")

# field -> (instruction, the value tried, another value it is compared with)
CASES = {
    "pass_size": (HGMMA, 8, None), "F": (HGMMA, 20, 25), "e_zero": (HGMMA, -10, -133),
    "out_rounding": (HGMMA, "RU", "RZ"), "out_frac_bits": (HGMMA, 10, None),
    "overflow": (("ampere", "HMMA.16816.F32.BF16"), "ieee", "inf"), "group": (GPS, 8, 4),
    "dot_floor_bits": (FDRDA_F16, 24, 32), "c_floor_bits": (FDRDA_F16, 20, 24), "final_floor_bits": (FDRDA_F16, 20, 31),
    "merge_floor_bits": (GFDRDA, 20, 24), "floor_rounding": (FDRDA_F16, "RZ", "RD"), "c_drop": (GFDRDA, 4, None),
    "product_overflow": (FDRDA_XF32, True, False), "flush_subnormals": (GPS, True, False),
    "zero_sign": (HGMMA, "ieee754", "ieee"), "specials": (FDRDA_XF32, "later_model", "paper"),
    "operand_format": (LOWERED_F8, "f16", None), "pass_interleave": (LOWERED, 2, None),
    "c_last": (LOWERED, True, False),
    "nan_bits": (HGMMA, 0x7FC00001, None), "fma_rounding": (SFMA32, "RZ", "RNE"),
}
MORE = [("F", CDNA1, "exact", 24), ("zero_sign", CDNA1, "ieee754", "ieee"), ("out_rounding", CDNA1, "RD", "RNE"),
        ("zero_sign", ("blackwell", "UTCOMMA.MXF4.E8"), "ieee754", "ieee"), ("zero_sign", FDRDA_F16, "ieee754", "ieee"),
        ("zero_sign", GFDRDA, "ieee754", "positive"), ("zero_sign", FDRDA_XF32, "ieee754", "ieee"),
        ("fma_rounding", SFMA32, "RD", "RNE"), ("fma_rounding", SFMA32, "RU", "RNE"),
        ("nan_bits", GPS, 0x7FC00002, None), ("nan_bits", FDRDA_XF32, 0xFFC00000, None),
        ("nan_bits", GFDRDA, 0x7F800001, None), ("nan_bits", ("hopper", "DMMA.16x8x16"), 0x7FF0000000000001, None),
        ("nan_bits", ("blackwell", "UTCOMMA.MXF4.E8"), 0x7FC00003, None), ("nan_bits", CDNA1, 0x7FC00004, None)]
UNREAD = {"flush_subnormals"}                  # no algorithm reads it: the same bits either way
ALL = [(f, *CASES[f]) for f in CASES] + [pytest.param(*m, marks=pytest.mark.slow) for m in MORE]
EXACT = list({ins.datapath: ins for ins in golden.CATALOG if ins.params.F == "exact"}.values())


def _design(unit, field, value):
    ins = golden.lookup(*unit) if isinstance(unit, tuple) else unit
    return dataclasses.replace(ins, params=ins.params.with_(**{field: value}))


def _operands(ins, n: int, seed: int):
    """n rows of every vector kind, and two rows built to show a field: -0 terms (+0 times -1, c -0:
    IEEE 754's -0 sum; block scales 1), and a's smallest subnormal times b's 1 then b's smallest normal
    (products a window of a few bits tells apart when the subnormal's exponent moves, as lowering e4m3
    to f16 does)."""
    out = [random_operands(ins, n, np.random.default_rng([seed, i]), kind) for i, kind in enumerate(KINDS)]
    fa, fb, fc = (get_format(f) for f in (ins.a_format, ins.b_format, ins.c_format))
    k = ins.k
    if fb.signed and fc.signed:
        scales = None
        if ins.scale_format:
            fs = get_format(ins.scale_format)
            scales = np.full((1, k // ins.block_size), from_float(fs, np.array([1.0]), "RNE")[0], np.uint64)
        out.append((np.zeros((1, k), np.uint64), np.full((1, k), from_float(fb, np.array([-1.0]), "RNE")[0], np.uint64),
                    np.full(1, special_bits(fc, "zero", 1), np.uint64), scales, scales))
    if fa.signed and fc.signed and not ins.scale_format:
        if fa.subnormals and fb.subnormals:
            b = from_float(fb, np.array([1.0] + [2.0 ** fb.emin] * (k - 1)), "RNE").astype(np.uint64)
            out.append((np.full((1, k), 1 << fa.ignored_low_bits, np.uint64), b[None, :], np.zeros(1, np.uint64),
                        None, None))
    return out


def _case(field, unit, value, other, n: int, seed: int = 0):
    """``(mismatches against golden, rows where the two values of the field differ in C)``."""
    new, old = _design(unit, field, value), _design(unit, field, other)
    assert c_library.supports(new.datapath) and c_library.supports(old.datapath), (field, value)
    bad = changed = 0
    for ops in _operands(new, n, seed):
        got = clib.dot_add(new, *ops)
        bad += int((got != golden.dot_add(new, *ops, backend="numpy")).sum())
        changed += int((got != clib.dot_add(old, *ops)).sum())
    return bad, changed


def test_every_field_has_a_case():
    assert set(CASES) == set(FIELDS) - {"base"}
    assert len(golden.CATALOG) == len(c_library._supported())         # every catalog entry is in C


@pytest.mark.parametrize("field,unit,value,other", ALL, ids=lambda x: str(x) if not isinstance(x, tuple) else "")
def test_field_is_read(field, unit, value, other):
    bad, changed = _case(field, unit, value, other, ROWS)
    assert bad == 0
    assert (changed == 0) if field in UNREAD else (changed > 0)


@pytest.mark.parametrize("ins", [pytest.param(ins, marks=() if j == 0 else pytest.mark.slow)
                                 for j, ins in enumerate(EXACT)], ids=lambda i: f"{i.arch}-{i.name}")
def test_exact_entries_every_kind(ins):
    bad = 0
    for ops in _operands(ins, ROWS, 1):
        bad += int((clib.dot_add(ins, *ops) != golden.dot_add(ins, *ops, backend="numpy")).sum())
    assert bad == 0


def test_planted_fault_in_the_exact_sum_is_caught():
    ins = golden.lookup(*CDNA1)
    ops = random_operands(ins, 4 * ROWS, np.random.default_rng(9), "normal")
    want = golden.dot_add(ins, *ops, backend="numpy")
    with clib.planted_fault():
        assert (clib.dot_add(ins, *ops) != want).any()
    assert np.array_equal(clib.dot_add(ins, *ops), want)


@pytest.mark.slow
@pytest.mark.parametrize("field,unit,value,other", [(f, *CASES[f]) for f in CASES] + MORE,
                         ids=lambda x: str(x) if not isinstance(x, tuple) else "")
def test_field_many_rows_slow(field, unit, value, other):
    assert _case(field, unit, value, other, SLOW_ROWS, seed=5)[0] == 0


@pytest.mark.slow
@pytest.mark.parametrize("ins", EXACT, ids=lambda i: f"{i.arch}-{i.name}")
def test_exact_entries_many_rows_slow(ins):
    for field, value in (("out_rounding", "RZ"), ("out_rounding", "RU"), ("zero_sign", "ieee754"),
                         ("out_frac_bits", 10)):
        design = _design(ins, field, value)
        for ops in _operands(design, SLOW_ROWS // 4, 6):
            assert np.array_equal(clib.dot_add(design, *ops), golden.dot_add(design, *ops, backend="numpy"))
