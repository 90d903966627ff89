"""How far a whole GEMM lands from the exact product: ``python -m golden gemm-error``.

For each K, random matrices are drawn (values rounded to the instruction's formats; scales
drawn as the kernel needs them), the GEMM is computed by :func:`golden.gemm`, and each output
is compared with the exact product ``sum_k (a_k sa_k)(b_k sb_k)``.  The exact value is formed
error-free: every term is split into an exact pair ``hi + lo`` (``a sa`` and ``b sb`` are exact
binary64 numbers; Dekker's TwoProduct with Veltkamp's split makes their product an unevaluated
sum), and the ``2K`` pairs are summed by :func:`math.fsum` (Shewchuk's exact partials), which
returns the exact sum correctly rounded to binary64.  The reference is therefore within
``2**-53`` relative of the exact value -- a million times below the smallest error reported --
where a plain float64 dot product would carry ``K * 2**-53`` and cancellation on top.

Relative error of an output is ``|D - exact| / |exact|`` (outputs whose exact value is 0 are
counted apart); the table gives the maximum and the mean over the ``M x N`` outputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .catalog import Instruction
from .formats import from_float, to_float
from .gemm import Kernel, Scaling, _kernel, _resolve, check_fits, gemm, k_slices

DISTS = ("uniform", "normal")
K_MAX = 1 << 16
SPLIT = float(2 ** 27 + 1)          # Veltkamp's constant for binary64


def _split(x: np.ndarray):
    g = SPLIT * x
    hi = g - (g - x)
    return hi, x - hi


def two_product(x: np.ndarray, y: np.ndarray):
    """``(p, e)`` with ``p = fl(x*y)`` and ``p + e = x*y`` exactly (Dekker; no overflow or underflow
    in the ranges drawn here: |x|, |y| stay within 2**-400 .. 2**400)."""
    p = x * y
    xh, xl = _split(x)
    yh, yl = _split(y)
    e = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
    return p, e


def exact_product(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``X @ Y`` exactly, correctly rounded to float64 (X [M, K], Y [K, N] exact float64 values)."""
    M, N = X.shape[0], Y.shape[1]
    out = np.empty((M, N))
    for m in range(M):
        p, e = two_product(X[m][:, None], Y)
        pt, et = p.T.tolist(), (e.T.tolist() if e.any() else None)
        for n in range(N):
            out[m, n] = math.fsum(pt[n] + et[n]) if et is not None else math.fsum(pt[n])
    return out


@dataclass
class Problem:
    """Random operands of one GEMM: bit patterns for :func:`golden.gemm` and the exact values
    ``X = A * scales``, ``Y = B * scales`` of the reference."""

    A: np.ndarray
    B: np.ndarray
    scale_A: np.ndarray | None
    scale_B: np.ndarray | None
    X: np.ndarray
    Y: np.ndarray


def _values(rng, dist: str, shape) -> np.ndarray:
    return rng.uniform(0.0, 1.0, shape) if dist == "uniform" else rng.standard_normal(shape)


def random_problem(ins: Instruction, kernel: Kernel, M: int, N: int, K: int, seed: int, dist: str) -> Problem:
    """The same matrices for every kernel and design of one instruction at one K (seeded by K)."""
    rng = np.random.default_rng([seed, K])
    fa, fb = ins.formats[:2]
    A, B = from_float(fa, _values(rng, dist, (M, K))), from_float(fb, _values(rng, dist, (K, N)))
    X, Y = to_float(fa, A), to_float(fb, B)
    sa = sb = None
    if kernel.scaling is Scaling.BLOCK:           # powers of two 2**-2 .. 2**2, exact in e8m0 and ue4m3
        nb = -(-K // ins.block_size)
        sa = from_float(ins.scale_format, np.exp2(rng.integers(-2, 3, (M, nb)).astype(float)))
        sb = from_float(ins.scale_format, np.exp2(rng.integers(-2, 3, (nb, N)).astype(float)))
        X = X * np.repeat(to_float(ins.scale_format, sa), ins.block_size, axis=1)[:, :K]
        Y = Y * np.repeat(to_float(ins.scale_format, sb), ins.block_size, axis=0)[:K]
    elif kernel.scaling is Scaling.GROUP:         # fp32 scales in [0.5, 2): a * sa is exact in binary64
        g, gn = kernel.group_k, kernel.group_n
        ng = -(-K // g)
        sa = from_float("f32", rng.uniform(0.5, 2.0, (M, ng)))
        sb = from_float("f32", rng.uniform(0.5, 2.0, (ng, -(-N // gn))))
        X = X * np.repeat(to_float("f32", sa), g, axis=1)[:, :K]
        Y = Y * np.repeat(np.repeat(to_float("f32", sb), g, axis=0)[:K], gn, axis=1)[:, :N]
    return Problem(A, B, sa, sb, X, Y)


def relative_error(D: np.ndarray, exact: np.ndarray) -> tuple[float, float, int]:
    """(max, mean) of ``|D - exact| / |exact|`` over outputs with ``exact != 0``, and how many were 0."""
    nz = exact != 0
    with np.errstate(all="ignore"):
        rel = np.abs(D[nz] - exact[nz]) / np.abs(exact[nz])
    if not rel.size:
        return float("nan"), float("nan"), int((~nz).sum())
    return float(rel.max()), float(rel.mean()), int((~nz).sum())


@dataclass
class Curve:
    """One line of the plot: an instruction under one kernel and one design."""

    ins: Instruction
    kernel: Kernel
    design: str                       # "catalog" or the FIELD=VALUE changes
    params: dict
    points: list                      # (K, max, mean, zeros)

    @property
    def label(self) -> str:
        design = "" if self.design == "catalog" else f" [{self.design}]"
        return f"{self.ins.arch} {self.ins.name} / {self.kernel.name}{design}"


def measure(curves: list[Curve], ks: list[int], M: int, N: int, seed: int, dist: str, progress=None):
    """Fill every curve's points; the exact reference is computed once per problem."""
    cache: dict = {}
    for curve in curves:
        for K in ks:
            ins, kernel = curve.ins, curve.kernel
            key = (ins.arch, ins.name, K, kernel.scaling, kernel.group_k, kernel.group_n)
            if key not in cache:
                prob = random_problem(ins, kernel, M, N, K, seed, dist)
                cache[key] = (prob, exact_product(prob.X, prob.Y))
            prob, exact = cache[key]
            out = kernel.out_format or ins.d_format
            D = to_float(out, gemm(prob.A, prob.B, instr=ins, kernel=kernel, params=curve.params or None,
                                   scale_A=prob.scale_A, scale_B=prob.scale_B))
            curve.points.append((K, *relative_error(D, exact)))
            if progress:
                progress(curve, curve.points[-1])


def plot(curves: list[Curve], path: str, title: str) -> None:
    """Error against K, log-log: one colour per curve, maximum solid, mean dashed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, c in enumerate(curves):
        ks = [p[0] for p in c.points]
        color = f"C{i % 10}"
        ax.plot(ks, [p[1] for p in c.points], "-o", color=color, ms=3, label=f"{c.label} (max)")
        ax.plot(ks, [p[2] for p in c.points], "--", color=color, lw=1, label="mean")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("K")
    ax.set_ylabel("relative error |D - exact| / |exact|")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, ncol=1)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse_ks(text: str) -> list[int]:
    """``64..16384`` (powers of two between), ``256,1024`` or ``4096``; one clear ValueError."""
    try:
        if ".." in text:
            lo, hi = (int(x) for x in text.split(".."))
            ks = []
            k = lo
            while k <= hi:
                ks.append(k)
                k *= 2
        else:
            ks = [int(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"--k {text!r}: give LO..HI (doubling from LO), a comma list or one K") from None
    if not ks or any(not 1 <= k <= K_MAX for k in ks):
        raise ValueError(f"--k {text!r}: every K must be between 1 and {K_MAX}")
    return ks


def make_curves(found: list[Instruction], kernels: list[str], designs: list[str]) -> list[Curve]:
    """One curve per instruction x kernel x design (``catalog`` first); checked before any work."""
    from .params import parse_params
    out = []
    for ins in found:
        for kname in kernels:
            kernel = _kernel(kname)
            for design in ["catalog"] + designs:
                changes = {} if design == "catalog" else parse_params(design)
                check_fits(_resolve(ins, None, changes or None), kernel)   # an invalid design is named here
                out.append(Curve(ins, kernel, design, changes, []))
    return out


M_MAX = 1024


def cmd_gemm_error(args) -> int:
    """The table (and the plot): every argument checked before any GEMM runs."""
    import sys

    from .catalog import select
    from .options import check_whole
    check_whole(args.seed, "--seed", 0)
    check_whole(args.m, "--m", 1, M_MAX)
    check_whole(args.n, "--n", 1, M_MAX)
    ks = parse_ks(args.k)
    if args.plot is not None:
        check_plot(args.plot)                              # before any work: the table is never lost to it
    kernels = [k for item in args.kernel or ["k-loop"] for k in item.split(",") if k]
    curves = make_curves(select(args.arch, args.instr), kernels, args.params or [])
    for c in curves:
        for K in ks:
            k_slices(c.ins, c.kernel, K)                   # every K fits every kernel, before any work
    print(f"# python -m golden gemm-error: M={args.m} N={args.n} seed={args.seed} dist={args.dist}; relative error "
          f"|D - exact| / |exact| against the exact product (error-free terms, math.fsum)")
    print("| instruction | kernel | design | K | max rel. error | mean rel. error |")
    print("|---|---|---|---:|---:|---:|", flush=True)

    def row(curve, point):
        K, mx, mean, zeros = point
        note = f" ({zeros} exact zeros left out)" if zeros else ""
        print(f"| {curve.ins.arch} {curve.ins.name} | {curve.kernel.name} | {curve.design} | {K} | "
              f"{mx:.3e} | {mean:.3e}{note} |", flush=True)

    measure(curves, ks, args.m, args.n, args.seed, args.dist, progress=row)
    if args.plot:
        sys.stdout.flush()                                 # the table is out before the plot is drawn
        title = f"golden.gemm relative error, {args.dist} inputs, M=N={args.m}x{args.n}, seed {args.seed}"
        try:
            plot(curves, args.plot, title)
        except OSError as e:
            raise ValueError(f"--plot {args.plot}: the plot could not be written ({e.strerror or e}); "
                             "the table above is complete") from None
        print(f"plot: {args.plot}", file=sys.stderr)
    return 0


PLOT_EXTRA = "pip install 'mma-rtl[probe]'"      # the probe extra brings matplotlib


def check_plot(path: str) -> None:
    """``--plot PATH`` checked before the work: a .png path a file can be written to, and matplotlib
    installed (one ValueError naming the extra that brings it)."""
    from .console import check_output
    if not str(path).lower().endswith(".png"):
        raise ValueError(f"--plot {path!r}: give a .png path")
    check_output(path, "--plot")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ValueError(f"--plot needs matplotlib, which is not installed: {PLOT_EXTRA} (the probe extra "
                         "brings it), or leave --plot out") from None


def add_parser(sub, arch_help: str, instr_help: str) -> None:
    """``gemm-error`` on the ``python -m golden`` command line."""
    from .gemm import PRESETS
    p = sub.add_parser("gemm-error", help="relative error of whole GEMMs against the exact product, by K")
    p.add_argument("arch", help=arch_help)
    p.add_argument("instr", help=instr_help)
    p.add_argument("--kernel", action="append", help=f"preset(s), repeatable or a comma list: {', '.join(PRESETS)} "
                   "(default k-loop)")
    p.add_argument("--k", default="64..16384", help="LO..HI (doubling), a comma list, or one K (default 64..16384)")
    p.add_argument("--params", action="append", metavar="F=...", help="a design of your own, FIELD=VALUE,... of "
                   "golden.Params; repeatable: one curve each beside the catalog's")
    p.add_argument("--m", type=int, default=32, help=f"rows of A, 1..{M_MAX} (default 32)")
    p.add_argument("--n", type=int, default=32, help=f"columns of B, 1..{M_MAX} (default 32)")
    p.add_argument("--seed", type=int, default=1, help="random seed, 0 or more (default 1)")
    p.add_argument("--dist", choices=DISTS, default="uniform", help="input values: uniform in [0, 1) (no "
                   "cancellation; default) or standard normal")
    p.add_argument("--plot", metavar="OUT.png", help="draw error against K (matplotlib)")
    p.set_defaults(func=cmd_gemm_error)
