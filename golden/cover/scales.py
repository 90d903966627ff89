"""Cover points of block scales (the scaled FDA forms and GDFS): the scales at their extremes."""

from __future__ import annotations

__all__ = ["SCALE_POINTS"]

SCALE_POINTS: tuple = ()
