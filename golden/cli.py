"""Command line: ``python -m golden list | run | trace | formats | coverage | gemm-error | gemm-bench | gemm-compare``.

Examples::

    python -m golden list hopper
    python -m golden list all HGMMA,UTCOMMA
    python -m golden run hopper HGMMA -n 100000 --seed 1 --vectors normal
    python -m golden trace cdna3 v_mfma_f32_32x32x8_f16 --a 2048,2048 --b 2048,-2048 --c -0.000001
    python -m golden trace hopper HMMA.16816.F32 --a 0x3c00,0x0001 --b 0x3c00,0x3c00 --c 0
    python -m golden gemm-error hopper QGMMA.64xNx32.F32.E4M3.E4M3 --kernel fp8-no-promotion,fp8-promote-4
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from . import gemm_bench, gemm_compare, gemm_error
from .api import BACKEND_ENV, check_numba_environment, dot_add, trace
from .catalog import ARCHITECTURES, lookup, select
from .cover import cli as cover_cli
from .formats import FORMATS, INF, NAN, ZERO, decode, from_float, get_format, to_float
from .options import Parser, check_whole
from .provenance import BASES, STATUSES, counts
from .vectors import VECTOR_KINDS, random_operands


def _parse_values(text: str | None, fmt, count: int | None, what: str, unit: str = "K") -> np.ndarray:
    """Comma-separated decimal values or 0x bit patterns, zero-padded to ``count``; every problem is
    a ValueError naming ``--what`` and the item."""
    fmt = get_format(fmt)
    items = [] if text is None else [t.strip() for t in text.split(",")]
    if items and any(not t for t in items):
        pos = next(n for n, t in enumerate(items) if not t) + 1
        raise ValueError(f"--{what} {text!r}: value {pos} is empty; give comma-separated numbers or 0x bit patterns")
    if count is not None and len(items) > count:
        raise ValueError(f"--{what}: {len(items)} values given, the instruction has {unit}")
    bits = []
    for t in items:
        if t.lower().startswith("0x"):
            try:
                b = int(t, 16)
            except ValueError:
                raise ValueError(f"--{what}: {t!r} is not a hexadecimal bit pattern "
                                 "(0x followed by 0-9, a-f)") from None
            if b >> fmt.storage_bits:
                raise ValueError(f"--{what}: bit pattern {t} is wider than {fmt.name} ({fmt.storage_bits} bits)")
            bits.append(b)
            continue
        try:
            v = float(t)
        except ValueError:
            raise ValueError(f"--{what}: {t!r} is neither a number nor a 0x bit pattern") from None
        try:
            b = int(from_float(fmt, np.float64(v)))
        except ValueError as e:
            raise ValueError(f"--{what}: {e}") from None
        exact = float(to_float(fmt, np.array([b], np.uint64))[0])
        if exact != v and not (np.isnan(v) and np.isnan(exact)):
            print(f"note: --{what} value {t} is not exact in {fmt.name}; using the nearest, {exact!r}",
                  file=sys.stderr)
        bits.append(b)
    if count is not None:
        bits += [0] * (count - len(bits))
    return np.array(bits, np.uint64)


def cmd_list(args) -> int:
    arch, instr = args.arch, args.instr
    if args.arch_option:                 # --arch A NAME: the one positional given is the instruction
        if instr != "all":
            raise ValueError(f"--arch {args.arch_option} and two positionals ({arch} {instr}): give ARCH INSTR, "
                             f"or --arch ARCH INSTR")
        arch, instr = args.arch_option, arch
    found = select(arch, instr)
    if args.counts:
        print_counts(found)
        return 0
    for ins in found:
        prov = ins.provenance
        print(f"{ins}  {prov.summary()}")
        if args.verbose:
            print("    " + prov.describe().replace("\n", "\n    "))
    print(f"{len(found)} instruction(s)", file=sys.stderr)
    return 0


def print_counts(found) -> None:
    """The table of provenance counts (README's "How far to trust each entry")."""
    table = counts(found)
    print(f"| basis | {' | '.join(STATUSES)} | entries |")
    print("|---|" + "---:|" * (len(STATUSES) + 1))
    for basis in BASES:
        row = [table.get((basis, s), 0) for s in STATUSES]
        if sum(row):
            print(f"| {basis} | " + " | ".join(str(n) for n in row) + f" | {sum(row)} |")
    total = [sum(table.get((b, s), 0) for b in BASES) for s in STATUSES]
    print("| all | " + " | ".join(str(n) for n in total) + f" | {sum(total)} |")


def cmd_formats(args) -> int:
    print(f"{'name':10s} {'bits':>4s} {'exp':>3s} {'man':>3s} {'bias':>5s} {'emin':>6s} {'max finite':>12s}  inf  nan")
    for f in FORMATS.values():
        print(f"{f.name:10s} {f.storage_bits:4d} {f.exp_bits:3d} {f.man_bits:3d} {f.bias:5d} {f.emin:6d} "
              f"{f.max_finite:12.6g}  {'yes' if f.inf else 'no ':3s}  {f.nan}")
    return 0


MAX_N = 1_000_000_000          # about ten minutes per instruction; more is a typo, not a plan
RUN_CHUNK = 1_000_000          # vectors drawn and run at a time: memory stays flat for any -n


def cmd_run(args) -> int:
    check_whole(args.n, "-n", 1, MAX_N)
    check_whole(args.seed, "--seed", 0)
    found = select(args.arch, args.instr)
    rng = np.random.default_rng(args.seed)
    print(f"{'instruction':44s} {'algorithm':9s} {'vectors':>9s} {'time s':>8s} {'dot-adds/s':>11s} "
          f"{'finite':>7s} {'zero':>6s} {'inf':>6s} {'nan':>6s}", flush=True)
    for ins in found:
        dt, counts = 0.0, np.zeros(4, np.int64)
        for lo in range(0, args.n, RUN_CHUNK):
            a, b, c, sa, sb = random_operands(ins, min(RUN_CHUNK, args.n - lo), rng, args.vectors)
            t0 = time.perf_counter()
            d = dot_add(ins, a, b, c, sa, sb)
            dt += time.perf_counter() - t0
            cls = decode(ins.d_format, d).cls
            counts += [int(((cls != INF) & (cls != NAN)).sum()), int((cls == ZERO).sum()),
                       int((cls == INF).sum()), int((cls == NAN).sum())]
        print(f"{ins.name:44s} {ins.algorithm:9s} {args.n:9d} {dt:8.3f} {args.n / dt:11.0f} "
              + " ".join(f"{int(x):{w}d}" for x, w in zip(counts, (7, 6, 6, 6))), flush=True)
    return 0


def cmd_trace(args) -> int:
    ins = lookup(args.arch, args.instr)
    fa, fb, fc, _ = ins.formats
    a = _parse_values(args.a, fa, ins.k, "a", f"K={ins.k}")
    b = _parse_values(args.b, fb, ins.k, "b", f"K={ins.k}")
    c = _parse_values("0" if args.c is None else args.c, fc, None, "c")
    if len(c) != 1:
        raise ValueError("--c takes one value")
    sa = sb = None
    if ins.scale_format:
        nblk = ins.k // ins.block_size
        one = str(1.0)
        blocks = f"{nblk} scale blocks (K={ins.k} / block size {ins.block_size})"
        sa = _parse_values(args.scale_a or ",".join([one] * nblk), ins.scale_format, nblk, "scale-a", blocks)
        sb = _parse_values(args.scale_b or ",".join([one] * nblk), ins.scale_format, nblk, "scale-b", blocks)
    else:
        given = [f"--{n}" for n, v in (("scale-a", args.scale_a), ("scale-b", args.scale_b)) if v is not None]
        if given:
            raise ValueError(f"{' and '.join(given)}: {ins.arch} {ins.name} takes no block scales")
    print(trace(ins, a, b, c[0], sa, sb))
    return 0


ARCH_HELP = f"architecture(s): {', '.join(ARCHITECTURES)}, an alias, a comma list, or all"
INSTR_HELP = "instruction name(s) or family prefix(es) (HGMMA, HMMA.16816, UTCOMMA), a comma list, or all"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m golden", description="Bit-accurate golden model of GPU MMA instructions.")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="list catalog instructions")
    ls.add_argument("arch", nargs="?", default="all", help=ARCH_HELP + " (default all)")
    ls.add_argument("instr", nargs="?", default="all", help=INSTR_HELP + " (default all)")
    ls.add_argument("--arch", dest="arch_option", help=argparse.SUPPRESS)     # the older spelling
    ls.add_argument("-v", "--verbose", action="store_true", help="every piece of evidence behind each entry")
    ls.add_argument("--counts", action="store_true", help="only the table of entries per basis and status")
    ls.set_defaults(func=cmd_list)
    fm = sub.add_parser("formats", help="list number formats")
    fm.set_defaults(func=cmd_formats)
    run = sub.add_parser("run", help="run matching instructions on random vectors")
    run.add_argument("arch", help=ARCH_HELP)
    run.add_argument("instr", help=INSTR_HELP)
    run.add_argument("-n", type=int, default=100_000, help=f"dot-adds per instruction, 1..{MAX_N:,} (default 100000)")
    run.add_argument("--seed", type=int, default=1, help="random seed, 0 or more (default 1)")
    run.add_argument("--vectors", choices=VECTOR_KINDS, default="mixed", help="vector distribution (default mixed)")
    run.set_defaults(func=cmd_run)
    tr = sub.add_parser("trace", help="one dot-add, stage by stage")
    tr.add_argument("arch", help="one architecture")
    tr.add_argument("instr", help="one instruction")
    for name in ("a", "b"):
        tr.add_argument(f"--{name}", help="comma-separated values or 0x bit patterns (zero-padded to K)")
    tr.add_argument("--c", help="one value or 0x bit pattern (default 0)")
    tr.add_argument("--scale-a", help="block scales of a (values or 0x bytes; default 1.0)")
    tr.add_argument("--scale-b", help="block scales of b")
    tr.set_defaults(func=cmd_trace)
    cover_cli.add_parser(sub, ARCH_HELP, INSTR_HELP)
    gemm_error.add_parser(sub, ARCH_HELP, INSTR_HELP)
    gemm_bench.add_parser(sub)
    gemm_compare.add_parser(sub)
    return p


VALUE_OPTIONS = ("--a", "--b", "--c", "--scale-a", "--scale-b")


def join_negative_values(argv: list[str], options=VALUE_OPTIONS) -> list[str]:
    """``--a -2048,2048`` as ``--a=-2048,2048``: argparse takes a value that starts with ``-`` (and is
    not one negative number) for an option and refuses it; both spellings mean the same."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in options and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and argv[i + 1] not in ("-h", "--help") and not argv[i + 1].startswith("--"):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(join_negative_values(argv))
    except SystemExit as e:                  # a refused option (one line, golden.options.Parser) or --help
        return e.code if isinstance(e.code, int) else 2
    try:
        if os.environ.get(BACKEND_ENV) != "numpy":
            check_numba_environment()        # numba's settings, before anything is printed
        return args.func(args)
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
