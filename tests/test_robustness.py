"""The robustness battery (issue 12): what a new user tries, and what must come of it.

Bad input gets one clear line naming the option and what is valid, exit status 2 and no
traceback; a damaged build cache is rebuilt; a replay file names the unit that failed; the same
dot-add gives the same bits wherever it sits in a batch; memory follows the chunk, not the batch.
"""

from __future__ import annotations

import numpy as np

import golden


# ---- the same dot-add, the same bits -------------------------------------------------------------

def test_gps_nan_bits_do_not_depend_on_the_row():
    """numpy's SIMD lanes and its scalar tail make different NaN bits; golden's GPS result must not."""
    ins = golden.lookup("cdna2", "v_mfma_f32_16x16x16_bf16")
    rows = 17
    a = np.zeros((rows, ins.k))
    a[:, :3] = [np.inf, -np.inf, np.nan]
    b = np.zeros((rows, ins.k))
    b[:, :3] = 1.0
    d = golden.dot_add(ins, a, b, np.zeros(rows))
    assert set(d.tolist()) == {0x7FC00000}           # the canonical quiet NaN, as hw.gps computes it
    for n in (1, 5, 16, 33):                        # alone, or in batches with and without a tail
        assert set(golden.dot_add(ins, a[:1].repeat(n, 0), b[:1].repeat(n, 0), np.zeros(n)).tolist()) == {0x7FC00000}
