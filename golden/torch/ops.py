"""The aten operators ``golden.torch`` emulates, one handler each, and the ones it knows compute
floating-point products but does not model (they run natively, counted, or raise under strict).

A handler gets the mode and the operator's arguments by schema name (:func:`bind`) and returns the
functional result; :func:`deliver` writes it into ``out=`` or ``self`` for the ``.out`` and
in-place forms.  Handlers reach the arithmetic only through the mode's ``route``, ``mm2d`` and
``bmm3d``, so :class:`golden.torch.emulate` and :class:`golden.torch.exact` share them.
"""

from __future__ import annotations

import numpy as np
import torch

from .. import torchattn, torchconv
from ..gemm import f32_mul
from .bits import to_bits


class Native(Exception):
    """This call runs as torch runs it, un-emulated, for ``reason`` (counted; strict mode raises)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Skip(Exception):
    """This call has no floating-point product (integer operands): torch runs it, nothing is counted."""


def bind(func, args, kwargs) -> dict:
    """``{argument name: value}`` of one call of the aten overload ``func``, defaults filled in."""
    bound = {}
    for i, arg in enumerate(func._schema.arguments):
        if i < len(args) and not arg.kwarg_only:
            bound[arg.name] = args[i]
        elif arg.name in kwargs:
            bound[arg.name] = kwargs[arg.name]
        else:
            bound[arg.name] = arg.default_value if arg.has_default_value() else None
    return bound


def deliver(func, bound: dict, result):
    """The value the overload returns: ``result``, or ``result`` copied into ``out=`` / ``self``."""
    outs = [bound[a.name] for a in func._schema.arguments if a.is_out]
    if outs:
        out = outs[0]
        if out.shape != result.shape:
            out.resize_(result.shape)
        return out.copy_(result)
    if func.overloadpacket.__name__.endswith("_"):                 # addmm_, baddbmm_ ...: into self
        return bound["self"].copy_(result)
    return result


# ---------------------------------------------------------------------------- the products

def _out_dtype(bound: dict, t: torch.Tensor) -> torch.dtype:
    return bound.get("out_dtype") or t.dtype


def _mm(mode, p):
    a, b = p["self"], p["mat2"]
    mode.route(a, b)
    return mode.mm2d(a, b, _out_dtype(p, a), op="mm")


def _bmm(mode, p):
    a, b = p["self"], p["mat2"]
    mode.route(a, b)
    return mode.bmm3d(a, b, _out_dtype(p, a), op="bmm")


def _addmm(mode, p):
    """``beta * self + alpha * mat1 @ mat2``.  A 1-D ``self`` of length N with ``beta == 1`` is a bias
    added after the product (the cuBLASLt bias epilogue CUDA's addmm picks for that case); any other
    ``self`` is C, scaled by beta (copied into the result, then ``cublasGemmEx`` with beta)."""
    inp, a, b = p["self"], p["mat1"], p["mat2"]
    mode.route(a, b)
    dt, (M, N) = _out_dtype(p, a), (a.shape[0], b.shape[1])
    if inp.dim() == 1 and inp.shape[0] == N and p["beta"] == 1:
        return mode.mm2d(a, b, dt, op="addmm", alpha=p["alpha"], bias=inp)
    return mode.mm2d(a, b, dt, op="addmm", c=inp.expand(M, N), beta=p["beta"], alpha=p["alpha"])


def _addmm_activation(mode, p):
    """addmm then ReLU (exact on the rounded result, so where it is applied does not matter).  The GELU
    form is left to torch: cuBLASLt applies it in the fp32 epilogue, before the rounding, which the
    mode's rounded addmm cannot reproduce."""
    if p["use_gelu"]:
        mode.route(p["mat1"], p["mat2"])
        raise Native("_addmm_activation with use_gelu (cuBLASLt's GELU epilogue) is not modelled")
    return torch.relu(_addmm(mode, p))


def _baddbmm(mode, p):
    inp, a, b = p["self"], p["batch1"], p["batch2"]
    mode.route(a, b)
    c = inp.expand(a.shape[0], a.shape[1], b.shape[2])
    return mode.bmm3d(a, b, _out_dtype(p, a), op="baddbmm", c=c, beta=p["beta"], alpha=p["alpha"])


def _addbmm(mode, p):
    """``beta * self + alpha * sum_i batch1[i] @ batch2[i]`` as PyTorch computes it
    (aten/src/ATen/native/LinearAlgebra.cpp, addbmm_impl_): one addmm per batch into the result,
    beta on the first, 1 after it, so the result is rounded to its dtype after every batch."""
    inp, a, b = p["self"], p["batch1"], p["batch2"]
    mode.route(a, b)
    dt, (M, N) = _out_dtype(p, a), (a.shape[1], b.shape[2])
    result, beta = inp.expand(M, N), p["beta"]
    for i in range(max(a.shape[0], 1)):             # no batches: beta * self (one K=0 product)
        x = a[i] if a.shape[0] else a.new_zeros((M, 0))
        y = b[i] if b.shape[0] else b.new_zeros((0, N))
        result, beta = mode.mm2d(x, y, dt, op="addbmm", c=result, beta=beta, alpha=p["alpha"]), 1
    return result


def _vector(mode, *tensors) -> None:
    """Route a matrix-vector or dot product: f16 and bf16 as GEMMs with one column (CUDA's ``gemv<Half>`` and
    ``gemv<BFloat16>`` call ``gemm``, aten/src/ATen/cuda/CUDABlas.cpp); float32 ones run ``cublasSgemv`` /
    ``cublasSdot`` on CUDA cores, never TF32, so they are not tensor-core products."""
    mode.route(*tensors)
    if tensors[0].dtype == torch.float32:
        raise Native("float32 matrix-vector and dot products run cuBLAS Sgemv / Sdot on CUDA cores, not as TF32 "
                     "(aten/src/ATen/cuda/CUDABlas.cpp)")


def _mv(mode, p):
    a, v = p["self"], p["vec"]
    _vector(mode, a, v)
    return mode.mm2d(a, v[:, None], a.dtype, op="mv")[:, 0]


def _addmv(mode, p):
    inp, a, v = p["self"], p["mat"], p["vec"]
    _vector(mode, a, v)
    c = inp.expand(a.shape[0])[:, None]
    return mode.mm2d(a, v[:, None], a.dtype, op="addmv", c=c, beta=p["beta"], alpha=p["alpha"])[:, 0]


def _dot(mode, p):
    """A 1 x K by K x 1 GEMM: the mode's model of a dot product.  CUDA's f16 / bf16 ``dot`` is
    ``cublasDotEx``, a CUDA-core reduction whose order is not public: not what the GPU computes bit for bit."""
    a = p["self"]
    b = p["tensor"] if "tensor" in p else p["other"]
    _vector(mode, a, b)
    return mode.mm2d(a[None], b[:, None], a.dtype, op="dot").reshape(())


def _scaled_mm(mode, p):
    """Per-tensor scales: ``alpha = RN32(scale_a * scale_b)`` in the epilogue; ``use_fast_accum`` is not
    read (the kernel says whether partials are promoted)."""
    a, b, sa, sb = p["self"], p["mat2"], p["scale_a"], p["scale_b"]
    mode.route(a, b)
    if p["scale_result"] is not None:
        raise Native("_scaled_mm with scale_result is not modelled")
    if sa.numel() != 1 or sb.numel() != 1:
        raise ValueError("golden.torch: _scaled_mm with row-wise or block scales is not modelled; "
                         "per-tensor (one-element) fp32 scales are")
    s32 = [np.uint32(to_bits(s.float().reshape(()))) for s in (sa, sb)]
    alpha = float(np.asarray(f32_mul(*s32), np.uint32).view(np.float32))
    return mode.mm2d(a, b, _out_dtype(p, a), op="_scaled_mm", alpha=alpha, bias=p["bias"])


# ---------------------------------------------------------------------------- convolution and attention

def _convolution(mode, p):
    x, w = p["input"], p["weight"]
    mode.route(x, w, conv=True)
    if p["transposed"] or x.dim() != 4:
        raise Native("only 2-D, non-transposed convolutions are modelled (implicit GEMM)")
    return torchconv.conv2d(x, w, p["bias"], p["stride"], p["padding"], p["dilation"], p["groups"],
                            mm=mode.conv_mm())


def _convolution_backward(mode, p):
    g, x, w = p["grad_output"], p["input"], p["weight"]
    mode.route(x, w, conv=True)
    if p["transposed"] or x.dim() != 4:
        raise Native("only 2-D, non-transposed convolutions are modelled (implicit GEMM)")
    return torchconv.conv2d_backward(g, x, w, p["stride"], p["padding"], p["dilation"], p["groups"],
                                     p["output_mask"], mm=mode.conv_mm())


def _attention(mode, p) -> None:
    """The checks that send an attention call to torch instead of golden.torchattn."""
    mode.route(p["query"], p["key"], p["value"])
    if p["dropout_p"]:
        raise Native("attention with dropout is not modelled (the mask comes from the GPU kernel's own RNG)")
    q, k = p["query"], p["key"]
    if q.dim() != 4 or k.shape[1] != q.shape[1]:
        raise Native("only [B, H, L, E] attention with as many key/value heads as query heads is modelled")


def _sdpa(mode, p):
    _attention(mode, p)
    return torchattn.sdpa(p["query"], p["key"], p["value"], p["attn_mask"], 0.0, p["is_causal"], p["scale"],
                          bmm=mode.attn_bmm())


def _sdpa_backward(mode, p):
    _attention(mode, p)
    return torchattn.sdpa_backward(p["grad_out"], p["query"], p["key"], p["value"], p["out"], p["logsumexp"], 0.0,
                                   p["is_causal"], p["attn_mask"], p["scale"], bmm=mode.attn_bmm())


# aten overload packet name -> handler; in-place forms share the functional handler
HANDLERS = {
    "mm": _mm, "bmm": _bmm, "addmm": _addmm, "addmm_": _addmm, "baddbmm": _baddbmm, "baddbmm_": _baddbmm,
    "addbmm": _addbmm, "addbmm_": _addbmm, "mv": _mv, "addmv": _addmv, "addmv_": _addmv, "dot": _dot,
    "vdot": _dot, "_scaled_mm": _scaled_mm, "_addmm_activation": _addmm_activation,
    "convolution": _convolution, "convolution_backward": _convolution_backward,
    "_scaled_dot_product_flash_attention_for_cpu": _sdpa,
    "_scaled_dot_product_flash_attention_for_cpu_backward": _sdpa_backward,
}

# every aten operator known to compute floating-point products: those with a handler, and those
# without, whose calls on floating operands run natively, counted in mode.native (strict mode raises).
# The list does not depend on HANDLERS, so a handler taken out is caught, not let through.  Composite
# operators (matmul, linear, einsum, tensordot, conv2d, scaled_dot_product_attention ...) never reach
# the mode: torch decomposes them into the operators here first.
PRODUCTS = frozenset({
    "mm", "bmm", "addmm", "addmm_", "baddbmm", "baddbmm_", "addbmm", "addbmm_", "mv", "addmv", "addmv_", "dot",
    "vdot", "_scaled_mm", "convolution", "convolution_backward", "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_addmm_activation", "_convolution", "_convolution_double_backward", "mkldnn_convolution",
    "_slow_conv2d_forward", "_slow_conv2d_backward", "slow_conv3d_forward", "slow_conv_transpose2d",
    "slow_conv_transpose3d", "slow_conv_dilated2d", "slow_conv_dilated3d", "_nnpack_spatial_convolution",
    "cudnn_convolution", "cudnn_convolution_transpose", "miopen_convolution", "convolution_overrideable",
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_cudnn_attention_backward",
    "_scaled_dot_product_fused_attention_overrideable", "_flash_attention_forward", "_flash_attention_backward",
    "_efficient_attention_forward", "_efficient_attention_backward",
    "_native_multi_head_attention", "_transformer_encoder_layer_fwd", "_trilinear", "_cdist_forward",
    "_cdist_backward", "_weight_int8pack_mm", "_weight_int4pack_mm", "_mixed_dtypes_linear", "mkldnn_linear",
    "_scaled_grouped_mm", "_grouped_mm", "_scaled_mm_v2",
})
