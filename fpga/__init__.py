"""An emulated tensor core on an FPGA: the RTL that co-simulates bit for bit, on a board, driven from Python.

- :class:`BoardConfig` (``fpga.config``): what a board runs: one instruction's unit or a tensor
  core of several, lanes, buffers, clock and baud; the identify blob and the configuration hash.
- :class:`BoardTop` (``fpga.top``): the unit behind block-RAM buffers, the host-link controller
  (``fpga.link``, the protocol of ``fpga.protocol``) and a UART PHY (``fpga.uart``).
- :class:`Board` (``fpga.driver``): the pyserial driver, :func:`golden.dot_add`'s bit API on a board.
- ``fpga.sim``: the board top under Verilator with its serial pins on a TCP socket (``socket://``).
- ``fpga.build``: bitstream, utilisation and Fmax with the open toolchain; ``fpga.boards``: boards.
- ``python -m fpga sim|build|program|run|replay|identify`` (``fpga.__main__``).
"""

from .config import BoardConfig
from .driver import Board, BoardError, BoardMismatch, LinkTimeout

__all__ = ["BoardConfig", "Board", "BoardError", "BoardMismatch", "LinkTimeout"]
