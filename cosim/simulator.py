"""Which simulator a co-simulation runs under: Verilator (the default) or Icarus Verilog (``SIM=icarus``).

The choice travels in the environment (:data:`SIM_ENV`), so worker processes inherit it.  A simulator
other than Verilator registers the function that builds its harness (:func:`register_build`; cosim's
package import brings :mod:`cosim.icarus`, which registers Icarus), and :func:`cosim.build.build_sources`
hands it the same sources: the build module never imports the simulators built on it.
"""

from __future__ import annotations

import os
from collections.abc import Callable

__all__ = ["SIM_ENV", "SIMULATORS", "DEFAULT", "current", "choose", "register_build", "build_for"]

SIM_ENV = "MMA_COSIM_SIM"                 # verilator (default) or icarus
SIMULATORS = ("verilator", "icarus")
DEFAULT = "verilator"
_BUILDS: dict[str, Callable] = {}


def current() -> str:
    """The simulator chosen (:data:`SIM_ENV`; default ``verilator``); ValueError (one line) for another name."""
    name = os.environ.get(SIM_ENV, "").strip().lower() or DEFAULT
    if name not in SIMULATORS:
        raise ValueError(f"{SIM_ENV}={name}: the co-simulation runs under {' or '.join(SIMULATORS)} (SIM=icarus)")
    return name


def choose(name: str | None) -> str:
    """Set the simulator for this process and the ones it starts (worker processes inherit it)."""
    if name is not None:
        os.environ[SIM_ENV] = name.strip().lower()
    return current()


def register_build(name: str, build: Callable) -> None:
    """``build(sources, iface, arch, instr, *, waves, root, force)`` builds the harness under ``name``."""
    if name not in SIMULATORS or name == DEFAULT:
        raise ValueError(f"register_build: {name!r} is not one of the other simulators {SIMULATORS[1:]}")
    _BUILDS[name] = build


def build_for(name: str) -> Callable:
    """The registered build of simulator ``name`` (ValueError, one line, when none is)."""
    try:
        return _BUILDS[name]
    except KeyError:
        raise ValueError(f"no build registered for {name} (import cosim, which registers Icarus)") from None
