"""Co-simulate a whole tensor core (:class:`hw.tensor_core.TensorCore`) under Verilator.

Every instruction of an architecture (or a subset) behind one opcode-selected stream: each
dot-add picks a random instruction, so every mix of instructions is in flight in the pipeline,
with random valid/ready stalls as in ``python -m cosim run``.  Each result is scored against
``golden.dot_add`` of its own instruction, with that instruction's NaN rule.

``python -m cosim tensor-core hopper [INSTR] [-n N | --budget S]``, ``make cosim-core ARCH=hopper``.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np
from amaranth.hdl import Shape
from amaranth.lib import data

import golden
from golden.device import Device
from golden.streams import resolve

from . import build as bld
from .payload import get_field, put_field
from .scoring import Result, simulate_and_score

__all__ = ["CoreBackend", "CoreLayout", "CoreStream", "run_core", "CoreResult"]


class CoreLayout:
    """Payload bits of a :class:`TensorCore`: opcode, a[K_max], b[K_max], c[, scales] -> d."""

    lanes = 1

    def __init__(self, core):
        # what it needs of the core, not the core: a layout outlives a core built only to be asked
        self.instructions = list(core.instructions)
        self.k_max, self.s_max = core.k_max, core.s_max
        self.ins = core.instructions[0]                 # for labels; rows name their own instruction
        self.fields = []                                # (name, index, offset, width)
        for name, fld in core.payload_layout:
            shape = fld.shape
            if isinstance(shape, data.ArrayLayout):
                w = Shape.cast(shape.elem_shape).width
                self.fields += [(name, j, fld.offset + j * w, w) for j in range(shape.length)]
            else:
                self.fields.append((name, None, fld.offset, Shape.cast(shape).width))
        self.in_width = core.payload_layout.size
        self.out_width = core.d_bits
        self.in_words = (self.in_width + 63) // 64
        self.out_words = (self.out_width + 63) // 64

    def beats(self, n_vectors: int) -> int:
        return n_vectors

    def pack(self, opcode, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
        ops = {"opcode": opcode, "a": a, "b": b, "c": c, "scale_a": scale_a, "scale_b": scale_b}
        words = np.zeros((len(c), self.in_words + 1), np.uint64)
        for name, j, offset, width in self.fields:
            x = np.asarray(ops[name], np.uint64)
            put_field(words, x if j is None else x[:, j], offset, width)
        return words[:, :self.in_words]

    def unpack_out(self, words) -> np.ndarray:
        return get_field(np.asarray(words, np.uint64), 0, self.out_width)

    def mismatching(self, got, expected, ops) -> np.ndarray:
        """Rows that differ, each under its own instruction's NaN rule."""
        opcode = np.asarray(ops[0])
        bad = []
        for op in np.unique(opcode):
            rows = np.nonzero(opcode == op)[0]
            ins = self.instructions[int(op)]
            bad.append(rows[golden.mismatching(ins, got[rows], expected[rows])])
        return np.sort(np.concatenate(bad)) if bad else np.zeros(0, np.int64)


class CoreStream:
    """Random instructions, each with operands from a generator (:func:`golden.streams.resolve`), padded."""

    def __init__(self, core, kind="mixed", seed: int = 1):
        self.core, self.generate = core, resolve(kind)
        self.rng = np.random.default_rng(seed)
        self.per_instruction = np.zeros(len(core.instructions), np.int64)

    def take(self, n: int):
        core, rng = self.core, self.rng
        opcode = rng.integers(0, len(core.instructions), n).astype(np.uint64)
        a = np.zeros((n, core.k_max), np.uint64)
        b = np.zeros((n, core.k_max), np.uint64)
        c = np.zeros(n, np.uint64)
        sa = np.zeros((n, core.s_max), np.uint64) if core.s_max else None
        sb = np.zeros((n, core.s_max), np.uint64) if core.s_max else None
        for op, ins in enumerate(core.instructions):
            rows = np.nonzero(opcode == op)[0]
            if not len(rows):
                continue
            self.per_instruction[op] += len(rows)
            xa, xb, xc, xsa, xsb = self.generate(ins, len(rows), rng)
            a[rows, :ins.k], b[rows, :ins.k], c[rows] = xa, xb, xc
            if xsa is not None:
                sa[rows, :xsa.shape[1]], sb[rows, :xsb.shape[1]] = xsa, xsb
        return opcode, a, b, c, sa, sb


def core_reference(core):
    """``reference(label, opcode, a, b, c, sa, sb)``: golden.dot_add of each row's instruction."""
    def reference(_label, opcode, a, b, c, sa, sb):
        d = np.zeros(len(c), np.uint64)
        for op in np.unique(opcode):
            rows = np.nonzero(opcode == op)[0]
            ins = core.instructions[int(op)]
            nb = ins.k // ins.block_size if ins.scale_format else 0
            d[rows] = golden.dot_add(ins, a[rows, :ins.k], b[rows, :ins.k], c[rows],
                                     sa[rows, :nb] if nb else None, sb[rows, :nb] if nb else None)
        return d
    return reference


@dataclass
class CoreResult:
    arch: str
    instructions: int
    groups: int
    latency: int
    result: Result
    per_instruction: dict = field(default_factory=dict)     # name -> vectors
    failing: list = field(default_factory=list)             # (name, a, b, c, expected, got)

    @property
    def ok(self) -> bool:
        return self.result.ok


def run_core(arch: str, instr: str | None = None, *, n: int | None = None, budget_s: float = 60.0,
             min_n: int = 100_000, seed: int = 1, stall: float = 0.1, vectors: str = "mixed",
             progress: float = 15.0, core=None, reference=None, pipelining=None) -> CoreResult:
    """Build ``TensorCore(arch, pipelining=...)`` (the instructions matching ``instr``) and co-simulate it."""
    if core is None:
        from hw.tensor_core import TensorCore
        instructions = golden.select(arch, instr)
        if len({i.arch for i in instructions}) > 1:
            raise ValueError(f"a tensor core is one architecture's; {arch!r} names several")
        core = TensorCore(instructions[0].arch, instructions, pipelining=pipelining)
    name = "tensor_core" if instr in (None, "", "all") else f"tensor_core_{instr}"
    b = bld.build_unit(core, core.arch, name)
    layout = CoreLayout(core)
    stream = CoreStream(core, vectors, seed)
    res = simulate_and_score(b, layout, stream, reference or core_reference(core), mismatching=layout.mismatching,
                             n=n, budget_s=budget_s, min_n=min_n, seed=seed, stall_in=stall, stall_out=stall,
                             progress=progress, label=f"{core.arch} tensor core")
    res.build_seconds, res.build_source = b.seconds, b.source
    out = CoreResult(core.arch, len(core.instructions), len(core.groups), core.latency, res,
                     {i.name: int(k) for i, k in zip(core.instructions, stream.per_instruction)})
    f = res.failing
    if f:
        for r in range(min(5, len(f["expected"]))):
            ins = core.instructions[int(f["op0"][r])]
            out.failing.append((ins.name, [int(x) for x in f["op1"][r][:ins.k]],
                                [int(x) for x in f["op2"][r][:ins.k]], int(f["op3"][r]),
                                int(f["expected"][r]), int(f["got"][r])))
    return out


def report(r: CoreResult, out=None) -> None:
    out = out or sys.stdout
    res = r.result
    build = "cached" if res.build_source == "cached" else f"built in {res.build_seconds:.0f} s"
    print(f"{r.arch} tensor core: {r.instructions} instruction(s) on {r.groups} shared datapath(s), latency "
          f"{r.latency} (measured {res.latency_measured}), II {res.ii_measured}; {build}", file=out)
    print(f"{res.vectors:,} dot-adds, a random instruction each, {res.mismatches:,} mismatches, "
          f"{res.seconds:.1f} s, {res.rate:,.0f} dot-adds/s: {res.status}"
          + (f" ({res.message})" if res.message and not res.ok else ""), file=out)
    few = min(r.per_instruction.values()) if r.per_instruction else 0
    print(f"each instruction: {few:,} to {max(r.per_instruction.values()):,} dot-adds", file=out)
    for name, a, b, c, want, got in r.failing:
        print(f"  {name}: a={[hex(x) for x in a]} b={[hex(x) for x in b]} c={c:#x}: golden {want:#x}, "
              f"RTL {got:#x}", file=out)


def main(args) -> int:
    """``python -m cosim tensor-core ARCH [INSTR]``: each named architecture's core in turn."""
    from hw.tensor_core import TensorCore
    t0 = time.perf_counter()
    by_arch: dict = {}
    for ins in golden.select(args.arch, args.instr):
        by_arch.setdefault(ins.arch, []).append(ins)
    status = 0
    for arch, instructions in by_arch.items():
        r = run_core(arch, args.instr, n=args.n, budget_s=args.budget or 60.0, seed=args.seed, stall=args.stall,
                     vectors=args.vectors, progress=args.progress,
                     core=TensorCore(arch, instructions, pipelining=getattr(args, "pipeline", None)))
        report(r)
        status |= not r.ok
    print(f"({time.perf_counter() - t0:.0f} s in all)", file=sys.stderr)
    return status


class _FixedCoreStream:
    """Given rows of one instruction, served with its opcode and padded to the core's widths."""

    def __init__(self, core, op: int, ins, a, b, c, sa, sb):
        n = len(c)
        self.ops = [np.full(n, op, np.uint64), np.zeros((n, core.k_max), np.uint64),
                    np.zeros((n, core.k_max), np.uint64), np.asarray(c, np.uint64),
                    np.zeros((n, core.s_max), np.uint64) if core.s_max else None,
                    np.zeros((n, core.s_max), np.uint64) if core.s_max else None]
        self.ops[1][:, :ins.k], self.ops[2][:, :ins.k] = a, b
        if sa is not None:
            self.ops[4][:, :sa.shape[1]], self.ops[5][:, :sb.shape[1]] = sa, sb
        self.taken = 0

    def take(self, n: int):
        idx = np.arange(self.taken, self.taken + n) % len(self.ops[3])
        self.taken += n
        return tuple(None if x is None else x[idx] for x in self.ops)


class CoreBackend(Device):
    """An architecture's whole tensor core (every instruction behind its opcode) as a backend:
    ``CoreBackend()(ins, a, b, c, scale_a, scale_b)`` runs the rows through the core with ``ins``'s
    opcode (one Verilator simulation per call) and returns ``d``.  The core is built once per
    architecture (cached under ``build/cosim`` as ``make cosim-core`` builds it).

    Parameters
    ----------
    stall : float
        Handshake stall probability on each side.
    seed : int
        Seed of the stall pattern.
    pipelining : str or Pipelining, optional
        As :class:`hw.tensor_core.TensorCore` takes it.
    """

    name = "core"

    def __init__(self, stall: float = 0.0, seed: int = 1, pipelining=None):
        if not 0.0 <= stall < 1.0:
            raise ValueError(f"stall must be a probability in [0, 1), got {stall}")
        self.stall, self.seed, self.pipelining = stall, seed, pipelining
        self._cores: dict = {}

    def _core(self, arch: str):
        if arch not in self._cores:
            from hw.tensor_core import TensorCore
            core = TensorCore(arch, golden.select(arch), pipelining=self.pipelining)
            self._cores[arch] = core, bld.build_unit(core, core.arch, "tensor_core"), CoreLayout(core)
        return self._cores[arch]

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
        from .session import Capture, SimError, simulate
        core, built, layout = self._core(ins.arch)
        ops = [(i, x) for i, x in enumerate(core.instructions) if (x.arch, x.name) == (ins.arch, ins.name)]
        if not ops:
            raise ValueError(f"{ins.arch} {ins.name} is not in the {ins.arch} tensor core")
        n = len(c)
        capture = Capture(n)
        stream = _FixedCoreStream(core, ops[0][0], ins, a, b, c, scale_a, scale_b)
        s = simulate(built, layout, stream, capture, n=n, batch_vectors=max(n, 256), seed=self.seed,
                     stall_in=self.stall, stall_out=self.stall, label=f"{ins.arch} tensor core")
        if s.error or s.timing_error:
            raise SimError(f"the {ins.arch} tensor core failed on {ins.name}: {s.error or s.timing_error}")
        if capture.filled != n:
            raise SimError(f"the {ins.arch} tensor core returned {capture.filled} of {n} outputs")
        return capture.d
