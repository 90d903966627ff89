"""Scaled dot-product attention as a FlashAttention-2-style loop of batched GEMMs through a caller's ``bmm``.

>>> out, lse = sdpa(q, k, v, is_causal=True, bmm=mode_bmm)                          # doctest: +SKIP
>>> gq, gk, gv = sdpa_backward(gout, q, k, v, out, lse, 0.0, True, bmm=mode_bmm)    # doctest: +SKIP

The two functions take and return what ``aten._scaled_dot_product_flash_attention_for_cpu`` and its
``_backward`` take and return (``(output, logsumexp)``; ``(grad_query, grad_key, grad_value)``), so
``golden.torch`` can register them for those operators.  ``bmm(a [B, M, K], b [B, K, N], out_dtype)``
is the caller's batched product with ``aten.bmm.dtype``'s semantics: f16/bf16 (or f32) operands, the
result in ``out_dtype`` (float32 here: the tensor core's fp32 accumulator, not rounded to the operand
dtype).  ``golden.torch`` passes an emulated tensor-core GEMM, a test a float64 one.

This is a documented **model** of a FlashAttention-2 kernel (Dao, "FlashAttention-2", arXiv:2307.08691,
algorithms 1 and 2), not a claim about any library's kernel bit for bit.  Every format, for f16/bf16
inputs (the accumulator format ``acc`` is float32; for float32 inputs float32, for float64 float64):

forward, per block of ``block_n`` keys, all queries at once:

* ``S = Q K_j^T`` through ``bmm``, out in ``acc``; then ``s = S * scale`` in ``acc`` (one rounding), then
  ``+ mask`` in ``acc`` (a boolean mask as 0 / -inf; ``is_causal``: key ``j`` masked for query ``i < j``,
  top-left aligned as torch's SDPA);
* running max ``m`` (exact), ``p = exp(s - m)`` and ``alpha = exp(m_old - m)`` in ``acc``: the exponential
  is computed in float64 and rounded once to ``acc`` (correctly rounded in all but vanishingly rare
  cases; the GPU's ``ex2.approx`` on ``s * log2(e)`` is not modelled);
* running sum ``l = l * alpha + rowsum(p)``: the row sum of the fp32 ``p`` in column order, one fp32
  add at a time (FA2 sums per thread then across a quad: another order);
* ``O = O * alpha + bmm(P, V_j)``: ``P`` rounded (RNE) from ``acc`` to the input dtype before the product,
  the product out in ``acc``, the rescale and the add in ``acc`` (FA2 accumulates ``P V_j`` onto the
  rescaled ``O`` inside the MMA's accumulator: one rounding fewer, not modelled);
* at the end ``O * (1 / l)`` (FA2's ``inv_sum``: a reciprocal, then a product) in ``acc``, rounded to the
  input dtype; ``logsumexp = m + log(l)`` in ``acc``.  A row whose keys are all masked gives output 0 and
  logsumexp +inf (as FA2; torch's CPU kernel returns logsumexp 0 there).

backward (FA2's algorithm 2, all queries at once per key block):

* ``D = rowsum(dO * O)`` in ``acc`` (products rounded, then summed in column order);
* ``P = exp(s - logsumexp)`` recomputed (``S`` through ``bmm`` as above);
* ``dV_j = P^T dO`` and ``dP = dO V_j^T`` through ``bmm`` (``P`` rounded to the input dtype);
* ``dS = P * (dP - D)`` in ``acc``, rounded to the input dtype for the next two products;
* ``dQ += dS K_j`` in ``acc`` over the key blocks in order (FA2's fp32 ``atomicAdd`` of dQ, here in a
  fixed order), ``dK_j = dS^T Q``; both times ``scale`` in ``acc`` at the end, then rounded to the input
  dtype, as ``dV_j``.

``dropout_p > 0`` is refused: the dropout mask comes from the GPU kernel's own Philox stream, which no
CPU model reproduces, so no emulated run could be compared bit for bit.  Grouped-query attention
(fewer key/value heads than query heads) is refused too: repeat the key and value heads first.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

__all__ = ["sdpa", "sdpa_backward", "acc_dtype"]

BMM = Callable[..., torch.Tensor]
HALF = (torch.float16, torch.bfloat16)
NEG_INF = float("-inf")


def acc_dtype(dtype: torch.dtype) -> torch.dtype:
    """The accumulator format of the model for inputs of ``dtype``: float64 for float64, else float32."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def _check(query, key, value, dropout_p, enable_gqa=False):
    """One ValueError for each kind of input the model does not take."""
    if dropout_p:
        raise ValueError(f"sdpa: dropout_p must be 0, got {dropout_p}: the GPU kernel draws its dropout mask "
                         "from its own Philox stream, which an emulation cannot reproduce bit for bit "
                         "(evaluate with model.eval() or dropout=0)")
    if enable_gqa:
        raise ValueError("sdpa: enable_gqa is not supported: repeat the key and value heads "
                         "(repeat_interleave on dim 1) to the query's head count first")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise ValueError(f"sdpa: query, key and value must be 4-D [B, H, L, E], got {query.dim()}-D, "
                         f"{key.dim()}-D and {value.dim()}-D")
    if not query.dtype == key.dtype == value.dtype or not query.dtype.is_floating_point:
        raise ValueError(f"sdpa: query, key and value must share one floating dtype, got {query.dtype}, "
                         f"{key.dtype} and {value.dtype}")
    if key.shape[1] != query.shape[1] or value.shape[1] != query.shape[1]:
        raise ValueError(f"sdpa: grouped-query attention ({key.shape[1]} key heads for {query.shape[1]} query "
                         "heads) is not supported: repeat the key and value heads to the query's count first")
    if query.shape[0] != key.shape[0] or key.shape[:3] != value.shape[:3] or query.shape[3] != key.shape[3]:
        raise ValueError(f"sdpa: shapes do not fit: query {list(query.shape)}, key {list(key.shape)}, "
                         f"value {list(value.shape)} (need [B, H, L, E], [B, H, S, E], [B, H, S, Ev])")


def _exp(x: torch.Tensor) -> torch.Tensor:
    """``exp`` in float64, rounded once to ``x``'s dtype: the same bits on every platform (module docstring)."""
    return torch.exp(x.double()).to(x.dtype)


def _rowsum(x: torch.Tensor) -> torch.Tensor:
    """The sum over the last dimension, one add at a time in column order, in ``x``'s dtype."""
    total = torch.zeros(x.shape[:-1], dtype=x.dtype)
    for col in x.unbind(-1):
        total = total + col
    return total


def _mask_block(attn_mask, is_causal: bool, shape, j0: int, j1: int, acc) -> torch.Tensor | None:
    """The additive mask (0 / -inf, or the caller's values) for keys ``[j0, j1)``, ``[B*H, L, j1-j0]``."""
    b, h, length = shape
    add = None
    if attn_mask is not None:
        block = attn_mask[..., j0:j1]
        block = torch.where(block, 0.0, NEG_INF).to(acc) if block.dtype == torch.bool else block.to(acc)
        add = block.expand(b, h, length, j1 - j0).reshape(b * h, length, j1 - j0)
    if is_causal:
        rows = torch.arange(length)[:, None]
        cols = torch.arange(j0, j1)[None, :]
        causal = torch.where(cols > rows, NEG_INF, 0.0).to(acc).expand(b * h, length, j1 - j0)
        add = causal if add is None else add + causal
    return add


def _scores(q3, key, j0, j1, scale_t, attn_mask, is_causal, shape, bmm: BMM, acc):
    """``s = (Q K_j^T) * scale + mask`` for keys ``[j0, j1)``, in ``acc``."""
    b, h = shape[:2]
    kj = key[:, :, j0:j1].reshape(b * h, j1 - j0, key.shape[-1])
    s = bmm(q3, kj.transpose(1, 2), out_dtype=acc) * scale_t
    add = _mask_block(attn_mask, is_causal, shape, j0, j1, acc)
    return s if add is None else s + add


def _scale(query, scale, acc) -> torch.Tensor:
    """The softmax scale as an ``acc`` scalar tensor (default ``1 / sqrt(E)``)."""
    return torch.tensor(1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale), dtype=acc)


def sdpa(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask: torch.Tensor | None = None,
         dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None, *, bmm: BMM,
         block_n: int = 64, enable_gqa: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention ``softmax(Q K^T * scale + mask) V`` as FlashAttention-2's forward loop (module docstring).

    Parameters
    ----------
    query, key, value : Tensor
        ``[B, H, L, E]``, ``[B, H, S, E]``, ``[B, H, S, Ev]``, one dtype.
    attn_mask : Tensor, optional
        Boolean (True: attend) or additive, broadcastable to ``[B, H, L, S]``.
    dropout_p : float
        Must be 0.
    is_causal : bool
        Mask key ``j`` for query ``i`` when ``j > i``.
    scale : float, optional
        Default ``1 / sqrt(E)``.
    bmm : callable
        ``bmm(a, b, out_dtype=...)``: the batched product (module docstring).
    block_n : int
        Keys per block of the loop.
    enable_gqa : bool
        Must be False.

    Returns
    -------
    (Tensor, Tensor)
        The output ``[B, H, L, Ev]`` in the input dtype and the logsumexp ``[B, H, L]`` in ``acc``.
    """
    _check(query, key, value, dropout_p, enable_gqa)
    if not isinstance(block_n, int) or block_n < 1:
        raise ValueError(f"sdpa: block_n must be a positive int, got {block_n!r}")
    b, h, length, e = query.shape
    acc, dtype = acc_dtype(query.dtype), query.dtype
    scale_t = _scale(query, scale, acc)
    q3 = query.reshape(b * h, length, e)
    m = torch.full((b * h, length), NEG_INF, dtype=acc)
    total = torch.zeros(b * h, length, dtype=acc)
    out = torch.zeros(b * h, length, value.shape[-1], dtype=acc)
    for j0 in range(0, key.shape[2], block_n):
        j1 = min(j0 + block_n, key.shape[2])
        s = _scores(q3, key, j0, j1, scale_t, attn_mask, is_causal, (b, h, length), bmm, acc)
        m_new = torch.maximum(m, s.amax(-1))
        m_safe = torch.where(m_new == NEG_INF, 0.0, m_new).to(acc)     # all masked so far: exp(-inf) = 0
        p = _exp(s - m_safe[..., None])
        alpha = _exp(m - m_safe)
        total = total * alpha + _rowsum(p)
        vj = value[:, :, j0:j1].reshape(b * h, j1 - j0, value.shape[-1])
        out = out * alpha[..., None] + bmm(p.to(dtype), vj, out_dtype=acc)
        m = m_new
    empty = (total == 0) | torch.isnan(total)
    inv = torch.where(empty, 1.0, 1.0 / total).to(acc)
    lse = torch.where(empty, float("inf"), m + torch.log(total.double()).to(acc)).to(acc)
    out = (out * inv[..., None]).to(dtype)
    return out.reshape(b, h, length, -1), lse.reshape(b, h, length)


def sdpa_backward(grad_out: torch.Tensor, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                  out: torch.Tensor, logsumexp: torch.Tensor, dropout_p: float, is_causal: bool,
                  attn_mask: torch.Tensor | None = None, scale: float | None = None, *, bmm: BMM,
                  block_n: int = 64) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The gradients of :func:`sdpa` as FlashAttention-2's backward loop (module docstring).

    Parameters
    ----------
    grad_out, out : Tensor
        ``[B, H, L, Ev]``: the output's gradient and the output, the input dtype.
    query, key, value, attn_mask, is_causal, scale, dropout_p, bmm, block_n
        As for :func:`sdpa`.
    logsumexp : Tensor
        ``[B, H, L]``, as :func:`sdpa` returned it.

    Returns
    -------
    (Tensor, Tensor, Tensor)
        ``(grad_query, grad_key, grad_value)`` in the input dtype.
    """
    _check(query, key, value, dropout_p)
    b, h, length, e = query.shape
    ev = value.shape[-1]
    if grad_out.shape != out.shape or tuple(out.shape) != (b, h, length, ev) or logsumexp.shape != (b, h, length):
        raise ValueError(f"sdpa_backward: grad_out and out must be {[b, h, length, ev]} and logsumexp "
                         f"{[b, h, length]}, got {list(grad_out.shape)}, {list(out.shape)}, {list(logsumexp.shape)}")
    acc, dtype = acc_dtype(query.dtype), query.dtype
    scale_t = _scale(query, scale, acc)
    q3, do3 = query.reshape(b * h, length, e), grad_out.reshape(b * h, length, ev).to(dtype)
    d_row = _rowsum(do3.to(acc) * out.reshape(b * h, length, ev).to(acc))
    lse = logsumexp.reshape(b * h, length).to(acc)
    dq = torch.zeros(b * h, length, e, dtype=acc)
    dks, dvs = [], []
    for j0 in range(0, key.shape[2], block_n):
        j1 = min(j0 + block_n, key.shape[2])
        s = _scores(q3, key, j0, j1, scale_t, attn_mask, is_causal, (b, h, length), bmm, acc)
        p = _exp(s - lse[..., None])
        kj = key[:, :, j0:j1].reshape(b * h, j1 - j0, e)
        vj = value[:, :, j0:j1].reshape(b * h, j1 - j0, ev)
        dvs.append(bmm(p.to(dtype).transpose(1, 2), do3, out_dtype=acc).to(dtype))
        dp = bmm(do3, vj.transpose(1, 2), out_dtype=acc)
        ds = (p * (dp - d_row[..., None])).to(dtype)
        dq = dq + bmm(ds, kj, out_dtype=acc)
        dks.append((bmm(ds.transpose(1, 2), q3, out_dtype=acc) * scale_t).to(dtype))
    dq = (dq * scale_t).to(dtype)
    shape_k = (b, h, key.shape[2])
    return (dq.reshape(b, h, length, e), torch.cat(dks, 1).reshape(*shape_k, e),
            torch.cat(dvs, 1).reshape(*shape_k, ev))
