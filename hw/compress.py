"""Carry-save adder tree (3:2 compressors) and one carry-propagate adder (FDA step 4).

Latency ``1`` at level 0: the tree and the final adder are one register stage; the sum is
exact.  ``pipelining.compress`` puts a register after every that many 3:2 levels (while more
than two rows remain), ``pipelining.final_add`` one between the tree and the adder.
"""

from __future__ import annotations

import math

from amaranth import Module, Signal, signed
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from .pipeline import Stage
from .pipelining import as_pipelining

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
    pipelining : Pipelining, optional
        ``compress`` (3:2 levels per register, 0: none) and ``final_add``.

    Members
    -------
    terms : In(ArrayLayout(signed(term_bits), n))
    total : Out(signed(sum_width(term_bits, n)))
    """

    def __init__(self, term_bits: int, n: int, pipelining=None):
        self.term_bits, self.n = term_bits, n
        self.pipelining = as_pipelining(pipelining)
        self.width = sum_width(term_bits, n)
        super().__init__({"terms": In(data.ArrayLayout(signed(term_bits), n)),
                          "total": Out(signed(self.width))})

    def _registered_levels(self) -> list[bool]:
        """For each 3:2 level: whether a register follows it."""
        every, rows, out = self.pipelining.compress, self.n, []
        level = 0
        while rows > 2:
            rows = 2 * (rows // 3) + rows % 3
            level += 1
            out.append(bool(every) and level % every == 0 and rows > 2)
        return out

    @property
    def latency(self) -> int:
        return 1 + sum(self._registered_levels()) + self.pipelining.final_add

    @staticmethod
    def _sum(x, y, z):
        """A row of full adders' sum bits."""
        return x ^ y ^ z

    @staticmethod
    def _carry(x, y, z):
        """A row of full adders' carries, one place up."""
        return ((x & y) | (x & z) | (y & z)) << 1

    @staticmethod
    def _register(m, rows, name):
        regs = []
        for i, r in enumerate(rows):
            q = Signal.like(r, name=f"{name}_{i}")
            m.d.sync += q.eq(r)
            regs.append(q)
        return regs

    def elaborate(self, platform):
        m = Module()
        cuts = self._registered_levels()
        built = 1
        W = self.width
        rows = []
        for i in range(self.n):
            r = Signal(signed(W), name=f"t{i}")
            m.d.comb += r.eq(self.terms[i])        # sign-extend
            rows.append(r)
        level = 0
        self.level_rows = []            # (rows in, rows out) of each 3:2 level: what formal/ proves level by level
        # Two's complement modulo 2**W: the carry out of the top bit is dropped, the exact sum fits in W bits.
        while len(rows) > 2:
            nxt = []
            for i in range(0, len(rows) - 2, 3):
                x, y, z = rows[i:i + 3]
                s = Signal(signed(W), name=f"csa{level}_{i // 3}_s")
                c = Signal(signed(W), name=f"csa{level}_{i // 3}_c")
                m.d.comb += [s.eq(self._sum(x, y, z)), c.eq(self._carry(x, y, z))]
                nxt += [s, c]
            nxt += rows[len(rows) - len(rows) % 3:] if len(rows) % 3 else []
            self.level_rows.append((rows, nxt))
            rows = nxt
            if cuts[level]:
                rows, built = self._register(m, rows, f"csa{level}_r"), built + 1
            level += 1
        if self.pipelining.final_add:
            rows, built = self._register(m, rows, "final_r"), built + 1
        assert built == self.latency, "the tree's registers must match its declared latency"
        final = rows[0] + rows[1] if len(rows) == 2 else rows[0]
        self.final_rows = rows          # the carry-propagate adder's operands (formal/)
        m.d.sync += self.total.eq(final)
        return m
