"""The host room: what talks to a board, real or simulated, and scores it against golden.

- :mod:`fpga.host.driver` (:class:`~fpga.host.driver.BoardLink`): the pyserial driver,
  :func:`golden.dot_add`'s bit API on a connected board.
- :mod:`fpga.host.run`: random and replayed dot-adds scored against golden; :mod:`fpga.host.selftest`:
  the on-board self-test's host side; :mod:`fpga.host.bench`: the board's rate against golden's.
- :mod:`fpga.host.sim`: the board top under Verilator, its serial pins on a TCP socket.
- :mod:`fpga.host.probe_backend`: a board as probe's ``fpga:URL`` backend (an entry point).
"""
