"""golden.kernels.cuda under numba-cuda's simulator (CPU only; skipped without numba-cuda): the GPU
kernel's row code gives the CPU path's bits, and its planted rounding fault is caught
(tools/gpu_kernel_check.py, which the same check runs on a real GPU)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba_cuda")
REPO = Path(__file__).resolve().parents[2]


def test_gpu_kernel_check_on_the_simulator():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": str(REPO), "OUT": ""}
    run = subprocess.run([sys.executable, str(REPO / "tools" / "gpu_kernel_check.py"), "--rows", "48", "--instr",
                          "ampere:HMMA.16816.F32", "blackwell:UTCQMMA.SF.F32.E4M3.E4M3.E8"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "simulator: 192 rows checked, 0 mismatches" in run.stdout and "(caught)" in run.stdout


def test_gpu_kernel_check_refuses_bad_input_in_one_line():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, str(REPO / "tools" / "gpu_kernel_check.py"), "--instr",
                          "cdna3:v_mfma_f32_16x16x4_f32"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 2 and run.stderr.startswith("error: ") and run.stderr.count("\n") == 1, run.stderr
