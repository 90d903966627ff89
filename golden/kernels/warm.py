"""Compile (or load from the cache) every compiled kernel of golden once, with each one's CPU time.

``python -m golden.kernels.warm``: with ``NUMBA_CACHE_DIR`` an empty directory it measures the
first compiles a fresh checkout pays (docs/golden.md, "The compile cache"); run once before a
parallel test run, it fills the cache so that no two workers compile the same kernel.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from golden.console import exit_with


def first_calls():
    """``[(label, callable)]``: one call per algorithm family's kernel, then the vector draws."""
    import golden
    from golden.catalog import instructions
    from golden.descriptors import KernelCode
    from golden.kernels import spec
    from golden.vectors import random_operands

    seen = {}
    for ins in instructions():
        seen.setdefault(ins.datapath.params.base, ins)
    calls = []
    for base, ins in seen.items():
        ops = random_operands(ins, 4, np.random.default_rng(0), "bits")
        calls.append((f"{base} kernel ({ins.arch} {ins.name})",
                      lambda ins=ins, ops=ops: golden.dot_add(ins, *ops, backend="numba", threads=1)))
    fda = next(i for i in seen.values() if spec.kernel_code(i.params) == KernelCode.FDA)
    calls.append(("vector draws (golden.vector_kernels)",
                  lambda: random_operands(fda, 4, np.random.default_rng(0), "mixed")))
    return calls


def main() -> int:
    from . import available
    if not available():
        print("error: numba is not installed (pip install numba): no compiled kernels to warm",
              file=sys.stderr)
        return 2
    os.environ["GOLDEN_BACKEND"] = "numba"          # the vector draws too
    from . import amd, amd_int, fused, gdfs_int, gps, sfma  # noqa: F401  (imports out of the timings)
    total = 0.0
    for label, call in first_calls():
        t = time.process_time()
        call()
        dt = time.process_time() - t
        total += dt
        print(f"{label:52s} {dt:6.1f} s CPU", flush=True)
    print(f"{'all':52s} {total:6.1f} s CPU")
    return 0


if __name__ == "__main__":
    exit_with(main)
