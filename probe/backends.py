"""Backends: anything that computes a batch of dot-adds in bits.

A backend is a callable ``backend(ins, a, b, c, scale_a=None, scale_b=None) -> d`` with
exactly the conventions of :func:`golden.dot_add`: ``a, b`` are unsigned bit patterns of
shape ``[R, K]`` (one element per integer, narrow formats in the low bits), ``c`` has shape
``[R]``, block scales ``[R, K // block]`` (None when unscaled), and ``d`` is returned as
``R`` unsigned bit patterns of the D format.  A hardware team plugs its own design in by
passing any such function to :func:`probe.probe`.

A backend that sets ``narrow_operands = True`` (golden's own) also takes each operand in its
format's own width (uint8 fp8, uint16 f16, ...: ``golden.vectors.operand_dtype``); callers give
every other backend uint64, since a backend may shift or pack the words.

A backend may also have ``unsupported(ins, a, b, c, scale_a, scale_b) -> bool [R]``: rows
it cannot compute faithfully (the GPU backend, for a ``c`` it cannot feed into the tensor
core exactly).  The probes treat those rows as unobserved.

Provided here:

* :class:`GoldenBackend`: :func:`golden.dot_add`.
* :class:`ParamsBackend`: golden with changed algorithm parameters (a mis-parameterised
  design, or a hypothetical one such as CDNA3 with RZ instead of RD).
* :class:`SimulatedRTL`: the Amaranth unit of ``hw.dot_add_unit`` under Verilator
  (:class:`cosim.backend.RTLBackend`, imported when asked for), all probe vectors in one
  simulation run; no simulator or no RTL for the instruction is :class:`Unavailable`.
* :class:`SimulatedCore`: the architecture's whole tensor core under Verilator, the
  instruction selected by its opcode (:class:`cosim.tensor_core.CoreBackend`).
* :class:`TorchBackend`: a real GPU through PyTorch (CUDA or ROCm), when one is present.
"""

from __future__ import annotations

import contextlib
import dataclasses

import golden
from golden import Instruction

from .contract import BackendError, Unavailable


class GoldenBackend:
    """The golden model itself."""

    name = "golden"
    narrow_operands = True        # golden reads operands in their own width bit-exactly (callers may pass them so)

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None):
        return golden.dot_add(ins, a, b, c, scale_a, scale_b)


class ParamsBackend:
    """Golden with other algorithm parameters: ``ParamsBackend(F=24)``, ``ParamsBackend(out_rounding="RNE")``.

    ``changes`` are :class:`golden.Params` fields applied to whatever instruction is probed
    (``dataclasses.replace`` on ``ins.params``); or pass ``params=`` for a whole design.
    """

    def __init__(self, params: golden.Params | None = None, **changes):
        from golden.params import check_value
        for k, v in changes.items():            # a bad field is named now, not at the first dot-add
            check_value(k, v)
        self.params, self.changes = params, changes
        self.narrow_operands = True            # golden underneath: operands in their own width are read as they are
        what = ", ".join(f"{k}={v!r}" for k, v in changes.items()) or (str(params) if params else "unchanged")
        self.name = f"golden with {what}"

    def instruction(self, ins: Instruction) -> Instruction:
        p = self.params or ins.params
        p = dataclasses.replace(p, **self.changes)
        return ins.with_params(p)

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None):
        return golden.dot_add(self.instruction(ins), a, b, c, scale_a, scale_b)


class SimulatedRTL:
    """The RTL unit co-simulated under Verilator (:class:`cosim.backend.RTLBackend`), with the
    simulator's "cannot run here" errors turned into :class:`Unavailable`.

    Parameters
    ----------
    lanes, build_root, unit, **options
        Passed to ``cosim.backend.RTLBackend`` (dot-adds per unit input, the build folder,
        the unit provider; ``stall``, ``seed``).
    """

    name = "rtl"

    def __init__(self, lanes: int = 1, build_root=None, unit=None, **options):
        with _rtl_unavailable():
            from cosim.backend import RTLBackend      # imported here: probe runs without cosim's toolchain
            self._rtl = RTLBackend(lanes=lanes, build_root=build_root, unit=unit, **options)

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None):
        with _rtl_unavailable(ins):
            return self._rtl(ins, a, b, c, scale_a, scale_b)


class SimulatedDUT:
    """A design of one's own described by a TOML file (:class:`cosim.dut.backend.DutBackend`), each
    instruction through its target; unavailable as :class:`SimulatedRTL` is.  :meth:`targets` lists the
    description's targets and :meth:`bound` gives one of them as a backend of its own (two targets may
    be one instruction with other Params or pins)."""

    name = "dut"

    def __init__(self, path, **options):
        with _rtl_unavailable():
            from cosim.dut.backend import DutBackend
            self._dut = DutBackend(path, **options)

    def targets(self) -> list:
        """``[(target, instruction)]``: the description's targets, each as golden computes it (its Params)."""
        return self._dut.pairs

    def latency_note(self, index: int) -> str | None:
        """The line naming target ``index``'s wrong declared latency, once a probe has run it (None: right)."""
        return self._dut.latency_notes.get(self._dut.prep.desc.targets.index(self._dut.pairs[index][0]))

    def bound(self, index: int):
        """Target ``index`` (0-based) as a backend, unavailable as this one is."""
        dut = self._dut.bound(index)

        def run(ins, a, b, c, scale_a=None, scale_b=None):
            with _rtl_unavailable(ins):
                return dut(ins, a, b, c, scale_a, scale_b)
        run.name = dut.name
        return run

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None):
        with _rtl_unavailable(ins):
            return self._dut(ins, a, b, c, scale_a, scale_b)


class SimulatedCore:
    """The architecture's whole tensor core under Verilator (:class:`cosim.tensor_core.CoreBackend`),
    each instruction through its opcode; unavailable as :class:`SimulatedRTL` is."""

    name = "core"

    def __init__(self, **options):
        with _rtl_unavailable():
            from cosim.tensor_core import CoreBackend
            self._core = CoreBackend(**options)

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None):
        with _rtl_unavailable(ins):
            return self._core(ins, a, b, c, scale_a, scale_b)


@contextlib.contextmanager
def _rtl_unavailable(ins: Instruction | None = None):
    """``ImportError``, ``cosim.NoRTL`` and ``cosim.ToolchainError`` as :class:`Unavailable`
    (a missing simulator or a unit not written yet is a skip, not a failure); a simulation that failed
    (``cosim.SimError``: a design that never answers, hangs, never settles or sends extra outputs) or a
    build that failed (``cosim.BuildError``) as a :class:`BackendError` of one line."""
    where = f" for {ins.arch} {ins.name}" if ins is not None else ""
    try:
        yield
    except ImportError as e:
        raise Unavailable(f"co-simulation is not importable: {e}") from None
    except Exception as e:
        import cosim
        if isinstance(e, cosim.NoRTL):
            raise Unavailable(f"no RTL{where}: {e}") from None
        if isinstance(e, cosim.ToolchainError):
            raise Unavailable(f"no simulator toolchain: {e}") from None
        if isinstance(e, (cosim.SimError, cosim.BuildError)):
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            what = "the simulation" if isinstance(e, cosim.SimError) else "the build"
            raise BackendError(first if " failed" in first else f"{what}{where} failed: {first}") from None
        raise


PLUGIN_GROUP = "mma_rtl.probe_backends"


def plugins() -> dict:
    """Backends that packages above probe register under the entry-point group :data:`PLUGIN_GROUP`
    (``fpga`` from this project's ``fpga`` package): ``{name: entry point}``.  probe never imports
    them itself, so the layers stay in order; the entry point is loaded when its name is asked for."""
    from importlib.metadata import entry_points
    return {ep.name: ep for ep in entry_points(group=PLUGIN_GROUP)}


def backend_from_name(name: str, **kw):
    """``golden``, ``rtl``, ``rtl:UNIT`` (a cosim unit spec: ``rtl:hw:params=specials=later_model``),
    ``core``, ``torch``, ``golden:F=24,out_rounding=RNE`` (a ParamsBackend), or
    ``PLUGIN:ARGUMENT`` for a registered plugin (``fpga:socket://127.0.0.1:5555``, ``fpga:/dev/ttyUSB0``)."""
    if name == "golden":
        return GoldenBackend()
    if name == "rtl":
        return SimulatedRTL(**kw)
    if name.startswith("rtl:"):                   # a unit spec of cosim: rtl:hw:params=specials=later_model
        return SimulatedRTL(unit=name[4:], **kw)
    if name == "core":
        return SimulatedCore(**kw)
    if name.startswith("dut:"):                   # a design of one's own: dut:path/unit.toml
        return SimulatedDUT(name[4:], **kw)
    if name in ("torch", "gpu", "cuda", "rocm"):
        from .torch_backend import TorchBackend
        return TorchBackend(**kw)
    if name.startswith("golden:"):               # golden's one params grammar (golden.params.parse_params)
        from golden.params import parse_params
        try:
            changes = parse_params(name.partition(":")[2])
        except ValueError as e:
            raise ValueError(f"backend {name!r}: {e}") from None
        if not changes:
            raise ValueError(f"backend {name!r}: golden: takes FIELD=VALUE,... (e.g. golden:F=24,out_rounding=RNE)")
        return ParamsBackend(**changes)
    prefix, colon, argument = name.partition(":")
    found = plugins()
    if prefix in found:
        if not colon or not argument:
            raise ValueError(f"backend {prefix!r} needs an argument: {prefix}:ARGUMENT (fpga:URL, e.g. "
                             f"fpga:/dev/ttyUSB0 or fpga:socket://127.0.0.1:5555)")
        return found[prefix].load()(argument, **kw)
    known = ["golden", "rtl", "rtl:UNIT", "core", "dut:path/unit.toml", "torch", "golden:FIELD=VALUE,..."] + \
        [f"{p}:ARGUMENT" for p in sorted(found)]
    hint = ("" if found else "; no plugin backends are registered (they come with the installed project: "
            "pip install -e . registers fpga:URL)")
    raise ValueError(f"unknown backend {name!r}: {', '.join(known)}{hint}")
