"""The variables each ``make`` target takes, and the one check every target runs first.

``make fpga DUT=unit.toml LANES=2`` would otherwise drop ``LANES`` (a description fixes its lanes)
and start an hour's bitstream build; ``make cosim LANE=4`` would run with the default lanes.  The
Makefile runs this script as it is read, before any target (the venv's creation included), with
whether ``DUT=`` is set, the goals and the variables given on the command line
(``$(MAKEOVERRIDES)``).  A variable given on the command line that no goal takes is refused: the
script prints the reason on stdout and the Makefile stops with it (``$(error ...)``, one line,
exit 2).  A known variable that comes from the environment is named in a note on stderr and left
alone (a shell's exported ``N`` is not a typo of this run).

The table below is the Makefile's interface, in one place: a target's variables with and without
``DUT=`` (a description of your own RTL, docs/your-rtl.md).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path


def _options():
    """golden/options.py on its own (standard library only): the check runs before the venv exists
    (``make help``) and in a twentieth of the time ``import golden`` takes."""
    spec = importlib.util.spec_from_file_location(
        "golden_options", Path(__file__).resolve().parents[1] / "golden" / "options.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_OPTIONS = _options()
YES, NO = _OPTIONS.YES, _OPTIONS.NO       # the yes/no words every layer takes

EVERYWHERE = ("PYTHON", "MMA_BUILD_DIR")
# yes/no words, passed on as --option=WORD and read by golden.options.yes_no (refused here already)
WORDS = ("TMG_RIPUP", "UPDATE", "CLOSED", "FAULT")

_COSIM = ("ARCH", "INSTR", "N", "SEED", "STALL", "LANES", "WAVES", "VECTORS", "JOBS", "BUDGET", "UNIT", "PIPELINE",
          "SIM")
_FPGA_ROUTE = ("ROUTE_TIMEOUT", "ROUTER", "PLACER", "TMG_RIPUP")
_FPGA_UNIT = ("ARCH", "INSTR", "BOARD", "LANES", "BAUD", "CLOCK", "PIPELINE", "MULT") + _FPGA_ROUTE

# target -> (variables without DUT=, variables with DUT=; None: the target takes no DUT=)
TARGETS: dict[str, tuple[tuple[str, ...], tuple[str, ...] | None]] = {
    "help": ((), None),
    "venv": ((), None),
    "test": ((), None),
    "clean": ((), None),
    "lint": ((), None),
    "golden": (("ARCH", "INSTR", "N", "SEED", "VECTORS"), None),
    "list": (("ARCH", "INSTR"), None),
    "report": (("ARCH", "INSTR", "SIZE", "JOBS", "PIPELINE"), None),
    "probe": (("ARCH", "INSTR", "DEVICE", "BACKEND"), ("ARCH", "INSTR")),     # BACKEND: DEVICE's old name
    "findings": ((), None),
    "bench": ((), None),
    "golden-c": (("CUSTOM",), None),
    "dpi-example": (("FAULT", "N", "SEED", "TILES"), None),
    "gemm-example": ((), None),
    "gemm-bench": ((), None),
    "models-example": ((), None),
    "gpu-check": (("OUT",), None),
    "cosim": (_COSIM, ("ARCH", "INSTR", "N", "SEED", "STALL", "BUDGET", "WAVES", "REPORT", "VECTORS", "SIM")),
    "coverage": (("ARCH", "INSTR", "VECTORS", "N", "SEED", "REPORT", "CLOSED", "COVERAGE_DIR"),
                 ("ARCH", "INSTR", "VECTORS", "N", "SEED", "REPORT", "CLOSED", "COVERAGE_DIR")),
    "cosim-all": (_COSIM[2:], None),
    "cosim-core": (("ARCH", "INSTR", "N", "SEED", "STALL", "BUDGET", "PIPELINE"), None),
    "lint-rtl": (("ARCH", "INSTR"), ()),
    "fpga-tools": ((), None),
    "fpga-sim": (("ARCH", "INSTR", "N", "SEED", "LANES", "BAUD", "CLOCK", "PIPELINE", "WAVES"),
                 ("ARCH", "INSTR", "N", "SEED", "BAUD", "WAVES")),
    "fpga": (_FPGA_UNIT, ("ARCH", "INSTR", "BOARD", "CLOCK", "BAUD") + _FPGA_ROUTE),
    "fpga-program": (_FPGA_UNIT, None),
    "fpga-fit": (("ARCH", "INSTR", "BOARD", "BAUD", "CLOCK", "MULT"), None),
    "fpga-records": (("ONLY", "JOBS", "UPDATE"), None),
    "fpga-records-bg": (("ONLY", "JOBS", "UPDATE"), None),
    "fpga-bench": (("BENCH_UNITS", "BENCH_CLOCK", "BOARD", "LANES", "MULT", "SECONDS", "JOBS"), None),
    "fpga-run": (("PORT", "ARCH", "INSTR", "N", "SEED"), None),
    "fpga-selftest": (("ARCH", "INSTR", "BLOCKS", "BLOCK", "SEED", "KIND", "PORT", "PLANT", "LANES", "BAUD",
                       "CLOCK", "PIPELINE"), ("ARCH", "INSTR", "BLOCKS", "BLOCK", "SEED", "KIND")),
    "campaign": (("ARCH", "INSTR", "N", "SEED", "DB", "DEVICE", "VECTORS", "BLOCK", "LANES", "STALL", "PIPELINE",
                  "RESUME", "FRESH", "SCHEDULER", "WORKERS", "COVER_SAMPLE"), None),
    "campaign-report": (("DB", "COVER_JSON", "COVER_HTML"), None),
    "campaign-bench": (("WORKERS", "BENCH_INSTR"), None),
    "formal": (("ARCH", "INSTR", "STAGE", "NAME", "TIMEOUT", "JOBS", "PIPELINE"), None),
}
# every variable some target takes: a known one from the environment is noted when a goal ignores it
KNOWN = sorted({v for plain, dut in TARGETS.values() for v in plain + (dut or ())} | {"DUT"})


class Refusal(Exception):
    """One line: what was given that the goals do not take, and what they do."""


def _taken(goal: str, dut: bool) -> tuple[str, ...]:
    plain, with_dut = TARGETS[goal]
    if dut and with_dut is None:
        raise Refusal(f"make {goal} does not take DUT= (a description of your own RTL); the targets that do: "
                      + ", ".join(g for g, (_, d) in TARGETS.items() if d is not None))
    return (("DUT",) + with_dut) if dut else plain


def _why_not(name: str, goal: str, dut: bool) -> str:
    """Why ``goal`` does not take ``name``: with DUT= the description decides, else it is not an option."""
    if dut and name in TARGETS[goal][0]:
        return f"{name} does not apply with DUT= (the description fixes it)"
    if not dut and TARGETS[goal][1] is not None and name in TARGETS[goal][1]:
        return f"{name} applies only with DUT="
    return f"{name} is not a variable of make {goal}"


def check(goals: list[str], dut: bool, given: dict[str, str], environment: dict[str, str]) -> list[str]:
    """Notes for the environment's ignored variables; raises :class:`Refusal` for the command line's."""
    goals = [g for g in goals if g in TARGETS] or ["help"]
    taken = set(EVERYWHERE).union(*(_taken(g, dut) for g in goals))
    if "DUT" in given and not given["DUT"].strip():
        raise Refusal("DUT= is empty: give the description's path, e.g. DUT=examples/dut/dotp_vr/unit.toml")
    for name, value in given.items():
        if name not in taken:
            goal = goals[0]
            takes = ", ".join(sorted(set(_taken(goal, dut)))) or "no variables"
            raise Refusal(f"make {goal}: {_why_not(name, goal, dut)}; make {goal}"
                          f"{' with DUT=' if dut else ''} takes {takes} (make help)")
        if name in WORDS and value.strip().lower() not in YES + NO:
            raise Refusal(f"{name}={value}: expected yes or no ({', '.join(YES[:-1])}; {', '.join(NO[:-2])})")
    return [f"note: {name}={environment[name]} (from the environment) is not used by make {' '.join(goals)}"
            for name in sorted(environment) if name in KNOWN and name not in taken and name not in given]


def _assignments(words: list[str]) -> dict[str, str]:
    """``NAME=value`` words (make's ``$(MAKEOVERRIDES)``, a value's spaces already joined by the shell)."""
    out = {}
    for w in words:
        name, _, value = w.partition("=")
        if name and name.replace("_", "").isalnum():
            out[name] = value
    return out


def main(argv: list[str]) -> int:
    """``make_vars.py DUT GOAL... -- NAME=value ...``: DUT ``1`` when ``DUT=`` is set, the goals
    (``$(MAKECMDGOALS)``), then ``$(MAKEOVERRIDES)``."""
    split = argv.index("--") if "--" in argv else len(argv)
    dut, goals = (argv[0] == "1", argv[1:split]) if split else (False, [])
    given = _assignments(argv[split + 1:])
    environment = {k: v for k, v in os.environ.items() if k in KNOWN and k not in given}
    try:
        notes = check(goals, dut, given, environment)
    except Refusal as e:
        print(e)                # on stdout: the Makefile's $(error ...) says it and stops, exit 2
        return 2
    for note in notes:
        print(note, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
