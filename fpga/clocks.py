"""The ECP5 PLL under its former name: :mod:`fpga.families.ecp5_pll` (kept so imports of
``fpga.clocks`` go on working)."""

from .families.ecp5_pll import (FEEDBACK_HZ, OUTPUT_HZ, PFD_HZ, VCO_HZ, ECP5PLL, PLLParams,  # noqa: F401
                                ecp5_pll, makes_exactly)

__all__ = ["PLLParams", "ecp5_pll", "makes_exactly", "ECP5PLL"]
