"""Backends: anything that computes a batch of dot-adds in bits.

A backend is a callable ``backend(ins, a, b, c, scale_a=None, scale_b=None) -> d`` with
exactly the conventions of :func:`golden.dot_add`: ``a, b`` are unsigned bit patterns of
shape ``[R, K]`` (one element per integer, narrow formats in the low bits), ``c`` has shape
``[R]``, block scales ``[R, K // block]`` (None when unscaled), and ``d`` is returned as
``R`` unsigned bit patterns of the D format.  A hardware team plugs its own design in by
passing any such function to :func:`probe.probe`.

The contract is :class:`golden.device.Device`, with its optional extras (``narrow_operands``,
``unsupported``, ``close``); a backend's name is a :class:`golden.device.DeviceSpec`, which
:func:`make_device` makes (:func:`backend_from_name` from its text).

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
import sys

import golden
from golden import Instruction
from golden.device import Device, DeviceError, DeviceSpec, Unavailable, registered_plugins


class GoldenBackend(Device):
    """The golden model itself."""

    name = "golden"
    narrow_operands = True        # golden reads operands in their own width bit-exactly (callers may pass them so)

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None):
        return golden.dot_add(ins, a, b, c, scale_a, scale_b)


class ParamsBackend(Device):
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


class SimulatedRTL(Device):
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
            from cosim.backend import RTLBackend  # imported here: probe runs without cosim's toolchain
            self._rtl = RTLBackend(lanes=lanes, build_root=build_root, unit=unit, **options)

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None):
        with _rtl_unavailable(ins):
            return self._rtl(ins, a, b, c, scale_a, scale_b)


class SimulatedDUT(Device):
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


class SimulatedCore(Device):
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
    build that failed (``cosim.BuildError``) as a :class:`DeviceError` of one line."""
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
            raise DeviceError(first if " failed" in first else f"{what}{where} failed: {first}") from None
        raise


def plugins() -> dict:
    """Backends that packages above probe register under the entry-point group
    :data:`golden.device.PLUGIN_GROUP` (``fpga`` from this project's ``fpga`` package): ``{name: entry point}``.
    probe never imports them itself, so the layers stay in order; the entry point is loaded when its name
    is asked for."""
    return registered_plugins()


def make_device(spec: DeviceSpec, **kw):
    """The device ``spec`` names, made here (``kw``: its options: ``lanes``, ``unit``, ``stall``, ``seed``
    of the simulators, ``timeout`` of a board); the one place a spec becomes a callable."""
    if spec.kind == "golden":
        return ParamsBackend(**spec.params) if spec.argument else GoldenBackend()
    if spec.kind == "rtl":
        return SimulatedRTL(unit=spec.argument, **kw) if spec.argument else SimulatedRTL(**kw)
    if spec.kind == "core":
        return SimulatedCore(**kw)
    if spec.kind == "dut":
        return SimulatedDUT(spec.argument, **kw)
    if spec.kind == "torch":
        from .torch_backend import TorchBackend
        return TorchBackend(**kw)
    found = plugins()
    if spec.kind not in found:
        DeviceSpec.parse(str(spec), plugins=found)      # the one-line refusal naming what is valid
    return found[spec.kind].load()(spec.argument, **kw)


def add_device_option(ap, help: str) -> None:
    """``--device`` (``--backend``, its old spelling, still taken: :func:`note_old_spelling`) on ``ap``."""
    ap.add_argument("--device", "--backend", dest="device", default="golden", metavar="DEVICE", help=help)


def note_old_spelling(argv) -> None:
    """One note on stderr when ``argv`` spells ``--device`` the old way."""
    if any(a == "--backend" or a.startswith("--backend=") for a in argv):
        print("note: --backend is now --device", file=sys.stderr)


def backend_from_name(name: str, **kw):
    """The device the text ``name`` names (:meth:`golden.device.DeviceSpec.parse`: ``golden``, ``rtl``,
    ``rtl:UNIT``, ``core``, ``dut:path/unit.toml``, ``torch``, ``golden:F=24,out_rounding=RNE``, or
    ``PLUGIN:ARGUMENT`` for a registered plugin, ``fpga:socket://127.0.0.1:5555``), made by :func:`make_device`."""
    return make_device(DeviceSpec.parse(name, plugins=plugins()), **kw)
