"""golden.torch: torch's matrix products routed through golden.gemm (everything else untouched),
and the transformer-block example at a small size."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install 'mma-rtl[torch]' "
                            "(requirements.txt pins it for make test)")

import golden  # noqa: E402
import golden.torch as gt  # noqa: E402
from golden.formats import from_float  # noqa: E402
from golden.gemm import Kernel, gemm  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BF16 = ("hopper", "HGMMA.64xNx16.F32.BF16")


def bits(t):
    return gt.to_bits(t)


def test_every_routed_function_equals_golden_gemm():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(5, 48, generator=g).bfloat16()
    b = torch.randn(48, 7, generator=g).bfloat16()
    bias = torch.randn(7, generator=g).bfloat16()
    ins = golden.lookup(*BF16)
    k = Kernel(out_format="bf16")
    want = gemm(bits(a), bits(b), instr=ins, kernel=k)
    with gt.emulate("hopper") as mode:
        outs = {"@": a @ b, "matmul": torch.matmul(a, b), "mm": a.mm(b), "bmm": torch.bmm(a[None], b[None])[0],
                "batched": torch.matmul(a.expand(2, 5, 48), b)[1],
                "linear": torch.nn.functional.linear(a, b.t().contiguous())}
        biased = torch.addmm(bias, a, b)
        c_path = torch.addmm(bias.expand(5, 7), a, b, beta=0.5)
        untouched = torch.exp(a)
    for name, out in outs.items():
        assert out.dtype == torch.bfloat16 and np.array_equal(bits(out), want), name
    assert np.array_equal(bits(biased), gemm(bits(a), bits(b), instr=ins, kernel=k, bias=bits(bias)))
    assert np.array_equal(bits(c_path), gemm(bits(a), bits(b), bits(bias.expand(5, 7)), instr=ins, kernel=k,
                                             beta=0.5))
    assert torch.equal(untouched, torch.exp(a))
    assert mode.calls == {ins.name: 9}            # the batched product is two GEMMs


def test_scaled_mm_and_the_kernel_reach_the_gemm():
    g = torch.Generator().manual_seed(1)
    a = (torch.rand(4, 512, generator=g) * 4).to(torch.float8_e4m3fn)
    b = (torch.rand(8, 512, generator=g) * 4).to(torch.float8_e4m3fn).t()
    sa, sb = torch.tensor(0.75), torch.tensor(3.0)
    ins = golden.lookup("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3")
    outs = {}
    for kern in ("fp8-no-promotion", "fp8-promote-4"):
        with gt.emulate("hopper", kern):
            outs[kern] = torch._scaled_mm(a, b, sa, sb, out_dtype=torch.float32)
        want = gemm(bits(a), bits(b), instr=ins, kernel=kern, alpha=2.25)
        assert np.array_equal(bits(outs[kern]), want), kern
    assert not torch.equal(outs["fp8-no-promotion"], outs["fp8-promote-4"])     # promotion is seen


def test_float32_goes_to_tf32_only_when_torch_allows_it():
    a, b = torch.rand(3, 8), torch.rand(8, 2)
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        with gt.emulate("ampere") as mode:
            y = a @ b
        assert mode.calls == {} and torch.equal(y, torch.mm(a, b))
        torch.set_float32_matmul_precision("high")
        with gt.emulate("ampere") as mode:
            y = a @ b
        assert mode.calls == {"HMMA.1688.F32.TF32": 1} and y.dtype == torch.float32
    finally:
        torch.set_float32_matmul_precision(before)


def test_exact_mode_rounds_once():
    a = torch.tensor([[1.0, 2.0 ** -10, -1.0]], dtype=torch.float16)
    b = torch.tensor([[1.0], [2.0 ** -10], [1.0]], dtype=torch.float16)
    with gt.exact():
        y = a @ b
    assert y.item() == 2.0 ** -20                # the f16 subnormal range holds it; nothing cancelled early
    assert from_float("f16", 2.0 ** -20) == bits(y)[0, 0]


def test_transformer_block_example_small(capsys):
    spec = importlib.util.spec_from_file_location("transformer_block", REPO / "examples" / "transformer_block.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(["--size", "small"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line[:58].strip(): line[58:].split() for line in out[2:]}
    assert float(rows["torch on this CPU, no emulation"][0]) >= 0
    assert float(rows["hopper fp8-no-promotion"][0]) > 0          # Hopper's FP8 accumulator moves the output
    assert "QGMMA.64xNx32.F32.E4M3.E4M3" in " ".join(rows["hopper fp8-promote-4"])
    assert example.main(["--params", "Q=1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "'Q' is not a golden.Params field" in err[0]
