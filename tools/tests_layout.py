"""Where each test file of ``tests/`` belongs: ``tests/<folder>/`` by the file's name prefix.

The suite is laid out by what a test mainly checks (docs/verification.md, "Layout of tests/"):
one folder per layer (golden, hw, cosim, formal, probe, fpga, campaign), ``project/`` for checks of
the whole checkout, ``support/`` for helpers that are not tests.  Run it after a merge that added
``tests/test_*.py`` at the top::

    python tools/tests_layout.py            # list the misplaced files and where they go
    python tools/tests_layout.py --apply    # git mv them, one ``__file__`` level deeper
    python tools/tests_layout.py --refs     # rewrite ``tests/<file>.py`` in docs and code to the folder

``--apply`` also rewrites ``Path(__file__).resolve().parents[1]`` and ``.parent.parent`` (the
checkout's root, seen from ``tests/``) one level deeper, printing each line it changes; any other
use of ``__file__`` is printed for a person to check.  A name no rule matches exits 2.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"

# name prefix (after "test_") -> folder; the longest matching prefix wins
RULES = {
    "golden": "golden", "gemm": "golden", "fma": "golden", "formats": "golden", "catalog": "golden",
    "params": "golden", "properties": "golden", "provenance": "golden", "reference_model": "golden",
    "vector_streams": "golden", "gpu_vectors": "golden", "paper_examples": "golden", "fp8": "golden",
    "cdna": "golden", "mmasim": "golden", "descriptors": "golden", "nbcache": "golden",
    "hw": "hw", "tensor_core": "hw", "new_fields": "hw", "softfloat": "hw", "rtl_hashes": "hw",
    "cosim": "cosim", "dut": "cosim", "tb": "cosim",
    "formal": "formal",
    "probe": "probe",
    "fpga": "fpga", "robustness_fpga": "fpga",
    "campaign": "campaign", "robustness_campaign": "campaign",
    "layers": "project", "extending": "project", "readme": "project", "robustness": "project", "packaging": "project",
    "paths": "project", "spec": "project", "layout": "project", "ruff": "project", "venv_install": "project",
}
FOLDERS = sorted(set(RULES.values()))
# where a reference to a moved file may be written, and how one reads (not already in a folder)
REFERRING = ("README.md", "Makefile", "pyproject.toml", "docs", "tools", "golden", "hw", "cosim", "tb", "formal",
             "probe", "fpga", "campaign", "examples", "tests")
REFERENCE = re.compile(r"(?<![\w/.-])tests/(\w+\.py)")

# the checkout's root computed from a file directly in tests/, and the same one level deeper
DEEPER = [(re.compile(r"Path\(__file__\)(\.resolve\(\))?\.parents\[1\]"), lambda m: m[0][:-2] + "2]"),
          (re.compile(r"Path\(__file__\)(\.resolve\(\))?\.parent\.parent(?!\.)"), lambda m: m[0] + ".parent")]


def folder_of(name: str) -> str | None:
    """The folder of ``tests/`` that the test file ``name`` (``test_*.py``) belongs in, or None."""
    stem = name.removeprefix("test_").removesuffix(".py")
    hits = [p for p in RULES if stem.startswith(p)]
    return RULES[max(hits, key=len)] if hits else None


def misplaced(tests: Path = TESTS) -> list[Path]:
    """Test files that sit directly in ``tests/`` (they all belong in a folder)."""
    return sorted(tests.glob("test_*.py"))


def deepen(path: Path) -> None:
    """Rewrite the root-from-``__file__`` expressions of a moved file one level deeper; print the rest."""
    lines = path.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        new = line
        for pattern, repl in DEEPER:
            new = pattern.sub(repl, new)
        if new != line:
            print(f"  {path.name}:{i + 1}: {new.strip()}")
            lines[i] = new
        elif "__file__" in line:
            print(f"  {path.name}:{i + 1}: CHECK BY HAND: {line.strip()}")
    path.write_text("".join(lines))


def rewrite_references() -> None:
    """Point every ``tests/<file>.py`` named in the checkout at the folder that file now sits in."""
    where = {p.name: p.relative_to(REPO).as_posix() for p in TESTS.glob("*/*.py") if p.parent.name != "data"}
    listed = subprocess.run(["git", "ls-files", *REFERRING], cwd=REPO, capture_output=True, text=True, check=True)
    for name in listed.stdout.split():
        path = REPO / name
        if path.suffix not in (".py", ".md", ".sv", ".toml") and path.name != "Makefile":
            continue
        text = path.read_text()
        new = REFERENCE.sub(lambda m: where.get(m[1], m[0]), text)
        if new != text:
            print(f"references updated: {name}")
            path.write_text(new)


def main(argv: list[str]) -> int:
    apply = argv == ["--apply"]
    if argv == ["--refs"]:
        rewrite_references()
        return 0
    if argv and not apply:
        print("error: the options are --apply and --refs (without one the moves are listed)", file=sys.stderr)
        return 2
    files = misplaced()
    unknown = [f.name for f in files if folder_of(f.name) is None]
    if unknown:
        print(f"error: no rule in tools/tests_layout.py RULES for {', '.join(unknown)}; "
              f"add a prefix naming one of {', '.join(FOLDERS)}", file=sys.stderr)
        return 2
    if not files:
        print("tests/ is laid out: no test file sits directly in it")
    for f in files:
        dest = TESTS / folder_of(f.name) / f.name
        print(f"{f.relative_to(REPO)} -> {dest.relative_to(REPO)}")
        if apply:
            if dest.exists():
                print(f"error: {dest.relative_to(REPO)} exists already", file=sys.stderr)
                return 2
            dest.parent.mkdir(exist_ok=True)
            tracked = subprocess.run(["git", "ls-files", "--error-unmatch", str(f)], cwd=REPO, capture_output=True)
            if tracked.returncode == 0:
                subprocess.run(["git", "mv", str(f), str(dest)], cwd=REPO, check=True)
            else:
                f.rename(dest)                  # not in git yet: moved as it is
            deepen(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
