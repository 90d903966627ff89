"""The carry-save tree (:class:`hw.compress.CompressorTree`), level by level, and its final adder.

A whole tree of 17 or 33 terms is beyond a bit-level solver in reasonable time (the issue's
filer: 16 operands of 32 bits, over 90 s), so the tree is proved in pieces that chain by hand:

- every 3:2 level (the rows its elaboration records in ``level_rows``): each output pair (s, c)
  is a row of full adders over the input triple it replaces, column by column (``x_i + y_i +
  z_i = s_i + 2 c_(i+1)``, ``c_0 = 0``), so ``s + c = x + y + z`` modulo ``2**W`` (the columns
  summed with their weights; stated as the sum of the rows directly, the same check took 82 s
  for the 33-term tree); the rows left over pass unchanged; so the level keeps the rows' sum
  modulo ``2**W``;
- the first level's rows are the terms sign-extended to ``W``;
- each level's rows are the previous level's outputs (directly, or one cycle later through the
  level's register);
- the carry-propagate adder: ``total`` is the sum of the last two rows modulo ``2**W``;
- ``W`` holds the exact sum: ``n * 2**(term_bits - 1) <= 2**(W - 1)`` (checked in Python);

together: ``total`` is the exact sum.  Trees of at most :data:`WHOLE_MAX` terms are also proved
end to end against ``sum(terms)`` in one piece.
"""

from __future__ import annotations

from hw.compress import CompressorTree

from .harness import Equivalence
from .property import Property

__all__ = ["compress_property", "WHOLE_MAX"]

WHOLE_MAX = 5                    # trees of at most this many terms: also one end-to-end proof

def _mod(v, W):
    return v[:W]

def compress_property(term_bits, n, pipelining=None, whole=False, units=(), dut_class=CompressorTree) -> Property:
    """Level by level (``whole`` False) or end to end (``whole``)."""
    def build():
        dut = dut_class(term_bits, n, pipelining)
        W = dut.width
        if n * 2 ** (term_bits - 1) > 2 ** (W - 1):
            raise AssertionError(f"{W} bits cannot hold the sum of {n} terms of {term_bits} bits")

        def expect(past):
            if whole:
                terms = past(dut.terms)
                exact = sum(terms[i].as_signed() for i in range(n))
                return [(dut.total, exact[:W].as_signed())]
            checks = []
            if dut.level_rows:
                first = dut.level_rows[0][0]
                checks += [(first[i], dut.terms[i].as_signed()) for i in range(n)]
            for rows_in, rows_out in dut.level_rows:
                groups = len(rows_in) // 3
                for g in range(groups):
                    x, y, z = rows_in[3 * g:3 * g + 3]
                    s, c = rows_out[2 * g], rows_out[2 * g + 1]
                    # column i: x_i + y_i + z_i = s_i + 2 c_(i+1), and c_0 = 0; summed with weights 2**i
                    # over the columns (the top carry dropped): s + c = x + y + z modulo 2**W
                    checks.append((c[0], 0))
                    for i in range(W):
                        carry_out = c[i + 1] if i + 1 < W else None
                        col = x[i] + y[i] + z[i]
                        checks.append((col[0], s[i]))
                        if carry_out is not None:
                            checks.append((col[1], carry_out))
                left = rows_in[3 * groups:]
                if len(rows_out) != 2 * groups + len(left):
                    raise AssertionError("a 3:2 level lost or made rows")
                checks += [(rows_out[2 * groups + i], row) for i, row in enumerate(left)]
            # each level's rows are the previous level's, directly or through a register
            outs = [rows_out for _, rows_out in dut.level_rows]
            ins = [rows_in for rows_in, _ in dut.level_rows[1:]] + [dut.final_rows]
            for rows_out, rows_in in zip(outs, ins):
                checks += [(new, old if new is old else h.prev(old)) for new, old in zip(rows_in, rows_out)]
            final = dut.final_rows
            final_sum = _mod(final[0] + final[1], W) if len(final) == 2 else final[0]
            # total is the registered sum of the last rows: their value one cycle ago
            checks.append((dut.total, h.prev(final_sum.as_signed())))
            return checks

        h = Equivalence(dut, dut.latency, [dut.terms], expect)
        return h, h.depth
    what = "whole" if whole else "levels"
    name = f"compress/{what}.n{n}.T{term_bits}" + (f".pl={pipelining}" if pipelining is not None else "")
    return Property(name, "compress", build, engine="yices" if whole else "boolector", units=tuple(units))
