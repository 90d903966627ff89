"""The on-board self-test, host side: the board generates operands and signs its results, the host recomputes.

- :mod:`fpga.host.selftest.run`: :func:`run_selftest`, the host side of a run (``python -m fpga selftest``).
- :mod:`fpga.host.selftest.check`, :mod:`fpga.host.selftest.fast` (and its numba kernels,
  ``fpga.host.selftest._kernels``): the host's recomputation at the board's rate.

The gateware and the numpy model it is bit for bit (the specification recomputed here) are
:mod:`fpga.board.selftest`.
"""

from .run import DEFAULT_CHUNK, Failure, SelfTestReport, first_difference, run_selftest

__all__ = ["run_selftest", "SelfTestReport", "Failure", "first_difference", "DEFAULT_CHUNK"]
