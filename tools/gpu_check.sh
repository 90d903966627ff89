#!/usr/bin/env bash
# The device check of golden's GPU kernels, whole: every kernel family on the GPU against the
# compiled CPU path, bit for bit, with the planted fault (tools/gpu_kernel_check.py, its arguments
# passed through). Run from the repository root on the machine with the GPU; writes
# $OUT/gpu_kernel_check.txt (everything printed) and $OUT/gpu_kernel_check.json (OUT: build/gpu-check
# when unset). Exit status: the check's (0 ok, 1 a mismatch or an uncaught fault, 2 no GPU or bad
# arguments).
# NUMBA_ENABLE_CUDASIM=1 runs it on numba-cuda's CPU simulator (a few dozen rows).
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-build/gpu-check}
export OUT
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT" || exit 2
log="$OUT/gpu_kernel_check.txt"
{
  echo "\$ python tools/gpu_kernel_check.py $*"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  fi
  "$PYTHON" -c "import sys, numpy, numba; print('python', sys.version.split()[0], 'numpy', numpy.__version__, 'numba', numba.__version__, end=' '); import importlib.metadata as m; print('numba-cuda', m.version('numba-cuda'))"
  echo "cpu cores: $(nproc)  date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} 2>&1 | tee "$log"
"$PYTHON" tools/gpu_kernel_check.py "$@" 2>&1 | tee -a "$log"
status=$?
echo "gpu_kernel_check exit status $status" | tee -a "$log"
exit "$status"
