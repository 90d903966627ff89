"""golden.nbcache: a cached kernel never runs stale code after an edit of a file it compiles from.

numba's ``cache=True`` checks only the file of the cached function; the planted fault is numba's
own cache (``plain``), which this test shows going stale where :func:`golden.nbcache.njit`
(``ours``) recompiles.  Each run is a fresh interpreter, as a later ``make test`` or run would be.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[2]

CALLEE = '''import numpy as np
from numba import njit

TABLE = np.array([{table}], np.int64)     # a global numba freezes into the caller's machine code


@njit
def g(x):
    return x * {factor} + TABLE[0]
'''

ENTRIES = '''import numba

from golden.nbcache import njit

from .b import g


@numba.njit(cache=True)
def plain(x):
    return g(x)


@njit(cache=True)
def ours(x):
    return g(x)
'''

RUN = '''import json
from pkg.a import ours, plain
print(json.dumps({"plain": int(plain(10)), "ours": int(ours(10)), "hits": sum(ours.stats.cache_hits.values())}))
'''


def _run(tmp: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": f"{tmp}{os.pathsep}{ROOT}", "NUMBA_CACHE_DIR": str(tmp / "cache")}
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_edit_of_a_callee_or_its_table_recompiles(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(ENTRIES)
    (pkg / "b.py").write_text(CALLEE.format(table=1, factor=2))
    first = _run(tmp_path)
    assert first == {"plain": 21, "ours": 21, "hits": 0}
    assert _run(tmp_path) == {"plain": 21, "ours": 21, "hits": 1}      # unchanged: loaded, not compiled
    (pkg / "b.py").write_text(CALLEE.format(table=1, factor=3))        # the callee's code
    assert _run(tmp_path) == {"plain": 21, "ours": 31, "hits": 0}      # numba's own cache: stale
    (pkg / "b.py").write_text(CALLEE.format(table=5, factor=3))        # a table read as a global
    assert _run(tmp_path) == {"plain": 21, "ours": 35, "hits": 0}


def test_closure_follows_the_kernels_imports():
    from golden import nbcache
    names = {str(Path(p).relative_to(ROOT)) for p in nbcache.closure(str(ROOT / "golden/kernels/fused.py"))}
    assert {"golden/kernels/fused_int.py", "golden/kernels/_common.py", "golden/kernels/spec.py",
            "golden/formats.py", "golden/params.py", "golden/nbcache.py"} <= names
    assert "golden/kernels/amd.py" not in names


def test_unwritable_tree_falls_back_to_the_user_cache(tmp_path, monkeypatch):
    """numba's fallbacks kept: no $NUMBA_CACHE_DIR and no writable __pycache__ -> the user's cache dir."""
    from numba.core import caching, config

    from golden import nbcache
    (tmp_path / "m.py").write_text("def f(x):\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import m
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user"))

    def unwritable(self):
        raise OSError("read-only")
    monkeypatch.setattr(caching.InTreeCacheLocator, "ensure_cache_path", unwritable)
    locator = nbcache.ClosureCache(m.f)._impl.locator
    assert isinstance(locator, nbcache._UserWide)
    assert locator.get_cache_path().startswith(str(tmp_path / "user"))
    assert locator.get_source_stamp() == nbcache.source_key(str(tmp_path / "m.py"))
