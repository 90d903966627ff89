"""The CDNA1 entries against the authors' later reference model, mmasim 2.1.1, bit for bit.

Skipped without the extra (``pip install 'mma-rtl[reference]'``: mmasim and a CPU torch).  In ``make
test``: every CDNA1 instruction on every vector kind, ``ROWS`` dot-adds each, drawn by the generator
tools/mmasim_check.py uses (its full run, docs/cdna1/mmasim_check.txt, has 20,000 each); planted faults that the
comparison must see; the one documented place where the two differ; and the tool's bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import golden
from golden.formats import from_float
from golden.vectors import KINDS, random_operands

pytest.importorskip("torch", reason="the reference model needs torch (pip install 'mma-rtl[reference]')")
pytest.importorskip("mmasim", reason="the reference model is not installed (pip install 'mma-rtl[reference]')")

REPO = Path(__file__).resolve().parents[2]
ROWS = 256

sys.path.insert(0, str(REPO / "tools"))
import mmasim_check as mc  # noqa: E402  (the tool, tools/mmasim_check.py)

CDNA1 = golden.instructions("cdna1")


@pytest.mark.parametrize("ins", CDNA1, ids=lambda i: i.name)
def test_every_vector_kind_matches(ins):
    for kind in KINDS:
        a, b, c, _, _ = random_operands(ins, ROWS, np.random.default_rng(7), kind)
        bad, _, rows = mc.compare(ins, a, b, c)
        assert bad == 0, (kind, rows[:4])


@pytest.mark.parametrize("name,change", [
    ("f32_32x32x8f16", {"pass_size": 8}),            # one pass of 8, not a chain of 4
    ("f32_16x16x8bf16", {"pass_size": 4}),           # bf16 passes of 4, as f16's
    ("f32_32x32x2bf16", {"zero_sign": "positive"}),  # a negative sum rounding to zero gives +0
    ("f32_32x32x4f16", {"F": 30}),                   # an alignment window instead of the exact sum
    ("f32_32x32x2f32", {"fma_rounding": "RZ"}),      # the fma rounds toward zero
])
def test_a_planted_fault_is_seen(name, change):
    ins = golden.lookup("cdna1", name)
    planted = ins.with_params(**change)
    seen = 0
    for kind in ("mixed", "structured"):
        a, b, c, _, _ = random_operands(ins, 1024, np.random.default_rng(3), kind)
        want = golden.dot_add(planted, a, b, c).astype(np.uint32)
        got = mc.reference_dot_add(ins, a, b, c)
        both_nan = np.isnan(want.view(np.float32)) & np.isnan(got.view(np.float32))
        seen += int(((want != got) & ~both_nan).sum())
    assert seen > 0, change


def test_the_documented_difference_at_the_overflow_threshold():
    """c = the largest f32, products 2**103 - 2**60: the exact sum lies below the threshold (largest
    finite); the reference model's float64 plain sum rounds onto it and its fp32 conversion gives +inf."""
    ins = golden.lookup("cdna1", "f32_32x32x2bf16")
    a = from_float("bf16", np.asarray([[2.0 ** 52, -(2.0 ** 30)]])).astype(np.uint64)
    b = from_float("bf16", np.asarray([[2.0 ** 51, 2.0 ** 30]])).astype(np.uint64)
    c = from_float("f32", np.asarray([np.finfo(np.float32).max], np.float64)).astype(np.uint64)
    assert int(golden.dot_add(ins, a, b, c)[0]) == 0x7F7FFFFF
    assert int(mc.reference_dot_add(ins, a, b, c)[0]) == 0x7F800000


def test_the_tool_runs_and_refuses_bad_input(capsys):
    assert mc.main(["-n", "16", "--instr", "f32_4x4x2bf16", "--kind", "bits,structured"]) == 0
    out = capsys.readouterr().out
    assert "v_mfma_f32_4x4x2bf16" in out and out.rstrip().endswith("0 mismatches against mmasim==2.1.1")
    for argv, word in ((["--kind", "gaussian"], "vector kind"), (["--instr", "HGMMA"], "HGMMA"),
                       (["-n", "0"], "-n 0")):
        assert mc.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and word in err and err.count("\n") == 1
