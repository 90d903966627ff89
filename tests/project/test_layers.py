"""The layering stays true: a package imports only the layers to its left, and no module
imports itself back through others.

Layers, bottom up: ``golden`` (the specification) <- ``hw`` (RTL) <- ``cosim`` and ``tb``
(simulation) <- ``probe`` (the dissection suite) <- ``fpga`` and campaigns.  Every import of
every module is read from its source (function-level imports included, so a lazy import
cannot hide a dependency), resolved to a module of the project, and checked.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# rank of each top-level package: a module may import packages of its own rank or lower
LAYERS = {"golden": 0, "hw": 1, "cosim": 2, "tb": 2, "formal": 2, "probe": 3, "fpga": 4, "campaign": 4}
# the top layer's packages are side by side: nothing imports them, not even each other (a campaign
# reaches a board through probe's plugin backends)
TOP = {"fpga", "campaign"}


def modules(root: Path) -> dict[str, Path]:
    """``{dotted name: file}`` of every module of the layered packages under ``root``."""
    found = {}
    for pkg in LAYERS:
        for path in sorted((root / pkg).rglob("*.py")) if (root / pkg).is_dir() else ():
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imports_of(name: str, path: Path, known) -> set[str]:
    """Project modules that ``name`` imports (the longest known prefix of each imported name)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[:len(up) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            targets.add(base)
            targets.update(f"{base}.{a.name}" for a in node.names)   # from pkg import submodule
    resolved = set()
    for t in targets:
        parts = t.split(".")
        for n in range(len(parts), 0, -1):
            candidate = ".".join(parts[:n])
            if candidate in known:
                resolved.add(candidate)
                break
    resolved.discard(name)
    return resolved


def layer_violations(root: Path) -> list[str]:
    """Every import that goes down-to-up, as ``module -> imported (layer -> layer)`` lines."""
    mods = modules(root)
    bad = []
    for name, path in mods.items():
        mine = name.split(".")[0]
        for target in sorted(imports_of(name, path, mods)):
            theirs = target.split(".")[0]
            if LAYERS[theirs] > LAYERS[mine] or (theirs in TOP and theirs != mine):
                bad.append(f"{name} imports {target} ({mine} may not import {theirs})")
    return bad


def import_cycles(root: Path) -> list[list[str]]:
    """Cycles in the module import graph (each as the list of modules around it)."""
    mods = modules(root)
    graph = {name: imports_of(name, path, mods) for name, path in mods.items()}
    # a package's __init__ re-exporting its own modules is not a cycle of dependence
    for name in graph:
        graph[name] = {t for t in graph[name] if not name.startswith(t + ".")}
    cycles, state, stack = [], {}, []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for t in sorted(graph[n]):
            if state.get(t) == "open":
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[n] = "done"

    for n in sorted(graph):
        if n not in state:
            visit(n)
    return cycles


def test_no_import_goes_down_to_up():
    assert layer_violations(REPO) == []


def test_no_import_cycles():
    assert import_cycles(REPO) == []


def test_every_package_is_seen():
    mods = modules(REPO)
    for pkg in ("golden", "hw", "cosim", "tb"):
        assert pkg in mods, f"{pkg} not found: the layering test would check nothing"
    assert len(mods) > 40


@pytest.mark.parametrize("where, line, expected", [
    ("golden/formats.py", "import hw", "golden.formats imports hw (golden may not import hw)"),
    ("golden/api.py", "    from cosim.run import Config", "golden.api imports cosim.run (golden may not import cosim)"),
    ("hw/unit.py", "from cosim import build", "hw.unit imports cosim.build (hw may not import cosim)"),
    ("cosim/run.py", "def f():\n    import probe", "cosim.run imports probe (cosim may not import probe)"),
    ("campaign/engine.py", "import fpga.host.driver",
     "campaign.engine imports fpga.host.driver (campaign may not import fpga)"),
])
def test_a_planted_up_import_is_caught(tmp_path, where, line, expected):
    for pkg in LAYERS:
        if (REPO / pkg).is_dir():
            shutil.copytree(REPO / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "probe").mkdir(exist_ok=True)
    (tmp_path / "probe" / "__init__.py").touch()
    target = tmp_path / where
    target.write_text(target.read_text() + "\n" + line + "\n")
    assert expected in layer_violations(tmp_path)


def test_a_planted_cycle_is_caught(tmp_path):
    for pkg in ("golden",):
        shutil.copytree(REPO / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "golden" / "formats.py").write_text(
        (tmp_path / "golden" / "formats.py").read_text() + "\nfrom . import api\n")
    assert any({"golden.formats", "golden.api"} <= set(c) for c in import_cycles(tmp_path))


# the device contract: one module at the bottom, the one every layer that makes or runs a device imports
DEVICE_MODULE = "golden.device"


def test_the_device_contract_is_at_the_bottom():
    mods = modules(REPO)
    assert DEVICE_MODULE in mods and LAYERS[DEVICE_MODULE.split(".")[0]] == 0
    below = imports_of(DEVICE_MODULE, mods[DEVICE_MODULE], mods)
    assert all(m.split(".")[0] == "golden" for m in below), below


@pytest.mark.parametrize("pkg", ["probe", "cosim", "campaign", "fpga"])
def test_every_user_takes_the_contract_from_golden_device(pkg):
    """probe, cosim, campaign and fpga make or run devices: each imports the contract from golden.device,
    and none defines a contract of its own (a Protocol named Device or Backend) or the old module."""
    mods = modules(REPO)
    users = [name for name, path in mods.items() if name.split(".")[0] == pkg
             and DEVICE_MODULE in imports_of(name, path, mods)]
    assert users, f"no module of {pkg} imports {DEVICE_MODULE}"
    assert f"{pkg}.contract" not in mods
    for name, path in mods.items():
        if name.split(".")[0] != pkg:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and node.name in ("Device", "Backend"):
                bases = {ast.unparse(b) for b in node.bases}
                assert not bases & {"Protocol", "typing.Protocol"}, f"{name} defines a Protocol {node.name}"
