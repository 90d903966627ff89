"""Co-simulation of the RTL dot-add units against the golden model (Verilator + cocotb).

>>> import golden, cosim
>>> ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
>>> r = cosim.run_instruction(ins, cosim.Config(n=100_000, stall=0.2))   # doctest: +SKIP
>>> r.status, r.mismatches, r.rate                                        # doctest: +SKIP
>>> cosim.RTLBackend()(ins, a, b, c)                                      # doctest: +SKIP

Modules: toolchain (find Verilator/Yosys/cocotb), build (elaborate, cached Verilator
builds), lint (verilator --lint-only and its waivers), payload (the unit's payload layout),
units (unit providers), session (one simulation: batches
in, outputs to a scoring or capturing hook), scoring (a session scored, as a Result; Config),
run (score instructions, replay), failures (report and
save failing vectors), table (the run table), backend (the RTL as a function),
tensor_core (a whole tensor core), standin (a stand-in unit for testing the machinery), dut (a Verilog/SV unit
of your own described by a TOML file, docs/your-rtl.md).
The vector streams are golden's (``golden.streams``); the file protocol with the testbench is
``tb.protocol``.  ``python -m cosim --help``.
"""

from golden.launch import extra_needed

# a missing [cosim] extra is one line naming it (an error line and exit 2 under python -m cosim)
with extra_needed("cosim", "cosim"):
    from . import icarus as _icarus  # noqa: F401  (registers the Icarus build with cosim.simulator)
    from .backend import RTLBackend
    from .build import Build, BuildError, build_unit, elaborate, unit_interface
    from .failures import load_failures, save_failures
    from .lint import lint_unit  # the module cosim.lint keeps its name: its lint() is cosim.lint.lint
    from .payload import PayloadLayout
    from .run import Config, Result, replay, run_instruction, run_many
    from .session import SimError
    from .toolchain import ToolchainError
    from .units import FixedReference, NoRTL, unit_provider

__all__ = ["Build", "BuildError", "Config", "FixedReference", "NoRTL", "PayloadLayout", "RTLBackend", "Result",
           "SimError", "ToolchainError", "build_unit", "elaborate", "lint_unit", "load_failures", "replay",
           "run_instruction", "run_many", "save_failures", "unit_interface", "unit_provider"]
