"""One block of a campaign, as a worker runs it: regenerate its vectors, run the device and golden, compare.

Everything here runs on a dask worker (or in the test's process) and depends only on its arguments: the
block's vectors come from ``(seed, block)`` (:mod:`campaign.spec`), the device is made once per worker
process and kept (an RTL device builds its unit once; the build cache under ``build/cosim`` is shared
and locked, so workers on one machine build each configuration once between them).
"""

from __future__ import annotations

import os
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

import golden
from golden.device import DeviceSpec, Unavailable, check_output, takes_narrow, unsupported_rows
from golden.streams import VectorStream
from probe.backends import make_device

from .coverage import block_coverage
from .spec import Campaign, is_hardware

OPERANDS = ("a", "b", "c", "scale_a", "scale_b")
MAX_SAVED = 64                     # failing vectors a block sends back for its replay file

_devices: dict = {}                # this worker process's devices, by what makes them
_allocator_tuned = False


def tune_allocator() -> None:
    """Keep numpy's batch temporaries on glibc's heap in this process.

    dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``; setting it switches off
    glibc's dynamic mmap threshold, so every temporary above 128 KiB is mmapped and faulted in anew
    on each call: a golden block of 65,536 HMMA.16816.F32 dot-adds took 186,911 minor page faults and
    0.43 s in such a worker, 9 and 0.15 s after this (``mallopt``: mmap only above 32 MiB, trim above
    256 MiB).  A no-op where there is no glibc.
    """
    global _allocator_tuned
    if _allocator_tuned:
        return
    _allocator_tuned = True
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
        libc.mallopt(M_TRIM_THRESHOLD, 256 << 20)
    except (OSError, AttributeError):
        pass


@dataclass
class BlockResult:
    """What a worker reports for one block.

    ``status``: ``done`` (compared; ``mismatches`` may be > 0), ``unavailable`` (the device cannot run
    this instruction here: no RTL, no GPU) or ``error`` (the device failed: ``message``).  ``failing``
    holds up to :data:`MAX_SAVED` failing vectors (operands, ``got``, ``expected`` and ``index``, the
    vector's number in the instruction's stream).  ``coverage``: the block's bin hits
    (:func:`campaign.coverage.block_coverage`), None where the campaign measures none.
    """

    arch: str
    instr: str
    block: int
    status: str = "done"
    vectors: int = 0
    mismatches: int = 0
    unsupported: int = 0
    started: float = 0.0
    seconds: float = 0.0
    worker: str = ""
    message: str = ""
    failing: dict | None = field(default=None, repr=False)
    coverage: dict | None = field(default=None, repr=False)


def device(c: Campaign):
    """The campaign's device in this process (made on first use)."""
    key = (c.device, c.lanes, c.unit, c.stall, c.seed)
    if key not in _devices:
        spec = DeviceSpec.parse(c.device)
        _devices[key] = make_device(spec, **device_options(c, spec))
    return _devices[key]


def device_options(c: Campaign, spec: DeviceSpec) -> dict:
    """The campaign's options that its device takes: the rtl unit's lanes and unit spec, the simulators'
    stalls and seed; none for golden, a GPU or a board."""
    if spec.kind == "rtl":
        return {"lanes": c.lanes, "unit": c.unit, "stall": c.stall, "seed": c.seed}
    if spec.kind in ("core", "dut"):
        return {"stall": c.stall, "seed": c.seed}
    return {}


def operands(c: Campaign, ins, block: int, narrow: bool = False):
    """Block ``block``'s vectors ``(a, b, c, scale_a, scale_b)``: the stream's vectors
    ``block * c.block ...``, independent of who asks and when; uint64, or with ``narrow`` the same
    values in their formats' own width (for golden: drawn and checked in 1/8 to 1/2 of the bytes)."""
    stream = VectorStream(ins, c.vectors, c.seed, start_block=block * c.generator_blocks, narrow=narrow)
    return stream.take(c.block)


def device_operands(dev, ops):
    """What the device receives: ``ops`` as they are where it declares ``narrow_operands`` (golden),
    else uint64 as it always has (a device may shift or pack the words, where a narrow dtype would
    overflow silently; the drivers in this tree widen first, a plug-in need not)."""
    if takes_narrow(dev):
        return ops
    return tuple(None if x is None else np.asarray(x, np.uint64) for x in ops)


def _golden_beside(c: Campaign, ins, ops):
    """For hardware (one board, one worker): golden's results of the block as a future, started now
    on a thread and every core, so it runs while the board runs the same block (the kernels release
    the GIL; the worker waits on the link).  None for simulators and models: they run one worker per
    core already, and golden runs on that core after them."""
    if not is_hardware(c.device):
        return None
    global _checker
    if _checker is None:
        _checker = ThreadPoolExecutor(1, thread_name_prefix="campaign-golden")
    return _checker.submit(golden.dot_add, ins, *ops)


_checker = None


def run_block(c: Campaign, arch: str, instr: str, block: int) -> BlockResult:
    """Run one block on the device and on golden, compare them (:func:`golden.same_results`), and
    measure the coverage of the compared vectors (``c.cover_rows`` of them, a random sample)."""
    tune_allocator()
    ins = golden.lookup(arch, instr)
    res = BlockResult(arch, instr, block, started=time.time(), worker=f"{socket.gethostname()}:{os.getpid()}")
    t0 = time.perf_counter()
    ops = operands(c, ins, block, narrow=True)         # golden's operands, in their own width
    beside = _golden_beside(c, ins, ops)
    try:
        dev = device(c)
        wide = device_operands(dev, ops)
        got = check_output(ins, dev(ins, *wide), len(ops[2]), getattr(dev, "name", c.device))
        skip = unsupported_rows(dev, ins, *wide)
    except Unavailable as e:
        res.status, res.message = "unavailable", str(e)
        return res
    except Exception as e:                       # reported with the block, so the campaign can go on
        res.status, res.message = "error", f"{type(e).__name__}: {e}"
        return res
    expected = beside.result() if beside is not None else golden.dot_add(ins, *ops, threads=1)
    same = golden.same_results(ins, got, expected)
    if skip is not None:
        same |= skip
        res.unsupported = int(skip.sum())
    bad = np.nonzero(~same)[0]
    res.vectors = len(same) - res.unsupported
    res.mismatches = len(bad)
    if len(bad):
        keep = bad[:MAX_SAVED]
        res.failing = {name: None if x is None else np.asarray(x[keep], np.uint64)   # replay files: uint64
                       for name, x in zip(OPERANDS, ops)}
        res.failing.update(got=got[keep], expected=np.asarray(expected, np.uint64)[keep],
                           index=keep.astype(np.int64) + block * c.block)
    res.coverage = block_coverage(c, ins, block, ops, None if skip is None else ~skip)
    res.seconds = time.perf_counter() - t0
    return res


def measure_block(c: Campaign, arch: str, instr: str, block: int) -> dict | None:
    """A stored block's coverage measured again (a worker's task on resume): its vectors regenerated
    and measured as a block is (:func:`campaign.coverage.block_coverage`; the rows the device could
    not run are not known here, so they may be measured too)."""
    ins = golden.lookup(arch, instr)
    return block_coverage(c, ins, block, operands(c, ins, block, narrow=True))
