"""golden's kernels on a GPU (numba-cuda), every family, against the CPU path, bit for bit, with rates.

    python tools/gpu_kernel_check.py [--rows N] [--instr ARCH:NAME ...] [--kinds bits,normal] [--cpu numba|numpy]

For each instruction (by default one or more per kernel family: :data:`DEFAULT_INSTR`) and operand
kind (``golden.vectors.random_operands``): ``N`` rows computed by ``golden.kernels.cuda`` and by
``golden.dot_add`` (``--cpu numba``: the compiled CPU path on every core; ``numpy``: the reference
path, for the simulator), compared bit for bit; rates of both (the GPU's kernel alone and with the
copies to and from it).  Then the same operands with the planted rounding fault on the GPU
(``Prepared.faulty``): each family must give mismatches, so the comparison can fail.  Prints a line
per case as it goes and a summary; writes ``$OUT/gpu_kernel_check.json`` when ``OUT`` is set, after
every case (a run cut short leaves what it finished).  A family whose kernel the GPU compiler
refuses is reported (with which of ``_common``'s helpers compile alone) and the others still run.
Exit 0: every row matched and every family's fault was caught; 1: not; 2: no GPU (or no
numba-cuda), or bad arguments.  ``NUMBA_ENABLE_CUDASIM=1`` runs it on numba-cuda's simulator (CPU
only: a few dozen rows).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import golden  # noqa: E402
from golden.kernels import cuda as gpu  # noqa: E402
from golden.vectors import random_operands  # noqa: E402

# One per family first (a run cut short has still covered each): FDA (Hopper f16), GDFS (Blackwell
# MXF4), FDRDA (CDNA3 xf32), GFDRDA (CDNA3 fp8), GPS (CDNA2 f16), SFMA (f64 DMMA); then CoFDA
# (Ampere's chain of passes), TF32, FP8 with block scales, the fp8 mma.sync compiled path with
# c_last, SFMA in f32 (CDNA2)
DEFAULT_INSTR = ("hopper:HGMMA.64xNx16.F32", "blackwell:UTCOMMA.MXF4.E8", "cdna3:v_mfma_f32_16x16x8_xf32",
                 "cdna3:v_mfma_f32_16x16x32_fp8_fp8", "cdna2:v_mfma_f32_32x32x4_2b_f16", "ampere:DMMA.884",
                 "ampere:HMMA.16816.F32", "ampere:HMMA.1688.F32.TF32", "blackwell:UTCQMMA.SF.F32.E4M3.E4M3.E8",
                 "hopper:MMA.16832.F32.E4M3.E4M3", "cdna2:v_mfma_f32_32x32x1_2b_f32")
KINDS = ("bits", "normal")         # --kinds structured too: its generator is slow (about 1 ms a row)
CPU_PATHS = ("numba", "numpy")
DEFAULT_ROWS = 500_000             # per instruction and kind: a million rows per instruction
SIMULATED_ROWS = 32
WARM_ROWS = 8192                   # a first call this large compiles the CPU path's kernel


def _family(ins) -> str:
    """The kernel family of ``ins``: its algorithm's kernel code (FDA, GDFS, FDRDA, GFDRDA, GPS, SFMA)."""
    from golden.kernels import spec
    return spec.kernel_code(ins.datapath.params).name


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _gpu_bits(prepared, dtype):
    """The GPU's d bits for a prepared call and the kernel's seconds alone."""
    from numba import cuda
    cuda.synchronize()
    out, kernel_s = _timed(lambda: (gpu.launch(prepared), cuda.synchronize())[0])
    got, down_s = _timed(lambda: out.copy_to_host().astype(dtype))
    return got, kernel_s, down_s


def check_case(ins, kind: str, rows: int, seed: int, cpu: str, warmer=None) -> dict:
    """One instruction and kind: rows, mismatches, the planted fault's mismatches and rates.  The GPU
    first, then the CPU path (``warmer``: the process compiling its kernel meanwhile, waited for)."""
    ops = random_operands(ins, rows, np.random.default_rng(seed), kind)
    first = gpu.family(ins) not in gpu._KERNELS
    _, compile_s = _timed(lambda: gpu.dot_add(ins, *(None if x is None else x[:64] for x in ops)))   # compile
    prepared, up_s = _timed(lambda: gpu.prepare(ins, *ops))
    dtype = ins.datapath.d_format.dtype
    got, kernel_s, down_s = _gpu_bits(prepared, dtype)
    faulty, _, _ = _gpu_bits(prepared.faulty(), dtype)
    del prepared
    if warmer is not None:
        warmer.wait()
    _, warm_s = _timed(lambda: golden.dot_add(ins, *(None if x is None else x[:WARM_ROWS] for x in ops),
                                              backend=cpu))                                      # compile
    want, cpu_s = _timed(lambda: golden.dot_add(ins, *ops, backend=cpu))
    bad = np.nonzero(got != want)[0]
    case = {"arch": ins.arch, "instr": ins.name, "algorithm": ins.algorithm, "family": _family(ins),
            "module": gpu.family(ins), "kind": kind,
            "rows": rows, "mismatches": int(len(bad)), "planted_fault_mismatches": int((faulty != want).sum()),
            "cpu_path": cpu, "cpu_rows_per_s": rows / cpu_s, "gpu_kernel_rows_per_s": rows / kernel_s,
            "gpu_with_copies_rows_per_s": rows / (up_s + kernel_s + down_s),
            "gpu_compile_s": compile_s if first else 0.0, "cpu_warm_s": warm_s}
    if len(bad):
        i = int(bad[0])
        case["first_mismatch"] = {"row": i, "gpu": int(got[i]), "cpu": int(want[i])}
    return case


def start_warmers(instructions, cpu: str, count: int) -> dict:
    """Processes compiling the CPU path's kernels (one per GPU module's first instruction, at most
    ``count``) into numba's on-disk cache while this one compiles the GPU's: the compiles overlap
    instead of adding up.  By module name."""
    if cpu != "numba" or count < 1:
        return {}
    firsts = {}
    for ins in instructions:
        firsts.setdefault(gpu.family(ins), f"{ins.arch}:{ins.name}")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return {module: subprocess.Popen([sys.executable, __file__, "--warm", spec], env=env, stdout=subprocess.DEVNULL)
            for module, spec in list(firsts.items())[:count]}


def warm(spec: str) -> int:
    """Compile the CPU path's kernel for one instruction (a few rows): the ``--warm`` process."""
    ins = golden.lookup(*spec.split(":", 1))
    golden.dot_add(ins, *random_operands(ins, 8, np.random.default_rng(0), "normal"), backend="numba")
    return 0


def diagnose() -> list[str]:
    """Which of ``_common``'s helpers the GPU compiler refuses, each in a one-thread kernel."""
    from numba import cuda

    from golden.kernels.cuda import _device
    C = _device.device_modules(cuda)["C"]
    buf = np.arange(64, dtype=np.uint8)
    probes = {
        "f64_from_bits": lambda o: o.__setitem__(0, C.f64_from_bits(np.uint64(4607182418800017408))),
        "ftrunc": lambda o: o.__setitem__(0, C.ftrunc(2.5)),
        "pow2": lambda o: o.__setitem__(0, C.pow2(-3)),
        "load": lambda o: o.__setitem__(0, C.load(buf, 2, 3)),
        "word32_value_exp": lambda o: o.__setitem__(0, C.word32_value_exp(np.uint64(0x3F800000))[0]),
        "fma64": lambda o: o.__setitem__(0, C.fma64(1.5, 2.0, 0.25)),
    }
    lines = []
    for name, body in probes.items():
        try:
            cuda.jit(body)[1, 1](np.zeros(1))
            lines.append(f"diagnose {name}: ok")
        except Exception as e:                     # report and go on: the point is the list
            lines.append(f"diagnose {name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    return lines


def _parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    simulated = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    ap.add_argument("--rows", type=int, default=SIMULATED_ROWS if simulated else DEFAULT_ROWS,
                    help="rows per instruction and kind")
    ap.add_argument("--instr", nargs="+", default=list(DEFAULT_INSTR), metavar="ARCH:NAME")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--cpu", default="numba", help=f"the CPU path compared against: {', '.join(CPU_PATHS)}")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--warm-processes", type=int, default=0 if simulated else len(gpu.FAMILIES),
                    help="processes compiling the CPU path's kernels meanwhile (0: none)")
    ap.add_argument("--warm", metavar="ARCH:NAME", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def _validated(args):
    """The instructions and kinds asked for; ValueError naming what is wrong and what is valid."""
    if args.rows < 1:
        raise ValueError(f"--rows must be a positive number of rows (got {args.rows})")
    if args.cpu not in CPU_PATHS:
        raise ValueError(f"--cpu must be one of {', '.join(CPU_PATHS)} (got {args.cpu!r})")
    kinds = args.kinds.split(",")
    unknown = [k for k in kinds if k not in golden.vectors.KINDS]
    if unknown:
        raise ValueError(f"--kinds must be from {', '.join(golden.vectors.KINDS)} (got {', '.join(unknown)})")
    instructions = []
    for spec in args.instr:
        if ":" not in spec:
            raise ValueError(f"--instr takes ARCH:NAME, e.g. hopper:HGMMA.64xNx16.F32 (got {spec!r})")
        ins = golden.lookup(*spec.split(":", 1))
        if not gpu.supports(ins):
            raise ValueError(f"{spec} is not computed by the GPU kernels: designs the compiled CPU kernels compute "
                             f"are (golden.kernels.cuda.supports)")
        instructions.append(ins)
    return instructions, kinds


def _families(cases: list, failed: dict) -> dict:
    """Per family: rows, mismatches, the planted fault's mismatches, whether it was caught."""
    fams: dict = {}
    for c in cases:
        f = fams.setdefault(c["family"], {"rows": 0, "mismatches": 0, "planted_fault_mismatches": 0})
        for key in ("rows", "mismatches", "planted_fault_mismatches"):
            f[key] += c[key]
    for name, (_, error) in failed.items():
        fams.setdefault(name, {"rows": 0, "mismatches": 0, "planted_fault_mismatches": 0})["error"] = error
    for f in fams.values():
        f["caught"] = f["planted_fault_mismatches"] > 0
        f["ok"] = "error" not in f and f["mismatches"] == 0 and f["caught"]
    return fams


def _summary(device: str, cases: list, failed: dict, t0: float) -> dict:
    fams = _families(cases, failed)
    return {"device": device, "cpu_cores": len(os.sched_getaffinity(0)), "rows": sum(c["rows"] for c in cases),
            "mismatches": sum(c["mismatches"] for c in cases),
            "planted_fault_mismatches": sum(c["planted_fault_mismatches"] for c in cases),
            "families": fams, "ok": bool(fams) and all(f["ok"] for f in fams.values()),
            "elapsed_s": time.perf_counter() - t0, "cases": cases}


def _write(summary: dict) -> None:
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "gpu_kernel_check.json").write_text(json.dumps(summary, indent=1) + "\n")


def _line(c: dict) -> str:
    return (f"{c['arch']} {c['instr']} ({c['family']}) {c['kind']}: {c['rows']:,} rows, {c['mismatches']} mismatches, "
            f"planted fault {c['planted_fault_mismatches']}; CPU ({c['cpu_path']}) {c['cpu_rows_per_s']:,.0f}/s, "
            f"GPU kernel {c['gpu_kernel_rows_per_s']:,.0f}/s ({c['gpu_with_copies_rows_per_s']:,.0f}/s with copies)"
            + (f", GPU compile {c['gpu_compile_s']:.1f} s" if c["gpu_compile_s"] else "")
            + (f", CPU compile {c['cpu_warm_s']:.1f} s" if c["cpu_warm_s"] > 1 else ""))


def run_cases(instructions, kinds, args, device: str, t0: float) -> tuple[list, dict]:
    """Every instruction and kind (:func:`check_case`), printed and saved as they finish: the cases,
    and the families whose GPU kernel failed (kernel code name: (module, error))."""
    warmers = start_warmers(instructions, args.cpu, args.warm_processes)
    cases, failed = [], {}
    for ins in instructions:
        if any(gpu.family(ins) == module for module, _ in failed.values()):
            continue                               # its module failed to compile already
        print(f"[{time.perf_counter() - t0:.0f} s] {ins.arch} {ins.name} ({_family(ins)}): operands, "
              f"{'compile, ' if gpu.family(ins) not in gpu._KERNELS else ''}GPU, CPU", flush=True)
        for kind in kinds:
            try:
                cases.append(check_case(ins, kind, args.rows, args.seed, args.cpu, warmers.get(gpu.family(ins))))
            except Exception as e:                 # the GPU compiler's refusal: say which helper, go on
                error = f"{ins.arch} {ins.name} {kind}: {type(e).__name__}: {str(e)[:2000]}"
                print(f"error: {error}", file=sys.stderr, flush=True)
                traceback.print_exc(limit=-6)      # where it failed: a library's version can be the cause
                try:
                    lines = diagnose()
                except Exception as d:             # the helpers themselves do not compile: that is the answer
                    lines = [f"diagnose: {type(d).__name__}: {str(d).splitlines()[0][:200] if str(d) else ''}"]
                for line in lines:
                    print(f"  {line}", file=sys.stderr, flush=True)
                failed[_family(ins)] = (gpu.family(ins), error)
                break
            print(f"[{time.perf_counter() - t0:.0f} s] {_line(cases[-1])}", flush=True)
            _write(_summary(device, cases, failed, t0))
    for proc in warmers.values():                  # a family that failed left its warmer unwaited
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return cases, failed


def main(argv=None) -> int:
    args = _parse(argv)
    if args.warm:
        return warm(args.warm)
    try:                                           # the arguments first: no GPU is needed to refuse them
        instructions, kinds = _validated(args)
    except (ValueError, KeyError, TypeError) as e:
        print(f"error: {str(e).strip(chr(39))}", file=sys.stderr)
        return 2
    if not gpu.available():
        print("error: no GPU for numba-cuda (pip install '.[cuda]' on a machine with one, or set "
              "NUMBA_ENABLE_CUDASIM=1 for its simulator)", file=sys.stderr)
        return 2
    from numba import cuda
    t0 = time.perf_counter()
    device = "simulator" if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" else cuda.get_current_device().name
    device = device.decode() if isinstance(device, bytes) else str(device)
    print(f"{device}: {len(instructions)} instruction(s), {args.rows:,} rows per kind, kinds {','.join(kinds)}",
          flush=True)
    cases, failed = run_cases(instructions, kinds, args, device, t0)
    summary = _summary(device, cases, failed, t0)
    _write(summary)
    for name, f in summary["families"].items():
        print(f"  {name}: {f['rows']:,} rows, {f['mismatches']} mismatches, planted fault "
              f"{f['planted_fault_mismatches']} ({'caught' if f['caught'] else 'NOT caught'})"
              + (" FAILED TO RUN" if "error" in f else ""))
    print(f"{device}: {summary['rows']:,} rows checked, {summary['mismatches']} mismatches; planted rounding fault "
          f"caught in {sum(f['caught'] for f in summary['families'].values())} of {len(summary['families'])} "
          f"families; {summary['elapsed_s']:.0f} s; {'ok' if summary['ok'] else 'FAILED'}")
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
