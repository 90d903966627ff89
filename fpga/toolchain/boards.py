"""The boards the FPGA build supports: an amaranth-boards platform, its FPGA family, how to program it.

Every board here has an FPGA of a family of :mod:`fpga.toolchain.families` (ECP5, or Gowin GW5A) that the
open toolchain builds for and a UART resource ``uart 0`` wired to a USB serial bridge.  The device's
capacity is not typed in: :func:`fpga.toolchain.build.device_capacity` reads it from nextpnr's own utilisation
report.

``ulx3s-*``: Radiona ULX3S, the LFE5U of each size, 25 MHz oscillator, FT231X USB UART.
``ecp5-5g-evn``: Lattice ECP5-5G Evaluation Board, an LFE5UM5G-85F (the 85k device of the
ULX3S-85F, so the same instruction sets fit) and a 12 MHz oscillator, which any unit meets; its
FT2232H's second channel is the UART once two resistor jumpers are moved (see the board's User
Guide, section 6.2, and amaranth-boards' note).  The other ECP5 boards of amaranth-boards were
passed over: the Versa and ECPIX-5 run a 100 MHz clock the multi-cycle datapaths do not meet,
and the OrangeCrab has no UART resource.

``tang-mega-138k``: Sipeed Tang Mega 138K Pro Dock, a Gowin GW5AST-LV138 (138k LUT4), 50 MHz
oscillator, its BL616 USB bridge's UART (amaranth-boards' ``TangMega138kProDockPlatform``), built by
the ``gowin-gw5a`` family (:mod:`fpga.toolchain.families.gowin`; no PLL there yet, so the design runs at 50 MHz).
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth_boards.ecp5_5g_evn import ECP55GEVNPlatform
from amaranth_boards.tang_mega_138k_pro_dock import TangMega138kProDockPlatform
from amaranth_boards.ulx3s import ULX3S_12F_Platform, ULX3S_25F_Platform, ULX3S_45F_Platform, ULX3S_85F_Platform

from .families import Family
from .families import family as find_family

__all__ = ["BoardSpec", "BOARDS", "board"]


@dataclass(frozen=True)
class BoardSpec:
    """What one supported board is (the driver's connection to a board is :class:`fpga.host.driver.BoardLink`).

    Parameters
    ----------
    name : str
        The name the command line takes (``BOARD=``).
    platform_class : type
        Its amaranth-boards platform class.
    loader_board : str
        openFPGALoader's name for it (``openFPGALoader -b``).
    description : str
        One line for listings.
    family_name : str
        Its FPGA family (:data:`fpga.toolchain.families.FAMILIES`).
    """

    name: str
    platform_class: type
    loader_board: str
    description: str
    family_name: str = "ecp5"

    @property
    def family(self) -> Family:
        """The FPGA family that builds for it (toolchain, resources, fit rules, clocking)."""
        return find_family(self.family_name)

    def platform(self):
        """A fresh platform instance (an Amaranth platform builds one design only)."""
        return self.family.platform(self.platform_class)

    @property
    def device(self) -> str:
        """The FPGA, e.g. ``LFE5U-85F`` or ``GW5AST-LV138FPG676AC1/I0``."""
        return getattr(self.platform_class, "device", None) or self.platform_class.part

    @property
    def package(self) -> str:
        return getattr(self.platform_class, "package", "")

    @property
    def speed(self) -> str:
        return getattr(self.platform_class, "speed", "")

    @property
    def clock(self) -> str:
        """The name of the oscillator's resource: the design's ``sync`` clock."""
        return self.platform_class.default_clk

    @property
    def clock_hz(self) -> int:
        """The oscillator's frequency, from the platform's clock constraint."""
        return int(self.platform().default_clk_frequency)

    @property
    def uart_pins(self) -> dict[str, str]:
        """``{"rx": pin, "tx": pin}`` of the ``uart 0`` resource (FPGA side)."""
        resource = self.platform().lookup("uart", 0)
        return {sub.name: " ".join(sub.ios[0].names) for sub in resource.ios if sub.name in ("rx", "tx")}




def _ulx3s(size: str, platform_class: type) -> BoardSpec:
    return BoardSpec(f"ulx3s-{size}", platform_class, "ulx3s",
                 f"Radiona ULX3S with an LFE5U-{size.upper()}, 25 MHz, FT231X USB UART")


BOARDS: dict[str, BoardSpec] = {b.name: b for b in (
    _ulx3s("85f", ULX3S_85F_Platform),
    _ulx3s("45f", ULX3S_45F_Platform),
    _ulx3s("25f", ULX3S_25F_Platform),
    _ulx3s("12f", ULX3S_12F_Platform),
    BoardSpec("ecp5-5g-evn", ECP55GEVNPlatform, "ecp5_evn",
              "Lattice ECP5-5G Evaluation Board, LFE5UM5G-85F, 12 MHz, FT2232H UART (after a jumper change: "
              "User Guide 6.2)"),
    BoardSpec("tang-mega-138k", TangMega138kProDockPlatform, "tangmega138k",
              "Sipeed Tang Mega 138K Pro Dock, Gowin GW5AST-LV138, 50 MHz, BL616 USB UART", "gowin-gw5a"),
)}


def board(name: str) -> BoardSpec:
    """The board called ``name``; ValueError listing the valid names for any other."""
    if isinstance(name, BoardSpec):
        return name
    if name not in BOARDS:
        raise ValueError(f"unknown board {name!r}; valid boards: {', '.join(BOARDS)}")
    return BOARDS[name]
