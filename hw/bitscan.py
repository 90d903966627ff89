"""Bit scans shared by every normaliser: the leading-one detector and the trailing-zero count.

Both are combinational (latency 0), ``log2(width)`` levels of muxes.  The leading-one detector
comes in two tree shapes that compute the same index; ABC maps each better in different places,
so each caller names the one that keeps its cell count (measured with ``python -m hw report``:
the other shape costs about 1% on the FDA units and 2% on the f32 SFMA unit):

``"halves"``
    A mux per node between the indices of its two halves, chosen by "the upper half has a set
    bit" (absolute indices as constants): the wide two's complement sums of the fused
    normalisers (FDA, GDFS, FDRDA).
``"flags"``
    The width padded to a power of two; each node passes up "any bit set" and the position in
    its half, adding one index bit per level: the significands of the fma and GPS units.
"""

from __future__ import annotations

from amaranth import Cat, Const, Mux

__all__ = ["leading_one", "trailing_zeros", "LOD_TREES"]

LOD_TREES = ("halves", "flags")


def _by_halves(v, lo: int, hi: int):
    """Index of the highest set bit of ``v[lo:hi]`` (``lo`` if none)."""
    if hi - lo == 1:
        return Const(lo, range(lo + 1))
    mid = (lo + hi) // 2
    return Mux(v[mid:hi].any(), _by_halves(v, mid, hi), _by_halves(v, lo, mid))


def _by_flags(bits):
    """Index of the highest set bit of a list of 1-bit values (0 when none)."""
    n = 1
    while n < len(bits):
        n *= 2
    nodes = [(bits[i] if i < len(bits) else Const(0, 1), None) for i in range(n)]
    while len(nodes) > 1:
        nxt = []
        for (v_lo, p_lo), (v_hi, p_hi) in zip(nodes[0::2], nodes[1::2]):
            pos = v_hi if p_lo is None else Cat(Mux(v_hi, p_hi, p_lo), v_hi)
            nxt.append((v_hi | v_lo, pos))
        nodes = nxt
    return nodes[0][1] if nodes[0][1] is not None else Const(0, 1)


def leading_one(value, tree: str = "flags"):
    """Index of the highest set bit of ``value`` (0 when it is 0); ``tree``: one of :data:`LOD_TREES`."""
    if tree == "halves":
        return _by_halves(value, 0, len(value))
    if tree == "flags":
        return _by_flags([value[i] for i in range(len(value))])
    raise ValueError(f"unknown leading-one tree {tree!r}; valid: {', '.join(LOD_TREES)}")


def trailing_zeros(value):
    """Number of zero bits below the lowest set bit of ``value`` (meaningless when it is 0)."""
    width = len(value)
    return (width - 1) - _by_flags([value[i] for i in reversed(range(width))])
