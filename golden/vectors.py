"""Random dot-add operands for an instruction: the shared vector generator.

``kind`` chooses the distribution:

``bits``
    Uniform random bit patterns over each operand's storage width; covers
    NaN, infinities, subnormals and every exponent.
``normal``
    Finite values with exponents near each other (random signs, a spread of a
    few binades, some zeros), where cancellation and rounding decide the result.
``mixed``
    Half of each.
"""

from __future__ import annotations

import numpy as np

from .catalog import Instruction
from .formats import Format, from_float, get_format

KINDS = ("bits", "normal", "mixed")


def random_bits(fmt: Format, shape, rng: np.random.Generator) -> np.ndarray:
    fmt = get_format(fmt)
    hi = 1 << fmt.storage_bits
    if fmt.storage_bits == 64:
        return rng.integers(0, 1 << 63, shape, dtype=np.uint64) * np.uint64(2) + \
            rng.integers(0, 2, shape, dtype=np.uint64)
    return rng.integers(0, hi, shape, dtype=np.uint64)


def random_values(fmt: Format, shape, rng: np.random.Generator, spread: int = 4, zeros: float = 0.1) -> np.ndarray:
    """Finite values ``+-m * 2**e`` with ``|e| <= spread`` clipped to the format's range, rounded to it."""
    fmt = get_format(fmt)
    lo, hi = max(fmt.emin, -spread), min(fmt.emax, spread)
    e = rng.integers(lo, hi + 1, shape)
    m = 1 + rng.random(shape)
    v = np.ldexp(m, e)
    if fmt.signed:
        v = np.where(rng.random(shape) < 0.5, -v, v)
    v = np.where(rng.random(shape) < zeros, 0.0, v)
    return from_float(fmt, v, "RZ").astype(np.uint64)


def random_operands(ins: Instruction, n: int, rng: np.random.Generator, kind: str = "mixed"):
    """``(a [n, K], b [n, K], c [n], scale_a, scale_b)`` bit patterns for ``ins``."""
    if kind not in KINDS:
        raise ValueError(f"unknown vector kind {kind!r}; valid: {', '.join(KINDS)}")
    fa, fb, fc, _ = ins.formats
    if kind == "mixed":
        half = n // 2
        p = random_operands(ins, half, rng, "bits")
        q = random_operands(ins, n - half, rng, "normal")
        return tuple(None if x is None else np.concatenate([x, y]) for x, y in zip(p, q))
    gen = random_bits if kind == "bits" else random_values
    a = gen(fa, (n, ins.k), rng)
    b = gen(fb, (n, ins.k), rng)
    c = gen(fc, (n,), rng)
    sa = sb = None
    if ins.scale_format:
        fs = get_format(ins.scale_format)
        shape = (n, ins.k // ins.block_size)
        if kind == "bits":
            sa, sb = random_bits(fs, shape, rng), random_bits(fs, shape, rng)
        else:   # scales near 1 so the scaled products stay comparable
            sa, sb = (from_float(fs, np.ldexp(1.0, rng.integers(-3, 4, shape))).astype(np.uint64) for _ in "ab")
    return a, b, c, sa, sb
