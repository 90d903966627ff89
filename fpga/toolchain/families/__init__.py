"""FPGA families behind one interface (:class:`fpga.toolchain.families.base.Family`): ``ecp5``
(:mod:`fpga.toolchain.families.ecp5`) and ``gowin-gw5a`` (:mod:`fpga.toolchain.families.gowin`).  A board
(:class:`fpga.toolchain.boards.BoardSpec`) names its family; :func:`family` finds it."""

from __future__ import annotations

from .base import RESOURCES, Family, PlaceAndRoute, Resources, Step
from .ecp5 import ECP5
from .gowin import GW5A

__all__ = ["Family", "PlaceAndRoute", "Resources", "RESOURCES", "Step", "FAMILIES", "family"]

FAMILIES: dict[str, Family] = {f.name: f for f in (ECP5(), GW5A())}


def family(name: str) -> Family:
    """The family called ``name``; ValueError listing the valid names for any other."""
    if isinstance(name, Family):
        return name
    if name not in FAMILIES:
        raise ValueError(f"unknown FPGA family {name!r}; valid: {', '.join(FAMILIES)}")
    return FAMILIES[name]
