"""An emulated tensor core on an FPGA: the RTL that co-simulates bit for bit, on a board, driven from Python.

Three rooms, each a subpackage:

- ``fpga.board``: the gateware, what is elaborated into the bitstream: :class:`BoardTop`
  (``fpga.board.top``: the unit behind block-RAM buffers, the host-link controller ``fpga.board.link``
  and a UART PHY ``fpga.board.uart``), the self-test engine (``fpga.board.selftest``), and the
  definitions both ends of the link share: :class:`BoardConfig` (``fpga.board.config``: what a board
  runs, its identify blob), the wire protocol (``fpga.board.protocol``), the self-test's model.
- ``fpga.host``: what talks to a board, real or simulated: :class:`BoardLink` (``fpga.host.driver``:
  the pyserial driver, :func:`golden.dot_add`'s bit API on a connected board), runs and replays
  (``fpga.host.run``), the self-test's host side (``fpga.host.selftest``), the bench
  (``fpga.host.bench``), the board under Verilator (``fpga.host.sim``) and probe's backend.
- ``fpga.toolchain``: from a board top to a bitstream: boards (:class:`fpga.toolchain.boards.BoardSpec`:
  platform, family, loader), FPGA families (``fpga.toolchain.families``), builds, fits, progress, and
  the build records (``fpga.toolchain.records``, the manifest ``records.toml`` its package data).

The rule: a module used by two rooms lives where what it defines belongs: a definition of what a
board is or says (its configuration, protocol, self-test model) is the board's, and the host and
the toolchain import it from there.  ``fpga.board`` imports no other room (except that the top asks
its platform's family, ``fpga.toolchain.families``, for the design clock's PLL); ``fpga.toolchain``
imports ``fpga.board``; ``fpga.host`` imports both (the bench builds what it times).
``python -m fpga sim|build|fit|program|run|replay|identify|selftest|bench|records`` is ``fpga.__main__``.
"""

from golden.launch import extra_needed

# a missing [fpga] extra is one line naming it (an error line and exit 2 under python -m fpga)
with extra_needed("fpga", "fpga"):
    from .board.config import BoardConfig
    from .host.driver import BoardError, BoardLink, BoardMismatch, LinkTimeout

__all__ = ["BoardConfig", "BoardLink", "BoardError", "BoardMismatch", "LinkTimeout"]
