"""A description made ready to run: checked without a build (:func:`prepare`), and each target's build.

:func:`prepare` does every check that needs no build, in seconds: the description, its files, its
targets against the catalog, the top's real ports against the description (all one-line
:class:`DescriptionError`).  :func:`build` builds the harness around the generated adapter
(:mod:`cosim.dut.adapter`) and the design's files, one cached build per target
(:func:`cosim.build.build_sources`).  The run (:mod:`cosim.dut.run`), the backend, the structure probe
and the signal map all start here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .. import build as bld
from ..build import Sources, UnitInterface
from . import adapter, transfers
from . import ports as dports
from . import sources as dsources
from . import targets as dtargets
from .description import Description, DescriptionError, Target, check_conflicts, check_roles, load

ADAPTER_FILE = "cosim_unit.sv"
X_FLAGS = ("--x-assign", "unique", "--x-initial", "unique")    # X values random per +verilator+seed+N
UNDECLARED_LATENCY = 64                                         # the watchdog's idea of a latency not declared


@dataclass
class Prepared:
    """A description with everything checked that needs no build."""

    desc: Description
    sources: dsources.SourceSet
    ports: dict
    pairs: list                         # [(Target, golden.Instruction)]
    sha256: str = ""

    @property
    def params(self) -> dict:
        return {**self.sources.parameters, **self.desc.parameters}


def dut_root(root=None) -> Path:
    return Path(root) if root is not None else bld.BUILD_ROOT / "dut"


def prepare(path, arch: str | None = None, instr: str | None = None, root=None) -> Prepared:
    """Load and check the description at ``path``; DescriptionError (one line) on anything wrong."""
    desc = load(path)
    if desc.top in (bld.TOP, bld.UNIT_MODULE):
        raise DescriptionError(f"{desc.path}: [dut] top: {desc.top!r} is a name the harness uses; rename the top")
    check_roles(desc)                    # before the ports: two jobs for one port say so, not a wrong direction
    src = dsources.resolve(desc)
    pairs = dtargets.select(desc, arch, instr)
    work = dut_root(root) / bld.safe_name(desc.name) / "ports"
    with bld.locked(work.with_name("ports.lock")):         # campaign workers prepare the same design at once
        ports = dports.read_ports(desc, src, work)
    dports.check(desc, ports)
    check_conflicts(desc)                # after the ports: a wrong width or element count is named first
    return Prepared(desc, src, ports, pairs, hashlib.sha256(desc.path.read_bytes()).hexdigest())


def sources_for(prep: Prepared, target: Target, ins) -> tuple[Sources, UnitInterface]:
    """The build's sources for ``target``: the adapter, the design's files, include folders, defines."""
    layout = transfers.layout(prep.desc, ins)
    text = adapter.generate(prep.desc, prep.ports, target, layout, prep.params)
    s = prep.sources
    latency = (prep.desc.handshake.latency if prep.desc.handshake.latency is not None else UNDECLARED_LATENCY)
    iface = UnitInterface(layout.in_width, layout.out_width, latency + adapter.delay(prep.desc), 1)
    return Sources({ADAPTER_FILE: text}, tuple(s.files), tuple(s.include_dirs), dict(s.defines), X_FLAGS), iface


def build(prep: Prepared, target: Target, ins, *, waves: bool = False, root=None) -> bld.Build:
    """The harness around the design for ``target`` (cached, :func:`cosim.build.build_sources`)."""
    srcs, iface = sources_for(prep, target, ins)
    b = bld.build_sources(srcs, iface, f"dut-{prep.desc.name}", f"{ins.arch}-{ins.name}", waves=waves,
                          root=dut_root(root))
    b.meta["check_timing"] = ("latency",) if prep.desc.handshake.latency is not None else ()
    b.meta["design"] = f"the design {prep.desc.top} ({prep.desc.path})"      # what a session's failures name
    b.meta["hierarchy"] = f"{bld.TOP}.unit.{adapter.INSTANCE}."              # its signals, as the build log names them
    return b


def x_plusargs(seed: int) -> tuple:
    """Verilator's run-time randomisation of X and uninitialised values, seeded."""
    return ("+verilator+rand+reset+2", f"+verilator+seed+{seed}")
