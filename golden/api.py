"""The public entry points: dot_add, mma and trace over catalog instructions."""

from __future__ import annotations

import functools
import math
import os
import warnings
from dataclasses import dataclass

import numpy as np

from . import algorithms
from .catalog import Instruction, lookup
from .formats import Format, check_bits, from_float, get_format, to_float
from .options import is_whole
from .rules import Rounding

CHUNK_ROWS = 8192         # rows per vectorised batch: keeps the working set in cache (docs/verification.md: sweep)
BACKENDS = ("numpy", "numba")
BACKEND_ENV = "GOLDEN_BACKEND"
_warned_no_numba: list = []


def check_numba_environment() -> None:
    """numba's own environment settings, checked before numba starts: ``NUMBA_NUM_THREADS`` must be a
    whole number of threads, 1 or more (numba would stop at the first parallel launch, or warn and
    ignore it).  One ValueError naming the variable and what is valid."""
    text = os.environ.get("NUMBA_NUM_THREADS")
    if text is None or not text.strip():
        return
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"NUMBA_NUM_THREADS={text!r}: valid: a whole number of threads, 1 or more "
                         "(or unset: one per core)")


def jit_disabled() -> bool:
    """Whether ``NUMBA_DISABLE_JIT`` turns numba's compiler off (numba's reading: a non-zero integer).
    Then golden runs its numpy path, which computes the same bits (the kernels would run as plain
    Python, thousands of times slower)."""
    try:
        return int(os.environ.get("NUMBA_DISABLE_JIT", "0").strip() or 0) != 0
    except ValueError:
        return False


_RESOLVED: dict = {}             # (backend, the environment it reads) -> the backend a call runs on

# os.environ's own store where it is a dict of bytes (POSIX: what os.environ reads and writes through):
# a read of an unset variable through os.environ.get raises and catches a KeyError, a microsecond,
# which three reads a call made a third of a small call's cost
_ENVIRON_DATA = getattr(os.environ, "_data", None)
_RAW_ENV = os.name == "posix" and isinstance(_ENVIRON_DATA, dict)
_ENV_BACKEND, _ENV_NO_JIT, _ENV_THREADS = ((os.fsencode(n) if _RAW_ENV else n)
                                           for n in (BACKEND_ENV, "NUMBA_DISABLE_JIT", "NUMBA_NUM_THREADS"))


def _getenv(key):
    """The environment's value of ``key`` (one of the names above, as its store keys it), or None."""
    return _ENVIRON_DATA.get(key) if _RAW_ENV else os.environ.get(key)


def resolve_backend(backend: str | None = None) -> str:
    """The backend a call runs on: the argument, else ``$GOLDEN_BACKEND``, else ``numba`` when it
    imports.  ``numba`` without numba installed, or with ``NUMBA_DISABLE_JIT`` set, runs numpy (the
    same bits), with one warning per process where numba is missing.  Read at every call (the
    environment may change), each reading of it worked out once."""
    key = (backend, _getenv(_ENV_BACKEND) if backend is None else None, _getenv(_ENV_NO_JIT),
           _getenv(_ENV_THREADS))
    hit = _RESOLVED.get(key)
    if hit is None:
        hit = _resolve_backend(backend)
        if len(_RESOLVED) >= 64:
            _RESOLVED.clear()
        _RESOLVED[key] = hit
    return hit


def _resolve_backend(backend: str | None) -> str:
    from . import kernels
    name = backend if backend is not None else os.environ.get(BACKEND_ENV) or None
    if name is not None and name not in BACKENDS:
        where = "backend" if backend is not None else BACKEND_ENV
        raise ValueError(f"{where}={name!r} is not a golden backend; valid: {', '.join(BACKENDS)}")
    if name == "numpy" or jit_disabled():
        return "numpy"
    check_numba_environment()
    if kernels.available():
        return "numba"
    if not _warned_no_numba:
        _warned_no_numba.append(True)
        warnings.warn("numba is not installed: golden runs its numpy path (pip install numba for the "
                      "compiled kernels)", RuntimeWarning, stacklevel=3)
    return "numpy"


def _instruction(instr, arch=None) -> Instruction:
    if isinstance(instr, Instruction):
        return instr
    if arch is None and isinstance(instr, tuple) and len(instr) == 2:
        arch, instr = instr
    if arch is None:
        raise TypeError("pass an Instruction (golden.lookup(arch, name)) or an (arch, name) pair")
    return lookup(arch, instr)


def as_bits(fmt: Format | str, x, what: str) -> np.ndarray:
    """Bit patterns of ``x`` in ``fmt`` as uint64.

    Unsigned integers are taken as bit patterns (and checked for width).
    An ml_dtypes array of exactly this format is reinterpreted.  Float arrays
    are converted when every value is exactly representable (TF32 takes the
    f32 word as the hardware does); anything else is ambiguous and rejected.
    """
    fmt = get_format(fmt)
    arr = np.asarray(x)
    if arr.dtype.kind in "ui":
        return check_bits(fmt, arr, what)
    if fmt.numpy_dtype and arr.dtype == np.dtype(_np_dtype(fmt)):
        return arr.view(fmt.dtype).astype(np.uint64)
    if arr.dtype.kind in "fV":
        if fmt.name == "tf32" and arr.dtype == np.float32:
            return arr.view(np.uint32).astype(np.uint64)
        try:
            vals = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{what}: cannot read dtype {arr.dtype} as {fmt.name}") from None
        bits = from_float(fmt, vals, Rounding.RNE)
        back = to_float(fmt, bits)
        bad = ~((back == vals) | (np.isnan(back) & np.isnan(vals)))
        if bad.any():
            v = float(vals[bad].ravel()[0])
            raise ValueError(f"{what}: value {v!r} is not exactly representable in {fmt.name}; "
                             "round it first (golden.formats.from_float) or pass bit patterns")
        return bits.astype(np.uint64)
    raise TypeError(f"{what}: expected bit patterns (unsigned integers), floats or an ml_dtypes array, "
                    f"got dtype {arr.dtype}")


def _np_dtype(fmt):
    import ml_dtypes
    return getattr(ml_dtypes, fmt.numpy_dtype, None) or fmt.numpy_dtype


def _uint_dtype(bits: int):
    """The narrowest unsigned dtype that holds ``bits``-bit patterns."""
    return next(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64) if np.dtype(t).itemsize * 8 >= bits)


FLOAT_CHUNK = 1 << 20          # float operands are read (and checked) this many elements at a time


def _narrow_bits(fmt: Format | str, x, what: str) -> np.ndarray:
    """``x`` checked as :func:`as_bits` checks it, as unsigned bit patterns in x's own shape, in the
    narrowest dtype that holds them or x itself: never widened to uint64 as a whole (rows are
    widened a chunk at a time)."""
    fmt = get_format(fmt)
    arr = np.asarray(x)
    if arr.dtype.kind in "ui":
        # scan only what the dtype leaves open: the sign of signed dtypes, the width of wider ones
        # (a uint16 f16 operand is valid as it is; the scans cost as much as a compiled SFMA)
        if arr.size and not _unscanned(fmt, arr.dtype):
            if arr.dtype.kind == "i":
                lo = int(arr.min())
                if lo < 0:
                    raise ValueError(f"{what}: negative value {lo} is not a bit pattern of {fmt.name}")
            if fmt.storage_bits < 8 * arr.dtype.itemsize:
                hi = int(arr.max())
                if hi >> fmt.storage_bits:
                    raise ValueError(f"{what}: bit pattern {hi:#x} is wider than format {fmt.name} "
                                     f"({fmt.storage_bits} bits)")
        return arr
    if fmt.numpy_dtype and arr.dtype == np.dtype(_np_dtype(fmt)):
        return arr.view(_uint_dtype(arr.dtype.itemsize * 8))
    if fmt.name == "tf32" and arr.dtype == np.float32:
        return arr.view(np.uint32)
    if arr.dtype.kind not in "fV" or arr.size <= FLOAT_CHUNK:
        return as_bits(fmt, arr, what).astype(_uint_dtype(fmt.storage_bits))
    flat = arr.reshape(-1)
    out = np.empty(flat.shape, _uint_dtype(fmt.storage_bits))
    for lo in range(0, flat.size, FLOAT_CHUNK):
        out[lo:lo + FLOAT_CHUNK] = as_bits(fmt, flat[lo:lo + FLOAT_CHUNK], what)
    return out.reshape(arr.shape)


def own_width_bits(fmt: Format | str, x, what: str) -> np.ndarray:
    """``x`` checked as :func:`as_bits` checks it, as bit patterns in the format's own width
    (``Format.dtype``: uint8 for fp8/fp6/fp4, uint16 f16/bf16, uint32 f32/tf32, uint64 f64).  An
    unsigned array of that width or narrower is not scanned: it cannot hold a wider pattern."""
    return _narrow_bits(fmt, x, what).astype(get_format(fmt).dtype, copy=False)


@functools.cache
def _memory_bytes() -> int:
    """This machine's physical memory in bytes (read once: a sysconf call a dot_add is microseconds)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):          # no sysconf: a terabyte
        return 1 << 40


def _batch_shape(shapes: list) -> tuple:
    """The batch shape ``shapes`` broadcast to (a ValueError where they do not): equal shapes, the
    common case, without ``np.broadcast_shapes`` (microseconds a call)."""
    first = shapes[0]
    if all(s == first for s in shapes):
        return tuple(first)
    return np.broadcast_shapes(*shapes)


def _check_size(ins: Instruction, a, b, c, scale_a, scale_b, d_format: Format | None = None) -> None:
    """The one size check of every entry point: a batch whose results alone would not fit this
    machine's memory is refused from the operands' shapes, before their elements are scanned (a
    ``broadcast_to`` of 10**12 rows is a view of a few bytes, but checking its bit patterns would
    read 10**13 elements).  Shapes that do not broadcast are left to the full check.  ``d_format``:
    the instruction's D format where the caller has it (else read from ``ins``)."""
    shapes = [a.shape[:-1], b.shape[:-1], c.shape]
    shapes += [np.shape(s)[:-1] for s in (scale_a, scale_b) if s is not None]
    try:
        batch = _batch_shape(shapes)
    except ValueError:
        return
    rows = math.prod(batch)
    fd = ins.formats[3] if d_format is None else d_format
    need, have = rows * np.dtype(fd.dtype).itemsize, _memory_bytes()
    if need > have:
        raise ValueError(f"a batch of {rows:,} dot-adds (shape {batch}) needs {need / 2**30:,.0f} GiB for its results "
                         f"alone; this machine has {have / 2**30:,.0f} GiB: split it into smaller batches")


class _Rows:
    """One operand broadcast to the batch, rows read a chunk at a time as uint64 (no copy of the
    whole broadcast: (1000, 1, 16) against (10000, 16) stays 30 KB)."""

    def __init__(self, bits: np.ndarray, batch: tuple, tail: tuple):
        shape = batch + tail
        self.tail = tail
        if bits.shape == shape and bits.flags.c_contiguous:
            self.flat = bits.reshape((-1,) + tail)          # a view
            self.full = None
        else:
            self.flat = None
            self.full = np.broadcast_to(bits, shape)        # a view: strides 0 where broadcast
        self.batch = batch

    def view(self):
        """The operand's rows as they lie (``[rows, *tail]``, no copy), or None when broadcast."""
        return self.flat

    def rows(self, lo: int, hi: int) -> np.ndarray:
        if self.flat is not None:
            part = self.flat[lo:hi]
        elif len(self.batch) == 1:
            part = self.full[lo:hi]
        elif not self.batch:                 # one dot-add (a scalar batch) whose operand is a strided view
            part = self.full[None][lo:hi]
        else:
            part = self.full[np.unravel_index(np.arange(lo, hi), self.batch)]
        return part.astype(np.uint64)


@dataclass
class PreparedOperands:
    """Operands checked and flattened to rows: ``a, b [R, K]``, ``c [R]``, block scales
    ``[R, K // block]`` or None, all bit patterns; ``batch`` is the callers' batch shape."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    sa: np.ndarray | None
    sb: np.ndarray | None
    batch: tuple


class Operands:
    """Operands checked (formats, shapes; one clear ValueError) and broadcast to one batch shape
    (scales too), not yet widened: :meth:`rows` gives rows ``lo .. hi`` as uint64 bit patterns.
    :func:`dot_add` computes a chunk at a time, so memory follows the chunk, not the batch."""

    def __init__(self, ins: Instruction, a, b, c, scale_a, scale_b):
        fa, fb, fc, fd = ins.formats
        a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
        _check_size(ins, a, b, c, scale_a, scale_b, fd)   # before any operand is scanned
        a = _narrow_bits(fa, a, "a")
        b = _narrow_bits(fb, b, "b")
        c = _narrow_bits(fc, c, "c")
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"a and b must have a last axis of length K={ins.k}")
        if a.shape[-1] != ins.k or b.shape[-1] != ins.k:
            raise ValueError(f"{ins.name} on {ins.arch} has K={ins.k}: a and b need shape [..., {ins.k}], "
                             f"got {a.shape} and {b.shape} (pad unused products with zeros)")
        shapes = [a.shape[:-1], b.shape[:-1], c.shape]
        sa = sb = None
        if ins.scale_format:
            nblk = ins.k // ins.block_size
            if scale_a is None or scale_b is None:
                raise ValueError(f"{ins.name} on {ins.arch} is block-scaled: it needs scale_a and scale_b "
                                 f"({ins.scale_format}, one per {ins.block_size} products: shape [..., {nblk}])")
            sa, sb = (_narrow_bits(ins.scale_format, s, nm) for s, nm in ((scale_a, "scale_a"), (scale_b, "scale_b")))
            for sc, nm in ((sa, "scale_a"), (sb, "scale_b")):
                if sc.ndim == 0 or sc.shape[-1] != nblk:
                    raise ValueError(f"{nm} needs shape [..., {nblk}] (K={ins.k} / block size {ins.block_size}), "
                                     f"got {sc.shape}")
            shapes += [sa.shape[:-1], sb.shape[:-1]]
        elif scale_a is not None or scale_b is not None:
            raise ValueError(f"{ins.name} on {ins.arch} takes no block scales")
        try:
            batch = _batch_shape(shapes)                  # scales broadcast with the batch as operands do
        except ValueError:
            scales = f", scale_a {sa.shape}, scale_b {sb.shape}" if sa is not None else ""
            raise ValueError(f"shapes do not broadcast: a {a.shape}, b {b.shape}, c {c.shape}{scales} "
                             f"(a, b: [..., K]; c: [...]{'; scales: [..., K // block]' if scales else ''})") from None
        self.ins, self.batch = ins, batch
        self.count = math.prod(batch)
        self._a, self._b = _Rows(a, batch, (ins.k,)), _Rows(b, batch, (ins.k,))
        self._c = _Rows(c, batch, ())
        self._sa = None if sa is None else _Rows(sa, batch, (sa.shape[-1],))
        self._sb = None if sb is None else _Rows(sb, batch, (sb.shape[-1],))

    def views(self):
        """``(a, b, c, scale_a, scale_b)`` as the callers' own contiguous arrays (no copy; scales None
        when unscaled), or None when any operand is broadcast (then read :meth:`rows` a chunk at a time)."""
        parts = (self._a, self._b, self._c, self._sa, self._sb)
        views = tuple(None if x is None else x.view() for x in parts)
        if any(v is None and x is not None for v, x in zip(views, parts)):
            return None
        return views

    def rows(self, lo: int, hi: int) -> tuple:
        """``(a, b, c, scale_a, scale_b)`` of rows ``lo .. hi - 1`` as uint64 (scales None when unscaled)."""
        return tuple(None if x is None else x.rows(lo, hi) for x in (self._a, self._b, self._c, self._sa, self._sb))


def prepare_operands(ins: Instruction, a, b, c, scale_a, scale_b) -> PreparedOperands:
    """What :func:`dot_add` does with its arguments before computing: formats and shapes checked
    (one clear ValueError), broadcast, flattened, all rows at once as uint64 (the FPGA driver's
    form; :class:`Operands` reads them a chunk at a time)."""
    ops = Operands(ins, a, b, c, scale_a, scale_b)
    return PreparedOperands(*ops.rows(0, ops.count), ops.batch)


def dot_add(instr, a, b, c, scale_a=None, scale_b=None, *, arch=None, backend=None, threads=None) -> np.ndarray:
    """``d = c + sum_k a_k * b_k`` computed as the instruction computes it.

    Parameters
    ----------
    instr : Instruction or (arch, name)
        From :func:`golden.lookup`.
    a, b : array [..., K]
        Bit patterns (unsigned integers, one element each, narrow formats in
        the low bits), or exactly representable floats / ml_dtypes arrays.
        An unsigned dtype no wider than the format's storage (uint16 for f16,
        uint8 for fp8: ``golden.vectors.random_operands(..., narrow=True)``)
        is read as it lies with no width scan; a wider one is scanned first
        (a stray high bit is a ValueError naming it).
    c : array [...]
        Bit patterns of the accumulator in the instruction's C format.
    scale_a, scale_b : array [..., K // block_size], optional
        Block scales, required by block-scaled instructions; they broadcast
        with the batch as the operands do.
    backend : {"numpy", "numba"}, optional
        ``numba``: the compiled kernels (:mod:`golden.kernels`), bit for bit the numpy path;
        default ``$GOLDEN_BACKEND``, else ``numba`` when it imports.  A design no kernel
        models (:func:`golden.kernels.supports`) runs on numpy either way.
    threads : int, optional
        Cores the compiled kernels split the rows across (default: every core this process may
        use); the numpy path runs on one.

    Returns
    -------
    numpy array of unsigned bit patterns in the D format, shape ``[...]``.
    Memory follows the chunk (:data:`CHUNK_ROWS` rows), not the batch: the
    operands are widened and broadcast a chunk at a time (the kernels read
    contiguous operands where they lie).
    """
    ins = _instruction(instr, arch)
    if threads is not None and (not is_whole(threads) or threads < 1):
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    compiled = resolve_backend(backend) == "numba"
    key = _layout_key(ins, (a, b, c, scale_a, scale_b), threads) if compiled else None
    bound = _BOUND.get(key) if key is not None else None
    if bound is not None and bound.ins is ins:
        return bound(a, b, c, scale_a, scale_b)
    ops = Operands(ins, a, b, c, scale_a, scale_b)
    if compiled:
        from . import kernels
        if kernels.takes(ins):                       # cached per instruction (kernels.plan)
            out = kernels.run(ins, ops, threads).reshape(ops.batch)
            _bind(key, ins, ops, (a, b, c, scale_a, scale_b), threads)
            return out
    fa, fb, fc, fd = ins.formats
    R = ops.count
    out = np.empty(R, fd.dtype)
    for lo in range(0, R, CHUNK_ROWS):
        hi = min(lo + CHUNK_ROWS, R)
        ca, cb, cc, csa, csb = ops.rows(lo, hi)
        out[lo:hi] = algorithms.run(ins.params, ca, cb, cc, fa, fb, fc, fd, csa, csb, ins.scale_format, ins.block_size)
    return out.reshape(ops.batch)


_BOUND: dict = {}                 # _layout_key -> golden.kernels.Bound
BOUND_KEPT = 256                  # layouts kept (a loop over many shapes makes new ones: bounded)


def _layout_key(ins: Instruction, arrays: tuple, threads) -> tuple | None:
    """What the checks of a call read, as a key: the instruction, ``threads`` and each operand's
    dtype, shape and contiguity (None where one is not a numpy array: lists are read afresh)."""
    key = [id(ins), threads]
    for x in arrays:
        if x is None:
            key.append(None)
        elif type(x) is not np.ndarray:
            return None
        else:
            key += (x.dtype, x.shape, x.flags.c_contiguous)
    return tuple(key)


def _bind(key, ins: Instruction, ops: Operands, arrays: tuple, threads) -> None:
    """Keep a :class:`golden.kernels.Bound` for calls of ``key``'s layout, where its checks read the
    layout only: unsigned bit patterns no wider than their format (never scanned), contiguous, none
    broadcast.  Then a later call of the same layout passes the same checks: it skips them."""
    if key is None:
        return
    views = ops.views()
    fmts = (*ins.formats[:3], ins.scale_format, ins.scale_format)
    if views is None or not all(x is None or _unscanned(f, x.dtype) for f, x in zip(fmts, arrays)):
        return
    from . import kernels
    if len(_BOUND) >= BOUND_KEPT:
        _BOUND.clear()
    _BOUND[key] = kernels.Bound(ins, views, ops.batch, threads)


def _unscanned(fmt, dtype: np.dtype) -> bool:
    """Whether :func:`_narrow_bits` takes integers of ``dtype`` as they are, reading no element
    (unsigned, no wider than the format's storage): what :func:`_bind` may skip."""
    return dtype.kind == "u" and 8 * dtype.itemsize <= get_format(fmt).storage_bits


def mma(instr, A, B, C, scale_A=None, scale_B=None, *, arch=None) -> np.ndarray:
    """``D = C + A @ B`` for one instruction: ``A [..., M, K]``, ``B [..., K, N]``, ``C [..., M, N]``.

    Scales: ``scale_A [..., M, K // block]``, ``scale_B [..., K // block, N]``.
    Returns D's bit patterns ``[..., M, N]``.
    """
    ins = _instruction(instr, arch)
    A, B, C = np.asarray(A), np.asarray(B), np.asarray(C)
    if A.ndim < 2 or B.ndim < 2 or C.ndim < 2:
        raise ValueError("mma needs A [M, K], B [K, N] and C [M, N]")
    M, K = A.shape[-2:]
    K2, N = B.shape[-2:]
    if K != ins.k or K2 != ins.k:
        raise ValueError(f"{ins.name} on {ins.arch} has K={ins.k}: A is {A.shape}, B is {B.shape}")
    if C.shape[-2:] != (M, N):
        raise ValueError(f"C must be [M, N] = [{M}, {N}], got {C.shape}")
    ins.with_shape(M, N)                      # raises with the valid shapes
    a = A[..., :, None, :]
    b = np.swapaxes(B, -1, -2)[..., None, :, :]
    sa = sb = None
    if scale_A is not None:
        sa = np.asarray(scale_A)[..., :, None, :]
    if scale_B is not None:
        sb = np.swapaxes(np.asarray(scale_B), -1, -2)[..., None, :, :]
    return dot_add(ins, a, b, C, sa, sb)


@dataclass
class Trace:
    """Intermediate values of one dot-add, stage by stage."""

    instruction: Instruction
    stages: list
    d: int

    def values(self) -> dict:
        """Every value by its stable name (:mod:`golden.stages`): ``{"aligned.products": array, ...}``, one
        dot-add's values (vectors for per-product values).  In a chain of passes each pass's are also
        ``passN.STAGE.VALUE``, and the unprefixed names hold pass 0's."""
        from .stages import Stage, value_key
        out: dict = {}
        pass_no = None
        for label, vals in self.stages:
            stage = getattr(label, "stage", None)
            if stage is None:
                continue
            if stage is Stage.PASS:
                pass_no = 0 if pass_no is None else pass_no + 1
                continue
            for name, v in vals.items():
                key = value_key(stage, name)
                arr = np.asarray(v)
                arr = arr[0] if arr.ndim and arr.shape[0] == 1 else arr
                if pass_no is not None:
                    out[f"pass{pass_no}.{key}"] = arr
                out.setdefault(key, arr)
        return out

    def __str__(self) -> str:
        ins = self.instruction
        fd = get_format(ins.d_format)
        lines = [f"{ins.arch} {ins.name}: {ins.describe()}"]
        width = max(fd.storage_bits // 4, 1)
        for stage, values in self.stages:
            lines.append(f"-- {stage}")
            for k, v in values.items():
                lines.append(f"   {k}: {_show(v, hex_width=width if k == 'd' else None)}")
        val = float(to_float(fd, np.array([self.d], np.uint64))[0])
        lines.append(f"=> d = 0x{self.d:0{width}x} ({val!r})")
        return "\n".join(lines)


def _show(v, hex_width=None):
    """One dot-add's values: scalars as they are, vectors as a list, bit patterns in hex."""
    flat = np.asarray(v).reshape(-1)
    if hex_width is not None and flat.dtype.kind == "u":
        items = [f"0x{int(x):0{hex_width}x}" for x in flat]
    else:
        items = [repr(x.item()) if isinstance(x, np.generic) else repr(x) for x in flat]
    return items[0] if len(items) == 1 else "[" + ", ".join(items) + "]"


def trace(instr, a, b, c, scale_a=None, scale_b=None, *, arch=None) -> Trace:
    """Run one dot-add (``a, b`` of shape ``[K]``) and keep every intermediate stage."""
    ins = _instruction(instr, arch)
    pr = prepare_operands(ins, a, b, c, scale_a, scale_b)
    if pr.c.shape[0] != 1:
        raise ValueError(f"trace takes one dot-add (a, b of shape [{ins.k}], c a scalar), got batch {pr.batch}")
    fa, fb, fc, fd = ins.formats
    stages: list = []
    d = algorithms.run(ins.params, pr.a, pr.b, pr.c, fa, fb, fc, fd, pr.sa, pr.sb, ins.scale_format,
                       ins.block_size, trace=stages)
    return Trace(ins, stages, int(d[0]))
