"""golden.torch on whole models under strict mode: a TransformerEncoderLayer with SDPA, a small conv net
and a training step run with no un-emulated floating-point product, gradients on every parameter, and
the attention and convolution products shown to go through their models (golden.torchattn,
golden.torchconv), not torch's."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install 'mma-rtl[torch]' "
                            "(requirements.txt pins it for make test)")

import golden.torch as gt  # noqa: E402

ARCH = "hopper"
BF16 = "HGMMA.64xNx16.F32.BF16"


def encoder(d_model=32, heads=2, seed=0):
    torch.manual_seed(seed)
    return torch.nn.TransformerEncoderLayer(d_model, heads, 2 * d_model, dropout=0.0, batch_first=True).bfloat16()


def step(model, x):
    """One training step's forward and backward; the loss."""
    model.zero_grad()
    loss = model(x).float().square().mean()
    loss.backward()
    return loss


def test_transformer_encoder_layer_training_step_strict():
    model = encoder()
    x = torch.randn(2, 8, 32, generator=torch.Generator().manual_seed(1)).bfloat16()
    with gt.emulate(ARCH, strict=True) as mode:
        loss = step(model, x)
    assert torch.isfinite(loss)
    assert mode.native == {} and set(mode.calls) == {BF16}
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    assert mode.ops["aten._scaled_dot_product_flash_attention_for_cpu.default"] == 1
    assert mode.ops["aten._scaled_dot_product_flash_attention_for_cpu_backward.default"] == 1
    hopper = {n: p.grad.clone() for n, p in model.named_parameters()}
    with gt.emulate(ARCH, strict=True, params={"F": 10}):   # a 10-bit alignment window: every product is seen
        step(model, x)
    assert all(not torch.equal(hopper[n], p.grad) for n, p in model.named_parameters() if "bias" not in n)


def test_transformer_encoder_layer_inference_skips_the_fused_fast_path():
    model = encoder().eval()
    x = torch.randn(2, 8, 32, generator=torch.Generator().manual_seed(2)).bfloat16()
    with torch.no_grad(), gt.emulate(ARCH, strict=True) as mode:
        y = model(x)
    assert y.shape == x.shape and mode.native == {}
    assert "aten._transformer_encoder_layer_fwd.default" not in mode.ops
    assert mode.ops["aten._scaled_dot_product_flash_attention_for_cpu.default"] == 1
    assert sum(mode.ops.values()) >= 5                       # in-proj, attention, out-proj, two FFN linears


def test_the_fused_fast_path_would_be_caught_by_strict_mode():
    model = encoder().eval()
    x = torch.randn(2, 8, 32).bfloat16()

    class FastPathOn(gt.emulate):                            # the planted fault: the fast path left on
        def __enter__(self):
            entered = super().__enter__()
            torch.backends.mha.set_fastpath_enabled(True)
            return entered
    with pytest.raises(gt.NotEmulated, match="_transformer_encoder_layer_fwd"):
        with torch.no_grad(), FastPathOn(ARCH, strict=True):
            model(x)


def test_multihead_attention_with_weights_is_all_emulated():
    torch.manual_seed(6)
    mha = torch.nn.MultiheadAttention(16, 2, batch_first=True).bfloat16()
    x = torch.randn(2, 5, 16).bfloat16().requires_grad_()
    with gt.emulate(ARCH, strict=True) as mode:
        out, weights = mha(x, x, x)                          # need_weights: the explicit bmm path
        out.float().sum().backward()
    assert mode.native == {} and weights.shape == (2, 5, 5)
    assert mode.ops["aten.bmm.default"] == 6 and x.grad is not None and mha.in_proj_weight.grad is not None


def test_the_exact_reference_runs_the_same_step():
    model = encoder()
    x = torch.randn(2, 8, 32, generator=torch.Generator().manual_seed(1)).bfloat16()
    with gt.exact(strict=True) as mode:
        step(model, x)
    assert mode.native == {} and set(mode.calls) == {"exact"}
    assert all(p.grad is not None for p in model.parameters())


def test_conv_net_training_step_strict():
    torch.manual_seed(3)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(4, 4, 3, stride=2, groups=2), torch.nn.Flatten(),
                              torch.nn.Linear(4 * 3 * 3, 5)).bfloat16()
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(4)).bfloat16()
    with gt.emulate(ARCH, strict=True) as mode:
        loss = step(net, x)
    assert torch.isfinite(loss) and mode.native == {}
    assert all(p.grad is not None for p in net.parameters())
    assert mode.ops["aten.convolution.default"] == 2 and mode.ops["aten.convolution_backward.default"] == 2


def test_float32_convolutions_follow_cudnn_s_tf32_flag_not_matmul_s():
    conv = torch.nn.Conv2d(2, 3, 3)
    x = torch.randn(1, 2, 5, 5)
    before = torch.backends.cudnn.conv.fp32_precision, torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")            # torch's defaults: matmul without TF32 ...
        torch.backends.cudnn.conv.fp32_precision = "tf32"
        with gt.emulate(ARCH, strict=True) as mode:              # ... convolutions with it
            conv(x)
        assert mode.calls == {"HGMMA.64xNx8.F32.TF32": 1}
        torch.backends.cudnn.conv.fp32_precision = "ieee"
        with pytest.raises(gt.NotEmulated, match="cudnn.conv.fp32_precision == 'ieee'"):
            with gt.emulate(ARCH, strict=True):
                conv(x)
    finally:
        torch.backends.cudnn.conv.fp32_precision = before[0]
        torch.set_float32_matmul_precision(before[1])


def test_a_transposed_convolution_is_native_and_strict_says_so():
    up = torch.nn.ConvTranspose2d(2, 2, 2).bfloat16()
    x = torch.randn(1, 2, 3, 3).bfloat16()
    with pytest.raises(gt.NotEmulated, match="only 2-D, non-transposed convolutions are modelled"):
        with gt.emulate(ARCH, strict=True):
            up(x)


@pytest.mark.slow
def test_torch_compile_inside_the_mode_in_a_fresh_process_is_emulated():
    code = ("import torch, golden.torch as gt\n"
            "a = torch.randn(4, 32).bfloat16()\n"
            "with gt.emulate('hopper', strict=True) as mode:\n"
            "    y = torch.compile(lambda x: torch.relu(x @ x.t()))(a)\n"
            "print(mode.calls, mode.meta)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.stdout.split("\n")[0] == "{'HGMMA.64xNx16.F32.BF16': 1} {}", r.stderr


@pytest.mark.slow
def test_a_larger_encoder_layer_in_float32_as_tf32():
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")
        torch.manual_seed(5)
        model = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
        x = torch.randn(2, 32, 64)
        with gt.emulate(ARCH, strict=True) as mode:
            step(model, x)
        assert mode.native == {} and set(mode.calls) == {"HGMMA.64xNx8.F32.TF32"}
        assert all(p.grad is not None for p in model.parameters())
    finally:
        torch.set_float32_matmul_precision(before)
