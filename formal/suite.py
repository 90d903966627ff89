"""Every property of ``python -m formal``: the stage proofs at the catalog's parameters, then the
stream protocol of the unit shell and the tensor core."""

from __future__ import annotations

from .align import align_property
from .bitscan import bitscan_property
from .catalog import stage_cases
from .compress import WHOLE_MAX, compress_property
from .decode import decode_property
from .maxexp import maxexp_property
from .multiply import multiply_property
from .normalise import normalise_property
from .round import rounder_property

__all__ = ["all_properties", "STAGES"]

STAGES = ("round", "bitscan", "normalise", "align", "compress", "maxexp", "multiply", "decode", "protocol")


def _units(entry):
    return tuple(tuple(u.split(" ", 1)) for u in entry["units"])


def stage_properties(refresh: bool = False, pipelining: int = 0) -> list:
    """The stage proofs, one per distinct parameter set the catalog uses (per width), with the
    register stages of ``pipelining`` (a :class:`hw.Pipelining` level; the catalog's units are
    collected at level 0, and every level computes the same bits)."""
    from hw.pipelining import Pipelining
    pl = Pipelining.level(pipelining)
    level = pipelining or None                  # level 0: the stages' own default, named as such
    cases = stage_cases(refresh)
    props = []
    scans: dict = {}
    for e in cases["round"]:
        p = dict(e["params"])
        p["cuts"] = tuple(p["cuts"]) if not pipelining else pl.rounder_cuts
        props.append(rounder_property(**p, units=_units(e)))
        scans.setdefault((p["mag_bits"], f"lod.{p['lod']}"), set()).update(e["units"])
        if p["sticky"] == "trailing_zeros":
            scans.setdefault((p["mag_bits"], "tz"), set()).update(e["units"])
    for (width, kind), units in sorted(scans.items()):
        props.append(bitscan_property(width, kind, units=_units({"units": sorted(units)})))
    for e in cases["normalise"]:
        props.append(normalise_property(**e["params"], pipelining=level, units=_units(e)))
    for e in cases["align"]:
        props.append(align_property(**e["params"], pipelining=level, units=_units(e)))
    for e in cases["compress"]:
        props.append(compress_property(**e["params"], pipelining=level, units=_units(e)))
        if e["params"]["n"] <= WHOLE_MAX:
            props.append(compress_property(**e["params"], pipelining=level, whole=True, units=_units(e)))
    for e in cases["maxexp"]:
        params = dict(e["params"], levels_per_stage=pl.max_levels) if pipelining else e["params"]
        props.append(maxexp_property(**params, units=_units(e)))
    for e in cases["multiply"]:
        props.append(multiply_property(**e["params"], units=_units(e)))
    for e in cases["decode"]:
        if len(e["params"]["members"]) > 1:
            props.append(decode_property(e["params"]["members"], units=_units(e)))
    return props


def all_properties(refresh: bool = False, pipelining: int = 0) -> list:
    from .protocol import protocol_properties
    return stage_properties(refresh, pipelining) + protocol_properties()
