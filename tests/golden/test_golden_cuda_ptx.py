"""Every GPU kernel family compiled to PTX for sm_90 by NVVM, no GPU needed (slow; skipped without
numba-cuda, libNVVM or libdevice): the GPU compiler takes each family's code, and the PTX holds no
multiply or add the assembler may fuse into an fma (each says its rounding, ``.rn``), so the GPU
rounds where the CPU path does.  The check is shown to catch a kernel compiled with NVVM's default
contraction.

Run as a script, this file compiles the families and prints the counts as JSON (the test runs it in
a fresh process: compiling without a GPU needs stand-ins for numba-cuda's device queries)."""

import glob
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SKIP = 77                        # the script's exit status when this machine cannot compile PTX
CC = (9, 0)                      # Hopper: the lent machine's H200
# a float multiply, add or subtract without a rounding modifier: the assembler may contract it
LOOSE = re.compile(r"\b(?:mul|add|sub)\.f(?:32|64)\b")
ROUNDED = re.compile(r"\b(?:mul|add|sub|fma)\.rn\.f(?:32|64)\b")


def _libdevice() -> str | None:
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + sorted(glob.glob("/usr/local/cuda*"))
    for root in filter(None, roots):
        hits = sorted(glob.glob(os.path.join(root, "nvvm", "libdevice", "libdevice*.bc")))
        if hits:
            return hits[0]
    return None


def _offline(cuda, libdevice: str) -> None:
    """numba-cuda asks the GPU for its compute capability and nvrtc for the arch option: answer
    for sm_90 instead, and hand NVVM the libdevice file found."""
    import types

    import numba.cuda.cudadrv.nvrtc as nvrtc
    import numba.cuda.cudadrv.nvvm as nvvm
    import numba.cuda.dispatcher as dispatcher
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=CC)
    nvrtc.get_arch_option = lambda major, minor: f"compute_{major}{minor}"
    with open(libdevice, "rb") as f:
        nvvm.LibDevice._cache_ = f.read()


def _ptx(cuda, name: str, contract: bool) -> str:
    import importlib

    from numba import types

    from golden.kernels.cuda import _device
    mod = importlib.import_module(f"golden.kernels.cuda.{name}")
    shadow = _device.device_module(mod, {**_device.device_modules(cuda), "cuda": cuda}, cuda, mod.PLAIN)
    kernel = _device._rebound(mod.kernel, vars(shadow))
    u8, i64 = types.Array(types.uint8, 1, "C"), types.Array(types.int64, 1, "C")
    sig = (u8, u8, u8, u8, u8, i64, types.int64, types.Array(types.int64, 2, "C"), types.Array(types.float32, 1, "C"),
           types.Array(types.int16, 1, "C"), i64, i64, types.Array(types.uint64, 1, "C"))
    if contract:                                  # the planted fault: NVVM's default, contraction on
        return cuda.compile_ptx(kernel, sig, cc=CC)[0]
    with _device.no_fma_contraction():
        return cuda.compile_ptx(kernel, sig, cc=CC)[0]


def main() -> int:
    """Each family's PTX counts (loose and rounded float operations), and the planted fault's."""
    libdevice = _libdevice()
    try:
        from numba import cuda
        from numba.cuda.cudadrv import nvvm
        nvvm.NVVM()
    except Exception as e:                        # no numba-cuda or no libNVVM: nothing to compile with
        print(f"skip: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        return SKIP
    if libdevice is None:
        print("skip: no libdevice (CUDA_HOME/nvvm/libdevice)")
        return SKIP
    _offline(cuda, libdevice)
    counts = {}
    for name in ("fda", "gdfs", "amd", "gps", "sfma"):
        ptx = _ptx(cuda, name, contract=False)
        counts[name] = {"loose": Counter(LOOSE.findall(ptx)), "rounded": Counter(ROUNDED.findall(ptx))}
    counts["planted"] = {"loose": Counter(LOOSE.findall(_ptx(cuda, "amd", contract=True)))}
    print(json.dumps(counts))
    return 0


@pytest.mark.slow
def test_every_family_compiles_for_the_gpu_without_fusable_arithmetic():
    pytest.importorskip("numba_cuda")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    run = subprocess.run([sys.executable, __file__], capture_output=True, text=True, env=env, timeout=1200)
    if run.returncode == SKIP:
        pytest.skip(run.stdout.strip())
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    counts = json.loads(run.stdout.strip().splitlines()[-1])
    for name in ("fda", "gdfs", "amd", "gps", "sfma"):
        assert counts[name]["loose"] == {} and counts[name]["rounded"], (name, counts[name])
    assert counts["sfma"]["rounded"].get("fma.rn.f64") and counts["sfma"]["rounded"].get("fma.rn.f32")
    assert counts["planted"]["loose"], counts["planted"]    # NVVM's default leaves fusable pairs: caught


if __name__ == "__main__":
    sys.exit(main())
