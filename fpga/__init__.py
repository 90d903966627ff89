"""An emulated tensor core on an FPGA: the RTL that co-simulates bit for bit, on a board, driven from Python.

- :class:`BoardConfig` (``fpga.config``): what a board runs: one instruction's unit or a tensor
  core of several, lanes, buffers, clock and baud; the identify blob and the configuration hash.
- :class:`BoardTop` (``fpga.top``): the unit behind block-RAM buffers, the host-link controller
  (``fpga.link``, the protocol of ``fpga.protocol``) and a UART PHY (``fpga.uart``).
- :class:`BoardLink` (``fpga.driver``): the pyserial driver, :func:`golden.dot_add`'s bit
  API on a connected board.  What a board *is* (platform, family, loader) is :class:`fpga.boards.BoardSpec`.
- ``fpga.sim``: the board top under Verilator with its serial pins on a TCP socket (``socket://``).
- ``fpga.build``: bitstream, utilisation and Fmax with the open toolchain, its progress shown
  (``fpga.progress``); ``fpga.boards``: boards; ``fpga.families``: ECP5 and Gowin GW5A.
- ``python -m fpga sim|build|program|run|replay|identify`` (``fpga.__main__``).
"""

from golden.launch import extra_needed

# a missing [fpga] extra is one line naming it (an error line and exit 2 under python -m fpga)
with extra_needed("fpga", "fpga"):
    from .config import BoardConfig
    from .driver import BoardError, BoardLink, BoardMismatch, LinkTimeout

__all__ = ["BoardConfig", "BoardLink", "BoardError", "BoardMismatch", "LinkTimeout"]
