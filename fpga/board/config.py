"""What a board runs (:class:`BoardConfig`): the unit, its buffers and link, its identity, and the
packing of golden bit-API operands into the entries the unit takes.

The packing is co-simulation's (:class:`cosim.payload.PayloadLayout` for a :class:`hw.DotAddUnit`,
:class:`cosim.tensor_core.CoreLayout` for a tensor core): an entry is one beat of the unit's input
stream as an integer, LSB first, in ``in_bytes`` little-endian bytes; a result is one beat of its
output stream in ``out_bytes`` bytes.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from amaranth import Shape
from amaranth.lib import data

import golden
import hw
from cosim.payload import PayloadLayout
from cosim.tensor_core import CoreLayout
from golden.api import prepare_operands
from golden.catalog import Instruction
from golden.formats import get_format
from hw.pipeline import questions_only

from .protocol import IDENTIFY_MAGIC, VERSION, max_length
from .uart import clocks_per_bit

__all__ = ["BoardConfig", "Operands", "max_depth"]

_U16 = 0xFFFF


def max_depth(in_bytes: int, out_bytes: int) -> int:
    """The deepest buffers whose LOAD (:func:`fpga.board.protocol.max_length`: its header and the entries)
    and READ (the results) fit a frame's 16-bit length, for entries of ``in_bytes`` and results of
    ``out_bytes``."""
    return min((_U16 - 4) // in_bytes, _U16 // out_bytes)


class Operands:
    """Rows of one instruction's operands as bit patterns (golden's checks and broadcasting).

    Members
    -------
    ins : Instruction
    a, b : uint64 [rows, K];  c : uint64 [rows];  scale_a, scale_b : uint64 [rows, K/block] or None
    batch : tuple
        The broadcast batch shape the results take.
    """

    def __init__(self, ins: Instruction, a, b, c, scale_a=None, scale_b=None):
        prepared = prepare_operands(ins, a, b, c, scale_a, scale_b)
        self.ins = ins
        self.a, self.b, self.c = prepared.a, prepared.b, prepared.c
        self.scale_a, self.scale_b = prepared.sa, prepared.sb
        self.batch = prepared.batch

    @property
    def rows(self) -> int:
        return self.c.shape[0]

    def take(self, lo: int, hi: int) -> Operands:
        """Rows ``lo`` to ``hi`` (a view)."""
        part = object.__new__(Operands)
        part.ins, part.batch = self.ins, (hi - lo,)
        part.a, part.b, part.c = self.a[lo:hi], self.b[lo:hi], self.c[lo:hi]
        part.scale_a = None if self.scale_a is None else self.scale_a[lo:hi]
        part.scale_b = None if self.scale_b is None else self.scale_b[lo:hi]
        return part


@dataclass(frozen=True)
class BoardConfig:
    """What one board runs: a unit, the depth of its buffers and its serial link.

    Parameters
    ----------
    arch : str
        Architecture (any name or alias golden takes; stored canonical).
    instructions : tuple of str
        Catalog names: one builds a :class:`hw.DotAddUnit`; with ``core=True`` a
        :class:`hw.TensorCore` restricted to these, opcodes in this order.
    lanes : int
        Dot-adds per entry (a DotAddUnit's lanes; a tensor core has one).
    core : bool
    depth : int
        Entries in the input and in the output buffer.
    clock_hz, baud : int
        The board clock and the UART rate.
    timeout_bytes : int
        Board-side inter-byte timeout within a frame, in byte-times.
    pipelining : str
        The unit's pipelining spec (:meth:`hw.Pipelining.parse`: "0" .. "3", "2,align=2"); stored
        canonical.  It changes the latency and the clock the unit closes at, never the arithmetic,
        so the config hash leaves it out (the latency it brings is in the hash).
    """

    arch: str
    instructions: tuple
    lanes: int = 1
    core: bool = False
    depth: int = 256
    clock_hz: int = 25_000_000
    baud: int = 1_000_000
    timeout_bytes: int = 1000
    pipelining: str = "0"

    def __post_init__(self):
        object.__setattr__(self, "pipelining", str(hw.Pipelining.parse(self.pipelining)))
        arch = golden.canonical_arch(self.arch)
        names = (self.instructions,) if isinstance(self.instructions, str) else tuple(self.instructions)
        found = [golden.lookup(arch, n if isinstance(n, str) else n.name) for n in names]
        object.__setattr__(self, "arch", arch)
        object.__setattr__(self, "instructions", tuple(i.name for i in found))
        self._check(found)

    def _check(self, found) -> None:
        for name in ("lanes", "depth", "clock_hz", "baud", "timeout_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if not found:
            raise ValueError("a board needs at least one instruction")
        clocks_per_bit(self.clock_hz, self.baud)          # a rate the UART cannot make is refused here
        if len(set(self.instructions)) != len(self.instructions):
            raise ValueError(f"instructions repeat: {', '.join(self.instructions)}")
        if self.core:
            if self.lanes != 1:
                raise ValueError(f"a tensor core takes one dot-add per entry: lanes must be 1, not {self.lanes}")
            hw.TensorCore.check(self.arch, found)
        else:
            if len(found) != 1:
                raise ValueError(f"{len(found)} instructions ({', '.join(self.instructions)}) need core=True "
                                 f"(a tensor core of them); a dot-add unit runs one")
            hw.DotAddUnit.check(found[0], None, self.lanes)
        deepest = max_depth(self.in_bytes, self.out_bytes)
        if self.depth > deepest:
            raise ValueError(f"depth {self.depth} does not fit the 16-bit frame length with {self.in_bytes}-byte "
                             f"entries and {self.out_bytes}-byte results; valid depths: 1..{deepest}")

    @classmethod
    def from_names(cls, arch: str, instr: str, **kw) -> BoardConfig:
        """The board of what a command line names (``golden.select``'s names, families, comma lists)."""
        found = golden.select(arch, instr)
        arches = sorted({i.arch for i in found})
        if len(arches) != 1:
            raise ValueError(f"a board runs one architecture; {arch!r} names {', '.join(arches)}")
        if len(found) > 1 and not kw.get("core", False):
            names = ", ".join(i.name for i in found[:8]) + (" ..." if len(found) > 8 else "")
            raise ValueError(f"{instr!r} names {len(found)} instructions on {arches[0]} ({names}); name one, "
                             f"or pass core=True for a tensor core of them")
        return cls(arches[0], tuple(dict.fromkeys(i.name for i in found)), **kw)

    # ---- the unit --------------------------------------------------------------------------------

    @cached_property
    def instruction_objects(self) -> tuple:
        """The catalog entries, in opcode order."""
        return tuple(golden.lookup(self.arch, n) for n in self.instructions)

    def unit(self):
        """A fresh unit: ``hw.dot_add_unit(ins, lanes)`` or ``hw.TensorCore(arch, instructions)``."""
        if self.core:
            return hw.TensorCore(self.arch, list(self.instruction_objects), pipelining=self.pipelining)
        return hw.dot_add_unit(self.instruction_objects[0], lanes=self.lanes, pipelining=self.pipelining)

    @cached_property
    def _unit_facts(self) -> tuple:
        """(input payload shape, output payload shape, latency, a tensor core's CoreLayout or None),
        from a unit built only to be asked."""
        with questions_only():
            unit = self.unit()
            facts = (*_facts(unit), CoreLayout(unit) if self.core else None)
            del unit                       # dropped inside the block (see questions_only)
        return facts

    @cached_property
    def payload(self):
        """Co-simulation's packing of this unit's payloads: a :class:`cosim.payload.PayloadLayout`,
        or for a tensor core a :class:`cosim.tensor_core.CoreLayout`."""
        return self._unit_facts[3] if self.core else PayloadLayout(self.instruction_objects[0], self.lanes)

    @property
    def in_shape(self):
        """The unit's input payload shape (what :class:`fpga.board.link.HostLink` feeds it)."""
        return self._unit_facts[0]

    @property
    def out_shape(self):
        return self._unit_facts[1]

    @property
    def in_bits(self) -> int:
        return _bits(self.in_shape)

    @property
    def out_bits(self) -> int:
        return _bits(self.out_shape)

    @property
    def in_bytes(self) -> int:
        return -(-self.in_bits // 8)

    @property
    def out_bytes(self) -> int:
        return -(-self.out_bits // 8)

    @property
    def latency(self) -> int:
        """Cycles from an entry into the unit to its result."""
        return self._unit_facts[2]

    @property
    def opcodes(self) -> dict:
        """``{name: opcode}`` (a dot-add unit's one instruction has opcode 0)."""
        return {name: n for n, name in enumerate(self.instructions)}

    def instruction(self, instr) -> Instruction:
        """One of this board's instructions, by name or Instruction; ValueError naming the valid ones."""
        name = getattr(instr, "name", instr)
        if getattr(instr, "arch", self.arch) == self.arch and name in self.instructions:
            return self.instruction_objects[self.instructions.index(name)]
        raise ValueError(f"{getattr(instr, 'arch', self.arch)} {name} is not on this board; it runs "
                         f"{self.arch} {', '.join(self.instructions)}")

    @property
    def name(self) -> str:
        """A short name for build folders: the first instruction, how many more, lanes or core."""
        more = f"+{len(self.instructions) - 1}" if len(self.instructions) > 1 else ""
        kind = "core" if self.core else f"x{self.lanes}"
        deep = "" if self.pipelining == "0" else f"_p{self.pipelining.replace(',', '_').replace('=', '')}"
        return f"{self.arch}_{self.instructions[0]}{more}_{kind}{deep}".replace("/", "_")

    @property
    def clocks_per_bit(self) -> int:
        """Board clock cycles per UART bit (:func:`fpga.board.uart.clocks_per_bit`: a rate error over 2 %
        is refused)."""
        return clocks_per_bit(self.clock_hz, self.baud)

    def describe(self) -> str:
        kind = "tensor core" if self.core else f"lanes={self.lanes}"
        deep = "" if self.pipelining == "0" else f", pipelining {self.pipelining}"
        return f"{self.arch} {','.join(self.instructions)} ({kind}, depth {self.depth}{deep})"

    # ---- identity --------------------------------------------------------------------------------

    @cached_property
    def identify_json(self) -> str:
        """The compact JSON object (sorted keys) of the identify blob."""
        return _compact({"protocol": VERSION, "arch": self.arch, "core": self.core, "lanes": self.lanes,
                         "instructions": [[op, name] for name, op in self.opcodes.items()],
                         "latency": self.latency, "in_bits": self.in_bits, "in_bytes": self.in_bytes,
                         "out_bits": self.out_bits, "out_bytes": self.out_bytes, "depth": self.depth,
                         "clock_hz": self.clock_hz, "baud": self.baud, "layout": self.layout,
                         "pipelining": self.pipelining})

    @property
    def layout(self) -> dict:
        """Where each operand sits in one lane of an entry: ``{name: [bit offset, width]}``, LSB first
        (lane ``l`` of an entry starts at bit ``l * in_bits / lanes``)."""
        return {name: [field.offset, field.width] for name, field in self._lane_layout}

    @cached_property
    def config_hash(self) -> int:
        """u32 of what decides the arithmetic and the packing (the datapaths, not the clock)."""
        text = _compact({"arch": self.arch, "core": self.core, "lanes": self.lanes, "latency": self.latency,
                         "instructions": [[i.name, repr(i.datapath)] for i in self.instruction_objects],
                         "in_bits": self.in_bits, "out_bits": self.out_bits, "depth": self.depth})
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")

    @cached_property
    def identify_blob(self) -> bytes:
        """``b"MMAFPGA1"``, config_hash:u32, json_length:u16, the JSON (what IDENTIFY answers)."""
        text = self.identify_json.encode()
        return IDENTIFY_MAGIC + struct.pack("<IH", self.config_hash, len(text)) + text

    @property
    def max_length(self) -> int:
        """The longest request payload the board takes."""
        return max_length(self.depth, self.in_bytes)

    # ---- packing ---------------------------------------------------------------------------------

    def entries(self, rows: int) -> int:
        """Entries that ``rows`` dot-adds take."""
        return -(-rows // self.lanes)

    def operands(self, instr, a, b, c, scale_a=None, scale_b=None) -> Operands:
        """Checked, broadcast bit patterns of one instruction's operands (golden's rules)."""
        return Operands(self.instruction(instr), a, b, c, scale_a, scale_b)

    def pack(self, instr, a=None, b=None, c=None, scale_a=None, scale_b=None) -> bytes:
        """R rows of golden bit-API operands -> ``ceil(R / lanes)`` entries of ``in_bytes`` bytes each
        (a last, partly filled entry is padded with zero dot-adds).

        ``instr`` is an instruction of this board with its operands, or :class:`Operands` alone.
        """
        ops = instr if isinstance(instr, Operands) else self.operands(instr, a, b, c, scale_a, scale_b)
        n = self.entries(ops.rows)
        if self.core:                  # operands in the core's widest slots, K_max elements, the opcode first
            k, s = self.payload.k_max, self.payload.s_max
            width = {"a": k, "b": k, "scale_a": s, "scale_b": s}
            words = self.payload.pack(np.full(n, self.opcodes[ops.ins.name], np.uint64),
                                      *_padded(ops, n, width))
        else:                          # a last, partly filled entry: zero dot-adds in its spare lanes
            words = self.payload.pack(*_padded(ops, n * self.lanes, {}))
        return _to_bytes(words, self.in_bytes)

    def unpack(self, instr, data: bytes, rows: int) -> np.ndarray:
        """``rows`` results (D bit patterns, golden's dtype) from ``ceil(rows / lanes)`` results' bytes."""
        ins = self.instruction(instr)
        n = self.entries(rows)
        if len(data) != n * self.out_bytes:
            raise ValueError(f"{rows} rows take {n} results of {self.out_bytes} bytes ({n * self.out_bytes}), "
                             f"got {len(data)} bytes")
        d = self.payload.unpack_out(_from_bytes(data, n, self.out_bytes))[:rows]
        fd = get_format(ins.d_format)
        if (d >> np.uint64(fd.storage_bits)).any():
            bad = int(np.nonzero(d >> np.uint64(fd.storage_bits))[0][0])
            raise ValueError(f"result {bad} has bits set above the {fd.storage_bits}-bit {fd.name} result: "
                             f"0x{int(d[bad]):x} (the board sent a malformed result)")
        return d.astype(fd.dtype)

    @property
    def _lane_layout(self) -> data.StructLayout:
        """One lane's operands (a tensor core's whole entry, opcode included)."""
        return self.in_shape if self.core else self.in_shape.elem_shape


def _facts(unit) -> tuple:
    members = unit.signature.members
    return (members["i"].signature.members["payload"].shape, members["o"].signature.members["payload"].shape,
            unit.latency)


def _padded(ops: Operands, rows: int, columns: dict) -> tuple:
    """``ops``' a, b, c, scale_a, scale_b as zero-padded uint64 arrays of ``rows`` rows (and of
    ``columns[name]`` columns where given)."""
    out = []
    for name in ("a", "b", "c", "scale_a", "scale_b"):
        x = getattr(ops, name)
        if x is None:
            out.append(None)
            continue
        x = np.asarray(x, np.uint64).reshape(ops.rows, -1)
        full = np.zeros((rows, columns.get(name, x.shape[1])), np.uint64)
        full[:ops.rows, :x.shape[1]] = x
        out.append(full[:, 0] if name == "c" else full)
    return tuple(out)


def _bits(shape) -> int:
    return shape.size if isinstance(shape, data.Layout) else Shape.cast(shape).width


def _compact(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def _to_bytes(words: np.ndarray, nbytes: int) -> bytes:
    raw = np.ascontiguousarray(words, "<u8").view(np.uint8).reshape(words.shape[0], -1)
    return raw[:, :nbytes].tobytes()


def _from_bytes(raw: bytes, n: int, nbytes: int) -> np.ndarray:
    width = -(-nbytes // 8) + 1
    buf = np.zeros((n, width * 8), np.uint8)
    buf[:, :nbytes] = np.frombuffer(raw, np.uint8).reshape(n, nbytes)
    return buf.view("<u8").astype(np.uint64)
