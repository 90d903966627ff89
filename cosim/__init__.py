"""Co-simulation of the RTL dot-add units against the golden model (Verilator + cocotb).

>>> import golden, cosim
>>> ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
>>> r = cosim.run_instruction(ins, cosim.Config(n=100_000, stall=0.2))   # doctest: +SKIP
>>> r.status, r.mismatches, r.rate                                        # doctest: +SKIP

Modules: toolchain (find Verilator/Yosys/cocotb), build (elaborate, cached
Verilator builds, lint), payload (the unit's payload layout and file formats),
vectors (pluggable generators), run (drive, score, report), standin (a
stand-in unit for testing the machinery).  ``python -m cosim --help``.
"""

from .build import Build, BuildError, build_unit, elaborate, lint, lint_unit, unit_interface
from .payload import PayloadLayout
from .run import Config, NoRTL, Result, replay, run_instruction, run_many, select, unit_provider
from .toolchain import ToolchainError

__all__ = ["Build", "BuildError", "Config", "NoRTL", "PayloadLayout", "Result", "ToolchainError", "build_unit",
           "elaborate", "lint", "lint_unit", "replay", "run_instruction", "run_many", "select", "unit_interface",
           "unit_provider"]
