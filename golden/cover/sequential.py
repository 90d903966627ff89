"""The sequential algorithms' own cover points: SFMA and GPS (docs/spec.md §3)."""

from __future__ import annotations

from .common import COMMON_POINTS

__all__ = ["SFMA_COVER_POINTS", "GPS_COVER_POINTS"]

SFMA_COVER_POINTS = (*COMMON_POINTS,)
GPS_COVER_POINTS = (*COMMON_POINTS,)
