"""Carry-save adder tree (3:2 compressors) and one carry-propagate adder (FDA step 4).

Latency 1: the tree and the final adder are one register stage; the sum is exact.
"""

from __future__ import annotations

import math

from amaranth import Module, Signal, signed
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from .pipeline import Stage

__all__ = ["CompressorTree", "sum_width"]


def sum_width(term_bits: int, n: int) -> int:
    """Signed width that holds the exact sum of ``n`` terms of ``term_bits`` bits."""
    return term_bits + max(math.ceil(math.log2(n)), 0)


class CompressorTree(Stage):
    """Exact sum of ``n`` signed terms.

    Parameters
    ----------
    term_bits : int
        Signed width of each term.
    n : int
        Number of terms.

    Members
    -------
    terms : In(ArrayLayout(signed(term_bits), n))
    total : Out(signed(sum_width(term_bits, n)))
    """

    LATENCY = 1

    def __init__(self, term_bits: int, n: int):
        self.term_bits, self.n = term_bits, n
        self.width = sum_width(term_bits, n)
        super().__init__({"terms": In(data.ArrayLayout(signed(term_bits), n)),
                          "total": Out(signed(self.width))})

    def elaborate(self, platform):
        m = Module()
        W = self.width
        rows = []
        for i in range(self.n):
            r = Signal(signed(W), name=f"t{i}")
            m.d.comb += r.eq(self.terms[i])        # sign-extend
            rows.append(r)
        level = 0
        # Two's complement modulo 2**W: the carry out of the top bit is dropped, the exact sum fits in W bits.
        while len(rows) > 2:
            nxt = []
            for i in range(0, len(rows) - 2, 3):
                x, y, z = rows[i:i + 3]
                s = Signal(signed(W), name=f"csa{level}_{i // 3}_s")
                c = Signal(signed(W), name=f"csa{level}_{i // 3}_c")
                m.d.comb += [s.eq(x ^ y ^ z), c.eq(((x & y) | (x & z) | (y & z)) << 1)]
                nxt += [s, c]
            nxt += rows[len(rows) - len(rows) % 3:] if len(rows) % 3 else []
            rows = nxt
            level += 1
        final = rows[0] + rows[1] if len(rows) == 2 else rows[0]
        m.d.sync += self.total.eq(final)
        return m
