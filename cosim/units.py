"""Where a co-simulation gets its unit: unit providers, and references known in advance.

A unit provider is a callable ``(ins, lanes) -> component`` (an Amaranth unit following the
contract :func:`cosim.build.unit_interface` checks) that raises :class:`NoRTL` when it has no
RTL for the instruction.  It may carry ``spec`` (the string that names it again, saved with
failing vectors) and ``reference`` (the function its results are scored against; default
``golden.dot_add``).
"""

from __future__ import annotations

import numpy as np


class NoRTL(Exception):
    """The unit provider has no RTL for this instruction (yet)."""


class HwUnits:
    """``hw.dot_add_unit(instr, lanes=...)``, imported when first used."""

    spec = "hw"
    reference = None                       # golden.dot_add

    def __call__(self, ins, lanes: int):
        try:
            import hw
        except ImportError as e:
            raise NoRTL(f"the hw package cannot be imported ({e})") from None
        fn = getattr(hw, "dot_add_unit", None)
        if fn is None:
            raise NoRTL("hw has no dot_add_unit yet")
        try:
            return fn(ins, lanes=lanes)
        except NotImplementedError as e:
            raise NoRTL(str(e) or f"no RTL for algorithm {ins.algorithm}") from None


class StandInUnits:
    """:class:`cosim.standin.StandInUnit` (testing the machinery); its own reference function."""

    def __init__(self, latency: int = 3, initiation_interval: int = 1, bug: bool = False):
        self.latency, self.initiation_interval, self.bug = latency, initiation_interval, bug
        from .standin import reference
        self.reference = reference
        self.spec = f"standin:latency={latency},ii={initiation_interval},bug={int(bug)}"

    def __call__(self, ins, lanes: int):
        from .standin import StandInUnit
        return StandInUnit(ins, lanes, self.latency, self.initiation_interval, self.bug)


def unit_provider(spec=None):
    """``None``/``"hw"``, ``"standin[:latency=3,ii=1,bug=0]"``, or a callable ``(ins, lanes) -> component``."""
    if spec is None or spec == "hw":
        return HwUnits()
    if callable(spec):
        return spec
    if spec.startswith("standin"):
        opts = {"latency": 3, "ii": 1, "bug": 0}
        tail = spec.partition(":")[2]
        for item in filter(None, tail.split(",")):
            k, _, v = item.partition("=")
            if k not in opts:
                raise ValueError(f"unit {spec!r}: unknown option {k!r} (latency, ii, bug)")
            opts[k] = int(v)
        return StandInUnits(opts["latency"], opts["ii"], bool(opts["bug"]))
    raise ValueError(f"unknown unit {spec!r}: hw, or standin[:latency=N,ii=N,bug=0|1]")


class FixedReference:
    """Expected results known in advance (measured on a GPU, say) for a fixed vector list.

    Use with ``run_instruction(..., vectors_from=ops, reference=FixedReference(d))``: batches
    ask for results in stream order (wrapping around like the padded vector stream).
    """

    def __init__(self, d):
        self.d = np.asarray(d, np.uint64).reshape(-1)
        self.pos = 0

    def __call__(self, ins, a, *rest):
        idx = (self.pos + np.arange(len(a))) % max(len(self.d), 1)
        self.pos += len(a)
        return self.d[idx]
