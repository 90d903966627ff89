"""The authors' reference model (``mmasim`` on PyPI, microsoft/MMA-Sim) as a rate column of
``python -m golden.bench``: the same instruction, the same operands, one core's CPU time.

Optional (``pip install mma-rtl[reference]``): without mmasim (or torch) :func:`reference_op`
gives None and the bench prints ``-``.  Nothing here decides a result: the reference model only
sets the pace the throughput targets are read against (``golden.bench.REFERENCE_TARGETS``: the
fused algorithms >= 40x the reference model, GPS and f64 SFMA >= 10x).
"""

from __future__ import annotations

import functools

import numpy as np

from .catalog import Instruction

# our arch names -> the reference model's
_NV_ARCH = {"volta": "Volta", "turing": "Turing", "ampere": "Ampere", "ada": "Ada Lovelace", "hopper": "Hopper",
            "blackwell": "Blackwell", "rtx_blackwell": "RTX Blackwell"}
_AMD_ARCH = {"cdna1": "CDNA1", "cdna2": "CDNA2", "cdna3": "CDNA3"}
# our format names -> torch dtype attribute names (formats the reference model reads as torch dtypes)
_TORCH = {"f64": "float64", "f32": "float32", "tf32": "float32", "f16": "float16", "bf16": "bfloat16",
          "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
          "e5m2fnuz": "float8_e5m2fnuz"}


def available() -> bool:
    """Whether the reference model imports."""
    try:
        from mmasim import amd, nv_ptx
    except (ImportError, OSError, RuntimeError):   # not installed, or torch's C++ extension fails here
        return False
    return amd is not None and nv_ptx is not None


def _amd_suffix(ins: Instruction, supported) -> str | None:
    """The reference model's MFMA suffix for a catalog AMD instruction (CDNA2 keeps CDNA1's
    spelling, ``f32_32x32x8f16``; its 4-product bf16 group is ``..bf16_1k``)."""
    s = ins.name.removeprefix("v_mfma_")
    head, _, tail = s.rpartition("_")
    candidates = [s, head + tail]
    if tail == "bf16" and ins.params.group == 4:
        candidates.insert(0, head + "bf16_1k")
    return next((x for x in candidates if x in supported), None)


@functools.cache
def reference_op(ins: Instruction):
    """The reference model's operation for ``ins`` (its ``dpa(a, b, c)`` takes ``[R, K]`` tensors),
    or None where it has none (wgmma, tcgen05, block scales, or mmasim not installed)."""
    if not available() or ins.scale_format is not None:
        return None
    from mmasim import amd
    from mmasim import nv_ptx as nv
    from mmasim.amd.isa_mfma import arch_mfma_suffix
    if ins.arch in _AMD_ARCH:
        arch = _AMD_ARCH[ins.arch]
        suffix = _amd_suffix(ins, arch_mfma_suffix[arch])
        return None if suffix is None else amd.MFMA(arch, suffix)
    if ins.arch in _NV_ARCH and ins.ptx.startswith("mma.") and ".kind::" not in ins.ptx:
        try:
            return nv.MMA(_NV_ARCH[ins.arch], ins.ptx.removeprefix("mma."))
        except AssertionError:               # a shape the reference model does not list
            return None
    return None


def as_tensor(fmt, bits: np.ndarray):
    """Bit patterns as the reference model's torch tensor of that format (a view of the bits)."""
    import torch
    dt = getattr(torch, _TORCH[fmt.name])
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    raw = torch.from_numpy(np.ascontiguousarray(np.asarray(bits).astype(width)).view(
        {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[dt.itemsize]))
    return raw.view(dt)


def reference_call(ins: Instruction, a, b, c):
    """A callable running the reference model on these operands, or None (no model, or a format
    it has no torch dtype for)."""
    op = reference_op(ins)
    fa, fb, fc, _ = ins.formats
    if op is None or any(f.name not in _TORCH for f in (fa, fb, fc)):
        return None
    import torch
    torch.set_num_threads(1)
    ta, tb, tc = as_tensor(fa, a), as_tensor(fb, b), as_tensor(fc, c)
    return lambda: op.dpa(ta, tb, tc)
