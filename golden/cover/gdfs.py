"""The block-scaled group dot's (GDFS's) own cover points (docs/spec.md §3)."""

from __future__ import annotations

from .common import COMMON_POINTS

__all__ = ["GDFS_COVER_POINTS"]

GDFS_COVER_POINTS = (*COMMON_POINTS,)
