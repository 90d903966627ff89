"""Where a co-simulation gets its unit: unit providers, and references known in advance.

A unit provider is a callable ``(ins, lanes) -> component`` (an Amaranth unit following the
contract :func:`cosim.build.unit_interface` checks) that raises :class:`NoRTL` when it has no
RTL for the instruction.  It may carry ``spec`` (the string that names it again, saved with
failing vectors) and ``reference`` (the function its results are scored against; default
``golden.dot_add``).
"""

from __future__ import annotations

import re

import numpy as np


class NoRTL(Exception):
    """The unit provider has no RTL for this instruction (yet)."""


class HwUnits:
    """``hw.dot_add_unit(instr, lanes=..., pipelining=..., params=...)``, imported when first used.

    ``pipeline``: a :class:`hw.Pipelining` spec ("0" .. "3", "2,align=2"); ``params``: changes to
    the instruction's :class:`golden.Params` (``{"specials": "later_model"}``), applied to the unit
    *and* to the reference it is scored against (golden with the same changes).  The provider's
    ``spec`` names both (``hw:pipeline=2,params=specials=later_model``), so a replay of saved
    failing vectors rebuilds the same unit against the same reference.
    ``design``: a whole :class:`golden.Params` design instead of the instruction's, scored against the
    instruction's golden (a custom unit rebuilt from its :func:`describe_unit` description; such a
    provider has no ``spec``).
    """

    reference = None                       # golden.dot_add (or golden with the same params, below)

    def __init__(self, pipeline: str = "0", params: dict | None = None, design=None):
        from golden.params import format_params
        from hw.pipelining import Pipelining  # checks the spec before anything is built
        self.pipeline = str(Pipelining.parse(pipeline))
        self.params = _checked_params(params or {})
        self.design = design
        if design is None:
            opts = ([] if self.pipeline == "0" else [f"pipeline={self.pipeline}"]) + \
                ([f"params={format_params(self.params)}"] if self.params else [])
            self.spec = "hw" + (":" + ",".join(opts) if opts else "")
        if self.params:
            self.reference = self._reference

    def instruction(self, ins):
        """``ins`` with this provider's params changes (itself when there are none)."""
        if not self.params:
            return ins
        p = ins.params.with_(**self.params)
        return ins.with_params(p)

    def _reference(self, ins, a, b, c, scale_a=None, scale_b=None):
        import golden
        return golden.dot_add(self.instruction(ins), a, b, c, scale_a, scale_b)

    def __call__(self, ins, lanes: int):
        try:
            import hw
        except ImportError as e:
            raise NoRTL(f"the hw package cannot be imported ({e})") from None
        fn = getattr(hw, "dot_add_unit", None)
        if fn is None:
            raise NoRTL("hw has no dot_add_unit yet")
        try:
            return fn(self.instruction(ins), lanes=lanes, pipelining=self.pipeline, params=self.design)
        except NotImplementedError as e:
            raise NoRTL(str(e) or f"no RTL for algorithm {ins.algorithm}") from None


HW_OPTIONS = ("pipeline", "params")
_HW_USAGE = ("hw, hw:pipeline=SPEC, hw:params=FIELD=VALUE[,FIELD=VALUE...] or both "
             "(e.g. hw:pipeline=2,params=specials=later_model)")


def _checked_params(changes: dict) -> dict:
    """``changes`` of golden.Params fields, checked: known fields other than ``base``, values the
    Params checks accept (one line naming what is wrong and what is valid)."""
    from golden.algorithms import Params
    from golden.params import check_value
    for k, v in changes.items():
        if k == "base":
            raise ValueError("unit params: 'base' (the algorithm) is the instruction's; "
                             "a unit changes the other fields")
        check_value(k, v)                       # the field's type, range and words (golden.params)
    try:                # the checks across fields, on a design that reads every such field
        Params(base="GFDRDA", F=24, c_drop=25, pass_size=16).with_(**{k: v for k, v in changes.items()
                                                                      if k not in _FDA_ONLY})
    except (TypeError, ValueError) as e:
        raise ValueError(f"unit params {changes}: {e}") from None
    return dict(changes)


# fields whose cross-field checks only an FDA design passes (F="exact", the compiled-path fields)
_FDA_ONLY = ("F", "operand_format", "pass_interleave", "c_last")


def _parse_hw(spec: str) -> HwUnits:
    """``hw:pipeline=SPEC,params=FIELD=VALUE,...``: each option runs to the next ``,OPTION=``
    (a pipelining spec has commas and ``=`` of its own).  The params are golden's one grammar
    (:func:`golden.params.parse_params`); the old ``FIELD:VALUE`` items still read, with a note."""
    from golden.params import parse_params
    parts = re.split(r"(?:^|,)(" + "|".join(HW_OPTIONS) + r")=", spec[3:])
    if parts[0] or len(parts) < 3:
        raise ValueError(f"unit {spec!r}: {_HW_USAGE}")
    opts: dict = {}
    for name, value in zip(parts[1::2], parts[2::2]):
        if name in opts or not value:
            raise ValueError(f"unit {spec!r}: {'repeated' if name in opts else 'empty'} option {name!r}; "
                             f"{_HW_USAGE}")
        opts[name] = value
    text = opts.get("params", "")
    if any(":" in item and "=" not in item for item in text.split(",")):
        import sys
        print(f"note: unit {spec!r}: FIELD:VALUE is the old spelling of params; write FIELD=VALUE "
              "(golden's one grammar)", file=sys.stderr)
    try:
        params = parse_params(text, legacy_colon=True)
    except ValueError as e:
        raise ValueError(f"unit {spec!r}: {e}") from None
    if "params" in opts and not params:
        raise ValueError(f"unit {spec!r}: empty option 'params'; {_HW_USAGE}")
    return HwUnits(opts.get("pipeline", "0"), params)


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
    """``None``/``"hw"``, ``"hw:pipeline=SPEC"``, ``"hw:params=FIELD=VALUE,..."`` (both may be given,
    ``hw:pipeline=2,params=specials=later_model``), ``"standin[:latency=3,ii=1,bug=0]"``, or a callable
    ``(ins, lanes) -> component``.  ``pipeline`` (``--pipeline``) sets the hw unit's pipelining."""
    if pipeline is not None and spec not in (None, "hw"):
        raise ValueError(f"--pipeline applies to the hw unit, not {getattr(spec, 'spec', spec)!r}")
    if spec is None or spec == "hw":
        return HwUnits(pipeline or "0")
    if callable(spec):
        return spec
    if isinstance(spec, str) and spec.startswith("hw:"):
        return _parse_hw(spec)
    if spec.startswith("standin"):
        opts = {"latency": 3, "ii": 1, "bug": 0}
        tail = spec.partition(":")[2]
        for item in filter(None, tail.split(",")):
            k, _, v = item.partition("=")
            if k not in opts:
                raise ValueError(f"unit {spec!r}: unknown option {k!r} (latency, ii, bug)")
            opts[k] = int(v)
        return StandInUnits(opts["latency"], opts["ii"], bool(opts["bug"]))
    raise ValueError(f"unknown unit {spec!r}: {_HW_USAGE}, or standin[:latency=N,ii=N,bug=0|1]")


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
        inner = HwUnits(hw_desc["pipeline"], design=params)
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
