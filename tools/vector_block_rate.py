"""CPU time to regenerate one campaign block (65,536 vectors of hopper HMMA.16816.F32, seed 7) per vector
kind, in whichever tree is first on PYTHONPATH: the before/after of the compiled draws, and in one run
uint64 blocks beside blocks in their own width (``narrow``, what a campaign worker now draws for golden).

    python tools/vector_block_rate.py bits normal mixed structured all disputed [--repeat 5]
    mkdir -p ../old && git archive 2d44f85 | tar -x -C ../old && PYTHONPATH=../old python tools/vector_block_rate.py ...

Each kind is timed after a warm-up block (compiles on a first run), the median of ``--repeat`` blocks, the
two forms interleaved; the tree before the compiled draws takes seconds a block for structured and all,
so it is timed once without a warm-up there.
"""

from __future__ import annotations

import inspect
import statistics
import sys
import time

import golden
from campaign.blocks import operands
from campaign.spec import Campaign

SLOW_BEFORE = ("structured", "all")


def main(argv) -> int:
    repeat = 5
    if "--repeat" in argv:
        i = argv.index("--repeat")
        repeat, argv = int(argv[i + 1]), argv[:i] + argv[i + 2:]
    kinds = argv or ["mixed"]
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    compiled = _has_compiled_draws()
    narrow = "narrow" in inspect.signature(operands).parameters
    print(f"tree: {golden.__file__.rsplit('/golden/', 1)[0]} (compiled draws: {'yes' if compiled else 'no'}; "
          f"narrow blocks: {'yes' if narrow else 'no'}); CPU time, median of {repeat if compiled else 1} blocks")
    for kind in kinds:
        c = Campaign(((ins.arch, ins.name),), device="golden", target=4 * 65536, seed=7, vectors=kind)
        forms = {"uint64": lambda: operands(c, ins, 1)}  # noqa: B023
        if narrow:
            forms["narrow"] = lambda: operands(c, ins, 1, narrow=True)  # noqa: B023
        times = {name: [] for name in forms}
        for _ in range(repeat if compiled else 1):
            for name, fn in forms.items():
                if compiled or kind not in SLOW_BEFORE:
                    fn()
                t0 = time.process_time()
                fn()
                times[name].append(time.process_time() - t0)
        line = "  ".join(f"{name} {statistics.median(t) * 1e3:8.1f} ms a block {c.block / statistics.median(t):12,.0f} "
                         f"vectors/s" for name, t in times.items())
        print(f"{kind:10s} {line}", flush=True)
    return 0


def _has_compiled_draws() -> bool:
    try:
        import golden.rng  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["mixed"]))
