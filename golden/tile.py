"""A whole tile as a tile engine computes it: ``D = C + A @ B`` of any ``M x N`` whose k is ``S`` times
the instruction's K, its k-slices chained through the accumulator.

A tile engine with an internal K loop (and a GPU running consecutive instructions on one accumulator)
computes each output element as a chain: k-slice 0's dot-add from ``C``, k-slice 1's from that
result, and so on, every dot-add the instruction's own (:func:`golden.dot_add`).  :func:`tile_mma`
is that chain over whole tiles, :func:`tile_partials` keeps the accumulator after every k-slice, and
:func:`element_traces` gives golden's stage trace of each k-slice of one output element (what a
mismatching element of a tile device is reported with).
"""

from __future__ import annotations

import numpy as np

from .api import Trace, dot_add, trace
from .catalog import Instruction

__all__ = ["slices", "tile_mma", "tile_partials", "element_traces"]


def slices(ins: Instruction, k: int) -> int:
    """The k-slices of a tile of depth ``k`` (ValueError, one line, unless a whole number of them, and
    chainable: a chain feeds d back as c, so it needs C's format to be D's)."""
    if k < 1 or k % ins.k:
        raise ValueError(f"a tile's k must be a multiple of {ins.arch} {ins.name}'s K={ins.k}, got k={k}")
    s = k // ins.k
    if s > 1 and ins.c_format != ins.d_format:
        raise ValueError(f"k={k} chains {s} k-slices of {ins.name} through the accumulator, which needs C's "
                         f"format to be D's ({ins.c_format} vs {ins.d_format})")
    return s


def _operands(ins, A, B, C, scale_A, scale_B):
    A, B, C = np.asarray(A), np.asarray(B), np.asarray(C)
    if A.ndim < 2 or B.ndim < 2 or C.ndim < 2:
        raise ValueError("a tile needs A [..., M, k], B [..., k, N] and C [..., M, N]")
    M, k = A.shape[-2:]
    k2, N = B.shape[-2:]
    if k2 != k:
        raise ValueError(f"A is {A.shape} and B is {B.shape}: their k differ")
    if C.shape[-2:] != (M, N):
        raise ValueError(f"C must be [..., {M}, {N}], got {C.shape}")
    S = slices(ins, k)
    if ins.scale_format and (scale_A is None or scale_B is None):
        raise ValueError(f"{ins.name} is block-scaled: a tile needs scale_A [..., M, k // {ins.block_size}] "
                         f"and scale_B [..., k // {ins.block_size}, N]")
    return A, B, C, S


def _slice_args(ins, A, B, scale_A, scale_B, s):
    K = ins.k
    a = A[..., :, None, s * K:(s + 1) * K]                              # [..., M, 1, K]
    b = np.swapaxes(B[..., s * K:(s + 1) * K, :], -1, -2)[..., None, :, :]    # [..., 1, N, K]
    sa = sb = None
    if ins.scale_format:
        nb = K // ins.block_size
        sa = np.asarray(scale_A)[..., :, None, s * nb:(s + 1) * nb]
        sb = np.swapaxes(np.asarray(scale_B)[..., s * nb:(s + 1) * nb, :], -1, -2)[..., None, :, :]
    return a, b, sa, sb


def tile_partials(ins: Instruction, A, B, C, scale_A=None, scale_B=None) -> list:
    """The accumulator after each k-slice, ``[D_0, D_1, ..., D_{S-1}]`` (the last is D), each
    ``[..., M, N]`` bit patterns of D's format."""
    A, B, C, S = _operands(ins, A, B, C, scale_A, scale_B)
    acc, out = C, []
    for s in range(S):
        a, b, sa, sb = _slice_args(ins, A, B, scale_A, scale_B, s)
        acc = dot_add(ins, a, b, acc, sa, sb)
        out.append(acc)
    return out


def tile_mma(ins: Instruction, A, B, C, scale_A=None, scale_B=None) -> np.ndarray:
    """``D [..., M, N]``: ``C + A @ B`` with ``A [..., M, S*K]``, ``B [..., S*K, N]``, ``C [..., M, N]``
    (scales ``[..., M, S*K // block]`` and ``[..., S*K // block, N]``), the k-slices chained through
    the accumulator in order.  With one k-slice and the instruction's own M and N this is
    :func:`golden.mma`."""
    return tile_partials(ins, A, B, C, scale_A, scale_B)[-1]


def element_traces(ins: Instruction, A, B, C, i: int, j: int, scale_A=None, scale_B=None) -> list[Trace]:
    """golden's trace of each k-slice of output element ``(i, j)`` of one tile (``A [M, k]``,
    ``B [k, N]``, ``C [M, N]``), in order: k-slice ``s`` starts from the accumulator slice ``s - 1`` left."""
    A, B, C, S = _operands(ins, A, B, C, scale_A, scale_B)
    K, acc, out = ins.k, C[i, j], []
    for s in range(S):
        sa = sb = None
        if ins.scale_format:
            nb = K // ins.block_size
            sa, sb = np.asarray(scale_A)[i, s * nb:(s + 1) * nb], np.asarray(scale_B)[s * nb:(s + 1) * nb, j]
        t = trace(ins, A[i, s * K:(s + 1) * K], B[s * K:(s + 1) * K, j], acc, sa, sb)
        out.append(t)
        acc = np.asarray(t.d, np.uint64)
    return out
