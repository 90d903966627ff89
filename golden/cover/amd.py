"""The AMD round-down algorithms' own cover points (FDRDA, GFDRDA; docs/spec.md §3)."""

from __future__ import annotations

from .chain import CHAIN_POINTS
from .common import COMMON_POINTS

__all__ = ["FDRDA_COVER_POINTS", "GFDRDA_COVER_POINTS"]

FDRDA_COVER_POINTS = (*CHAIN_POINTS, *COMMON_POINTS)
GFDRDA_COVER_POINTS = (*CHAIN_POINTS, *COMMON_POINTS)
