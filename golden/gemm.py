"""A whole GEMM as a GPU library composes it from one instruction's dot-adds.

``D = convert(alpha * A @ B + beta * C + bias)`` where ``A @ B`` is built the way a
library kernel builds it (:class:`Kernel`): the instruction's own dot-adds chained
along K through the accumulator (measured behaviour of the instruction, from
:func:`golden.dot_add`), and around them the library's composition (a model):
split-K slices and their reduction, promotion of the tensor-core partial into an
fp32 accumulator every ``n`` k-steps, per-group fp32 scales applied on those
promotion adds, and the epilogue.

Every fp32 operation outside the instruction (promotion adds, group-scale
multiplies, split-K reduction adds, the epilogue) is a correctly rounded IEEE
binary32 operation, round-to-nearest-even, subnormals kept: each one is
:func:`golden.fma.fma_f32` (an add is ``fma(x, 1, y)``, a multiply ``fma(x, y, -0)``,
both exact identities), which is tested against an exact oracle and Berkeley
SoftFloat.  Nothing depends on the platform's float32 unit or its FTZ/DAZ flags.
Conversion to the output format is :func:`golden.formats.from_float` on the exact
value (one rounding, in the mode the kernel names).
"""

from __future__ import annotations

import enum
import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

import numpy as np

from . import gemm_kernels as GK
from .algorithms import Params
from .api import _instruction, _narrow_bits
from .catalog import CATALOG, Instruction, canonical_arch
from .fma import fma_f32
from .formats import ROUNDING_MODES, from_float, get_format, to_float
from .options import is_whole
from .rules import Rounding

__all__ = ["Kernel", "PRESETS", "Reduction", "Scaling", "gemm", "gemm_float", "instruction_for", "kernel_preset"]

F32 = get_format("f32")
LOG = logging.getLogger("golden.gemm")
ONE32 = np.uint32(0x3F800000)
NEG_ZERO32 = np.uint32(0x80000000)


class Reduction(enum.StrEnum):
    """How split-K partial results (fp32) are summed."""

    SEQUENTIAL = "sequential"      # ((p0 + p1) + p2) + ...  in slice order
    TREE = "tree"                  # pairwise: (p0 + p1) + (p2 + p3), ... level by level
    ATOMIC = "atomic"              # 0 + p[order[0]] + p[order[1]] ... (atomicAdd onto a zeroed buffer)


class Scaling(enum.StrEnum):
    """Which scale factors the kernel applies."""

    NONE = "none"
    BLOCK = "block"                # the instruction's own block scales (MX e8m0 / 32, NVFP4 e4m3 / 16)
    GROUP = "group"                # fp32 per-group scales along K, applied on the promotion adds


@dataclass(frozen=True)
class Kernel:
    """How a library kernel composes an instruction's dot-adds into a GEMM.

    Members
    -------
    name : str
        A label for tables and plots.
    split_k : int
        Slices of the K loop computed independently (>= 1); slice ``s`` runs k-steps
        ``[s * per, (s + 1) * per)`` with ``per = ceil(steps / split_k)`` rounded up to a multiple
        of ``split_unit``.
    split_unit : int
        k-steps of one tile of K (CUTLASS rounds a slice to whole tiles: ``gemm_k_size``); >= 1.
    reduction : Reduction or str
        How the fp32 slice results are summed: ``sequential`` (slice order), ``tree``
        (pairwise, level by level; an odd one out carried up) or ``atomic`` (added in
        ``atomic_order`` onto a zeroed fp32 buffer, as ``atomicAdd`` does: ``+0 + p``).
    atomic_order : tuple of int, optional
        A permutation of ``range(split_k)``: the order in which the atomics land.
        Required with ``reduction="atomic"`` and only then.
    promotion : int or None
        Every ``promotion`` k-steps the tensor-core partial is added into an fp32
        accumulator by an fp32 RNE add and restarted from +0 (also at the end of each
        slice).  None: the accumulator stays in the tensor core for the whole slice.
    scaling : Scaling or str
        ``none``; ``block``: the instruction's own block scales (the instruction must be
        block-scaled); ``group``: fp32 scales per group of ``group_k`` elements of K,
        multiplied together and applied to each promoted partial (needs
        ``promotion * K_instruction == group_k``).
    group_k : int
        K elements per group scale (``scaling="group"``).
    group_n : int
        Columns of B per B scale: 128 for DeepSeek-V3's 128x128 weight blocks, 1 for
        per-column (1x128) scales.  A's scales are always per row (1 x group_k).
    scale_fma : bool
        Apply a group scale as one fused ``fma(sa*sb, partial, acc)`` (True) or as a
        rounded product then an add (False).
    out_format : str or None
        Format of D (and of C and bias); None: the instruction's D format.
    out_rounding : str
        Rounding of the conversion to ``out_format``: ``RNE``, ``RZ``, ``RU`` or ``RD``.
    operand_rounding : str or None
        For TF32 instructions: round the f32 operand words to TF32 in this mode before the MMA
        (a library's ``cvt`` to tf32); None: the words go in as they are and the tensor core
        ignores their low 13 bits.
    c_accumulate : bool
        False (default): C enters in the epilogue, ``fma(alpha, acc, beta * C)``.  True: C is loaded
        into the accumulator before the K loop, as an instruction chain with C does (the MMA's own
        ``C = D`` form): C is the ``c`` operand of the first dot-add of the first split-K slice,
        converted (RNE) from the output format to the instruction's C format; with ``promotion`` the
        fp32 main accumulator starts at C (converted to fp32) and the tensor-core partial at +0; with
        ``split_k > 1`` only slice 0 starts at C, the others at +0.  The epilogue then adds no C, so
        :func:`gemm` requires ``alpha == 1`` and ``beta == 1`` (and C).
    source : str
        Where the composition is documented publicly.
    """

    name: str = "custom"
    split_k: int = 1
    split_unit: int = 1
    reduction: Reduction | str = Reduction.SEQUENTIAL
    atomic_order: tuple | None = None
    promotion: int | None = None
    scaling: Scaling | str = Scaling.NONE
    group_k: int = 128
    group_n: int = 128
    scale_fma: bool = True
    out_format: str | None = None
    out_rounding: Rounding = Rounding.RNE
    operand_rounding: Rounding | None = None
    c_accumulate: bool = False
    source: str = ""

    def __post_init__(self):
        _check_int(self.split_k, "split_k", 1)
        _check_int(self.split_unit, "split_unit", 1)
        _check_int(self.group_k, "group_k", 1)
        _check_int(self.group_n, "group_n", 1)
        if self.promotion is not None:
            _check_int(self.promotion, "promotion", 1, "or None (no promotion)")
        object.__setattr__(self, "reduction", _enum(Reduction, self.reduction, "reduction"))
        object.__setattr__(self, "scaling", _enum(Scaling, self.scaling, "scaling"))
        self._check_atomic_order()
        if self.scaling is Scaling.GROUP and self.promotion is None:
            raise ValueError("Kernel.scaling='group' applies the scales on the promotion adds: "
                             "set promotion to the k-steps per group (group_k / the instruction's K)")
        if self.out_format is not None:
            try:
                object.__setattr__(self, "out_format", get_format(self.out_format).name)
            except ValueError as e:
                raise ValueError(f"Kernel.out_format: {e}") from None
        if self.operand_rounding is not None and self.operand_rounding not in ROUNDING_MODES:
            raise ValueError(f"Kernel.operand_rounding must be None or one of {', '.join(ROUNDING_MODES)}, "
                             f"got {self.operand_rounding!r}")
        if self.out_rounding not in ROUNDING_MODES:
            raise ValueError(f"Kernel.out_rounding must be one of {', '.join(ROUNDING_MODES)}, "
                             f"got {self.out_rounding!r}")
        object.__setattr__(self, "out_rounding", Rounding(self.out_rounding))     # text read as its word
        if self.operand_rounding is not None:
            object.__setattr__(self, "operand_rounding", Rounding(self.operand_rounding))
        for flag in ("scale_fma", "c_accumulate"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"Kernel.{flag} must be True or False, got {getattr(self, flag)!r}")

    def _check_atomic_order(self):
        order = self.atomic_order
        if self.reduction is not Reduction.ATOMIC:
            if order is not None:
                raise ValueError(f"Kernel.atomic_order is only for reduction='atomic' "
                                 f"(reduction is {self.reduction.value!r}); leave it None")
            return
        if order is None or sorted(order) != list(range(self.split_k)) or \
                not all(is_whole(i) for i in order):
            raise ValueError(f"Kernel.atomic_order must be a permutation of range(split_k) = "
                             f"0..{self.split_k - 1} with reduction='atomic', got {order!r}")
        object.__setattr__(self, "atomic_order", tuple(int(i) for i in order))

    def with_(self, **changes) -> Kernel:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


def _check_int(value, field: str, low: int, extra: str = ""):
    if not is_whole(value) or value < low:
        raise ValueError(f"Kernel.{field} must be an integer >= {low}{' ' + extra if extra else ''}, "
                         f"got {value!r}")


def _enum(cls, value, field: str):
    try:
        return cls(value.value if isinstance(value, enum.Enum) else value)
    except ValueError:
        valid = ", ".join(m.value for m in cls)
        raise ValueError(f"Kernel.{field} must be one of {valid}, got {value!r}") from None


CUTLASS_PROMOTION = ("CUTLASS 3.x, cutlass/gemm/collective/fp8_accumulation.hpp and the sm90 FP8 "
                     "collectives' mma_promotion_interval (default 4 MMAs; "
                     "example 54_hopper_fp8_warp_specialized_gemm)")
DEEPSEEK = ("DeepSeek-V3 Technical Report (arXiv:2412.19437), section 3.3.2: partial results promoted to "
            "FP32 on CUDA cores every N_C = 128 elements (4 WGMMAs), 1x128 activation and 128x128 weight "
            "scales multiplied in on promotion")

PRESETS: dict[str, Kernel] = {k.name: k for k in [
    Kernel("k-loop", source="the plain K loop of any tensor-core GEMM: the accumulator stays in the "
           "MMA's registers (CUTLASS 'Efficient GEMM' docs, the mainloop)"),
    Kernel("fp8-no-promotion", source="FP8 GEMM accumulating in the tensor core for all of K: "
           "CUTLASS sm90 FP8 kernels with the 'FastAccum' schedules (KernelTmaWarpSpecialized*FP8FastAccum)"),
    Kernel("fp8-promote-4", promotion=4, source=CUTLASS_PROMOTION + "; also what torch._scaled_mm (cuBLASLt, "
           "use_fast_accum=False) did at all seven shapes tried on an NVIDIA H200, measured bit for bit "
           "(docs/gemm.md, tests/golden/test_gemm_gpu.py; with use_fast_accum=True: fp8-no-promotion or split-K)"),
    Kernel("fp8-promote-128-elements-groupscaled", promotion=4, scaling="group", group_k=128, group_n=128,
           source=DEEPSEEK),
    Kernel("fp8-promote-128-elements-groupscaled-1x128", promotion=4, scaling="group", group_k=128, group_n=1,
           source=DEEPSEEK + " (both operands 1x128, as for the activation gradients)"),
    Kernel("splitk-4-sequential", split_k=4, source="CUTLASS split-K serial/parallel reduction "
           "(cutlass/reduction/kernel/reduce_split_k.h: partials summed in slice order)"),
    Kernel("splitk-4-tree", split_k=4, reduction="tree", source="a pairwise (tree) reduction of split-K "
           "partials, as in stream-K fix-up trees (Osama et al., 'Stream-K', PPoPP 2023)"),
    Kernel("splitk-4-atomic-reversed", split_k=4, reduction="atomic", atomic_order=(3, 2, 1, 0),
           source="split-K partials added onto a zeroed fp32 buffer in the order the slices finish, as CUTLASS 3.x's "
           "stream-K/split-K tile scheduler does with ReductionMode::Nondeterministic; the order is each run's, "
           "this preset fixes one"),
    Kernel("splitk-3-unit-4", split_k=3, split_unit=4, source="split-K in 3 slices of whole 64-element tiles "
           "(4 k-steps of K=16), reduced in fp32: what torch.matmul (cuBLAS) did for bf16 and fp16 at 128x128x4096 "
           "on an NVIDIA H200, measured bit for bit (tests/golden/test_gemm_gpu.py, docs/gemm.md); "
           "other shapes differ"),
    Kernel("block-scaled", scaling="block", source="MX (OCP Microscaling v1.0: e8m0 per 32) and NVFP4 "
           "(e4m3 per 16 plus a global fp32 scale in alpha) on the instruction's own block scales: "
           "PTX ISA, tcgen05.mma kind::mxf8f6f4 / kind::mxf4nvf4"),
]}


def kernel_preset(name: str) -> Kernel:
    """The preset ``name`` (one clear ValueError listing the valid names)."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown kernel preset {name!r}; valid: {', '.join(PRESETS)}") from None


# the forms a library uses first: warpgroup / tcgen05 before warp-level mma, AMD's 32x32 blocks first
FAMILY_ORDER = ("UTCHMMA", "UTCQMMA", "HGMMA", "QGMMA", "HMMA", "QMMA", "MMA", "v_mfma")


def instruction_for(arch: str, fa: str, fb: str) -> Instruction:
    """The tensor-core instruction of ``arch`` for A in ``fa`` and B in ``fb`` accumulating in fp32
    (unscaled; first by :data:`FAMILY_ORDER`, then one block, the longest K, the largest tile); one clear
    ValueError if none."""
    arch = canonical_arch(arch)
    a_fmt = "tf32" if fa == "f32" else fa
    b_fmt = "tf32" if fb == "f32" else fb
    found = [i for i in CATALOG if i.arch == arch and i.a_format == a_fmt and i.b_format == b_fmt
             and i.c_format == "f32" and i.d_format == "f32" and not i.scale_format and i.native]
    if not found:
        raise ValueError(f"{arch} has no tensor-core instruction for {a_fmt} x {b_fmt} accumulating in f32")
    rank = {f: n for n, f in enumerate(FAMILY_ORDER)}
    # then one block per instruction, the longest K (fewest instructions per k-step), the largest tile
    return min(found, key=lambda i: (rank.get(i.family, len(rank)), i.blocks, -i.k, -i.m * i.n))


# ---------------------------------------------------------------------------- fp32 arithmetic

def f32_add(x, y) -> np.ndarray:
    """``RNE32(x + y)`` on uint32 bit patterns: ``fma(x, 1, y)`` is exactly the IEEE sum."""
    return fma_f32(x, ONE32, y)


def f32_mul(x, y) -> np.ndarray:
    """``RNE32(x * y)``: ``fma(x, y, -0)`` is exactly the IEEE product (-0 keeps a +0 product +0)."""
    return fma_f32(x, y, NEG_ZERO32)


def _to_f32(fmt, bits) -> np.ndarray:
    """Bit patterns of ``fmt`` as f32 bit patterns (exact for every format up to f32 width)."""
    fmt = get_format(fmt)
    if fmt.name == "f32":
        return np.asarray(bits, np.uint32)
    return from_float(F32, to_float(fmt, bits)).astype(np.uint32)


def reduce_partials(parts: list, kernel: Kernel) -> np.ndarray:
    """Sum split-K slice results (fp32 bit patterns) as ``kernel.reduction`` says."""
    if kernel.reduction is Reduction.SEQUENTIAL:
        total = parts[0]
        for p in parts[1:]:
            total = f32_add(total, p)
        return total
    if kernel.reduction is Reduction.TREE:
        level = list(parts)
        while len(level) > 1:
            nxt = [f32_add(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            level = nxt + ([level[-1]] if len(level) % 2 else [])
        return level[0]
    total = np.zeros_like(parts[0])                      # the zeroed output buffer
    for i in kernel.atomic_order:
        total = f32_add(total, parts[i])
    return total


# ---------------------------------------------------------------------------- the problem

TILE = 8192                  # outputs per tile: golden.api.CHUNK_ROWS, the dot-add batch that stays in cache


class _Problem:
    """A GEMM's operands checked against the instruction and the kernel (one clear ValueError),
    K padded with zero products to a whole number of k-steps."""

    def __init__(self, ins: Instruction, kernel: Kernel, A, B, scale_A, scale_B):
        check_fits(ins, kernel)
        fa, fb = ins.formats[:2]
        A = _round_operand(fa, _narrow_bits(fa, A, "A"), kernel.operand_rounding)
        B = _round_operand(fb, _narrow_bits(fb, B, "B"), kernel.operand_rounding)
        if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0] or 0 in A.shape + B.shape:
            raise ValueError(f"gemm needs A [M, K] and B [K, N] with the same K >= 1, got A {A.shape} and B {B.shape}")
        self.ins, self.kernel = ins, kernel
        (self.M, self.K), self.N = A.shape, B.shape[1]
        self.slices = k_slices(ins, kernel, self.K)
        self.steps = self.slices[-1].stop
        Kp = self.steps * ins.k
        self.A = _pad(A, Kp, 1)
        self.Bt = np.ascontiguousarray(_pad(B, Kp, 0).T)
        self.sa = self.sb_t = None
        self._check_scaling(scale_A, scale_B)

    def _check_scaling(self, scale_A, scale_B):
        kernel = self.kernel
        if kernel.scaling is Scaling.BLOCK:
            self._block_scales(scale_A, scale_B)
        elif kernel.scaling is Scaling.GROUP:
            self._group_scales(scale_A, scale_B)
        elif scale_A is not None or scale_B is not None:
            raise ValueError(f"scale_A / scale_B given, but Kernel {kernel.name!r} has scaling='none'")

    def _block_scales(self, scale_A, scale_B):
        ins = self.ins
        nblk = -(-self.K // ins.block_size)
        want = {"scale_A": (self.M, nblk), "scale_B": (nblk, self.N)}
        sa, sb = (_scales(ins.scale_format, s, nm, want[nm]) for s, nm in ((scale_A, "scale_A"), (scale_B, "scale_B")))
        total = self.steps * ins.k // ins.block_size
        one = int(from_float(ins.scale_format, 1.0))        # scales of the zero padding: any finite value
        self.sa = _pad(sa, total, 1, one)
        self.sb_t = np.ascontiguousarray(_pad(sb, total, 0, one).T)

    def _group_scales(self, scale_A, scale_B):
        g = self.kernel
        groups = -(-self.steps // g.promotion)
        want = {"scale_A": (self.M, groups), "scale_B": (groups, -(-self.N // g.group_n))}
        sa, sb = (_scales(F32, s, nm, want[nm]) for s, nm in ((scale_A, "scale_A"), (scale_B, "scale_B")))
        self.sa = sa.astype(np.uint32)
        self.sb_t = np.ascontiguousarray(np.repeat(sb.astype(np.uint32), g.group_n, axis=1)[:, :self.N].T)


def check_fits(ins: Instruction, kernel: Kernel) -> None:
    """Whether ``kernel`` can compose ``ins``'s dot-adds (one clear ValueError), before any operand is read."""
    fc, fd = ins.formats[2:]
    if fc != fd:
        raise ValueError(f"{ins.arch} {ins.name}: C is {fc.name} and D is {fd.name}; a K loop carries D "
                         "into the next C, so it needs an instruction whose C and D formats are equal")
    if fd.storage_bits > 32:
        raise ValueError(f"{ins.arch} {ins.name}: accumulates in {fd.name}; golden.gemm models fp32 "
                         "promotion, reduction and epilogue, so the accumulator must be f32 or narrower")
    if (kernel.scaling is Scaling.BLOCK) != bool(ins.scale_format):
        raise ValueError(f"{ins.arch} {ins.name} is {'' if ins.scale_format else 'not '}block-scaled: "
                         f"use a kernel with scaling='block' {'and' if ins.scale_format else 'only with'} "
                         "a block-scaled instruction (UTCQMMA.SF, UTCOMMA, QMMA.SF ...)")
    if kernel.operand_rounding is not None and "tf32" not in (ins.a_format, ins.b_format):
        raise ValueError(f"Kernel.operand_rounding rounds f32 words to TF32; {ins.arch} {ins.name} takes "
                         f"{ins.a_format} x {ins.b_format}: leave it None")
    if kernel.scaling is Scaling.GROUP and kernel.group_k != kernel.promotion * ins.k:
        raise ValueError(f"Kernel.group_k={kernel.group_k} must equal promotion x the instruction's K "
                         f"({kernel.promotion} x {ins.k} = {kernel.promotion * ins.k}): the group "
                         "scales are applied on the promotion adds")


def k_slices(ins: Instruction, kernel: Kernel, K: int) -> list[range]:
    """The k-steps of each split-K slice for a GEMM of depth ``K`` (one clear ValueError when the
    kernel cannot slice it)."""
    steps = -(-K // ins.k)
    unit = kernel.split_unit                                 # k-steps per slice, a multiple of unit
    per = -(-(-(-steps // kernel.split_k)) // unit) * unit  # noqa: B002 (ceiling divisions, not a decrement)
    slices = [range(s * per, min((s + 1) * per, steps)) for s in range(kernel.split_k)]
    if not slices[-1]:
        raise ValueError(f"Kernel.split_k={kernel.split_k} (split_unit={unit}) leaves slices without k-steps: "
                         f"K={K} is {steps} k-steps of {ins.k}; use fewer slices")
    if kernel.scaling is Scaling.GROUP and kernel.split_k > 1 and per % kernel.promotion:
        raise ValueError(f"split-K slices of {per} k-steps cut a scale group of {kernel.promotion} "
                         "k-steps; choose split_k so that each slice holds whole groups")
    return slices


def _round_operand(fmt, bits: np.ndarray, mode: str | None) -> np.ndarray:
    """TF32 operand words rounded to TF32 in ``mode`` (the f32 value, one rounding); others as they are."""
    if mode is None or fmt.name != "tf32":
        return bits
    return from_float(fmt, to_float(F32, bits.astype(np.uint32)), mode).astype(np.uint32)


def _pad(x: np.ndarray, size: int, axis: int, value: int = 0) -> np.ndarray:
    extra = size - x.shape[axis]
    if not extra:
        return x
    width = [(0, 0), (0, 0)]
    width[axis] = (0, extra)
    return np.pad(x, width, constant_values=value)


def _scales(fmt, s, what: str, shape: tuple) -> np.ndarray:
    if s is None:
        raise ValueError(f"{what} is required by this kernel: {get_format(fmt).name}, shape {list(shape)}")
    bits = _narrow_bits(fmt, s, what)
    if bits.shape != shape:
        raise ValueError(f"{what} must have shape {list(shape)} ({get_format(fmt).name}), got {list(bits.shape)}")
    return bits


# ---------------------------------------------------------------------------- one tile of outputs

def _step(prob: _Problem, rows: slice, cols: slice, s: int, acc: np.ndarray, dot_add) -> np.ndarray:
    """One k-step on a tile: ``acc[m, n] = dot_add(A[m, step], B[step, n], acc[m, n])`` (flat rows)."""
    k = prob.ins.k
    ks = slice(s * k, (s + 1) * k)
    nm, nn = rows.stop - rows.start, cols.stop - cols.start
    a = np.repeat(prob.A[rows, ks], nn, axis=0)
    b = np.tile(prob.Bt[cols, ks], (nm, 1))
    sa = sb = None
    if prob.kernel.scaling is Scaling.BLOCK:
        nb = k // prob.ins.block_size
        bs = slice(s * nb, (s + 1) * nb)
        sa = np.repeat(prob.sa[rows, bs], nn, axis=0)
        sb = np.tile(prob.sb_t[cols, bs], (nm, 1))
    return dot_add(prob.ins, a, b, acc, sa, sb)


def _promote(prob: _Problem, rows, cols, main, partial, first_step: int) -> np.ndarray:
    """``main + partial`` in fp32 (times the group's scales with scaling='group')."""
    kernel = prob.kernel
    part32 = _to_f32(prob.ins.d_format, partial)
    if kernel.scaling is not Scaling.GROUP:
        return f32_add(main, part32)
    g = first_step // kernel.promotion
    nn = cols.stop - cols.start
    scale = f32_mul(np.repeat(prob.sa[rows, g], nn), np.tile(prob.sb_t[cols, g], rows.stop - rows.start))
    if kernel.scale_fma:
        return fma_f32(scale, part32, main)
    return f32_add(main, f32_mul(scale, part32))


def _slice(prob: _Problem, rows, cols, steps: range, dot_add, c_init=None) -> np.ndarray:
    """One split-K slice of a tile: the K loop (with promotions), as fp32 bit patterns.  ``c_init``
    (``Kernel.c_accumulate``, slice 0 only): C, already in the accumulator's format (the instruction's C
    format without promotion, fp32 with it), where the chain starts instead of +0."""
    n_out = (rows.stop - rows.start) * (cols.stop - cols.start)
    fd = prob.ins.formats[3]
    zero = np.zeros(n_out, fd.dtype)
    acc, main, since = zero, np.zeros(n_out, np.uint32), None
    n = prob.kernel.promotion
    if c_init is not None:
        if n is None:
            acc = c_init.astype(fd.dtype)
        else:
            main = c_init.astype(np.uint32)
    for i, s in enumerate(steps):
        since = s if since is None else since
        acc = _step(prob, rows, cols, s, acc, dot_add)
        if n is not None and ((i + 1) % n == 0 or i == len(steps) - 1):
            main, acc, since = _promote(prob, rows, cols, main, acc, since), zero, None
    return main if n is not None else _to_f32(fd, acc)


def _tile(prob: _Problem, rows: slice, cols: slice, dot_add, c_init=None) -> np.ndarray:
    """fp32 ``A @ B`` of one tile (``C + A @ B`` with ``c_init``): every slice, then the reduction."""
    parts = [_slice(prob, rows, cols, steps, dot_add, c_init if i == 0 else None)
             for i, steps in enumerate(prob.slices)]
    return parts[0] if len(parts) == 1 else reduce_partials(parts, prob.kernel)


def _tiles(M: int, N: int):
    nb = min(N, TILE)
    mb = max(1, TILE // nb)
    for m0 in range(0, M, mb):
        for n0 in range(0, N, nb):
            yield slice(m0, min(m0 + mb, M)), slice(n0, min(n0 + nb, N))


# ---------------------------------------------------------------------------- epilogue and entry points

def _epilogue(kernel: Kernel, out_fmt, acc32, alpha32, beta32, c, bias) -> np.ndarray:
    """``convert(alpha * acc + beta * C + bias)``: CUTLASS LinearCombination's order (``beta * C`` rounded,
    then one fma with ``alpha * acc``; no source read when beta is 0), then the bias add, then one
    rounding to the output format."""
    if c is None:
        t = f32_mul(alpha32, acc32)
    else:
        t = fma_f32(alpha32, acc32, f32_mul(beta32, _to_f32(out_fmt, c)))
    if bias is not None:
        t = f32_add(t, _to_f32(out_fmt, bias))
    if out_fmt.name == "f32":
        return t
    return from_float(out_fmt, to_float(F32, t), kernel.out_rounding)


def _resolve(instr, arch, params) -> Instruction:
    ins = _instruction(instr, arch)
    if params is None:
        return ins
    if isinstance(params, Params):
        return ins.with_params(params)
    if isinstance(params, Mapping):
        known = {f.name for f in fields(Params)}
        bad = sorted(set(params) - known)
        if bad:
            raise ValueError(f"params: unknown field(s) {', '.join(bad)}; valid: {', '.join(sorted(known))}")
        return ins.with_params(**params)
    raise ValueError(f"params must be a golden.Params or a mapping of fields to change, got {type(params).__name__}")


def _kernel(kernel) -> Kernel:
    if kernel is None:
        return PRESETS["k-loop"]
    if isinstance(kernel, str):
        return kernel_preset(kernel)
    if not isinstance(kernel, Kernel):
        raise ValueError(f"kernel must be a golden.gemm.Kernel or a preset name ({', '.join(PRESETS)})")
    return kernel


def _scalar32(x, what: str) -> np.uint32:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {x!r}") from None
    return np.uint32(from_float(F32, v))               # the kernel's compute type: fp32, RNE


def gemm(A, B, C=None, *, arch=None, instr, kernel=None, alpha=1.0, beta=0.0, bias=None, params=None,
         scale_A=None, scale_B=None, workers: int = 1, threads: int | None = None,
         route: str = "auto") -> np.ndarray:
    """``D = convert(alpha * A @ B + beta * C + bias)`` built from the instruction's dot-adds.

    Parameters
    ----------
    A, B : array [M, K], [K, N]
        Bit patterns of the instruction's A and B formats (or exactly representable floats).
    C : array [M, N], optional
        Bit patterns of the output format; read only when ``beta != 0`` (in the epilogue) or, with
        ``kernel.c_accumulate``, loaded into the accumulator before the K loop (then alpha = beta = 1).
    arch, instr : str, or instr an Instruction
        The instruction (:func:`golden.lookup`); its C and D formats must be equal.
    kernel : Kernel or str, optional
        The composition (:class:`Kernel` or a name of :data:`PRESETS`); default ``k-loop``.
    alpha, beta : float
        Epilogue scalars, taken as fp32 (rounded RNE).  NVFP4's global scales go into alpha.
    bias : array [N], optional
        Bit patterns of the output format, added per column after ``alpha * acc + beta * C``.
    params : Params or mapping, optional
        A design of your own: the instruction's :class:`golden.Params`, or changes to them (``{"F": 20}``).
    scale_A, scale_B : array, optional
        ``scaling='block'``: the instruction's scale format, ``[M, ceil(K / block)]`` and
        ``[ceil(K / block), N]``.  ``scaling='group'``: fp32, ``[M, groups]`` and
        ``[groups, ceil(N / group_n)]`` with ``groups = ceil(K / group_k)``.
    workers : int
        Threads over output tiles of the rows route (each k-step's ``golden.dot_add`` takes ``threads``).
    threads : int, optional
        Threads the compiled code runs on (:func:`golden.gemm_kernels.resolve_threads`): the tile
        kernels' threads over output tiles, the rows route's ``golden.dot_add`` threads.  Default: the
        cores of the process's CPU affinity, capped by ``NUMBA_NUM_THREADS`` when set.
    route : str
        ``auto`` (default): the GEMM-level compiled kernels (:mod:`golden.gemm_kernels`) where they
        apply, else one ``golden.dot_add`` per k-step over a tile of outputs; ``tiles``: the compiled
        kernels or a ValueError saying why not; ``rows``: the per-k-step route (the reference the
        compiled kernels are tested against).  The bits are the same; the logger ``golden.gemm`` says
        at DEBUG level which route ran and why.

    Returns
    -------
    numpy array [M, N] of bit patterns of ``kernel.out_format`` (default the instruction's D format).
    """
    from .api import dot_add  # the public dot-add: whatever fastest path it takes
    ins = _resolve(instr, arch, params)
    kernel = _kernel(kernel)
    prob = _Problem(ins, kernel, A, B, scale_A, scale_B)
    out_fmt = get_format(kernel.out_format or ins.d_format)
    alpha32, beta32 = _scalar32(alpha, "alpha"), _scalar32(beta, "beta")
    c = c_init = bias_b = None
    if kernel.c_accumulate:
        c_init = _c_in_accumulator(prob, out_fmt, C, alpha32, beta32)
    elif beta32 & np.uint32(0x7FFFFFFF):
        if C is None:
            raise ValueError(f"beta={beta} needs C [M, N] = [{prob.M}, {prob.N}] in {out_fmt.name}")
        c = _shaped(out_fmt, C, "C", (prob.M, prob.N))
    if bias is not None:
        bias_b = _shaped(out_fmt, bias, "bias", (prob.N,))
    if not is_whole(workers) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1 (threads over output tiles), got {workers!r}")
    threads = GK.resolve_threads(threads)
    plan = _plan(prob, route)
    out = np.empty((prob.M, prob.N), out_fmt.dtype)
    dot = functools.partial(dot_add, threads=threads)

    def run(tile):
        rows, cols = tile
        nm, nn = rows.stop - rows.start, cols.stop - cols.start
        ct = None if c is None else c[rows, cols].reshape(-1)
        bt = None if bias_b is None else np.tile(bias_b[cols], nm)
        if plan is None:
            ci = None if c_init is None else c_init[rows, cols].reshape(-1)
            acc = _tile(prob, rows, cols, dot, ci)
        else:
            parts = plan.parts(rows, cols, None if c_init is None else c_init[rows, cols])
            acc = reduce_partials([p.reshape(-1) for p in parts], kernel) if len(parts) > 1 else parts[0].reshape(-1)
        out[rows, cols] = _epilogue(kernel, out_fmt, acc, alpha32, beta32, ct, bt).reshape(nm, nn)

    if plan is None:
        _run_tiles(run, list(_tiles(prob.M, prob.N)), workers)
    else:
        _run_tiles(run, list(GK.tiles(prob.M, prob.N)), threads)
    return out


def _plan(prob: _Problem, route) -> GK.Plan | None:
    """The tile kernels' plan for this GEMM, or None for the rows route (said on the logger)."""
    try:
        want = GK.Route(route)
    except ValueError:
        raise ValueError(f"route must be one of {', '.join(r.value for r in GK.Route)}, got {route!r}") from None
    if want is GK.Route.ROWS:
        LOG.debug("golden.gemm: rows route (asked for)")
        return None
    got, why = GK.route(prob.ins, prob.kernel)
    plan = GK.Plan(prob) if got is GK.Route.TILES else None
    if plan is not None and plan.why_not:
        got, why, plan = GK.Route.ROWS, plan.why_not, None
    if want is GK.Route.TILES and plan is None:
        raise ValueError(f"route='tiles' cannot compute this GEMM: {why}; use route='auto' or 'rows'")
    LOG.debug("golden.gemm: %s route: %s", got.value, why)
    return plan


def _run_tiles(run, tiles: list, workers: int) -> None:
    """``run`` over ``tiles`` on ``workers`` threads (the compiled code and numpy release the GIL)."""
    if workers == 1 or len(tiles) == 1:
        for t in tiles:
            run(t)
        return
    from concurrent.futures import ThreadPoolExecutor
    pool = ThreadPoolExecutor(min(workers, len(tiles)))
    try:
        list(pool.map(run, tiles))
    finally:                                  # Ctrl-C: the tiles not started are dropped, not run
        pool.shutdown(wait=True, cancel_futures=True)


def _c_in_accumulator(prob: _Problem, out_fmt, C, alpha32, beta32) -> np.ndarray:
    """``Kernel.c_accumulate``: C (output format) converted RNE to the format the K loop starts from:
    fp32 (the main accumulator) under promotion, else the instruction's C format."""
    if alpha32 != ONE32 or beta32 != ONE32:
        raise ValueError("Kernel.c_accumulate=True loads C into the accumulator, so it needs alpha=1 and beta=1 "
                         f"(got alpha={float(alpha32.view(np.float32))!r}, beta={float(beta32.view(np.float32))!r}); "
                         "use c_accumulate=False for another alpha or beta")
    if C is None:
        raise ValueError(f"Kernel.c_accumulate=True needs C [M, N] = [{prob.M}, {prob.N}] in {out_fmt.name}")
    c = _shaped(out_fmt, C, "C", (prob.M, prob.N))
    acc_fmt = F32 if prob.kernel.promotion is not None else prob.ins.formats[2]
    if acc_fmt.name == out_fmt.name:
        return c
    return from_float(acc_fmt, to_float(out_fmt, c), Rounding.RNE)


def _shaped(fmt, x, what: str, shape: tuple) -> np.ndarray:
    bits = _narrow_bits(fmt, x, what)
    if bits.shape != shape:
        raise ValueError(f"{what} must have shape {list(shape)} ({fmt.name}), got {list(bits.shape)}")
    return bits


def gemm_float(A, B, C=None, *, arch=None, instr, kernel=None, scale_A=None, scale_B=None, bias=None,
               params=None, **kw) -> np.ndarray:
    """:func:`gemm` on float values: A, B rounded (RNE) to the instruction's formats, C and bias to
    the output format, scales to theirs; returns D's values as float64."""
    ins = _resolve(instr, arch, params)
    k = _kernel(kernel)
    out_fmt = get_format(k.out_format or ins.d_format)
    fa, fb = ins.formats[:2]
    sfmt = ins.scale_format if k.scaling is Scaling.BLOCK else F32

    shapes = {"A": "[M, K]", "B": "[K, N]", "C": "[M, N]", "bias": "[N]", "scale_A": "[M, blocks]",
              "scale_B": "[blocks, N]"}

    def q(fmt, x, what):
        if x is None:
            if what in ("A", "B"):
                raise ValueError(f"gemm_float: {what} is required: an array {shapes[what]} of numbers")
            return None
        try:
            values = np.asarray(x, np.float64)
        except (TypeError, ValueError) as e:
            why = str(e).splitlines()[0]
            why = "its rows are not all the same length" if "inhomogeneous" in why else why
            raise ValueError(f"gemm_float: {what} must be an array {shapes[what]} of numbers (floats or "
                             f"integers); {why}") from None
        return from_float(fmt, values)

    D = gemm(q(fa, A, "A"), q(fb, B, "B"), q(out_fmt, C, "C"), instr=ins, kernel=k, bias=q(out_fmt, bias, "bias"),
             scale_A=q(sfmt, scale_A, "scale_A"), scale_B=q(sfmt, scale_B, "scale_B"), **kw)
    return to_float(out_fmt, D)
