"""The words of the rules are typed: a rounding mode is spelled once, as :class:`golden.rules.Rounding`
(and the kernels' integer codes as :class:`golden.rules.RoundingCode`), and code elsewhere compares
against the members, never against a bare ``"RZ"``.  So are the provenance words
(:class:`golden.provenance.Basis`, :class:`golden.provenance.Standing`): :func:`bare_words` finds one
given to, stored in or compared with a ``basis`` or ``status``.  Planted faults show each check would
catch one.
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
from golden.provenance import BASES, STATUSES, Basis, Standing
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


def _words_in(node: ast.AST, words: set[str]) -> bool:
    """``node`` is one of ``words`` as a bare string, or a choice (``x if c else y``) or a collection of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in words
    if isinstance(node, ast.IfExp):
        return _words_in(node.body, words) or _words_in(node.orelse, words)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_words_in(e, words) for e in node.elts)
    return False


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def bare_words(text: str, words, attrs, calls) -> list[int]:
    """Lines of ``text`` (Python source) where one of ``words`` is a bare string where its enum's member
    belongs: compared with, assigned or defaulted to a name or attribute in ``attrs``, given to a call of
    one of ``calls`` (positionally, or as a keyword in ``attrs``), or a key of a dict keyed by the words
    alone.  The same word meaning something else (a JSON key, a message) passes."""
    words, attrs, calls = {str(w) for w in words}, set(attrs), set(calls)
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_name(x) in attrs for x in sides) and any(_words_in(x, words) for x in sides):
                found.add(node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and any(_name(t) in attrs for t in targets) and _words_in(node.value, words):
                found.add(node.lineno)
        elif isinstance(node, ast.Call) and _name(node.func) in calls:
            given = [*node.args, *(k.value for k in node.keywords if k.arg in attrs)]
            found.update(x.lineno for x in given if _words_in(x, words))
        elif isinstance(node, ast.Dict) and node.keys and all(k is not None and _words_in(k, words)
                                                              for k in node.keys):
            found.add(node.lineno)
    return sorted(found)


def offenders(words, attrs, calls, home: Path) -> list[str]:
    """``file:line`` of every :func:`bare_words` hit in the project's sources, but for ``home`` (the enum's)."""
    out = []
    for folder in SOURCES:
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO)
            if rel == home or "__pycache__" in rel.parts:
                continue
            out += [f"{rel}:{line}" for line in bare_words(path.read_text(), words, attrs, calls)]
    return out


# each word with its own attribute: a probe field's status "measured" is not a provenance basis
PROVENANCE_WORDS = ((Basis, ("basis",), ("Provenance",)), (Standing, ("status",), ("Provenance",)))


def bare_provenance_words(text: str) -> list[int]:
    return sorted({line for check in PROVENANCE_WORDS for line in bare_words(text, *check)})


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


def test_provenance_words_are_members_on_every_entry():
    from golden.catalog import CATALOG
    from golden.custom import custom
    assert BASES == tuple(Basis) and STATUSES == tuple(Standing)
    entries = list(CATALOG)
    assert len(entries) == 342
    for ins in entries:
        p = ins.provenance
        assert type(p.basis) is Basis and type(p.status) is Standing, (ins.arch, ins.name, p.basis, p.status)
    own = custom(16, "f16", "f32", golden.lookup("hopper", "HMMA.16816.F32").params)
    assert (own.provenance.basis, own.provenance.status) == (Basis.DESIGN, Standing.INFERRED)
    assert own.provenance.basis is Basis.DESIGN and repr(Standing.VERIFIED) == "'verified'"


def test_no_bare_provenance_word_outside_provenance():
    assert [x for check in PROVENANCE_WORDS for x in offenders(*check, home=Path("golden/provenance.py"))] == [], \
        "use golden.provenance.Basis / Standing members, not bare strings"


def test_the_provenance_check_catches_planted_words():
    planted = (
        'def assess(ins):\n'
        '    """A "verified" entry."""\n'
        '    basis = "measured" if ins.native else Basis.COMPILED\n'
        '    if p.status == "verified":\n'
        '        return Provenance("design", Standing.INFERRED)\n'
        '    ok = p.basis in ("live", "paper")\n'
        '    return {"inferred": {"algorithm": "FDA"}, "comparison": "matches"}\n')
    assert bare_provenance_words(planted) == [3, 4, 5, 6]
    fixed = (planted.replace('"measured" if', "Basis.MEASURED if").replace('== "verified"', "is Standing.VERIFIED")
             .replace('Provenance("design"', "Provenance(Basis.DESIGN")
             .replace('("live", "paper")', "(Basis.LIVE, Basis.PAPER)"))
    assert bare_provenance_words(fixed) == []       # a JSON key or a docstring that says the word passes
    assert bare_provenance_words('MARK = {"verified": "", "approximate": "~"}\n') == [1]
    assert bare_provenance_words('if f.status != "measured":\n    pass\n') == []     # a probe field's word
