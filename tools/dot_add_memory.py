"""Peak memory of golden.dot_add on large batches: ``python tools/dot_add_memory.py [CASE ...]``.

Each case runs in its own process and prints the operands' bytes and the process's peak
resident memory (ru_maxrss) before and after the dot-adds.  Cases:

* ``hgmma``: 10,000,000 HGMMA.64xNx16.F32 dot-adds of uint16 operands (0.66 GB);
* ``broadcast``: a of shape (1000, 1, 16) against b (10000, 16): 10,000,000 dot-adds from 30 KB;
* ``utcomma``: 2,000,000 block-scaled UTCOMMA.4X dot-adds (uint8 fp4 operands, uint8 scales).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import numpy as np

CASES = ("hgmma", "broadcast", "utcomma")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024       # Linux: KiB


def _operands(case: str):
    import golden
    rng = np.random.default_rng(1)
    if case == "hgmma":
        ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
        n = 10_000_000
        a = rng.integers(0, 0x7C00, (n, ins.k), dtype=np.uint16)       # finite f16 patterns
        b = rng.integers(0, 0x7C00, (n, ins.k), dtype=np.uint16)
        return ins, (a, b, rng.integers(0, 0x7F800000, n, dtype=np.uint32), None, None)
    if case == "broadcast":
        ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
        a = rng.integers(0, 0x7C00, (1000, 1, ins.k), dtype=np.uint16)
        b = rng.integers(0, 0x7C00, (10000, ins.k), dtype=np.uint16)
        return ins, (a, b, np.zeros(1, np.uint32), None, None)
    if case == "utcomma":
        ins = golden.lookup("blackwell", "UTCOMMA.4X")
        n = 2_000_000
        nblk = ins.k // ins.block_size
        a = rng.integers(0, 16, (n, ins.k), dtype=np.uint8)
        b = rng.integers(0, 16, (n, ins.k), dtype=np.uint8)
        sa = rng.integers(0x30, 0x48, (n, nblk), dtype=np.uint8)
        sb = rng.integers(0x30, 0x48, (n, nblk), dtype=np.uint8)
        return ins, (a, b, np.zeros(n, np.uint32), sa, sb)
    raise SystemExit(f"unknown case {case!r}; valid: {', '.join(CASES)}")


def measure(case: str) -> None:
    import golden
    ins, ops = _operands(case)
    before = _peak_mb()
    nbytes = sum(x.nbytes for x in ops if x is not None)
    t0 = time.perf_counter()
    d = golden.dot_add(ins, *ops)
    dt = time.perf_counter() - t0
    print(f"{case:10s} {ins.name:20s} {d.size:>11,d} dot-adds  operands {nbytes / 1e6:8.1f} MB  "
          f"peak before {before:7.0f} MB  after {_peak_mb():7.0f} MB  (+{_peak_mb() - before:.0f} MB)  {dt:6.1f} s",
          flush=True)


def main(argv) -> int:
    if len(argv) == 1 and argv[0] in CASES:
        measure(argv[0])
        return 0
    for case in argv or CASES:
        if case not in CASES:
            print(f"error: unknown case {case!r}; valid: {', '.join(CASES)}", file=sys.stderr)
            return 2
        subprocess.run([sys.executable, __file__, case], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
