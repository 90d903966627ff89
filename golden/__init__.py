"""Bit-accurate golden model of GPU matrix-multiply instructions.

>>> import golden
>>> ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
>>> golden.dot_add(ins, a_bits, b_bits, c_bits)          # doctest: +SKIP

See README.md for the conventions (bit patterns, one element per integer).  ``golden.torch`` (PyTorch's
matrix products through golden.gemm, the ``[torch]`` extra) is imported on first use, so ``import golden``
never imports torch.
"""

from .algorithms import Params
from .api import Trace, as_bits, dot_add, mma, trace
from .catalog import ARCHITECTURES, CATALOG, CUSTOM, Datapath, Instruction, canonical_arch, instructions, lookup, select
from .cover import directed as _directed  # noqa: F401  (registers the cover vector kind with golden.vectors)
from .custom import custom
from .formats import FORMATS, Format, decode, from_float, get_format, round_to_format, to_float
from .gemm import PRESETS as GEMM_PRESETS
from .gemm import Kernel, gemm, gemm_float
from .results import mismatching, same_results

__all__ = [
    "ARCHITECTURES", "CATALOG", "CUSTOM", "FORMATS", "GEMM_PRESETS", "Datapath", "Format", "Instruction", "Kernel",
    "Params", "Trace", "as_bits", "canonical_arch", "custom", "decode", "dot_add", "from_float", "gemm", "gemm_float",
    "get_format", "instructions", "lookup", "mismatching",
    "mma", "round_to_format", "same_results", "select", "to_float", "trace",
]


def __getattr__(name: str):
    """``golden.torch`` on first use (it imports torch, an optional extra: not at ``import golden``)."""
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'golden' has no attribute {name!r}")
