"""What a :class:`golden.Params` field may hold, checked in one place, and the one grammar that writes a design.

Every layer that takes a design (``hw.dot_add_unit``, cosim's ``hw:params=...`` units, probe's and the
campaign's ``golden:...`` backends) goes through :func:`check_params` and :func:`parse_params`, so a value
golden accepts is exactly a value the RTL accepts, and a design is spelled the same everywhere::

    F=24,out_rounding=RNE,zero_sign=ieee754,nan_bits=0x7fc00000

Words that two modules exchange are the constants below, never display strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from .formats import FORMATS, Format, get_format
from .rules import EXACT, FLOOR_ROUNDINGS, OVERFLOWS, ROUNDING_MODES, SPECIALS, ZERO_SIGNS

__all__ = ["ROUNDING_MODES", "OVERFLOWS", "ZERO_SIGNS", "FLOOR_ROUNDINGS", "SPECIALS", "EXACT",
           "FIELDS", "check_params", "check_unused", "check_params_for", "parse_params", "format_params",
           "ParamsSpecError", "EXACT_BITS", "E_ZERO_MAX"]


class ParamsSpecError(ValueError):
    """A params spec or value that is not valid (the message names the field, the value and what is valid)."""


@dataclass(frozen=True)
class Field:
    """What one field holds: ``kind`` is ``int``, ``bool``, ``word``, ``format`` or ``algorithm`` (a name of
    :data:`golden.descriptors.ALGORITHMS`); ``words`` for a word field; ``low`` the smallest int; ``none``
    whether None is allowed; ``extra`` a word an int field takes."""

    kind: str
    words: tuple = ()
    low: int | None = None
    none: bool = False
    extra: str | None = None

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
        from .descriptors import ALGORITHMS
        return tuple(ALGORITHMS)
    return spec.words


FIELDS = {
    "base": Field("algorithm"),
    "pass_size": Field("int", low=1, none=True),
    "F": Field("int", low=0, none=True, extra=EXACT),
    "e_zero": Field("int", none=True),
    "out_rounding": Field("word", ROUNDING_MODES),
    "out_frac_bits": Field("int", low=1, none=True),
    "overflow": Field("word", OVERFLOWS),
    "group": Field("int", low=1, none=True),
    "dot_floor_bits": Field("int", low=0),
    "c_floor_bits": Field("int", low=0),
    "final_floor_bits": Field("int", low=0),
    "merge_floor_bits": Field("int", low=0),
    "floor_rounding": Field("word", FLOOR_ROUNDINGS),
    "c_drop": Field("int", low=0, none=True),
    "product_overflow": Field("bool"),
    "flush_subnormals": Field("bool"),
    "zero_sign": Field("word", ZERO_SIGNS),
    "specials": Field("word", SPECIALS),
    "operand_format": Field("format", none=True),
    "pass_interleave": Field("int", low=1, none=True),
    "c_last": Field("bool"),
    "nan_bits": Field("int", low=0, none=True),
    "fma_rounding": Field("word", ROUNDING_MODES),
}


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
    from dataclasses import fields
    from .descriptors import ALGORITHMS
    for f in fields(p):
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
            and (not f.inf or fo.inf) and (f.nan == "none" or fo.nan != "none") and (f.signed <= fo.signed))


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
    from .descriptors import ALGORITHMS
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
    if "fma_rounding" in reads and p.fma_rounding != "RNE" and fd is not None and fd.name != "f32":
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
    if fd.nan == "none" or bits >= 1 << fd.storage_bits or \
            decode(fd, np.asarray([bits], np.uint64)).cls[0] != NAN:
        width = f"a {fd.storage_bits}-bit NaN pattern of {fd.name}" if fd.nan != "none" else \
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
    return value


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
