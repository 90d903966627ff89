"""The probe's part of each algorithm descriptor: how the probe recognises the algorithm from what the
probes measured, and which of its fields it infers.

:func:`probe.infer.probe` runs the probes every algorithm shares (independence, precision, the
summation tree, rounding, special values), gathers them in an :class:`Evidence`, then asks each
algorithm's :class:`ProbePart` in ``rank`` order whether the evidence is its own; the first that
says yes infers its fields.  A new algorithm is one more part here (docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import golden
from golden.descriptors import Part, parts, register
from golden.params import EXACT
from golden.rules import Rounding

from . import probes as P
from .probes.specials import Case, Outcome
from .verify import FieldStatus, verification_vectors, verify

__all__ = ["Field", "Evidence", "ProbePart", "PROBE_PARTS", "recognise"]


@dataclass
class Field:
    """One inferred field: its value and how it was seen (a :class:`probe.verify.FieldStatus`)."""

    value: object = None
    status: FieldStatus = FieldStatus.UNOBSERVABLE
    note: str = ""
    upper: object = None                  # for status "bound": the largest value consistent with what was seen

    def to_json(self):
        d = {"value": self.value, "status": self.status}
        if self.note:
            d["note"] = self.note
        if self.upper is not None:
            d["at_most"] = self.upper
        return d


@dataclass
class Evidence:
    """What the shared probes measured on one instruction, and the facts gathered so far.

    Members
    -------
    rig : probe.rig.Rig
    facts : dict
        The report's facts; a part adds what its own probes find.
    st : dict
        The summation structure (:func:`probe.probes.structure`).
    p_out : int
        The result's fraction bits.
    mode : str or None
        The result rounding (Tables I, II).
    """

    rig: object
    facts: dict
    st: dict
    p_out: int
    mode: str | None
    found: dict = field(default_factory=dict)      # what a recogniser measured, for its own infer

    @property
    def ins(self):
        return self.rig.ins

    @property
    def K(self) -> int:
        return self.rig.K

    @property
    def per(self) -> dict:
        """Bits kept after the radix point, per summand (products 0..K-1, c at K)."""
        return self.facts.get("precision", {}).get("per_summand", {})

    def rnd(self, k):
        """The alignment rounding of summand ``k`` (``RZ``, ``RD``, ...), None when not seen."""
        v = self.per.get(k)
        return P.rounding_name(v.get("rounding")) if v and v.get("rounding") else None


@dataclass(frozen=True)
class ProbePart:
    """How the probe tells one algorithm: ``recognise(ev) -> bool`` (tried in ``rank`` order, lowest
    first; the first yes wins) and ``infer(ev, fields)``, which adds its :class:`Field` s."""

    structure: str            # the summation structure (III-C) it shows: sequential, pairwise-groups, fused
    recognise: Callable
    infer: Callable
    rank: int


def recognise(ev: Evidence) -> str | None:
    """The algorithm whose part recognises the evidence first, None when none does."""
    for name, part in sorted(parts(Part.PROBE).items(), key=lambda item: item[1].rank):
        if part.recognise(ev):
            return name
    return None


# --------------------------------------------------------------------------- SFMA and GPS

CANDIDATE_ROWS = 512


def _chain_of_fmas(rig, st: dict, p_out: int) -> bool:
    """Fused passes of one product each that a chain of fused multiply-adds (SFMA) with the last
    operation's rounding reproduces: the tree probe takes such a chain for passes of one product when
    its fma does not round to nearest.  Decided by running the candidate (a check, not a guess)."""
    if st["kind"] != "fused" or rig.K < 2 or st.get("pass_size") != 1:
        return False
    mode = P.rounding_name(P.final_rounding(rig, p_out))
    try:
        candidate = golden.Params(base="SFMA", fma_rounding=mode)
        return verify(rig, candidate, verification_vectors(rig, CANDIDATE_ROWS))["mismatches"] == 0
    except ValueError:                  # not a rounding mode, or not a binary32 design
        return False


def _sfma_fields(ev: Evidence, fields: dict) -> None:
    op = ev.facts["output_precision"]
    fm = P.rounding_name(P.final_rounding(ev.rig, ev.p_out)) if op["exact"] else None
    fields["fma_rounding"] = Field(fm, FieldStatus.MEASURED if fm else FieldStatus.UNOBSERVABLE,
                                   "the rounding of the last fma, c = 4 plus one product (Tables I, II)"
                                   if fm else "the result's precision is not resolved (binary64)")


def _gps_fields(ev: Evidence, fields: dict) -> None:
    fields["group"] = Field(ev.st["group"], FieldStatus.MEASURED, "pairwise group size (III-C tree)")


# --------------------------------------------------------------------------- the fused algorithms

EXACT_SCAN = 48          # a precision scan that loses no bit this far below the largest term: the exact sum


def _never_lost(summand: dict) -> bool:
    """The precision scan of a summand ran out before any bit was lost, far below the largest term."""
    return bool(summand) and not summand.get("exact") and summand.get("bits", 0) >= EXACT_SCAN


def _fused(ev: Evidence) -> bool:
    return ev.st["kind"] == "fused"


def _round_down_c(ev: Evidence) -> bool:
    """c aligned with round-down: AMD's merges (FDRDA, GFDRDA)."""
    return _fused(ev) and ev.rnd(ev.K) == Rounding.RD


def _pass_size(ev: Evidence, fields: dict) -> None:
    st = ev.st
    fields["pass_size"] = Field(st["pass_size"], FieldStatus.MEASURED if st["pass_size"] else FieldStatus.UNOBSERVABLE,
                                f"products per fused pass ({st['source']})")


def _fda_F(ev: Evidence, fda: bool) -> Field:
    """F as the precision scans show it: product #0's bits, else (FDA) c's, else (FDA) the exact sum."""
    p0, pc = ev.per.get(0, {}), ev.per.get(ev.K, {})
    if p0.get("exact"):
        return Field(p0["bits"], FieldStatus.MEASURED, "bits kept after alignment, product #0")
    if fda and pc.get("exact"):
        return Field(pc["bits"], FieldStatus.MEASURED, "bits kept after alignment, measured on c (products too narrow)")
    if fda and _never_lost(p0) and _never_lost(pc):
        return Field(EXACT, FieldStatus.MEASURED, f"no bit lost as far as the scans reach ({p0['bits']} places "
                                        f"below product #0, {pc['bits']} below c): the exact sum "
                                        "(checked by the verification)")
    return Field(None, FieldStatus.UNOBSERVABLE, "no summand's precision resolved")


def _numeric_F(f: Field):
    """The F a further probe can use (a number; None for the exact sum or an unresolved F)."""
    return f.value if f.value != EXACT else None


def _zero_exponent(ev: Evidence, fields: dict, F) -> None:
    """e_zero (FDA, GDFS): the exponent zero summands take in the maximum."""
    if F is None:
        return
    sv0 = ev.facts["special"]
    if all(sv0.get(x) in (Outcome.KEPT, None) for x in (Case.SUBNORMAL_A, Case.SUBNORMAL_B)):
        ev.rig.normal_only = False          # subnormal operands behave: use them for tiny products
    ez = P.zero_exponent(ev.rig, F, ev.mode, ev.p_out)
    ev.facts["e_zero"] = ez
    if ez.get("observed"):
        fields["e_zero"] = Field(ez["e_zero"], FieldStatus.MEASURED, "exponent of zero summands in the maximum")
    elif ez.get("bound") is not None:
        fields["e_zero"] = Field(None, FieldStatus.BOUND, ez.get("reason", ""), upper=ez["bound"])
    else:
        fields["e_zero"] = Field(None, FieldStatus.UNOBSERVABLE, ez.get("reason", ""))


def _fda_fields(ev: Evidence, fields: dict) -> None:
    _pass_size(ev, fields)
    fields["F"] = _fda_F(ev, True)
    _zero_exponent(ev, fields, _numeric_F(fields["F"]))


def _block_aligned(ev: Evidence) -> bool:
    """GDFS: a fused, scaled datapath whose terms align to the block-scale exponent (c), not the
    products' maximum (the alignment-reference probe, run once F is known)."""
    if not _fused(ev) or ev.rnd(ev.K) == Rounding.RD or not ev.ins.scale_format:
        return False
    F = _numeric_F(_fda_F(ev, True))
    if F is None:
        return False
    ar = P.alignment_reference(ev.rig, F)
    ev.facts["alignment_reference"] = ar
    return bool(ar.get("observed") and ar["reference"].startswith("block"))


def _gdfs_fields(ev: Evidence, fields: dict) -> None:
    _pass_size(ev, fields)
    F = ev.facts["alignment_reference"]["bits"]["1x1"]
    fields["F"] = Field(F, FieldStatus.MEASURED, "bits kept after alignment to the block-scale exponent (c)")
    _zero_exponent(ev, fields, F)
    fields["group"] = Field(None, FieldStatus.UNOBSERVABLE,
                            "exact group sums are indistinguishable from alignment for e2m1 products")


def _grouped_merge(ev: Evidence) -> bool:
    """GFDRDA: the odd set merged with round-down, product #0 truncated (even and odd sets)."""
    return _round_down_c(ev) and ev.K >= 2 and ev.rnd(1) == Rounding.RD and ev.rnd(0) == Rounding.RZ


def _fdrda_fields(ev: Evidence, fields: dict, grouped: bool = False) -> None:
    _pass_size(ev, fields)
    fields["F"] = _fda_F(ev, False)
    per, K = ev.per, ev.K
    pc = per.get(K, {})
    if pc.get("exact"):
        fields["c_floor_bits"] = Field(pc["bits"], FieldStatus.MEASURED, "c rounded down at this many bits")
    if grouped and per.get(1, {}).get("exact"):
        fields["merge_floor_bits"] = Field(per[1]["bits"], FieldStatus.MEASURED,
                                           "odd set merged (RD) at this many bits")
    fields["floor_rounding"] = Field(ev.rnd(K), FieldStatus.MEASURED,
                                     "how the alignments drop bits: c's alignment rounding (III-E)")
    cd = P.c_drop(ev.rig)
    ev.facts["c_drop"] = cd
    fields["c_drop"] = Field(cd.get("c_drop"), FieldStatus.MEASURED, "c dropped when e_c < e_max - c_drop")
    ds = P.disputed_specials(ev.rig, cd.get("c_drop"))
    ev.facts["disputed"] = ds
    fields["specials"] = Field(ds["specials"], FieldStatus.MEASURED, "CDNA3's disputed special values: " + "; ".join(
        f"{k} {v}" for k, v in ds["rules"].items())) if ds["specials"] else \
        Field(None, FieldStatus.UNOBSERVABLE, "neither disputed rule is reachable with these formats "
                                    "(f16/fp8 products never overflow; only bf8 x bf8 reaches the c drop)")
    for nm in ("dot_floor_bits", "final_floor_bits"):
        fields[nm] = Field(None, FieldStatus.UNOBSERVABLE, "not probed: the floors below the result's precision")


# the probe's part of each algorithm descriptor, tried in rank order
PROBE_PARTS = {
    "SFMA": ProbePart("sequential", lambda ev: ev.st["kind"] == "sequential" or
                      _chain_of_fmas(ev.rig, ev.st, ev.p_out), _sfma_fields, 0),
    "GPS": ProbePart("pairwise-groups", lambda ev: ev.st["kind"] == "pairwise-groups", _gps_fields, 1),
    "GFDRDA": ProbePart("fused", _grouped_merge, lambda ev, f: _fdrda_fields(ev, f, grouped=True), 2),
    "FDRDA": ProbePart("fused", _round_down_c, _fdrda_fields, 3),
    "GDFS": ProbePart("fused", _block_aligned, _gdfs_fields, 4),
    "FDA": ProbePart("fused", _fused, _fda_fields, 5),
}
for _name, _part in PROBE_PARTS.items():
    register(_name, Part.PROBE, _part)
