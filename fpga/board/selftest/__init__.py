"""The on-board self-test, board side: the gateware and the model it is bit for bit.

- :mod:`fpga.board.selftest.model`: the numpy model (operands, signatures, the request's checks): the
  specification the gateware and the host's recomputation are tested against.
- :mod:`fpga.board.selftest.generator`, :mod:`fpga.board.selftest.engine`, :mod:`fpga.board.selftest.crc`:
  the gateware (the operand generator, the signature engine the host link starts, its CRC).

The host side (the run, the recomputation at the board's rate) is :mod:`fpga.host.selftest`.
"""
