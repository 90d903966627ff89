"""The dispatch mode: every aten call seen, the products sent to golden.gemm, the rest counted or let through.

Under :class:`emulate` (or :class:`exact`) each aten call whose operator :mod:`golden.torch.ops`
handles is computed by the mode; autograd sits above the mode, so outputs keep their ``grad_fn``
and the backward pass's products come through it too.  While a mode is active it also turns off
the two things that would run products out of its sight: ``torch.compile`` (stance
``force_eager``: compiled functions run eagerly, through the mode) and the fused fast path of
``nn.MultiheadAttention`` / ``TransformerEncoderLayer`` (``torch.backends.mha``); both are put back
on exit.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.utils import _pytree
from torch.utils._python_dispatch import TorchDispatchMode

from ..catalog import Instruction, canonical_arch, lookup
from ..gemm import Kernel, Reduction, Scaling, _kernel, _resolve, gemm, instruction_for, k_slices
from ..options import is_whole
from . import ops
from .bits import DTYPES, from_bits, to_bits

__all__ = ["CInput", "DTYPES", "NotEmulated", "Product", "emulate", "exact", "fit_kernel", "from_bits", "to_bits"]

HIGHEST = "highest"       # torch.get_float32_matmul_precision() that keeps float32 products off TF32


class NotEmulated(RuntimeError):
    """Under ``strict=True``: a floating-point product that would run natively, not emulated."""


class CInput(enum.StrEnum):
    """Where addmm / baddbmm / addmv put C (``self``, scaled by beta) into the product."""

    EPILOGUE = "epilogue"          # alpha * acc + beta * C after the K loop (BLAS semantics; the default)
    ACCUMULATOR = "accumulator"    # C is the K loop's initial accumulator (beta == alpha == 1 only)


@dataclass(frozen=True)
class Product:
    """One 2-D product as the mode is about to run it: what a ``kernel`` callable is given."""

    op: str                        # the aten operator (mm, addmm, bmm, conv, attention ...)
    m: int
    n: int
    k: int
    a_dtype: torch.dtype
    b_dtype: torch.dtype
    instruction: Instruction


def fit_kernel(kernel: Kernel, ins: Instruction, K: int) -> Kernel:
    """``kernel`` as it runs a product of depth ``K`` on ``ins``: unchanged when its split-K slices
    all get k-steps; otherwise the largest ``split_k`` that leaves no slice empty (an atomic order
    keeps the slices that remain, in its order), and at one slice the plain K loop.  The refitted
    kernel's name says so: ``"splitk-4-sequential (split_k=2)"``."""
    K = max(K, 1)
    for s in range(kernel.split_k, 0, -1):
        if s == kernel.split_k:
            candidate = kernel
        elif s == 1:
            candidate = kernel.with_(name=f"{kernel.name} (split_k=1)", split_k=1,
                                     reduction=Reduction.SEQUENTIAL, atomic_order=None)
        else:
            order = None if kernel.atomic_order is None else tuple(i for i in kernel.atomic_order if i < s)
            candidate = kernel.with_(name=f"{kernel.name} (split_k={s})", split_k=s, atomic_order=order)
        try:
            k_slices(ins, candidate, K)
        except ValueError:
            continue
        return candidate
    raise AssertionError("split_k=1 always fits")          # pragma: no cover (one slice holds every k-step)


def _bump(counts: dict, key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def _shapes_only(args, kwargs) -> bool:
    """Whether the call is on meta (or fake) tensors: shapes, no values, nothing to compute."""
    from torch._subclasses.fake_tensor import FakeTensor
    return any(isinstance(t, torch.Tensor) and (t.device.type == "meta" or isinstance(t, FakeTensor))
               for t in _pytree.tree_leaves((args, kwargs)))


def _conv_allows_tf32() -> bool:
    """cuDNN's TF32 flag for float32 convolutions, read through torch's new API (reading the legacy
    ``allow_tf32`` can raise once the two APIs were mixed): the first level that is not ``"none"``."""
    for level in (torch.backends.cudnn.conv, torch.backends.cudnn, torch.backends):
        precision = getattr(level, "fp32_precision", "none")
        if precision != "none":
            return precision == "tf32"
    return False


def _floating(args, kwargs) -> bool:
    return any(isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())
               for t in _pytree.tree_leaves((args, kwargs)))


class _Mode(TorchDispatchMode):
    """What :class:`emulate` and :class:`exact` share: dispatch, counts, strict mode, the summary.

    Counts (dicts of call counts): ``calls`` per instruction (one per 2-D GEMM run), ``ops`` per
    aten overload emulated, ``kernels`` per kernel run (refitted ones by their new name), ``native``
    per aten overload of a floating-point product that ran natively (``native_why`` says why),
    ``meta`` per aten overload run on meta or fake tensors (shapes only, nothing computed)."""

    def __init__(self, *, strict: bool = False, quiet: bool = False):
        super().__init__()
        if not isinstance(strict, bool) or not isinstance(quiet, bool):
            raise ValueError(f"golden.torch: strict and quiet must be True or False, got {strict!r}, {quiet!r}")
        self.strict, self.quiet = strict, quiet
        self.calls: dict[str, int] = {}
        self.ops: dict[str, int] = {}
        self.kernels: dict[str, int] = {}
        self.native: dict[str, int] = {}
        self.native_why: dict[str, str] = {}
        self.meta: dict[str, int] = {}
        self._saved = []

    # ---- entering and leaving
    def __enter__(self):
        fastpath = torch.backends.mha.get_fastpath_enabled()
        torch.backends.mha.set_fastpath_enabled(False)       # one fused kernel would hide a layer's products
        stance = torch.compiler.set_stance("force_eager")      # compiled code would run outside the mode
        self._saved.append((fastpath, stance))
        return super().__enter__()

    def __exit__(self, exc_type, exc, tb):
        try:
            return super().__exit__(exc_type, exc, tb)
        finally:
            fastpath, stance = self._saved.pop()
            stance.__exit__(None, None, None)
            torch.backends.mha.set_fastpath_enabled(fastpath)
            if self.native and not self.quiet and not self._saved:
                print(self.summary(), file=sys.stderr)

    def summary(self) -> str:
        """What ran natively, one line per aten overload (empty when everything was emulated)."""
        if not self.native:
            return ""
        lines = [f"golden.torch: {sum(self.native.values())} floating-point product(s) ran natively, not emulated:"]
        lines += [f"  {op} x{n}: {self.native_why[op]}" for op, n in sorted(self.native.items())]
        return "\n".join(lines)

    # ---- dispatch
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        if name not in ops.PRODUCTS:
            return func(*args, **kwargs)
        handler = ops.HANDLERS.get(name)
        if _shapes_only(args, kwargs):
            _bump(self.meta, str(func))
            return func(*args, **kwargs)
        try:
            if handler is None:
                if not _floating(args, kwargs):
                    raise ops.Skip
                raise ops.Native(f"golden.torch has no model of aten.{name}")
            bound = ops.bind(func, args, kwargs)
            result = ops.deliver(func, bound, handler(self, bound))
        except ops.Skip:
            return func(*args, **kwargs)
        except ops.Native as n:
            self._native(func, n.reason)
            return func(*args, **kwargs)
        _bump(self.ops, str(func))
        return result

    def _native(self, func, reason: str) -> None:
        if self.strict:
            raise NotEmulated(f"golden.torch (strict): {func} would run natively, not emulated: {reason}")
        _bump(self.native, str(func))
        self.native_why[str(func)] = reason

    # ---- what the handlers call
    def route(self, *tensors: torch.Tensor, conv: bool = False) -> None:
        """Return when a product of these operands is emulated; raise :class:`ops.Skip` (no floating-point
        operand) or :class:`ops.Native` (floating-point, not modelled) otherwise.  Float32 products are
        TF32 when torch allows it: for matrix products ``torch.get_float32_matmul_precision()``, for
        convolutions (``conv``) cuDNN's own flag, which allows TF32 by default."""
        dts = {t.dtype for t in tensors}
        if not any(d.is_floating_point or d.is_complex for d in dts):
            raise ops.Skip
        if any(d.is_complex for d in dts):
            raise ops.Native("complex products are not modelled")
        bad = sorted(str(d) for d in dts if d not in DTYPES)
        if bad:
            raise ops.Native(f"{bad[0]} products: no tensor-core instruction in golden's catalog takes "
                             f"{bad[0]} (modelled: {', '.join(str(d) for d in DTYPES)})")
        if torch.float32 in dts and dts != {torch.float32}:
            raise ops.Native(f"float32 mixed with {', '.join(sorted(str(d) for d in dts - {torch.float32}))}")
        if dts != {torch.float32}:
            return
        if conv and not _conv_allows_tf32():
            raise ops.Native("float32 convolutions with torch.backends.cudnn.conv.fp32_precision == 'ieee' run "
                             "without TF32, on CUDA cores; set it to 'tf32' (torch's default) to run them as TF32")
        if not conv and torch.get_float32_matmul_precision() == HIGHEST:
            raise ops.Native("float32 products with torch.get_float32_matmul_precision() == 'highest' run on "
                             "CUDA cores, not tensor cores; set it to 'high' to run them as TF32")

    def mm2d(self, a, b, out_dtype, *, op: str, c=None, beta=0.0, alpha=1.0, bias=None) -> torch.Tensor:
        """``alpha * a @ b + beta * c + bias`` for a [M, K], b [K, N], in ``out_dtype``.  M or N = 0: an
        empty result; K = 0: one zero product (the accumulator stays +0, as an empty sum is)."""
        M, K = a.shape
        N = b.shape[1]
        if M == 0 or N == 0:
            return torch.empty((M, N), dtype=out_dtype, device=a.device)
        if K == 0:
            a, b = a.new_zeros((M, 1)), b.new_zeros((1, N))
        return self._gemm(a, b, out_dtype, op=op, k=K, c=c, beta=float(beta), alpha=float(alpha), bias=bias)

    def bmm3d(self, a, b, out_dtype, *, op: str, c=None, beta=0.0, alpha=1.0) -> torch.Tensor:
        """:meth:`mm2d` for each batch of a [B, M, K], b [B, K, N] (and c [B, M, N])."""
        B, M, N = a.shape[0], a.shape[1], b.shape[2]
        if 0 in (B, M, N):
            return torch.empty((B, M, N), dtype=out_dtype, device=a.device)
        return torch.stack([self.mm2d(a[i], b[i], out_dtype, op=op, c=None if c is None else c[i], beta=beta,
                                      alpha=alpha) for i in range(B)])

    def conv_mm(self) -> Callable:
        """The 2-D product the convolution model calls (aten.mm's semantics: the result in the operands' dtype)."""
        return lambda a, b: self.mm2d(a, b, a.dtype, op="convolution")

    def attn_bmm(self) -> Callable:
        """The batched product the attention model calls: ``bmm(a, b, out_dtype=None)``."""
        return lambda a, b, out_dtype=None: self.bmm3d(a, b, out_dtype or a.dtype, op="attention")

    def _gemm(self, a, b, out_dtype, *, op, k, c, beta, alpha, bias) -> torch.Tensor:
        raise NotImplementedError


class emulate(_Mode):
    """Run torch's floating-point products through :func:`golden.gemm` on ``arch``'s tensor cores.

    Parameters
    ----------
    arch : str
        Architecture (``hopper``, ``ampere``, ``cdna3``, ...).
    kernel : Kernel, str or callable, optional
        The composition (default ``k-loop``): a :class:`golden.gemm.Kernel`, a preset name, or a callable
        given each :class:`Product` and returning one of those (kernel choice per call).  Its
        ``out_format`` is set per call from the result dtype; a split that does not fit K is refitted
        (:func:`fit_kernel`).
    params : Params or mapping, optional
        A design of your own, applied to every instruction used (``{"F": 24}``).
    instr : mapping, optional
        ``{(a_dtype, b_dtype): Instruction or name}`` to override :func:`golden.gemm.instruction_for`;
        the instruction must take those operand formats.
    workers : int
        Threads per GEMM.
    strict : bool
        Raise :class:`NotEmulated` on any floating-point product that would run natively.
    quiet : bool
        Do not print the summary of what ran natively on exit.
    c_input : CInput or str
        Where addmm / baddbmm / addmv put C: ``epilogue`` (default) or ``accumulator``.
    """

    def __init__(self, arch: str, kernel=None, *, params=None, instr=None, workers: int = 1, strict: bool = False,
                 quiet: bool = False, c_input: CInput | str = CInput.EPILOGUE):
        super().__init__(strict=strict, quiet=quiet)
        self.arch = canonical_arch(arch)
        self.kernel = kernel if callable(kernel) else _torch_kernel(kernel)
        self.params = params
        self.overrides = {key: _override(self.arch, key, ins) for key, ins in (instr or {}).items()}
        if not is_whole(workers) or workers < 1:
            raise ValueError(f"golden.torch: workers must be an integer >= 1 (threads per GEMM), got {workers!r}")
        self.workers = workers
        self.c_input = _c_input(c_input)
        _check_params(self.arch, params)

    def instruction(self, a_dtype: torch.dtype, b_dtype: torch.dtype) -> Instruction:
        """The instruction for these operand dtypes (raises :class:`ops.Native` when ``arch`` has none)."""
        ins = self.overrides.get((a_dtype, b_dtype))
        if ins is None:
            try:
                ins = instruction_for(self.arch, DTYPES[a_dtype], DTYPES[b_dtype])
            except ValueError as e:
                raise ops.Native(str(e)) from None
        return _resolve(ins, None, self.params)

    def kernel_for(self, product: Product) -> Kernel:
        """The kernel of one product: the mode's (or its callable's answer), refitted to K."""
        kernel = _torch_kernel(self.kernel(product)) if callable(self.kernel) else self.kernel
        kernel = fit_kernel(kernel, product.instruction, product.k)
        _bump(self.kernels, kernel.name)
        return kernel

    def _gemm(self, a, b, out_dtype, *, op, k, c, beta, alpha, bias) -> torch.Tensor:
        ins = self.instruction(a.dtype, b.dtype)
        (M, _), N = a.shape, b.shape[1]
        kernel = self.kernel_for(Product(op, M, N, k, a.dtype, b.dtype, ins)).with_(out_format=DTYPES[out_dtype])
        if c is not None and beta != 0 and self.c_input is CInput.ACCUMULATOR and beta == 1 and alpha == 1:
            kernel = kernel.with_(c_accumulate=True)
        _bump(self.calls, ins.name)
        d = gemm(to_bits(a), to_bits(b), None if c is None or beta == 0 else to_bits(c.to(out_dtype)), instr=ins,
                 kernel=kernel, alpha=alpha, beta=beta, bias=None if bias is None else to_bits(bias.to(out_dtype)),
                 workers=self.workers)
        return from_bits(d, out_dtype).to(a.device)


class exact(_Mode):
    """The same products computed exactly: ``math.fsum`` of error-free terms
    (:func:`golden.gemm_error.exact_product`, the exact sum rounded once to float64), the epilogue in
    float64, then torch's rounding (RNE) to the result dtype.  The reference of an emulated run."""

    def _gemm(self, a, b, out_dtype, *, op, k, c, beta, alpha, bias) -> torch.Tensor:
        from ..gemm_error import exact_product
        _bump(self.calls, "exact")
        d = torch.from_numpy(exact_product(a.double().cpu().numpy(), b.double().cpu().numpy())) * alpha
        if c is not None and beta != 0:
            d = d + beta * c.double().cpu()
        if bias is not None:
            d = d + bias.double().cpu()
        return d.to(out_dtype).to(a.device)


# ---------------------------------------------------------------------------- checks of the arguments

def _torch_kernel(kernel) -> Kernel:
    """A kernel the torch mode can run: any unscaled one (torch passes no block or group scales)."""
    k = _kernel(kernel)
    if k.scaling is not Scaling.NONE:
        raise ValueError(f"golden.torch: Kernel {k.name!r} has scaling={k.scaling.value!r}, but torch passes "
                         "no block or group scales to a matrix product; use an unscaled kernel "
                         "(_scaled_mm's per-tensor scales go into alpha)")
    if k.c_accumulate:
        raise ValueError(f"golden.torch: Kernel {k.name!r} has c_accumulate=True; the mode decides per call "
                         "where C goes: pass c_input='accumulator' (and a kernel with c_accumulate=False)")
    return k


def _override(arch: str, key, ins) -> Instruction:
    """One ``instr`` entry, checked: torch dtypes as the key, an instruction that takes their formats."""
    if not (isinstance(key, tuple) and len(key) == 2 and all(d in DTYPES for d in key)):
        raise ValueError(f"golden.torch: instr keys are (a_dtype, b_dtype) pairs of "
                         f"{', '.join(str(d) for d in DTYPES)}; got {key!r}")
    ins = ins if isinstance(ins, Instruction) else lookup(arch, ins)
    want = tuple("tf32" if DTYPES[d] == "f32" else DTYPES[d] for d in key)
    if (ins.a_format, ins.b_format) != want:
        raise ValueError(f"golden.torch: instr[{key[0]}, {key[1]}] is {ins.name}, which takes {ins.a_format} x "
                         f"{ins.b_format}; operands {key[0]} x {key[1]} need an instruction for {want[0]} x {want[1]}")
    return ins


def _check_params(arch: str, params) -> None:
    """``params`` refused now, in one line, rather than at the first product: applied to the f16 instruction
    of ``arch`` (or bf16, e4m3); each product's instruction checks them again."""
    if params is None:
        return
    for fmt in ("f16", "bf16", "e4m3"):               # the instruction the mode uses most, on any arch
        try:
            probe = instruction_for(arch, fmt, fmt)
        except ValueError:
            continue
        _resolve(probe, None, params)
        return


def _c_input(value) -> CInput:
    try:
        c = CInput(value)
    except ValueError:
        raise ValueError(f"golden.torch: c_input must be one of {', '.join(CInput)}, got {value!r}") from None
    if c is CInput.ACCUMULATOR and "c_accumulate" not in Kernel.__dataclass_fields__:
        raise ValueError("golden.torch: c_input='accumulator' needs golden.gemm.Kernel.c_accumulate, "
                         "which this golden.gemm does not have; use c_input='epilogue'")
    return c
