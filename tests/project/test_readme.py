"""The README's promises: its API example runs, its layout names every package, its links exist."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()


def test_the_api_example_runs(capsys):
    from hw.pipeline import questions_only
    code = re.search(r"## The API in short\n+```python\n(.*?)```", README, re.S).group(1)
    with questions_only():                  # the example builds a unit and a core without elaborating them
        namespace: dict = {}
        exec(compile(code, "README.md", "exec"), namespace)
        namespace.clear()
    out = capsys.readouterr().out
    assert "=> d = 0x" in out                         # the trace
    assert "F: catalog 25, probed 27" in out          # the probe found the changed design
    assert "\n6 33\n" in out                          # the latencies the comment states


def test_the_layout_has_one_line_per_package():
    block = re.search(r"## Layout\n+```\n(.*?)```", README, re.S).group(1)
    named = [line.split()[0].rstrip("/") for line in block.splitlines() if line.strip()]
    packages = sorted(p.parent.name for p in REPO.glob("*/__init__.py"))
    folders = sorted(p.name for p in REPO.iterdir() if p.is_dir() and not p.name.startswith(".")
                     and p.name not in ("build", "sim_build") and not p.name.endswith(".egg-info"))
    assert len(named) == len(set(named)), "a package has two lines"
    assert set(packages) <= set(named), f"packages missing from the layout: {set(packages) - set(named)}"
    assert set(named) <= set(folders), f"the layout names folders that do not exist: {set(named) - set(folders)}"
    assert set(folders) <= set(named), f"folders missing from the layout: {set(folders) - set(named)}"


def test_every_local_link_exists():
    for target in re.findall(r"\]\(([^)#:]+)\)", README):
        assert (REPO / target).exists(), f"README links to {target}, which does not exist"
