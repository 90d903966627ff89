"""The specification lives in the repository, and everything cites it there.

Every file of a checkout is read: none may name a path outside the repository (a sibling
``shared/`` folder, a spec file that is not shipped, a folder on a developer's machine), and
every ``docs/spec.md §N`` citation must name a section that ``docs/spec.md`` has.  Both checks
are shown to catch a planted citation.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = "docs/spec.md"

# a path outside the repository (each pattern is split so that this file does not match itself)
OUTSIDE = re.compile("|".join([
    r"\bISA" + r"\.md\b",                       # the spec's old name, outside the checkout
    r"shared" + r"/spec", r"\.\./" + r"shared",  # the sibling folder of shared inputs
    r"/wo" + r"rk/", r"/ho" + r"me/\w", r"/Us" + r"ers/\w",  # a developer's machine
]))
SECTION_HEADING = re.compile(r"^#{2,3} (\d+(?:\.\d+)?)\.? ")
CITED_SECTION = re.compile(r"§(\d+(?:\.\d+)?)")
SKIP_DIRS = {".git", ".venv", "build", "__pycache__", ".pytest_cache", ".hypothesis"}


def repo_files(root: Path) -> list[Path]:
    """The files of the checkout at ``root``: git's list where there is one, else a walk."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True)
        names = [n for n in out.stdout.decode().split("\0") if n]
        if names:
            return [root / n for n in names if (root / n).is_file()]
    except (OSError, subprocess.CalledProcessError):
        pass
    return sorted(p for p in root.rglob("*")
                  if p.is_file() and not SKIP_DIRS.intersection(p.relative_to(root).parts))


def text_of(path: Path) -> str | None:
    """The file's text, or None for a binary file."""
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return None


def spec_sections(spec_text: str) -> set[str]:
    """The section numbers of the specification's headings (``"1"``, ``"4.3"``, ...)."""
    return {m.group(1) for line in spec_text.splitlines() if (m := SECTION_HEADING.match(line))}


def offences(root: Path) -> list[str]:
    """``path:line: why`` for every outside path and every citation of a missing section."""
    sections = spec_sections((root / SPEC).read_text())
    found = []
    for path in repo_files(root):
        text = text_of(path)
        if text is None:
            continue
        rel = path.relative_to(root).as_posix()
        for n, line in enumerate(text.splitlines(), 1):
            if m := OUTSIDE.search(line):
                found.append(f"{rel}:{n}: names {m.group(0)!r}, outside the repository")
            if "spec.md" in line or rel == SPEC:
                found += [f"{rel}:{n}: cites {SPEC} §{s}, which has no such section"
                          for s in CITED_SECTION.findall(line) if s not in sections]
    return found


def test_spec_has_the_cited_numbering():
    """The numbering the code cites: four parts, nine algorithms, eight facts, note (a)."""
    text = (REPO / SPEC).read_text()
    assert spec_sections(text) == ({"1", "2", "3", "4"} | {f"3.{i}" for i in range(1, 10)}
                                   | {f"4.{i}" for i in range(1, 9)})
    assert "**Note (a)" in text


def test_no_file_cites_outside_the_repository():
    assert offences(REPO) == []


def test_planted_citations_are_caught(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / SPEC).write_text((REPO / SPEC).read_text())
    (tmp_path / "good.py").write_text("# zeros take e_zero (docs/spec.md §4.1 and §4.5)\n")
    assert offences(tmp_path) == []
    (tmp_path / "bad.py").write_text("# see docs/spec.md §" "4.9\n# as " + "ISA" + ".md fact 1 says\n"
                                     "# read /ho" + "me/someone/spec.txt\n")
    found = offences(tmp_path)
    assert len(found) == 3, found
    assert found[0].startswith("bad.py:1: cites docs/spec.md §" "4.9")
    assert all(f.startswith("bad.py:") for f in found)
