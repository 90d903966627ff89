"""Where a board top's multipliers go: the ECP5's DSP blocks, LUTs, or DSPs for some lanes and LUTs
for the rest, as options of Yosys's ``synth_ecp5`` passed through Amaranth's platform overrides.

``"dsp"``: ``synth_ecp5``'s default, every ``$mul`` wide enough goes to MULT18X18D blocks
(``mul2dsp``).  ``"lut"``: ``synth_ecp5 -nodsp``, every multiplier in LUTs and carry chains.
``"auto"``: the first ``dsp_lanes`` lanes of the unit in DSPs, the others in LUTs: before
``synth_ecp5`` the ``$mul`` cells of the other lanes' modules (``top.unit.lane<n>`` and its
submodules, still separate modules at that point) are retyped ``$__soft_mul``, the type
``synth_ecp5``'s own DSP mapping gives the products it leaves to LUTs, which ``mul2dsp`` skips and
the generic ``techmap`` later maps to LUTs like a ``-nodsp`` multiplier.  Nothing else changes, so
a lane's LUT cost is what a ``"lut"`` lane costs (within Yosys's width reductions, which run
before the retyping in ``"lut"`` and after it here).
"""

from __future__ import annotations

__all__ = ["MULTIPLIERS", "check_multipliers", "yosys_overrides", "describe"]

MULTIPLIERS = ("dsp", "lut", "auto")
UNIT_PATH = "top.unit"        # the unit's module in the board top's RTLIL (fpga.toolchain.build.NAME, BoardTop's unit)


def check_multipliers(multipliers: str) -> str:
    """``multipliers`` if it is one of :data:`MULTIPLIERS`; ValueError naming the valid ones."""
    if multipliers not in MULTIPLIERS:
        raise ValueError(f"unknown multiplier choice {multipliers!r}; valid: {', '.join(MULTIPLIERS)} "
                         f"(dsp: DSP blocks, lut: LUTs, auto: DSPs for as many lanes as they allow, LUTs for the rest)")
    return multipliers


def lut_lanes(multipliers: str, lanes: int, dsp_lanes: int | None) -> range:
    """The lanes whose multipliers go to LUTs."""
    if check_multipliers(multipliers) == "dsp":
        return range(0)
    if multipliers == "lut":
        return range(lanes)
    if dsp_lanes is None or not 0 <= dsp_lanes <= lanes:
        raise ValueError(f"multipliers='auto' needs dsp_lanes between 0 and the {lanes} lanes, not {dsp_lanes!r}")
    return range(dsp_lanes, lanes)


def yosys_overrides(multipliers: str, lanes: int = 1, dsp_lanes: int | None = None) -> dict[str, str]:
    """Amaranth's ECP5 platform overrides (``synth_opts``, ``script_after_read``) for the choice."""
    soft = lut_lanes(multipliers, lanes, dsp_lanes)
    if multipliers == "lut" or len(soft) == lanes and lanes:
        return {"synth_opts": "-nodsp"}
    if not soft:
        return {}
    selection = " ".join(f"{UNIT_PATH}.lane{n}/t:$mul {UNIT_PATH}.lane{n}.*/t:$mul" for n in soft)
    return {"script_after_read": f"chtype -set $__soft_mul {selection}"}


def describe(multipliers: str, lanes: int | None = None, dsp_lanes: int | None = None) -> str:
    """``multipliers in DSP blocks``, ``... in LUTs``, ``... in DSP blocks for 9 lanes, LUTs for 2``."""
    if multipliers == "auto" and lanes is not None and dsp_lanes is not None:
        if dsp_lanes >= lanes:
            return "multipliers in DSP blocks (auto: all lanes)"
        if dsp_lanes == 0:
            return "multipliers in LUTs (auto: no lane in DSPs)"
        return f"multipliers in DSP blocks for {dsp_lanes} lanes, LUTs for {lanes - dsp_lanes} (auto)"
    return {"dsp": "multipliers in DSP blocks", "lut": "multipliers in LUTs", "auto": "multipliers auto"}[multipliers]
