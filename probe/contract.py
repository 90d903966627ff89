"""What a backend is: the callable contract of the probe suite, its errors, and the check of
what a backend returns.  Every backend module imports this one and nothing above it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from golden import Instruction

__all__ = ["Backend", "BackendError", "Unavailable", "check_output"]


class Backend(Protocol):
    """What a backend is: any callable with :func:`golden.dot_add`'s signature over bit patterns
    (a plain function qualifies; a ``name`` attribute, if present, labels the reports)."""

    def __call__(self, ins: Instruction, a: np.ndarray, b: np.ndarray, c: np.ndarray,
                 scale_a: np.ndarray | None = None, scale_b: np.ndarray | None = None) -> np.ndarray: ...


class BackendError(RuntimeError):
    """A backend is unavailable or returned something that is not a batch of D bit patterns."""


class Unavailable(BackendError):
    """The backend cannot run here (no GPU, no torch, no simulator): skip, do not fail."""


def check_output(ins: Instruction, d, rows: int, name: str = "backend") -> np.ndarray:
    """``d`` as uint64 bit patterns of shape ``[rows]``, or a clear :class:`BackendError`."""
    fd = ins.formats[3]
    arr = np.asarray(d)
    if arr.dtype.kind not in "ui":
        raise BackendError(f"{name} returned dtype {arr.dtype} for {ins.arch} {ins.name}; a backend returns "
                           f"unsigned integer bit patterns of the D format ({fd.name}, {fd.storage_bits} bits)")
    if arr.shape != (rows,):
        raise BackendError(f"{name} returned shape {arr.shape} for a batch of {rows} dot-adds; expected ({rows},)")
    if arr.size and arr.dtype.kind == "i" and int(arr.min()) < 0:
        raise BackendError(f"{name} returned negative values; expected {fd.name} bit patterns")
    arr = arr.astype(np.uint64)
    if fd.storage_bits < 64 and arr.size and int(arr.max()) >> fd.storage_bits:
        raise BackendError(f"{name} returned {int(arr.max()):#x}, wider than a {fd.name} bit pattern "
                           f"({fd.storage_bits} bits)")
    return arr
