"""The whole board under Verilator, its serial pins bridged to a TCP socket (no board needed).

- :mod:`fpga.host.sim.board`: :func:`build_board_sim` (a board top into a cached Verilator executable
  around ``fpga/host/sim/board_sim.cpp``) and :class:`BoardSim` (it running, at ``socket://``).
- :mod:`fpga.host.sim.cli`: ``python -m fpga sim``, vectors and the self-test through the simulated
  board scored against golden.
"""

from .board import (
                    MAIN_SOURCE,
                    SIM_ROOT,
                    BoardSim,
                    BuildError,
                    SimBuild,
                    SimError,
                    board_verilog,
                    build_board_sim,
                    check_board_ports,
                    has_fast_clock,
)

__all__ = ["BuildError", "SimError", "SimBuild", "build_board_sim", "BoardSim", "SIM_ROOT", "MAIN_SOURCE",
           "board_verilog", "check_board_ports", "has_fast_clock"]
