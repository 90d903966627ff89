"""golden.kernels.half: f16 and bf16 patterns as float32, one at a time and eight rows by eight at
once, f16 on the CPU's own conversion and spelt out (what CPUs without one run), against numpy's
float16 and ml_dtypes' bfloat16."""

import ml_dtypes
import numba
import numpy as np
import pytest

from golden.kernels import half

PATTERNS = np.arange(1 << 16, dtype=np.uint16)


def _same(got, want) -> bool:
    """Bit for bit, any NaN for a NaN (float32's NaN payload is the conversion's own)."""
    nan = np.isnan(want)
    return bool(np.array_equal(got.view(np.uint32)[~nan], want.view(np.uint32)[~nan]) and np.isnan(got[nan]).all())


KINDS = {"f16": np.float16, "f16 spelt out": np.float16, "bf16": ml_dtypes.bfloat16}


@numba.njit
def _convert(h, out, kind):
    for i in range(h.size):
        x = np.int64(h[i])
        out[i] = half.f32_of_f16(x) if kind == 0 else (half.f32_of_f16_soft(x) if kind == 1 else half.f32_of_bf16(x))


@numba.njit
def _transpose(src, s0, ss, dst, d0, ds, kind):
    if kind == 0:
        half.transpose8_f16(src, s0, ss, dst, d0, ds)
    elif kind == 1:
        half.transpose8_f16_soft(src, s0, ss, dst, d0, ds)
    else:
        half.transpose8_bf16(src, s0, ss, dst, d0, ds)


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_pattern_converts_exactly(kind):
    out = np.empty(PATTERNS.size, np.float32)
    _convert(PATTERNS, out, list(KINDS).index(kind))
    assert _same(out, PATTERNS.view(KINDS[kind]).astype(np.float32))


@pytest.mark.parametrize("kind", list(KINDS))
def test_blocks_transpose_and_convert_leaving_the_rest(kind):
    """Eight rows of eight patterns at an offset and stride of the caller's into eight planes at
    theirs: each pattern converted into its column's plane, nothing else written; random patterns,
    every class among them."""
    rng = np.random.default_rng(3)
    for s0, ss, d0, ds in [(0, 8, 0, 8), (3, 11, 2, 10), (5, 16, 7, 256)]:
        src = rng.integers(0, 1 << 16, s0 + 8 * ss + 8, dtype=np.uint16)
        src[s0:s0 + 4] = [0x7C00, 0xFC00, 0x7E01, 0x0001]
        dst = np.full(d0 + 8 * ds + 8, -7.0, np.float32)
        _transpose(src, s0, ss, dst, d0, ds, list(KINDS).index(kind))
        block = np.stack([src[s0 + r * ss:s0 + r * ss + 8] for r in range(8)])
        planes = np.stack([dst[d0 + k * ds:d0 + k * ds + 8] for k in range(8)])
        assert _same(planes, block.T.view(KINDS[kind]).astype(np.float32))
        untouched = np.ones(dst.size, bool)
        for k in range(8):
            untouched[d0 + k * ds:d0 + k * ds + 8] = False
        assert (dst[untouched] == -7.0).all()

