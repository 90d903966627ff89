"""The bit scans (:mod:`hw.bitscan`): the leading-one detector (both tree shapes) and the
trailing-zero count against plain scans, at every width a rounder of the catalog uses."""

from __future__ import annotations

from amaranth import Const, Elaboratable, Module, Mux, Signal

from hw.bitscan import leading_one, trailing_zeros

from .harness import Equivalence
from .property import Property

__all__ = ["ScanUnderTest", "bitscan_property", "highest"]


class ScanUnderTest(Elaboratable):
    """``out = scan(v)`` for a ``width``-bit ``v``: a function of :mod:`hw.bitscan` as a component."""

    def __init__(self, width: int, scan):
        self.v, self.scan = Signal(width), scan
        self.out = Signal(range(max(width, 2)))

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.out.eq(self.scan(self.v))
        return m


CHUNK = 64     # bits per plain scan: one Mux per bit nests too deep for Amaranth past ~480 bits


def highest(v):
    """Index of the highest set bit of ``v`` (0 for 0): a plain scan from the bottom (the last set bit
    wins) over chunks of :data:`CHUNK` bits, then over the chunks (the exact windows reach 525 bits)."""
    top = Const(0, range(max(len(v), 2)))
    for lo in range(0, len(v), CHUNK):
        chunk = v[lo:lo + CHUNK]
        inner = Const(0, range(max(len(v), 2)))
        for i in range(len(chunk)):
            inner = Mux(chunk[i], lo + i, inner)
        top = Mux(chunk.any(), inner, top)
    return top


def _lowest(v):
    low = Const(0, range(max(len(v), 2)))
    for i in reversed(range(len(v))):       # the last set bit from the top wins
        low = Mux(v[i], i, low)
    return low


def bitscan_property(width: int, kind: str, units=(), scan=None) -> Property:
    """``kind``: ``lod.halves``, ``lod.flags`` (0 for 0) or ``tz`` (assumes a set bit).  ``scan``
    replaces the function under test (the tests' planted bugs)."""
    if kind.startswith("lod."):
        tree = kind.split(".", 1)[1]
        scan = scan or (lambda v: leading_one(v, tree))
        reference, nonzero = highest, False
    elif kind == "tz":
        scan, reference, nonzero = scan or trailing_zeros, _lowest, True
    else:
        raise ValueError(f"unknown bit scan {kind!r}; valid: lod.halves, lod.flags, tz")

    def build():
        dut = ScanUnderTest(width, scan)
        h = Equivalence(dut, 0, [dut.v], lambda past: [(dut.out, reference(past(dut.v)))],
                        (lambda now: [now(dut.v) != 0]) if nonzero else None)
        return h, h.depth
    return Property(f"bitscan/{kind}.W{width}", "bitscan", build, units=tuple(units))
