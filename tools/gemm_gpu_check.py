"""Whole GEMMs on a real GPU against golden.gemm's compositions.

    python tools/gemm_gpu_check.py capture OUT.npz [--shapes MxNxK,...] [--seed 22] [--rows R]   # GPU, no golden
    python tools/gemm_gpu_check.py compare OUT.npz      # anywhere: golden.gemm under each composition

``capture`` draws random operands (numpy, seeded), runs them through cuBLAS(Lt) by PyTorch --
``torch._scaled_mm`` on e4m3 with ``use_fast_accum`` True and False, fp32 out; ``torch.matmul`` on
bf16 and fp16 (bf16/fp16 out), with ``allow_{bf16,fp16}_reduced_precision_reduction`` False --
and saves the results, a digest of every operand and the device name; ``compare`` rebuilds the
operands from the seed and checks them against the digests.  ``compare`` computes the same GEMMs with
golden.gemm under kernels of several promotion intervals and split-K reductions and prints,
for each, the share of outputs equal bit for bit.  This measures which composition the
vendor library chose for these shapes on that GPU; it says nothing about other shapes.

The record ``tests/data/gemm/H200_gemm.npz`` was captured on an NVIDIA H200 (torch 2.11.0+cu130)
by these steps (run inline: the GPU machine runs the lead's checkout), with the operands stored
whole; they were then replaced by their digests (the operands rebuilt here match all twelve).
``tests/data/gemm/H200_gemm_shapes.npz`` likewise with ``--shapes 16x128x1024,64x256x8192,256x512x2048,
1024x1024x1024,4096x256x512 --seed 23 --rows 8``.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

SHAPES = [(128, 128, 512), (128, 128, 4096)]           # the first record (whole outputs kept)
SEED = 22
OPS = (("fp8", "e4m3"), ("bf16", "bf16"), ("f16", "f16"))


def plan(data) -> tuple[list, int, int | None]:
    """``(shapes, seed, rows kept)`` of a record (the first one predates these fields)."""
    if "shapes" not in data:
        return SHAPES, SEED, None
    return [tuple(int(x) for x in s) for s in data["shapes"]], int(data["seed"]), int(data["rows"])


def draw(shapes, seed):
    """``(tag, a, b)`` per shape: uniform [0, 1) float64 values (no cancellation: promotion and order
    effects are largest), drawn in this order from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    for M, N, K in shapes:
        yield f"{M}x{N}x{K}", rng.uniform(0, 1, (M, K)), rng.uniform(0, 1, (K, N))


def digest(bits: np.ndarray) -> str:
    import hashlib
    return hashlib.sha256(np.ascontiguousarray(bits).tobytes()).hexdigest()


def capture(path: str, shapes, seed: int, rows: int | None) -> None:
    """On the GPU: operands converted as torch converts them (float64 -> float32 -> the format, RNE),
    results of cuBLAS(Lt) (the first ``rows`` rows), and a digest of every operand so that
    ``compare`` knows it rebuilt them."""
    import torch
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    dev = torch.device("cuda")
    out = {"device": np.array(torch.cuda.get_device_name()), "torch": np.array(torch.__version__),
           "shapes": np.array(shapes), "rows": np.array(rows or max(s[0] for s in shapes)), "seed": np.array(seed)}
    keep = slice(None, rows)
    views = {"fp8": (torch.float8_e4m3fn, torch.uint8, np.uint8), "bf16": (torch.bfloat16, torch.int16, np.uint16),
             "f16": (torch.float16, torch.int16, np.uint16)}
    one = torch.tensor(1.0, device=dev)
    for tag, a, b in draw(shapes, seed):
        for op, (dt, tv, nv) in views.items():
            ta, tb = (torch.from_numpy(x).float().to(dt) for x in (a, b))
            out[f"{op}_a_{tag}"] = np.array(digest(ta.view(tv).numpy().view(nv)))
            out[f"{op}_b_{tag}"] = np.array(digest(tb.view(tv).numpy().view(nv)))
            if op == "fp8":                        # B column-major, as _scaled_mm wants it
                bt = tb.t().contiguous().to(dev).t()
                for fast in (True, False):
                    d = torch._scaled_mm(ta.to(dev), bt, one, one, out_dtype=torch.float32, use_fast_accum=fast)
                    out[f"fp8_d_fast{int(fast)}_{tag}"] = d[keep].cpu().view(torch.int32).numpy().view(np.uint32)
            else:
                d = torch.matmul(ta.to(dev), tb.to(dev))
                out[f"{op}_d_{tag}"] = d[keep].cpu().view(tv).numpy().view(nv)
    np.savez_compressed(path, **out)
    print("captured on", out["device"], "torch", out["torch"])


def operands(data, tags=None, formats=None) -> dict:
    """The operands' bit patterns rebuilt with golden (float64 -> float32 -> format, RNE), each checked
    against the digest the GPU run recorded; A cut to the rows the record kept.  ``tags`` and
    ``formats`` (``fp8``, ``bf16``, ``f16``) limit which are rebuilt."""
    from golden.formats import from_float
    shapes, seed, rows = plan(data)
    ops = {}
    for tag, a, b in draw(shapes, seed):
        if tags is not None and tag not in tags:
            continue
        for op, fmt in OPS:
            if formats is not None and op not in formats:
                continue
            for side, x in (("a", a), ("b", b)):
                bits = from_float(fmt, x.astype(np.float32).astype(np.float64))
                if digest(bits) != str(data[f"{op}_{side}_{tag}"]):
                    raise ValueError(f"{op} {side} {tag}: rebuilt operands differ from the GPU run's")
                ops[f"{op}_{side}_{tag}"] = bits[:rows] if side == "a" else bits
    return ops


CASES = [("fp8_d_fast1", "fp8", ("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3"), None, "_scaled_mm fast accum"),
         ("fp8_d_fast0", "fp8", ("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3"), None, "_scaled_mm"),
         ("bf16_d", "bf16", ("hopper", "HGMMA.64xNx16.F32.BF16"), "bf16", "matmul bf16"),
         ("f16_d", "f16", ("hopper", "HGMMA.64xNx16.F32"), "f16", "matmul f16")]


def compare(path: str) -> None:
    import golden
    from golden.gemm_compare import candidates, shares
    data = np.load(path)
    ops = operands(data)
    shapes, _, rows = plan(data)
    kept = "" if rows is None else f" (the first {rows} rows of each)"
    print(f"# {data['device']} (torch {data['torch']}): share of outputs{kept} equal bit for bit to golden.gemm")
    for M, N, K in shapes:
        tag = f"{M}x{N}x{K}"
        for key, op, (arch, name), out_fmt, label in CASES:
            ins = golden.lookup(arch, name)
            order = {k.name: n for n, k in enumerate(candidates(-(-K // ins.k)))}
            A, B, D = ops[f"{op}_a_{tag}"], ops[f"{op}_b_{tag}"], data[f"{key}_{tag}"]
            row = [f"{name} {share:.4f}" for share, name in
                   sorted(shares(ins, A, B, D, out_fmt, K), key=lambda x: order[x[1]])]
            print(f"{tag:16s} {label:22s} " + ", ".join(row), flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="whole GEMMs on a GPU against golden.gemm")
    p.add_argument("action", choices=("capture", "compare"))
    p.add_argument("path", help="the record (.npz)")
    p.add_argument("--shapes", help="capture: MxNxK,... (default the first record's)")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--rows", type=int, help="capture: keep the first ROWS rows of each result (default all)")
    args = p.parse_args(argv)
    if args.action == "compare":
        compare(args.path)
        return 0
    try:
        shapes = SHAPES if not args.shapes else [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    except ValueError:
        print(f"error: --shapes {args.shapes!r}: give MxNxK,...", file=sys.stderr)
        return 2
    capture(args.path, shapes, args.seed, args.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
