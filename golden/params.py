"""What a :class:`golden.Params` field may hold, checked in one place, and the one grammar that writes a design.

Every layer that takes a design (``hw.dot_add_unit``, cosim's ``hw:params=...`` units, probe's and the
campaign's ``golden:...`` backends) goes through :func:`check_params` and :func:`parse_params`, so a value
golden accepts is exactly a value the RTL accepts, and a design is spelled the same everywhere::

    F=24,out_rounding=RNE,zero_sign=ieee754,nan_bits=0x7fc00000

Words that two modules exchange are the constants below, never display strings.
"""

from __future__ import annotations

from dataclasses import dataclass

from .formats import FORMATS
from .rules import EXACT, FLOOR_ROUNDINGS, OVERFLOWS, ROUNDING_MODES, SPECIALS, ZERO_SIGNS

__all__ = ["ROUNDING_MODES", "OVERFLOWS", "ZERO_SIGNS", "FLOOR_ROUNDINGS", "SPECIALS", "EXACT",
           "FIELDS", "check_params", "parse_params", "format_params", "ParamsSpecError"]


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
