"""golden.gemm against whole GEMMs measured on an NVIDIA H200 (tests/data/gemm/H200_gemm.npz,
made by tools/gemm_gpu_check.py; docs/gemm.md has the full comparison).  At 128x128xK:
``torch._scaled_mm`` on e4m3 with fast accumulation is the plain K loop of QGMMA, without it a
promotion to fp32 every 4 QGMMAs; bf16 and fp16 ``matmul`` are the plain K loop of HGMMA at
K=512 and split-K in 3 slices of 22 tiles of 64 at K=4096.  At 64x256x8192 fast accumulation is
split-K in 3 slices of whole 128-element tiles, and without it a promotion every 4 QGMMAs, as at
1024x1024x1024.  Checked bit for bit on 2 to 4 rows of each GEMM; the neighbouring compositions
(planted) are seen to differ."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tool_scripts import load_tool

import golden
from golden.gemm import Kernel, gemm

REPO = Path(__file__).resolve().parents[2]

@pytest.fixture(scope="module")
def tool():
    return load_tool("gemm_gpu_check")


def load(tool, name: str, tag: str, op: str):
    """A record's result and its operands rebuilt from the seed (checked by digest)."""
    data = np.load(REPO / "tests" / "data" / "gemm" / name)
    return data, tool.operands(data, tags={tag}, formats={op})


QGMMA = ("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3")
HGMMA_BF16, HGMMA_F16 = ("hopper", "HGMMA.64xNx16.F32.BF16"), ("hopper", "HGMMA.64xNx16.F32")
SPLIT3 = Kernel(split_k=3, split_unit=4)      # slices of 88 k-steps = 1408 elements = 22 tiles of 64
ROWS = [0, 1, 2, 3]
F16_ROWS = [0, 8, 67, 117]                    # rows where slices of 86 k-steps (split_unit=1) differ
FIRST, SHAPES = "H200_gemm.npz", "H200_gemm_shapes.npz"
CASES = [  # (record, shape, result key, operands, instruction, output format, rows, kernel that matches, planted)
    (FIRST, "128x128x4096", "fp8_d_fast1", "fp8", QGMMA, None, ROWS, Kernel("k-loop"), [Kernel(promotion=16)]),
    (FIRST, "128x128x4096", "fp8_d_fast0", "fp8", QGMMA, None, ROWS, Kernel(promotion=4),
     [Kernel(promotion=2), Kernel(promotion=8), Kernel("k-loop")]),
    (FIRST, "128x128x512", "f16_d", "f16", HGMMA_F16, "f16", ROWS, Kernel("k-loop"), [Kernel(promotion=1)]),
    (FIRST, "128x128x512", "bf16_d", "bf16", HGMMA_BF16, "bf16", ROWS, Kernel("k-loop"), []),
    (FIRST, "128x128x4096", "f16_d", "f16", HGMMA_F16, "f16", F16_ROWS, SPLIT3,
     [SPLIT3.with_(split_unit=1), Kernel("k-loop")]),
    (FIRST, "128x128x4096", "bf16_d", "bf16", HGMMA_BF16, "bf16", ROWS, SPLIT3, [Kernel("k-loop")]),
    # other shapes, other choices: fast accumulation split into 3 slices of whole 128-element tiles
    (SHAPES, "64x256x8192", "fp8_d_fast1", "fp8", QGMMA, None, [0, 1], SPLIT3,
     [SPLIT3.with_(split_unit=1), Kernel("k-loop")]),
    (SHAPES, "64x256x8192", "fp8_d_fast0", "fp8", QGMMA, None, [0, 1], Kernel(promotion=4), [SPLIT3]),
    (SHAPES, "1024x1024x1024", "fp8_d_fast0", "fp8", QGMMA, None, [0, 1], Kernel(promotion=4), [Kernel("k-loop")]),
]


@pytest.mark.parametrize("record, tag, key, op, instr, out, rows, kernel, planted", CASES,
                         ids=[f"{c[2]}-{c[1]}" for c in CASES])
def test_h200_gemm_bit_for_bit(tool, record, tag, key, op, instr, out, rows, kernel, planted):
    data, ops = load(tool, record, tag, op)
    ins = golden.lookup(*instr)
    A, B, D = ops[f"{op}_a_{tag}"][rows], ops[f"{op}_b_{tag}"], data[f"{key}_{tag}"][rows]
    assert np.array_equal(gemm(A, B, instr=ins, kernel=kernel.with_(out_format=out)), D)
    for k in planted:
        assert not np.array_equal(gemm(A, B, instr=ins, kernel=k.with_(out_format=out)), D), k


def test_gemm_compare_on_an_h200_capture(capsys):
    """tools/gpu_gemm_capture.py's products (normal operands, rebuilt from their seeds and checked by
    digest) name the same compositions: promotion every 4 QGMMAs, and the plain K loop when fast."""
    from golden.cli import main
    cap = REPO / "tests" / "data" / "gemm" / "h200_capture"
    assert main(["gemm-compare", str(cap / "gemm_e4m3_f32out_promoted.npz"), str(cap / "gemm_e4m3_f32out_fast.npz"),
                 "--rows", "1", "--top", "2"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("64x64x4096")]
    assert lines[0].split(": ", 1)[1].startswith("promote-4 1.0000, ")
    assert lines[1].split(": ", 1)[1].startswith("k-loop 1.0000, ")
    assert not lines[0].split(", ")[1].endswith("1.0000")         # the runner-up is far off: the bits decide
