"""Operands in their own width: the generators' ``narrow=True`` gives the uint64 output's values in
each format's own dtype (uint8 fp8/fp6/fp4 and scales, uint16 f16/bf16, uint32 f32/tf32, uint64 f64),
on the compiled draws and on numpy's calls, through VectorStream too; golden gives the same bits on
them on both backends; the width scan that narrow dtypes skip still rejects a wide dtype's stray bits;
a narrow draw that loses a bit is caught by the comparison these tests make."""

from __future__ import annotations

import numpy as np
import pytest

import golden
import golden.vectors as gv
from golden import kernels
from golden.streams import VectorStream
from golden.vectors import KINDS, operand_dtype, operand_formats, random_operands

# one instruction per family and width: FDA f16, CoFDA fp8, block-scaled fp4 x fp6, GDFS, FDRDA f16,
# GPS f16, SFMA f64, tf32
UNITS = [("hopper", "HMMA.16816.F32"), ("ada", "QMMA.16832.F32.E4M3.E4M3"),
         ("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8"), ("blackwell", "UTCOMMA.4X"),
         ("cdna3", "v_mfma_f32_32x32x8_f16"), ("cdna2", "v_mfma_f32_32x32x8_f16"), ("hopper", "DMMA.8x8x4"),
         ("cdna3", "v_mfma_f32_32x32x4_xf32")]
ROWS = 150


@pytest.fixture(autouse=True)
def compiled_draws(monkeypatch):
    """The compiled draws (the suite's GOLDEN_BACKEND=numpy would keep the generators on numpy's calls)."""
    monkeypatch.setenv("GOLDEN_BACKEND", "numba")


def differences(ins, wide, narrow) -> list[str]:
    """What keeps ``narrow`` from being ``wide`` in each format's own width: a dtype or a value."""
    bad = []
    for name, x, y, fmt in zip(("a", "b", "c", "scale_a", "scale_b"), wide, narrow, operand_formats(ins)):
        if x is None or y is None:
            bad += [name] if (x is None) != (y is None) else []
            continue
        if y.dtype != operand_dtype(fmt, True) or x.dtype != np.uint64:
            bad.append(f"{name} dtype {y.dtype}")
        elif not np.array_equal(x, y):
            bad.append(f"{name} values")
    return bad


def both(ins, kind, seed=3):
    """The same draws, uint64 and narrow (and each generator's final state)."""
    r1, r2 = np.random.default_rng([seed, ROWS]), np.random.default_rng([seed, ROWS])
    wide, narrow = random_operands(ins, ROWS, r1, kind), random_operands(ins, ROWS, r2, kind, narrow=True)
    assert r1.bit_generator.state == r2.bit_generator.state
    return wide, narrow


@pytest.mark.parametrize("draws", ["compiled", "numpy"])
def test_narrow_draws_are_the_uint64_values(monkeypatch, draws):
    if draws == "numpy":
        monkeypatch.setattr(gv, "_state", lambda rng: None)
    for unit in UNITS:
        ins = golden.lookup(*unit)
        for kind in KINDS:
            assert differences(ins, *both(ins, kind)) == [], (unit, kind, draws)


def test_a_narrow_draw_losing_a_bit_is_caught(monkeypatch):
    """Planted fault: the bounded draws drop the top bit of their dtype when it is narrow."""
    vk = gv._kernels()
    fill = vk.fill_bounded

    def truncating(st, out, rng):
        fill(st, out, rng)
        if out.dtype.itemsize < 8:
            out &= out.dtype.type((1 << (8 * out.dtype.itemsize - 1)) - 1)
    monkeypatch.setattr(vk, "fill_bounded", truncating)
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    assert differences(ins, *both(ins, "bits")) != []
    stream = VectorStream(ins, "bits", 2, narrow=True).take(100)
    assert differences(ins, VectorStream(ins, "bits", 2).take(100), stream) != []


def test_narrow_streams_are_the_default_streams():
    """VectorStream(narrow=True), in any batching and from a generator of one's own, serves the same values."""
    ins = golden.lookup("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8")
    wide = VectorStream(ins, "mixed", 3).take(10000)
    s = VectorStream(ins, "mixed", 3, narrow=True)
    parts = [s.take(k) for k in (1, 8191, 1808)]
    joined = tuple(None if p is None else np.concatenate([q[i] for q in parts]) for i, p in enumerate(parts[0]))
    assert differences(ins, wide, joined) == []
    own = VectorStream(ins, lambda ins, n, rng: random_operands(ins, n, rng, "mixed"), 3, narrow=True)
    assert differences(ins, wide, own.take(10000)) == []


def test_wide_dtypes_are_still_scanned():
    """The scan that narrow dtypes skip still names a stray bit in a wider dtype (one clear error)."""
    f16 = golden.lookup("hopper", "HMMA.16816.F32")
    a, b, c, _, _ = random_operands(f16, 4, np.random.default_rng(1), "normal", narrow=True)
    for dtype in (np.uint32, np.uint64):
        bad = a.astype(dtype)
        bad[2, 5] = 0x10000
        with pytest.raises(ValueError, match=r"a: bit pattern 0x10000 is wider than format f16 \(16 bits\)"):
            golden.dot_add(f16, bad, b, c, backend="numpy")
    fp4 = golden.lookup("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8")       # fp4 in uint8: still scanned
    a, b, c, sa, sb = random_operands(fp4, 4, np.random.default_rng(1), "normal", narrow=True)
    assert a.dtype == np.uint8
    a[0, 0] = 0x10
    with pytest.raises(ValueError, match="a: bit pattern 0x10 is wider than format e2m1"):
        golden.dot_add(fp4, a, b, c, sa, sb, backend="numpy")
    with pytest.raises(ValueError, match="uint64 or uint16 array of shape"):
        gv.random_bits("f16", 7, np.random.default_rng(1), out=np.zeros(7, np.uint32))


@pytest.mark.xdist_group("golden_kernels")
@pytest.mark.skipif(not kernels.available(), reason="numba is not installed")
@pytest.mark.parametrize("unit", UNITS, ids=lambda u: f"{u[0]}-{u[1]}")
def test_golden_gives_the_same_bits_on_narrow_operands(unit):
    """Both backends, every kind: narrow operands give uint64 operands' bits."""
    ins = golden.lookup(*unit)
    for kind in KINDS:
        wide, narrow = both(ins, kind, seed=5)
        want = golden.dot_add(ins, *wide, backend="numpy")
        assert np.array_equal(golden.dot_add(ins, *narrow, backend="numpy"), want), kind
        assert np.array_equal(golden.dot_add(ins, *narrow, backend="numba", threads=1), want), kind
        assert np.array_equal(golden.dot_add(ins, *wide, backend="numba", threads=1), want), kind
