"""The block-scaled group dot's (GDFS's) own cover points (docs/spec.md §3)."""

from __future__ import annotations

from .chain import CHAIN_POINTS
from .common import COMMON_POINTS
from .scales import SCALE_POINTS

__all__ = ["GDFS_COVER_POINTS"]

GDFS_COVER_POINTS = (*SCALE_POINTS, *CHAIN_POINTS, *COMMON_POINTS)
