"""The boards the FPGA build supports: an amaranth-boards platform and how to program it.

Every board here has an ECP5 the open toolchain (Yosys, nextpnr-ecp5, ecppack) builds for and a
UART resource ``uart 0`` wired to a USB serial bridge.  The device's capacity is not typed in:
:func:`fpga.build.device_capacity` reads it from nextpnr's own utilisation report.

``ulx3s-*``: Radiona ULX3S, the LFE5U of each size, 25 MHz oscillator, FT231X USB UART.
``ecp5-5g-evn``: Lattice ECP5-5G Evaluation Board, an LFE5UM5G-85F (the 85k device of the
ULX3S-85F, so the same instruction sets fit) and a 12 MHz oscillator, which any unit meets; its
FT2232H's second channel is the UART once two resistor jumpers are moved (see the board's User
Guide, section 6.2, and amaranth-boards' note).  The other ECP5 boards of amaranth-boards were
passed over: the Versa and ECPIX-5 run a 100 MHz clock the multi-cycle datapaths do not meet,
and the OrangeCrab has no UART resource.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth_boards.ecp5_5g_evn import ECP55GEVNPlatform
from amaranth_boards.ulx3s import ULX3S_12F_Platform, ULX3S_25F_Platform, ULX3S_45F_Platform, ULX3S_85F_Platform

__all__ = ["Board", "BOARDS", "board"]


@dataclass(frozen=True)
class Board:
    """One supported board.

    Parameters
    ----------
    name : str
        The name the command line takes (``BOARD=``).
    platform_class : type
        Its amaranth-boards ``LatticeECP5Platform`` subclass.
    loader_board : str
        openFPGALoader's name for it (``openFPGALoader -b``).
    description : str
        One line for listings.
    """

    name: str
    platform_class: type
    loader_board: str
    description: str

    def platform(self):
        """A fresh platform instance (an Amaranth platform builds one design only)."""
        return self.platform_class(toolchain="Trellis")

    @property
    def device(self) -> str:
        """The FPGA, e.g. ``LFE5U-85F``."""
        return self.platform_class.device

    @property
    def package(self) -> str:
        return self.platform_class.package

    @property
    def speed(self) -> str:
        return self.platform_class.speed

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


def _ulx3s(size: str, platform_class: type) -> Board:
    return Board(f"ulx3s-{size}", platform_class, "ulx3s",
                 f"Radiona ULX3S with an LFE5U-{size.upper()}, 25 MHz, FT231X USB UART")


BOARDS: dict[str, Board] = {b.name: b for b in (
    _ulx3s("85f", ULX3S_85F_Platform),
    _ulx3s("45f", ULX3S_45F_Platform),
    _ulx3s("25f", ULX3S_25F_Platform),
    _ulx3s("12f", ULX3S_12F_Platform),
    Board("ecp5-5g-evn", ECP55GEVNPlatform, "ecp5_evn",
          "Lattice ECP5-5G Evaluation Board, LFE5UM5G-85F, 12 MHz, FT2232H UART (after a jumper change: User Guide 6.2)"),
)}


def board(name: str) -> Board:
    """The board called ``name``; ValueError listing the valid names for any other."""
    if isinstance(name, Board):
        return name
    if name not in BOARDS:
        raise ValueError(f"unknown board {name!r}; valid boards: {', '.join(BOARDS)}")
    return BOARDS[name]
