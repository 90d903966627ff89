"""The pipelining knob: how many registers each kind of arithmetic stage gets.

Every datapath takes a :class:`Pipelining` (``None``: level 0, the original depth): one register
placement per stage kind, read by every stage of that kind whichever algorithm holds it.  The kinds
are one typed table, :data:`STAGE_KINDS` (as cvfpu's ``fpnew_pkg`` pipeline configuration is a
table of registers per operation group): each row names the kind, the range its placement takes
and the placement of each preset level.  Each stage computes its ``latency`` from its placement and
asserts at elaboration that it built that many registers.  Deeper settings compute exactly the same
bits: the registers cut combinational paths, nothing else changes (the initiation interval stays 1).
An algorithm's descriptor names the kinds its datapath reads (``golden.descriptors.Part.PIPELINING``,
registered by :mod:`hw.unit`); a new kind of circuit is one more row.

=============  =============================================================================
kind           meaning (level 0 placement)
=============  =============================================================================
operands       a register on a unit's (or tensor core's) operands before anything else (0): what
               feeds the unit (the FPGA's block RAM) ends at a register
multiply       registers between the operand decoders and the multipliers (0): a multiplier
               with registered inputs and outputs (an ECP5 DSP's own registers)
max_levels     comparator levels between registers in the exponent-max trees (3)
align          registers inside the alignment shifters (0): 1 cuts between the shift and the
               two's complement, 2 also splits the shift in two, 3 also cuts between the shift
               distance and the shift
compress       3:2 compressor levels between registers in the carry-save trees (0: all in
               one cycle)
final_add      a register between the carry-save tree and its carry-propagate adder (0 or 1)
normalise      cut points in the normalisers and the shared rounder (0..5, the first of
               :data:`NORMALISE_CUTS`: after the shift amount, after the shift, after the
               magnitude, after the increment, after the leading-one detector)
merge          registers inside FDRDA's merges and floor (0..3: 1 between the shifts and the
               add, 2 also between the shift distances and the shifts, 3 also splits the
               floor's shift in two; no preset level takes 3: the CDNA3 CoFDRDA top's override)
groups         registers in GDFS's group scaling (0..2: 1 between the group sums' magnitudes
               and the scale multipliers, 2 also between the sums and their magnitudes)
fma            registers in each fused multiply-add's align/add stage (0..3: 1 between the
               alignment and the add, 2 also between the exponent difference and the shift, 3
               as 2 with the product's placement in the window chosen after that register; no
               preset level takes 3: the CDNA3 SFMA top's override)
f32            registers in each GPS binary32 adder (0..2: 1 between the alignment and the add,
               2 also between the exponent compare and the alignment shift)
overflow       a register between FDRDA's multipliers and their overflow test (0..1; no preset
               level takes it: the CDNA3 CoFDRDA board top's override, with merge=3)
partials       a register between the fused multiply-add's partial products (18-bit pieces of
               each significand, one DSP block each) and their sum (0..1; no preset level takes it)
decode         a register on each fused multiply-add's a and b before their decoders (0..1; no
               preset level takes it): an operand that waited in a delay line arrives at a
               register beside the multiplier's decode and normalise
=============  =============================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from amaranth import Signal, Value

__all__ = ["Pipelining", "MAX_LEVEL", "NORMALISE_CUTS", "StageKind", "Placement", "STAGE_KINDS", "as_pipelining",
           "Timeline"]


class StageKind(StrEnum):
    """A kind of arithmetic stage with register placements of its own (the module docstring says each)."""

    OPERANDS = "operands"
    MULTIPLY = "multiply"
    MAX_LEVELS = "max_levels"
    ALIGN = "align"
    COMPRESS = "compress"
    FINAL_ADD = "final_add"
    NORMALISE = "normalise"
    MERGE = "merge"
    GROUPS = "groups"
    FMA = "fma"
    F32 = "f32"
    OVERFLOW = "overflow"
    PARTIALS = "partials"
    DECODE = "decode"


@dataclass(frozen=True)
class Placement:
    """One row of :data:`STAGE_KINDS`: the placements a stage kind takes (``low`` .. ``high``, None: no
    limit; a *levels* kind counts logic levels per register, so its smallest is 1) and its placement at
    each preset level 0 .. :data:`MAX_LEVEL`."""

    kind: StageKind
    low: int
    high: int | None
    levels: tuple


# the typed table: one row per stage kind, its range and its four presets (levels 0, 1, 2, 3)
STAGE_KINDS = {row.kind: row for row in (
    Placement(StageKind.OPERANDS, 0, 1, (0, 1, 1, 1)),
    Placement(StageKind.MULTIPLY, 0, 1, (0, 1, 1, 1)),
    Placement(StageKind.MAX_LEVELS, 1, None, (3, 2, 2, 1)),
    Placement(StageKind.ALIGN, 0, 3, (0, 1, 1, 3)),
    Placement(StageKind.COMPRESS, 0, None, (0, 0, 3, 2)),
    Placement(StageKind.FINAL_ADD, 0, 1, (0, 1, 1, 1)),
    Placement(StageKind.NORMALISE, 0, 5, (0, 2, 3, 5)),
    Placement(StageKind.MERGE, 0, 3, (0, 1, 1, 2)),
    Placement(StageKind.GROUPS, 0, 2, (0, 1, 1, 2)),
    Placement(StageKind.FMA, 0, 3, (0, 1, 1, 2)),
    Placement(StageKind.F32, 0, 2, (0, 1, 1, 2)),
    Placement(StageKind.OVERFLOW, 0, 1, (0, 0, 0, 0)),
    Placement(StageKind.PARTIALS, 0, 1, (0, 0, 0, 0)),
    Placement(StageKind.DECODE, 0, 1, (0, 0, 0, 0)),
)}
MAX_LEVEL = 3
# the normaliser's cut points in the order they pay off: after the rounder's shift amount (leading-one
# detector, exponent arithmetic), after its shift and sticky bit, after the magnitude (the two's
# complement's negation, or an adder's sum) before the rounder, after the rounder's increment, after
# the rounder's leading-one detector
NORMALISE_CUTS = ("amount", "shift", "magnitude", "increment", "lod")   # logic levels per register: at least 1


def _check(name: str, value) -> int:
    row = STAGE_KINDS[StageKind(name)]
    if not isinstance(value, int) or isinstance(value, bool) or value < row.low or \
            (row.high is not None and value > row.high):
        valid = f"{row.low}..{row.high}" if row.high is not None else f"{row.low} or more"
        raise ValueError(f"pipelining field {name} must be {valid}, not {value!r}")
    return value


def _kind_names() -> str:
    return ", ".join(STAGE_KINDS)


class Pipelining:
    """Register placements of the arithmetic stages, one per :class:`StageKind`.

    ``Pipelining(align=2, normalise=3)``: the kinds not named take their level-0 placement.  Each
    placement reads as an attribute (``p.align``) or by kind (``p[StageKind.ALIGN]``).
    """

    __slots__ = ("_regs",)

    def __init__(self, **placements):
        regs = {kind: row.levels[0] for kind, row in STAGE_KINDS.items()}
        for name, value in placements.items():
            if name not in STAGE_KINDS:
                raise ValueError(f"pipelining has no stage kind {name!r}; valid: {_kind_names()}")
            regs[StageKind(name)] = _check(name, value)
        object.__setattr__(self, "_regs", tuple(regs.values()))

    def __getattr__(self, name):
        if name in STAGE_KINDS:
            return self[name]
        raise AttributeError(f"Pipelining has no attribute {name!r} (stage kinds: {_kind_names()})")

    def __getitem__(self, kind) -> int:
        return self._regs[list(STAGE_KINDS).index(StageKind(kind))]

    def __setattr__(self, name, value):
        raise AttributeError("a Pipelining is immutable: use replace()")

    @property
    def placements(self) -> dict:
        """``{StageKind: registers}``, in table order."""
        return dict(zip(STAGE_KINDS, self._regs))

    def replace(self, **changes) -> Pipelining:
        """A copy with some placements changed."""
        return Pipelining(**{**{k.value: v for k, v in self.placements.items()}, **changes})

    def __eq__(self, other) -> bool:
        return isinstance(other, Pipelining) and self._regs == other._regs

    def __hash__(self) -> int:
        return hash(self._regs)

    def __reduce__(self):
        return _restore, (tuple((k.value, v) for k, v in self.placements.items()),)

    def __repr__(self) -> str:
        return "Pipelining(" + ", ".join(f"{k.value}={v}" for k, v in self.placements.items()) + ")"

    @classmethod
    def level(cls, n: int) -> Pipelining:
        """The preset of level ``n`` (0 .. :data:`MAX_LEVEL`); level 0 is the original depth."""
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_LEVEL:
            raise ValueError(f"pipelining level must be 0..{MAX_LEVEL}, not {n!r}")
        return _LEVELS[n]

    @classmethod
    def parse(cls, spec) -> Pipelining:
        """``"2"``, ``"2,align=2"``, ``"normalise=3"`` (a level, then placements that override it), or an
        int; a :class:`Pipelining` is returned as it is.  ``ValueError`` names what is valid."""
        if isinstance(spec, Pipelining):
            return spec
        if isinstance(spec, int) and not isinstance(spec, bool):
            return cls.level(spec)
        if not isinstance(spec, str):
            raise ValueError(f"pipelining spec must be a string such as '2' or '2,align=2', not {spec!r}")
        base, fields = cls.level(0), {}
        for n, item in enumerate(p.strip() for p in spec.split(",")):
            if not item:
                continue
            name, eq, value = (s.strip() for s in item.partition("="))
            if not eq and n == 0:
                base = cls.level(_int(name, "level", spec))
                continue
            if name not in STAGE_KINDS or not eq:
                raise ValueError(f"pipelining spec {spec!r}: {item!r} is not LEVEL (0..{MAX_LEVEL}, first) or "
                                 f"FIELD=N with FIELD one of {_kind_names()}")
            fields[name] = _int(value, name, spec)
        return base.replace(**fields)

    @property
    def normalise_cuts(self) -> tuple:
        """The normaliser's cut points in use: the first ``normalise`` of :data:`NORMALISE_CUTS`."""
        return NORMALISE_CUTS[:self.normalise]

    @property
    def rounder_cuts(self) -> tuple:
        """Those of :attr:`normalise_cuts` inside the shared rounder (:data:`hw.round.CUTS`)."""
        return tuple(c for c in self.normalise_cuts if c != "magnitude")

    def __str__(self) -> str:
        """The shortest spec that parses back: the nearest level, then the placements that differ."""
        best = None
        for n, preset in enumerate(_LEVELS):
            diff = [f"{k.value}={v}" for (k, v), w in zip(self.placements.items(), preset._regs) if v != w]
            if best is None or len(diff) < len(best):
                best = [str(n), *diff]
        return ",".join(best)


def _int(text: str, what: str, spec: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"pipelining spec {spec!r}: {what} must be a whole number, not {text!r}") from None


def _restore(items) -> Pipelining:
    """Unpickling (a Pipelining crosses to worker processes)."""
    return Pipelining(**{StageKind(k).value: v for k, v in items})


_LEVELS = tuple(Pipelining(**{k.value: row.levels[n] for k, row in STAGE_KINDS.items()}) for n in range(MAX_LEVEL + 1))


def as_pipelining(p) -> Pipelining:
    """``None`` (level 0), an int level, a spec string or a :class:`Pipelining`."""
    return Pipelining.level(0) if p is None else Pipelining.parse(p)


class Timeline:
    """The cycle each value of one stage's ``elaborate`` is valid at, and the registers that bring
    earlier values to the present.

    A stage with optional cut points computes step by step: :meth:`let` names a value computed
    now (from values of now), :meth:`cut` (when enabled) puts a register stage after everything
    computed so far, and ``tl(x)`` is ``x`` as of now (delayed through registers shared between
    uses, when ``x`` was computed before the last cuts).  Anything not made by :meth:`let` (the
    stage's ports, constants) is of cycle 0.  :attr:`cycle` counts the cuts made, which the stage
    compares with its declared latency.
    """

    def __init__(self, m, prefix: str = ""):
        self.m, self.prefix, self.cycle = m, prefix, 0
        # id(value) -> [value, cycle computed, [value delayed 1, 2, ... cycles]]; the entry keeps
        # the value alive, so its id is never reused for another
        self._values = {}

    def let(self, expr, shape=None, name: str = "v"):
        """A signal equal to ``expr``, computed now; ``shape`` defaults to the expression's."""
        s = Signal(Value.cast(expr).shape() if shape is None else shape, name=f"{self.prefix}{name}")
        self.m.d.comb += s.eq(expr)
        self._values[id(s)] = [s, self.cycle, []]
        return s

    def __call__(self, value):
        """``value`` as of now."""
        entry = self._values.setdefault(id(value), [value, 0, []])
        v, born, regs = entry
        lag = self.cycle - born
        if lag < 0:
            raise ValueError("a value is used before the cycle it is computed in")
        while len(regs) < lag:
            prev = regs[-1] if regs else v
            r = Signal(prev.shape(), name=f"{self.prefix}{getattr(v, 'name', 'v')}_d{len(regs) + 1}")
            self.m.d.sync += r.eq(prev)
            regs.append(r)
        return regs[lag - 1] if lag else v

    def cut(self, enabled=True) -> None:
        """A register stage here, when ``enabled``."""
        if enabled:
            self.cycle += 1
