"""CPU time to regenerate one campaign block (65,536 vectors of hopper HMMA.16816.F32, seed 7) per vector
kind, in whichever tree is first on PYTHONPATH: the before/after of the compiled draws.

    python tools/vector_block_rate.py bits normal mixed structured all disputed
    mkdir -p ../old && git archive 2d44f85 | tar -x -C ../old && PYTHONPATH=../old python tools/vector_block_rate.py ...

Each kind is timed once after a warm-up block (compiles on a first run); the tree before the compiled
draws takes seconds a block for structured and all, so it is timed without a warm-up there.
"""

from __future__ import annotations

import sys
import time

import golden
from campaign.blocks import operands
from campaign.spec import Campaign

SLOW_BEFORE = ("structured", "all")


def main(kinds) -> int:
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    compiled = _has_compiled_draws()
    print(f"tree: {golden.__file__.rsplit('/golden/', 1)[0]} (compiled draws: {'yes' if compiled else 'no'})")
    for kind in kinds:
        c = Campaign(((ins.arch, ins.name),), device="golden", target=4 * 65536, seed=7, vectors=kind)
        if compiled or kind not in SLOW_BEFORE:
            operands(c, ins, 0)
        t0 = time.process_time()
        operands(c, ins, 1)
        dt = time.process_time() - t0
        print(f"{kind:10s} {dt * 1e3:10.1f} ms a block {c.block / dt:12,.0f} vectors/s", flush=True)
    return 0


def _has_compiled_draws() -> bool:
    try:
        import golden.rng  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["mixed"]))
