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
    """``hw.dot_add_unit(instr, lanes=..., pipelining=..., params=...)``, imported when first used.

    ``pipeline``: a :class:`hw.Pipelining` spec ("0" .. "3", "2,align=2"); the provider's ``spec``
    names it (``hw:pipeline=2``), so a replay of saved failing vectors rebuilds the same unit.
    ``params``: a whole :class:`golden.Params` design instead of the instruction's (a custom unit,
    rebuilt from its :func:`describe_unit` description; such a provider has no ``spec``).
    """

    reference = None                       # golden.dot_add

    def __init__(self, pipeline: str = "0", params=None):
        from hw.pipelining import Pipelining          # checks the spec before anything is built
        self.pipeline = str(Pipelining.parse(pipeline))
        self.params = params
        if params is None:
            self.spec = "hw" if self.pipeline == "0" else f"hw:pipeline={self.pipeline}"

    def __call__(self, ins, lanes: int):
        try:
            import hw
        except ImportError as e:
            raise NoRTL(f"the hw package cannot be imported ({e})") from None
        fn = getattr(hw, "dot_add_unit", None)
        if fn is None:
            raise NoRTL("hw has no dot_add_unit yet")
        try:
            return fn(ins, lanes=lanes, pipelining=self.pipeline, params=self.params)
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


def unit_provider(spec=None, pipeline: str | None = None):
    """``None``/``"hw"``, ``"hw:pipeline=SPEC"``, ``"standin[:latency=3,ii=1,bug=0]"``, or a callable
    ``(ins, lanes) -> component``.  ``pipeline`` (``--pipeline``) sets the hw unit's pipelining."""
    if pipeline is not None and spec not in (None, "hw"):
        raise ValueError(f"--pipeline applies to the hw unit, not {getattr(spec, 'spec', spec)!r}")
    if spec is None or spec == "hw":
        return HwUnits(pipeline or "0")
    if callable(spec):
        return spec
    if isinstance(spec, str) and spec.startswith("hw:"):
        # one option; its value is a whole pipelining spec, commas included
        name, eq, value = spec[3:].partition("=")
        if name != "pipeline" or not eq:
            raise ValueError(f"unit {spec!r}: hw takes one option, pipeline=SPEC (e.g. hw:pipeline=2)")
        return HwUnits(value)
    if spec.startswith("standin"):
        opts = {"latency": 3, "ii": 1, "bug": 0}
        tail = spec.partition(":")[2]
        for item in filter(None, tail.split(",")):
            k, _, v = item.partition("=")
            if k not in opts:
                raise ValueError(f"unit {spec!r}: unknown option {k!r} (latency, ii, bug)")
            opts[k] = int(v)
        return StandInUnits(opts["latency"], opts["ii"], bool(opts["bug"]))
    raise ValueError(f"unknown unit {spec!r}: hw[:pipeline=SPEC], or standin[:latency=N,ii=N,bug=0|1]")


def describe_unit(provider, component) -> dict:
    """What a replay file records of the unit that failed, so that a replay rebuilds that unit.

    ``{"spec": SPEC}`` for a provider named by a spec string; for any other provider (a callable)
    whose unit is an ``hw.DotAddUnit``, that unit's instruction, whole Params and pipelining
    (``{"hw": {...}}``); else the provider's and unit's names only (``{"custom": ...}``): such a
    file is replayed only with the same unit passed in (:func:`cosim.run.replay`'s ``unit``).
    """
    spec = getattr(provider, "spec", None)
    if spec is not None:
        return {"spec": spec}
    try:
        from hw.unit import DotAddUnit
    except ImportError:
        DotAddUnit = None
    reference = getattr(provider, "reference", None)
    if DotAddUnit is not None and isinstance(component, DotAddUnit) and reference is None:
        import dataclasses
        return {"hw": {"arch": component.ins.arch, "instr": component.ins.name,
                       "params": dataclasses.asdict(component.params), "pipeline": str(component.pipelining)}}
    name = getattr(provider, "__qualname__", None) or type(provider).__qualname__
    return {"custom": {"provider": f"{getattr(provider, '__module__', '?')}.{name}",
                       "unit": f"{type(component).__module__}.{type(component).__qualname__}",
                       "reference": None if reference is None else repr(reference)}}


def provider_from_description(desc: dict, ins, where: str = "the replay file"):
    """The unit provider that rebuilds the unit :func:`describe_unit` described (ValueError if
    it cannot be rebuilt)."""
    if "spec" in desc:
        return unit_provider(desc["spec"])
    if "hw" in desc:
        import golden
        hw_desc = desc["hw"]
        try:
            params = golden.Params(**hw_desc["params"])
        except TypeError as e:
            raise ValueError(f"{where}: its unit's Params do not fit this golden.Params ({e})") from None
        built_for = golden.lookup(hw_desc["arch"], hw_desc["instr"])
        inner = HwUnits(hw_desc["pipeline"], params)
        return lambda _ins, lanes: inner(built_for, lanes)
    custom = desc.get("custom", {})
    raise ValueError(f"{where} was saved from a custom unit ({custom.get('unit', '?')} made by "
                     f"{custom.get('provider', '?')}) that cannot be rebuilt from the file: replay it from Python "
                     "with the same unit, cosim.run.replay(path, unit=PROVIDER)")


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
