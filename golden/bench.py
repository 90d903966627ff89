"""Golden-model throughput: dot-adds per second per algorithm, both backends side by side.

Run ``python -m golden.bench`` (or ``make bench``).  Each row times
``golden.dot_add`` on a batch of random operands (``normal``: finite values
with nearby exponents, the common case; ``bits``: uniform random bit patterns,
a third or more of them NaN/inf, which take the special-value path),
``--repeat`` calls on the same vectors after a warm-up call, in one run: the
numpy path (one core), the compiled kernels (golden/kernels/) on one core and
on every core this process may use, and the vector generator
(``golden.vectors.random_operands``) that feeds them; the one-core columns twice, on uint64
operands (``u64``) and on the same values in their own width (``nrw``, ``narrow=True``), and the
targets read on the faster of the two.  One-core rates are medians
in process CPU time, which stays put when other processes take the CPU away;
the every-core rate is the median wall-clock rate (CPU time adds the threads
up).  Where the authors' reference model is installed (``pip install mma-rtl[reference]``:
mmasim, on torch), its rate on the same operands, one core's CPU time, is a column too
(``golden.bench_reference``; ``-`` where it has no model of the instruction).  The ratio
columns are read against the throughput targets: compiled/numpy >= 10, every core/one core >= 1.8
on two cores, generator/compiled >= 1, and f64 SFMA compiled/reference >= 10.
``--all`` times every catalog instruction, ``--only cdna3,SFMA`` the rows naming one of the words.

``--targets`` (and first in a default run, where mmasim is installed) times compiled golden and the
reference model on one pinned core, golden's operands in their own width, against each family's
target (fused 40x, GPS 10x, f64 SFMA 10x: :data:`REFERENCE_TARGETS`) and says PASS or FAIL per
row; ``--write-doc docs/golden.md`` writes that table into the doc between its markers.

A second table runs SFMA's binary64 fused multiply-add both ways on the same
operands in the same run: ``golden.fma.fma_f64`` (error-free transformations)
and ``golden.fma.fma_f64_integer`` (the two-limb integer datapath it replaced),
alone (fmas/s) and inside ``dot_add`` for the f64 SFMA instructions.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time

import numpy as np

from golden.console import exit_with

from . import bench_reference, fma, kernels, vectors
from .api import dot_add
from .catalog import CATALOG, lookup
from .descriptors import KernelCode
from .vectors import KINDS, random_operands

# (arch, instruction, the numpy path's old per-row target in dot-adds/s, no longer read, or None)
REPRESENTATIVES = [
    ("hopper", "HMMA.16816.F32", 5_000_000),
    ("ampere", "HMMA.16816.F32", None),
    ("ada", "QMMA.16832.F32.E4M3.E4M3", 3_000_000),
    ("hopper", "QGMMA.64xNx32.F32.E4M3.E5M2", None),
    ("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8", None),
    ("blackwell", "UTCOMMA.4X", None),
    ("cdna3", "v_mfma_f32_32x32x8_f16", None),
    ("cdna3", "v_mfma_f32_16x16x16_bf16", None),
    ("cdna3", "v_mfma_f32_32x32x16_fp8_fp8", None),
    ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8", None),
    ("cdna2", "v_mfma_f32_32x32x8_f16", 10_000_000),
    ("cdna2", "v_mfma_f32_32x32x4bf16", None),
    ("hopper", "DMMA.8x8x4", 1_000_000),
    ("cdna3", "v_mfma_f64_16x16x4_f64", None),
    ("cdna3", "v_mfma_f32_16x16x4_f32", None),
    ("hopper", "MMA.16832.F32.E4M3.E4M3", None),            # the compiled-path lowering (fp8 on f16 passes)
]


F64_SFMA = [("hopper", "DMMA.8x8x4"), ("cdna3", "v_mfma_f64_16x16x4_f64")]


def time_calls(fn, repeat: int) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of ``repeat`` calls of ``fn`` after one warm-up call."""
    fn()
    out = []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        t1, c1 = time.perf_counter(), time.process_time()
        out.append((t1 - t0, c1 - c0))
    return out


class Rate:
    """Per-call rates of ``n`` items: median, slowest and fastest call, median in CPU time."""

    def __init__(self, n: int, calls: list[tuple[float, float]]):
        walls = [n / w for w, _ in calls]
        self.median, self.low, self.high = statistics.median(walls), min(walls), max(walls)
        self.cpu = statistics.median(n / max(c, 1e-9) for _, c in calls)

    def __str__(self) -> str:
        return f"{self.median:11,.0f} [{self.low / 1e6:5.2f}, {self.high / 1e6:5.2f}M]"


def measure(ins, n: int, kind: str, repeat: int, seed: int = 0, backend: str = "numpy", threads=None,
            narrow: bool = False) -> Rate:
    """``golden.dot_add``'s rate on ``n`` rows of ``kind``: uint64 operands, or with ``narrow`` the same
    values in their formats' own width (``random_operands(..., narrow=True)``)."""
    rng = np.random.default_rng(seed)
    a, b, c, sa, sb = random_operands(ins, n, rng, kind, narrow=narrow)
    return Rate(n, time_calls(lambda: dot_add(ins, a, b, c, sa, sb, backend=backend, threads=threads), repeat))


def reference_rate(ins, n: int, kind: str, repeat: int, seed: int = 0) -> Rate | None:
    """The authors' reference model on the same operands (one core's CPU time), or None where it is
    not installed or has no model of ``ins`` (:mod:`golden.bench_reference`)."""
    rng = np.random.default_rng(seed)
    a, b, c, _, _ = random_operands(ins, n, rng, kind)
    call = bench_reference.reference_call(ins, a, b, c)
    return None if call is None else Rate(n, time_calls(call, repeat))


def generator_rate(ins, n: int, kind: str, repeat: int, seed: int = 0, narrow: bool = False) -> Rate:
    """Dot-adds' operands generated per second (``random_operands``, one core; uint64 or ``narrow``)."""
    rng = np.random.default_rng(seed)
    return Rate(n, time_calls(lambda: random_operands(ins, n, rng, kind, narrow=narrow), repeat))


def numpy_draws_rate(ins, n: int, kind: str, repeat: int, seed: int = 0) -> Rate:
    """:func:`generator_rate` drawing with numpy's own calls (the path for bit generators other than
    PCG64, and how every draw was made before golden/rng.py): the same vectors, for comparison."""
    saved = vectors._state
    vectors._state = lambda rng: None
    try:
        return generator_rate(ins, n, kind, repeat, seed)
    finally:
        vectors._state = saved


def word_rates(n: int = 4_000_000, repeat: int = 3) -> str:
    """PCG64 words a second on one core, numpy's ``random_raw`` and the compiled draws: the bound of every
    generator, whose streams are fixed sequences of words (bits: half a word an element, normal: 3.5)."""
    rng = np.random.default_rng(0)
    numpy_rate = Rate(n, time_calls(lambda: rng.bit_generator.random_raw(n), repeat)).cpu
    if not kernels.available():
        return f"PCG64 words/s, one core (CPU time): numpy's random_raw {numpy_rate:,.0f} (no numba: no compiled draws)"
    from . import rng as compiled
    from .vector_kernels import fill_bounded
    st, words = compiled.load(rng), np.empty(n, np.uint64)
    compiled_rate = Rate(n, time_calls(lambda: fill_bounded(st, words, np.uint64(2**64 - 1)), repeat)).cpu
    return (f"PCG64 words/s, one core (CPU time): numpy's random_raw {numpy_rate:,.0f} (a new array a call), "
            f"compiled draws {compiled_rate:,.0f} (into one array)")


def generators_table(rows, n: int, repeat: int) -> int:
    """Every vector kind's generator, compiled draws and numpy's calls, beside the compiled golden on one
    core on those vectors: one row per instruction and kind.  Returns the rows where the generator is
    slower than golden."""
    print(f"\nvector generators (golden.vectors.random_operands), rows/s, one core (CPU time), median of {repeat} "
          f"calls of {n:,} rows: compiled draws (golden/rng.py) and numpy's calls (the draws before them), "
          "and golden.dot_add compiled on one core on the same vectors")
    print(word_rates(max(64 * n, 100_000), repeat))
    print(f"{'arch':10s} {'instruction':32s} {'kind':10s} {'compiled':>11s} {'numpy':>11s} {'c/np':>6s} "
          f"{'golden 1':>11s} {'gen/golden':>10s}")
    slow = 0
    for ins in rows:
        for kind in KINDS:
            new, old = generator_rate(ins, n, kind, repeat), numpy_draws_rate(ins, n, kind, repeat)
            gold = (measure(ins, n, kind, repeat, backend="numba", threads=1).cpu if kernels.available()
                    else float("nan"))
            slow += new.cpu < gold
            print(f"{ins.arch:10s} {ins.name:32s} {kind:10s} {new.cpu:11,.0f} {old.cpu:11,.0f} "
                  f"{new.cpu / old.cpu:6.1f} {gold:11,.0f} {new.cpu / gold:10.2f}", flush=True)
    print(f"{slow} rows where generating is slower than checking (gen/golden < 1)")
    return slow


TARGET_SPEEDUP = 10          # compiled >= 10x numpy on one core
TARGET_SCALING = 1.8         # and >= 1.8x from one core to two
TARGET_F64_REFERENCE = 10    # f64 SFMA compiled >= 10x the reference model, one core each


def _forms(rate) -> tuple[Rate, Rate]:
    """``rate(narrow)`` on uint64 operands and on the same values in their own width: (uint64, narrow)."""
    return rate(False), rate(True)


def backends_table(rows, n: int, repeat: int, kinds=("normal", "bits"), reference: bool = True) -> int:
    """numpy, compiled on one core and on every core, the generator: one row per instruction and
    kind, same vector values, one run; golden's one-core rates and the generator's on uint64 operands
    and on operands in their own width (``narrow``) side by side.  The targets are read on the faster
    form of each.  Returns the number of rows short of a target."""
    cores = kernels.default_threads() if kernels.available() else 1
    print(f"dot-adds/s, median of {repeat} calls (one core: CPU time; {cores} cores: wall clock, operands in their "
          f"own width, and {cores}/1 the ratio of the wall-clock medians); "
          f"compiled kernels: {'numba' if kernels.available() else 'not installed'}")
    print("operands: u64 = uint64 (8 bytes an element), nrw = the same values in their own width "
          "(random_operands(..., narrow=True)); the ratios read the faster form of each column pair")
    reference = reference and bench_reference.available()
    print(f"reference model (mmasim): {'timed' if reference else 'not timed (not installed, or --no-reference)'}; "
          f"nb/ref = numba 1 / reference 1")
    print(f"{'arch':10s} {'instruction':32s} {'algorithm':9s} {'kind':6s} {'numpy 1 u64':>11s} {'numpy 1 nrw':>11s} "
          f"{'numba 1 u64':>11s} {'numba 1 nrw':>11s} {'numba ' + str(cores):>11s} {'gen u64':>11s} "
          f"{'gen nrw':>11s} {'reference 1':>11s} {'nb/np':>6s} {f'{cores}/1':>5s} {'gen/nb':>6s} {'nb/ref':>6s}")
    short = 0
    for ins in rows:
        for kind in kinds:
            npy = [r.cpu for r in _forms(lambda w: measure(ins, n, kind, repeat, narrow=w))]  # noqa: B023
            gen = [r.cpu for r in _forms(lambda w: generator_rate(ins, n, kind, repeat, narrow=w))]  # noqa: B023
            if kernels.available():
                wide, own = _forms(lambda w: measure(ins, n, kind, repeat, backend="numba", threads=1, narrow=w))  # noqa: B023
                many = measure(ins, n, kind, repeat, backend="numba", threads=cores, narrow=True)
                one = [wide.cpu, own.cpu]
                r1, rn, scale = max(one), many.median, many.median / own.median      # scaling: wall over wall
            else:
                one, r1, rn, scale = [float("nan")] * 2, float("nan"), float("nan"), float("nan")
            ref = reference_rate(ins, n, kind, repeat) if reference else None
            ref_cpu = ref.cpu if ref is not None else float("nan")
            speed, feed = r1 / max(npy), max(gen) / r1
            ok = speed >= TARGET_SPEEDUP and (cores < 2 or scale >= TARGET_SCALING) and feed >= 1
            if ref is not None and ins.algorithm == "SFMA" and ins.formats[3].name == "f64":
                ok = ok and r1 / ref_cpu >= TARGET_F64_REFERENCE
            short += not ok
            ref_txt = f"{ref_cpu:11,.0f}" if ref is not None else f"{'-':>11s}"
            print(f"{ins.arch:10s} {ins.name:32s} {ins.algorithm:9s} {kind:6s} {npy[0]:11,.0f} {npy[1]:11,.0f} "
                  f"{one[0]:11,.0f} {one[1]:11,.0f} {rn:11,.0f} {gen[0]:11,.0f} {gen[1]:11,.0f} {ref_txt} "
                  f"{speed:6.2f} {scale:5.2f} {feed:6.2f} {r1 / ref_cpu:6.1f} {'ok' if ok else 'short'}", flush=True)
    targets = (f"the targets (nb/np >= {TARGET_SPEEDUP}, {cores}/1 >= {TARGET_SCALING} where there are two cores, "
               f"gen/nb >= 1, f64 SFMA nb/ref >= {TARGET_F64_REFERENCE}; each on the faster operand form)")
    print(f"{short} rows short of {targets}" if short else f"every row meets {targets}")
    return short


# compiled golden / the reference model, one core pinned, operands in their own width: the least ratio
# each kernel family is held to (f64 SFMA only: f32 SFMA has no target)
REFERENCE_TARGETS = {KernelCode.FDA: 40, KernelCode.FDRDA: 40, KernelCode.GFDRDA: 40, KernelCode.GPS: 10,
                     KernelCode.SFMA: 10}
DOC_BEGIN, DOC_END = "<!-- golden.bench --targets: begin -->", "<!-- golden.bench --targets: end -->"


def reference_target(ins) -> int | None:
    """The least compiled/reference ratio ``ins`` is held to (:data:`REFERENCE_TARGETS`), or None."""
    code = ins.params and kernels.spec.kernel_code(ins.params)
    if code == KernelCode.SFMA and ins.formats[3].name != "f64":
        return None
    return REFERENCE_TARGETS.get(code)


def target_rows(rows) -> list:
    """The rows of ``rows`` with a reference target whose instruction the reference model computes."""
    return [ins for ins in rows if reference_target(ins) is not None and bench_reference.reference_op(ins) is not None]


WARM_S = 0.02          # untimed calls of a function before each of its timed calls in turn, at least this long


def time_in_turn(fns, repeat: int) -> list[list[tuple[float, float]]]:
    """(wall, CPU) seconds of ``repeat`` calls of each of ``fns``, one timed call of each a round: a
    round's calls run moments apart, so the load of the moment (a shared machine's neighbours) falls
    on each of them alike.  Each timed call follows untimed calls of the same function for at least
    :data:`WARM_S` (one at least), so it finds the caches as back-to-back calls leave them: right
    after the reference model's call, golden's f64 SFMA on 200,000 rows took 2x as long, and 4-6
    calls in a row to come back to its pace (its 16 MB of operands had left the caches)."""
    out = [[] for _ in fns]
    for _ in range(repeat):
        for fn, calls in zip(fns, out):
            t_end = time.perf_counter() + WARM_S
            fn()
            while time.perf_counter() < t_end:
                fn()
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            t1, c1 = time.perf_counter(), time.process_time()
            calls.append((t1 - t0, c1 - c0))
    return out


def paired_rates(ins, n: int, kind: str, repeat: int, seed: int = 0) -> tuple[float, float, float]:
    """Compiled golden (one thread, operands in their own width) and the reference model on the same
    ``n`` dot-adds of ``kind``, their calls in turn (:func:`time_in_turn`): ``(golden, reference,
    ratio)``, the rates CPU-time medians and the ratio the median of the rounds' ratios."""
    a, b, c, sa, sb = random_operands(ins, n, np.random.default_rng(seed), kind, narrow=True)
    ra, rb, rc, _, _ = random_operands(ins, n, np.random.default_rng(seed), kind)
    ref_call = bench_reference.reference_call(ins, ra, rb, rc)
    gold, ref = time_in_turn([lambda: dot_add(ins, a, b, c, sa, sb, backend="numba", threads=1), ref_call], repeat)
    ratios = [r_cpu / max(g_cpu, 1e-9) for (_, g_cpu), (_, r_cpu) in zip(gold, ref)]
    return Rate(n, gold).cpu, Rate(n, ref).cpu, statistics.median(ratios)


def reference_ratios(rows, n: int, repeat: int, kinds=("normal", "bits")) -> list[tuple]:
    """``(ins, kind, golden, reference, ratio, target, ok)`` per row and kind: compiled golden on one
    core and the reference model on the same core, pinned, their calls in turn in one run
    (:func:`paired_rates`)."""
    out = []
    with kernels.pinned():
        for ins in target_rows(rows):
            for kind in kinds:
                gold, ref, ratio = paired_rates(ins, n, kind, repeat)
                target = reference_target(ins)
                out.append((ins, kind, gold, ref, ratio, target, ratio >= target))
    return out


def targets_table(results, n: int, repeat: int, only: str = "") -> str:
    """:func:`reference_ratios` as a markdown table, with the command that makes it."""
    sel = f' --only "{only}"' if only else ""
    lines = [f"Compiled golden against the reference model (mmasim), one core pinned, {n:,} dot-adds, {repeat} "
             f"calls of each in turn (a golden call, then a reference call), golden's operands in their own width; "
             f"rates are CPU-time medians, the ratio the median of the {repeat} pairs' ratios "
             f"(`python -m golden.bench --targets -n {n} --repeat {repeat}{sel}`):", "",
             "| arch | instruction | algorithm | kind | golden, dot-adds/s | reference, dot-adds/s | ratio | target "
             "| verdict |", "|---|---|---|---|---:|---:|---:|---:|---|"]
    for ins, kind, gold, ref, ratio, target, ok in results:
        lines.append(f"| {ins.arch} | {ins.name} | {ins.algorithm} | {kind} | {gold:,.0f} | {ref:,.0f} | {ratio:.1f}x "
                     f"| {target}x | {'PASS' if ok else 'FAIL'} |")
    fails = sum(not r[-1] for r in results)
    lines += ["", f"{len(results) - fails} of {len(results)} rows PASS."]
    return "\n".join(lines)


def doc_problem(path: str) -> str | None:
    """Why ``path`` cannot take the targets table (unreadable, or no markers), or None."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        return f"--write-doc {path!r}: {e.strerror or e}"
    i, j = text.find(DOC_BEGIN), text.find(DOC_END)
    if i < 0 or j < i:
        return f"--write-doc {path!r} has no '{DOC_BEGIN}' ... '{DOC_END}' lines to write the table between"
    return None


def write_doc(path: str, table: str) -> None:
    """Replace the text between :data:`DOC_BEGIN` and :data:`DOC_END` in ``path`` by ``table``."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    i, j = text.find(DOC_BEGIN), text.find(DOC_END)
    if i < 0 or j < i:
        raise ValueError(f"{path} has no '{DOC_BEGIN}' ... '{DOC_END}' markers to write the table between")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text[:i + len(DOC_BEGIN)] + "\n" + table + "\n" + text[j:])


@contextlib.contextmanager
def sfma_f64_path(fn):
    """Run SFMA's binary64 steps through ``fn``: ``algorithms.sfma`` reads ``golden.fma.fma_f64`` at
    each call, so swapping the module attribute swaps the path (for this comparison only)."""
    saved = fma.fma_f64
    fma.fma_f64 = fn
    try:
        yield
    finally:
        fma.fma_f64 = saved


def _pair(new: Rate, old: Rate) -> str:
    return f"{str(new):>28s} {new.cpu:11,.0f} {str(old):>28s} {old.cpu:11,.0f} {new.cpu / old.cpu:6.2f}"


def fma_table(n: int, repeat: int) -> None:
    """fma_f64 against fma_f64_integer, same operands, side by side."""
    from .vectors import random_bits, random_values
    eft, integer = fma.fma_f64, fma.fma_f64_integer
    print(f"\nSFMA binary64: fma_f64 (error-free transformations) vs fma_f64_integer (integer datapath), "
          f"same operands, median [slowest, fastest] of {repeat} calls")
    print(f"{'what':44s} {'kind':6s} {'fma_f64 /s':>28s} {'cpu':>11s} {'fma_f64_integer /s':>28s} {'cpu':>11s} "
          f"{'ratio':>6s}  (ratio of the CPU-time medians)")
    rng = np.random.default_rng(1)
    for kind, gen in (("normal", random_values), ("bits", random_bits)):
        a, b, c = (gen("f64", n * 4, rng) for _ in range(3))
        new = Rate(n * 4, time_calls(lambda: eft(a, b, c), repeat))  # noqa: B023
        old = Rate(n * 4, time_calls(lambda: integer(a, b, c), repeat))  # noqa: B023
        print(f"{'fma alone (fmas/s)':44s} {kind:6s} {_pair(new, old)}", flush=True)
    for arch, name in F64_SFMA:
        ins = lookup(arch, name)
        for kind in ("normal", "bits"):
            new = measure(ins, n, kind, repeat)          # the numpy path: the one fma_f64 is part of
            with sfma_f64_path(integer):
                old = measure(ins, n, kind, repeat)
            print(f"{arch + ' ' + name + ' (dot-adds/s)':44s} {kind:6s} {_pair(new, old)}", flush=True)


def select(rows, only: str) -> list:
    """The rows whose ``arch instruction algorithm`` contains one of the comma-separated words."""
    words = [w.strip() for w in only.split(",") if w.strip()]
    if not words:
        return list(rows)
    return [i for i in rows if any(w in f"{i.arch} {i.name} {i.algorithm}" for w in words)]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m golden.bench", description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=200_000, help="dot-adds per batch (default 200000)")
    p.add_argument("--repeat", type=int, default=5, help="timed calls per row (default 5)")
    p.add_argument("--all", action="store_true", help="every catalog instruction, not one per algorithm")
    p.add_argument("--no-fma", action="store_true", help="skip the fma_f64 before/after table")
    p.add_argument("--fma-only", action="store_true", help="only the fma_f64 before/after table")
    p.add_argument("--generators-only", action="store_true", help="only the vector generators' table")
    p.add_argument("--no-generators", action="store_true", help="skip the vector generators' table")
    p.add_argument("--gen-n", type=int, default=None,
                   help="rows per generator call (default -n, at most 65536: a campaign block)")
    p.add_argument("--no-reference", action="store_true", help="skip the reference model's column")
    p.add_argument("--targets", action="store_true",
                   help="only the table against the reference model (one core pinned) with PASS/FAIL")
    p.add_argument("--write-doc", metavar="PATH", default=None,
                   help="with --targets: write the table into PATH between its golden.bench markers")
    p.add_argument("--only", default="", metavar="WORDS",
                   help="comma-separated words; rows whose 'arch instruction algorithm' contains one "
                        "(e.g. cdna3,GPS,SFMA); default every row")
    args = p.parse_args(argv)
    gen_n = args.gen_n or min(args.n, 65_536)
    if args.fma_only:
        fma_table(args.n, args.repeat)
        return 0
    rows = list(CATALOG) if args.all else [lookup(a, n) for a, n, _ in REPRESENTATIVES]
    rows = select(rows, args.only)
    if not rows:
        print(f"error: --only {args.only!r} matches no row; words are matched in 'arch instruction algorithm' "
              f"(e.g. cdna3, GPS, SFMA)", file=sys.stderr)
        return 2
    if args.generators_only:
        generators_table(rows, gen_n, args.repeat)
        return 0
    if args.write_doc and not args.targets:
        print("error: --write-doc writes the --targets table; give both", file=sys.stderr)
        return 2
    problem = doc_problem(args.write_doc) if args.write_doc else None
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.targets or not args.no_reference:
        fails = _targets(rows, args)
        if args.targets:
            return 0 if fails is not None else 2
    backends_table(rows, args.n, args.repeat, reference=not args.no_reference)
    if not args.no_generators:
        generators_table(rows, gen_n, args.repeat)
    if not args.no_fma:
        fma_table(args.n, args.repeat)
    return 0


def _targets(rows, args) -> int | None:
    """Print (and with ``--write-doc`` write) the targets table; its failing rows, or None when it
    cannot be made (no reference model, no numba)."""
    if not (kernels.available() and bench_reference.available()):
        print("targets against the reference model: not measured (needs numba and mmasim: "
              "pip install 'mma-rtl[reference]')", file=sys.stderr if args.targets else sys.stdout)
        return None
    if not target_rows(rows):
        print("error: no selected row has a reference target (the fused families, GPS, f64 SFMA)", file=sys.stderr)
        return None
    results = reference_ratios(rows, args.n, args.repeat)
    table = targets_table(results, args.n, args.repeat, args.only)
    print(table + "\n", flush=True)
    if args.write_doc:
        write_doc(args.write_doc, table)
    return sum(not r[-1] for r in results)


if __name__ == "__main__":
    exit_with(main)
