"""``python -m probe compare ARCH INSTR... --device D``: a device against golden on random
dot-adds, bit for bit.

Where the probes ask a few hundred crafted questions, this asks many random ones: uniform bit
patterns (NaN, infinities, subnormals included) and normal values with nearby exponents
(``--vectors``, as :func:`golden.vectors.random_operands`).  Any backend works (a user's design,
the RTL, golden with changed parameters); a backend with ``all_pairs(ins, a, b)`` (the PyTorch
GPU backend) is asked for every pair of ``n`` a-rows and ``n`` b-rows, with c = +0, so one GPU
matrix product checks ``n * n`` dot-adds.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field

import numpy as np

import golden
import golden.vectors
from golden.device import DeviceError, Unavailable, check_output
from golden.formats import decode

from .backends import add_device_option, backend_from_name, note_old_spelling

__all__ = ["compare_backend", "Comparison", "main"]


@dataclass
class Comparison:
    ins: golden.Instruction
    backend: str
    vectors: int = 0
    mismatches: int = 0
    seconds: float = 0.0
    classes: dict = field(default_factory=dict)        # result class -> count (finite, zero, inf, nan)
    first: list = field(default_factory=list)          # (a, b, c, expected, got) of the first mismatches

    def text(self) -> str:
        ins = self.ins
        lines = [f"{ins.arch} {ins.name} on {self.backend}: {self.vectors:,} dot-adds, "
                 f"{self.mismatches:,} mismatches ({self.seconds:.1f} s)",
                 "results: " + ", ".join(f"{k} {v:,}" for k, v in self.classes.items())]
        for a, b, c, want, got in self.first:
            lines.append(f"  a={[hex(x) for x in a]} b={[hex(x) for x in b]} c={c:#x}: golden {want:#x}, "
                         f"backend {got:#x}")
        return "\n".join(lines)


def _classes(ins, d) -> dict:
    cls = decode(ins.formats[3], d).cls
    names = {0: "zero", 1: "finite", 2: "finite", 3: "inf", 4: "nan"}
    out: dict = {}
    for v, n in zip(*np.unique(cls, return_counts=True)):
        key = names.get(int(v), str(int(v)))
        out[key] = out.get(key, 0) + int(n)
    return out


def compare_backend(ins, backend, n: int = 1024, seed: int = 1, vectors: str = "mixed", name: str = "backend",
                    keep: int = 5) -> Comparison:
    """``n`` random dot-adds (``n * n`` with an ``all_pairs`` backend) through ``backend`` and golden."""
    rng = np.random.default_rng(seed)
    res = Comparison(ins, name)
    t0 = time.perf_counter()
    a, b, c, sa, sb = golden.vectors.random_operands(ins, n, rng, vectors)
    pairs = getattr(backend, "all_pairs", None)
    if pairs is not None:
        got_all = np.asarray(pairs(ins, a, b), np.uint64)
        if got_all.shape != (n, n):
            raise DeviceError(f"{name}.all_pairs returned shape {got_all.shape}; expected ({n}, {n})")
        block = max(1, 262_144 // n)
        for i0 in range(0, n, block):
            i1 = min(n, i0 + block)
            A = np.repeat(a[i0:i1], n, axis=0)
            B = np.tile(b, (i1 - i0, 1))
            C = np.zeros(len(A), np.uint64)
            _score(res, ins, A, B, C, golden.dot_add(ins, A, B, C).astype(np.uint64),
                   got_all[i0:i1].reshape(-1), keep)
    else:
        got = check_output(ins, backend(ins, a, b, c, sa, sb), n, name)
        _score(res, ins, a, b, c, golden.dot_add(ins, a, b, c, sa, sb).astype(np.uint64), got, keep)
    res.seconds = time.perf_counter() - t0
    return res


def _score(res: Comparison, ins, a, b, c, want, got, keep):
    bad = golden.mismatching(ins, got, want)          # golden's NaN rule
    res.vectors += len(want)
    res.mismatches += len(bad)
    for k, v in _classes(ins, want).items():
        res.classes[k] = res.classes.get(k, 0) + v
    for r in bad[:max(0, keep - len(res.first))]:
        res.first.append(([int(x) for x in a[r]], [int(x) for x in b[r]], int(c[r]), int(want[r]), int(got[r])))


def main(argv=None) -> int:
    """The ``compare`` command; errors propagate to ``python -m probe``, which reports them."""
    ap = argparse.ArgumentParser(prog="python -m probe compare",
                                 description="A backend against golden on random dot-adds, bit for bit.")
    ap.add_argument("arch", help="architecture, several separated by commas, or all")
    ap.add_argument("instr", nargs="+", help="instruction names or families (several, or separated by commas)")
    add_device_option(ap, help="golden, rtl, torch, or golden:FIELD=VALUE,... "
                               "(--backend, its old spelling, still works)")
    ap.add_argument("-n", type=int, default=1024,
                    help="random dot-adds (a torch backend: n a-rows times n b-rows; default 1024)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--vectors", default="mixed", choices=golden.vectors.VECTOR_KINDS,
                    help="operand distribution (default mixed)")
    args = ap.parse_args(argv)
    note_old_spelling(argv)
    if args.n < 1:
        raise ValueError(f"-n must be at least 1, got {args.n}")
    pool = golden.select(args.arch, ",".join(args.instr))
    backend = backend_from_name(args.device)
    label = getattr(backend, "name", args.device)
    status = 0
    for ins in pool:
        try:
            r = compare_backend(ins, backend, args.n, args.seed, args.vectors, label)
        except Unavailable as e:                # this instruction only (no route on this GPU, say)
            print(f"skipped: {e}", file=sys.stderr)
            continue
        print(r.text(), flush=True)
        status |= r.mismatches > 0
    return status
