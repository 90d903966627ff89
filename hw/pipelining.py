"""The pipelining knob: how many register stages the long arithmetic stages get.

Every datapath takes a :class:`Pipelining` (``None``: level 0, the original depth).  Each field
names one kind of circuit and is read by every stage of that kind, whichever algorithm holds
it; each stage computes its ``latency`` from it and asserts at elaboration that it built that
many registers.  Deeper settings compute exactly the same bits: the registers cut combinational
paths, nothing else changes (the initiation interval stays 1).

=============  =============================================================================
field          meaning (level 0 value)
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
merge          registers inside FDRDA's merges and floor (0..2: 1 between the shifts and the
               add, 2 also between the shift distances and the shifts)
groups         registers in GDFS's group scaling (0..2: 1 between the group sums' magnitudes
               and the scale multipliers, 2 also between the sums and their magnitudes)
fma            registers in each fused multiply-add's align/add stage (0..2: 1 between the
               alignment and the add, 2 also between the exponent difference and the shift)
f32            registers in each GPS binary32 adder (0..2: 1 between the alignment and the add,
               2 also between the exponent compare and the alignment shift)
=============  =============================================================================
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from amaranth import Signal, Value

__all__ = ["Pipelining", "MAX_LEVEL", "NORMALISE_CUTS", "as_pipelining", "Timeline"]

# the largest value each field takes (None: no limit); the smallest is 1 for the *levels* fields, 0 otherwise
_LIMITS = {"operands": 1, "multiply": 1, "max_levels": None, "align": 3, "compress": None, "final_add": 1,
           "normalise": 5, "merge": 2, "groups": 2, "fma": 2, "f32": 2}
_LEVELS_FIELDS = ("max_levels",)
# the normaliser's cut points in the order they pay off: after the rounder's shift amount (leading-one
# detector, exponent arithmetic), after its shift and sticky bit, after the magnitude (the two's
# complement's negation, or an adder's sum) before the rounder, after the rounder's increment, after
# the rounder's leading-one detector
NORMALISE_CUTS = ("amount", "shift", "magnitude", "increment", "lod")   # logic levels per register: at least 1


@dataclass(frozen=True)
class Pipelining:
    """Register stages of the long arithmetic stages (see the module docstring for each field).

    Parameters
    ----------
    operands, multiply, max_levels, align, compress, final_add, normalise, merge, groups, fma, f32 : int
        One field per kind of circuit; the defaults are level 0.
    """

    operands: int = 0
    multiply: int = 0
    max_levels: int = 3
    align: int = 0
    compress: int = 0
    final_add: int = 0
    normalise: int = 0
    merge: int = 0
    groups: int = 0
    fma: int = 0
    f32: int = 0

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            low = 1 if f.name in _LEVELS_FIELDS else 0
            high = _LIMITS[f.name]
            if not isinstance(value, int) or isinstance(value, bool) or value < low or \
                    (high is not None and value > high):
                valid = f"{low}..{high}" if high is not None else f"{low} or more"
                raise ValueError(f"pipelining field {f.name} must be {valid}, not {value!r}")

    @classmethod
    def level(cls, n: int) -> "Pipelining":
        """The preset of level ``n`` (0 .. :data:`MAX_LEVEL`); level 0 is the original depth."""
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_LEVEL:
            raise ValueError(f"pipelining level must be 0..{MAX_LEVEL}, not {n!r}")
        return _LEVELS[n]

    @classmethod
    def parse(cls, spec) -> "Pipelining":
        """``"2"``, ``"2,align=2"``, ``"normalise=3"`` (a level, then fields that override it), or an
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
            if name not in _LIMITS or not eq:
                raise ValueError(f"pipelining spec {spec!r}: {item!r} is not LEVEL (0..{MAX_LEVEL}, first) or "
                                 f"FIELD=N with FIELD one of {', '.join(_LIMITS)}")
            fields[name] = _int(value, name, spec)
        return dataclasses.replace(base, **fields)

    @property
    def normalise_cuts(self) -> tuple:
        """The normaliser's cut points in use: the first ``normalise`` of :data:`NORMALISE_CUTS`."""
        return NORMALISE_CUTS[:self.normalise]

    @property
    def rounder_cuts(self) -> tuple:
        """Those of :attr:`normalise_cuts` inside the shared rounder (:data:`hw.round.CUTS`)."""
        return tuple(c for c in self.normalise_cuts if c != "magnitude")

    def __str__(self) -> str:
        """The shortest spec that parses back: the nearest level, then the fields that differ."""
        best = None
        for n, preset in enumerate(_LEVELS):
            diff = [f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self)
                    if getattr(self, f.name) != getattr(preset, f.name)]
            if best is None or len(diff) < len(best):
                best = [str(n), *diff]
        return ",".join(best)


def _int(text: str, what: str, spec: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"pipelining spec {spec!r}: {what} must be a whole number, not {text!r}") from None


_LEVELS = (
    Pipelining(),
    Pipelining(operands=1, multiply=1, max_levels=2, align=1, final_add=1, normalise=2, merge=1, groups=1, fma=1,
               f32=1),
    Pipelining(operands=1, multiply=1, max_levels=2, align=1, compress=3, final_add=1, normalise=3, merge=1,
               groups=1, fma=1, f32=1),
    Pipelining(operands=1, multiply=1, max_levels=1, align=3, compress=2, final_add=1, normalise=5, merge=2,
               groups=2, fma=2, f32=2),
)
MAX_LEVEL = len(_LEVELS) - 1


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
