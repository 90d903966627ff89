"""torch dtypes as golden format names, and tensors as bit patterns (numpy) and back."""

from __future__ import annotations

import numpy as np
import torch

# torch dtype -> golden format name
DTYPES = {
    torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
    torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2",
    torch.float8_e4m3fnuz: "e4m3fnuz", torch.float8_e5m2fnuz: "e5m2fnuz",
}
_INT_VIEW = {1: (torch.uint8, np.uint8), 2: (torch.int16, np.uint16), 4: (torch.int32, np.uint32)}


def to_bits(t: torch.Tensor) -> np.ndarray:
    """A tensor's elements as unsigned bit patterns (numpy)."""
    tdt, ndt = _INT_VIEW[t.element_size()]
    return t.detach().cpu().contiguous().view(tdt).numpy().view(ndt)


def from_bits(bits: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """Bit patterns (numpy) as a tensor of ``dtype``."""
    size = torch.empty((), dtype=dtype).element_size()
    signed = {1: np.uint8, 2: np.int16, 4: np.int32}[size]
    return torch.from_numpy(np.ascontiguousarray(np.asarray(bits).astype(_INT_VIEW[size][1])).view(signed)).view(dtype)
