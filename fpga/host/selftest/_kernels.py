"""The numba kernels of :mod:`fpga.host.selftest.fast` (imported only when numba is there).

Every integer is uint64 with explicit casts: numba would otherwise promote a uint64 mixed with an
int64 to float64.
"""

from __future__ import annotations

import numpy as np

from golden.nbcache import njit

from ...board.selftest.model import CRC_POLY, ROUNDS

TILE = 256              # entries whose words are mixed together (the vectorised ARX loop)
INTERLEAVE = 8          # CRC chains advanced together
M32 = np.uint64(0xFFFFFFFF)
U0, U1, U3, U8, U24, U29, U31, U32, U64 = (np.uint64(n) for n in (0, 1, 3, 8, 24, 29, 31, 32, 64))
POLY = np.uint64(CRC_POLY)
W3, W8, W24, W29 = (np.uint32(n) for n in (3, 8, 24, 29))
JIT = {"cache": True, "nogil": True}
# per-tile helpers inlined into their kernel: a call taking arrays costs tens of ns (the arrays'
# reference counts), more than a tile's work for a narrow field
HOT = {"cache": True, "nogil": True, "inline": "always"}


@njit(**HOT)
def _arx(v0, T, j, keys, X, Y):
    """Words ``j`` of entries ``v0 .. v0 + T - 1`` (mod 2**32): x in ``X``, y in ``Y`` (uint32: the
    vectorised rounds take twice the lanes they would in uint64)."""
    for t in range(T):
        X[t] = np.uint32((v0 + np.uint64(t)) & M32)
        Y[t] = np.uint32(j)
    for r in range(ROUNDS):
        k = np.uint32(keys[r])
        for t in range(T):                       # the tile at once: vectorised
            a, b = X[t], Y[t]
            x = np.uint32(np.uint32(np.uint32((a >> W8) | (a << W24)) + b) ^ k)
            Y[t] = np.uint32(np.uint32((b << W3) | (b >> W29)) ^ x)
            X[t] = x


@njit(**HOT)
def _cut(words, T, f, tab, normal, tile):
    """Field ``f`` of the tile's entries (``words[w, t]``) into ``tile[f, t]``, shaped for the kind;
    branch-free (a field that does not spill or a kind that does not shape folds to identities),
    so the loop over the tile vectorises."""
    wi, shift, width = tab[f, 2], tab[f, 3], tab[f, 4]
    sh = np.uint64(shift)
    back = U64 - sh if shift > 0 else U0
    spill = ~U0 if shift > 0 and shift + width > 64 else U0
    mask = (U1 << np.uint64(width)) - U1 if width < 64 else ~U0
    off = np.uint64(tab[f, 5]) if normal else U0
    keep = ~(((U1 << np.uint64(tab[f, 6])) - U1) << off) if normal else ~U0
    lo = np.uint64(tab[f, 7]) if normal else U0
    low = (U1 << np.uint64(tab[f, 8])) - U1 if normal else U0
    for t in range(T):
        x = ((words[wi, t] >> sh) | ((words[wi + 1, t] << back) & spill)) & mask
        tile[f, t] = (x & keep) | ((lo + ((x >> off) & low)) << off)


@njit(**HOT)
def _copy(tile, T, f0, f1, out, row0, lanes):
    cols = f1 - f0
    for t in range(T):
        at = (row0 + t * lanes) * cols - f0
        for f in range(f0, f1):
            out[at + f] = tile[f, t]


@njit(**HOT)
def _widths(buf):
    """An operand's bytes as u8, u16, u32 and u64 views, made once per call."""
    n = buf.shape[0]
    return buf, buf[:n - n % 2].view(np.uint16), buf[:n - n % 4].view(np.uint32), buf[:n - n % 8].view(np.uint64)


@njit(**HOT)
def _store(tile, T, f0, f1, views, isz, row0, lanes):
    """Fields ``f0 .. f1 - 1`` of the tile: the columns of one operand's rows ``row0 + t * lanes``,
    written in the operand's item size (``views``: its :func:`_widths`)."""
    if f1 == f0:
        return
    if isz == 1:
        _copy(tile, T, f0, f1, views[0], row0, lanes)
    elif isz == 2:
        _copy(tile, T, f0, f1, views[1], row0, lanes)
    elif isz == 4:
        _copy(tile, T, f0, f1, views[2], row0, lanes)
    else:
        _copy(tile, T, f0, f1, views[3], row0, lanes)


@njit(**JIT)
def generate(first, lo, hi, lanes, nw, keys, kind, tab, bounds, a, b, c, sa, sb, isz):
    """Entries ``lo .. hi - 1`` of a run starting at entry ``first``: rows ``e * lanes + l`` of the
    operands (:func:`fpga.board.selftest.model.operands`), each given as its bytes with item size
    ``isz[operand]``; ``bounds``: where each operand's fields start in ``tab`` (and the last ends)."""
    X = np.empty(TILE, np.uint32)
    Y = np.empty(TILE, np.uint32)
    words = np.zeros((nw + 1, TILE), np.uint64)          # the last row: the model's spill word, zero
    tile = np.empty((tab.shape[0], TILE), np.uint64)
    va, vb, vc, vsa, vsb = _widths(a), _widths(b), _widths(c), _widths(sa), _widths(sb)
    normal = kind == 1
    for e0 in range(lo, hi, TILE):
        T = min(TILE, hi - e0)
        v0 = np.uint64(first) + np.uint64(e0)
        for lane in range(lanes):
            for w in range(nw):
                _arx(v0, T, np.uint64(lane * nw + w), keys, X, Y)
                for t in range(T):
                    words[w, t] = (np.uint64(X[t]) << U32) | np.uint64(Y[t])
            for f in range(tab.shape[0]):
                _cut(words, T, f, tab, normal, tile)
            row0 = e0 * lanes + lane
            _store(tile, T, bounds[0], bounds[1], va, isz[0], row0, lanes)
            _store(tile, T, bounds[1], bounds[2], vb, isz[1], row0, lanes)
            _store(tile, T, bounds[2], bounds[3], vc, isz[2], row0, lanes)
            _store(tile, T, bounds[3], bounds[4], vsa, isz[3], row0, lanes)
            _store(tile, T, bounds[4], bounds[5], vsb, isz[4], row0, lanes)


@njit(inline="always", **JIT)
def _fold32(crc, piece, p, slices):
    """The register after a ``p``-bit piece (8, 16, 24 or 32 bits): ``p / 8`` independent table reads."""
    x = crc ^ (piece << np.uint64(32 - p))
    new = (crc << np.uint64(p)) & M32 if p < 32 else U0
    n = p // 8
    for i in range(n):
        new ^= slices[n - 1 - i, (x >> np.uint64(24 - 8 * i)) & np.uint64(0xFF)]
    return new


@njit(inline="always", **JIT)
def _fold(crc, word, width, slices):
    """The CRC register after one ``width``-bit result word, MSB first."""
    if width == 32:
        return _fold32(crc, word, 32, slices)
    if width == 16:
        return _fold32(crc, word, 16, slices)
    if width == 64:
        return _fold32(_fold32(crc, word >> U32, 32, slices), word & M32, 32, slices)
    for bit in range(width - 1, -1, -1):         # any other width: a bit at a time, as the model
        feedback = ((crc >> U31) ^ (word >> np.uint64(bit))) & U1
        crc = ((crc << U1) & M32) ^ (feedback * POLY)
    return crc


@njit(**JIT)
def _chains(d, block_len, lanes, lo, hi, width, canon, man_bits, exp_bits, nan, init, slices, out):
    """Signatures of chains ``lo .. hi - 1`` (chain ``block * lanes + lane``) of results ``d``
    (an unsigned array)."""
    crc = np.empty(INTERLEAVE, np.uint64)
    base = np.empty(INTERLEAVE, np.int64)
    man = (U1 << np.uint64(man_bits)) - U1
    emax = (U1 << np.uint64(exp_bits)) - U1
    mb = np.uint64(man_bits)
    for c0 in range(lo, hi, INTERLEAVE):
        n = min(INTERLEAVE, hi - c0)
        for g in range(n):
            crc[g] = np.uint64(init)
            base[g] = ((c0 + g) // lanes) * block_len * lanes + (c0 + g) % lanes
        for e in range(block_len):
            at = e * lanes
            for g in range(n):                   # independent chains: their table reads overlap
                word = np.uint64(d[base[g] + at])
                if canon and ((word >> mb) & emax) == emax and (word & man) != U0:
                    word = np.uint64(nan)
                crc[g] = _fold(crc[g], word, width, slices)
        for g in range(n):
            out[c0 + g] = crc[g]


@njit(**JIT)
def crc_chains(d, isz, block_len, lanes, lo, hi, width, canon, man_bits, exp_bits, nan, init, slices, out):
    """Signatures of chains ``lo .. hi - 1`` (chain ``block * lanes + lane``) of results given as
    their bytes ``d`` with item size ``isz`` (one compiled kernel for every result width)."""
    if isz == 1:
        _chains(d, block_len, lanes, lo, hi, width, canon, man_bits, exp_bits, nan, init, slices, out)
    elif isz == 2:
        _chains(d.view(np.uint16), block_len, lanes, lo, hi, width, canon, man_bits, exp_bits, nan, init, slices, out)
    elif isz == 4:
        _chains(d.view(np.uint32), block_len, lanes, lo, hi, width, canon, man_bits, exp_bits, nan, init, slices, out)
    else:
        _chains(d.view(np.uint64), block_len, lanes, lo, hi, width, canon, man_bits, exp_bits, nan, init, slices, out)


# --- packed layouts: every operand's fields contiguous, byte-aligned, in their storage width -------

PC_WORD, PC_SHIFT, PC_DEST, PC_AT, PC_PER_ROW, PC_KIND = range(6)     # a piece: see generate_packed
NIBBLES = 16                  # a piece kind: 32 bits of 4-bit fields spread into 8 bytes, one a byte
U16, M16 = np.uint64(16), np.uint64(0x0000FFFF0000FFFF)
M8, M4 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0F0F0F0F0F0F0F0F)


@njit(**HOT)
def _spread(x):
    """The eight nibbles of a 32-bit ``x`` into the eight bytes of a word, nibble ``i`` to byte ``i``."""
    y = (x | (x << U16)) & M16
    y = (y | (y << U8)) & M8
    return (y | (y << np.uint64(4))) & M4


@njit(**HOT)
def _put(words, T, p, pieces, v, row0, lanes):
    """Piece ``p`` of the tile's entries into their rows of an operand (``v``: its view in the
    piece's unit); the loop over the tile is branch-free.  4-bit fields are spread into a scratch
    row of ``words`` first: a contiguous loop that vectorises, where spreading beside the strided
    store ran scalar (fp4's generator 1.4x faster)."""
    w, sh, at, per_row = pieces[p, PC_WORD], np.uint64(pieces[p, PC_SHIFT]), pieces[p, PC_AT], pieces[p, PC_PER_ROW]
    src = words[w]
    if pieces[p, PC_KIND] == NIBBLES:              # spread in a vector loop, then the strided stores
        tmp = words[words.shape[0] - 1]
        for t in range(T):
            tmp[t] = _spread((src[t] >> sh) & M32)
        for t in range(T):
            v[(row0 + t * lanes) * per_row + at] = tmp[t]
    else:
        for t in range(T):
            v[(row0 + t * lanes) * per_row + at] = src[t] >> sh


@njit(**JIT)
def generate_packed(first, lo, hi, lanes, nw, keys, kind, pieces, win, a, b, c, sa, sb):
    """:func:`generate` for a packed layout (:func:`fpga.host.selftest.fast.packed_layout`): the
    lane's words are the operands' bytes, so each word's pieces (``pieces[p]``: word, bit shift,
    operand, unit index in the row, units a row, unit bytes or :data:`NIBBLES`) are stored straight
    into the operands' rows, a unit at a time across the tile.  The ``normal`` kind's exponent windows
    run on the words first, every field at once: ``word & ~E | (word & Lw) + Lo`` (``win[w]``: E, Lw,
    Lo; each field's ``lo + low bits`` fits the field, so no carry leaves it)."""
    X = np.empty(TILE, np.uint32)
    Y = np.empty(TILE, np.uint32)
    words = np.zeros((nw + 2, TILE), np.uint64)          # row nw: the model's spill word; nw + 1: _put's scratch
    views = (_widths(a), _widths(b), _widths(c), _widths(sa), _widths(sb))
    normal = kind == 1
    for e0 in range(lo, hi, TILE):
        T = min(TILE, hi - e0)
        v0 = np.uint64(first) + np.uint64(e0)
        for lane in range(lanes):
            for w in range(nw):
                _arx(v0, T, np.uint64(lane * nw + w), keys, X, Y)
                keep = ~win[w, 0] if normal else ~U0
                low = win[w, 1] if normal else U0
                add = win[w, 2] if normal else U0
                for t in range(T):
                    x = (np.uint64(X[t]) << U32) | np.uint64(Y[t])
                    words[w, t] = (x & keep) | ((x & low) + add)
            row0 = e0 * lanes + lane
            for p in range(pieces.shape[0]):
                vs = views[pieces[p, PC_DEST]]
                k = pieces[p, PC_KIND]
                if k == 8 or k == NIBBLES:
                    _put(words, T, p, pieces, vs[3], row0, lanes)
                elif k == 4:
                    _put(words, T, p, pieces, vs[2], row0, lanes)
                elif k == 2:
                    _put(words, T, p, pieces, vs[1], row0, lanes)
                else:
                    _put(words, T, p, pieces, vs[0], row0, lanes)


@njit(**JIT)
def generate_entries(entries, lanes, nw, keys, kind, tab, bounds, a, b, c, sa, sb, isz, row_bytes):
    """:func:`generate` of the entries listed (uint64, any order): entry ``entries[i]``'s rows at
    ``i * lanes ..`` (``row_bytes[operand]``: bytes an operand's row takes)."""
    zero, one = np.int64(0), np.int64(1)     # generate's signature as fast.py calls it: literals or a
    for i in range(entries.shape[0]):        # uint64 entry would compile it a second time (about 6 s)
        n0, n1, n2, n3, n4 = (i * lanes * row_bytes[0], i * lanes * row_bytes[1], i * lanes * row_bytes[2],
                              i * lanes * row_bytes[3], i * lanes * row_bytes[4])
        m = lanes
        generate(np.int64(entries[i]), zero, one, lanes, nw, keys, kind, tab, bounds, a[n0:n0 + m * row_bytes[0]],
                 b[n1:n1 + m * row_bytes[1]], c[n2:n2 + m * row_bytes[2]], sa[n3:n3 + m * row_bytes[3]],
                 sb[n4:n4 + m * row_bytes[4]], isz)
