"""tools/rtl_hashes.py, the check that a refactor left every unit's RTL unchanged: it hashes the same
RTL alike and tells a changed register placement (a planted change), and ignores source lines."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import golden
from hw import dot_add_unit

TOOL = Path(__file__).resolve().parents[1] / "tools" / "rtl_hashes.py"
_SPEC = importlib.util.spec_from_file_location("rtl_hashes", TOOL)
rtl_hashes = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(rtl_hashes)

INS = golden.lookup("volta", "HMMA.884.F16.F16")        # a small unit: K = 4


def test_the_same_rtl_hashes_alike_and_a_moved_register_does_not():
    same = rtl_hashes.rtl_hash(dot_add_unit(INS)), rtl_hashes.rtl_hash(dot_add_unit(INS, pipelining=0))
    assert same[0] == same[1]
    assert rtl_hashes.rtl_hash(dot_add_unit(INS, pipelining="normalise=1")) != same[0]      # planted


def test_source_locations_are_not_hashed():
    assert rtl_hashes._SRC.sub("", 'cell $add $1\n  attribute \\src "/a/b.py:12"\n  end\n') == "cell $add $1\n  end\n"
