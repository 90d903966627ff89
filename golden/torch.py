"""PyTorch's matrix products computed as a GPU's tensor cores compute them: ``golden.torch.emulate``.

>>> import golden.torch
>>> with golden.torch.emulate("hopper", kernel="fp8-promote-4"):      # doctest: +SKIP
...     y = model(x)

A :class:`torch.overrides.TorchFunctionMode` that sends ``matmul`` (and ``@``), ``mm``, ``bmm``,
``addmm``, ``linear`` and ``_scaled_mm`` on float16, bfloat16, float8 and float32 (as TF32 when
``torch.get_float32_matmul_precision()`` is not ``"highest"``, i.e. when torch allows TF32)
through :func:`golden.gemm`; every other call, and float32 products while TF32 is not allowed
(a GPU computes those on its CUDA cores, not its tensor cores), run as torch runs them.
The optional extra ``[torch]`` installs torch; nothing else in golden imports this module.

What is modelled, and after whom:

* the instruction: the architecture's tensor-core instruction for the operand formats
  (:func:`instruction_for`; wgmma/tcgen05 forms first), measured behaviour where the catalog says so;
* the composition: the ``kernel`` (:class:`golden.gemm.Kernel` or a preset name), one for every call;
* the output: accumulated in fp32, converted to the result dtype with RNE (``Kernel.out_format`` is
  set from the dtype torch returns);
* ``addmm`` with a 1-D ``input`` and ``beta == 1`` adds it as a bias after the product (the cuBLASLt
  bias epilogue PyTorch's CUDA ``addmm`` chooses for that case, aten/src/ATen/native/cuda/Blas.cpp);
  otherwise ``input`` is C and ``beta`` scales it;
* ``_scaled_mm`` with per-tensor scales: ``alpha = RN32(scale_a * scale_b)`` applied in the epilogue;
  ``use_fast_accum`` is not read (the kernel says whether partials are promoted).
"""

from __future__ import annotations

import numpy as np

try:
    import torch
except ModuleNotFoundError as e:                  # the optional extra: say which one
    if e.name != "torch":
        raise
    raise ModuleNotFoundError("golden.torch needs PyTorch, which is not installed: pip install 'mma-rtl[torch]'",
                              name="torch") from None
from torch.overrides import TorchFunctionMode

from .catalog import Instruction, canonical_arch, lookup
from .gemm import Kernel, _kernel, _resolve, f32_mul, gemm, instruction_for

__all__ = ["emulate", "exact", "instruction_for", "DTYPES"]

# torch dtype -> golden format name
DTYPES = {
    torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
    torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2",
    torch.float8_e4m3fnuz: "e4m3fnuz", torch.float8_e5m2fnuz: "e5m2fnuz",
}
_INT_VIEW = {1: (torch.uint8, np.uint8), 2: (torch.int16, np.uint16), 4: (torch.int32, np.uint32)}
def to_bits(t: torch.Tensor) -> np.ndarray:
    """A tensor's elements as unsigned bit patterns (numpy)."""
    tdt, ndt = _INT_VIEW[t.element_size()]
    return t.detach().cpu().contiguous().view(tdt).numpy().view(ndt)


def from_bits(bits: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """Bit patterns (numpy) as a tensor of ``dtype``."""
    size = torch.empty((), dtype=dtype).element_size()
    signed = {1: np.uint8, 2: np.int16, 4: np.int32}[size]
    return torch.from_numpy(np.ascontiguousarray(np.asarray(bits).astype(_INT_VIEW[size][1])).view(signed)).view(dtype)


class _Routing(TorchFunctionMode):
    """Sends the matrix products this module handles to :meth:`mm2d`; everything else runs as torch
    runs it.  ``calls`` counts the products routed, per instruction (or ``exact``)."""

    def __init__(self):
        super().__init__()
        self.calls: dict[str, int] = {}
        self._handlers = _handlers()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        handler = self._handlers.get(func)
        if handler is not None:
            out = handler(self, *args, **kwargs)
            if out is not NotImplemented:
                return out
        return func(*args, **kwargs)

    def routed(self, *tensors) -> bool:
        """Whether a product of these operands goes to a tensor core."""
        if any(not isinstance(t, torch.Tensor) or t.dtype not in DTYPES for t in tensors):
            return False
        if any(t.dtype == torch.float32 for t in tensors):
            return all(t.dtype == torch.float32 for t in tensors) and \
                torch.get_float32_matmul_precision() != "highest"
        return True

    def count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def batched(self, a, b, out_dtype) -> torch.Tensor:
        """``a @ b`` with torch.matmul's broadcasting of leading dimensions."""
        squeeze = []
        if a.dim() == 1:
            a, squeeze = a.unsqueeze(0), squeeze + [-2]
        if b.dim() == 1:
            b, squeeze = b.unsqueeze(-1), squeeze + [-1]
        batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a2 = a.expand(*batch, *a.shape[-2:]).reshape(-1, *a.shape[-2:])
        b2 = b.expand(*batch, *b.shape[-2:]).reshape(-1, *b.shape[-2:])
        out = torch.stack([self.mm2d(x, y, out_dtype) for x, y in zip(a2, b2)]) if a2.shape[0] else \
            torch.empty(0, a.shape[-2], b.shape[-1], dtype=out_dtype)
        out = out.reshape(*batch, a.shape[-2], b.shape[-1])
        for d in squeeze:
            out = out.squeeze(d)
        return out

    def mm2d(self, a, b, out_dtype, *, c=None, beta=0.0, alpha=1.0, bias=None) -> torch.Tensor:
        raise NotImplementedError


class emulate(_Routing):
    """Route torch's matrix products through :func:`golden.gemm` on ``arch``'s tensor cores.

    Parameters
    ----------
    arch : str
        Architecture (``hopper``, ``ampere``, ``cdna3``, ...).
    kernel : Kernel or str, optional
        The composition (default ``k-loop``); its ``out_format`` is set per call from the dtype.
    params : Params or mapping, optional
        A design of your own, applied to every instruction used (``{"F": 24}``).
    instr : mapping, optional
        ``{(a_dtype, b_dtype): Instruction or name}`` to override :func:`instruction_for`.
    workers : int
        Threads per GEMM.
    """

    def __init__(self, arch: str, kernel=None, *, params=None, instr=None, workers: int = 1):
        super().__init__()
        self.arch = canonical_arch(arch)
        self.kernel = _kernel(kernel)
        self.params = params
        self.overrides = {k: (v if isinstance(v, Instruction) else lookup(self.arch, v))
                          for k, v in (instr or {}).items()}
        self.workers = workers

    def instruction(self, a: torch.Tensor, b: torch.Tensor) -> Instruction:
        key = (a.dtype, b.dtype)
        ins = self.overrides.get(key) or instruction_for(self.arch, DTYPES[a.dtype], DTYPES[b.dtype])
        return _resolve(ins, None, self.params)

    def mm2d(self, a, b, out_dtype, *, c=None, beta=0.0, alpha=1.0, bias=None) -> torch.Tensor:
        """``alpha * a @ b + beta * c + bias`` for 2-D a [M, K], b [K, N] through golden.gemm."""
        ins = self.instruction(a, b)
        kernel: Kernel = self.kernel.with_(out_format=DTYPES[out_dtype])
        self.count(ins.name)
        d = gemm(to_bits(a), to_bits(b), None if c is None else to_bits(c.to(out_dtype)), instr=ins,
                 kernel=kernel, alpha=alpha, beta=beta, bias=None if bias is None else to_bits(bias.to(out_dtype)),
                 workers=self.workers)
        return from_bits(d, out_dtype).to(a.device)


class exact(_Routing):
    """The same products computed exactly: ``math.fsum`` of error-free terms
    (:func:`golden.gemm_error.exact_product`, the exact sum rounded once to float64), the epilogue in
    float64, then torch's rounding (RNE) to the result dtype.  The reference of an emulated run."""

    def mm2d(self, a, b, out_dtype, *, c=None, beta=0.0, alpha=1.0, bias=None) -> torch.Tensor:
        from .gemm_error import exact_product
        self.count("exact")
        d = torch.from_numpy(exact_product(a.double().cpu().numpy(), b.double().cpu().numpy())) * alpha
        if c is not None:
            d = d + beta * c.double().cpu()
        if bias is not None:
            d = d + bias.double().cpu()
        return d.to(out_dtype).to(a.device)


# ---------------------------------------------------------------------------- one handler per function

def _matmul(mode, a, b, *, out=None):
    if out is not None or not mode.routed(a, b):
        return NotImplemented
    return mode.batched(a, b, a.dtype)


def _mm(mode, a, b, *, out=None, **kw):
    if out is not None or kw or not mode.routed(a, b) or a.dim() != 2 or b.dim() != 2:
        return NotImplemented
    return mode.mm2d(a, b, a.dtype)


def _bmm(mode, a, b, *, out=None, **kw):
    if out is not None or kw or not mode.routed(a, b) or a.dim() != 3 or b.dim() != 3:
        return NotImplemented
    return mode.batched(a, b, a.dtype)


def _addmm(mode, inp, m1, m2, *, beta=1, alpha=1, out=None, **kw):
    if out is not None or kw or not mode.routed(m1, m2) or m1.dim() != 2 or m2.dim() != 2:
        return NotImplemented
    N = m2.shape[1]
    if inp.dim() == 1 and inp.shape[0] == N and beta == 1:          # cuBLASLt's bias epilogue
        return mode.mm2d(m1, m2, m1.dtype, alpha=float(alpha), bias=inp)
    c = inp.expand(m1.shape[0], N)
    return mode.mm2d(m1, m2, m1.dtype, c=c, beta=float(beta), alpha=float(alpha))


def _linear(mode, x, w, bias=None):
    if not mode.routed(x, w) or w.dim() != 2 or x.dim() < 1:
        return NotImplemented
    rows = x.reshape(-1, x.shape[-1])
    y = mode.mm2d(rows, w.t(), x.dtype, bias=bias)
    return y.reshape(*x.shape[:-1], w.shape[0])


def _scaled_mm(mode, a, b, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False):
    if not mode.routed(a, b) or scale_result is not None:
        return NotImplemented
    if scale_a.numel() != 1 or scale_b.numel() != 1:
        raise ValueError("golden.torch: _scaled_mm with row-wise or block scales is not modelled; "
                         "per-tensor (one-element) fp32 scales are")
    sa, sb = (np.uint32(to_bits(s.float().reshape(()))) for s in (scale_a, scale_b))
    alpha = float(np.asarray(f32_mul(sa, sb), np.uint32).view(np.float32))
    return mode.mm2d(a, b, out_dtype or a.dtype, alpha=alpha, bias=bias)


def _handlers() -> dict:
    table = {torch.matmul: _matmul, torch.Tensor.matmul: _matmul, torch.Tensor.__matmul__: _matmul,
             torch.mm: _mm, torch.Tensor.mm: _mm, torch.bmm: _bmm, torch.Tensor.bmm: _bmm,
             torch.addmm: _addmm, torch.Tensor.addmm: _addmm, torch.nn.functional.linear: _linear,
             torch._scaled_mm: _scaled_mm}
    return table
