"""What a :class:`golden.Params` field may hold, checked in one place, and the one grammar that writes a design.

Every layer that takes a design (``hw.dot_add_unit``, cosim's ``hw:params=...`` units, probe's and the
campaign's ``golden:...`` backends) goes through :func:`check_params` and :func:`parse_params`, so a value
golden accepts is exactly a value the RTL accepts, and a design is spelled the same everywhere::

    F=24,out_rounding=RNE,zero_sign=ieee754,nan_bits=0x7fc00000

Words that two modules exchange are the constants below, never display strings.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, replace
from enum import Enum
from types import SimpleNamespace, UnionType
from typing import Literal, NewType

from .descriptors import ALGORITHMS
from .formats import FORMATS, Format, NanKind, get_format
from .rules import (
    EXACT,
    FLOOR_ROUNDINGS,
    OVERFLOWS,
    ROUNDING_MODES,
    SPECIALS,
    ZERO_SIGNS,
    FloorRounding,
    Overflow,
    Rounding,
    Specials,
    ZeroSign,
)

__all__ = ["ROUNDING_MODES", "OVERFLOWS", "ZERO_SIGNS", "FLOOR_ROUNDINGS", "SPECIALS", "EXACT",
           "Params", "AlgorithmName", "FormatName", "FIELDS", "check_params", "check_unused", "check_params_for",
           "parse_params", "format_params",
           "ParamsSpecError", "EXACT_BITS", "E_ZERO_MAX"]


class ParamsSpecError(ValueError):
    """A params spec or value that is not valid (the message names the field, the value and what is valid)."""


AlgorithmName = NewType("AlgorithmName", str)     # a name of golden.descriptors.ALGORITHMS
FormatName = NewType("FormatName", str)           # a name of golden.formats.FORMATS


@dataclass(frozen=True)
class Params:
    """Algorithm parameters of one dot-add design.

    Parameters
    ----------
    base : str
        One of ``SFMA, GPS, FDA, GDFS, FDRDA, GFDRDA``.
    pass_size : int, optional
        Products per fused pass (L).  ``K > L`` runs a chain of ``K / L``
        passes, each result rounded to the output format and fed back as c.
    F : int, optional
        Fraction bits kept after alignment (FDA, GDFS, FDRDA, GFDRDA).
    e_zero : int, optional
        Exponent a zero product / zero c takes in the maximum (FDA, GDFS).
    out_rounding : str
        Rounding of the final normalisation: ``RZ`` (NVIDIA f32), ``RNE``.
    out_frac_bits : int, optional
        Fraction bits of the result if narrower than the output format
        (13 for the "E8M13" result of Ada QMMA and Hopper QGMMA).
    overflow : str
        ``"inf"``: any result of magnitude ``>= 2**(emax+1)`` is infinity;
        ``"ieee"``: the rounding direction decides.
    group : int, optional
        GPS pairwise group size G, or the GDFS product group (16).
    dot_floor_bits, c_floor_bits, final_floor_bits : int
        FDRDA/GFDRDA: the dot part is floored to ``dot_floor_bits`` fraction
        bits relative to ``2**e_max``, c to ``c_floor_bits``, and their
        normalised sum to ``final_floor_bits`` before RNE (docs/spec.md §4.4).
    merge_floor_bits : int
        GFDRDA: fraction bits kept when the even and odd sums are merged.
    floor_rounding : str
        FDRDA/GFDRDA: how those alignments drop bits: ``"RD"`` (floor, what
        CDNA3 does) or ``"RZ"`` (toward zero: the paper's hypothetical variant
        of section VI-C, one change away).
    c_drop : int, optional
        GFDRDA: c becomes zero when ``e_c < e_max - c_drop``.
    specials : str
        FDRDA/GFDRDA: CDNA3's two disputed special-value rules, switched together
        (:data:`DISPUTED_RULES`, :func:`disputed_rules`).  ``"paper"`` (the default,
        what this project follows): the paper's step order (IV-F steps 1-3), so an
        input infinity wins over a product that overflows to the other infinity, and
        a NaN or infinite c is never dropped as a small c.  ``"later_model"``: the
        authors' later model (microsoft/MMA-Sim ``src/mmasim/mmasim/arithmetic/fdpa.py``,
        ``tr_fdpa``/``gtr_fdpa``): the input and overflow infinities meet in one IEEE
        sum (NaN), and GFDRDA's small-c test also drops a NaN or infinite c (its
        exponent read as -1), which can make the result finite.
    product_overflow : bool
        Products of magnitude ``>= 2**128`` become infinities (AMD).
    zero_sign : str
        ``"positive"``: every zero result is +0 (NVIDIA, docs/spec.md §4.3);
        ``"ieee"``: a negative value that rounds to zero gives -0.
    flush_subnormals : bool
        GPS: subnormal inputs flushed to +0, subnormal products and sums to
        signed zero.
    operand_format : str, optional
        A compiled path (not a native instruction): a and b are first converted,
        exactly, to this format (``"f16"``: fp8 lowered onto HMMA), and the
        passes run on the converted operands (FDA).
    pass_interleave : int, optional
        A compiled path: pass ``j`` of the chain takes the runs of this many
        consecutive products whose run number is ``j`` modulo the number of
        passes (the layout of register fragments: with K = 32, L = 16 and 2,
        pass 0 takes ``k % 4 < 2``); None: pass ``j`` takes products
        ``j*L .. j*L + L - 1`` (FDA).
    c_last : bool
        A compiled path: the chain starts from +0 and c is added after its last
        pass by one IEEE add, rounded to nearest even in the output format
        (f16 or f32), as a separate add instruction does (FDA).
    nan_bits : int, optional
        The bit pattern of every NaN result (e.g. ``0x7fc00000``, the IEEE default quiet NaN of
        binary32).  None (the default): each algorithm's own NaN (the canonical NaN of
        :func:`golden.formats.special_bits` for the fused algorithms, ``0x7fc00000`` for GPS,
        the IEEE operations' NaN for SFMA).  A pattern that is not a NaN of the output format is
        refused when the design runs.
    fma_rounding : str
        SFMA: the rounding of each fused multiply-add (``RNE``, the IEEE default, ``RZ``, ``RD``,
        ``RU``).  Binary32 results; binary64 SFMA is RNE.  (``c_last``'s add rounds to nearest even.)

    F may also be ``"exact"`` (:data:`golden.params.EXACT`, FDA): no alignment window, the exact sum of
    the products and c, rounded once by ``out_rounding``.  ``zero_sign="ieee754"`` follows IEEE 754
    for zero sums in every algorithm (see :data:`golden.params.ZERO_SIGNS`).  Every field is checked
    on its own by :func:`golden.params.check_params` (one ValueError naming the field, the value and
    what is valid).  Where the Params meets an instruction (:func:`golden.params.check_params_for`,
    called by every ``golden.Instruction`` and ``golden.Datapath``), a field the algorithm does not
    read must keep its default, and the ranges that depend on the formats are checked
    (``out_frac_bits`` up to the result's fraction bits, ``F`` and the floor bits within exact sums,
    ``pass_size`` a divisor of K, ``nan_bits`` a NaN of the result, ...).
    """

    base: AlgorithmName
    pass_size: int | None = None
    F: int | Literal["exact"] | None = None
    e_zero: int | None = None
    out_rounding: Rounding = Rounding.RZ
    out_frac_bits: int | None = None
    overflow: Overflow = Overflow.INF
    group: int | None = None
    dot_floor_bits: int = 32
    c_floor_bits: int = 24
    final_floor_bits: int = 31
    merge_floor_bits: int = 24
    floor_rounding: FloorRounding = FloorRounding.RD
    c_drop: int | None = None
    product_overflow: bool = False
    flush_subnormals: bool = False
    zero_sign: ZeroSign = ZeroSign.POSITIVE
    specials: Specials = Specials.PAPER
    operand_format: FormatName | None = None
    pass_interleave: int | None = None
    c_last: bool = False
    nan_bits: int | None = None
    fma_rounding: Rounding = Rounding.RNE

    def __post_init__(self):
        if self.base not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {self.base!r}; valid: {', '.join(ALGORITHMS)}")
        check_params(self)                   # every field on its own: type, range, word
        for name, spec in FIELDS.items():    # a word given as text becomes its rules enum member
            value = getattr(self, name)
            if spec.enum is not None and value is not None and value != spec.extra:
                object.__setattr__(self, name, spec.enum(value))
        alg = ALGORITHMS[self.base]
        for name, what in alg.requires.items():      # what the algorithm needs, in its descriptor's words
            if getattr(self, name) is None:
                raise ValueError(f"{self.base} needs {what}")
        if self.F == EXACT and not alg.exact_F:
            raise ValueError(f"F='exact' (the exact sum, rounded once) is an FDA design, not {self.base}")
        lowered = self.operand_format is not None or self.pass_interleave is not None or self.c_last
        if lowered and not alg.lowering:
            raise ValueError(f"operand_format, pass_interleave and c_last describe a compiled FDA path, "
                             f"not {self.base}")
        if self.pass_interleave is not None and (self.pass_size is None or self.pass_interleave < 1
                                                 or self.pass_size % self.pass_interleave):
            raise ValueError(f"pass_interleave must divide the pass size L; got {self.pass_interleave} with "
                             f"L={self.pass_size}")
        if self.operand_format is not None:
            get_format(self.operand_format)          # an unknown format is named here
        if alg.check is not None:
            alg.check(self)

    @property
    def fields_read(self) -> tuple[str, ...]:
        """The fields this design's algorithm reads (the others cannot change a result)."""
        return ALGORITHMS[self.base].fields_read

    @property
    def exact_nan(self) -> bool:
        """Whether a NaN result's bits are specified: the canonical NaN of NVIDIA's fused
        algorithms (FDA, CoFDA, GDFS), or every NaN result's ``nan_bits``; elsewhere the payload is not
        modelled and any NaN is right."""
        return ALGORITHMS[self.base].exact_nan or self.nan_bits is not None

    def algorithm_name(self, k: int) -> str:
        """``"CoFDA"`` for a chain, else the base name."""
        chained = self.pass_size is not None and k > self.pass_size
        return ("Co" if chained else "") + self.base

    def with_(self, **changes) -> Params:
        """A copy with some parameters changed (a custom design in one call)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class Field:
    """What one field holds: ``kind`` is ``int``, ``bool``, ``word``, ``format`` or ``algorithm`` (a name of
    :data:`golden.descriptors.ALGORITHMS`); ``words`` for a word field (the words of ``enum``, its
    :mod:`golden.rules` enum); ``low`` the smallest int; ``none`` whether None is allowed; ``extra`` a
    word an int field takes."""

    kind: str
    words: tuple = ()
    low: int | None = None
    none: bool = False
    extra: str | None = None
    enum: type[Enum] | None = None

    def valid(self) -> str:
        """What is valid, in words."""
        if self.kind in ("word", "algorithm"):
            text = "one of " + ", ".join(_words(self))
        elif self.kind == "bool":
            text = "true or false"
        elif self.kind == "format":
            text = "a format name (" + ", ".join(sorted(FORMATS)) + ")"
        else:
            text = "an integer" + (f" >= {self.low}" if self.low is not None else "")
        text += f" or {self.extra!r}" if self.extra else ""
        return text + (" or None" if self.none else "")


def _words(spec: Field) -> tuple:
    """The words a word field takes (an algorithm field: every described algorithm)."""
    if spec.kind == "algorithm":
        return tuple(ALGORITHMS)
    return spec.words


# The one thing a field's type does not say: the smallest value of an int field (none: any int)
_LOW = {"pass_size": 1, "F": 0, "out_frac_bits": 1, "group": 1, "dot_floor_bits": 0, "c_floor_bits": 0,
        "final_floor_bits": 0, "merge_floor_bits": 0, "c_drop": 0, "pass_interleave": 1, "nan_bits": 0}
_KINDS = {AlgorithmName: "algorithm", FormatName: "format", int: "int", bool: "bool"}


def _field(name: str, hint) -> Field:
    """A :class:`Field` read off one annotation of :class:`Params` (``int | Literal["exact"] | None``,
    ``Rounding``, ``FormatName | None``, ...)."""
    parts = typing.get_args(hint) if isinstance(hint, UnionType) or typing.get_origin(hint) is typing.Union \
        else (hint,)
    none = type(None) in parts
    extra = next((typing.get_args(t)[0] for t in parts if typing.get_origin(t) is Literal), None)
    (kind,) = [t for t in parts if t is not type(None) and typing.get_origin(t) is not Literal]
    if isinstance(kind, type) and issubclass(kind, Enum):
        return Field("word", tuple(m.value for m in kind), none=none, enum=kind)
    return Field(_KINDS[kind], low=_LOW.get(name), none=none, extra=extra)


_HINTS = typing.get_type_hints(Params)
FIELDS = {f.name: _field(f.name, _HINTS[f.name]) for f in dataclasses.fields(Params)}
"""Every :class:`Params` field, in order, and what it may hold: read off the dataclass."""


def _bad(name: str, value, spec: Field) -> ParamsSpecError:
    return ParamsSpecError(f"Params.{name}={value!r} is not valid; valid: {spec.valid()}")


def check_value(name: str, value) -> None:
    """Raise :class:`ParamsSpecError` unless ``value`` is valid for field ``name`` on its own."""
    spec = FIELDS.get(name)
    if spec is None:
        raise ParamsSpecError(f"{name!r} is not a golden.Params field; valid: {', '.join(FIELDS)}")
    if value is None:
        if not spec.none:
            raise _bad(name, value, spec)
        return
    if spec.extra is not None and value == spec.extra:
        return
    if spec.kind == "bool":
        ok = isinstance(value, bool) or (type(value).__name__ == "bool_")
    elif spec.kind == "int":
        # bool is an int to Python, and 2.5 would act as 2 in a shift: both are refused
        ok = isinstance(value, int) and not isinstance(value, bool) and (spec.low is None or value >= spec.low)
    elif spec.kind in ("word", "algorithm"):
        ok = isinstance(value, str) and value in _words(spec)
    else:
        ok = isinstance(value, str) and value in FORMATS
    if not ok:
        raise _bad(name, value, spec)


def check_params(p) -> None:
    """Every field of ``p`` (a :class:`golden.Params`) checked on its own: type, range, word."""
    for name in FIELDS:
        check_value(name, getattr(p, name))


def check_unused(p, alg, where="this instruction") -> None:
    """Refuse a field that ``p``'s algorithm ``alg`` (a :class:`golden.descriptors.Algorithm`) never reads
    when it is not its default: it would change nothing, silently (``fma_rounding="RZ"`` on FDA).  A
    value the descriptor lists in ``describes`` is what the algorithm does anyway (GPS flushes
    subnormals, SFMA signs zeros as IEEE does) and is taken."""
    for f in dataclasses.fields(p):
        name = f.name
        if name == "base" or name in alg.fields_read or name not in FIELDS:
            continue
        value = getattr(p, name)
        if value == f.default or value in alg.describes.get(name, ()):
            continue
        readers = [n for n, a in ALGORITHMS.items() if name in a.fields_read]
        describers = [n for n, a in ALGORITHMS.items() if name in a.describes]
        who = f"only {', '.join(readers)} read{'s' if len(readers) == 1 else ''} it" if readers else \
            "no algorithm reads it" + (f"; it describes {', '.join(describers)}" if describers else "")
        described = [repr(v) for v in alg.describes.get(name, ())]
        also = f" (or {' or '.join(described)}, what {alg.name} does anyway)" if described else ""
        raise ParamsSpecError(f"Params.{name}={value!r} is not valid for {where}: {alg.name} does not read it "
                              f"({who}), so it would change nothing; valid: the default {f.default!r}{also}")


# --------------------------------------------------------------------------- a Params in an instruction

EXACT_BITS = 53          # golden sums aligned terms in float64: exact up to 2**53
E_ZERO_MAX = 1023        # |e_zero| bound: the RTL's 12-bit signed exponents hold every difference it forms


class _Where:
    """What a message names (the instruction, or the datapath), written only when a message is."""

    def __init__(self, what, name):
        self.what, self.name = what, name

    def __str__(self) -> str:
        what = self.what
        if self.name:
            return self.name
        arch, ins = getattr(what, "arch", None), getattr(what, "name", None)
        if arch is not None:
            return f"{arch} {ins}" if ins else f"this {arch} instruction"
        try:
            return f"the datapath {what}"
        except (AttributeError, TypeError):      # a datapath without operand formats (a union's key)
            return f"a {what.params.base} datapath with K={what.k}"


def _fmt(f):
    """A Format (an Instruction holds names, a Datapath Formats), or None."""
    if f is None or isinstance(f, Format):
        return f
    return FORMATS.get(f) or get_format(f)


def _in(name: str, value, where: str, valid: str) -> ParamsSpecError:
    return ParamsSpecError(f"Params.{name}={value!r} is not valid for {where}; valid: {valid}")


def _exact_limit(int_bits: int, terms: int) -> int:
    """The largest number of fraction bits whose fixed-point sums of ``terms`` terms below
    ``2**int_bits`` stay exact in float64 (golden.algorithms._check_exact, up front)."""
    return EXACT_BITS - int_bits - int(terms).bit_length()


def _holds(fo, f) -> bool:
    """Whether every value (and special) of format ``f`` is exact in format ``fo``."""
    return (f.man_bits <= fo.man_bits and f.emax <= fo.emax and f.emin - f.man_bits >= fo.emin - fo.man_bits
            and (not f.inf or fo.inf) and (f.nan == NanKind.NONE or fo.nan != NanKind.NONE) and (f.signed <= fo.signed))


def check_params_for(p, what, name: str | None = None) -> None:
    """Every field of ``p`` (a :class:`golden.Params`) checked against the instruction it runs in:
    the fields its algorithm does not read keep their defaults (:func:`check_unused`), the others lie
    in the ranges the formats and K allow.

    ``what``: a :class:`golden.Instruction` or a :class:`golden.Datapath` (its formats, K, block
    scales).  The one place where a Params meets its formats: :class:`golden.Instruction` and
    :class:`golden.Datapath` call it when they are made, so :func:`golden.dot_add`, :func:`golden.gemm`,
    custom instructions, the probe's and campaigns' ``golden:FIELD=VALUE`` backends and the RTL
    generator (hw builds from a Datapath) all accept exactly the same values.  Raises
    :class:`ParamsSpecError`, one line naming the field, the value, the instruction and the valid range.
    """
    alg = ALGORITHMS.get(getattr(p, "base", None))
    if alg is None:
        return
    where = _Where(what, name)
    check_unused(p, alg, where)      # a field the algorithm never reads would change nothing: refused
    fa, fb, fc, fd = (_fmt(getattr(what, f"{x}_format", None)) for x in "abcd")
    fs = _fmt(getattr(what, "scale_format", None))
    block = getattr(what, "block_size", None)
    k = getattr(what, "k", None)
    reads = set(alg.fields_read)
    L = p.pass_size if p.pass_size is not None and alg.chained else k
    # the pass: products per fused pass, a divisor of K (and a whole number of scale blocks)
    if "pass_size" in reads and p.pass_size is not None and k:
        if k % p.pass_size or (fs is not None and block and p.pass_size % block):
            divisors = [d for d in range(1, k + 1) if k % d == 0]
        if k % p.pass_size:
            raise ParamsSpecError(f"Params.pass_size={p.pass_size} is not valid for {where}: K={k} is not a multiple "
                                  f"of the pass size; valid: a divisor of K={k} ({', '.join(map(str, divisors))}) "
                                  "or None (one pass)")
        if fs is not None and block and p.pass_size % block:
            raise _in("pass_size", p.pass_size, where, f"a multiple of the block size {block} that divides "
                      f"K={k} ({', '.join(str(d) for d in divisors if d % block == 0)})")
    # the formats each algorithm computes in (its descriptor's check)
    if alg.check_formats is not None:
        alg.check_formats(p, SimpleNamespace(where=where, fa=fa, fb=fb, fc=fc, fd=fd, fs=fs, block=block, k=k, L=L))
    fused = "F" in reads
    fo = _fmt(p.operand_format) if "operand_format" in reads else None
    if fo is not None:
        for f in (fa, fb):
            if f is not None and not _holds(fo, f):
                raise _in("operand_format", p.operand_format, where,
                          f"a format that holds every {f.name} value exactly (f16 for fp8), or None")
    if fused and fa is not None and fb is not None:
        xa, xb = fo or fa, fo or fb
        if xa.man_bits + xb.man_bits + 2 > EXACT_BITS:
            raise ParamsSpecError(f"{where}: {p.base} forms exact products, and {xa.name} x {xb.name} products "
                                  f"need {xa.man_bits + xb.man_bits + 2} bits; golden is exact up to {EXACT_BITS}")
    if "c_last" in reads and p.c_last and fd is not None and (fc.name != fd.name or fd.name not in ("f16", "f32")):
        raise _in("c_last", p.c_last, where, f"False: c_last adds c in the result format, f16 or f32 (c and d "
                  f"the same); here c is {fc.name}, d {fd.name}")
    # the result
    if "out_frac_bits" in reads and p.out_frac_bits is not None and fd is not None \
            and not 1 <= p.out_frac_bits <= fd.man_bits:
        raise _in("out_frac_bits", p.out_frac_bits, where, f"1..{fd.man_bits} (fraction bits of the {fd.name} "
                  f"result) or None (all {fd.man_bits})")
    if p.nan_bits is not None and fd is not None:
        _check_nan_bits(fd, p.nan_bits, where)
    if "fma_rounding" in reads and p.fma_rounding != Rounding.RNE and fd is not None and fd.name != "f32":
        raise _in("fma_rounding", p.fma_rounding, where, f"'RNE': SFMA rounds {fd.name} to nearest even only; "
                  "other roundings are a binary32 design")
    # the window: F fraction bits, exact in float64; e_zero within the exponents the datapath holds
    if fused and L and isinstance(p.F, int):
        top = _exact_limit(*alg.terms(p, L))
        if p.F > top:
            exact = " or 'exact'" if alg.exact_F else ""
            raise _in("F", p.F, where, f"0..{top}{exact} (sums of {L}-product passes at F fraction bits are exact "
                      f"up to {EXACT_BITS} bits in golden)")
    if "e_zero" in reads and p.e_zero is not None:
        low = max(-E_ZERO_MAX, p.F - E_ZERO_MAX) if isinstance(p.F, int) else -E_ZERO_MAX
        if not low <= p.e_zero <= E_ZERO_MAX:
            raise _in("e_zero", p.e_zero, where, f"{low}..{E_ZERO_MAX} (an exponent; below {low} the aligned "
                      f"window 2**(F - e_zero) leaves float64)")
    # the round-down merge of FDRDA / GFDRDA (docs/spec.md §4.4): integers exact in float64
    if "dot_floor_bits" in reads and L:
        top = _exact_limit(2, L + 1)
        if "merge_floor_bits" in reads and p.merge_floor_bits > top:
            raise _in("merge_floor_bits", p.merge_floor_bits, where, f"0..{top} (merged sums of {L} products "
                      f"exact in float64)")
        if p.dot_floor_bits > top:
            raise _in("dot_floor_bits", p.dot_floor_bits, where, f"{p.c_floor_bits}..{top} (at least "
                      f"c_floor_bits={p.c_floor_bits}; sums of {L} products exact in float64)")
        if p.c_floor_bits > p.dot_floor_bits:
            raise _in("c_floor_bits", p.c_floor_bits, where, f"0..{p.dot_floor_bits} (c is added at "
                      f"dot_floor_bits={p.dot_floor_bits} fraction bits: it cannot keep more)")
        if p.final_floor_bits > EXACT_BITS - 2:
            raise _in("final_floor_bits", p.final_floor_bits, where, f"0..{EXACT_BITS - 2} (a significand exact "
                      "in float64)")


def _check_nan_bits(fd, bits: int, where: str) -> None:
    import numpy as np

    from .formats import NAN, decode
    if fd.nan == NanKind.NONE or bits >= 1 << fd.storage_bits or \
            decode(fd, np.asarray([bits], np.uint64)).cls[0] != NAN:
        width = f"a {fd.storage_bits}-bit NaN pattern of {fd.name}" if fd.nan != NanKind.NONE else \
            f"None ({fd.name} has no NaN)"
        raise ParamsSpecError(f"Params.nan_bits={bits:#x} is not a NaN of the output format {fd.name} "
                              f"({where}); valid: {width} or None")


def _typed(name: str, text: str):
    """The value ``text`` stands for in field ``name`` (checked)."""
    spec = FIELDS.get(name)
    if spec is None:
        raise ParamsSpecError(f"{name!r} is not a golden.Params field; valid: {', '.join(FIELDS)}")
    low = text.strip().lower()
    if low == "none" and spec.none:
        return None
    if spec.extra is not None and low == spec.extra:
        return spec.extra
    if spec.kind == "bool":
        if low in ("true", "yes", "on", "1"):
            return True
        if low in ("false", "no", "off", "0"):
            return False
        raise _bad(name, text, spec)
    if spec.kind == "int":
        try:
            value = int(text.strip(), 0)          # 24, -133, 0x7fc00000
        except ValueError:
            raise _bad(name, text, spec) from None
    else:
        value = text.strip()
    check_value(name, value)
    return spec.enum(value) if spec.enum is not None else value


def parse_params(spec: str, *, legacy_colon: bool = False) -> dict:
    """``FIELD=VALUE,FIELD=VALUE,...`` -> ``{field: typed value}`` (each value checked for its field).

    ``legacy_colon``: also take the old ``FIELD:VALUE`` items of cosim's unit specs.  Raises
    :class:`ParamsSpecError` with one line naming the item, the field and what is valid.
    """
    if not isinstance(spec, str):
        raise ParamsSpecError(f"a params spec is a string FIELD=VALUE,..., not {spec!r}")
    out: dict = {}
    for item in spec.split(","):
        if not item.strip():
            continue
        sep = "=" if "=" in item or not legacy_colon else ":"
        name, found, value = item.partition(sep)
        name = name.strip()
        if not found or not name or not value.strip():
            raise ParamsSpecError(f"params item {item!r} is not FIELD=VALUE (e.g. F=24,out_rounding=RNE)")
        if name in out:
            raise ParamsSpecError(f"params field {name!r} given twice in {spec!r}")
        out[name] = _typed(name, value)
    return out


def format_params(changes: dict) -> str:
    """The spec :func:`parse_params` reads back as ``changes`` (a NaN pattern in hex, as it is written)."""
    def word(k, v):
        if v is None:
            return "none"
        if isinstance(v, bool):
            return str(v).lower()
        return f"{v:#x}" if k == "nan_bits" else str(v)
    return ",".join(f"{k}={word(k, v)}" for k, v in changes.items())
