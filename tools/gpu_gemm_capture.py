"""Capture whole matrix products computed by a GPU library, for golden.gemm to explain.

Runs where PyTorch sees a CUDA GPU (the lent device machine); needs nothing of this project.
For each case it makes seeded operands, runs the library's product, and saves the results as
bit patterns (the operands as their seed and a digest) in one ``.npz`` per dtype route, with the device,
the library versions
and the torch settings, so the comparison (``python -m golden gemm-compare FILE``) runs later
on any CPU.  Each product runs twice (the library must be deterministic for a bit-exact
comparison: the file records whether it was) and once with a single row of A (batch
invariance: does row 0 depend on how many rows the call had?).

    python tools/gpu_gemm_capture.py OUTDIR [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

# (M, N, K): small-output long-K shapes (where libraries split K), square ones, skinny ones
SHAPES = [(64, 64, 16), (64, 64, 256), (64, 64, 4096), (64, 64, 16384),
          (256, 256, 4096), (512, 512, 1024), (1, 256, 4096), (128, 8, 8192)]
QUICK = [(64, 64, 16), (64, 64, 4096), (256, 256, 4096)]


def _bits(t):
    """A tensor's bit patterns as an unsigned numpy array (narrow formats in the low bits)."""
    import torch
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[t.element_size()]
    raw = t.contiguous().view(width).cpu().numpy()
    return raw.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[t.element_size()])


def operands_f32(m, n, k, seed):
    """The operands before conversion: numpy's seeded normal values as float32 (rebuilt anywhere)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)


def digest(bits) -> str:
    import hashlib
    return hashlib.sha256(np.ascontiguousarray(bits).tobytes()).hexdigest()


def _operands(torch, dtype, m, n, k, seed):
    a, b = (torch.from_numpy(x) for x in operands_f32(m, n, k, seed))
    if dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        a, b = a.clamp(-8, 8), b.clamp(-8, 8)
    return a.to(dtype).cuda(), b.to(dtype).cuda()


def _routes(torch):
    """name -> (input dtype, function(a, b) -> result tensor, settings it needs)."""
    def mm_out(dtype_out):
        return lambda a, b: torch.mm(a, b, out_dtype=dtype_out) if dtype_out is not None else torch.mm(a, b)

    def scaled(out, fast):
        one = torch.ones((), device="cuda")
        return lambda a, b: torch._scaled_mm(a, b.t().contiguous().t(), scale_a=one, scale_b=one,
                                             out_dtype=out, use_fast_accum=fast)
    return {
        "f16_f16out": (torch.float16, mm_out(None), {}),
        "f16_f32out": (torch.float16, mm_out(torch.float32), {}),
        "bf16_bf16out": (torch.bfloat16, mm_out(None), {}),
        "bf16_f32out": (torch.bfloat16, mm_out(torch.float32), {}),
        "tf32_f32out": (torch.float32, mm_out(None), {"allow_tf32": True}),
        "e4m3_f32out_fast": (torch.float8_e4m3fn, scaled(torch.float32, True), {}),
        "e4m3_f32out_promoted": (torch.float8_e4m3fn, scaled(torch.float32, False), {}),
        "e4m3_bf16out_promoted": (torch.float8_e4m3fn, scaled(torch.bfloat16, False), {}),
    }


def capture(outdir, shapes):
    import torch
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    meta = {"device": torch.cuda.get_device_name(), "capability": list(torch.cuda.get_device_capability()),
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "reduced_precision_reduction": False, "shapes": shapes, "routes": {}}
    for name, (dtype, fn, settings) in _routes(torch).items():
        torch.backends.cuda.matmul.allow_tf32 = settings.get("allow_tf32", False)
        arrays, info = {}, []
        for i, (m, n, k) in enumerate(shapes):
            try:
                a, b = _operands(torch, dtype, m, n, k, seed=1000 + i)
                d1 = fn(a, b)
                d2 = fn(a, b)
                row0 = fn(a[:1].contiguous(), b)
                torch.cuda.synchronize()
            except Exception as exc:  # a route the library refuses for this shape: recorded, not fatal
                info.append({"shape": [m, n, k], "error": f"{type(exc).__name__}: {exc}"[:300]})
                continue
            arrays[f"d_{i}"] = _bits(d1)      # operands as digests: rebuilt from the seed (operands_f32)
            info.append({"shape": [m, n, k], "index": i, "seed": 1000 + i, "a_sha256": digest(_bits(a)),
                         "b_sha256": digest(_bits(b)), "deterministic": bool(torch.equal(d1, d2)),
                         "row0_batch_invariant": bool(torch.equal(row0[0], d1[0])),
                         "out_dtype": str(d1.dtype)})
        meta["routes"][name] = info
        np.savez_compressed(f"{outdir}/gemm_{name}.npz", meta=json.dumps({**meta, "route": name, "cases": info}),
                            **arrays)
        print(name, json.dumps(info), flush=True)
    return meta


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("--quick", action="store_true", help="three shapes only")
    args = parser.parse_args(argv)
    start = time.time()
    meta = capture(args.outdir, QUICK if args.quick else SHAPES)
    print(json.dumps({k: v for k, v in meta.items() if k != "routes"}), f"{time.time() - start:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
