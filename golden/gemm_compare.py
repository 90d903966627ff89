"""Which composition did a GPU library run?  ``python -m golden gemm-compare FILE...``

Reads the products ``tools/gpu_gemm_capture.py`` saved on a GPU (one ``.npz`` per route: a JSON
``meta`` with the device, its compute capability and each case's shape, the results ``d_i``, and
the operands ``a_i``, ``b_i`` or their seed and digests, from which they are rebuilt), computes each
case with :func:`golden.gemm` on the architecture's
tensor-core instruction (:func:`golden.gemm.instruction_for`) under every candidate composition
(:func:`candidates`), and prints the share of outputs equal bit for bit, best first.  A share of
1 is a composition the library's result cannot tell from; several at 1 mean the outputs do not
decide between them (a narrow output format often rounds them to the same bits).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from .catalog import canonical_arch
from .formats import from_float
from .gemm import Kernel, gemm, instruction_for, k_slices
from .options import check_whole
from .rules import Rounding

# compute capability -> architecture
CAPABILITIES = {(7, 0): "volta", (7, 5): "turing", (8, 0): "ampere", (8, 6): "ampere", (8, 7): "ampere",
                (8, 9): "ada", (9, 0): "hopper", (10, 0): "blackwell", (12, 0): "rtx_blackwell"}
# a route's operand format (the capture's route names begin with it)
ROUTE_FORMATS = {"f16": "f16", "bf16": "bf16", "tf32": "f32", "e4m3": "e4m3", "e5m2": "e5m2"}
TORCH_DTYPES = {"torch.float32": "f32", "torch.float16": "f16", "torch.bfloat16": "bf16",
                "torch.float8_e4m3fn": "e4m3", "torch.float8_e5m2": "e5m2"}


def candidates(steps: int) -> list[Kernel]:
    """The compositions tried: the K loop, promotion every 1..16 k-steps, split-K in 2, 3, 4 or 6
    slices of k-steps or of whole 4-k-step tiles (those a K of ``steps`` k-steps can fill)."""
    out = [Kernel("k-loop")]
    out += [Kernel(f"promote-{n}", promotion=n) for n in (1, 2, 4, 8, 16) if n < steps]
    for s, unit in ((2, 1), (2, 4), (3, 1), (3, 4), (4, 1), (4, 4), (6, 1), (6, 4)):
        if s <= steps:
            out.append(Kernel(f"splitk-{s}" + (f"-unit{unit}" if unit > 1 else ""), split_k=s, split_unit=unit))
    return out


def shares(ins, A, B, D, out_fmt: str, K: int) -> list[tuple[float, str]]:
    """``(share of outputs equal, kernel name)`` for every candidate that fits K, best first; TF32
    instructions try each also with the operands rounded to TF32 (RNE) first (``+rne``)."""
    found = []
    kernels = candidates(-(-K // ins.k))
    if ins.a_format == "tf32":
        kernels += [k.with_(name=k.name + "+rne", operand_rounding=Rounding.RNE) for k in kernels]
    for k in kernels:
        try:
            k_slices(ins, k, K)
        except ValueError:                          # slices this K cannot fill: not a composition of it
            continue
        got = gemm(A, B, instr=ins, kernel=k.with_(out_format=out_fmt))
        found.append((float(np.mean(got == D)), k.name))
    return sorted(found, key=lambda x: -x[0])


def read(path: str) -> tuple[dict, object]:
    """The capture's meta (JSON) and arrays; one clear ValueError for a file that is not one."""
    try:
        data = np.load(path)
        meta = json.loads(str(data["meta"]))
        meta["route"], meta["cases"]
    except (OSError, ValueError, KeyError) as e:
        raise ValueError(f"{path}: not a capture of tools/gpu_gemm_capture.py ({type(e).__name__}: {e})") from None
    return meta, data


def route_instruction(meta: dict, arch: str | None):
    """The instruction the route's operands run on, on ``arch`` or the capture's GPU's architecture."""
    if arch is None:
        cap = tuple(meta.get("capability", ()))
        if cap not in CAPABILITIES:
            raise ValueError(f"compute capability {cap} of {meta.get('device')!r} is not one golden knows "
                             f"({', '.join(f'{a}.{b}' for a, b in CAPABILITIES)}); give --arch")
        arch = CAPABILITIES[cap]
    fmt = ROUTE_FORMATS.get(meta["route"].split("_")[0])
    if fmt is None:
        raise ValueError(f"route {meta['route']!r}: operand format not one of {', '.join(ROUTE_FORMATS)}")
    return instruction_for(canonical_arch(arch), fmt, fmt)


def case_operands(data, case: dict, fmt: str):
    """A case's operands: stored (``a_i``, ``b_i``), or rebuilt as the capture made them -- numpy's
    ``default_rng(seed)`` normal values as float32 (clamped to +-8 for fp8), rounded RNE to the
    format -- and checked against the digests the GPU run recorded."""
    i = case["index"]
    if f"a_{i}" in data:
        return data[f"a_{i}"], data[f"b_{i}"]
    if "seed" not in case:
        raise ValueError(f"case {case['shape']}: neither operands nor a seed in the capture")
    M, N, K = case["shape"]
    rng = np.random.default_rng(case["seed"])
    vals = [rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)]
    if fmt in ("e4m3", "e5m2"):
        vals = [np.clip(v, -8, 8) for v in vals]
    bits = [v.view(np.uint32) if fmt == "f32" else from_float(fmt, v.astype(np.float64)) for v in vals]
    for side, b in zip("ab", bits):
        want = case.get(f"{side}_sha256")
        if want is not None and hashlib.sha256(np.ascontiguousarray(b).tobytes()).hexdigest() != want:
            raise ValueError(f"case {case['shape']}: operand {side} rebuilt from seed {case['seed']} differs "
                             "from the GPU run's (its digest)")
    return bits[0], bits[1]


def cmd_gemm_compare(args) -> int:
    check_whole(args.rows, "--rows", 1)
    check_whole(args.top, "--top", 1)
    files = [(path, *read(path)) for path in args.files]          # every file checked before any work
    plans = [(path, meta, data, route_instruction(meta, args.arch)) for path, meta, data in files]
    for path, meta, data, ins in plans:
        print(f"# {path}: {meta['route']} on {meta.get('device')} (torch {meta.get('torch')}), "
              f"{ins.arch} {ins.name}; first {args.rows} rows of each result")
        for case in meta["cases"]:
            M, N, K = case["shape"]
            if "error" in case:
                print(f"{M}x{N}x{K}: not run on the GPU ({case['error']})")
                continue
            i = case["index"]
            out = TORCH_DTYPES.get(case.get("out_dtype"), "f32")
            A, B = case_operands(data, case, ins.a_format if ins.a_format != "tf32" else "f32")
            top = shares(ins, A[:args.rows], B, data[f"d_{i}"][:args.rows], out, K)
            flags = f"deterministic={case.get('deterministic')} row0-batch-invariant={case.get('row0_batch_invariant')}"
            print(f"{M}x{N}x{K} ({flags}): " + ", ".join(f"{name} {s:.4f}" for s, name in top[:args.top]),
                  flush=True)
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("gemm-compare", help="which composition a GPU library ran (captures of "
                       "tools/gpu_gemm_capture.py)")
    p.add_argument("files", nargs="+", help="gemm_ROUTE.npz files")
    p.add_argument("--arch", help="architecture (default: from the capture's compute capability)")
    p.add_argument("--rows", type=int, default=8, help="rows of each result compared, 1 or more "
                   "(default 8)")
    p.add_argument("--top", type=int, default=4, help="compositions printed per case, best first, "
                   "1 or more (default 4)")
    p.set_defaults(func=cmd_gemm_compare)
