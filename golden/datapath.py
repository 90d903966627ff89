"""What a dot-add computes (:class:`Datapath`): the algorithm parameters, the formats, K and the scales.

It lives apart from the catalog so that the algorithms themselves take it (golden.algorithms): one
argument instead of eight, and the same object the RTL builds from.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .formats import Format
from .params import check_params_for

__all__ = ["Datapath"]


@dataclass(frozen=True)
class Datapath:
    """What a dot-add computes, without names or shapes: two instructions with equal datapaths
    give the same bits on every input (HGMMA's N variants, aliases, AMD block counts).

    The one description every consumer takes: the RTL builds a datapath from it, reports and
    test suites group instructions by it.

    Members
    -------
    params : Params
    a_format, b_format, c_format, d_format : Format
    k : int
        Products per dot-add.
    scale_format : Format or None
    block_size : int or None
        Products per block scale.
    """

    params: object          # a golden.Params (not imported: golden.algorithms imports this module)
    a_format: Format
    b_format: Format
    c_format: Format
    d_format: Format
    k: int
    scale_format: Format | None = None
    block_size: int | None = None

    def __post_init__(self):
        check_params_for(self.params, self)        # the Params against these formats and K, in one place

    @property
    def formats(self) -> tuple[Format, Format, Format, Format]:
        return (self.a_format, self.b_format, self.c_format, self.d_format)

    @property
    def algorithm(self) -> str:
        return self.params.algorithm_name(self.k)

    @property
    def scale_blocks(self) -> int:
        """Block scales per operand row (0 when unscaled)."""
        return self.k // self.block_size if self.scale_format else 0

    def with_(self, **changes) -> Datapath:
        """A copy with some fields changed (other formats, other params)."""
        return replace(self, **changes)

    def __str__(self) -> str:
        scale = f" {self.scale_format.name}/{self.block_size}" if self.scale_format else ""
        return (f"{self.algorithm} K={self.k} {self.a_format.name} x {self.b_format.name} + "
                f"{self.c_format.name} -> {self.d_format.name}{scale}")


def pass_order(k: int, L: int, run: int) -> np.ndarray:
    """Product indices in the order the passes take them when pass ``j`` takes the runs of ``run``
    consecutive products whose run number is ``j`` modulo the number of passes."""
    passes = k // L
    idx = np.arange(k)
    return np.concatenate([idx[(idx // run) % passes == j] for j in range(passes)])
