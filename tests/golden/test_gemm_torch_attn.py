"""golden.torchattn: attention and its gradients as a FlashAttention-2-style loop through a caller's bmm.

With a float64 bmm on float64 inputs the model agrees with torch's own SDPA and its autograd gradients
to float64 rounding (the loop, masks, scale and backward formulas are right).  With an emulated bmm
(golden.gemm, Hopper's f16 tensor core, fp32 out) a one-block forward equals the documented steps done
here by hand bit for bit; the P operand of P V is rounded to f16 (the hand computation without that
rounding gives other bits, so the check would see it); runs repeat bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install 'mma-rtl[torch]'")

from golden.gemm import Kernel, gemm, instruction_for  # noqa: E402
from golden.torchattn import acc_dtype, sdpa, sdpa_backward  # noqa: E402

F = torch.nn.functional
FMT = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}
VIEW = {2: (torch.int16, np.uint16), 4: (torch.int32, np.uint32)}


def ref_bmm(a, b, out_dtype=None):
    """A float64 batched product of operands of any dtype, returned in ``out_dtype``."""
    return torch.bmm(a.double(), b.double()).to(out_dtype or a.dtype)


def bits(t):
    tv, nv = VIEW[t.element_size()]
    return t.detach().contiguous().view(tv).numpy().view(nv)


def from_bits(x, dtype):
    tv, nv = VIEW[torch.empty((), dtype=dtype).element_size()]
    return torch.from_numpy(np.ascontiguousarray(x.astype(nv))).view(tv).view(dtype)


class EmulatedBMM:
    """golden.gemm per batch on Hopper's tensor core, the result in ``out_dtype``; records operand dtypes."""

    def __init__(self):
        self.calls = []

    def __call__(self, a, b, out_dtype=None):
        out_dtype = out_dtype or a.dtype
        self.calls.append((a.dtype, b.dtype, out_dtype))
        ins = instruction_for("hopper", FMT[a.dtype], FMT[b.dtype])
        k = Kernel(out_format=FMT[out_dtype])
        return torch.stack([from_bits(gemm(bits(x), bits(y), instr=ins, kernel=k), out_dtype) for x, y in zip(a, b)])


def qkv(shape_q, shape_k, ev, dtype, seed, grad=False):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(shape_q, generator=g, dtype=torch.float64).to(dtype)
    k = torch.randn(shape_k, generator=g, dtype=torch.float64).to(dtype)
    v = torch.randn((*shape_k[:-1], ev), generator=g, dtype=torch.float64).to(dtype)
    return [t.requires_grad_(grad) for t in (q, k, v)]


MASKS = {"none": None, "bool": lambda g, L, S: torch.rand(L, S, generator=g) > 0.4,
         "additive": lambda g, L, S: torch.randn(2, 1, L, S, generator=g, dtype=torch.float64)}


@pytest.mark.parametrize("mask, causal, L, S, block_n", [
    ("none", False, 5, 7, 3), ("none", True, 6, 9, 4), ("bool", False, 4, 9, 2), ("additive", False, 4, 9, 64)])
def test_float64_reference_agrees_with_torch_sdpa_and_its_gradients(mask, causal, L, S, block_n):
    q, k, v = qkv((2, 3, L, 8), (2, 3, S, 8), 5, torch.float64, seed=L * S, grad=True)
    g = torch.Generator().manual_seed(1)
    m = MASKS[mask](g, L, S) if MASKS[mask] else None
    if mask == "bool":
        m[:, 0] = True                                   # no row fully masked: torch's math path gives NaN there
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal, scale=0.3)
    gout = torch.randn(want.shape, generator=g, dtype=torch.float64)
    wants = torch.autograd.grad(want, (q, k, v), gout)
    q, k, v = q.detach(), k.detach(), v.detach()
    out, lse = sdpa(q, k, v, m, 0.0, causal, 0.3, bmm=ref_bmm, block_n=block_n)
    assert out.dtype == torch.float64 and lse.shape == (2, 3, L)
    assert torch.allclose(out, want, rtol=0, atol=1e-13)
    grads = sdpa_backward(gout, q, k, v, out, lse, 0.0, causal, m, 0.3, bmm=ref_bmm, block_n=block_n)
    for name, got, ref in zip("qkv", grads, wants):
        assert torch.allclose(got, ref, rtol=0, atol=1e-12), name


def test_logsumexp_is_torch_cpu_flash_attentions():
    q, k, v = qkv((1, 2, 5, 8), (1, 2, 7, 8), 8, torch.float32, seed=2)
    _, want = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, True)
    _, lse = sdpa(q, k, v, is_causal=True, bmm=ref_bmm, block_n=3)
    assert lse.dtype == torch.float32 and torch.allclose(lse, want, rtol=1e-6, atol=1e-6)


def by_hand_one_block(q, k, v, scale, bmm, round_p=True):
    """The module docstring's forward for one key block, written out: S, s, m, p, l, O, O * (1 / l)."""
    b, h, L, e = q.shape
    q3, k3, v3 = q.reshape(b * h, L, e), k.reshape(b * h, -1, e), v.reshape(b * h, -1, v.shape[-1])
    s = bmm(q3, k3.transpose(1, 2), out_dtype=torch.float32) * torch.tensor(scale, dtype=torch.float32)
    p = torch.exp((s - s.amax(-1, keepdim=True)).double()).float()
    total = torch.zeros(b * h, L)
    for j in range(p.shape[-1]):
        total = total + p[..., j]
    o = bmm(p.to(q.dtype) if round_p else p, v3, out_dtype=torch.float32)
    return (o * (1.0 / total)[..., None]).to(q.dtype).reshape(b, h, L, -1)


def test_emulated_one_block_forward_is_the_documented_steps_bit_for_bit():
    q, k, v = qkv((1, 2, 4, 16), (1, 2, 8, 16), 16, torch.float16, seed=3)
    bmm = EmulatedBMM()
    out, _ = sdpa(q, k, v, scale=0.25, bmm=bmm, block_n=64)
    assert bmm.calls == [(torch.float16, torch.float16, torch.float32)] * 2    # S and P V: f16 in, fp32 out
    assert np.array_equal(bits(out), bits(by_hand_one_block(q, k, v, 0.25, EmulatedBMM())))


def test_p_is_rounded_to_the_input_dtype_before_p_v():
    q, k, v = qkv((1, 2, 6, 8), (1, 2, 10, 8), 8, torch.float16, seed=4)
    out, _ = sdpa(q, k, v, scale=0.5, bmm=ref_bmm)
    rounded = by_hand_one_block(q, k, v, 0.5, ref_bmm)
    unrounded = by_hand_one_block(q, k, v, 0.5, ref_bmm, round_p=False)
    assert np.array_equal(bits(out), bits(rounded))
    assert not np.array_equal(bits(rounded), bits(unrounded))       # the check sees a P left in fp32


def test_emulated_runs_repeat_and_track_the_float64_model():
    q, k, v = qkv((1, 2, 12, 16), (1, 2, 12, 16), 16, torch.bfloat16, seed=5)
    gout = qkv((1, 2, 12, 16), (1, 2, 1, 1), 1, torch.bfloat16, seed=6)[0]
    runs = []
    for _ in range(2):
        out, lse = sdpa(q, k, v, is_causal=True, bmm=EmulatedBMM(), block_n=5)
        grads = sdpa_backward(gout, q, k, v, out, lse, 0.0, True, bmm=EmulatedBMM(), block_n=5)
        runs.append([bits(t) for t in (out, lse, *grads)])
    assert all(np.array_equal(x, y) for x, y in zip(*runs))
    ref, _ = sdpa(*(t.double() for t in (q, k, v)), is_causal=True, bmm=ref_bmm)
    assert out.dtype == torch.bfloat16 and lse.dtype == acc_dtype(torch.bfloat16) == torch.float32
    assert (out.double() - ref).abs().max() < 2 ** -6                     # bf16 steps: errors of that order


def test_emulated_grad_value_is_p_transpose_times_grad_out():
    q, k, v = qkv((1, 1, 5, 16), (1, 1, 7, 16), 16, torch.float16, seed=7)
    gout = qkv((1, 1, 5, 16), (1, 1, 1, 1), 1, torch.float16, seed=8)[0]
    out, lse = sdpa(q, k, v, bmm=EmulatedBMM())
    _, _, gv = sdpa_backward(gout, q, k, v, out, lse, 0.0, False, bmm=EmulatedBMM())
    bmm = EmulatedBMM()
    s = bmm(q[0], k[0].transpose(1, 2), out_dtype=torch.float32) * torch.tensor(1 / math.sqrt(16), dtype=torch.float32)
    p = torch.exp((s - lse[0][..., None]).double()).float()
    want = bmm(p.half().transpose(1, 2), gout[0], out_dtype=torch.float32).half()
    assert np.array_equal(bits(gv[0]), bits(want))


def test_fully_masked_rows_give_zero_output_and_infinite_logsumexp():
    q, k, v = qkv((1, 1, 3, 8), (1, 1, 4, 8), 8, torch.float32, seed=9)
    mask = torch.ones(3, 4, dtype=torch.bool)
    mask[1] = False
    out, lse = sdpa(q, k, v, mask, bmm=ref_bmm, block_n=2)
    assert torch.equal(out[0, 0, 1], torch.zeros(8)) and lse[0, 0, 1] == float("inf")
    grads = sdpa_backward(torch.ones_like(out), q, k, v, out, lse, 0.0, False, mask, bmm=ref_bmm, block_n=2)
    assert all(torch.isfinite(t).all() for t in grads) and torch.equal(grads[0][0, 0, 1], torch.zeros(8))


@pytest.mark.parametrize("args, kwargs, match", [
    ((), dict(dropout_p=0.1), "dropout_p must be 0"),
    ((), dict(enable_gqa=True), "enable_gqa is not supported"),
    ((), dict(block_n=0), "block_n must be a positive int"),
])
def test_unsupported_options_are_refused_with_the_reason(args, kwargs, match):
    q, k, v = qkv((1, 2, 3, 8), (1, 2, 3, 8), 8, torch.float32, seed=0)
    with pytest.raises(ValueError, match=match):
        sdpa(q, k, v, *args, **kwargs, bmm=ref_bmm)


def test_bad_shapes_and_grouped_query_attention_are_refused():
    q, k, v = qkv((1, 4, 3, 8), (1, 2, 3, 8), 8, torch.float32, seed=0)
    with pytest.raises(ValueError, match="grouped-query attention"):
        sdpa(q, k, v, bmm=ref_bmm)
    with pytest.raises(ValueError, match="4-D"):
        sdpa(q[0], k[0], v[0], bmm=ref_bmm)
    with pytest.raises(ValueError, match="one floating dtype"):
        sdpa(q, k.half(), v, bmm=ref_bmm)
    q, k, v = qkv((1, 2, 3, 8), (1, 2, 3, 4), 8, torch.float32, seed=0)
    with pytest.raises(ValueError, match="shapes do not fit"):
        sdpa(q, k, v, bmm=ref_bmm)
    q, k, v = qkv((1, 2, 3, 8), (1, 2, 3, 8), 8, torch.float32, seed=0)
    with pytest.raises(ValueError, match="dropout_p must be 0"):
        sdpa_backward(q, q, k, v, q, q[..., 0], 0.5, False, bmm=ref_bmm)
    with pytest.raises(ValueError, match="grad_out and out must be"):
        sdpa_backward(q, q, k, v, q, q, 0.0, False, bmm=ref_bmm)
