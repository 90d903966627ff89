"""PyTorch's floating-point products computed as a GPU's tensor cores compute them: ``golden.torch.emulate``.

>>> import golden.torch
>>> with golden.torch.emulate("hopper", kernel="fp8-promote-4", strict=True) as mode:   # doctest: +SKIP
...     loss = model(x).sum()
...     loss.backward()
>>> mode.calls, mode.ops                                                              # doctest: +SKIP

A :class:`torch.utils._python_dispatch.TorchDispatchMode`: every aten operator torch runs passes
through it, below autograd and after decompositions, so a product cannot slip past inside
``einsum``, ``nn.MultiheadAttention`` or a backward pass.  The products it models
(:data:`golden.torch.ops.HANDLERS`: ``mm``, ``bmm``, ``addmm``, ``_addmm_activation``, ``baddbmm``,
``addbmm``, ``mv``, ``addmv``, ``dot``, ``vdot``, ``_scaled_mm``, their ``out=`` and in-place forms,
2-D convolution through :mod:`golden.torchconv` and attention through :mod:`golden.torchattn`) go
through :func:`golden.gemm`; every other operator runs as torch runs it.  A floating-point product
it does not model runs natively, is counted in ``mode.native`` and summarised on exit, or with
``strict=True`` raises :class:`NotEmulated`.  docs/gemm.md ("The torch mode") states the rules and the limits.

The optional extra ``[torch]`` installs torch; nothing else in golden imports this package.
"""

from __future__ import annotations

try:
    import torch  # noqa: F401 (the optional extra: fail here, with its name, before anything else)
except ModuleNotFoundError as e:                  # the optional extra: say which one
    if e.name != "torch":
        raise
    raise ModuleNotFoundError("golden.torch needs PyTorch, which is not installed: pip install 'mma-rtl[torch]'",
                              name="torch") from None

from ..gemm import instruction_for
from .mode import DTYPES, CInput, NotEmulated, Product, emulate, exact, fit_kernel, from_bits, to_bits

__all__ = ["emulate", "exact", "instruction_for", "DTYPES", "CInput", "NotEmulated", "Product", "fit_kernel",
           "to_bits", "from_bits"]
