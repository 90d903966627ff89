"""The CDNA1 catalog entries against the authors' later reference model, bit for bit.

``mmasim`` (PyPI ``mmasim==2.1.1``, the extra ``pip install 'mma-rtl[reference]'``; it needs a CPU
torch and compiles a small C++ fma kernel on first import) models CDNA1 (MI100), which the paper left
out; the catalog's ``cdna1`` entries follow it.  This tool draws every vector kind of
:mod:`golden.vectors` for every CDNA1 instruction, runs both models on the same bit patterns and
counts the results that differ::

    python tools/mmasim_check.py [-n 100000] [--seed 1] [--instr all] [--kind all]

It prints one row per instruction and kind and exits 1 on any mismatch (2 on bad input).  A NaN result
matches any NaN: the reference's NaN is whatever its float64 arithmetic leaves (an input's payload, or
the processor's default NaN), which it does not model; the catalog gives the canonical NaN.  The
column ``nan`` counts the rows where both are NaN.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import golden  # noqa: E402
from golden.vectors import KINDS, random_operands  # noqa: E402

ARCH = "cdna1"
MODEL_ARCH = "CDNA1"          # the reference model's name of the architecture
PIN = "mmasim==2.1.1"
# the reference's torch dtype and the unsigned integer type that holds each format's bits
_VIEW = {"f16": ("float16", np.uint16), "bf16": ("bfloat16", np.uint16), "f32": ("float32", np.uint32)}


class Missing(RuntimeError):
    """The reference model (or torch) is not installed."""


def reference_model():
    """The reference model's MFMA class; :class:`Missing` (naming the extra) when it is not installed."""
    try:
        from mmasim.amd import MFMA
    except ImportError as e:
        raise Missing(f"the reference model is not installed ({e}); pip install 'mma-rtl[reference]' "
                      f"({PIN}, with a CPU torch)") from None
    return MFMA


def suffix(ins: golden.Instruction) -> str:
    """The reference model's name of a CDNA1 entry (the ISA name without ``v_mfma_``)."""
    return ins.name[len("v_mfma_"):]


def _tensor(fmt: str, bits):
    import torch
    dtype, word = _VIEW[fmt]
    return torch.from_numpy(np.ascontiguousarray(np.asarray(bits).astype(word))).view(getattr(torch, dtype))


def reference_dot_add(ins: golden.Instruction, a, b, c) -> np.ndarray:
    """The reference model's dot-adds of bit patterns ``a, b [R, K]``, ``c [R]``: f32 bit patterns ``[R]``."""
    op = reference_model()(MODEL_ARCH, suffix(ins))
    d = op.dpa(_tensor(ins.a_format, a), _tensor(ins.b_format, b), _tensor(ins.c_format, c))
    return d.contiguous().view(__import__("torch").int32).numpy().view(np.uint32)


def compare(ins: golden.Instruction, a, b, c) -> tuple[int, int, np.ndarray]:
    """``(mismatches, both_nan, rows)``: golden against the reference on the same operands; ``rows`` are
    the indices of the mismatching dot-adds."""
    want = golden.dot_add(ins, a, b, c).astype(np.uint32)
    got = reference_dot_add(ins, a, b, c)
    nan_w = np.isnan(want.view(np.float32))
    nan_g = np.isnan(got.view(np.float32))
    bad = np.flatnonzero((want != got) & ~(nan_w & nan_g))
    return len(bad), int((nan_w & nan_g).sum()), bad


def check(instr: str = "all", kinds=KINDS, n: int = 100_000, seed: int = 1, out=None) -> int:
    """Compare every selected CDNA1 instruction on every kind; print a row each (to ``out``, default
    stdout); return the mismatches."""
    out = out or sys.stdout
    total = 0
    print(f"{'instruction':26s} {'algorithm':9s} {'kind':10s} {'vectors':>8s} {'nan':>7s} {'mismatch':>8s} "
          f"{'time s':>6s}", file=out)
    for ins in golden.select(ARCH, instr):
        for kind in kinds:
            t0 = time.perf_counter()
            a, b, c, _, _ = random_operands(ins, n, np.random.default_rng(seed), kind)
            bad, nans, rows = compare(ins, a, b, c)
            total += bad
            print(f"{ins.name:26s} {ins.algorithm:9s} {kind:10s} {n:8d} {nans:7d} {bad:8d} "
                  f"{time.perf_counter() - t0:6.1f}", file=out)
            for r in rows[:3]:
                print(f"  first mismatches: a={a[r].tolist()} b={b[r].tolist()} c={int(c[r]):#010x}", file=out)
    print(f"{total} mismatches against {PIN}", file=out)
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=100_000, help="vectors per instruction and kind (default 100000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--instr", default="all", help="CDNA1 instruction(s): a name, family, comma list or all")
    ap.add_argument("--kind", default="all", help=f"vector kind(s), a comma list of {', '.join(KINDS)}, or all")
    args = ap.parse_args(argv)
    kinds = KINDS if args.kind == "all" else tuple(k.strip() for k in args.kind.split(","))
    bad_kind = [k for k in kinds if k not in KINDS]
    try:
        if bad_kind:
            raise ValueError(f"unknown vector kind {bad_kind[0]!r}; valid: {', '.join(KINDS)} or all")
        if args.n < 1:
            raise ValueError(f"-n {args.n}: the vectors per instruction and kind must be >= 1")
        golden.select(ARCH, args.instr)
        reference_model()
    except (ValueError, Missing) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 1 if check(args.instr, kinds, args.n, args.seed) else 0


if __name__ == "__main__":
    sys.exit(main())
