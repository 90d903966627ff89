"""2-D convolution as implicit GEMMs: what a tensor-core convolution kernel multiplies, and in which shapes.

>>> y = conv2d(x, w, b, stride=1, padding=1, dilation=1, groups=1, mm=mode_mm)     # doctest: +SKIP
>>> gx, gw, gb = conv2d_backward(gy, x, w, 1, 1, 1, 1, (True, True, True), mm=mode_mm)  # doctest: +SKIP

``mm(a, b)`` is the caller's 2-D matrix product with ``aten.mm``'s dtype semantics (operands and result
in the input dtype): ``golden.torch`` passes an emulated tensor-core GEMM, a test a float64 one.  This
module only rearranges data (pads, gathers, reshapes: exact) and calls ``mm`` once per group for each
of the three convolution GEMMs; every rounding of a product is ``mm``'s.

The three GEMMs, named and shaped as in CUTLASS's implicit-GEMM convolution documentation
(``media/docs/implicit_gemm_convolution.md``: Fprop, Dgrad, Wgrad), for input ``[N, C, H, W]``, weight
``[K, C/g, R, S]`` (K output channels, g groups), output ``[N, K, P, Q]``; per group:

===========  ===================  ==================  ==================  ====================================
GEMM         M                    N                   K (reduction)       operands
===========  ===================  ==================  ==================  ====================================
fprop        ``N*P*Q``            ``K/g``             ``R*S*C/g``         im2col(x) ``[M, K]``, weight ``[K, N]``
dgrad        ``N*H*W``            ``C/g``             ``R*S*K/g``         im2col(zero-inserted dy), flipped weight
wgrad        ``K/g``              ``R*S*C/g``         ``N*P*Q``           dy ``[M, K]``, im2col(x) ``[K, N]``
===========  ===================  ==================  ==================  ====================================

What is modelled, and after whom:

* the reduction order: GEMM-K runs over filter positions ``(r, s)`` outer and channels inner (channels
  fastest), as CUTLASS's NHWC implicit-GEMM iterators walk it; the GEMM then pads K to whole k-steps
  at the end (``golden.gemm``).  A library that orders K otherwise, or pads C per filter position
  (cuDNN pads a 3-channel input), groups other products into each k-step: a different result;
* dgrad as one implicit GEMM (CUTLASS's ``Dgrad`` with the analytic iterator): each input gradient is
  one dot product over ``R*S*K/g`` terms, one rounding, not a ``col2im`` sum of rounded columns.  For
  stride > 1 the terms that fall between output positions are zero products (the gradient is
  zero-inserted), which change no sum but do take places in the k-steps; CUTLASS's strided dgrad
  skips them instead;
* the bias: PyTorch's cuDNN path adds it after the convolution, as a separate elementwise
  ``output.add_(bias)`` in the output dtype (``aten/src/ATen/native/Convolution.cpp``,
  ``ConvBackend::Cudnn``): here the rounded GEMM result plus the bias, computed in fp32 and rounded
  once to the output dtype (the fp32 sum of two f16/bf16 values rounds innocuously);
* the bias gradient: ``grad_output.sum((0, 2, 3))``, as ``Convolution.cpp`` computes it for backends
  without their own (cuDNN among them): a reduction, not a tensor-core product, run here as torch runs
  it on this machine; its order on a GPU is not modelled.

Only 2-D, non-transposed convolution in NCHW is handled; anything else is a ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F

__all__ = ["conv2d", "conv2d_backward", "conv_output_size", "GEMM_SHAPES"]

MM = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

# the GEMM each pass runs per group, as (M, N, K) in the sizes' names of the table above
GEMM_SHAPES = {"fprop": ("N*P*Q", "K/g", "R*S*C/g"), "dgrad": ("N*H*W", "C/g", "R*S*K/g"),
               "wgrad": ("K/g", "R*S*C/g", "N*P*Q")}


def _pair(value, what: str) -> tuple[int, int]:
    """An int or a pair of ints as a pair; anything else is a ValueError naming ``what``."""
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) == 1:
        pair = pair * 2
    if len(pair) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair):
        raise ValueError(f"conv2d: {what} must be an int or two ints, got {value!r}")
    return pair


def conv_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """One spatial output size of a convolution: ``(size + 2 pad - dil (kernel - 1) - 1) // stride + 1``."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _check(input: torch.Tensor, weight: torch.Tensor, stride, padding, dilation, groups):
    """Validated (stride, padding, dilation) pairs; one ValueError for each kind of bad argument."""
    if input.dim() != 4 or weight.dim() != 4:
        raise ValueError(f"conv2d: input and weight must be 4-D (NCHW and [K, C/groups, R, S]), got "
                         f"{input.dim()}-D and {weight.dim()}-D")
    if input.dtype != weight.dtype:
        raise ValueError(f"conv2d: input and weight must have one dtype, got {input.dtype} and {weight.dtype}")
    stride, padding, dilation = _pair(stride, "stride"), _pair(padding, "padding"), _pair(dilation, "dilation")
    if min(stride) < 1 or min(dilation) < 1 or min(padding) < 0:
        raise ValueError(f"conv2d: stride and dilation must be >= 1 and padding >= 0, got stride={stride}, "
                         f"padding={padding}, dilation={dilation}")
    if not isinstance(groups, int) or groups < 1 or input.shape[1] % groups or weight.shape[0] % groups:
        raise ValueError(f"conv2d: groups must be a positive int dividing the input channels ({input.shape[1]}) "
                         f"and the output channels ({weight.shape[0]}), got {groups!r}")
    if weight.shape[1] * groups != input.shape[1]:
        raise ValueError(f"conv2d: weight has {weight.shape[1]} input channels per group, the input "
                         f"{input.shape[1]} channels in {groups} groups")
    out = [conv_output_size(input.shape[2 + i], weight.shape[2 + i], stride[i], padding[i], dilation[i])
           for i in range(2)]
    if min(out) < 1:
        raise ValueError(f"conv2d: the kernel (dilated) does not fit the padded input: output size {out}")
    return stride, padding, dilation


def _im2col(x: torch.Tensor, kernel, stride, padding, dilation) -> torch.Tensor:
    """``x [N, C, H, W]`` gathered to ``[N * P * Q, R * S * C]``: one row per output position, the
    columns ordered filter position outer, channel inner (the implicit GEMM's K order)."""
    n, c = x.shape[:2]
    cols = F.unfold(x, kernel, dilation=dilation, padding=padding, stride=stride)   # [N, C*R*S, L], c outer
    rs = kernel[0] * kernel[1]
    return cols.view(n, c, rs, -1).permute(0, 3, 2, 1).reshape(-1, rs * c)


def _weight_rsc(w: torch.Tensor) -> torch.Tensor:
    """``w [K, C, R, S]`` as the fprop GEMM's B, ``[R * S * C, K]`` in the implicit GEMM's K order."""
    return w.permute(2, 3, 1, 0).reshape(-1, w.shape[0])


def _group(t: torch.Tensor, dim: int, groups: int, g: int) -> torch.Tensor:
    size = t.shape[dim] // groups
    return t.narrow(dim, g * size, size)


def conv2d(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
           groups: int = 1, *, mm: MM) -> torch.Tensor:
    """``aten.convolution`` (2-D, not transposed) as one fprop implicit GEMM per group through ``mm``.

    Parameters
    ----------
    input : Tensor
        ``[N, C, H, W]``.
    weight : Tensor
        ``[K, C / groups, R, S]``, the input's dtype.
    bias : Tensor or None
        ``[K]``, added after the GEMM in the output dtype (module docstring).
    stride, padding, dilation : int or pair of ints
    groups : int
    mm : callable
        ``mm(a [M, Kg], b [Kg, Ng]) -> [M, Ng]`` in the input dtype.

    Returns
    -------
    Tensor
        ``[N, K, P, Q]`` in the input dtype.
    """
    stride, padding, dilation = _check(input, weight, stride, padding, dilation, groups)
    n, _, h, w = input.shape
    k, _, r, s = weight.shape
    p, q = (conv_output_size(size, kern, st, pad, dil)
            for size, kern, st, pad, dil in zip((h, w), (r, s), stride, padding, dilation))
    outs = []
    for g in range(groups):
        a = _im2col(_group(input, 1, groups, g), (r, s), stride, padding, dilation)
        outs.append(mm(a, _weight_rsc(_group(weight, 0, groups, g))))        # [N*P*Q, K/g]
    out = torch.cat(outs, 1).view(n, p, q, k).permute(0, 3, 1, 2).contiguous()
    if bias is not None:
        out = (out.float() + bias.float().view(1, k, 1, 1)).to(out.dtype)
    return out


def _dgrad(grad_output, input_shape, weight, stride, padding, dilation, groups, mm: MM) -> torch.Tensor:
    """The input gradient as CUTLASS's dgrad implicit GEMM: a stride-1 convolution of the zero-inserted,
    padded output gradient with the flipped, transposed weight (``[R*S*K/g, C/g]``), one GEMM per group."""
    n, _, h, w = input_shape
    k, cg, r, s = weight.shape
    p, q = grad_output.shape[2:]
    zi = grad_output.new_zeros(n, k, (p - 1) * stride[0] + 1, (q - 1) * stride[1] + 1)
    zi[:, :, ::stride[0], ::stride[1]] = grad_output
    # pad (negative pads crop) so that a stride-1 dilated convolution gives exactly H x W
    top, left = dilation[0] * (r - 1) - padding[0], dilation[1] * (s - 1) - padding[1]
    bottom = h + dilation[0] * (r - 1) - top - zi.shape[2]
    right = w + dilation[1] * (s - 1) - left - zi.shape[3]
    zi = F.pad(zi, (left, right, top, bottom))
    outs = []
    for g in range(groups):
        wg = _group(weight, 0, groups, g).flip(2, 3)                       # [K/g, C/g, R, S], flipped
        a = _im2col(_group(zi, 1, groups, g), (r, s), (1, 1), (0, 0), dilation)
        outs.append(mm(a, wg.permute(2, 3, 0, 1).reshape(-1, cg)))         # [N*H*W, C/g]
    return torch.cat(outs, 1).view(n, h, w, cg * groups).permute(0, 3, 1, 2).contiguous()


def _wgrad(grad_output, input, weight_shape, stride, padding, dilation, groups, mm: MM) -> torch.Tensor:
    """The weight gradient as CUTLASS's wgrad implicit GEMM: ``dy^T [K/g, N*P*Q] @ im2col(x)``."""
    k, cg, r, s = weight_shape
    outs = []
    for g in range(groups):
        dy = _group(grad_output, 1, groups, g)
        a = dy.permute(1, 0, 2, 3).reshape(dy.shape[1], -1)                # [K/g, N*P*Q]
        b = _im2col(_group(input, 1, groups, g), (r, s), stride, padding, dilation)   # [N*P*Q, R*S*C/g]
        outs.append(mm(a, b).view(-1, r, s, cg).permute(0, 3, 1, 2))     # [K/g, C/g, R, S]
    return torch.cat(outs, 0).contiguous()


def conv2d_backward(grad_output: torch.Tensor, input: torch.Tensor, weight: torch.Tensor,
                    stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                    dilation: int | Sequence[int] = 1, groups: int = 1,
                    output_mask: Sequence[bool] = (True, True, True), *, mm: MM):
    """``aten.convolution_backward`` (2-D, not transposed): dgrad and wgrad GEMMs through ``mm``.

    Parameters
    ----------
    grad_output : Tensor
        ``[N, K, P, Q]``, the input's dtype.
    input, weight : Tensor
        The forward pass's operands.
    stride, padding, dilation, groups
        The forward pass's.
    output_mask : three bools
        Which of (grad_input, grad_weight, grad_bias) to compute; the others are None.
    mm : callable
        As for :func:`conv2d`.

    Returns
    -------
    tuple of Tensor or None
        ``(grad_input, grad_weight, grad_bias)``.
    """
    stride, padding, dilation = _check(input, weight, stride, padding, dilation, groups)
    n, k = input.shape[0], weight.shape[0]
    want = tuple(conv_output_size(input.shape[2 + i], weight.shape[2 + i], stride[i], padding[i], dilation[i])
                 for i in range(2))
    if tuple(grad_output.shape) != (n, k, *want) or grad_output.dtype != input.dtype:
        raise ValueError(f"conv2d_backward: grad_output must be {[n, k, *want]} in {input.dtype}, got "
                         f"{list(grad_output.shape)} in {grad_output.dtype}")
    if len(output_mask) != 3:
        raise ValueError(f"conv2d_backward: output_mask must be three bools, got {output_mask!r}")
    gi = _dgrad(grad_output, input.shape, weight, stride, padding, dilation, groups, mm) if output_mask[0] else None
    gw = _wgrad(grad_output, input, weight.shape, stride, padding, dilation, groups, mm) if output_mask[1] else None
    gb = grad_output.sum((0, 2, 3)) if output_mask[2] else None
    return gi, gw, gb
