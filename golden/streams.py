"""Vector streams: pluggable, reproducible streams of dot-add operands, for every checker.

The arithmetic inputs of co-simulation, campaigns, the board and the tools (which all import them
from here, so that regenerating a campaign block needs nothing above golden).

A generator is any callable ``gen(ins, n, rng) -> (a [n, K], b [n, K], c [n],
scale_a, scale_b)`` of bit patterns (``scale_*`` None when unscaled), as
:func:`golden.vectors.random_operands` is.  :func:`resolve` accepts

* a registered name (:func:`register`): ``bits``, ``normal`` and ``mixed``
  (the default: half uniform random bits, half normal values), and every other
  kind that ``golden.vectors.random_operands`` knows;
* ``"module:function"``, imported;
* the callable itself.

:class:`VectorStream` cuts a generator's output into batches of any size and
keeps vector ``v`` equal for a given seed whatever the batch sizes, lanes or
stalls: it draws fixed blocks of :data:`BLOCK` vectors from
``numpy.random.default_rng([seed, block])``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable

import numpy as np

from . import vectors as gv
from .api import as_bits, own_width_bits

BLOCK = 8192
_REGISTRY: dict[str, Callable] = {}


def register(name: str, fn: Callable) -> None:
    """Make ``fn`` available as ``VECTORS=name`` / ``--vectors name``."""
    _REGISTRY[name] = fn


def names() -> list[str]:
    return sorted(set(_REGISTRY) | set(gv.VECTOR_KINDS))


def resolve(spec) -> Callable:
    """A generator callable from a name, ``module:function`` or a callable (see the module docstring)."""
    if callable(spec):
        return spec
    if spec is None:
        spec = "mixed"
    if spec in _REGISTRY:
        return _REGISTRY[spec]
    if spec in gv.VECTOR_KINDS:
        return functools.partial(gv.random_operands, kind=spec)
    if ":" in spec:
        mod, _, attr = spec.partition(":")
        try:
            fn = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"vector generator {spec!r}: {e}") from None
        if not callable(fn):
            raise ValueError(f"vector generator {spec!r} is not callable")
        return fn
    raise ValueError(f"unknown vector generator {spec!r}; valid: {', '.join(names())} or module:function")


def check_generator(ins, spec, seed: int = 1) -> None:
    """Draw the first block of ``spec`` for ``ins`` (a ValueError naming the generator if it returns
    something unusable): a run checks its generator before it builds anything."""
    gen = resolve(spec)                        # an unknown name: resolve's own message
    try:
        VectorStream(ins, gen, seed).take(1)
    except (ValueError, TypeError) as e:
        name = spec if isinstance(spec, str) else getattr(spec, "__name__", repr(spec))
        raise ValueError(f"--vectors {name} for {ins.arch} {ins.name}: {e}") from None


class VectorStream:
    """Operands of vectors ``0, 1, 2, ...`` of one instruction, taken in batches: uint64, or with
    ``narrow`` each operand in its format's own width (:func:`golden.vectors.operand_dtype`; the same
    values, for golden; keep uint64 for code that shifts or packs the words)."""

    def __init__(self, ins, generator=None, seed: int = 1, start_block: int = 0, narrow: bool = False):
        self.ins = ins
        self.gen = resolve(generator)
        self.narrow = bool(narrow)            # operands in their formats' own width (golden.vectors.operand_dtype)
        self.seed = int(seed)
        self._block = int(start_block)        # the stream starts at vector start_block * BLOCK
        self._buf = None          # list of arrays (a, b, c, sa, sb) not yet taken
        self.taken = 0

    def _next_block(self, out=None):
        """The next generator block; drawn straight into ``out`` (row ranges of the result) when given."""
        rng = np.random.default_rng([self.seed, self._block])
        self._block += 1
        if out is not None:
            self.gen(self.ins, BLOCK, rng, out=out)
            return _check(self.ins, out, BLOCK, self.narrow)
        ops = self.gen(self.ins, BLOCK, rng, narrow=True) if self.narrow and self._fills() else \
            self.gen(self.ins, BLOCK, rng)
        return _check(self.ins, ops, BLOCK, self.narrow)

    def _fills(self) -> bool:
        """Whether the generator is golden's, which draws into given arrays (one copy fewer a block)."""
        return self.gen is gv.random_operands or (isinstance(self.gen, functools.partial)
                                                  and self.gen.func is gv.random_operands)

    def take(self, n: int):
        """The next ``n`` vectors: ``(a, b, c, scale_a, scale_b)``."""
        if not self._fills():
            return self._take_parts(n)
        out, have = gv.empty_operands(self.ins, n, self.narrow), 0
        while have < n:
            if self._buf is None and n - have >= BLOCK:      # a whole block: drawn in place
                self._next_block(tuple(None if x is None else x[have:have + BLOCK] for x in out))
                have += BLOCK
                continue
            k = self._take_buffered(n - have, have, out)
            have += k
        self.taken += n
        return out

    def _take_buffered(self, want: int, at: int, out) -> int:
        """Copy up to ``want`` buffered vectors (drawing a block when none are) into ``out`` at row ``at``."""
        if self._buf is None:
            self._buf = self._next_block()
        size = self._buf[2].shape[0]
        k = min(want, size)
        for x, y in zip(out, self._buf):
            if x is not None:
                x[at:at + k] = y[:k]
        self._buf = tuple(None if x is None else x[k:] for x in self._buf) if k < size else None
        return k

    def _take_parts(self, n: int):
        """:meth:`take` for any generator: blocks cut and joined."""
        parts, have = [], 0
        while have < n:
            if self._buf is None:
                self._buf = self._next_block()
            size = self._buf[2].shape[0]
            k = min(n - have, size)
            parts.append(tuple(None if x is None else x[:k] for x in self._buf))
            rest = tuple(None if x is None else x[k:] for x in self._buf)
            self._buf = rest if k < size else None
            have += k
        self.taken += n
        return _concat(parts)


class ArrayStream:
    """A fixed set of vectors (a replay) served like a :class:`VectorStream`; padded by repeating."""

    def __init__(self, ins, a, b, c, scale_a=None, scale_b=None):
        self.ins = ins
        self.ops = _check(ins, (a, b, c, scale_a, scale_b), None)
        self.n = self.ops[2].shape[0]
        self.taken = 0

    def take(self, n: int):
        idx = np.arange(self.taken, self.taken + n) % max(self.n, 1)
        self.taken += n
        return tuple(None if x is None else x[idx] for x in self.ops)


def _check(ins, ops, n, narrow: bool = False):
    if not isinstance(ops, tuple) or len(ops) != 5:
        raise TypeError("a vector generator returns (a, b, c, scale_a, scale_b)")
    # bit patterns, or floats each exactly representable, as golden.dot_add takes them
    # (never a cast: 1.5 would become the bit pattern 1)
    fa, fb, fc, _ = ins.formats
    fs = ins.scale_format
    names = ("a", "b", "c", "scale_a", "scale_b")
    read = own_width_bits if narrow else as_bits      # narrow: each in its format's own width, else uint64
    try:
        a, b, c, sa, sb = (None if x is None else
                           (read(fmt, x, name) if fmt is not None else
                            np.asarray(x))
                           for x, fmt, name in zip(ops, (fa, fb, fc, fs, fs), names))
    except TypeError as e:
        raise ValueError(str(e)) from None
    if not ins.scale_format and (sa is not None or sb is not None):
        raise ValueError(f"{ins.name} takes no block scales: the generator must return None for scale_a and scale_b")
    rows = c.shape[0] if n is None else n
    if a.shape != (rows, ins.k) or b.shape != (rows, ins.k) or c.shape != (rows,):
        raise ValueError(f"generator returned a {a.shape}, b {b.shape}, c {c.shape}; expected "
                         f"({rows}, {ins.k}), ({rows}, {ins.k}), ({rows},)")
    if ins.scale_format and (sa is None or sb is None):
        raise ValueError(f"{ins.name} is block-scaled: the generator must return scale_a and scale_b")
    return a, b, c, sa, sb


def _concat(parts):
    if len(parts) == 1:
        return parts[0]
    return tuple(None if parts[0][i] is None else np.concatenate([p[i] for p in parts]) for i in range(5))


class TileStream:
    """Whole tiles of a tile device: ``(A [n, M, k], B [n, k, N], C [n, M, N], scale_A, scale_B)`` for
    ``n`` transactions, drawn from a dot-add generator so that the generator's crafted dot-adds land whole
    in the tile: k-slice ``s`` of A's row ``i`` and B's column ``i`` (and, for slice 0, ``C[i, i]``) are
    one generated dot-add, the other elements of C come from generated rows of their own.  Reproducible
    for a seed whatever the batch sizes, as :class:`VectorStream` is."""

    def __init__(self, ins, m: int, n: int, k: int, generator=None, seed: int = 1):
        from .tile import slices
        self.ins, self.m, self.n, self.k = ins, m, n, k
        self.S = slices(ins, k)
        self.R = max(m, n)
        self.rows_each = self.S * self.R + m * n          # generator rows per transaction
        self.rows = VectorStream(ins, generator, seed)
        self.taken = 0

    def take(self, count: int):
        m, n, S, R, K = self.m, self.n, self.S, self.R, self.ins.k
        a, b, c, sa, sb = self.rows.take(count * self.rows_each)
        per = lambda x: None if x is None else x.reshape(count, self.rows_each, *x.shape[1:])   # noqa: E731
        a, b, c, sa, sb = per(a), per(b), per(c), per(sa), per(sb)
        split = S * R
        A = a[:, :split].reshape(count, S, R, K)[:, :, :m].transpose(0, 2, 1, 3).reshape(count, m, S * K)
        B = b[:, :split].reshape(count, S, R, K)[:, :, :n].transpose(0, 1, 3, 2).reshape(count, S * K, n)
        C = c[:, split:].reshape(count, m, n).copy()
        d = min(m, n)
        C[:, np.arange(d), np.arange(d)] = c[:, :d]         # slice 0's generated c on the diagonal
        SA = SB = None
        if sa is not None:
            nb = sa.shape[-1]
            SA = sa[:, :split].reshape(count, S, R, nb)[:, :, :m].transpose(0, 2, 1, 3).reshape(count, m, S * nb)
            SB = sb[:, :split].reshape(count, S, R, nb)[:, :, :n].transpose(0, 1, 3, 2).reshape(count, S * nb, n)
        self.taken += count
        return A, B, C, SA, SB


class TileArrayStream(ArrayStream):
    """A fixed set of tiles (a replay) served like a :class:`TileStream`; padded by repeating."""

    def __init__(self, ins, A, B, C, scale_A=None, scale_B=None):
        self.ins = ins
        self.ops = tuple(None if x is None else np.asarray(x, np.uint64) for x in (A, B, C, scale_A, scale_B))
        self.n = self.ops[2].shape[0]
        self.taken = 0
