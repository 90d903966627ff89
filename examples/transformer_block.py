"""A transformer block run exactly and on emulated tensor cores: how far do its outputs move?

    python examples/transformer_block.py [--size small|full] [--seed 0] [--params F=24,out_frac_bits=none]

The block is built here (random weights from a seed; nothing is downloaded): pre-LayerNorm
attention and MLP, its four linear layers in FP8 (per-tensor e4m3 scales, ``torch._scaled_mm``,
bf16 out), attention's two products in bf16 (``torch.matmul``), activations in bf16.  It runs

* exactly: under ``golden.torch.exact()`` every product is exact, rounded once to its result dtype;
  everything else as torch does it.  This is the reference of the table;
* as a float64 model (no bf16 or fp8 rounding of activations; the same FP8 quantisation of the
  linear layers' inputs and weights), and as torch computes it on this CPU;
* under ``golden.torch.emulate`` on Hopper, FP8 accumulated in the tensor core for all of K
  (``fp8-no-promotion``) and promoted to fp32 every 4 QGMMAs (``fp8-promote-4``);
* on Blackwell (``k-loop``);
* under a design of your own: Hopper's FP8 instruction with ``--params`` changed.

For each run it prints the relative distance ``||y - y_exact|| / ||y_exact||`` of the first
linear layer's output (``qkv``: one GEMM's error alone, on the same inputs in every run) and of
the block's output (where every difference is also re-quantised to e4m3 by the next FP8 layer,
whose steps are 6 to 12 %), and the products it routed, per instruction.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import sys
import time

import torch

import golden
import golden.torch
from golden.params import parse_params

SIZES = {"small": dict(seq=8, d=64, heads=2, hidden=256), "full": dict(seq=32, d=512, heads=8, hidden=2048)}
E4M3_MAX = 448.0
FP8 = torch.float8_e4m3fn


def quantize(x: torch.Tensor):
    """Per-tensor e4m3: ``x ~ q * scale`` with ``scale = amax / 448`` (fp32)."""
    scale = (x.abs().max().float() / E4M3_MAX).clamp(min=2.0 ** -126)
    return (x.float() / scale).to(FP8), scale


class FP8Linear(torch.nn.Module):
    """A linear layer computed in FP8 (``torch._scaled_mm``), or in float64 on the dequantised values."""

    def __init__(self, d_in: int, d_out: int, gen: torch.Generator):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(d_out, d_in, generator=gen) / math.sqrt(d_in))
        self.bias = torch.nn.Parameter(torch.randn(d_out, generator=gen) * 0.02)

    def forward(self, x: torch.Tensor, exact: bool) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])
        xq, xs = quantize(rows)
        wq, ws = quantize(self.weight)
        if exact:
            y = (xq.double() * xs.double()) @ (wq.double() * ws.double()).t() + self.bias.double()
        else:
            y = torch._scaled_mm(xq, wq.t(), xs, ws, bias=self.bias.bfloat16(), out_dtype=torch.bfloat16)
        self.last = y.double()                  # kept: the first layer's output is one GEMM's error alone
        return y.reshape(*x.shape[:-1], -1)


class Block(torch.nn.Module):
    """Pre-LayerNorm attention and MLP with residuals."""

    def __init__(self, d: int, heads: int, hidden: int, seed: int):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = FP8Linear(d, 3 * d, gen), FP8Linear(d, d, gen)
        self.up, self.down = FP8Linear(d, hidden, gen), FP8Linear(hidden, d, gen)

    def forward(self, x: torch.Tensor, exact: bool = False) -> torch.Tensor:
        dt = torch.float64 if exact else torch.bfloat16
        x = x.to(dt)
        seq, d = x.shape
        q, k, v = self.qkv(_norm(self.ln1, x), exact).to(dt).split(d, dim=-1)
        q, k, v = (t.reshape(seq, self.heads, -1).transpose(0, 1) for t in (q, k, v))
        att = torch.softmax((q @ k.transpose(-1, -2)).float() / math.sqrt(q.shape[-1]), dim=-1).to(dt)
        o = (att @ v).transpose(0, 1).reshape(seq, d)
        x = x + self.proj(o, exact).to(dt)
        h = torch.nn.functional.gelu(self.up(_norm(self.ln2, x), exact).float()).to(dt)
        return (x + self.down(h, exact).to(dt)).double()


def _norm(ln: torch.nn.LayerNorm, x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x, ln.normalized_shape, ln.weight.to(x.dtype), ln.bias.to(x.dtype))


def distance(y: torch.Tensor, ref: torch.Tensor) -> float:
    return float((y - ref).norm() / ref.norm())


def runs(design: dict):
    """(label, context manager factory) of every emulated run."""
    qgmma = golden.lookup("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3")
    mine = dataclasses.replace(qgmma, params=qgmma.params.with_(**design))
    spec = ",".join(f"{k}={v}" for k, v in design.items())
    return [
        ("hopper fp8-no-promotion", lambda: golden.torch.emulate("hopper", "fp8-no-promotion")),
        ("hopper fp8-promote-4", lambda: golden.torch.emulate("hopper", "fp8-promote-4")),
        ("blackwell k-loop", lambda: golden.torch.emulate("blackwell", "k-loop")),
        (f"hopper fp8-no-promotion, QGMMA with {spec}",
         lambda: golden.torch.emulate("hopper", "fp8-no-promotion", instr={(FP8, FP8): mine})),
    ]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=SIZES, default="full")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--params", default="F=24,out_frac_bits=none",
                   help="your design: FIELD=VALUE,... of golden.Params for Hopper's FP8 instruction")
    args = p.parse_args(argv)
    try:
        design = parse_params(args.params)
        runs_ = runs(design)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    size = SIZES[args.size]
    block = Block(size["d"], size["heads"], size["hidden"], args.seed)
    x = torch.randn(size["seq"], size["d"], generator=torch.Generator().manual_seed(args.seed + 1))
    print(f"# transformer block {size}, seed {args.seed}")
    with torch.no_grad():
        with golden.torch.exact():
            ref = block(x)                      # the same dtypes, every product exact and rounded once
        ref_qkv = block.qkv.last
        rows = []
        for label, mode in [("float64 model (no bf16/fp8 rounding of activations)", None),
                            ("torch on this CPU, no emulation", contextlib.nullcontext)] + runs_:
            t0 = time.perf_counter()
            if mode is None:
                y, calls = block(x, exact=True), ""
            else:
                with mode() as m:
                    y = block(x)
                calls = ", ".join(f"{n} x{c}" for n, c in sorted(getattr(m, "calls", {}).items()))
            rows.append((label, distance(block.qkv.last, ref_qkv), distance(y, ref), time.perf_counter() - t0, calls))
    print(f"{'run':58s} {'qkv dist.':>10s} {'block dist.':>11s} {'time s':>7s}  products routed")
    for label, qkv, out, dt, calls in rows:
        print(f"{label:58s} {qkv:10.3e} {out:11.3e} {dt:7.1f}  {calls}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
