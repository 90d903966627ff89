"""golden.params: every Params field checked in one place, and the one grammar that writes a design."""

from __future__ import annotations

import dataclasses

import pytest

import golden
from golden.params import FIELDS, ParamsSpecError, format_params, parse_params

FDA = golden.lookup("hopper", "HMMA.16816.F32").params

BAD = [("pass_size", -1), ("pass_size", 0), ("pass_size", 2.0), ("F", 2.5), ("F", True), ("F", -3), ("F", "24"),
       ("overflow", "bogus"), ("zero_sign", "maybe"), ("out_rounding", "rne"), ("floor_rounding", "RNE"),
       ("specials", "later"), ("product_overflow", 1), ("c_last", "yes"), ("group", 0), ("e_zero", 1.5),
       ("out_frac_bits", 0), ("nan_bits", -1), ("fma_rounding", "RN"), ("operand_format", "f17"),
       ("dot_floor_bits", None), ("c_drop", -1), ("pass_interleave", 0)]


def test_the_table_covers_every_field():
    assert set(FIELDS) == {f.name for f in dataclasses.fields(golden.Params)}


@pytest.mark.parametrize("field,value", BAD, ids=lambda x: repr(x))
def test_a_bad_value_is_one_error_naming_field_value_and_valid(field, value):
    with pytest.raises(ValueError) as e:
        FDA.with_(**{field: value})
    text = str(e.value)
    assert f"Params.{field}={value!r}" in text and "valid:" in text and "\n" not in text


def test_the_issue_25_values_are_refused():
    """pass_size=-1 gave 0x0 where the entry gives 6.0; F=2.5 acted as 2; any other word picked a rule."""
    for change in ({"pass_size": -1}, {"pass_size": 0}, {"F": 2.5}, {"F": True}, {"overflow": "bogus"},
                   {"zero_sign": "maybe"}):
        with pytest.raises(ValueError, match="is not valid; valid:"):
            FDA.with_(**change)


def test_hw_takes_golden_words():
    """The RTL's rounder takes exactly golden's rounding modes and overflow rules (one set of constants)."""
    from golden.params import OVERFLOWS, ROUNDING_MODES
    from hw import round as hw_round
    assert hw_round.MODES is ROUNDING_MODES and hw_round.OVERFLOWS is OVERFLOWS


def test_parse_params_types_each_value_by_its_field():
    spec = "F=exact,pass_size=none,out_rounding=RNE,zero_sign=ieee754,nan_bits=0x7fc00000,c_last=false,e_zero=-133"
    got = parse_params(spec)
    assert got == {"F": "exact", "pass_size": None, "out_rounding": "RNE", "zero_sign": "ieee754",
                   "nan_bits": 0x7FC00000, "c_last": False, "e_zero": -133}
    assert parse_params(format_params(got)) == got
    assert parse_params("F:24,specials:later_model", legacy_colon=True) == {"F": 24, "specials": "later_model"}


@pytest.mark.parametrize("spec,words", [
    ("F=abc", "Params.F='abc'"), ("F=-3", "Params.F=-3"), ("bogus=1", "'bogus' is not a golden.Params field"),
    ("F", "not FIELD=VALUE"), ("F=24,F=25", "given twice"), ("overflow=bogus", "one of inf, ieee"),
    ("F:24", "not FIELD=VALUE"), ("product_overflow=2", "true or false")])
def test_parse_params_refuses_with_one_line(spec, words):
    with pytest.raises(ParamsSpecError) as e:
        parse_params(spec)
    assert words in str(e.value) and "\n" not in str(e.value)
