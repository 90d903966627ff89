"""The fused host check's numba kernel (imported only when numba is there): a run of blocks'
generator, golden and signatures in one compiled pass.

:func:`check_blocks` takes a tile of :data:`TILE_ROWS` rows (entries times lanes) at a time, across
block boundaries: the generator writes the tile's operands in their formats' own widths into
buffers (1 MB of a and b for f16 K = 16, 2 MB for fp4 K = 64), golden's row kernel of the
design (the one :mod:`golden.kernels`' plan chose, the same compiled function ``golden.dot_add``
runs, so the same bits by construction) computes the tile's results into a uint64 tile, and each
lane's CRC chain folds them in order, starting afresh at each block's first entry.  Nothing larger
than a tile is ever in memory: per block, one signature per lane comes out.  A tile of several
default blocks calls golden's kernel once for all of them: CoFDA's kernel called on 1,024, 4,096
and 16,384 rows at a time took 47, 37 and 35 ns a row (one core, its fixed cost a call: scratch,
a block of rows' set-up), and the fused check of FDA and CoFDA gained about 7% from 4,096-row
tiles to 16,384 (GDFS and CoFDRDA within the noise).
"""

from __future__ import annotations

import numpy as np

from golden import kernels
from golden.kernels import amd, amd_int, fused, gdfs_int, gps, sfma
from golden.nbcache import njit

from ._kernels import _fold, generate, generate_packed
from .modes import M_FULL, M_GENERATE

TILE_ROWS = 16384           # rows generated, computed and folded at a time (sixteen default blocks of one lane)
JIT = {"cache": True, "nogil": True}


@njit(cache=True, nogil=True, inline="always")
def _fold_rows(res, t0, n, lanes, crc, width, canon, mb, emax, man, nan, slices):
    """Each lane's chain after the tile's entries ``t0 .. t0 + n - 1`` (``res[t * lanes + lane]``)."""
    for t in range(t0, t0 + n):
        for lane in range(lanes):
            word = res[t * lanes + lane]
            if canon and ((word >> mb) & emax) == emax and (word & man) != np.uint64(0):
                word = np.uint64(nan)
            crc[lane] = _fold(crc[lane], word, width, slices)


@njit(cache=True, nogil=True, inline="always")
def check_blocks(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, rows, K, fmts,
                 vtab, etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out):
    """Signatures ``out[b, lane]`` of blocks ``first_block .. first_block + blocks - 1``.

    Generator arguments as :func:`fpga.host.selftest._kernels.generate` (``isz``: the operands' item
    sizes; ``pieces, win``: :func:`fpga.host.selftest._kernels.generate_packed`'s, no pieces where the
    layout is not packed), golden's as its row kernels (``rows``: the design's; inlined into one
    compiled kernel per row kernel, :func:`kernel_of`), the signature's as
    :func:`fpga.host.selftest._kernels.crc_chains`.  ``mode``: ``modes.M_FULL``; ``M_GENERATE`` or
    ``M_GOLDEN`` stop after that stage (the benchmark's split; ``out`` then holds a checksum)."""
    per = max(1, TILE_ROWS // lanes)                 # entries a tile
    cap = per * lanes
    packed = pieces.shape[0] > 0
    bufs = [np.empty(max(1, cap * (bounds[d + 1] - bounds[d]) * isz[d]), np.uint8) for d in range(5)]
    res = np.zeros(cap, np.uint64)
    crc = np.empty(lanes, np.uint64)
    man = (np.uint64(1) << np.uint64(man_bits)) - np.uint64(1)
    emax = (np.uint64(1) << np.uint64(exp_bits)) - np.uint64(1)
    mb = np.uint64(man_bits)
    first = np.int64(first_block) * np.int64(block_len)        # the run's first entry (below 2**32)
    # the callees take int64 positions, as golden and fast.py call them: a literal 0 or a uint64 here
    # is another signature, which compiled golden's row kernel and the generator a second time
    zero = np.int64(0)
    total = blocks * block_len
    for e0 in range(0, total, per):
        T = min(per, total - e0)
        if packed:
            generate_packed(first + e0, zero, T, lanes, nw, keys, kind, pieces, win,
                            bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
        else:
            generate(first + e0, zero, T, lanes, nw, keys, kind, tab, bounds,
                     bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], isz)
        if mode != M_GENERATE:
            rows(zero, T * lanes, bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], isz, K, fmts, vtab, etab, prm,
                 order, res)
        t = 0
        while t < T:                                 # the tile's pieces of blocks
            within = (e0 + t) % block_len
            n = min(T - t, block_len - within)
            if within == 0:
                crc[:] = np.uint64(init)
            if mode == M_FULL:
                _fold_rows(res, t, n, lanes, crc, width, canon, mb, emax, man, nan, slices)
            else:                                    # a checksum of the stage's output, so none is skipped
                crc[0] ^= np.uint64(bufs[0][t * lanes]) if mode == M_GENERATE else res[t * lanes]
            t += n
            if within + n == block_len:
                blk = (e0 + t - 1) // block_len
                for lane in range(lanes):
                    out[blk, lane] = crc[lane]


# one compiled kernel per golden row kernel, each with golden's kernel a global: numba does not cache a
# kernel that takes another as an argument, and compiling one per family compiles only what is used


@njit(**JIT)
def check_fda(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, K, fmts, vtab,
              etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out):
    check_blocks(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, fused.fda_rows,
                 K, fmts, vtab, etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out)


@njit(**JIT)
def check_gdfs(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, K, fmts, vtab,
               etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out):
    check_blocks(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, fused.gdfs_rows,
                 K, fmts, vtab, etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out)


@njit(**JIT)
def check_gdfs_int(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, K, fmts,
                   vtab, etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out):
    check_blocks(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win,
                 gdfs_int.gdfs_int_rows, K, fmts, vtab, etab, prm, order, width, canon, man_bits, exp_bits, nan, init,
                 slices, mode, out)


@njit(**JIT)
def check_fdrda(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, K, fmts, vtab,
                etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out):
    check_blocks(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, amd.fdrda_rows,
                 K, fmts, vtab, etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out)


@njit(**JIT)
def check_fdrda_int(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, K, fmts,
                    vtab, etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out):
    check_blocks(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win,
                 amd_int.fdrda_int_rows, K, fmts, vtab, etab, prm, order, width, canon, man_bits, exp_bits, nan, init,
                 slices, mode, out)


@njit(**JIT)
def check_gps(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, K, fmts, vtab,
              etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out):
    check_blocks(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, gps.gps_rows,
                 K, fmts, vtab, etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out)


@njit(**JIT)
def check_sfma(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, K, fmts, vtab,
               etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out):
    check_blocks(first_block, blocks, block_len, lanes, nw, keys, kind, tab, bounds, isz, pieces, win, sfma.sfma_rows,
                 K, fmts, vtab, etab, prm, order, width, canon, man_bits, exp_bits, nan, init, slices, mode, out)


def kernel_of(rows):
    """The fused kernel that inlines golden's row kernel ``rows`` (the one golden.kernels' plan of an
    instruction chose: a family's, or its integer-lane kernel).  The register-path kernels of a
    shape (golden.kernels.amd_fp8's fp8 GFDRDA, fdrda_float's f16 and bf16 FDRDA, fda_float's f16 FDA,
    fda_fp8's E4M3 FDA) are checked through their family's kernel (``golden.kernels.family_kernel``), bit for bit the
    same results, so that the self-test compiles no fused kernel per shape."""
    rows = kernels.family_kernel(rows)
    return {fused.fda_rows: check_fda, fused.gdfs_rows: check_gdfs, gdfs_int.gdfs_int_rows: check_gdfs_int,
            amd.fdrda_rows: check_fdrda, amd_int.fdrda_int_rows: check_fdrda_int, gps.gps_rows: check_gps,
            sfma.sfma_rows: check_sfma}[rows]
