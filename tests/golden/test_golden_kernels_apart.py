"""golden.kernels.apart: a shape kernel missing from numba's cache is compiled in a child process,
so that the calling process never compiles its row function on its own (whose copy the kernel's
code would then call: the unspecialised, slower one)."""

import json
import os
import subprocess
import sys

import pytest

from golden import kernels

pytestmark = pytest.mark.skipif(not kernels.available(), reason="numba is not installed")

SUPPORT = os.path.join(os.path.dirname(os.path.dirname(__file__)), "support")
PROBE = """
import json, sys
import apart_kernels as k
from golden.kernels import apart
if sys.argv[1] == "in-process":                      # the child compile fails: the kernel compiles here
    apart.compile_in_child = lambda kernel, sig: False
import numpy as np
x, out = np.arange(8, dtype=np.int64), np.zeros(8, np.int64)
apart.ensure(k.outer, (x, out))
print(json.dumps({"result": k.run().tolist(), "inner_compiled_here": len(k.inner.signatures),
                  "outer_overloads": len(k.outer.overloads)}))
"""


def _probe(tmp_path, mode):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([SUPPORT, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", PROBE, mode], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_missing_kernel_compiles_in_a_child_and_loads_from_the_cache(tmp_path):
    got = _probe(tmp_path, "apart")
    assert got == {"result": [3 * i + 1 for i in range(8)], "inner_compiled_here": 0, "outer_overloads": 1}
    assert _probe(tmp_path, "apart")["inner_compiled_here"] == 0          # cached: nothing compiled


def test_without_a_child_the_kernel_compiles_here(tmp_path):
    """The check above tells the two apart: a failed child leaves the compile to this process,
    which then compiles the row function on its own too (the same bits)."""
    got = _probe(tmp_path, "in-process")
    assert got["result"] == [3 * i + 1 for i in range(8)] and got["inner_compiled_here"] == 1


def test_the_shape_kernels_take_it():
    from golden.catalog import lookup
    shapes = kernels.shape_kernels()
    for arch, name in (("hopper", "HMMA.16816.F32"), ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8"),
                       ("cdna3", "v_mfma_f32_32x32x8_f16"), ("ada", "QMMA.16832.F32.E4M3.E4M3")):
        pl = kernels.plan(lookup(arch, name))
        assert pl.rows in kernels._APART and pl.rows in shapes
    assert kernels.plan(lookup("cdna3", "v_mfma_f32_32x32x4_2b_f16")).rows not in kernels._APART
