"""The dissection suite: derive a matrix unit's arithmetic from black-box tests, on any backend.

``probe(ins, backend)`` runs the experiments of MMA-Sim section III (element independence,
summation order, accumulation precision, rounding, special values) and the tests of Fasi,
Higham, Mikaitis and Pranesh on a *backend*, any callable
``backend(ins, a, b, c, scale_a=None, scale_b=None) -> d`` over bit patterns with the
conventions of :func:`golden.dot_add` (the golden model, a mis-parameterised golden, the
RTL through co-simulation, a GPU through PyTorch, or a design of your own).  It infers the
algorithm family and its parameters from the results alone and compares them with the
catalog entry.  Only the interface is taken from the catalog: operand formats, K, the
scale format and block size.

    python -m probe hopper HGMMA.64xNx16.F32
    python -m probe hopper HMMA.16816.F32.BF16 --backend torch --json out.json
    python -m probe ampere,ada HMMA --group
    python -m probe --all --group
    python -m probe findings --out docs/findings
    python -m probe compare hopper HGMMA.64xNx16.F32 --backend golden:F=24 -n 100000

It imports :mod:`golden` (and :mod:`cosim` for the RTL backend, only when asked for); the layers
above it import it: :mod:`fpga` (the board as a backend) and :mod:`campaign` (every device is a
backend, and its output is checked by :func:`golden.device.check_output`).

* :mod:`probe.probes`: the experiments, one module per thing probed (``tree``, ``precision``,
  ``rounding``, ``specials``, ``fasi``); :mod:`probe.rig` turns summand values into operands.
* :mod:`probe.infer`: from the probes' results to a family and parameters, compared with
  the catalog on the fields the algorithm reads (:attr:`golden.Params.fields_read`).
* :mod:`golden.device` (below every layer that uses it): :class:`~golden.device.Device` (any callable with
  golden.dot_add's signature, and its optional extras), its errors, the check of its output and
  :class:`~golden.device.DeviceSpec`, the one parser of device words; :mod:`probe.backends`: golden,
  golden with changed parameters, the RTL co-simulated, and :func:`~probe.backends.make_device`, which
  makes the device a spec names; :mod:`probe.torch_backend`: a GPU through PyTorch.
* :mod:`probe.algorithms`: each algorithm's part of its descriptor (how the probe recognises it);
  :mod:`probe.verify`: the inference's conclusions checked against golden; :mod:`probe.device`: the
  probe on a described device of your own (``make probe DUT=...``).
* :mod:`probe.compare`: a backend against golden on random dot-adds, bit for bit.
* :mod:`probe.findings`: the paper's section VI reproduced.
* :mod:`probe.__main__`: the command line (``main`` is the console-script entry point).
"""

from golden.device import Device, DeviceError, DeviceSpec, Unavailable

from .backends import GoldenBackend, ParamsBackend, SimulatedRTL, backend_from_name, make_device
from .infer import Report, compare, probe

__all__ = ["Device", "DeviceError", "DeviceSpec", "GoldenBackend", "ParamsBackend", "Report", "SimulatedRTL",
           "Unavailable", "backend_from_name", "compare", "make_device", "probe"]
