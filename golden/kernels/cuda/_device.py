"""How the CPU kernels' numba functions become GPU code, and how the simulator runs the same rows.

On a GPU (:func:`device_module`): a module's numba functions (``_common``, ``fused``, ``amd``,
``gps``) are recompiled from their Python source as CUDA device functions, in a copy of the
module's namespace where the LLVM intrinsics NVVM refuses (bit casts, trunc, floor, fma) are
libdevice's same operations.  Under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``, CPU
only; :func:`simulated_common`): the row code is plain Python calling the CPU-compiled functions,
and the few intrinsics it calls directly are wrapped in small CPU-compiled functions (an
intrinsic cannot be called from Python).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import types

import numpy as np

from .. import _common as C

# _common's LLVM intrinsics: NVVM rejects them, and Python cannot call them
INTRINSICS = ("f64_from_bits", "bits_from_f64", "f32_from_bits", "bits_from_f32", "ftrunc", "ffloor", "fma64", "fma32")


def simulated() -> bool:
    """Whether numba-cuda runs its CPU simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


_NVVM_LOCK = threading.Lock()


@contextlib.contextmanager
def no_fma_contraction():
    """NVVM without FMA contraction (``-fma=0``) for the kernels compiled inside: by default it
    leaves ``mul.f64``/``add.f64`` pairs that the assembler fuses into one fma, which rounds once
    where the CPU path rounds twice (a different sum).  numba-cuda has no option for it short of
    ``fastmath`` (which turns contraction on), so its call of NVVM is wrapped while a kernel of
    this package compiles (at its first launch)."""
    from numba.cuda.cudadrv import nvvm
    with _NVVM_LOCK:
        original = nvvm.compile_ir

        def compile_ir(llvmir, **options):
            options.setdefault("fma", False)
            return original(llvmir, **options)

        nvvm.compile_ir = compile_ir
        try:
            yield
        finally:
            nvvm.compile_ir = original


def libdevice_casts(cuda) -> dict:
    """:data:`INTRINSICS` as CUDA device functions: the same operations through libdevice."""
    from numba.cuda import libdevice as ld
    dev = cuda.jit(device=True)
    return {
        "f64_from_bits": dev(lambda x: ld.longlong_as_double(np.int64(x))),
        "bits_from_f64": dev(lambda x: np.uint64(ld.double_as_longlong(x))),
        "f32_from_bits": dev(lambda x: ld.int_as_float(np.int32(x))),
        "bits_from_f32": dev(lambda x: np.uint32(ld.float_as_int(x))),
        "ftrunc": dev(lambda x: ld.trunc(x)), "ffloor": dev(lambda x: ld.floor(x)),
        "fma64": dev(lambda x, y, z: ld.fma(x, y, z)), "fma32": dev(lambda x, y, z: ld.fmaf(x, y, z)),
    }


def device_module(module, replacements: dict, cuda, plain: tuple = ()):
    """``module`` as GPU code: its numba functions (and the plain Python functions named in
    ``plain``) become CUDA device functions compiled from their source, in a copy of its
    namespace where ``replacements`` stand for globals (intrinsics, other modules' device
    versions) and each function for its device version.  Returns a module object: numba
    resolves attributes of a module global at compile time."""
    ns = dict(vars(module))
    ns.update(replacements)
    for name, obj in vars(module).items():
        py = getattr(obj, "py_func", None)
        if py is None and name in plain:
            py = obj
        if py is not None and py.__module__ == module.__name__ and name not in replacements:
            ns[name] = cuda.jit(device=True)(_rebound(py, ns))
    shadow = types.ModuleType(module.__name__ + "_cuda")
    vars(shadow).update(ns)
    return shadow


def _rebound(py, ns: dict):
    """Function ``py`` with ``ns`` as its globals (its calls then reach the device versions)."""
    return types.FunctionType(py.__code__, ns, py.__name__, py.__defaults__, py.__closure__)


@functools.cache
def device_modules(cuda) -> dict:
    """The device versions of the CPU kernel modules the GPU rows call, by the global names the
    family modules give them (``C``, ``fused``, ``amd``, ``gps``)."""
    from .. import amd, fused, gps
    dev_c = device_module(C, libdevice_casts(cuda), cuda)
    out = {"C": dev_c}
    for name, mod in (("fused", fused), ("amd", amd), ("gps", gps)):
        out[name] = device_module(mod, {"C": dev_c}, cuda)
    return out


def _cpu(fn):
    import numba
    return numba.njit(fn)


@functools.cache
def simulated_common():
    """``_common`` as the simulator's plain Python row code calls it: the intrinsics wrapped in
    CPU-compiled functions, everything else the CPU-compiled originals."""
    wraps = {
        "f64_from_bits": _cpu(lambda x: C.f64_from_bits(np.uint64(x))),
        "bits_from_f64": _cpu(lambda x: C.bits_from_f64(x)),
        "f32_from_bits": _cpu(lambda x: C.f32_from_bits(np.uint32(x))),
        "bits_from_f32": _cpu(lambda x: C.bits_from_f32(x)),
        "ftrunc": _cpu(lambda x: C.ftrunc(x)), "ffloor": _cpu(lambda x: C.ffloor(x)),
        "fma64": _cpu(lambda x, y, z: C.fma64(x, y, z)), "fma32": _cpu(lambda x, y, z: C.fma32(x, y, z)),
    }
    sim = types.ModuleType(C.__name__ + "_simulated")
    vars(sim).update(vars(C))
    vars(sim).update(wraps)
    return sim


def host(x):
    """A simulator device array's numpy array (what the CPU-compiled helpers take); other values
    as they are."""
    item = getattr(x, "_item", None)
    return x if item is None else item._ary
