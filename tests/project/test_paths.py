"""One build folder for every layer: ``golden.paths.build_dir`` decides, and everyone asks it.

Checked three ways: the rule itself (the setting, the checkout, an installed package); every
layer's folders under ``MMA_BUILD_DIR`` in a fresh interpreter (a formal proof run there writes
its job under the setting too); and no other module reading the setting or naming a ``build``
folder of its own (shown to catch a planted one).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from golden import paths

REPO = Path(__file__).resolve().parents[2]
LAYERED = ("golden", "hw", "cosim", "tb", "formal", "probe", "fpga", "campaign", "tools")
# a module that decides where builds go on its own: reads the setting, joins a "build" folder, or
# takes the folder above cosim's builds
OWN_BUILD_FOLDER = re.compile(r"""environ[^\n]*MMA_BUILD_DIR|/ *["']build["']|["']build/|BUILD_ROOT\.parent""")


def test_build_dir_is_the_checkout_or_the_setting(monkeypatch, tmp_path):
    monkeypatch.delenv("MMA_BUILD_DIR", raising=False)
    assert paths.build_dir() == REPO / "build"                    # a source checkout
    assert paths.build_dir("formal", "cases.json") == REPO / "build" / "formal" / "cases.json"
    monkeypatch.setenv("MMA_BUILD_DIR", str(tmp_path / "b"))
    assert paths.build_dir("cosim") == tmp_path / "b" / "cosim"
    monkeypatch.delenv("MMA_BUILD_DIR")
    monkeypatch.setattr(paths, "REPO", tmp_path / "site-packages")  # an installed package: the working directory
    monkeypatch.chdir(tmp_path)
    assert paths.build_dir() == tmp_path / "build"


LAYER_FOLDERS = """
import json, sys
import cosim.build, cosim.failures, fpga.toolchain.build, fpga.host.sim, fpga.host.run, formal.runner, formal.catalog
import campaign.__main__
from formal.bitscan import bitscan_property
verdict = bitscan_property(4, "lod.halves").run(60)    # no workdir given: the default folder
print(json.dumps({"cosim": str(cosim.build.BUILD_ROOT), "cosim failures": str(cosim.failures.FAILURES_DIR),
                  "fpga": str(fpga.toolchain.build.BUILD_ROOT), "fpga tools": str(fpga.toolchain.build.TOOLS_ROOT),
                  "fpga-sim": str(fpga.host.sim.SIM_ROOT), "fpga failures": str(fpga.host.run.FAILURES_DIR),
                  "formal": str(formal.runner.WORKDIR), "formal cache": str(formal.catalog.CACHE),
                  "campaign db": campaign.__main__.DEFAULT_DB, "proof": verdict.status}))
"""


@pytest.mark.xdist_group("yosys")            # runs SymbiYosys: with the other Yosys tests, in one worker
def test_every_layer_and_a_proof_build_under_the_setting(tmp_path):
    """cosim, fpga, formal (which once ignored the setting) and campaign, in a fresh interpreter."""
    env = dict(os.environ, MMA_BUILD_DIR=str(tmp_path / "mine"), PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", LAYER_FOLDERS], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found.pop("proof") == "proved", found
    mine = tmp_path / "mine"
    outside = {k: v for k, v in found.items() if not Path(v).is_relative_to(mine)}
    assert outside == {}, f"not under MMA_BUILD_DIR: {outside}"
    assert [p.parent.name for p in (mine / "formal").glob("*/prop.sby")] == ["bitscan_lod.halves.W4"]


def own_build_folders(root: Path) -> list[str]:
    """``file:line`` of every module, other than golden/paths.py, that picks a build folder itself."""
    found = []
    for pkg in LAYERED:
        for path in sorted((root / pkg).rglob("*.py")) if (root / pkg).is_dir() else ():
            rel = path.relative_to(root).as_posix()
            if rel == "golden/paths.py":
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("#", 1)[0]
                if OWN_BUILD_FOLDER.search(code):
                    found.append(f"{rel}:{n}: {line.strip()}")
    return found


def test_no_module_picks_its_own_build_folder(tmp_path):
    assert own_build_folders(REPO) == []
    (tmp_path / "formal").mkdir()
    (tmp_path / "formal" / "runner.py").write_text('from pathlib import Path\n'
                                                   'WORKDIR = Path(__file__).parents[1] / "build" / "formal"\n')
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "x.py").write_text('import os\nroot = os.environ.get("MMA_BUILD_DIR", "b")\n')
    (tmp_path / "fpga").mkdir()
    (tmp_path / "fpga" / "sim.py").write_text('from cosim.build import BUILD_ROOT\nSIM = BUILD_ROOT.parent / "sim"\n')
    assert [f.split(":")[0] for f in own_build_folders(tmp_path)] == ["formal/runner.py", "fpga/sim.py", "tools/x.py"]
