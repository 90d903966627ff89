"""What the tests of the C golden library share: the catalog's distinct datapaths a C kernel computes,
and the count of rows where C and golden's numpy path differ."""

from __future__ import annotations

import numpy as np

import golden
from golden import c_library, clib
from golden.kernels import spec
from golden.vectors import KINDS, random_operands

__all__ = ["datapaths", "mismatches"]


def datapaths(codes) -> list:
    """One catalog instruction per distinct datapath whose algorithm's kernel code is in ``codes`` and
    that the C library models (golden.c_library.supports: golden.kernels' designs and F="exact", less
    numba's own fma check, which the C kernels, on C99's fma, do not need)."""
    seen: dict = {}
    for ins in golden.CATALOG:
        dp = ins.datapath
        if spec.kernel_code(dp.params) in codes and c_library.supports(dp):
            seen.setdefault(dp, ins)
    return list(seen.values())


def _mixed(wide, own):
    """One operand set in mixed widths, each read in its own: a in its format's width, b in uint32
    where its words fit (else uint64), c in uint64."""
    b = wide[1]
    b = b.astype(np.uint32) if b.dtype.itemsize > 4 and not (b >> np.uint64(32)).any() else b
    return (own[0], b, wide[2], *wide[3:])


def mismatches(ins, folder, n: int, kinds=KINDS, seed: int = 0, narrow: bool = True, mixed: bool = False) -> int:
    """Rows where C and the numpy path differ over ``n`` rows of each vector kind: uint64 operands, and
    with ``narrow`` the same values in their formats' own widths (and with ``mixed``, in mixed widths)."""
    bad = 0
    for i, kind in enumerate(kinds):
        ops = random_operands(ins, n, np.random.default_rng([seed, i]), kind)
        want = golden.dot_add(ins, *ops, backend="numpy")
        got = clib.dot_add(ins, *ops, folder=folder)
        assert got.dtype == want.dtype and got.shape == want.shape
        bad += int((got != want).sum())
        if narrow:
            own = random_operands(ins, n, np.random.default_rng([seed, i]), kind, narrow=True)
            bad += int((clib.dot_add(ins, *own, folder=folder) != want).sum())
            if mixed:
                bad += int((clib.dot_add(ins, *_mixed(ops, own), folder=folder) != want).sum())
    return bad
