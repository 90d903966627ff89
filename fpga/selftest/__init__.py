"""The on-board self-test: the board generates operands and checks signatures, the host recomputes.

- :mod:`fpga.selftest.model`: the numpy model (operands, signatures, the request's checks): the
  reference the gateware and the compiled path are tested against.
- :mod:`fpga.selftest.generator`, :mod:`fpga.selftest.engine`: the gateware (the operand generator,
  the signature engine the host link starts).
- :mod:`fpga.selftest.check`, :mod:`fpga.selftest.fast` (and its numba kernels,
  ``fpga.selftest._kernels``): the host's recomputation at the board's rate.
- :mod:`fpga.selftest.host`: :func:`run_selftest`, the host side of a run (``python -m fpga selftest``).
"""

from .host import DEFAULT_CHUNK, Failure, SelfTestReport, first_difference, run_selftest

__all__ = ["run_selftest", "SelfTestReport", "Failure", "first_difference", "DEFAULT_CHUNK"]
