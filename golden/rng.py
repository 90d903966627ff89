"""numpy's ``Generator`` draws on a PCG64 bit generator, reproduced in numba word for word.

The vector generators (:mod:`golden.vectors`) must give the same bits for the same seed forever
(campaign blocks are regenerated from ``(seed, block)``; recorded results and replays name vectors
by their number).  Their speed is bounded by how they consume the generator: numpy's calls draw
array by array, and a loop that draws one value per row in Python costs microseconds a value.  The
compiled generators (:mod:`golden.vector_kernels`) instead run numpy's own algorithms on the
generator's state here, in the order the numpy code draws, so they produce the very same values
and leave the generator in the very same state:

* PCG64 (``pcg_setseq_128_xsl_rr_64``): the 128-bit LCG step, then the XSL-RR output;
* ``next_uint32``: the low half of a word, the high half kept for the next call (``has_uint32``,
  ``uinteger`` in the state: a 32-bit draw after a 64-bit one takes the kept half);
* ``random()``: ``(word >> 11) * 2**-53``;
* ``integers(lo, hi)``: Lemire's bounded draw with rejection, on 32-bit draws when the range fits
  in 32 bits and on words otherwise (a range of one value draws nothing);
* ``choice(seq)``: ``integers(0, len(seq))``.

A state travels as an array of six uint64 (the LCG state and increment, high and low halves, and
the kept 32-bit half): :func:`load` reads a generator's, :func:`store` writes it back.  Inside a kernel
it is a tuple (:func:`unpack`, :func:`pack`), and every draw returns its value and the new tuple, so
the state stays in registers.  Any other bit generator is not loaded (None): the
caller falls back to numpy's own calls.  tests/golden/test_vector_streams.py pins the equivalence.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .nbcache import njit

_M64 = (1 << 64) - 1
_MULT = 0x2360ED051FC65DA44385DF649FCCF645          # PCG_DEFAULT_MULTIPLIER_128
MULT_HI, MULT_LO = np.uint64(_MULT >> 64), np.uint64(_MULT & _M64)
HOT = {"cache": True, "nogil": True, "inline": "always"}     # the per-draw helpers: inlined by numba
JIT = {"cache": True, "nogil": True}                          # the rest (inlining them only lengthens compiles)


@intrinsic
def mulhi(typingctx, a, b):
    """The high 64 bits of the 128-bit product of two uint64 (one instruction on x86-64 and arm64)."""
    def codegen(context, builder, sig, args):
        i128 = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        return builder.trunc(builder.lshr(p, ir.Constant(i128, 64)), ir.IntType(64))
    return types.uint64(types.uint64, types.uint64), codegen


def load(rng: np.random.Generator):
    """``rng``'s state as a uint64 array for the compiled draws, or None when it is not a PCG64 one."""
    bg = rng.bit_generator
    if type(bg) is not np.random.PCG64:
        return None
    s = bg.state
    st, inc = s["state"]["state"], s["state"]["inc"]
    return np.array([st >> 64, st & _M64, inc >> 64, inc & _M64, s["has_uint32"], s["uinteger"]], np.uint64)


def store(rng: np.random.Generator, st: np.ndarray) -> None:
    """Write a state array back into ``rng`` (after compiled draws from :func:`load`'s array)."""
    h, lo, ih, il, has, buf = (int(x) for x in st)
    rng.bit_generator.state = {"bit_generator": "PCG64", "state": {"state": (h << 64) | lo, "inc": (ih << 64) | il},
                               "has_uint32": has, "uinteger": buf}


@njit(**JIT)
def unpack(st):
    """A kernel's working state (a tuple, kept in registers) from a state array."""
    return st[0], st[1], st[2], st[3], st[4], st[5]


@njit(**JIT)
def pack(st, s) -> None:
    """Write a kernel's final state back into its state array."""
    for i in range(6):
        st[i] = s[i]


@njit(**HOT)
def next64(s):
    """The next 64-bit word (numpy's ``next_uint64``, and ``random_raw``): ``(word, state)``."""
    hi, lo, ih, il, has, buf = s
    nlo = lo * MULT_LO
    nhi = mulhi(lo, MULT_LO) + hi * MULT_LO + lo * MULT_HI
    slo = nlo + il
    shi = nhi + ih + np.uint64(slo < nlo)
    x = shi ^ slo
    rot = shi >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63))), (shi, slo, ih, il, has, buf)


@njit(**JIT)
def _mul128(ah, al, bh, bl):
    """``a * b`` modulo 2**128, as (high, low) halves."""
    return mulhi(al, bl) + ah * bl + al * bh, al * bl


@njit(**JIT)
def _add128(ah, al, bh, bl):
    lo = al + bl
    return ah + bh + np.uint64(lo < al), lo


@njit(**JIT)
def advance(s, k):
    """The state ``k`` words later (``k >= 0``), in O(log k) steps (PCG's ``pcg_advance_lcg_128``);
    the kept 32-bit half is left as it is, as word draws leave it."""
    hi, lo, ih, il, has, buf = s
    acc_h, acc_l, add_h, add_l = np.uint64(0), np.uint64(1), np.uint64(0), np.uint64(0)
    cur_h, cur_l, inc_h, inc_l = MULT_HI, MULT_LO, ih, il
    while k > 0:
        if k & 1:
            acc_h, acc_l = _mul128(acc_h, acc_l, cur_h, cur_l)
            add_h, add_l = _mul128(add_h, add_l, cur_h, cur_l)
            add_h, add_l = _add128(add_h, add_l, inc_h, inc_l)
        one_h, one_l = _add128(cur_h, cur_l, np.uint64(0), np.uint64(1))
        inc_h, inc_l = _mul128(one_h, one_l, inc_h, inc_l)
        cur_h, cur_l = _mul128(cur_h, cur_l, cur_h, cur_l)
        k >>= 1
    hi, lo = _mul128(acc_h, acc_l, hi, lo)
    hi, lo = _add128(hi, lo, add_h, add_l)
    return hi, lo, ih, il, has, buf


@njit(**HOT)
def next32(s):
    """numpy's ``next_uint32``: the kept high half of the last word split, else the low half of a new one."""
    if s[4]:
        return s[5], (s[0], s[1], s[2], s[3], np.uint64(0), s[5])     # numpy leaves the half in place
    w, s = next64(s)
    return w & np.uint64(0xFFFFFFFF), (s[0], s[1], s[2], s[3], np.uint64(1), w >> np.uint64(32))


@njit(**HOT)
def random(s):
    """``Generator.random()``: a float64 in [0, 1) from the top 53 bits of a word."""
    w, s = next64(s)
    # through int64: the 53-bit value converts exactly either way, and int64 in one instruction
    return np.float64(np.int64(w >> np.uint64(11))) * (1.0 / 9007199254740992.0), s


@njit(**HOT)
def _bounded32(s, rng):
    """Lemire's draw in ``0 .. rng`` (``rng < 2**32 - 1``) from 32-bit draws, as numpy's
    ``buffered_bounded_lemire_uint32``."""
    excl = rng + np.uint64(1)
    u, s = next32(s)
    m = u * excl
    left = m & np.uint64(0xFFFFFFFF)
    if left < excl:
        threshold = (np.uint64(0xFFFFFFFF) - rng) % excl
        while left < threshold:
            u, s = next32(s)
            m = u * excl
            left = m & np.uint64(0xFFFFFFFF)
    return m >> np.uint64(32), s


@njit(**JIT)
def _bounded64(s, rng):
    """Lemire's draw in ``0 .. rng`` (``2**32 - 1 < rng < 2**64 - 1``) from words (``bounded_lemire_uint64``)."""
    excl = rng + np.uint64(1)
    w, s = next64(s)
    left = w * excl
    if left < excl:
        threshold = (np.uint64(0xFFFFFFFFFFFFFFFF) - rng) % excl
        while left < threshold:
            w, s = next64(s)
            left = w * excl
    return mulhi(w, excl), s


@njit(**HOT)
def bounded(s, rng):
    """A draw in ``0 .. rng`` inclusive (uint64), as ``Generator.integers(0, rng + 1)`` draws it."""
    if rng == np.uint64(0):
        return np.uint64(0), s                   # one value: nothing drawn
    if rng < np.uint64(0xFFFFFFFF):
        return _bounded32(s, rng)
    if rng == np.uint64(0xFFFFFFFF):
        return next32(s)
    if rng == np.uint64(0xFFFFFFFFFFFFFFFF):
        return next64(s)
    return _bounded64(s, rng)


@njit(**HOT)
def integers(s, lo, hi):
    """``Generator.integers(lo, hi)`` for int64 bounds ``lo < hi``: ``(int64, state)``."""
    v, s = bounded(s, np.uint64(hi - 1 - lo))
    return lo + np.int64(v), s


@njit(**HOT)
def small_integers(s, lo, hi):
    """:func:`integers` for a range of fewer than ``2**32 - 1`` values (the generators' exponents,
    K and choices): numpy draws those with :func:`_bounded32` alone, so a call site inlines that
    path of :func:`bounded`, not all four (each call site's copies of :func:`next64` lengthened
    the generators' first compiles)."""
    rng = np.uint64(hi - 1 - lo)
    if rng == np.uint64(0):
        return lo, s                              # one value: nothing drawn
    v, s = _bounded32(s, rng)
    return lo + np.int64(v), s


@njit(**JIT)
def raw(st, n):
    """``n`` words (``bit_generator.random_raw(n)``): for the tests."""
    s = unpack(st)
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i], s = next64(s)
    pack(st, s)
    return out
