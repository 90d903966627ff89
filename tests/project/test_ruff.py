"""The tree passes ruff with the project's configuration (``[tool.ruff]`` in pyproject.toml).

ruff is pinned in requirements.txt; without it the check is skipped, saying so.  A planted file
(an unused import, an undefined name, a line over the length) shows the configuration catches each.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def ruff() -> list[str]:
    """The command that runs ruff: this environment's package, else one on PATH; skip without."""
    try:
        from ruff.__main__ import find_ruff_bin
        return [str(find_ruff_bin())]
    except (ImportError, FileNotFoundError):
        found = shutil.which("ruff")
        if found is None:
            pytest.skip("ruff is not installed (pip install -r requirements.txt pins it)")
        return [found]


def check(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*ruff(), "check", "--no-cache", "--config", str(REPO / "pyproject.toml"),
                           "--output-format", "concise", *map(str, paths)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)


def test_the_tree_passes_ruff():
    done = check(REPO)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_ruff_catches_planted_faults(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef f():\n    return undefined_name\n\n\nX = '" + "x" * 130 + "'\n")
    done = check(bad)
    assert done.returncode == 1, done.stdout + done.stderr
    assert {code for code in ("F401", "F821", "E501") if code in done.stdout} == {"F401", "F821", "E501"}, \
        done.stdout
