"""One provable property: a name, the stage it is about, how to build its harness, and which
catalog units use it (for ``python -m formal``'s ARCH/INSTR filters)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .runner import Verdict, run_sby

__all__ = ["Property"]


@dataclass
class Property:
    """``build()`` returns ``(design, depth)``: an elaboratable with assertions and the steps to check.

    ``mode`` is sby's: ``bmc`` (complete for the feed-forward stages at their depth) or ``prove``
    (k-induction, for the stream shells).  ``units`` are ``(arch, instruction name)`` pairs.
    """

    name: str
    stage: str
    build: Callable
    mode: str = "bmc"
    engine: str = "yices"
    units: tuple = field(default_factory=tuple)

    def run(self, timeout: float = 60, **kwargs) -> Verdict:
        design, depth = self.build()
        return run_sby(self.name, design, depth, self.mode, self.engine, timeout, **kwargs)
