"""Run a fixed batch of dot-adds through an instruction's RTL unit and return its outputs.

``evaluate(ins, a, b, c, scale_a, scale_b)`` builds ``hw.dot_add_unit(ins)`` (cached under
``build/cosim`` like every co-simulation build), runs all the vectors in one Verilator
simulation without stalls and returns ``d`` in the order of the inputs: the RTL as a
*backend* of :mod:`golden.probe`.  It reuses :func:`cosim.run.simulate` with a reference
that never matches, so every output comes back as a "mismatch" with its index.
"""

from __future__ import annotations

import shutil

import numpy as np

from . import build as bld
from . import run as cr
from .payload import PayloadLayout
from .vectors import ArrayStream

_NEVER = np.uint64(1) << np.uint64(63)      # not a bit pattern of a D format narrower than 64 bits


def _constant(value):
    def ref(ins, a, *rest):
        return np.full(len(a), value, np.uint64)
    return ref


def evaluate(ins, a, b, c, scale_a=None, scale_b=None, *, lanes: int = 1, build_root=None, unit=None):
    """The unit's ``d`` for each row of ``a [R, K]``, ``b [R, K]``, ``c [R]`` (uint64 bit patterns)."""
    a = np.asarray(a, np.uint64)
    n = a.shape[0]
    if n == 0:
        return np.zeros(0, np.uint64)
    provider = cr.unit_provider(unit)
    try:
        component = provider(ins, lanes)
    except cr.NoRTL as e:
        from golden.probe.backends import Unavailable
        raise Unavailable(f"no RTL for {ins.arch} {ins.name}: {e}") from None
    layout = PayloadLayout(ins, lanes)
    b_ = bld.build_unit(component, ins.arch, ins.name, waves=False, root=build_root)
    # every output must "mismatch" to come back: a constant no D pattern equals; for 64-bit D
    # (every pattern valid) two runs against 0 and 1, each output differing from one of them
    refs = [_NEVER] if ins.formats[3].storage_bits < 64 else [np.uint64(0), np.uint64(1)]
    out = np.empty(n, np.uint64)
    seen = np.zeros(n, bool)
    for value in refs:
        stream = ArrayStream(ins, a, b, c, scale_a, scale_b)
        res = cr.simulate(b_, layout, stream, _constant(value), n=n, stall_in=0.0, stall_out=0.0,
                          batch_vectors=max(n, 256), max_saved=n, progress=0.0)
        if res.run_dir is not None:
            shutil.rmtree(res.run_dir, ignore_errors=True)
        f = res.failing
        if res.status == "ERROR" and not f:
            raise RuntimeError(f"co-simulation of {ins.arch} {ins.name} failed: {res.message}")
        if f is not None:
            idx = np.asarray(f["index"], np.int64)
            out[idx] = np.asarray(f["got"], np.uint64)
            seen[idx] = True
    if not seen.all():
        raise RuntimeError(f"co-simulation returned {int(seen.sum())} of {n} outputs ({res.message})")
    return out
