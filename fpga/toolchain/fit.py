"""How many lanes of a unit fit a board, measured from synthesis.

A lane is one datapath of :class:`hw.DotAddUnit`; a board top with ``n`` lanes costs a fixed part
(UART, host link, the identify ROM) plus ``n`` lanes plus its two buffers.  :func:`lane_cost`
synthesises the board top (Yosys only, no place and route: about a minute and a half for an
HGMMA lane here) with 1 and 2 lanes: the difference is one lane's LUT4, FF and DSP, the rest is the
fixed cost.  The buffers are block RAM whose size the lanes decide: an entry is ``n`` lanes'
operands and the buffers' depth shrinks as entries widen, because a LOAD frame carries the whole
buffer in a 16-bit length (:func:`depth_for`), so their EBR is counted from their geometry
(:func:`buffer_ebr`, Yosys's DP16KD mapping) rather than extrapolated; the EBR of the 1-lane top
less its buffers is fixed (or the 2-lane top's, if larger), and the 2-lane top checks the count
(:attr:`LaneCost.ebr_error`).

:func:`fit` turns the costs into lanes per resource against the device's capacity
(:func:`fpga.toolchain.build.device_capacity`).  LUT4s are counted against :data:`LUT_HEADROOM` of the
device: synthesis counts fewer LUT4 than nextpnr packs (8,205 against 8,767, +7 %, for the HGMMA
board top), and nextpnr's placer and router need free slices to reach Fmax and to finish at all on
a nearly full ECP5, so 80 % of synthesised LUT4s (about 86 % packed) is the most a fit aims at.
FFs, DSPs and EBR are counted against the whole device: FFs share the slices the LUT headroom
already spares, and DSP and block RAM sites are fixed columns that routing does not crowd.

Multipliers (:mod:`fpga.toolchain.multipliers`): ``"dsp"`` puts each lane's in MULT18X18D blocks, ``"lut"``
in LUTs (``synth_ecp5 -nodsp``), ``"auto"`` as many lanes in DSPs as the DSPs allow and the rest
in LUTs, which needs both costs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..board.config import BoardConfig, max_depth
from .boards import BoardSpec
from .boards import board as find_board
from .build import RESOURCE_TITLES, RESOURCES, Resources, device_capacity, synthesise
from .families import Family
from .families import family as find_family
from .multipliers import MULTIPLIERS, check_multipliers, describe

ECP5 = find_family("ecp5")

__all__ = ["LUT_HEADROOM", "LANE_LIMIT", "DEFAULT_DEPTH", "MULTIPLIERS", "depth_for", "board_config", "buffer_ebr",
           "LaneCost", "cost_from", "lane_cost", "Fit", "fit", "fit_unit", "dsp_lanes_for", "parse_lanes"]

LUT_HEADROOM = 0.80     # of the device's LUT4s, as synthesis counts them (see the module docstring)
LANE_LIMIT = 4096       # lanes searched; a resource no lane count up to this exhausts does not bind
DEFAULT_DEPTH = BoardConfig.__dataclass_fields__["depth"].default


# --- the buffers ---------------------------------------------------------------------------------

def depth_for(in_bytes: int, out_bytes: int, depth: int = DEFAULT_DEPTH) -> int:
    """The buffers' depth: ``depth``, or less when a LOAD or READ frame of it would exceed 16 bits."""
    return min(depth, max_depth(in_bytes, out_bytes))


def board_config(arch: str, instr: str, lanes: int, depth: int = DEFAULT_DEPTH, **kw) -> BoardConfig:
    """The board of ``lanes`` lanes of one instruction, its buffers as deep as frames allow up to
    ``depth``; other keyword arguments go to :class:`fpga.board.config.BoardConfig` (``clock_hz``,
    ``baud``, ``pipelining`` where it exists)."""
    one = BoardConfig.from_names(arch, instr, lanes=1, depth=1, **kw)
    in_bytes, out_bytes = -(-lanes * one.in_bits // 8), -(-lanes * one.out_bits // 8)
    return replace(one, lanes=lanes, depth=depth_for(in_bytes, out_bytes, depth))


# ECP5: Yosys maps a 1-write, 1-read memory onto DP16KD/PDPW16KD blocks of 16 Kbit in one of
# these (width, depth) shapes, whichever takes fewest blocks; a write port with 8-bit byte enables
# (the input buffer's) uses 8 bits of each 9-bit byte lane (fpga.toolchain.families.ecp5)
_EBR_SHAPES = ECP5.ram_shapes


def _memory_ebr(depth: int, width: int, byte_enables: bool, family: Family = ECP5) -> int:
    return family.memory_blocks(depth, width, byte_enables)


def buffer_ebr(cfg: BoardConfig, family: Family | str = ECP5) -> int:
    """Block RAMs (ECP5: DP16KD) of the board's two buffers (``fpga.board.link``: input ``in_bytes`` wide
    with byte enables, output ``out_bits`` wide, both ``depth`` deep), cut as the family's Yosys
    mapping cuts them (:meth:`fpga.toolchain.families.base.Family.memory_blocks`)."""
    family = find_family(family)
    return _memory_ebr(cfg.depth, cfg.in_bytes * 8, True, family) + _memory_ebr(cfg.depth, cfg.out_bits, False, family)


# --- measured costs ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LaneCost:
    """What a board top of a unit costs, as a fixed part, a part per lane and its buffers.

    Members
    -------
    multipliers : str
        ``"dsp"`` or ``"lut"``: where the measured lanes' multipliers went.
    per_lane, fixed : Resources
        LUT4, FF and DSP per lane and fixed; EBR: ``per_lane.ebr`` is 0 and ``fixed.ebr`` excludes
        the buffers (:func:`buffer_ebr` adds them for each lane count).
    measured : tuple of (lanes, Resources)
        The syntheses the costs come from.
    ebr_error : int
        The 2-lane top's synthesised EBR less the model's (0: the model holds).
    """

    multipliers: str
    per_lane: Resources
    fixed: Resources
    measured: tuple = ()
    ebr_error: int = 0

    def cost(self, lanes: int, buffers_ebr: int) -> Resources:
        """The board top of ``lanes`` lanes whose buffers take ``buffers_ebr`` blocks."""
        return Resources(*(getattr(self.fixed, k) + lanes * getattr(self.per_lane, k) for k in RESOURCES[:3]),
                         ebr=self.fixed.ebr + buffers_ebr)


def cost_from(multipliers: str, one: Resources, two: Resources, buffers_one: int, buffers_two: int) -> LaneCost:
    """The :class:`LaneCost` of syntheses with 1 and 2 lanes whose buffers take ``buffers_one`` and
    ``buffers_two`` blocks by :func:`buffer_ebr`."""
    per_lane = Resources(*(getattr(two, k) - getattr(one, k) for k in RESOURCES[:3]), ebr=0)
    # the identify ROM goes to a block or to logic as Yosys picks: the fixed EBR is the larger reading
    fixed_ebr = max(one.ebr - buffers_one, two.ebr - buffers_two)
    fixed = Resources(*(getattr(one, k) - getattr(per_lane, k) for k in RESOURCES[:3]), ebr=fixed_ebr)
    return LaneCost(multipliers, per_lane, fixed, ((1, one), (2, two)), two.ebr - (fixed.ebr + buffers_two))


def lane_cost(arch: str, instr: str, board: BoardSpec | str = "ulx3s-85f", multipliers: str = "dsp", *,
              yosys_version: str | None = None, build_dir: Path | None = None, **config_kw) -> LaneCost:
    """Synthesise the board top of ``arch instr`` with 1 and 2 lanes (``"dsp"`` or ``"lut"``
    multipliers); its :class:`LaneCost`.  Syntheses are kept (``build/fpga/<board>/synth/``)."""
    from ..board.top import BoardTop
    if check_multipliers(multipliers) == "auto":
        raise ValueError("lane_cost measures 'dsp' or 'lut' lanes; 'auto' is fit's mix of the two")
    brd = find_board(board)
    config_kw.setdefault("clock_hz", brd.clock_hz)
    # both tops as deep as the 2-lane one allows, so that the link's logic is the same in both
    depth = board_config(arch, instr, 2, **config_kw).depth
    found, buffers = {}, {}
    for lanes in (1, 2):
        cfg = board_config(arch, instr, lanes, depth=depth, **config_kw)
        folder = None if build_dir is None else Path(build_dir) / f"{cfg.name}_{multipliers}"
        found[lanes] = synthesise(BoardTop(cfg), brd, f"{cfg.name}_{multipliers}_d{depth}", build_dir=folder,
                                  multipliers=multipliers, lanes=lanes, yosys_version=yosys_version)
        buffers[lanes] = buffer_ebr(cfg, brd.family)
    return cost_from(multipliers, found[1], found[2], buffers[1], buffers[2])


# --- the fit -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Fit:
    """Lanes of a unit that fit a device.

    Members
    -------
    multipliers : str
    lanes : int
        The most lanes every resource allows (0: not even one).
    dsp_lanes : int
        How many of them have their multipliers in DSPs (``"auto"``; all for ``"dsp"``, none for ``"lut"``).
    by_resource : dict
        ``{resource: lanes that fit by it alone, or None when no lane count up to LANE_LIMIT exhausts it}``.
    usable : Resources
        The capacity counted against: LUT4 times ``headroom``, the rest whole.
    costs : dict
        ``{"dsp"|"lut": LaneCost}`` used.
    at_lanes : Resources
        The predicted cost of ``lanes`` lanes (of one lane when none fits).
    depth : int
        The buffers' depth at ``lanes`` lanes.
    """

    multipliers: str
    lanes: int
    dsp_lanes: int
    by_resource: dict
    usable: Resources
    capacity: Resources
    headroom: float
    costs: dict
    at_lanes: Resources
    depth: int

    @property
    def binding(self) -> list[str]:
        """The resources that stop the next lane."""
        limits = [n for n in self.by_resource.values() if n is not None]
        return [k for k, n in self.by_resource.items() if limits and n == min(limits)]

    def table(self) -> str:
        """Per resource: per lane, fixed, usable capacity, lanes that fit."""
        kinds = ["dsp", "lut"] if self.multipliers == "auto" else [self.multipliers]
        per_titles = [f"per {k} lane" for k in kinds] if len(kinds) > 1 else ["per lane"]
        fixed = self.costs[kinds[0]].fixed
        head = f"{'resource':<18} " + " ".join(f"{t:>12}" for t in per_titles) + \
            f" {'fixed':>8} {'capacity':>9} {'usable':>9} {'lanes fit':>10}"
        lines = [head]
        for key in RESOURCES:
            per = [f"{getattr(self.costs[k].per_lane, key):>12,}" if key != "ebr" else f"{'buffers':>12}"
                   for k in kinds]
            n = self.by_resource[key]
            lines.append(f"{RESOURCE_TITLES[key]:<18} " + " ".join(per) + f" {getattr(fixed, key):>8,}"
                         f" {getattr(self.capacity, key):>9,} {getattr(self.usable, key):>9,}"
                         f" {'no limit' if n is None else f'{n:,}':>10}")
        return "\n".join(lines)

    def answer(self) -> str:
        """One line: how many lanes fit, what binds, where the multipliers go."""
        if self.lanes == 0:
            return (f"not even 1 lane fits ({', '.join(RESOURCE_TITLES[k] for k in self.binding)} "
                    f"binds): try another board or --multipliers")
        binds = " and ".join(RESOURCE_TITLES[k] for k in self.binding) or "nothing"
        verb = "bind" if len(self.binding) > 1 else "binds"
        return (f"{self.lanes} lane{'s' if self.lanes != 1 else ''} fit, "
                f"{describe(self.multipliers, self.lanes, self.dsp_lanes)}; {binds} {verb}; "
                f"buffers {self.depth} entries deep; predicted {self.at_lanes.lut4:,} LUT4, {self.at_lanes.ff:,} FF, "
                f"{self.at_lanes.dsp} DSP, {self.at_lanes.ebr} EBR")

    def text(self) -> str:
        note = (f"LUT4 usable: {self.headroom:.0%} of the device as synthesis counts them (routability); "
                f"EBR: fixed + the two buffers (their depth shrinks as lanes widen an entry)")
        errors = [f"{k}: the EBR model is off by {c.ebr_error:+d} at 2 lanes" for k, c in self.costs.items()
                  if c.ebr_error]
        return "\n".join([self.table(), "", note, *errors, self.answer()]) + "\n"


def _split(multipliers: str, lanes: int, dsp_cap: int, costs: dict) -> int:
    """Lanes with their multipliers in DSPs among ``lanes`` (``"auto"``: as many as the DSPs allow)."""
    if multipliers == "dsp":
        return lanes
    if multipliers == "lut":
        return 0
    dsp = costs["dsp"]
    if dsp.per_lane.dsp == 0:
        return lanes
    return max(0, min(lanes, (dsp_cap - dsp.fixed.dsp) // dsp.per_lane.dsp))


def dsp_lanes_for(lanes: int, dsp_capacity: int, dsp_cost: LaneCost) -> int:
    """Of ``lanes`` lanes, how many an ``"auto"`` build puts in DSPs: as many as the DSPs hold."""
    return _split("auto", lanes, dsp_capacity, {"dsp": dsp_cost})


def _predict(multipliers: str, lanes: int, dsp_cap: int, costs: dict, buffers_ebr) -> Resources:
    """The board top of ``lanes`` lanes: an ``"auto"`` top's DSP lanes at the DSP lane's cost, the
    others at the LUT lane's, on the DSP build's fixed part."""
    if multipliers != "auto":
        return costs[multipliers].cost(lanes, buffers_ebr(lanes))
    k = _split(multipliers, lanes, dsp_cap, costs)
    dsp, lut = costs["dsp"], costs["lut"]
    return Resources(*(getattr(dsp.fixed, r) + k * getattr(dsp.per_lane, r) + (lanes - k) * getattr(lut.per_lane, r)
                       for r in RESOURCES[:3]), ebr=dsp.fixed.ebr + buffers_ebr(lanes))


def fit(costs: dict, capacity: Resources, buffers_ebr, multipliers: str = "dsp",
        headroom: float = LUT_HEADROOM, depth_at=None) -> Fit:
    """The lanes that fit ``capacity``: pure arithmetic on measured costs.

    Parameters
    ----------
    costs : dict
        ``{"dsp": LaneCost}``, ``{"lut": LaneCost}``, or both (``"auto"`` needs both).
    capacity : Resources
        The device's.
    buffers_ebr : callable
        lanes -> EBR blocks of the buffers at that many lanes (:func:`buffer_ebr` of its config).
    multipliers : str
        ``"dsp"``, ``"lut"`` or ``"auto"``.
    headroom : float
        The fraction of the device's LUT4s a fit may use, in (0, 1].
    depth_at : callable, optional
        lanes -> the buffers' depth (for the report).
    """
    check_multipliers(multipliers)
    needed = ["dsp", "lut"] if multipliers == "auto" else [multipliers]
    missing = [k for k in needed if k not in costs]
    if missing:
        raise ValueError(f"multipliers={multipliers!r} needs the {' and '.join(missing)} lane cost")
    if not 0 < headroom <= 1:
        raise ValueError(f"headroom must be in (0, 1], not {headroom!r}")
    usable = replace(capacity, lut4=int(capacity.lut4 * headroom))

    def predict(n: int) -> Resources:
        return _predict(multipliers, n, capacity.dsp, costs, buffers_ebr)

    by_resource = {}
    for key in RESOURCES:
        n = 0
        while n < LANE_LIMIT and getattr(predict(n + 1), key) <= getattr(usable, key):
            n += 1
        by_resource[key] = None if n == LANE_LIMIT else n
    limits = [n for n in by_resource.values() if n is not None]
    lanes = min(limits) if limits else LANE_LIMIT
    shown = max(lanes, 1)
    return Fit(multipliers, lanes, _split(multipliers, lanes, capacity.dsp, costs), by_resource, usable, capacity,
               headroom, {k: costs[k] for k in needed}, predict(shown),
               depth_at(shown) if depth_at else DEFAULT_DEPTH)


def fit_unit(arch: str, instr: str, board: BoardSpec | str = "ulx3s-85f", multipliers: str = "dsp", *,
             headroom: float = LUT_HEADROOM, yosys_version: str | None = None, capacity: Resources | None = None,
             **config_kw) -> Fit:
    """Measure (:func:`lane_cost`, both kinds for ``"auto"``) and :func:`fit` one unit on a board."""
    brd = find_board(board)
    check_multipliers(multipliers)
    kinds = ["dsp", "lut"] if multipliers == "auto" else [multipliers]
    costs = {k: lane_cost(arch, instr, brd, k, yosys_version=yosys_version, **config_kw) for k in kinds}
    config_kw.setdefault("clock_hz", brd.clock_hz)

    def config(n: int) -> BoardConfig:
        return board_config(arch, instr, n, **config_kw)
    return fit(costs, capacity or device_capacity(brd), lambda n: buffer_ebr(config(n), brd.family), multipliers,
               headroom, depth_at=lambda n: config(n).depth)


def parse_lanes(text) -> int | str:
    """``--lanes``: a positive integer or ``max``; ValueError saying so for anything else."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    elif isinstance(text, str) and text.strip().lower() == "max":
        return "max"
    else:
        try:
            value = int(str(text).strip())
        except ValueError:
            raise ValueError(f"lanes must be a positive integer or 'max', not {text!r}") from None
    if value < 1:
        raise ValueError(f"lanes must be a positive integer or 'max', not {text!r}")
    return value

