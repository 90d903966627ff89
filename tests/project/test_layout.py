"""The suite's layout (docs/verification.md, "Layout of tests/"): every test file sits in the folder
``tools/tests_layout.py`` names for it, none directly in ``tests/``, and basenames are unique
(pytest's default import mode imports each test file by its basename)."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("tests_layout", REPO / "tools" / "tests_layout.py")
layout = importlib.util.module_from_spec(spec)
spec.loader.exec_module(layout)


def test_no_test_file_directly_in_tests():
    top = [p.name for p in layout.misplaced()]
    assert not top, f"test files directly in tests/ (run python tools/tests_layout.py --apply): {top}"


def test_a_planted_top_level_file_is_caught(tmp_path):
    (tmp_path / "test_golden_planted.py").write_text("")
    (tmp_path / "conftest.py").write_text("")
    assert [p.name for p in layout.misplaced(tmp_path)] == ["test_golden_planted.py"]
    assert layout.folder_of("test_golden_planted.py") == "golden"
    assert layout.folder_of("test_nosuch_prefix.py") is None          # the script exits 2 naming it


def test_every_test_file_is_in_its_folder():
    wrong = [f"{p.relative_to(REPO)} (belongs in tests/{layout.folder_of(p.name)}/)"
             for p in sorted(layout.TESTS.glob("*/test_*.py")) if layout.folder_of(p.name) != p.parent.name]
    assert not wrong, f"test files outside their folder: {wrong}"


def test_helpers_are_not_tests_and_basenames_are_unique():
    files = [p for p in layout.TESTS.rglob("*.py") if "data" not in p.relative_to(layout.TESTS).parts]
    assert not [p for p in layout.TESTS.glob("support/test_*.py")], "tests/support holds helpers, not tests"
    twice = [name for name, n in Counter(p.name for p in files).items() if n > 1 and name != "__init__.py"]
    assert not twice, f"basenames used twice under tests/: {twice}"
