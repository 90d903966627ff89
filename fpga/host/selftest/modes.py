"""What the fused host check runs (:func:`fpga.host.selftest.fast.fused_signatures`' ``mode``): the whole
check, or the kernel stopped after a stage (the benchmark's split of its time); shared by the kernel
(:mod:`fpga.host.selftest._fused`, which needs numba) and its callers (which do not)."""

M_FULL, M_GENERATE, M_GOLDEN = 0, 1, 2     # whole; stopped after the generator; stopped after golden

__all__ = ["M_FULL", "M_GENERATE", "M_GOLDEN"]
