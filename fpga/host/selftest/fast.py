"""The self-test's host model compiled (numba): the on-chip generator's operands and the signatures.

The same functions as :mod:`fpga.board.selftest.model` (the numpy model, the reference: tests show the two
equal bit for bit), compiled with ``nogil`` so a checker thread runs them beside the link, and split
across threads by rows (generator) or by signature chains (signatures).  Only used when numba imports
(:func:`available`); :mod:`fpga.host.selftest.check` falls back to the numpy model otherwise.

Generator
    A tile of ``TILE`` entries at a time (:mod:`fpga.host.selftest._kernels`): each 64-bit word of the
    lane is its six ARX rounds over the tile (a loop LLVM vectorises), then every field of the lane
    layout is cut from the
    words and, for the ``normal`` kind, its exponent field forced into the window.  Operands come
    out in their formats' own widths (``Format.dtype``), so golden reads a quarter of the bytes of
    the model's uint64 arrays.
Signatures
    CRC-32/MPEG-2 a result word at a time (``width`` bits, MSB first) with slicing tables: a 32-bit
    word is four independent table reads instead of four dependent ones; ``INTERLEAVE`` chains
    (a block's lane each) advance together so their table reads overlap.  Widths that are not a
    whole number of bytes take the bitwise loop.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cosim.payload import PayloadLayout
from golden.formats import get_format, special_bits

from ...board.selftest.model import _TABLE, CRC_INIT, _check_kind, exponent_window, round_keys
from .modes import M_FULL, M_GENERATE, M_GOLDEN  # noqa: F401  (fused_signatures' modes, re-exported)

__all__ = ["available", "field_table", "fused_handles", "fused_signatures", "operands", "operands_at", "packed_layout",
           "signatures"]

MIN_SPLIT = 4096        # fewer rows (or chains x entries) than this run on the calling thread
_FIELD_COLUMNS = 9      # dest, column, word, shift, width, window offset, window width, window lo, window wb
_DESTS = ("a", "b", "c", "scale_a", "scale_b")


def available() -> bool:
    """Whether numba imports (the compiled host model can run)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def field_table(ins) -> np.ndarray:
    """One lane's fields as an int64 table ``[fields, 9]``: destination operand (index of
    ``a, b, c, scale_a, scale_b``), its column, the 64-bit word and bit shift the field starts at,
    its width, and its format's ``normal`` exponent window (offset, width, lo, wb)."""
    layout = PayloadLayout(ins, 1)
    fmts = {"a": ins.formats[0], "b": ins.formats[1], "c": ins.formats[2]}
    if ins.scale_format:
        fmts["scale_a"] = fmts["scale_b"] = get_format(ins.scale_format)
    rows = []
    for f in layout.fields:
        win = exponent_window(fmts[f.name])
        rows.append((_DESTS.index(f.name), f.index, f.offset // 64, f.offset % 64, f.width,
                     win.offset, win.width, win.lo, win.wb))
    return np.array(rows, np.int64).reshape(-1, _FIELD_COLUMNS)


def _windows(ins, nw: int):
    """uint64 ``[nw + 1, 3]``: per generator word, the ``normal`` kind's E (every exponent field's bits),
    Lw (their low ``wb`` bits) and Lo (each field's ``lo`` in place); None where a field's exponent
    crosses a word."""
    win = np.zeros((nw + 1, 3), np.uint64)
    for row in field_table(ins):
        at = int(row[2]) * 64 + int(row[3]) + int(row[5])
        width, lo, wb = int(row[6]), int(row[7]), int(row[8])
        w, sh = at // 64, at % 64
        if sh + width > 64:
            return None
        win[w] |= np.array([((1 << width) - 1) << sh, ((1 << wb) - 1) << sh, lo << sh], np.uint64)
    return win


def packed_layout(ins):
    """``(pieces, windows)`` of :func:`fpga.host.selftest._kernels.generate_packed` where every operand
    is *packed* (its fields contiguous from a byte boundary, each its storage width, or 4-bit fields
    two a byte and one a byte in the operand, eight to a piece), so the lane's words are the
    operands' bytes; None where one is not (the generator cuts field by field)."""
    tab = field_table(ins)
    nw = -(-PayloadLayout(ins, 1).in_width // 64)
    win = _windows(ins, nw)
    if win is None:
        return None
    pieces = []
    for d in range(len(_DESTS)):
        r = tab[tab[:, 0] == d]
        if not len(r):
            continue
        fmt = ([ins.formats[0], ins.formats[1], ins.formats[2]] + [ins.scale_format] * 2)[d]
        isz = np.dtype(get_format(fmt).dtype).itemsize
        width, start = int(r[0, 4]), int(r[0, 2] * 64 + r[0, 3])
        if (r[:, 4] != width).any() or not np.array_equal(r[:, 2] * 64 + r[:, 3], start + width * np.arange(len(r))):
            return None
        if width == 4 and isz == 1 and len(r) % 8 == 0 and start % 32 == 0:      # 32 source bits a piece
            per_row = len(r) // 8
            pieces += [((start + 32 * i) // 64, (start + 32 * i) % 64, d, i, per_row, _kernels_nibbles())
                       for i in range(per_row)]
            continue
        span = len(r) * isz
        if width != 8 * isz or start % 8:
            return None
        unit = next(u for u in (8, 4, 2, 1) if (start // 8) % u == 0 and span % u == 0)
        pieces += [((start + 8 * unit * i) // 64, (start + 8 * unit * i) % 64, d, i, span // unit, unit)
                   for i in range(span // unit)]
    return np.array(pieces, np.int64).reshape(-1, 6), win


def _kernels_nibbles() -> int:
    return 16            # _kernels.NIBBLES (not imported here: the kernels module needs numba)


def _jit():
    """The compiled kernels (numba imported on first use: the module imports without it)."""
    global _kernels
    if _kernels is None:
        from . import _kernels as _selftest_kernels
        _kernels = _selftest_kernels
    return _kernels


_kernels = None


def _split(n: int, threads: int, minimum: int = MIN_SPLIT) -> list[tuple[int, int]]:
    """``[(lo, hi)]`` cutting ``0..n`` into at most ``threads`` parts of at least ``minimum``."""
    parts = max(1, min(threads, n // max(1, minimum)))
    edges = [n * p // parts for p in range(parts + 1)]
    return [(edges[p], edges[p + 1]) for p in range(parts) if edges[p + 1] > edges[p]]


_pool: list = []                  # [ThreadPoolExecutor, its size], made on first use and kept
_pool_lock = threading.Lock()


def _workers(n: int) -> ThreadPoolExecutor:
    """A kept pool of at least ``n`` threads (starting threads on every call costs more than a
    step's work on a machine of many cores)."""
    with _pool_lock:
        if not _pool or _pool[1] < n:
            if _pool:
                _pool[0].shutdown(wait=False)
            _pool[:] = [ThreadPoolExecutor(n, thread_name_prefix="selftest-fast"), n]
        return _pool[0]


def _in_threads(fn, parts: list[tuple[int, int]]) -> None:
    """``fn(lo, hi)`` for every part: the first on this thread, the others on the kept pool's (the
    kernels release the GIL, so they run at once)."""
    rest = [_workers(len(parts) - 1).submit(fn, lo, hi) for lo, hi in parts[1:]] if len(parts) > 1 else []
    fn(*parts[0])
    for f in rest:
        f.result()


def _threads(threads) -> int:
    if threads is None:
        from golden.kernels import default_threads
        return default_threads()
    return max(1, int(threads))


def operands(ins, lanes: int, seed: int, kind, first: int, entries: int, threads: int | None = None):
    """:func:`fpga.board.selftest.model.operands`, compiled: the same bits, each operand in its format's
    dtype (``c`` a contiguous ``[R]`` column of a ``[R, 1]`` array)."""
    k = _jit()
    code = _check_kind(kind)
    if not 0 <= first < 1 << 32 or entries < 0:
        raise ValueError(f"entries {first}..{first + entries - 1}: the first must be in 0..2**32-1")
    tab = field_table(ins)
    bounds = np.array([0] + [int((tab[:, 0] <= d).sum()) for d in range(5)], np.int64)
    nw = -(-PayloadLayout(ins, 1).in_width // 64)
    keys = np.array(round_keys(seed), np.uint64)
    layout = PayloadLayout(ins, 1)
    R = entries * lanes
    fmts = [ins.formats[0], ins.formats[1], ins.formats[2]]
    if ins.scale_format:
        fmts += [get_format(ins.scale_format)] * 2
    out = [np.empty((R, layout.counts[name]), get_format(f).dtype) for name, f in zip(_DESTS, fmts)]
    arrays = [x.reshape(-1).view(np.uint8) for x in out] + [np.empty(0, np.uint8)] * (5 - len(out))
    isz = np.array([x.dtype.itemsize for x in out] + [1] * (5 - len(out)), np.int64)
    packed = packed_layout(ins)
    if packed is not None:
        def part(lo, hi):
            k.generate_packed(first, lo, hi, lanes, nw, keys, code, *packed, *arrays)
    else:
        def part(lo, hi):
            k.generate(first, lo, hi, lanes, nw, keys, code, tab, bounds, *arrays, isz)
    _in_threads(part, _split(entries, _threads(threads), max(1, MIN_SPLIT // lanes)))
    a, b, c = out[0], out[1], out[2][:, 0]
    return (a, b, c, out[3] if len(out) > 3 else None, out[4] if len(out) > 4 else None)


def operands_at(ins, lanes: int, seed: int, kind, entries) -> tuple:
    """The generator's dot-adds of the entries listed (any order, each in 0..2**32-1) as
    :func:`operands` gives them: rows ``i * lanes + l`` for entry ``entries[i]``, lane ``l`` (a
    coverage sample's operands, without generating the blocks around them)."""
    k = _jit()
    code = _check_kind(kind)
    entries = np.asarray(entries, np.int64).reshape(-1)
    if len(entries) and (entries.min() < 0 or entries.max() >= 1 << 32):
        raise ValueError("entries must be in 0..2**32-1 (the self-test's entry counter)")
    tab = field_table(ins)
    bounds = np.array([0] + [int((tab[:, 0] <= d).sum()) for d in range(5)], np.int64)
    layout = PayloadLayout(ins, 1)
    fmts = [ins.formats[0], ins.formats[1], ins.formats[2]] + [ins.scale_format] * 2 * bool(ins.scale_format)
    out = [np.empty((len(entries) * lanes, layout.counts[name]), get_format(f).dtype) for name, f in zip(_DESTS, fmts)]
    arrays = [x.reshape(-1).view(np.uint8) for x in out] + [np.empty(0, np.uint8)] * (5 - len(out))
    isz = np.array([x.dtype.itemsize for x in out] + [1] * (5 - len(out)), np.int64)
    row_bytes = np.array([x.shape[1] * x.dtype.itemsize for x in out] + [0] * (5 - len(out)), np.int64)
    k.generate_entries(entries.astype(np.uint64), lanes, -(-layout.in_width // 64), np.array(round_keys(seed),
                       np.uint64), code, tab, bounds, *arrays, isz, row_bytes)
    return (out[0], out[1], out[2][:, 0], out[3] if len(out) > 3 else None, out[4] if len(out) > 4 else None)


def _slicing_tables() -> np.ndarray:
    """``T[k][byte]``: the CRC register after ``byte`` and then ``k`` zero bytes (k = 0..3)."""
    t = np.zeros((4, 256), np.uint64)
    t[0] = _TABLE
    for n in range(1, 4):
        prev = t[n - 1]
        t[n] = ((prev << np.uint64(8)) & np.uint64(0xFFFFFFFF)) ^ _TABLE[(prev >> np.uint64(24)).astype(np.int64)]
    return t


_SLICES = _slicing_tables()


def _nan_word(fd, canon: bool) -> np.uint64:
    """The word a NaN result is folded as (``canon``), typed uint64 either way: an int 0 beside a
    uint64 NaN compiled the signature kernels twice."""
    return np.uint64(special_bits(fd, "nan") if canon else 0)


def signatures(ins, lanes: int, d, block_len: int, threads: int | None = None) -> np.ndarray:
    """:func:`fpga.board.selftest.model.signatures`, compiled: uint64 ``[blocks, lanes]``."""
    k = _jit()
    d = np.ascontiguousarray(d).reshape(-1)
    if d.dtype.kind not in "ui" or d.dtype.itemsize not in (1, 2, 4, 8):
        d = d.astype(np.uint64)
    if d.shape[0] % (block_len * lanes):
        raise ValueError(f"{d.shape[0]} results are not a whole number of blocks of {block_len} x {lanes} lanes")
    blocks = d.shape[0] // (block_len * lanes)
    fd = ins.formats[3]
    canon = not ins.params.exact_nan
    if canon and fd.nan != "ieee":
        raise NotImplementedError(f"a self-test signature of {fd.name} results with unspecified NaN bits")
    nan = _nan_word(fd, canon)
    out = np.empty(blocks * lanes, np.uint64)
    chains = blocks * lanes
    _in_threads(lambda lo, hi: k.crc_chains(d.view(np.uint8), d.dtype.itemsize, block_len, lanes, lo, hi,
                                            fd.storage_bits, canon, fd.man_bits, fd.exp_bits, nan, CRC_INIT,
                                            _SLICES, out),
                _split(chains, _threads(threads), max(1, MIN_SPLIT // block_len)))
    return out.reshape(blocks, lanes)



# per instruction (and spec): what the fused path computes once, not on every request (building them
# costs about a millisecond, the check of a 16-block request about as much); the instruction is kept
# with its entry, so an id is never reused while it is there
_FUSED_CACHE: dict = {}
_FUSED_CACHE_MAX = 256


def _cached(key, ins, make):
    hit = _FUSED_CACHE.get(key)
    if hit is not None and hit[0] is ins:
        return hit[1]
    if len(_FUSED_CACHE) >= _FUSED_CACHE_MAX:
        _FUSED_CACHE.clear()
    value = make()
    _FUSED_CACHE[key] = (ins, value)
    return value


def fused_handles(ins) -> bool:
    """Whether :func:`fused_signatures` checks ``ins``: golden's compiled kernels compute it
    (:func:`golden.kernels.handles`) and its signature folds its results (an IEEE NaN where NaN bits
    are unspecified)."""
    from golden import kernels
    if not available():
        return False
    return _cached(("handles", id(ins)), ins, lambda: kernels.handles(ins.datapath) and (
        ins.params.exact_nan or ins.formats[3].nan == "ieee"))


def _fused_args(spec) -> tuple:
    """The fused kernel's arguments of one spec, but for the blocks, the mode and ``out`` (cached: golden's
    planted fault, a test's, is part of the key)."""
    from golden import kernels
    key = ("args", id(spec.ins), spec.lanes, spec.seed, spec.kind, spec.block_len, kernels._FAULT)
    return _cached(key, spec.ins, lambda: _make_fused_args(spec))


def _make_fused_args(spec) -> tuple:
    from golden import kernels
    from golden.kernels import spec as kspec
    ins = spec.ins
    dp = ins.datapath
    fmts, vtab, etab, prm = kspec.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)
    if kernels._FAULT:                        # golden's planted fault (a test) reaches the fused path too
        prm = prm.copy()
        prm[kspec.P_FAULT] = 1
    tab = field_table(ins)
    bounds = np.array([0] + [int((tab[:, 0] <= d).sum()) for d in range(5)], np.int64)
    names = [ins.formats[0], ins.formats[1], ins.formats[2]] + [ins.scale_format] * 2 * bool(ins.scale_format)
    isz = np.array([np.dtype(get_format(f).dtype).itemsize for f in names] + [1] * (5 - len(names)), np.int64)
    fd = ins.formats[3]
    canon = not ins.params.exact_nan
    nw = -(-PayloadLayout(ins, 1).in_width // 64)
    pieces, win = packed_layout(ins) or (np.zeros((0, 6), np.int64), np.zeros((nw + 1, 3), np.uint64))
    return (spec.block_len, spec.lanes, nw, np.array(round_keys(spec.seed), np.uint64), _check_kind(spec.kind), tab,
            bounds, isz, pieces, win, dp.k, fmts,
            vtab, etab, prm, kernels.product_order(dp.params, dp.k), fd.storage_bits, canon, fd.man_bits,
            fd.exp_bits, _nan_word(fd, canon), CRC_INIT, _SLICES)


def fused_signatures(spec, first_block: int, blocks: int = 1, threads: int | None = None, mode: int = 0) -> np.ndarray:
    """Expected signatures ``[blocks, lanes]`` of blocks ``first_block ..`` in one compiled pass per
    block (:func:`fpga.host.selftest._fused.check_blocks`: generator, golden's row kernel and the
    CRC fused, no block-sized array), split by blocks across ``threads`` (default every core).
    ``spec``: a :class:`fpga.board.selftest.model.SelfTestSpec` that :func:`fused_handles` takes."""
    from golden import kernels

    from . import _fused
    if not fused_handles(spec.ins):
        raise ValueError(f"{spec.ins.arch} {spec.ins.name}: golden's compiled kernels do not compute it; "
                         f"use expected_signatures (its numpy path)")
    if first_block < 0 or blocks < 1 or (first_block + blocks) * spec.block_len > 1 << 32:
        raise ValueError(f"blocks {first_block}..{first_block + blocks - 1} of {spec.block_len} entries do not "
                         f"fit the self-test's 32-bit entry counter (entries 0..2**32-1)")
    args = _fused_args(spec)
    kernel = _cached(("kernel", id(spec.ins)), spec.ins, lambda: _fused.kernel_of(kernels.plan(spec.ins).rows))
    out = np.empty((blocks, spec.lanes), np.uint64)
    per_block = spec.block_len * spec.lanes
    _in_threads(lambda lo, hi: kernel(first_block + lo, hi - lo, *args, mode, out[lo:hi]),
                _split(blocks, _threads(threads), max(1, MIN_SPLIT // per_block)))
    return out
