"""golden's FDA kernel on a GPU (numba-cuda) against the CPU path, bit for bit, with rates.

    python tools/gpu_kernel_check.py [--rows N] [--instr ARCH:NAME ...] [--kinds bits,normal]

For each instruction and operand kind (``golden.vectors.random_operands``): ``N`` rows computed by
``golden.kernels.cuda`` and by ``golden.dot_add`` (the compiled CPU path on every core), compared
bit for bit; rates of both (the GPU's kernel alone and with the copies to and from it).  Then the
planted rounding fault on the GPU (``fault=True``) must give mismatches: the comparison can fail.
Prints a line per case and a summary; writes ``$OUT/gpu_kernel_check.json`` when ``OUT`` is set.
Exit 0: every row matched and the fault was caught; 1: not; 2: no GPU (or no numba-cuda).
``NUMBA_ENABLE_CUDASIM=1`` runs it on numba-cuda's simulator (CPU only, a few hundred rows).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import golden  # noqa: E402
from golden.kernels import cuda as gpu  # noqa: E402
from golden.vectors import random_operands  # noqa: E402

# FDA (Hopper f16), CoFDA (Ampere's chain of passes), TF32, FP8 with block scales (Blackwell)
DEFAULT_INSTR = ("hopper:HGMMA.64xNx16.F32", "ampere:HMMA.16816.F32", "ampere:HMMA.1688.F32.TF32",
                 "blackwell:UTCQMMA.SF.F32.E4M3.E4M3.E8")
KINDS = ("bits", "normal")         # --kinds structured too: its generator is slow (about 1 ms a row)
WARM_ROWS = 8192                   # a first call this large compiles the CPU path's parallel kernel too


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def check_case(ins, kind: str, rows: int, seed: int) -> dict:
    """One instruction and kind: rows, mismatches and rates."""
    from numba import cuda
    ops = random_operands(ins, rows, np.random.default_rng(seed), kind)
    golden.dot_add(ins, *(None if x is None else x[:WARM_ROWS] for x in ops), backend="numba")   # compile
    want, cpu_s = _timed(lambda: golden.dot_add(ins, *ops, backend="numba"))
    gpu.dot_add(ins, *(None if x is None else x[:64] for x in ops))                          # compile
    prepared, up_s = _timed(lambda: gpu.prepare(ins, *ops))
    cuda.synchronize()
    out, kernel_s = _timed(lambda: (gpu.launch(prepared), cuda.synchronize())[0])
    got, down_s = _timed(lambda: out.copy_to_host().astype(want.dtype))
    bad = np.nonzero(got != want)[0]
    case = {"arch": ins.arch, "instr": ins.name, "algorithm": ins.algorithm, "kind": kind, "rows": rows,
            "mismatches": int(len(bad)), "cpu_rows_per_s": rows / cpu_s, "gpu_kernel_rows_per_s": rows / kernel_s,
            "gpu_with_copies_rows_per_s": rows / (up_s + kernel_s + down_s)}
    if len(bad):
        i = int(bad[0])
        case["first_mismatch"] = {"row": i, "gpu": int(got[i]), "cpu": int(want[i])}
    return case


def planted_fault_caught(ins, rows: int, seed: int) -> int:
    """Mismatches of the GPU kernel with the planted rounding fault against the CPU path."""
    ops = random_operands(ins, rows, np.random.default_rng(seed), "normal")
    return int((gpu.dot_add(ins, *ops, fault=True) != golden.dot_add(ins, *ops, backend="numba")).sum())


def diagnose(ins) -> None:
    """Which of the kernel's helpers the GPU compiler refuses: a one-thread kernel each."""
    from numba import cuda

    from golden.kernels import spec as S
    gpu._compile() if gpu._kernel is None else None
    C = gpu.C
    dp = ins.datapath
    fmts, vtab, etab, _ = S.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)
    buf = np.arange(64, dtype=np.uint8)
    probes = {
        "f64_from_bits": lambda o: o.__setitem__(0, C.f64_from_bits(np.uint64(4607182418800017408))),
        "ftrunc": lambda o: o.__setitem__(0, C.ftrunc(2.5)),
        "pow2": lambda o: o.__setitem__(0, C.pow2(-3)),
        "load": lambda o: o.__setitem__(0, C.load(buf, 2, 3)),
        "word32_value_exp": lambda o: o.__setitem__(0, C.word32_value_exp(np.uint64(0x3F800000))[0]),
        "value_exp": lambda o: o.__setitem__(0, C.value_exp(fmts, vtab, etab, S.A, np.uint64(0x3C00))[0]),
        "finish": lambda o: o.__setitem__(0, C.finish(fmts, S.D, 3.0, 3.0, -1, 3, -1, 0, True, False)),
    }
    for name, body in probes.items():
        try:
            cuda.jit(body)[1, 1](np.zeros(1))
            print(f"  diagnose {name}: ok")
        except Exception as e:                     # report and go on: the point is the list
            print(f"  diagnose {name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    simulated = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    ap.add_argument("--rows", type=int, default=256 if simulated else 500_000, help="rows per instruction and kind")
    ap.add_argument("--instr", nargs="+", default=list(DEFAULT_INSTR), metavar="ARCH:NAME")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if not gpu.available():
        print("error: no GPU for numba-cuda (pip install '.[cuda]' on a machine with one, or set "
              "NUMBA_ENABLE_CUDASIM=1 for its simulator)", file=sys.stderr)
        return 2
    try:
        instructions = [golden.lookup(*spec.split(":", 1)) for spec in args.instr]
        kinds = args.kinds.split(",")
        unknown = [k for k in kinds if k not in golden.vectors.KINDS]
        if args.rows < 1 or unknown or not all(gpu.supports(i) for i in instructions):
            raise ValueError(f"--rows must be positive, --kinds from {', '.join(golden.vectors.KINDS)}, and every "
                             f"instruction an FDA-family one without c_last (got {args.rows}, {unknown}, {args.instr})")
    except (ValueError, KeyError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from numba import cuda
    device = "simulator" if simulated else cuda.get_current_device().name
    device = device.decode() if isinstance(device, bytes) else str(device)
    cases = []
    for ins in instructions:
        for kind in kinds:
            try:
                cases.append(check_case(ins, kind, args.rows, args.seed))
            except Exception as e:                 # the GPU compiler's refusal: say which helper, then stop
                print(f"error: {ins.arch} {ins.name} {kind}: {type(e).__name__}: {e}", file=sys.stderr)
                diagnose(ins)
                return 1
            c = cases[-1]
            print(f"{ins.arch} {ins.name} {kind}: {c['rows']:,} rows, {c['mismatches']} mismatches; CPU "
                  f"{c['cpu_rows_per_s']:,.0f}/s, GPU kernel {c['gpu_kernel_rows_per_s']:,.0f}/s "
                  f"({c['gpu_with_copies_rows_per_s']:,.0f}/s with copies)", flush=True)
    caught = planted_fault_caught(instructions[0], min(args.rows, 100_000), args.seed)
    rows = sum(c["rows"] for c in cases)
    mismatches = sum(c["mismatches"] for c in cases)
    summary = {"device": device, "cpu_cores": len(os.sched_getaffinity(0)), "rows": rows, "mismatches": mismatches,
               "planted_fault_mismatches": caught, "cases": cases}
    print(f"{device}: {rows:,} rows checked, {mismatches} mismatches; planted rounding fault: {caught} mismatches "
          f"({'caught' if caught else 'NOT caught'})")
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "gpu_kernel_check.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0 if mismatches == 0 and caught else 1


if __name__ == "__main__":
    sys.exit(main())
