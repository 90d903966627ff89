"""The RTL as a function: a batch of dot-adds through an instruction's unit, its outputs back.

``RTLBackend()(ins, a, b, c, scale_a, scale_b)`` builds the unit (``hw.dot_add_unit`` by
default; cached under ``build/cosim`` like every co-simulation build), runs all the vectors in
one Verilator simulation (without stalls unless asked), and returns ``d`` in the order of the inputs: a
:class:`cosim.session.Capture` hook on the same session that scores ``python -m cosim run``.
The dissection suite (``probe``) uses it as its ``rtl`` backend.
"""

from __future__ import annotations

import shutil

import numpy as np

from golden.device import Device
from golden.streams import ArrayStream

from .payload import PayloadLayout
from .scoring import build_checked
from .session import Capture, SimError, simulate
from .units import NoRTL, unit_provider

# vectors per batch: packing the next batch overlaps the simulation of this one (one batch of 65,536
# took 5.5 s where batches of 16,384 took 3.3 s, volta HMMA.884.F32.F32)
BATCH = 16384


class RTLBackend(Device):
    """An instruction's RTL unit co-simulated under Verilator: one simulation per call (a
    :class:`golden.device.Device`; operands as uint64, every row computed, nothing to close).

    Parameters
    ----------
    lanes : int
        Dot-adds per unit input.
    build_root : Path, optional
        Where the Verilator builds are cached (default ``build/cosim``).
    unit : str or callable, optional
        The unit provider (:func:`cosim.unit_provider`): ``hw`` (default), ``standin[:...]`` or a
        callable ``(ins, lanes) -> component``.
    stall : float
        Probability of a stall on each side per cycle (0: none, the probe's default; campaigns stress
        the handshake as ``make cosim`` does), drawn from ``seed``.

    Raises :class:`cosim.NoRTL` when the provider has no RTL for the instruction,
    :class:`cosim.BuildError` when the unit does not build, :class:`cosim.SimError` when the
    simulation fails, :class:`cosim.ToolchainError` when Verilator or Yosys is missing.
    """

    name = "rtl"

    def __init__(self, lanes: int = 1, build_root=None, unit=None, stall: float = 0.0, seed: int = 1):
        if lanes < 1:
            raise ValueError(f"lanes must be >= 1, got {lanes}")
        if not 0.0 <= stall < 1.0:
            raise ValueError(f"stall must be a probability in [0, 1), got {stall}")
        self.lanes, self.build_root, self.stall, self.seed = lanes, build_root, stall, seed
        self.provider = unit_provider(unit)

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
        """The unit's ``d`` (uint64 bit patterns, shape ``[R]``) for each row of ``a [R, K]``,
        ``b [R, K]``, ``c [R]``."""
        a = np.asarray(a, np.uint64)
        n = a.shape[0]
        if n == 0:
            return np.zeros(0, np.uint64)
        try:
            component = self.provider(ins, self.lanes)
        except NoRTL as e:
            raise NoRTL(f"no RTL for {ins.arch} {ins.name}: {e}") from None
        layout = PayloadLayout(ins, self.lanes)
        built = build_checked(component, layout, root=self.build_root)
        return capture_all(built, layout, ArrayStream(ins, a, b, c, scale_a, scale_b), n, seed=self.seed,
                           stall=self.stall, where=f"{ins.arch} {ins.name}")


def capture_all(built, layout, stream, n: int, *, seed: int, stall: float, where: str, plusargs: tuple = (),
                capture=None, on_timing=None):
    """Every output of ``n`` vectors of ``stream`` through the build, in input order (one simulation);
    :class:`SimError` naming ``where`` when the simulation fails or returns fewer outputs.  ``capture``:
    a hook of the caller's (a tile device's), default a :class:`cosim.session.Capture`; ``on_timing``:
    called with the session's result when its timing is not the declared one (default: SimError), for a
    caller that reports it beside the values (a described design's wrong latency)."""
    capture = capture if capture is not None else Capture(n)
    s = simulate(built, layout, stream, capture, n=n, batch_vectors=min(max(n, 256), BATCH), seed=seed,
                 stall_in=stall, stall_out=stall, plusargs=plusargs)
    if s.error:                                 # the run directory stays: the message names its log
        raise SimError(f"co-simulation of {where} failed: {s.error}")
    if s.run_dir is not None:
        shutil.rmtree(s.run_dir, ignore_errors=True)
    if s.timing_error:
        if on_timing is None:
            raise SimError(f"co-simulation of {where} failed: {s.timing_error}")
        on_timing(s)
    if capture.filled != n:
        raise SimError(f"co-simulation of {where} returned {capture.filled} of {n} outputs")
    return capture.d
