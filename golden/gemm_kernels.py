"""GEMM-level compiled kernels: a tile of outputs' whole K loop, promotions and split-K slices in one call.

:func:`golden.gemm.gemm`'s rows route calls ``golden.dot_add`` once per k-step on a tile of outputs, with
each step's operands repeated to the tile's rows, so every element is decoded again for every output
it meets.  Here A and B are decoded once per GEMM (FDA: each element's signed significand and
exponent, as :mod:`golden.kernels.fused_int` decodes it; GDFS: its exact value in integer units), and
each dot-add of a tile is :mod:`golden.kernels.fused_int`'s arithmetic on those decoded elements: the
maximum exponent with the e_zero rule, alignment by a right shift of the magnitude, one exact integer
sum, the same rounding (:func:`golden.kernels.fused_int.round_block`).  The accumulator stays in the
kernel between k-steps; promotion adds (and group scales) are IEEE binary32 operations of the CPU,
which round as :func:`golden.fma.fma_f32` does (a NaN result made the canonical NaN).  Split-K
slices come back as fp32 partials; their reduction and the epilogue stay in :mod:`golden.gemm`.

:func:`route` says which designs take this path: on the integer-lane fast path
(``golden.kernels.spec.fast_kind``), NVIDIA's FDA family (HGMMA, QGMMA, HMMA, UTCHMMA, UTCQMMA, TF32,
UE8M0 block scales) with an f32, f16 or bf16 accumulator, and GDFS (block-scaled FP4: NVFP4, MXF4);
and on the row kernels' float64 steps, on products of the operands decoded once, CDNA3's FDRDA and
GFDRDA (``amd.fdrda_rows``) and FDA off the integer lanes without block scales (``fused.fda_rows``);
and in binary32 SFMA (``sfma.rows32``) and GPS (``gps.gps_rows``).  Everything else (designs no
compiled row kernel computes), and any integer-lane FDA GEMM whose A, B or block scales hold a NaN or
an infinity, runs on the rows route, and the logger ``golden.gemm`` says so at DEBUG level.
"""

from __future__ import annotations

import contextlib
import enum
import os

import numpy as np

from .formats import to_float
from .kernels import spec as S

__all__ = ["Route", "planted_fault", "resolve_threads", "route"]

TILE_M = 32                           # A rows of a tile
TILE_N = 256                          # B columns of a tile: the vector loops run across them (longer loops: faster)
_FAULT = [0]


class Route(enum.StrEnum):
    """How :func:`golden.gemm.gemm` computes ``A @ B``."""

    AUTO = "auto"          # tiles where route() allows, else rows
    TILES = "tiles"        # this module's GEMM-level kernels (a ValueError where they do not apply)
    ROWS = "rows"          # one golden.dot_add call per k-step over a tile of outputs: the reference


@contextlib.contextmanager
def planted_fault():
    """Test only: the tile kernels' final rounding of every dot-add goes wrong while inside (the
    round bit misread, as :func:`golden.kernels.planted_fault` does to the row kernels)."""
    _FAULT[0] = 1
    try:
        yield
    finally:
        _FAULT[0] = 0


def resolve_threads(threads=None, environ=None, affinity=None) -> int:
    """Threads a GEMM runs on: ``threads`` when given (an integer >= 1), else the cores of the
    process's CPU affinity, capped by ``NUMBA_NUM_THREADS`` when that is set.  ``environ`` and
    ``affinity`` (a count) stand in for ``os.environ`` and ``len(os.sched_getaffinity(0))`` in tests."""
    from .options import is_whole
    if threads is not None:
        if not is_whole(threads) or threads < 1:
            raise ValueError(f"threads must be an integer >= 1 (threads over output tiles), got {threads!r}")
        return int(threads)
    if affinity is None:
        try:
            affinity = len(os.sched_getaffinity(0))
        except AttributeError:                          # not Linux
            affinity = os.cpu_count() or 1
    env = os.environ if environ is None else environ
    text = (env.get("NUMBA_NUM_THREADS") or "").strip()
    if text:
        try:
            cap = int(text)
        except ValueError:
            cap = 0
        if cap < 1:
            raise ValueError(f"NUMBA_NUM_THREADS={text!r}: valid: a whole number of threads, 1 or more "
                             "(or unset: one per core)")
        affinity = min(affinity, cap)
    return max(1, int(affinity))


def route(ins, kernel) -> tuple[Route, str]:
    """``(Route.TILES, why)`` when the tile kernels compute ``ins`` under ``kernel`` (operands
    without NaN or infinity, checked per call), else ``(Route.ROWS, why not)``."""
    from .api import jit_disabled
    from .descriptors import KernelCode
    from .kernels import available, handles
    from .kernels.sfma import fma_is_exact
    dp = ins.datapath
    if not available() or jit_disabled():
        return Route.ROWS, "numba is not available (or NUMBA_DISABLE_JIT is set)"
    code = S.kernel_code(dp.params)
    if handles(dp) and code == KernelCode.SFMA and all(f.name == "f32" for f in dp.formats):
        return Route.TILES, f"{ins.name}: SFMA in binary32, the K loop compiled per tile"
    if handles(dp) and code == KernelCode.GPS and dp.formats[2].name == dp.formats[3].name == "f32":
        g = int(_tables(ins)[3][S.P_GROUP])
        if g & (g - 1) == 0 and dp.k % g == 0:      # pairs never straddle a group (gps_rows pairs a row's products)
            return Route.TILES, f"{ins.name}: GPS in binary32, the K loop compiled per tile"
    if not handles(dp) or code not in (KernelCode.FDA, KernelCode.GDFS, KernelCode.FDRDA, KernelCode.GFDRDA):
        return Route.ROWS, f"{ins.name}'s algorithm ({ins.algorithm}) has no GEMM-level kernel"
    prm = _tables(ins)[3]
    amd = code in (KernelCode.FDRDA, KernelCode.GFDRDA)
    fda64 = code == KernelCode.FDA and prm[S.P_FAST] == S.FAST_NONE
    if fda64 and (prm[S.P_SCALED] or prm[S.P_FLUSH]):
        return Route.ROWS, (f"{ins.name} is not on the integer-lane FDA path (golden.kernels.spec.fast_kind) "
                            "and its float64 path's block scales or flushes have no GEMM-level kernel")
    if not (amd or fda64) and prm[S.P_FAST] not in (S.FAST_FDA, S.FAST_GDFS):
        return Route.ROWS, (f"{ins.name} is not on the integer-lane FDA or GDFS path "
                            "(golden.kernels.spec.fast_kind)")
    if dp.formats[3].name not in ("f32", "f16", "bf16"):
        return Route.ROWS, f"{ins.name} accumulates in {dp.formats[3].name}; the tile kernels take f32, f16, bf16"
    if dp.k % int(prm[S.P_L]):
        return Route.ROWS, f"{ins.name}: K={dp.k} is not whole passes of {int(prm[S.P_L])}"
    if kernel.scaling == "group" and kernel.scale_fma and not fma_is_exact():
        return Route.ROWS, "this machine's compiled fma does not round once (group scales need it)"
    if amd or fda64:
        return Route.TILES, f"{ins.name}: {code.name} in float64 on decoded operands, the K loop compiled per tile"
    kind = "GDFS" if prm[S.P_FAST] == S.FAST_GDFS else "FDA"
    return Route.TILES, f"{ins.name}: {kind} in integer lanes, the K loop compiled per tile"


def _tables(ins):
    dp = ins.datapath
    return S.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)


def has_specials(fmt, bits) -> bool:
    """Whether any pattern of ``bits`` is a NaN or an infinity of ``fmt`` (those run the rows route)."""
    return not bool(np.isfinite(to_float(fmt, bits)).all())


# ---------------------------------------------------------------------------- the driver

class Plan:
    """One GEMM's operands decoded once for the tile kernels (A's arrays ``[M, Kp]``, B's ``[Kp, N]``),
    the design's format rows, tables and parameters, the slices as an array; ``why_not``: why the
    operands must take the rows route after all (a NaN or infinity on the integer-lane FDA path)."""

    def __init__(self, prob):
        from .descriptors import KernelCode
        from .kernels import fused_int as FI
        from .kernels import product_order
        ins, kernel = prob.ins, prob.kernel
        self.fmts, self.vtab, self.etab, prm = _tables(ins)
        self.prob, self.prm = prob, prm.copy()
        self.prm[S.P_FAULT] = _FAULT[0]
        self.drows = FI.decode_rows(self.fmts)
        self.order = product_order(ins.datapath.params, ins.k)
        self.slices = np.array([[r.start, r.stop] for r in prob.slices], np.int64)
        self.promotion = kernel.promotion or 0
        self.scaling = kernel.scaling == "group"
        empty = np.zeros((0, 0), np.uint32)
        self.gsa = prob.sa.astype(np.uint32) if self.scaling else empty
        self.gsb = prob.sb_t.astype(np.uint32) if self.scaling else empty
        self.why_not = None
        code = S.kernel_code(ins.datapath.params)
        if code == KernelCode.GPS:
            self.kind = "gps"
            self.a_ops, self.b_ops = self._decode_gps(prob)
        elif code == KernelCode.SFMA:                  # f32 words as they are
            self.kind = "sfma"
            self.a_ops = (np.ascontiguousarray(prob.A, np.uint32),)
            self.b_ops = (np.ascontiguousarray(prob.Bt.T, np.uint32),)
        elif code in (KernelCode.FDRDA, KernelCode.GFDRDA) or prm[S.P_FAST] == S.FAST_NONE:
            self.kind, self.amd = "float", code != KernelCode.FDA
            self.a_ops, self.b_ops = self._decode_float(prob)
        elif prm[S.P_FAST] == S.FAST_GDFS:
            self.kind = "gdfs"
            self.a_ops, self.b_ops = self._decode_gdfs(prob)
        else:
            self.kind = "fda"
            self.a_ops, self.b_ops = self._decode_fda(prob)

    def _decode_fda(self, prob) -> tuple:
        """Signed significands and exponents (``gemm_tiles.decode``), UE8M0 block scales' exponents
        folded into the exponents."""
        from .kernels import fused_int as FI
        from .kernels import gemm_tiles
        ins, Kp = prob.ins, prob.steps * prob.ins.k
        da, db, ds = self.drows[S.A], self.drows[S.B], self.drows[S.S]
        G = max(int(self.prm[S.P_F]) - int(da[FI.D_MB]) - int(db[FI.D_MB]), 0)
        extra_a, extra_b, block = np.zeros((prob.M, 1), np.int64), np.zeros((1, prob.N), np.int64), Kp
        if prob.kernel.scaling == "block":
            if has_specials(ins.scale_format, prob.sa) or has_specials(ins.scale_format, prob.sb_t):
                self.why_not = "a block scale is NaN (the rows route classifies it)"
            extra_a = (prob.sa.astype(np.int64) & ds[FI.D_VMASK]) - ds[FI.D_BIAS]
            extra_b = np.ascontiguousarray(((prob.sb_t.astype(np.int64) & ds[FI.D_VMASK]) - ds[FI.D_BIAS]).T)
            block = ins.block_size
        SA, EA = np.empty((prob.M, Kp), np.int32), np.empty((prob.M, Kp), np.int32)
        SB, EB = np.empty((Kp, prob.N), np.int32), np.empty((Kp, prob.N), np.int32)
        if gemm_tiles.decode(prob.A, da, G, extra_a, block, True, SA, EA) or \
                gemm_tiles.decode(prob.Bt.T, db, 0, extra_b, block, False, SB, EB):
            self.why_not = "A or B holds a NaN or an infinity (the rows route classifies them)"
        return (SA, EA), (SB, EB)

    def _decode_gdfs(self, prob) -> tuple:
        """Exact values in integer units (``gemm_tiles.decode_values``); the block scales' fields."""
        from .kernels import gemm_tiles
        Kp = prob.steps * prob.ins.k
        VA, VB = np.empty((prob.M, Kp), np.int64), np.empty((Kp, prob.N), np.int64)
        gemm_tiles.decode_values(prob.A, self.drows[S.A], VA)
        gemm_tiles.decode_values(prob.Bt.T, self.drows[S.B], VB)
        sb = tuple(np.ascontiguousarray(x.T) for x in _gdfs_scales(self.drows[S.S], prob.sb_t))
        return (VA, *_gdfs_scales(self.drows[S.S], prob.sa)), (VB, *sb)

    def _decode_gps(self, prob) -> tuple:
        """GPS's flushed binary32 operands (``gps.decode_span``): A ``[M, Kp]``, B ``[Kp, N]``."""
        from .kernels import _operand, gemm_tiles
        out = []
        for x, f in ((prob.A, S.A), (np.ascontiguousarray(prob.Bt.T), S.B)):
            V = np.empty(x.shape, np.float32)
            raw, isz = _operand(np.ascontiguousarray(x))
            gemm_tiles.decode_gps(raw, isz, self.fmts, self.vtab, self.etab, f, x.size, V.reshape(-1))
            out.append((V,))
        return tuple(out)

    def _decode_float(self, prob) -> tuple:
        """float64 values and exponents as the row kernels read them (``amd.operand_span`` for FDRDA,
        ``fused.fill_products``' tables for FDA)."""
        from .kernels import _operand, gemm_tiles
        out = []
        for x, f in ((prob.A, S.A), (np.ascontiguousarray(prob.Bt.T), S.B)):
            V, X = np.empty(x.shape), np.empty(x.shape, np.int64)
            if self.amd:
                raw, isz = _operand(np.ascontiguousarray(x))
                gemm_tiles.decode_fdrda(raw, isz, self.fmts, self.vtab, self.etab, f, x.size, V.reshape(-1),
                                        X.reshape(-1))
            else:
                gemm_tiles.decode_fda64(x, self.fmts, self.vtab, self.etab, f, V, X)
            out.append((V, X))
        return tuple(out)

    def parts(self, rows: slice, cols: slice, cinit) -> np.ndarray:
        """``[slices, rows, cols]`` fp32 bit patterns of the tile's slices (``cinit``: C in the
        accumulator, [rows, cols] uint32, or None)."""
        from .kernels import gemm_tiles as T
        mt, nt = rows.stop - rows.start, cols.stop - cols.start
        a = tuple(x[rows] for x in self.a_ops)
        b = tuple(np.ascontiguousarray(x[:, cols]) for x in self.b_ops)
        ci = np.zeros((0, 0), np.uint32) if cinit is None else np.ascontiguousarray(cinit, np.uint32)
        gsa = self.gsa[rows] if self.scaling else self.gsa
        gsb = np.ascontiguousarray(self.gsb[cols]) if self.scaling else self.gsb
        out = np.empty((len(self.slices), mt, nt), np.uint32)
        common = (mt, nt, self.prob.ins.k, self.slices, self.promotion, ci, gsa, gsb, self.scaling,
                  self.prob.kernel.scale_fma, self.fmts, self.drows, self.prm, out)
        if self.kind == "fda":
            T.tile_fda(*a, *b, *common)
        elif self.kind == "gdfs":
            T.tile_gdfs(a[0], b[0], a[1:] + b[1:], *common)
        elif self.kind == "sfma":
            T.tile_sfma(a[0], b[0], *common)
        elif self.kind == "gps":
            T.tile_gps(a[0], b[0], *common)
        else:
            T.tile_float(*a, *b, *common, self.vtab, self.etab, self.order, self.amd)
        return out


def _gdfs_scales(ds, bits) -> tuple:
    """Block scales as ``fused_int.group_scales`` reads them: significand, exponent, NaN flag
    (``ds``: the scale format's decode row; its ``D_INF`` column holds 1 - subnormals)."""
    from .kernels import fused_int as FI
    x = bits.astype(np.int64) & ds[FI.D_VMASK]
    mb, lo = ds[FI.D_MB], ds[FI.D_INF]
    f = (x >> mb) & ds[FI.D_EMASK]
    g = (x & ((1 << mb) - 1)) | (((f != 0) | (lo == 1)).astype(np.int64) << mb)
    e = np.maximum(f, 1 - lo) - ds[FI.D_BIAS]
    return g, e.astype(np.int64), ((x & ds[FI.D_NM]) == ds[FI.D_NV]).astype(np.int64)


def tiles(M: int, N: int):
    """The output tiles of the tile kernels, ``TILE_M`` rows by ``TILE_N`` columns."""
    for m0 in range(0, M, TILE_M):
        for n0 in range(0, N, TILE_N):
            yield slice(m0, min(m0 + TILE_M, M)), slice(n0, min(n0 + TILE_N, N))
