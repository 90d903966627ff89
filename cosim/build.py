"""Elaborate a unit to Verilog and build it with Verilator inside the harness (cached).

One build directory per configuration:
``build/cosim/<arch>/<instr>/<hash>``, where the hash covers the generated
Verilog (with Amaranth's ``src`` attributes, which hold absolute paths, left
out), the harness, the Verilator flags and parameters and the tool versions.
A configuration whose hash has a complete build is not rebuilt; one whose
hash was built for another instruction (the same datapath) is copied.

Builds and copies happen in a scratch folder renamed into place when complete,
and each stamp records the executable's size and SHA-256: a build whose
executable does not match (truncated, damaged) is built again, as is the shared
cache of Verilator's run-time objects when a file differs from its manifest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

from golden.paths import build_dir

from . import simulator, toolchain

REPO = Path(__file__).resolve().parent.parent


BUILD_ROOT = build_dir("cosim")      # builds, replay files and lint runs (golden.paths: MMA_BUILD_DIR)


def check_make_safe(root: Path) -> None:
    """Raise :class:`BuildError` (one line) when Verilator's generated makefile could not build in ``root``: make
    splits paths at spaces, so a build folder (or the project's folder, whose C++ testbench file the
    makefile names) with whitespace in its path is refused up front, not after a failed build."""
    for folder, what in ((Path(root), "the build folder"), (REPO, "the project's folder")):
        if any(ch.isspace() for ch in str(folder)):
            fix = ("set MMA_BUILD_DIR to a folder without one, e.g. MMA_BUILD_DIR=/tmp/mma-build (make passes it on)"
                   if what == "the build folder" else "move the project to a folder without one")
            raise BuildError(f"{what} {str(folder)!r} has a space in its path, which Verilator's generated makefile "
                             f"cannot build in: {fix}")


def check_build_root(root: Path | None = None) -> None:
    """Raise :class:`BuildError` (one line, how to choose another folder) unless the build folder can
    be written (and built in: :func:`check_make_safe`); commands call it before they print or build anything."""
    root = Path(root) if root is not None else BUILD_ROOT
    check_make_safe(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix=".writable"):
            pass
    except OSError as e:
        raise BuildError(f"the build folder {root} cannot be written ({e.strerror or e}): set MMA_BUILD_DIR "
                         "to a writable folder (e.g. MMA_BUILD_DIR=/tmp/mma-build; make passes it on)") from None
HARNESS = REPO / "tb" / "cosim_harness.sv"
HARNESS_DPI = REPO / "tb" / "cosim_dpi.cpp"
TOP = "cosim_harness"
UNIT_MODULE = "cosim_unit"
UNIT_FILE = "cosim_unit.v"
EXE = TOP                     # cocotb's runner names the executable after the toplevel

# Verilator flags of the simulation build.  cocotb's runner passes --public-flat-rw,
# which keeps every signal of the unit visible through VPI and costs build time
# and speed; the testbench only touches the harness's ports, which carry
# public_flat_rw/rd metacomments.  (A public internal signal may change from
# outside at any time, so Verilator re-evaluates every logic cone that reads
# one at each eval: with --public-depth 1, the whole datapath twice a cycle.)
# Lint warnings belong to cosim.lint, not to the build log.
SIM_FLAGS = ("--no-public-flat-rw", "-Wno-fatal", "-Wno-lint", "-Wno-style")
WAVE_FLAGS = {"fst": ("--trace-fst", "--trace-structs"), "vcd": ("--trace-structs",)}   # vcd: the runner's --trace


class BuildError(RuntimeError):
    pass


@dataclass(frozen=True)
class UnitInterface:
    """What the harness needs to know about a unit."""

    in_width: int
    out_width: int
    latency: int
    initiation_interval: int


def unit_interface(component) -> UnitInterface:
    """Check that ``component`` follows the unit contract and read its widths and timing."""
    from amaranth.hdl import Shape
    from amaranth.lib import wiring

    name = type(component).__name__
    if not isinstance(component, wiring.Component):
        raise BuildError(f"{name} is not an amaranth.lib.wiring.Component")
    members = component.signature.members
    for port, flow in (("i", wiring.In), ("o", wiring.Out)):
        if port not in members or not members[port].is_signature or members[port].flow != flow:
            raise BuildError(f"{name}: the unit needs an {'input' if port == 'i' else 'output'} stream port "
                             f"`{port}` ({flow.name}(amaranth.lib.stream.Signature(width)))")
        sub = members[port].signature.members
        if not {"payload", "valid", "ready"} <= set(sub.keys()):
            raise BuildError(f"{name}.{port} is not a stream (needs payload, valid, ready)")
    widths = [Shape.cast(getattr(component, p).payload.shape()).width for p in ("i", "o")]
    timing = []
    for attr in ("latency", "initiation_interval"):
        v = getattr(component, attr, None)
        if not isinstance(v, int) or isinstance(v, bool) or v < (0 if attr == "latency" else 1):
            raise BuildError(f"{name}.{attr} must be an int (cycles), got {v!r}")
        timing.append(v)
    return UnitInterface(widths[0], widths[1], timing[0], timing[1])


UNUSED_DESIGN_WARNING = r"(?s).* created but never used$"       # Amaranth's UnusedElaboratable (UnusedMustUse)


def quiet_unused_designs() -> None:
    """Ignore Amaranth's ``UnusedElaboratable`` warnings in this process from now on (a command's ``main``
    calls it): a design refused before it was elaborated (a Params change the RTL does not have, a build that
    fails) would otherwise print one warning per block at exit, burying the refusal's one line.  A user cannot
    act on them; the tests check them where they matter (tests/hw)."""
    warnings.filterwarnings("ignore", message=UNUSED_DESIGN_WARNING)


def elaborate(component, name: str = UNIT_MODULE) -> str:
    """Verilog text of ``component`` (amaranth.back.verilog), top module ``name``."""
    toolchain.find_yosys()
    from amaranth.back import verilog
    return verilog.convert(component, name=name)


_SRC_ATTR = re.compile(r'\(\*\s*src\s*=\s*"[^"]*"\s*\*\)\s*')


def normalise_verilog(text: str) -> str:
    """The Verilog without ``(* src = "path:line" *)`` attributes (absolute paths) and the generator banner."""
    text = _SRC_ATTR.sub("", text)
    return re.sub(r"^/\* Generated by .*?\*/\n", "", text)


@dataclass
class Build:
    """A built simulation: the harness around one unit."""

    dir: Path
    key: str
    arch: str
    instr: str
    in_width: int
    out_width: int
    latency: int
    initiation_interval: int
    waves: bool
    cached: bool = False
    seconds: float = 0.0
    source: str = "built"            # built | cached | copied
    meta: dict = field(default_factory=dict)

    @property
    def wave_format(self):
        """``fst`` or ``vcd`` for a waves build, else None."""
        return self.meta.get("wave_format")

    @property
    def verilog(self) -> Path:
        return self.dir / UNIT_FILE

    @property
    def exe(self) -> Path:
        return self.dir / EXE

    @property
    def log(self) -> Path:
        return self.dir / "build.log"


def safe_name(name: str) -> str:
    """``name`` as one path component (build directories, failure files)."""
    return re.sub(r"[^A-Za-z0-9._+-]", "_", name)


@contextlib.contextmanager
def locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def read_stamp(d: Path, exe: str = EXE):
    """The stamp of a complete, undamaged build in ``d``, else None (the build is redone): the
    executable must have the size and SHA-256 its stamp recorded when the build finished."""
    try:
        stamp = json.loads((d / "stamp.json").read_text())
        size = (d / exe).stat().st_size
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("exe_bytes") != size or stamp.get("exe_sha256") != _sha256(d / exe):
        return None
    return stamp


def _sha256(path: Path) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def checksums(d: Path, exe: str = EXE) -> dict:
    """What :func:`read_stamp` checks, recorded in the stamp of a finished build."""
    return {"exe_bytes": (d / exe).stat().st_size, "exe_sha256": _sha256(d / exe)}


def _scratch(d: Path) -> Path:
    """A fresh folder next to ``d`` to build in; renamed to ``d`` only when complete, so that an
    interrupted build or copy never leaves a ``d`` that looks usable.  Left-overs of interrupted
    builds of ``d`` go first (the caller holds ``d``'s lock: nobody else is building it)."""
    for old in d.parent.glob(f".{d.name}.tmp*"):
        shutil.rmtree(old, ignore_errors=True)
    tmp = d.with_name(f".{d.name}.tmp{os.getpid()}-{threading.get_ident()}")
    tmp.mkdir(parents=True)
    return tmp


def _install(tmp: Path, d: Path) -> None:
    """Put the finished folder ``tmp`` in ``d``'s place."""
    if d.exists():
        shutil.rmtree(d)
    os.rename(tmp, d)


@dataclass(frozen=True)
class Sources:
    """What a build compiles besides the harness: files generated for it (``{name: text}``, written
    into the build folder; the first is the unit's), files of a design on disk, include folders and
    defines, and Verilator flags of their own.  :meth:`digest` is what of them the build key hashes."""

    generated: dict
    files: tuple = ()
    include_dirs: tuple = ()
    defines: dict = field(default_factory=dict)
    flags: tuple = ()

    def digest(self) -> str:
        """The generated text alone (so an Amaranth unit's key is what it always was), plus, for a design on
        disk, the content hash of each file and of each file in its include folders, and the defines."""
        text = "\n".join(self.generated.values())
        if not (self.files or self.include_dirs or self.defines or self.flags):
            return text
        parts = [text, json.dumps(sorted(self.defines.items()), default=str), json.dumps(list(self.flags))]
        parts += [f"{Path(f).name}:{_sha256(Path(f))}" for f in self.files]
        for d in self.include_dirs:
            parts += sorted(f"{f.relative_to(d)}:{_sha256(f)}" for f in Path(d).rglob("*") if f.is_file())
        return "\n".join(parts)

    def verilator_args(self) -> list:
        """Verilator arguments for the include folders and defines (the files go as sources)."""
        args = [f"+incdir+{d}" for d in self.include_dirs]
        for k, v in self.defines.items():
            args.append(f"+define+{k}" if v is True else f"+define+{k}={int(v) if isinstance(v, bool) else v}")
        return args


def plan_build(component, arch: str, instr: str, *, waves: bool = False,
               root: Path | None = None) -> tuple[Build, str]:
    """The :class:`Build` that :func:`build_unit` would produce (not built yet) and the Verilog text.

    The key hashes what the executable depends on; the unit's declared latency
    and initiation interval do not change it (they are read from the component).
    """
    iface = unit_interface(component)
    text = elaborate(component)
    check_ports(text)
    return plan_sources(Sources({UNIT_FILE: text}), iface, arch, instr, waves=waves, root=root), text


def plan_sources(sources: Sources, iface: UnitInterface, arch: str, instr: str, *, waves: bool = False,
                 root: Path | None = None) -> Build:
    """The :class:`Build` of the harness around ``sources`` (a module ``cosim_unit`` of ``iface``'s widths)."""
    tc = toolchain.setup()
    params = {"IN_W": iface.in_width, "OUT_W": iface.out_width}
    wave_format = (waves if isinstance(waves, str) else toolchain.waves_format()) if waves else None
    flags = list(SIM_FLAGS) + list(sources.flags) + (list(WAVE_FLAGS[wave_format]) if waves else [])
    key = build_key(sources.digest(), params, flags, waves, tc)
    root = Path(root) if root is not None else BUILD_ROOT
    d = root / safe_name(arch) / safe_name(instr) / key[:16]
    meta = dict(arch=arch, instr=instr, key=key, params=params, flags=flags, waves=waves, wave_format=wave_format,
                toolchain=tc.fingerprint())
    return Build(d, key, arch, instr, iface.in_width, iface.out_width, iface.latency, iface.initiation_interval,
                 waves, False, 0.0, "planned", meta)


def build_key(verilog: str, params: dict, flags: list, waves: bool, tc) -> str:
    """Hash of everything a build's executable depends on: the design's Verilog (without the
    checkout's paths), the harness, flags, parameters and the toolchain."""
    h = hashlib.sha256()
    for part in (normalise_verilog(verilog), HARNESS.read_text(), HARNESS_DPI.read_text(), json.dumps(flags),
                 json.dumps(params), f"waves={waves}", tc.fingerprint(),
                 json.dumps(toolchain.cosim_make_overrides(tc))):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def build_unit(component, arch: str, instr: str, *, waves: bool = False, root: Path | None = None,
               force: bool = False) -> Build:
    """Build the harness around ``component`` (cached; see the module docstring).

    ``waves`` builds the waveform-tracing variant (FST, or VCD where FST cannot
    be built).  Returns a :class:`Build` (``source``: built, cached or copied);
    raises :class:`BuildError` with the tail of the build log when Verilator or
    the C++ compiler fails.
    """
    iface = unit_interface(component)
    text = elaborate(component)
    check_ports(text)
    return build_sources(Sources({UNIT_FILE: text}), iface, arch, instr, waves=waves, root=root, force=force)


def build_sources(sources: Sources, iface: UnitInterface, arch: str, instr: str, *, waves: bool = False,
                  root: Path | None = None, force: bool = False) -> Build:
    """Build the harness around any source list whose module ``cosim_unit`` has ``iface``'s widths
    (an elaborated Amaranth unit, or a design's own files behind a generated adapter); cached per hash
    of the sources, flags and tool versions, built in a scratch folder renamed into place, verified by
    the stamp's checksums (see the module docstring).  Under Icarus (``SIM=icarus``, :mod:`cosim.icarus`)
    the same sources go into the Icarus harness instead."""
    name = simulator.current()
    if name != simulator.DEFAULT:
        return simulator.build_for(name)(sources, iface, arch, instr, waves=waves, root=root, force=force)
    tc = toolchain.setup()
    plan = plan_sources(sources, iface, arch, instr, waves=waves, root=root)
    d, key, meta = plan.dir, plan.key, plan.meta
    check_make_safe(d)
    root = d.parent.parent.parent

    def result(source, seconds):
        return dataclasses.replace(plan, cached=source != "built", seconds=seconds, source=source)

    def write_generated(folder: Path) -> None:
        for name, text in sources.generated.items():
            (folder / name).write_text(text)

    t0 = time.perf_counter()
    with locked(d.with_name(d.name + ".lock")):
        stamp = None if force else read_stamp(d)
        if stamp is not None and stamp.get("key") == key:
            with contextlib.suppress(OSError):
                os.utime(d / "stamp.json")          # recently used: pruning keeps it
            return result("cached", time.perf_counter() - t0)
        if not force:
            for other in root.glob(f"*/*/{key[:16]}"):
                ostamp = None if other == d else read_stamp(other)
                if ostamp is not None and ostamp.get("key") == key:
                    tmp = _scratch(d)
                    shutil.copytree(other, tmp, ignore=shutil.ignore_patterns("run-*"), symlinks=True,
                                    dirs_exist_ok=True)
                    write_generated(tmp)
                    (tmp / "stamp.json").write_text(json.dumps({**ostamp, **meta, **checksums(tmp),
                                                                "copied_from": str(other)}, indent=1))
                    _install(tmp, d)
                    return result("copied", time.perf_counter() - t0)
        tmp = _scratch(d)
        write_generated(tmp)
        runtime = _runtime_cache(meta, tc)
        runner = _runner(runtime if runtime_ok(runtime) else None, tmp)
        design = [str(tmp / name) for name in sources.generated] + [str(f) for f in sources.files]
        try:
            with _make_overrides(toolchain.cosim_make_overrides(tc)):
                runner.build(sources=[str(HARNESS), *design], hdl_toplevel=TOP, build_dir=str(tmp),
                             parameters=meta["params"],
                             build_args=[*meta["flags"], *sources.verilator_args(), str(HARNESS_DPI)],
                             waves=bool(waves), always=True, log_file=str(tmp / "build.log"))
        except (Exception, SystemExit) as e:     # the runner raises RuntimeError or exits
            _install(tmp, d)                     # no stamp: kept for its log, rebuilt next time
            tail = log_tail(d / "build.log")
            raise BuildError(f"Verilator build of {arch} {instr} failed ({e}); "
                             f"log {d / 'build.log'}:\n{tail}") from None
        seconds = time.perf_counter() - t0
        if not (tmp / EXE).exists():
            _install(tmp, d)
            raise BuildError(f"Verilator build of {arch} {instr} produced no {EXE}; log {d / 'build.log'}:\n"
                             f"{log_tail(d / 'build.log')}")
        (tmp / "stamp.json").write_text(json.dumps({**meta, "build_s": round(seconds, 2), **checksums(tmp)},
                                                   indent=1))
        save_runtime(runtime, tmp)
        _install(tmp, d)
        prune_builds(d)
        return result("built", seconds)


# Verilator's run-time library (verilated.cpp, verilated_vpi.cpp, ...) does not depend on the
# design: compiling it is most of a small build (~8 s of 10 on two cores).  Its objects are kept
# per toolchain and tracing mode and put into each new build directory before make runs, which
# then finds them up to date (their .d files list only Verilator's own headers).
RUNTIME_OBJECTS = "verilated*.[od]"
KEEP_BUILDS = 6                  # build directories kept per instruction (most recent first)


def _runtime_cache(meta: dict, tc) -> Path:
    tag = json.dumps([tc.runtime_fingerprint(), meta["wave_format"], toolchain.cosim_make_overrides(tc), SIM_FLAGS])
    return BUILD_ROOT / ".runtime" / hashlib.sha256(tag.encode()).hexdigest()[:16]   # shared by all roots


def _runner(runtime: Path | None, d: Path):
    """cocotb's Verilator runner; with ``runtime``, a step between verilator and make copies the
    cached run-time objects in (after verilator, so that they are newer than the Vtop.mk they
    depend on)."""
    from cocotb_tools.runner import Verilator

    class SeededVerilator(Verilator):
        def _build_command(self):
            cmds = super()._build_command()
            if runtime is not None:
                seed = (f"cp -p {shlex.quote(str(runtime))}/verilated* {shlex.quote(str(d))}/ && "
                        f"touch {shlex.quote(str(d))}/verilated*.o")
                cmds.insert(1, ["sh", "-c", seed])
            return cmds

    return SeededVerilator()


RUNTIME_MANIFEST = "manifest.json"


def runtime_ok(cache: Path) -> bool:
    """Whether the run-time object cache is complete and undamaged (every file has the size and
    SHA-256 its manifest records); a damaged one is removed, and the next build saves it again."""
    if not cache.is_dir():
        return False
    try:
        manifest = json.loads((cache / RUNTIME_MANIFEST).read_text())
        ok = isinstance(manifest, dict) and bool(manifest) and all(
            (cache / name).stat().st_size == size and _sha256(cache / name) == digest
            for name, (size, digest) in manifest.items())
    except (OSError, ValueError, TypeError):
        ok = False
    if not ok:
        trash = cache.with_name(cache.name + f".damaged{os.getpid()}-{threading.get_ident()}")
        with contextlib.suppress(OSError):
            os.rename(cache, trash)                 # out of every other build's way at once
            shutil.rmtree(trash, ignore_errors=True)
    return ok


def save_runtime(cache: Path, d: Path) -> None:
    """Keep the run-time objects of the finished build ``d`` (with their manifest) for later builds."""
    if cache.is_dir():
        return
    tmp = cache.with_name(cache.name + f".tmp{os.getpid()}-{threading.get_ident()}")
    tmp.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for f in d.glob(RUNTIME_OBJECTS):
        shutil.copy2(f, tmp / f.name)
        manifest[f.name] = [(tmp / f.name).stat().st_size, _sha256(tmp / f.name)]
    (tmp / RUNTIME_MANIFEST).write_text(json.dumps(manifest, indent=1))
    try:
        os.replace(tmp, cache)
    except OSError:                            # another process got there first
        shutil.rmtree(tmp, ignore_errors=True)


def prune_builds(d: Path, keep: int = KEEP_BUILDS) -> None:
    """Remove all but the ``keep`` most recently built or used build directories of this instruction."""
    dirs = [p for p in d.parent.iterdir()                  # scratch folders (.name.tmp...) are someone's build
            if p.is_dir() and not p.name.startswith(".") and (p / "stamp.json").exists()]
    dirs.sort(key=lambda p: (p / "stamp.json").stat().st_mtime, reverse=True)
    for old in dirs[keep:]:
        if old != d:
            shutil.rmtree(old, ignore_errors=True)
            with contextlib.suppress(OSError):
                old.with_name(old.name + ".lock").unlink()


_ENV_LOCK = threading.Lock()


@contextlib.contextmanager
def _make_overrides(variables: dict):
    """The runner's make gets exactly these variable overrides through MAKEFLAGS (the runner copies
    os.environ), and none of a calling make's (make cosim N=... would otherwise pass N into Vtop.mk)."""
    with _ENV_LOCK:
        old = os.environ.get("MAKEFLAGS")
        if variables:
            os.environ["MAKEFLAGS"] = " -- " + " ".join(f"{k}={v}" for k, v in variables.items())
        else:
            os.environ.pop("MAKEFLAGS", None)
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("MAKEFLAGS", None)
            else:
                os.environ["MAKEFLAGS"] = old


def check_ports(text: str) -> None:
    """Raise :class:`BuildError` unless the unit's Verilog has exactly the ports the harness drives."""
    m = re.search(rf"module\s+{UNIT_MODULE}\s*\(([^)]*)\)", text)
    if not m:
        raise BuildError(f"the generated Verilog has no module {UNIT_MODULE}")
    ports = {p.strip() for p in m.group(1).split(",")}
    need = {"clk", "rst", "i__payload", "i__valid", "i__ready", "o__payload", "o__valid", "o__ready"}
    missing = need - ports
    if missing:
        hint = " (a unit with no registers has no clk/rst: the harness needs a clocked unit)" \
            if missing & {"clk", "rst"} else ""
        raise BuildError(f"unit ports missing: {', '.join(sorted(missing))}{hint}; has {', '.join(sorted(ports))}")
    extra = ports - need
    if extra:
        raise BuildError(f"unit has ports the harness does not drive: {', '.join(sorted(extra))}")


def log_tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a log file, for error messages."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def build_info(b: Build) -> dict:
    d = asdict(b)
    d["dir"] = str(b.dir)
    return d
