#!/bin/sh
# golden against a real NVIDIA GPU through PyTorch (needs torch with CUDA; skips cleanly without):
# 4096 x 4096 random dot-adds per instruction, uniform bit patterns then normal values.
# Run from the repository root; the H100 output is in docs/gpu/h100_compare.txt.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, numpy, ml_dtypes; print('torch', torch.__version__, 'numpy', numpy.__version__, 'ml_dtypes', ml_dtypes.__version__)"
for kind in mixed normal; do
  python3 -m probe compare hopper HGMMA.64xNx16.F32 HGMMA.64xNx16.F32.BF16 QGMMA.64xNx32.F32.E4M3.E4M3 \
     QGMMA.64xNx32.F32.E4M3.E5M2 QGMMA.64xNx32.F32.E5M2.E4M3 HGMMA.64xNx8.F32.TF32 --backend torch -n 4096 --vectors $kind --seed 7
  echo "exit status $?"
done
