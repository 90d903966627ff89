"""The 120,000 dot-adds measured on real V100, A100, Ada, H100 and B200 GPUs.

Source: F. A. Khattak and M. Mikaitis, "Accurate Models of NVIDIA Tensor
Cores" (MATLAB-tensor-core project), BSD 2-clause; see
``tests/data/gpu_vectors/LICENCE``.  ``tools/import_gpu_vectors.py`` made the
``.npz`` copies from the original text files.

Each set maps to one instruction (the source README's table).  A set with
fewer products than the instruction's K is the same computation with the
remaining products zero; the fp16-output sets ran with c rounded to f16 (RNE);
the H100 FP8 sets ran with c = 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

import golden
from golden.formats import from_float, to_float

DATA = Path(__file__).parent / "data" / "gpu_vectors"


@dataclass(frozen=True)
class GpuSet:
    gpu: str
    fmt: str
    out: str              # "fp32" or "fp16"
    arch: str
    instruction: str
    c_zero: bool = False

    @property
    def id(self) -> str:
        return f"{self.gpu}-{self.fmt}-d{self.out}"


def _sets():
    out = [GpuSet("V100", "fp16", "fp32", "volta", "HMMA.884.F32.F32"),
           GpuSet("V100", "fp16", "fp16", "volta", "HMMA.884.F16.F16")]
    for gpu, arch in (("A100", "ampere"), ("Ada", "ada")):
        out += [GpuSet(gpu, "fp16", "fp32", arch, "HMMA.1688.F32"),
                GpuSet(gpu, "fp16", "fp16", arch, "HMMA.1688.F16"),
                GpuSet(gpu, "bf16", "fp32", arch, "HMMA.1688.F32.BF16"),
                GpuSet(gpu, "tf32", "fp32", arch, "HMMA.1684.F32.TF32")]
    for f8 in ("E4M3", "E5M2"):
        out += [GpuSet("Ada", f8, "fp32", "ada", f"QMMA.16832.F32.{f8}.{f8}"),
                GpuSet("Ada", f8, "fp16", "ada", f"QMMA.16832.F16.{f8}.{f8}"),
                GpuSet("H100", f8, "fp32", "hopper", f"QGMMA.64xNx32.F32.{f8}.{f8}", c_zero=True)]
    for gpu, arch in (("H100", "hopper"), ("B200", "blackwell")):
        out += [GpuSet(gpu, "fp16", "fp32", arch, "HMMA.16816.F32"),
                GpuSet(gpu, "fp16", "fp16", arch, "HMMA.16816.F16"),
                GpuSet(gpu, "bf16", "fp32", arch, "HMMA.16816.F32.BF16"),
                GpuSet(gpu, "tf32", "fp32", arch, "HMMA.1684.F32.TF32")]
    return out


SETS = _sets()


def load(s: GpuSet):
    """``(instruction, a, b, c, d_expected)`` with a, b padded to the instruction's K and d in D's format."""
    z = np.load(DATA / f"{s.gpu}_{s.fmt}.npz")
    ins = golden.lookup(s.arch, s.instruction)
    a, b = z["a"].astype(np.uint64), z["b"].astype(np.uint64)
    if a.shape[1] < ins.k:                       # unused products are zero
        pad = ((0, 0), (0, ins.k - a.shape[1]))
        a, b = np.pad(a, pad), np.pad(b, pad)
    c32 = z["c"]
    if s.c_zero:
        c32 = np.zeros_like(c32)
    d32 = z[f"d_{s.out}"]
    if ins.c_format == "f16":
        c = from_float("f16", c32.view(np.float32).astype(np.float64), "RNE")
    else:
        c = c32
    if ins.d_format == "f16":
        d = from_float("f16", d32.view(np.float32).astype(np.float64), "RNE")
        # the widened f16 must round-trip exactly (NaNs aside)
        back = to_float("f16", d)
        ref = d32.view(np.float32).astype(np.float64)
        assert ((back == ref) | np.isnan(ref)).all()
    else:
        d = d32
    return ins, a, b, c, d
