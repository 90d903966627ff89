"""Icarus Verilog as a second simulator of the cocotb co-simulation (``SIM=icarus``).

The Verilator flow (:mod:`cosim.build`, :mod:`cosim.session`) is the default.  With the simulator
chosen as ``icarus`` (``make cosim SIM=icarus``, ``python -m cosim run --simulator icarus``, or the
environment variable :data:`SIM_ENV`), :func:`cosim.build.build_sources` hands the same sources to
:func:`build_sources` here instead: the unit's Verilog (Amaranth's back end, or a design's own files
behind the generated adapter) inside ``tb/cosim_harness.sv`` built with ``COSIM_FILE_IO`` defined (no
DPI-C: the payload files move through Verilog file I/O, same format), compiled with ``iverilog -g2012`` by
cocotb's Icarus runner into ``sim.vvp``.  The session runs the same cocotb test (``tb.cosim_tb``)
under ``vvp`` and scores every output against golden exactly as under Verilator.

Not supported under Icarus (refused in one line): waveform builds.  A design's Verilator flags
(``Sources.flags``, e.g. the DUT path's X randomisation) do not apply, nor does the DUT path's X check:
Icarus keeps X as X, and an X output bit is written as 0 (a mismatch only where golden's bit is 1).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path

from . import build as bld
from .simulator import SIM_ENV, SIMULATORS, choose, current, register_build  # noqa: F401  (re-exported)
from .toolchain import ICARUS_HINT as INSTALL_HINT  # noqa: F401  (re-exported)
from .toolchain import Tool, ToolchainError, find_iverilog  # noqa: F401  (find_iverilog: re-exported)

HARNESS = bld.HARNESS                     # one harness: its file I/O under COSIM_FILE_IO (no DPI-C)
EXE = "sim.vvp"                           # cocotb's Icarus runner writes this
BATCH_VECTORS = 1024                      # Icarus runs ~10^3 cycles/s on a dot-add unit: short batches
MIN_VECTORS = 1000                        # a run's least vectors when -n is not given (Verilator: 100,000)


def available() -> bool:
    try:
        find_iverilog()
    except ToolchainError:
        return False
    return True


def _fingerprint() -> str:
    import cocotb
    return f"iverilog={find_iverilog().version_str};cocotb={cocotb.__version__}"


def build_key(sources: bld.Sources, params: dict) -> str:
    h = hashlib.sha256()
    for part in (bld.normalise_verilog(sources.digest()), HARNESS.read_text(), json.dumps(params), _fingerprint()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def plan_sources(sources: bld.Sources, iface: bld.UnitInterface, arch: str, instr: str, *,
                 root: Path | None = None) -> bld.Build:
    """The :class:`cosim.build.Build` :func:`build_sources` would produce (not built yet)."""
    params = {"IN_W": iface.in_width, "OUT_W": iface.out_width}
    key = build_key(sources, params)
    root = (Path(root) if root is not None else bld.BUILD_ROOT) / "icarus"
    d = root / bld.safe_name(arch) / bld.safe_name(instr) / key[:16]
    meta = dict(arch=arch, instr=instr, key=key, params=params, flags=[], waves=False, wave_format=None,
                toolchain=_fingerprint(), simulator="icarus", exe=EXE)
    return bld.Build(d, key, arch, instr, iface.in_width, iface.out_width, iface.latency, iface.initiation_interval,
                     False, False, 0.0, "planned", meta)


def build_sources(sources: bld.Sources, iface: bld.UnitInterface, arch: str, instr: str, *, waves=False,
                  root: Path | None = None, force: bool = False) -> bld.Build:
    """Compile the Icarus harness around ``sources`` (module ``cosim_unit`` of ``iface``'s widths); cached per
    hash of the sources, harness, parameters and tool versions, built in a scratch folder renamed into place."""
    if waves:
        raise bld.BuildError("waveforms are not supported under Icarus (SIM=icarus): run WAVES=1 under Verilator")
    find_iverilog()
    plan = plan_sources(sources, iface, arch, instr, root=root)
    d, key, meta = plan.dir, plan.key, plan.meta
    t0 = time.perf_counter()

    def result(source, seconds):
        return dataclasses.replace(plan, cached=source != "built", seconds=seconds, source=source)

    with bld.locked(d.with_name(d.name + ".lock")):
        stamp = None if force else bld.read_stamp(d, EXE)
        if stamp is not None and stamp.get("key") == key:
            os.utime(d / "stamp.json")
            return result("cached", time.perf_counter() - t0)
        tmp = bld._scratch(d)
        for name, text in sources.generated.items():
            (tmp / name).write_text(text)
        design = [str(tmp / name) for name in sources.generated] + [str(f) for f in sources.files]
        from cocotb_tools.runner import Icarus
        try:
            Icarus().build(sources=[str(HARNESS), *design], hdl_toplevel=bld.TOP, build_dir=str(tmp),
                           parameters=meta["params"], includes=[str(x) for x in sources.include_dirs],
                           defines={"COSIM_FILE_IO": 1,
                                    **{k: (1 if v is True else int(v) if isinstance(v, bool) else v)
                                       for k, v in sources.defines.items()}},
                           timescale=("1ns", "1ps"), always=True, log_file=str(tmp / "build.log"))
        except (Exception, SystemExit) as e:     # the runner raises RuntimeError or exits
            bld._install(tmp, d)                 # no stamp: kept for its log, rebuilt next time
            raise bld.BuildError(f"Icarus build of {arch} {instr} failed ({e}); log {d / 'build.log'}:\n"
                                 f"{bld.log_tail(d / 'build.log')}") from None
        if not (tmp / EXE).exists():
            bld._install(tmp, d)
            raise bld.BuildError(f"Icarus build of {arch} {instr} produced no {EXE}; log {d / 'build.log'}:\n"
                                 f"{bld.log_tail(d / 'build.log')}")
        seconds = time.perf_counter() - t0
        (tmp / "stamp.json").write_text(json.dumps({**meta, "build_s": round(seconds, 2), **bld.checksums(tmp, EXE)},
                                                   indent=1))
        bld._install(tmp, d)
        bld.prune_builds(d)
        return result("built", seconds)


register_build("icarus", build_sources)
