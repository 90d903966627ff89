"""fpga/'s three rooms keep their order (the rule of ``fpga/__init__.py``): ``fpga.board`` (the
gateware, and what both ends of the link share) imports no other room, ``fpga.toolchain`` imports
the board, ``fpga.host`` both.  The one crossing the other way: the board top asks its platform's
FPGA family (``fpga.toolchain.families``) for the design clock's PLL.  Every import is read from
the source, function-level ones included."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOMS = {"board": 0, "toolchain": 1, "host": 2}
ALLOWED = {("fpga.board.top", "fpga.toolchain.families")}


def room_imports(root: Path = REPO) -> list[tuple[str, str]]:
    """``(module, imported fpga module)`` of every import of every module in a room."""
    found = []
    for path in sorted((root / "fpga").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if len(parts) < 3:
            continue                         # fpga/__init__.py and __main__.py stand above the rooms
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")
                    base = ".".join(up[:len(up) - (node.level - 1)] + ([base] if base else []))
                targets = [base]
            else:
                continue
            found += [(name, t) for t in targets if t.startswith("fpga.")]
    return found


def test_a_room_imports_only_the_rooms_before_it():
    bad = [f"{name} imports {target}" for name, target in room_imports()
           if ROOMS[target.split(".")[1]] > ROOMS[name.split(".")[1]] and (name, target) not in ALLOWED]
    assert bad == []


def test_every_module_is_in_a_room():
    loose = sorted(p.name for p in (REPO / "fpga").glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    rooms = {p.name for p in (REPO / "fpga").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert loose == [] and rooms == set(ROOMS)


def test_the_imports_are_read():
    found = set(room_imports())
    assert ALLOWED <= found and ("fpga.host.driver", "fpga.board.config") in found
