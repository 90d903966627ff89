"""Cover points of block scales (the scaled FDA forms and GDFS): the scales at their extremes.

A scale multiplies every product of its block (FDA with scales) or every group sum of its block
(GDFS).  The points here ask for each scale at the smallest and the largest value its format has,
at zero where the format has one (UE4M3), at NaN (UE8M0 0xFF, UE4M3 0x7F), for the two scales of
one block at their extremes together, and for a scaled term (a product or group sum times its two
scales) pushed past the output's overflow threshold or below its smallest subnormal.

The helpers (:func:`scaled_terms`, :func:`positive_patterns`, :func:`base_operands`) are shared
with golden.cover.gdfs.  Every bin of an unscaled instruction is unreachable (the same tuple is
attached to every FDA instruction).
"""

from __future__ import annotations

import functools

import numpy as np

from ..formats import from_float, get_format, special_bits, to_float
from ..rules import Rounding
from .model import Batch, Bin, CoverPoint

__all__ = ["SCALE_POINTS", "NO_SCALES", "positive_patterns", "scale_extremes", "scaled_terms", "product_values",
           "base_operands", "group_size"]

NO_SCALES = "the instruction has no block scales"


@functools.cache
def positive_patterns(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(bits, values)`` of every positive finite value of a narrow format, by increasing value (one
    pattern per value: UE4M3's ignored top bit gives each value twice)."""
    fmt = get_format(name)
    bits = np.arange(1 << fmt.value_bits, dtype=np.uint64) << np.uint64(fmt.ignored_low_bits)
    vals = to_float(fmt, bits)
    keep = np.isfinite(vals) & (vals > 0)
    vals, first = np.unique(vals[keep], return_index=True)
    return bits[keep][first], vals


@functools.cache
def scale_extremes(name: str) -> dict:
    """``{"smallest", "largest", "zero", "nan"}`` bit patterns of a scale format (None where it has none)."""
    fmt = get_format(name)
    bits, _ = positive_patterns(name)
    zero_is_a_value = to_float(fmt, np.asarray([0], np.uint64))[0] == 0
    return {"smallest": np.uint64(bits[0]), "largest": np.uint64(bits[-1]),
            "zero": np.uint64(0) if zero_is_a_value else None,
            "nan": np.uint64(special_bits(fmt, "nan")) if fmt.has_nan else None}


def group_size(ins) -> int:
    """The products one scaled term holds: GDFS's group, FDA's single product."""
    return (ins.params.group or 16) if ins.params.base == "GDFS" else 1


def product_values(batch: Batch) -> np.ndarray:
    """The unscaled products ``a_k * b_k`` as float64 ``[R, K]`` (exact for the narrow scaled formats)."""
    fa, fb = batch.instruction.formats[:2]
    with np.errstate(all="ignore"):
        return to_float(fa, batch.a) * to_float(fb, batch.b)


def scaled_terms(batch: Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(unscaled, scaled, block)`` per term ``[R, T]``: the term before and after its two scales
    (GDFS: the exact group sums; FDA: the products), and the index of the block whose scales it takes."""
    ins = batch.instruction
    g = group_size(ins)
    p = product_values(batch)
    R, K = p.shape
    with np.errstate(all="ignore"):
        unscaled = p.reshape(R, K // g, g).sum(2)
        fs = get_format(ins.scale_format)
        pair = to_float(fs, batch.scale_a) * to_float(fs, batch.scale_b)
        block = np.arange(K // g) * g // ins.block_size
        return unscaled, unscaled * pair[:, block], block


def _block_live(batch: Batch) -> np.ndarray:
    """``[R, blocks]``: the block holds a non-zero finite product (its scales reach the sum)."""
    ins = batch.instruction
    p = product_values(batch)
    R, K = p.shape
    return ((p != 0) & np.isfinite(p)).reshape(R, K // ins.block_size, ins.block_size).any(2)


def base_operands(ins, rng: np.random.Generator, n: int) -> tuple:
    """Random finite operands of ``ins`` for a construction to edit, as uint64: a, b and c near 1 (normal
    draws rounded to their formats, random signs, one in ten zero) and scales 2^-3..2^3.  Drawn here
    rather than by golden.vectors, which sits above golden.algorithms (that imports this module)."""
    fa, fb, fc = ins.formats[:3]

    def draw(fmt, shape):
        v = rng.standard_normal(shape)
        v[rng.random(shape) < 0.1] = 0.0
        return np.asarray(from_float(fmt, v, Rounding.RNE), np.uint64)

    a, b, c = draw(fa, (n, ins.k)), draw(fb, (n, ins.k)), draw(fc, (n,))
    if not ins.scale_format:
        return a, b, c, None, None
    blocks = (n, ins.k // ins.block_size)
    sa, sb = (np.asarray(from_float(ins.scale_format, np.ldexp(1.0, rng.integers(-3, 4, blocks)), Rounding.RNE),
                         np.uint64) for _ in "ab")
    return a, b, c, sa, sb


def _set_nonzero_product(ins, a, b, rows, positions, rng, largest: bool = False, smallest: bool = False):
    """A non-zero product at ``positions`` of ``rows``: random values, or both operands at their
    largest (or smallest) positive value; random signs."""
    for ops, fmt in ((a, ins.formats[0]), (b, ins.formats[1])):
        bits, _ = positive_patterns(fmt.name)
        pick = rng.integers(0, len(bits), len(rows))
        pick = np.full(len(rows), len(bits) - 1) if largest else np.zeros(len(rows), int) if smallest else pick
        sign = np.uint64(1) << np.uint64(fmt.storage_bits - 1)
        ops[rows, positions] = bits[pick] | np.where(rng.random(len(rows)) < 0.5, sign, np.uint64(0))


# --------------------------------------------------------------------------- each scale's value

_VALUE_BINS = ("smallest", "largest", "zero", "nan")


def _value_hits(which: str):
    def hits(batch: Batch) -> dict:
        if batch.scale_a is None:
            return {}
        fs = get_format(batch.instruction.scale_format)
        scales = to_float(fs, batch.scale_a if which == "a" else batch.scale_b)
        _, positive = positive_patterns(fs.name)
        live = _block_live(batch)
        return {"smallest": (live & (scales == positive[0])).any(1),
                "largest": (live & (scales == positive[-1])).any(1),
                "zero": (live & (scales == 0)).any(1),
                "nan": np.isnan(scales).any(1)}
    return hits


def _value_unreachable(ins) -> dict:
    if ins.scale_format is None:
        return dict.fromkeys(_VALUE_BINS, NO_SCALES)
    fs = get_format(ins.scale_format)
    ext = scale_extremes(fs.name)
    out = {}
    if ext["zero"] is None:
        out["zero"] = f"the scale format {fs.name} has no zero"
    if ext["nan"] is None:
        out["nan"] = f"the scale format {fs.name} has no NaN"
    return out


def _value_directed(which: str):
    def directed(ins, name: str, rng, n: int):
        if ins.scale_format is None:
            return None
        pattern = scale_extremes(get_format(ins.scale_format).name)[name]
        if pattern is None:
            return None
        a, b, c, sa, sb = base_operands(ins, rng, n)
        rows = np.arange(n)
        blk = rng.integers(0, sa.shape[1], n)
        (sa if which == "a" else sb)[rows, blk] = pattern
        _set_nonzero_product(ins, a, b, rows, blk * ins.block_size + rng.integers(0, ins.block_size, n), rng)
        return a, b, c, sa, sb
    return directed


def _value_point(which: str) -> CoverPoint:
    return CoverPoint(
        f"scale_{which}",
        (Bin("smallest", f"scale_{which} at its format's smallest positive value, on a block with a non-zero "
                         "product"),
         Bin("largest", f"scale_{which} at its format's largest finite value, on a block with a non-zero product"),
         Bin("zero", f"scale_{which} is zero, on a block with a non-zero product"),
         Bin("nan", f"scale_{which} is NaN")),
        _value_hits(which), _value_unreachable,
        f"scale_{which}'s value at its format's extremes", _value_directed(which))


# --------------------------------------------------------------------------- the two scales of a block together

_PAIRS = tuple((x, y) for x in ("smallest", "largest") for y in ("smallest", "largest"))


def _pair_hits(batch: Batch) -> dict:
    if batch.scale_a is None:
        return {}
    fs = get_format(batch.instruction.scale_format)
    _, positive = positive_patterns(fs.name)
    at = {"smallest": positive[0], "largest": positive[-1]}
    sa, sb = to_float(fs, batch.scale_a), to_float(fs, batch.scale_b)
    live = _block_live(batch)
    return {f"{x}*{y}": (live & (sa == at[x]) & (sb == at[y])).any(1) for x, y in _PAIRS}


def _pair_unreachable(ins) -> dict:
    return {} if ins.scale_format is not None else {f"{x}*{y}": NO_SCALES for x, y in _PAIRS}


def _pair_directed(ins, name: str, rng, n: int):
    if ins.scale_format is None:
        return None
    ext = scale_extremes(get_format(ins.scale_format).name)
    x, y = name.split("*")
    a, b, c, sa, sb = base_operands(ins, rng, n)
    rows = np.arange(n)
    blk = rng.integers(0, sa.shape[1], n)
    sa[rows, blk], sb[rows, blk] = ext[x], ext[y]
    _set_nonzero_product(ins, a, b, rows, blk * ins.block_size + rng.integers(0, ins.block_size, n), rng)
    return a, b, c, sa, sb


SCALE_PAIR = CoverPoint(
    "scale_pair",
    tuple(Bin(f"{x}*{y}", f"one block's scale_a at its {x} and scale_b at its {y} value (a non-zero product "
                          "in the block)") for x, y in _PAIRS),
    _pair_hits, _pair_unreachable, "the two scales of one block at their extremes together", _pair_directed)


# --------------------------------------------------------------------------- scaled terms out of the output's range

def _overflow_threshold(ins) -> float:
    fd = ins.formats[3]
    return float(np.ldexp(1.0, fd.emax + 1))


def _smallest_output(ins) -> float:
    fd = ins.formats[3]
    return float(np.ldexp(1.0, (fd.emin - fd.man_bits) if fd.subnormals else fd.emin))


def _term_hits(batch: Batch) -> dict:
    if batch.scale_a is None:
        return {}
    _, scaled, _ = scaled_terms(batch)
    mag = np.where(np.isfinite(scaled), np.abs(scaled), 0.0)
    ins = batch.instruction
    return {"overflow": (mag >= _overflow_threshold(ins)).any(1),
            "underflow": ((mag > 0) & (mag < _smallest_output(ins))).any(1)}


def _term_range(ins) -> tuple[float, float]:
    """The largest and the smallest non-zero magnitude a scaled term can take."""
    fa, fb = ins.formats[:2]
    _, va = positive_patterns(fa.name)
    _, vb = positive_patterns(fb.name)
    _, vs = positive_patterns(get_format(ins.scale_format).name)
    return group_size(ins) * va[-1] * vb[-1] * vs[-1] ** 2, va[0] * vb[0] * vs[0] ** 2


def _term_unreachable(ins) -> dict:
    if ins.scale_format is None:
        return {"overflow": NO_SCALES, "underflow": NO_SCALES}
    top, low = _term_range(ins)
    out = {}
    if top < _overflow_threshold(ins):
        out["overflow"] = (f"the largest scaled term ({top:g}) is below the output's overflow threshold "
                           f"{_overflow_threshold(ins):g}")
    if low >= _smallest_output(ins):
        out["underflow"] = (f"the smallest non-zero scaled term ({low:g}) is not below the output's smallest "
                            f"value {_smallest_output(ins):g}")
    return out


def _term_directed(ins, name: str, rng, n: int):
    """Both scales of a block at their largest with its products (the whole group) at their largest,
    of one sign; or both at their smallest with one smallest product alone in its group."""
    if ins.scale_format is None:
        return None
    ext = scale_extremes(get_format(ins.scale_format).name)
    g = group_size(ins)
    a, b, c, sa, sb = base_operands(ins, rng, n)
    rows = np.arange(n)
    blk = rng.integers(0, sa.shape[1], n)
    first = blk * ins.block_size + rng.integers(0, ins.block_size // g, n) * g      # a group's first product
    big = name == "overflow"
    sa[rows, blk] = sb[rows, blk] = ext["largest" if big else "smallest"]
    for j in range(g):
        if big or j == 0:
            _set_nonzero_product(ins, a, b, rows, first + j, rng, largest=big, smallest=not big)
        else:
            a[rows, first + j] = 0
    if big:                                   # one sign for the whole group: the sum is g times the largest
        sign = np.uint64(1) << np.uint64(ins.formats[0].storage_bits - 1)
        for j in range(g):
            a[rows, first + j] &= ~sign
            b[rows, first + j] &= ~(np.uint64(1) << np.uint64(ins.formats[1].storage_bits - 1))
    return a, b, c, sa, sb


SCALED_TERM = CoverPoint(
    "scaled_term",
    (Bin("overflow", "a finite scaled term (a product, or GDFS group sum, times its two scales) at or above "
                     "the output's overflow threshold"),
     Bin("underflow", "a non-zero scaled term below the output's smallest subnormal")),
    _term_hits, _term_unreachable, "the scale exponents pushing a scaled term out of the output's range",
    _term_directed)


SCALE_POINTS: tuple = (_value_point("a"), _value_point("b"), SCALE_PAIR, SCALED_TERM)
