"""golden.torch at the aten level: every matmul-like operator torch decomposes to is emulated bit for bit
as golden.gemm computes it, strict mode catches a product that is not (shown by removing a handler),
gradients are kept and their products emulated, and every edge of the issue that asked for it has a
defined answer (split-K at small K, instruction/dtype mismatches, empty dimensions, torch.compile,
the meta device, C in the accumulator)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install 'mma-rtl[torch]' "
                            "(requirements.txt pins it for make test)")

import golden  # noqa: E402
import golden.torch as gt  # noqa: E402
from golden.gemm import Kernel, gemm, kernel_preset  # noqa: E402
from golden.torch import ops  # noqa: E402

ARCH = "hopper"
BF16 = golden.lookup(ARCH, "HGMMA.64xNx16.F32.BF16")
F16 = golden.lookup(ARCH, "HGMMA.64xNx16.F32")
KB = Kernel(out_format="bf16")
bits = gt.to_bits


def rand(*shape, seed=0, dtype=torch.bfloat16):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def want(a, b, kernel=KB, ins=BF16, **kw):
    """golden.gemm of 2-D bf16 tensors: the bit patterns an emulated product must return."""
    return gemm(bits(a), bits(b), instr=ins, kernel=kernel, **kw)


def same(t, expected) -> bool:
    return np.array_equal(bits(t.contiguous()), np.asarray(expected))


# ---------------------------------------------------------------------------- every operator

def test_the_products_that_used_to_slip_past_are_golden_gemm():
    a, b, c = rand(3, 40, seed=1), rand(40, 5, seed=2), rand(3, 5, seed=3)
    a2, b2 = rand(2, 3, 40, seed=4), rand(2, 40, 5, seed=5)
    v = rand(40, seed=6)
    with gt.emulate(ARCH, strict=True) as mode:
        einsum = torch.einsum("ik,kn->in", a, b)
        tensordot = torch.tensordot(a, b, 1)
        inner = torch.inner(a, b.t())
        multi = torch.linalg.multi_dot([a, b, rand(5, 2, seed=7)])
        mv, dot = torch.mv(a, v), torch.dot(v, v)
        baddbmm = torch.baddbmm(c.expand(2, 3, 5), a2, b2, beta=0.5)
        addbmm = torch.addbmm(c, a2, b2)
        out1, out2 = torch.empty(3, 5, dtype=torch.bfloat16), torch.empty(3, 5, dtype=torch.bfloat16)
        torch.matmul(a, b, out=out1)
        torch.mm(a, b, out=out2)
        inplace = c.clone().addmm_(a, b, beta=0.25)
        addmv, vdot = torch.addmv(c[:, 0], a, v, alpha=2), torch.vdot(v, v)
    ab = want(a, b)
    assert same(inplace, want(a, b, C=bits(c), beta=0.25))
    assert same(addmv, want(a, v[:, None], C=bits(c[:, :1]), beta=1.0, alpha=2.0)[:, 0])
    assert same(vdot, want(v[None], v[:, None]).reshape(()))
    for name, t in {"einsum": einsum, "tensordot": tensordot, "inner": inner, "matmul(out=)": out1,
                    "mm(out=)": out2}.items():
        assert same(t, ab), name
    assert same(multi, want(gt.from_bits(ab, torch.bfloat16), rand(5, 2, seed=7)))
    assert same(mv, want(a, v[:, None])[:, 0]) and same(dot, want(v[None], v[:, None]).reshape(()))
    for i in range(2):
        assert same(baddbmm[i], want(a2[i], b2[i], C=bits(c), beta=0.5))
    first = gt.from_bits(want(a2[0], b2[0], C=bits(c), beta=1.0), torch.bfloat16)
    assert same(addbmm, want(a2[1], b2[1], C=bits(first), beta=1.0))       # one addmm per batch, rounded
    assert mode.native == {} and mode.calls == {BF16.name: 16}
    assert mode.ops["aten.mm.out"] == 2 and mode.ops["aten.addbmm.default"] == 1


def test_addmm_activation_relu_is_emulated_and_gelu_is_refused_under_strict():
    a, b, bias = rand(3, 32, seed=27), rand(32, 4, seed=28), rand(4, seed=29)
    with gt.emulate(ARCH, strict=True):
        y = torch.ops.aten._addmm_activation(bias, a, b)
    assert same(y, bits(torch.relu(gt.from_bits(want(a, b, bias=bits(bias)), torch.bfloat16))))
    with pytest.raises(gt.NotEmulated, match="use_gelu"):
        with gt.emulate(ARCH, strict=True):
            torch.ops.aten._addmm_activation(bias, a, b, use_gelu=True)


def test_strict_catches_a_product_without_a_handler(monkeypatch):
    a, b = rand(2, 3, 16), rand(2, 16, 4)
    monkeypatch.delitem(ops.HANDLERS, "bmm")                  # the planted fault: bmm is no longer modelled
    with pytest.raises(gt.NotEmulated, match=r"aten\.bmm\.default would run natively"):
        with gt.emulate(ARCH, strict=True):
            torch.einsum("bik,bkn->bin", a, b)
    with gt.emulate(ARCH, quiet=True) as mode:                 # not strict: it runs, counted and explained
        torch.einsum("bik,bkn->bin", a, b)
    assert mode.native == {"aten.bmm.default": 1} and "no model of aten.bmm" in mode.native_why["aten.bmm.default"]


def test_native_products_are_summarised_on_exit_and_strict_names_the_fix(capsys):
    x = torch.randn(3, 4, dtype=torch.float64)
    with gt.emulate(ARCH) as mode:
        x @ x.t()
    assert mode.native == {"aten.mm.default": 1} and mode.calls == {}
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "golden.torch: 1 floating-point product(s) ran natively, not emulated:"
    assert err[1].startswith("  aten.mm.default x1: torch.float64 products")
    with gt.emulate(ARCH, quiet=True):
        x @ x.t()
    assert capsys.readouterr().err == ""
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")
        with gt.emulate(ARCH, quiet=True) as mode:          # TF32 allowed: matrices yes, vectors never
            x.float() @ x.float().t()
            x.float() @ x[0].float()
        assert mode.calls == {"HGMMA.64xNx8.F32.TF32": 1} and mode.native == {"aten.mv.default": 1}
        assert "Sgemv / Sdot on CUDA cores" in mode.native_why["aten.mv.default"]
    finally:
        torch.set_float32_matmul_precision(before)
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        with pytest.raises(gt.NotEmulated, match="set it to 'high' to run them as TF32"):
            with gt.emulate(ARCH, strict=True):
                x.float() @ x.float().t()
    finally:
        torch.set_float32_matmul_precision(before)


# ---------------------------------------------------------------------------- gradients

def test_a_training_step_keeps_grad_and_emulates_the_backward_products():
    lin = torch.nn.Linear(24, 6).bfloat16()
    x = rand(5, 24, seed=8).requires_grad_()
    g = rand(5, 6, seed=9)
    with gt.emulate(ARCH, strict=True) as mode:
        y = lin(x)
        y.backward(g)
    assert y.requires_grad and y.grad_fn is not None
    w = lin.weight.detach()
    assert same(y, want(x.detach(), w.t(), bias=bits(lin.bias.detach())))
    assert same(x.grad, want(g, w))                          # dX = dY W
    assert same(lin.weight.grad, want(g.t(), x.detach()))    # dW = dY^T X
    assert lin.bias.grad is not None and mode.calls == {BF16.name: 3}


# ---------------------------------------------------------------------------- kernel choice per call

def test_a_split_that_does_not_fit_k_is_refitted_by_the_stated_rule():
    ins = BF16                                               # K = 16 a k-step
    k4 = kernel_preset("splitk-4-sequential")
    assert gt.fit_kernel(k4, ins, 64) is k4                  # 4 k-steps: 4 slices fit
    two = gt.fit_kernel(k4, ins, 32)
    assert (two.split_k, two.name) == (2, "splitk-4-sequential (split_k=2)")
    one = gt.fit_kernel(kernel_preset("splitk-4-atomic-reversed"), ins, 16)
    assert (one.split_k, one.reduction, one.atomic_order) == (1, "sequential", None)
    three = gt.fit_kernel(kernel_preset("splitk-4-atomic-reversed"), ins, 48)
    assert three.atomic_order == (2, 1, 0)
    q, k = rand(2, 8, 32, seed=10), rand(2, 32, 8, seed=11)  # attention's K = 32 used to raise here
    with gt.emulate(ARCH, "splitk-4-sequential") as mode:
        s = q @ k
    assert same(s[1], want(q[1], k[1], two.with_(out_format="bf16")))
    assert mode.kernels == {"splitk-4-sequential (split_k=2)": 2}


def test_the_kernel_can_be_chosen_per_call():
    seen = []

    def choose(p: gt.Product):
        seen.append((p.op, p.m, p.n, p.k, p.instruction.name))
        return "splitk-4-tree" if p.k >= 64 else "k-loop"
    a, b = rand(4, 64, seed=12), rand(64, 3, seed=13)
    with gt.emulate(ARCH, choose) as mode:
        deep = a @ b
        shallow = a[:, :16] @ b[:16]
    assert seen == [("mm", 4, 3, 64, BF16.name), ("mm", 4, 3, 16, BF16.name)]
    assert mode.kernels == {"splitk-4-tree": 1, "k-loop": 1}
    assert same(deep, want(a, b, kernel_preset("splitk-4-tree").with_(out_format="bf16")))
    assert same(shallow, want(a[:, :16], b[:16]))


# ---------------------------------------------------------------------------- edges

@pytest.mark.parametrize("bad, message", [
    ({"instr": {(torch.bfloat16, torch.bfloat16): "HGMMA.64xNx16.F32"}}, "takes f16 x f16; operands torch.bfloat16"),
    ({"instr": {"bf16": "HGMMA.64xNx16.F32"}}, "instr keys are (a_dtype, b_dtype) pairs"),
    ({"kernel": "block-scaled"}, "torch passes no block or group scales"),
    ({"c_input": "register"}, "c_input must be one of epilogue, accumulator"),
    ({"strict": "yes"}, "strict and quiet must be True or False"),
    ({"workers": 0}, "workers must be an integer >= 1"),
    ({"kernel": Kernel(c_accumulate=True)}, "pass c_input='accumulator'"),
    ({"params": {"Q": 1}}, "params: unknown field(s) Q; valid: F,"),
])
def test_bad_arguments_are_refused_in_one_line(bad, message):
    with pytest.raises(ValueError) as e:
        gt.emulate(ARCH, **bad)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_empty_dimensions():
    a, b, c = rand(3, 0), rand(0, 4), rand(3, 4, seed=14)
    with gt.emulate(ARCH, strict=True) as mode:
        m0 = rand(0, 16) @ rand(16, 4)
        n0 = rand(3, 16) @ rand(16, 0)
        k0 = a @ b
        k0c = torch.addmm(c, a, b, beta=0.5)
        b0 = torch.bmm(rand(0, 3, 16), rand(0, 16, 4))
    assert m0.shape == (0, 4) and n0.shape == (3, 0) and b0.shape == (0, 3, 4)
    assert torch.equal(k0, torch.zeros(3, 4, dtype=torch.bfloat16)) and not torch.signbit(k0).any()
    assert same(k0c, gemm(np.zeros((3, 1), np.uint16), np.zeros((1, 4), np.uint16), bits(c), instr=BF16, kernel=KB,
                          beta=0.5))
    assert torch.equal(k0c, (c.float() * 0.5).bfloat16())
    assert mode.calls == {BF16.name: 2}                      # the two K = 0 products; nothing for M, N, B = 0


def test_torch_compile_runs_eagerly_through_the_mode_and_the_stance_comes_back():
    import torch._dynamo.eval_frame as eval_frame
    a, b = rand(4, 32, seed=15), rand(32, 3, seed=16)
    f = torch.compile(lambda x, y: torch.relu(x @ y))
    before = eval_frame._stance
    with gt.emulate(ARCH, strict=True) as mode:
        y = f(a, b)
    assert mode.calls == {BF16.name: 1} and same(y, bits(torch.relu(gt.from_bits(want(a, b), torch.bfloat16))))
    assert eval_frame._stance == before


def test_meta_tensors_get_shapes_and_nothing_is_computed():
    a = torch.empty(3, 16, device="meta", dtype=torch.bfloat16)
    b = torch.empty(16, 5, device="meta", dtype=torch.bfloat16)
    with gt.emulate(ARCH, strict=True) as mode:
        y = torch.nn.functional.linear(a, b.t(), torch.empty(5, device="meta", dtype=torch.bfloat16))
    assert y.shape == (3, 5) and y.device.type == "meta"
    assert mode.calls == {} and mode.native == {} and mode.meta == {"aten.addmm.default": 1}


def test_the_fused_attention_fast_path_is_off_inside_and_back_after():
    before = torch.backends.mha.get_fastpath_enabled()
    with gt.emulate(ARCH, quiet=True):
        assert torch.backends.mha.get_fastpath_enabled() is False
    assert torch.backends.mha.get_fastpath_enabled() == before


# ---------------------------------------------------------------------------- C in the accumulator

def test_addmm_puts_c_in_the_epilogue_or_in_the_accumulator():
    g = torch.Generator().manual_seed(17)
    a = torch.randn(16, 64, generator=g).half()
    b = torch.randn(64, 16, generator=g).half()
    c = torch.randn(16, 16, generator=g) * 2 ** 10            # f32 C binades above the products
    out = {}
    for where in gt.CInput:
        with gt.emulate(ARCH, c_input=where) as mode:
            out[where] = torch.addmm(c, a, b, out_dtype=torch.float32)     # aten.addmm.dtype: f16 in, f32 out
        assert mode.calls == {F16.name: 1} and out[where].dtype == torch.float32
    kf = Kernel(out_format="f32")
    assert same(out["epilogue"], want(a, b, kf, F16, C=bits(c), beta=1.0))
    assert same(out["accumulator"], want(a, b, kf.with_(c_accumulate=True), F16, C=bits(c), beta=1.0))
    assert not torch.equal(out["epilogue"], out["accumulator"])    # the choice is seen
    with gt.emulate(ARCH, c_input="accumulator"):                  # beta != 1: the epilogue, as stated
        half = torch.addmm(c, a, b, beta=0.5, out_dtype=torch.float32)
    assert same(half, want(a, b, kf, F16, C=bits(c), beta=0.5))


# ---------------------------------------------------------------------------- convolution and attention wiring

def gemm_mm(a, b, out_dtype=None):
    """A 2-D product straight from golden.gemm (hopper's bf16 instruction), not through the mode."""
    out_dtype = out_dtype or a.dtype
    return gt.from_bits(want(a, b, Kernel(out_format=gt.DTYPES[out_dtype])), out_dtype)


def test_convolution_reaches_the_conv_model_with_its_arguments():
    from golden import torchconv
    x, w, bias = rand(2, 4, 7, 7, seed=18), rand(6, 2, 3, 3, seed=19), rand(6, seed=20)
    g = rand(2, 6, 4, 3, seed=21)
    args = dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
    xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
    with gt.emulate(ARCH, strict=True):
        y = torch.nn.functional.conv2d(xr, wr, bias, **args)
        y.backward(g)
    assert torch.equal(y, torchconv.conv2d(x, w, bias, **args, mm=gemm_mm))
    gi, gw, _ = torchconv.conv2d_backward(g, x, w, *args.values(), (True, True, False), mm=gemm_mm)
    assert torch.equal(xr.grad, gi) and torch.equal(wr.grad, gw)


def test_attention_reaches_the_attention_model_with_its_arguments():
    from golden import torchattn

    def bmm(a, b, out_dtype=None):
        return torch.stack([gemm_mm(x, y, out_dtype) for x, y in zip(a, b, strict=True)])
    q, k, v = (rand(1, 2, 6, 16, seed=s) for s in (22, 23, 24))
    mask, g = rand(6, 6, seed=25), rand(1, 2, 6, 16, seed=26)
    qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))
    with gt.emulate(ARCH, strict=True):
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.3)
        causal = torch.nn.functional.scaled_dot_product_attention(qr, kr, vr, is_causal=True)
        causal.backward(g)
    assert torch.equal(y, torchattn.sdpa(q, k, v, mask, 0.0, False, 0.3, bmm=bmm)[0])
    out, lse = torchattn.sdpa(q, k, v, None, 0.0, True, None, bmm=bmm)
    assert torch.equal(causal, out)
    grads = torchattn.sdpa_backward(g, q, k, v, out, lse, 0.0, True, None, None, bmm=bmm)
    assert all(torch.equal(t.grad, want_g) for t, want_g in zip((qr, kr, vr), grads, strict=True))
