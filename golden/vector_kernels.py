"""The vector generators' draws, compiled: the same values as :mod:`golden.vectors`' numpy calls.

Each kernel takes a state array from :func:`golden.rng.load`, draws in exactly the order the numpy
code it replaces draws (array by array, or row by row where the numpy code loops over rows), and
leaves the final state in the array for :func:`golden.rng.store`.  Formats travel as plain integers,
so one compiled signature serves every format and the code is cached on disk once.
"""

from __future__ import annotations

import numpy as np

from . import rng as R
from .nbcache import njit

JIT = {"cache": True, "nogil": True}


@njit(**JIT)
def fill_bounded(st, out, rng):
    """``out[:] = Generator.integers(0, rng + 1, out.shape, dtype=np.uint64)`` (``out`` flat)."""
    s = R.unpack(st)
    for i in range(out.size):
        out[i], s = R.bounded(s, rng)
    R.pack(st, s)


@njit(**JIT)
def fill_bits64(st, out):
    """``integers(0, 2**63, shape, uint64) * 2 + integers(0, 2, shape, uint64)``: 64-bit random patterns."""
    s = R.unpack(st)
    for i in range(out.size):
        out[i], s = R.bounded(s, np.uint64((1 << 63) - 1))
    for i in range(out.size):
        v, s = R.bounded(s, np.uint64(1))
        out[i] = out[i] * np.uint64(2) + v
    R.pack(st, s)


@njit(**JIT)
def fill_values(st, out, lo, hi, signed, zeros, man_bits, emax, max_mantissa, bias, sign_shift, low_bits):
    """:func:`golden.vectors.random_values` for exponents ``lo .. hi`` (within float64's normal range).

    It draws four arrays in turn: exponents (32-bit draws), ``1 + random()``, signs and zeros (a word
    an element each).  After the exponents the other three are words at known places in the stream,
    so three generators advanced to those places (:func:`golden.rng.advance`) draw them in one pass;
    the last one ends where numpy's last draw ended, and word draws leave the kept 32-bit half alone.
    The value is ``_truncate_normal``'s RZ truncation from the bits of ``ldexp(m, e)``, which are
    ``m``'s with ``e`` added to the exponent field since ``1 <= m <= 2``, and ``m``'s bits come
    from the word with integer arithmetic (the float64 addition's rounding, spelled out)."""
    s = R.unpack(st)
    n = out.size
    e = np.empty(n, np.int64)
    for i in range(n):
        e[i], s = R.small_integers(s, lo, hi + 1)
    sm = s
    sg = R.advance(s, n)
    sz = R.advance(s, 2 * n if signed else n)
    top = np.uint64(((emax + bias) << man_bits) | max_mantissa)
    sign_bit = np.uint64(1) << np.uint64(sign_shift)
    for i in range(n):
        # 1 + random() in float64 is 1 + k / 2**53 (k the word's top 53 bits) rounded to 52 fraction
        # bits, a tie whenever k is odd: to even; a carry out of the fraction is the exponent's
        w, sm = R.next64(sm)
        k = np.int64(w >> np.uint64(11))
        frac = k >> 1
        vb = ((1023 + e[i]) << 52) + frac + (k & frac & 1)
        ev = ((vb >> 52) & 0x7FF) - 1023
        man = np.uint64(vb & ((1 << 52) - 1)) >> np.uint64(52 - man_bits)
        over = (ev > emax) | ((ev == emax) & (man > np.uint64(max_mantissa)))
        word = top if over else (np.uint64(max(ev + bias, 0)) << np.uint64(man_bits)) | man
        if signed:                       # branch-free: a random sign is a branch mispredicted half the time
            u, sg = R.random(sg)
            word |= sign_bit * np.uint64(u < 0.5)
        u, sz = R.random(sz)
        out[i] = (word << np.uint64(low_bits)) * np.uint64(u >= zeros)
    R.pack(st, sz)


@njit(**JIT)
def draw_tiny_rows(st, m, K):
    """Structured case 4's row loop: per row ``random() < 0.5``, then (if so) ``integers(K)``, then
    ``choice`` of three: ``(half, position, pick)``."""
    s = R.unpack(st)
    half = np.zeros(m, np.bool_)
    pos = np.zeros(m, np.int64)
    pick = np.empty(m, np.int64)
    for r in range(m):
        u, s = R.random(s)
        if u < 0.5:
            half[r] = True
            pos[r], s = R.small_integers(s, 0, K)
        pick[r], s = R.small_integers(s, 0, 3)
    R.pack(st, s)
    return half, pos, pick


@njit(**JIT)
def draw_e_zero_rows(st, m, K):
    """Structured case 4b's row loop: per row ``random(K)``, ``integers(-3, 12, K)``, ``choice([-1, 1], K)``
    and ``random(K)``, each a row of the four results."""
    s = R.unpack(st)
    u1 = np.empty((m, K))
    e = np.empty((m, K), np.int64)
    sign = np.empty((m, K), np.int64)
    u2 = np.empty((m, K))
    for r in range(m):
        for k in range(K):
            u1[r, k], s = R.random(s)
        for k in range(K):
            e[r, k], s = R.small_integers(s, -3, 12)
        for k in range(K):
            sign[r, k], s = R.small_integers(s, 0, 2)
        for k in range(K):
            u2[r, k], s = R.random(s)
    R.pack(st, s)
    return u1, e, sign, u2


@njit(**JIT)
def draw_chain_rows(st, m):
    """Structured case 5's row loop: per row a ``choice`` of three, then ``integers(5, 20)``."""
    s = R.unpack(st)
    pick = np.empty(m, np.int64)
    shift = np.empty(m, np.int64)
    for r in range(m):
        pick[r], s = R.small_integers(s, 0, 3)
        shift[r], s = R.small_integers(s, 5, 20)
    R.pack(st, s)
    return pick, shift
