"""What a device is, and how one is named: the one contract every layer above golden implements or uses.

A *device* computes a batch of dot-adds in bits, with exactly the conventions of :func:`golden.dot_add`
(:class:`Device`).  Golden itself is one; so are cosim's simulated units, cores and described designs,
a GPU through PyTorch (probe) and a board (fpga).  The probe suite dissects one, a campaign checks one
block by block.  A device may have three optional extras (:data:`EXTRAS`, read through
:func:`takes_narrow`, :func:`unsupported_rows` and :func:`close`, which give each one's default when it
is absent).

A device is named by one word, :class:`DeviceSpec` (``--device`` of ``python -m probe``, ``DEVICE=`` of
``make probe`` and ``make campaign``): :meth:`DeviceSpec.parse` is the one grammar.  It only parses;
making the device a spec names is for the layer that can import it (:func:`probe.backends.make_device`).

Nothing here imports anything above golden.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from .catalog import Instruction

__all__ = ["Device", "DeviceError", "DeviceSpec", "DeviceSpecError", "EXTRAS", "PLUGIN_GROUP", "Unavailable",
           "check_output", "close", "registered_plugins", "takes_narrow", "unsupported_rows"]


@runtime_checkable
class Device(Protocol):
    """Any callable with :func:`golden.dot_add`'s signature over bit patterns (a plain function qualifies).

    ``a, b`` are unsigned bit patterns of shape ``[R, K]`` (one element per integer, narrow formats in the
    low bits), ``c`` has shape ``[R]``, block scales ``[R, K // block]`` (None when unscaled); the device
    returns ``R`` unsigned bit patterns of the D format (:func:`check_output` checks them).  It raises
    :class:`Unavailable` for what it cannot run here and :class:`DeviceError` when it fails.

    The optional extras (not members of this Protocol, so that a plain function is a device; each has a
    Protocol of its own below and a default when absent, :data:`EXTRAS`):

    ``name``
        A label for reports (default: the spec it was made from).
    ``narrow_operands``
        True: the device also takes each operand in its format's own width (uint8 fp8, uint16 f16, ...:
        ``golden.vectors.operand_dtype``), as golden does.  Default False: callers give it uint64, since
        a device may shift or pack the words.
    ``unsupported(ins, a, b, c, scale_a, scale_b) -> bool [R]``
        Rows it cannot compute faithfully (the GPU device, for a ``c`` it cannot feed into the tensor core
        exactly); they count as unobserved, not as mismatches.  Default: none (every row is computed).
    ``close()``
        Release what it holds (a board's port).  Default: nothing to release.
    """

    def __call__(self, ins: Instruction, a: np.ndarray, b: np.ndarray, c: np.ndarray,
                 scale_a: np.ndarray | None = None, scale_b: np.ndarray | None = None) -> np.ndarray: ...


@runtime_checkable
class NarrowDevice(Protocol):
    """A device that declares whether it takes operands in their own width (``narrow_operands``)."""

    narrow_operands: bool


@runtime_checkable
class PartialDevice(Protocol):
    """A device that names the rows it cannot compute faithfully (``unsupported``)."""

    def unsupported(self, ins: Instruction, a: np.ndarray, b: np.ndarray, c: np.ndarray,
                    scale_a: np.ndarray | None = None, scale_b: np.ndarray | None = None) -> np.ndarray: ...


@runtime_checkable
class ClosableDevice(Protocol):
    """A device that holds something to release (``close``)."""

    def close(self) -> None: ...


# the optional extras: what each means when absent
EXTRAS = {
    "narrow_operands": "False: operands are given as uint64",
    "unsupported": "None: every row is computed",
    "close": "nothing to release",
}


def takes_narrow(device) -> bool:
    """Whether ``device`` takes operands in their formats' own width (``narrow_operands``; default False)."""
    return bool(getattr(device, "narrow_operands", False))


def unsupported_rows(device, ins: Instruction, a, b, c, scale_a=None, scale_b=None):
    """``device.unsupported(...)`` as a bool array, or None when the device computes every row."""
    if not isinstance(device, PartialDevice):
        return None
    return np.asarray(device.unsupported(ins, a, b, c, scale_a, scale_b), bool)


def close(device) -> None:
    """``device.close()`` where it has one (default: nothing to release)."""
    if isinstance(device, ClosableDevice):
        device.close()


class DeviceError(RuntimeError):
    """A device is unavailable, failed, or returned something that is not a batch of D bit patterns."""


class Unavailable(DeviceError):
    """The device cannot run here (no GPU, no torch, no simulator, another instruction): skip, do not fail."""


def check_output(ins: Instruction, d, rows: int, name: str = "backend") -> np.ndarray:
    """``d`` as uint64 bit patterns of shape ``[rows]``, or a clear :class:`DeviceError`."""
    fd = ins.formats[3]
    arr = np.asarray(d)
    if arr.dtype.kind not in "ui":
        raise DeviceError(f"{name} returned dtype {arr.dtype} for {ins.arch} {ins.name}; a backend returns "
                          f"unsigned integer bit patterns of the D format ({fd.name}, {fd.storage_bits} bits)")
    if arr.shape != (rows,):
        raise DeviceError(f"{name} returned shape {arr.shape} for a batch of {rows} dot-adds; expected ({rows},)")
    if arr.size and arr.dtype.kind == "i" and int(arr.min()) < 0:
        raise DeviceError(f"{name} returned negative values; expected {fd.name} bit patterns")
    arr = arr.astype(np.uint64)
    if fd.storage_bits < 64 and arr.size and int(arr.max()) >> fd.storage_bits:
        raise DeviceError(f"{name} returned {int(arr.max()):#x}, wider than a {fd.name} bit pattern "
                          f"({fd.storage_bits} bits)")
    return arr


# ---- naming a device ----------------------------------------------------------------------------------

PLUGIN_GROUP = "mma_rtl.probe_backends"     # entry points of devices from packages above probe (fpga)

# the words of the devices this project makes, each word's kind
WORDS = {"golden": "golden", "rtl": "rtl", "core": "core", "dut": "dut",
         "torch": "torch", "gpu": "torch", "cuda": "torch", "rocm": "torch"}
# the devices made one copy per process (simulators, models, this host's GPU); any other is hardware
LOCAL_KINDS = ("golden", "rtl", "core", "dut", "torch")
DUT_EXAMPLE = "examples/dut/dotp_vr/unit.toml"
VALID = ["golden", "rtl", "rtl:UNIT", "core", "dut:path/unit.toml", "torch", "golden:FIELD=VALUE,..."]


class DeviceSpecError(ValueError):
    """A device word that is not one: one line naming what is valid."""


def registered_plugins() -> dict:
    """Devices that packages above probe register under the entry-point group :data:`PLUGIN_GROUP`
    (``fpga`` from this project's ``fpga`` package): ``{name: entry point}``, none of them loaded."""
    from importlib.metadata import entry_points
    return {ep.name: ep for ep in entry_points(group=PLUGIN_GROUP)}


@dataclass(frozen=True)
class DeviceSpec:
    """A device named: ``kind`` (``golden``, ``rtl``, ``core``, ``dut``, ``torch`` or a plugin's name),
    ``argument`` (what follows the colon: golden's params, rtl's unit spec, dut's path, a plugin's URL;
    "" when none) and ``word``, the kind as written (``gpu`` for ``torch``).

    The grammar, :meth:`parse`: ``golden``, ``golden:FIELD=VALUE,...`` (golden with changed parameters,
    :func:`golden.params.parse_params`), ``rtl``, ``rtl:UNIT`` (a cosim unit spec), ``core``,
    ``dut:path/unit.toml`` (a described design), ``torch`` (also ``gpu``, ``cuda``, ``rocm``) and
    ``PLUGIN:ARGUMENT`` for a registered plugin (``fpga:/dev/ttyUSB0``, ``fpga:socket://127.0.0.1:5555``).
    ``str(spec)`` is the text it was parsed from.
    """

    kind: str
    argument: str = ""
    word: str = ""

    def __post_init__(self):
        if not self.word:
            object.__setattr__(self, "word", self.kind)

    def __str__(self) -> str:
        return f"{self.word}:{self.argument}" if self.argument else self.word

    @classmethod
    def parse(cls, text: str, plugins=None, noun: str = "backend") -> DeviceSpec:
        """``text`` as a spec, or a one-line :class:`DeviceSpecError` naming what is valid.  ``plugins``:
        the names of the registered plugins (default :func:`registered_plugins`'); ``noun`` names the
        thing in the messages (``backend``, ``device``)."""
        if not isinstance(text, str):
            raise DeviceSpecError(f"a {noun} is named by a word ({', '.join(VALID)}), not {text!r}")
        word, colon, argument = text.partition(":")
        kind = WORDS.get(word)
        if kind == "dut" and colon:
            if not argument.strip():
                raise DeviceSpecError(f"dut: needs the description's path, e.g. dut:{DUT_EXAMPLE} "
                                      f"(DUT={DUT_EXAMPLE})")
            return cls("dut", argument)
        if kind == "golden" and colon:
            from .params import parse_params
            try:
                changes = parse_params(argument)
            except ValueError as e:
                raise DeviceSpecError(f"{noun} {text!r}: {e}") from None
            if not changes:
                raise DeviceSpecError(f"{noun} {text!r}: golden: takes FIELD=VALUE,... "
                                      f"(e.g. golden:F=24,out_rounding=RNE)")
            return cls("golden", argument)
        if kind == "rtl" and colon:
            if not argument.strip():
                raise DeviceSpecError(f"{noun} {text!r}: rtl: takes a co-simulation unit spec, rtl:UNIT "
                                      f"(e.g. rtl:hw:pipeline=3)")
            return cls("rtl", argument)
        if kind is not None and kind != "dut" and not colon:
            return cls(kind, "", word)
        found = sorted(registered_plugins() if plugins is None else plugins)
        if word in found and kind is None:
            if not colon or not argument:
                raise DeviceSpecError(f"{noun} {word!r} needs an argument: {word}:ARGUMENT (fpga:URL, e.g. "
                                      f"fpga:/dev/ttyUSB0 or fpga:socket://127.0.0.1:5555)")
            return cls(word, argument)
        known = VALID + [f"{p}:ARGUMENT" for p in found]
        hint = ("" if found else f"; no plugin {noun}s are registered (they come with the installed project: "
                "pip install -e . registers fpga:URL)")
        raise DeviceSpecError(f"unknown {noun} {text!r}: {', '.join(known)}{hint}")

    @staticmethod
    def kind_of(text: str) -> str:
        """The kind ``text`` names, read from its word alone and never refused (a stored campaign's
        device, whose plugin may not be installed here): ``torch`` for ``gpu``, else the word."""
        word = str(text).partition(":")[0]
        return WORDS.get(word, word)

    @property
    def params(self) -> dict:
        """A ``golden:`` spec's changed parameters (``{field: typed value}``; empty for plain golden)."""
        if self.kind != "golden" or not self.argument:
            return {}
        from .params import parse_params
        return parse_params(self.argument)

    @property
    def is_hardware(self) -> bool:
        """One piece of hardware (a board, through a plugin): not made one copy per process."""
        return self.kind not in LOCAL_KINDS
