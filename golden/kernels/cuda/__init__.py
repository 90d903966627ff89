"""golden's compiled kernels on a GPU (numba-cuda): every family the CPU path compiles, one thread per
row, bit for bit the CPU path.

Optional (``pip install .[cuda]``, numba-cuda); nothing in golden imports it, and ``make test`` never
needs a GPU (its tests run numba-cuda's simulator, ``NUMBA_ENABLE_CUDASIM=1``, where numba-cuda is
installed).  ``tools/gpu_kernel_check.py`` runs every family on a GPU against ``golden.dot_add``.

One module per family (:data:`FAMILIES`): :mod:`.fda` (FDA, CoFDA's chain, block scales, the
compiled-path lowering, ``c_last``), :mod:`.gdfs` (Blackwell's UTCOMMA MXF4/NVF4), :mod:`.amd`
(CDNA3's FDRDA and GFDRDA, chains included), :mod:`.gps` (CDNA2), :mod:`.sfma` (f64 and f32 fma
chains).  Each takes the CPU kernels' format rows, value tables and parameter vector
(:func:`golden.kernels.spec.build`) and calls their own numba functions (``_common``'s decoding,
``pow2``, ``finish``; ``fused.gdfs_pass``, ``amd.fdrda_pass``, ``gps.flush``, ...), recompiled for
the GPU from their source (:mod:`._device`), so every intermediate is the same float64, float32 or
int64.

Not covered, and why: every design the CPU kernels leave to the numpy path (:func:`supports` is
false where :func:`golden.kernels.spec.supports` is: CDNA1's exact sums, ``F="exact"``, the
unmodelled Params fields); beyond that, a pass of more than :data:`MAX_TERMS` products (FDRDA,
GDFS: a thread holds a pass in a fixed-size array) and a GPS group that is not a power of two or
holds more than :data:`MAX_TERMS` (the CPU kernel's pairwise sums equal per-group sums only for a
power of two).  No catalog entry the CPU kernels compute falls outside.
"""

from __future__ import annotations

import importlib

import numpy as np

from ...descriptors import KernelCode
from .. import spec as S
from . import _device

__all__ = ["FAMILIES", "MAX_TERMS", "THREADS_PER_BLOCK", "available", "dot_add", "family", "launch", "prepare",
           "supports"]

THREADS_PER_BLOCK = 128
MAX_TERMS = 64                  # the per-thread arrays' size (gdfs.MAX_TERMS, amd.MAX_TERMS, gps.MAX_GROUP)
# The module computing each kernel code (golden.descriptors.KernelCode)
FAMILIES = {KernelCode.FDA: "fda", KernelCode.GDFS: "gdfs", KernelCode.FDRDA: "amd", KernelCode.GFDRDA: "amd",
            KernelCode.GPS: "gps", KernelCode.SFMA: "sfma"}

cuda = None                     # numba.cuda, imported on first use (the simulator swaps it in the kernel's globals)
_KERNELS: dict = {}
PRM_TABLE = 4                   # where the parameter vector is in Prepared.tables (isz, fmts, vtab, etab, prm, order)


def available() -> bool:
    """Whether numba-cuda imports and sees a GPU (or its simulator is on)."""
    try:
        from numba import cuda as numba_cuda
    except ImportError:
        return False
    try:
        return bool(numba_cuda.is_available())
    except Exception:                          # a driver that is there but broken: no GPU
        return False


def family(ins) -> str | None:
    """The name of the module computing ``ins`` on a GPU (a key's value of :data:`FAMILIES`), or None."""
    return FAMILIES.get(S.kernel_code(ins.datapath.params))


def supports(ins) -> bool:
    """Whether a GPU kernel computes this instruction: a design the CPU kernels compute
    (:func:`golden.kernels.spec.supports`, whatever the host's fma) within the per-thread arrays."""
    dp = ins.datapath
    p = dp.params
    name = family(ins)
    if name is None or not S.supports(p, dp.formats, dp.k, dp.scale_format, dp.block_size):
        return False
    L = int(S.param_vector(p, dp.k, dp.block_size, dp.scale_format is not None)[S.P_L])
    if name in ("gdfs", "amd"):
        return L <= MAX_TERMS
    if name == "gps":
        g = p.group
        return g <= MAX_TERMS and g & (g - 1) == 0
    return True


def _compile(name: str):
    """Family ``name``'s CUDA kernel, made on first use (importing this package needs no
    numba-cuda).  On a GPU its row code and the CPU modules it calls become device functions; on
    the simulator the row code runs as Python over the simulator's arrays unwrapped to numpy."""
    global cuda
    if name not in _KERNELS:
        from numba import cuda as numba_cuda
        cuda = numba_cuda
        mod = importlib.import_module(f"{__name__}.{name}")
        if _device.simulated():
            mod.cuda = numba_cuda
            mod.C = _device.simulated_common()
            _KERNELS[name] = cuda.jit(_simulated_kernel(mod))
        else:
            deps = _device.device_modules(numba_cuda)
            shadow = _device.device_module(mod, {**deps, "cuda": numba_cuda}, numba_cuda, mod.PLAIN)
            _KERNELS[name] = cuda.jit(_device._rebound(mod.kernel, vars(shadow)))
    return _KERNELS[name]


def _simulated_kernel(mod):
    """The simulator's kernel for family module ``mod``: its row function per thread, over numpy."""
    row, scratch, host = mod.row, mod.scratch, _device.host

    def kernel(a, b, c, sa, sb, isz, K, fmts, vtab, etab, prm, order, out):
        r = cuda.grid(1)
        if r < out.shape[0]:
            arrays = [host(x) for x in (a, b, c, sa, sb, isz, fmts, vtab, etab, prm, order)]
            with np.errstate(all="ignore"):                  # float32 overflow is the arithmetic, not an error
                out[r] = row(r, *arrays[:6], K, *arrays[6:], *scratch())
    return kernel


class Prepared:
    """One call's operands and tables on the GPU (:func:`prepare`), launched by :func:`launch`."""

    def __init__(self, ins, args, tables, rows: int, prm: np.ndarray):
        self.ins, self.args, self.tables, self.rows, self.prm = ins, args, tables, rows, prm

    def faulty(self) -> Prepared:
        """The same operands on the GPU with the planted rounding fault on (only the parameter
        vector is copied again): what a check runs to show it catches a wrong kernel."""
        prm = self.prm.copy()
        prm[S.P_FAULT] = 1
        tables = list(self.tables)
        tables[PRM_TABLE] = cuda.to_device(prm)
        return Prepared(self.ins, self.args, tables, self.rows, prm)


def prepare(ins, a, b, c, scale_a=None, scale_b=None, *, fault: bool = False) -> Prepared:
    """Copy a call's operands (``a, b [R, K]``, ``c [R]``, scales ``[R, K // block]``: unsigned bit
    patterns) and the design's tables to the GPU.  ``fault``: the test-only planted rounding fault
    of :func:`golden.kernels.planted_fault`."""
    from .. import _operand, product_order
    if not supports(ins):
        raise ValueError(f"{ins.arch} {ins.name} ({ins.algorithm}) is not computed by the GPU kernels: "
                         f"designs the CPU kernels compute are (golden.kernels.cuda.supports)")
    _compile(family(ins))
    dp = ins.datapath
    fmts, vtab, etab, prm = S.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)
    prm = prm.copy()
    prm[S.P_FAULT] = int(fault)
    packed = [_operand(None if x is None else np.ascontiguousarray(x)) for x in (a, b, c, scale_a, scale_b)]
    isz = np.array([s for _, s in packed], np.int64)
    args = [cuda.to_device(v) for v, _ in packed]
    tables = [cuda.to_device(x) for x in (isz, fmts, vtab, etab, prm, product_order(dp.params, dp.k))]
    return Prepared(ins, args, tables, np.asarray(c).reshape(-1).shape[0], prm)


def launch(p: Prepared):
    """Run the family's kernel over a prepared call: d's bits as a uint64 device array (asynchronous)."""
    kernel = _compile(family(p.ins))
    out = cuda.device_array(p.rows, np.uint64)
    blocks = max(1, -(-p.rows // THREADS_PER_BLOCK))
    with _device.no_fma_contraction():                   # the first launch compiles
        kernel[blocks, THREADS_PER_BLOCK](*p.args, p.tables[0], p.ins.datapath.k, *p.tables[1:], out)
    return out


def dot_add(ins, a, b, c, scale_a=None, scale_b=None, *, fault: bool = False) -> np.ndarray:
    """``golden.dot_add``'s bits computed on the GPU, for an instruction :func:`supports` takes
    (operands as :func:`prepare` takes them)."""
    out = launch(prepare(ins, a, b, c, scale_a, scale_b, fault=fault))
    return out.copy_to_host().astype(ins.datapath.d_format.dtype)
