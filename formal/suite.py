"""Every property of ``python -m formal``: the stage proofs at the catalog's parameters, then the
stream protocol of the unit shell and the tensor core."""

from __future__ import annotations

from golden.rules import Overflow, Rounding

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
    # every mode and rule the rounder offers, beyond those the catalog uses, per result format at a
    # width the catalog uses (f64 at 56 bits: its catalog width, 163, takes a minute a proof)
    names = {p.name for p in props}
    narrowest: dict = {}
    for e in cases["round"]:
        q = e["params"]
        narrowest[q["fmt"]] = min(narrowest.get(q["fmt"], q["mag_bits"]), q["mag_bits"])
    rules = [(mode, overflow, False, False) for mode in Rounding for overflow in (Overflow.IEEE, Overflow.INF)]
    rules += [(Rounding.RNE, Overflow.IEEE, True, False), (Rounding.RNE, Overflow.IEEE, False, True),
              (Rounding.RNE, Overflow.IEEE, True, True)]
    for fmt, width in sorted(narrowest.items()):
        for mode, overflow, flush, pz in rules:
            cuts = pl.rounder_cuts if pipelining else ()
            prop = rounder_property(fmt, min(width, 56), mode, overflow=overflow, flush=flush, positive_zero=pz,
                                    cuts=cuts)
            if prop.name not in names:
                props.append(prop)
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
