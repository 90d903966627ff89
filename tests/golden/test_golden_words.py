"""The words of the rules are typed: a rounding mode is spelled once, as :class:`golden.rules.Rounding`
(and the kernels' integer codes as :class:`golden.rules.RoundingCode`), and code elsewhere compares
against the members, never against a bare ``"RZ"``.  A planted fault shows the check would catch one.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import tokenize
from pathlib import Path

import golden
from golden.formats import FORMATS, NanKind
from golden.params import FIELDS, parse_params
from golden.rules import Overflow, OverflowCode, Rounding, RoundingCode, ZeroSign

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("golden", "hw", "cosim", "formal", "tb", "probe", "fpga", "campaign", "tools", "examples")
HOME = Path("golden/rules.py")       # where the words are spelled


def bare_modes(text: str) -> list[int]:
    """Lines of ``text`` (Python source) holding a string literal that is exactly a rounding mode: a
    comparison, a default, a dict key or an argument.  Docstrings and messages that mention a mode
    are longer strings, and pass."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.STRING:
            continue
        try:
            value = ast.literal_eval(tok.string)
        except (ValueError, SyntaxError):            # an f-string: a message, not a word
            continue
        if isinstance(value, str) and value in set(Rounding):
            found.append(tok.start[0])
    return found


def _offenders() -> list[str]:
    out = []
    for folder in SOURCES:
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO)
            if rel == HOME or "__pycache__" in rel.parts:
                continue
            out += [f"{rel}:{line}" for line in bare_modes(path.read_text())]
    return out


def test_no_bare_rounding_mode_outside_the_rules():
    assert _offenders() == [], "compare against golden.rules.Rounding members, not bare mode strings"


def test_the_check_catches_a_planted_comparison():
    planted = 'def f(p):\n    """Rounds RZ, as "RZ" says."""\n    return p.out_rounding == "RZ"\n'
    assert bare_modes(planted) == [3]
    assert bare_modes(planted.replace('== "RZ"', "== Rounding.RZ")) == []
    assert bare_modes('x = {"RNE": 1}\ny = f(mode=\'RD\')\n') == [1, 2]
    assert bare_modes('raise ValueError(f"mode {m!r}: not RZ")\n') == []


def test_kernel_codes_follow_the_rounding_words():
    from golden.kernels import spec
    assert [m.code for m in Rounding] == list(RoundingCode) and [int(c) for c in RoundingCode] == [0, 1, 2, 3]
    assert (spec.RZ, spec.RD, spec.RU, spec.RNE) == tuple(int(m.code) for m in Rounding)
    assert (spec.OVERFLOW_INF, spec.OVERFLOW_IEEE) == tuple(int(m.code) for m in Overflow) == tuple(OverflowCode)
    assert all(type(x) is int for x in (spec.RZ, spec.RNE, spec.OVERFLOW_INF, spec.NAN_NONE))      # numba globals
    assert spec._MODELLED | spec._UNMODELLED == set(FIELDS)


def test_params_fields_are_the_dataclass_and_hold_enum_members():
    assert list(FIELDS) == [f.name for f in dataclasses.fields(golden.Params)]
    p = golden.Params(base="FDA", F=24, e_zero=-133, out_rounding="RNE", zero_sign="ieee754")
    assert p.out_rounding is Rounding.RNE and p.zero_sign is ZeroSign.IEEE754 and p.overflow is Overflow.INF
    assert p == golden.Params(base="FDA", F=24, e_zero=-133, out_rounding=Rounding.RNE, zero_sign=ZeroSign.IEEE754)
    assert "out_rounding='RNE'" in repr(p)                # a word reprs as its word
    assert parse_params("out_rounding=RU")["out_rounding"] is Rounding.RU


def test_every_format_names_its_nan_kind():
    assert all(isinstance(f.nan, NanKind) for f in FORMATS.values())
