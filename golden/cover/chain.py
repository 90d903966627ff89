"""Cover points of the chained forms (``pass_size < K``): each intermediate pass's rounding."""

from __future__ import annotations

__all__ = ["CHAIN_POINTS"]

CHAIN_POINTS: tuple = ()
