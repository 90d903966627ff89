"""What a campaign is: instructions, a vector stream cut into numbered blocks, a device under test, a target.

A :class:`Campaign` is pure data.  Its :attr:`~Campaign.id` is a hash of everything that decides which
vectors run on what (instructions, device, vectors, seed, block size, lanes, stalls), so two different
campaigns never share rows of a results database; the target count is left out, so a campaign can be
resumed with a larger ``N``.

Block ``j`` of an instruction is vectors ``j * block .. (j + 1) * block - 1`` of the co-simulation's
stream (:class:`golden.streams.VectorStream` with the same generator and seed): any worker regenerates it
from ``(seed, j)`` alone, and ``make cosim`` with the same SEED and VECTORS sees the same vectors.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import numpy as np

import golden
from cosim.units import unit_provider
from golden.device import DeviceSpec
from golden.streams import BLOCK as GENERATOR_BLOCK
from golden.streams import resolve

DEFAULT_BLOCK = 8 * GENERATOR_BLOCK          # 65,536 vectors: a few seconds of Verilator, milliseconds of golden
DEVICES_HELP = ("rtl (the Verilator unit, default), core (the architecture's tensor core under Verilator), "
                "dut:path/unit.toml (a design of your own, docs/your-rtl.md), "
                "golden:FIELD=VALUE,... (golden with changed parameters: "
                "a planted-fault drill), golden, gpu (PyTorch on this host's GPU), fpga:URL (a board)")


STALL = 0.1                 # the simulated devices' handshake stall probability, as make cosim's STALL
# dot-adds of each block measured for coverage (golden.coverage) by default: every vector on the
# simulators (a few per cent of a Verilator block's seconds), a random sample elsewhere, about a tenth
# of a golden-device block's time on one core (the fastest device)
COVER_SAMPLE = 256

def is_hardware(device: str) -> bool:
    """Whether ``device`` is one piece of hardware (a board): one worker drives it, and that worker's
    golden checks on every core, beside the device (:func:`campaign.blocks.run_block`).  Devices made one
    copy per worker (simulators, models, this host's GPU) are not; read from the spec's word alone
    (:meth:`golden.device.DeviceSpec.kind_of`), so a stored campaign's device need not be installed."""
    return DeviceSpec(DeviceSpec.kind_of(device)).is_hardware if device else False


def check_device(name: str, instructions=()) -> DeviceSpec:
    """Refuse a device spec that no worker could make, before any work is sent out (a device that
    needs hardware, a GPU or a board, is only tried on the workers, where it runs), and give it parsed.
    A ``golden:`` device runs one dot-add of each instruction here, so that a parameter golden refuses
    (``F=-3``) is one line now instead of an ERROR row per instruction from the workers."""
    spec = DeviceSpec.parse(name)                 # the one-line error listing what is valid
    if spec.kind == "dut":
        dut_instructions(name)                    # the description, its files and ports, checked here
    elif spec.kind == "rtl" and spec.argument:    # a campaign's rtl takes its unit from --unit (PIPELINE=)
        raise ValueError(f"device {name!r} cannot run in a campaign; valid: {DEVICES_HELP}")
    elif spec.kind == "golden" and spec.argument:
        _try_golden(spec, instructions)
    return spec


def _try_golden(spec: DeviceSpec, instructions) -> None:
    """One all-zero dot-add of each instruction on a golden device with changed parameters."""
    name = str(spec)
    for arch, instr in instructions:
        ins = golden.lookup(arch, instr)
        ops = [np.zeros((1, ins.k), np.uint64), np.zeros((1, ins.k), np.uint64), np.zeros(1, np.uint64)]
        scales = [np.zeros((1, _scale_words(ins)), np.uint64)] * 2 if ins.scale_format else [None, None]
        try:
            golden.dot_add(ins.with_params(replace(ins.params, **spec.params)), *ops, *scales)
        except (ValueError, TypeError, KeyError, NotImplementedError) as e:
            raise ValueError(f"device {name!r} cannot run {arch} {instr}: {e}") from None


def _scale_words(ins) -> int:
    """Block scales per operand row of ``ins`` (0 when unscaled)."""
    return ins.k // ins.block_size if ins.scale_format and ins.block_size else (1 if ins.scale_format else 0)


# bytes one block may take on a worker: every worker holds a block at a time, so this bounds BLOCK
BLOCK_MEMORY = 2 << 30


def bytes_per_vector(ins) -> int:
    """An upper estimate of one vector's memory while its block runs on a worker: its operand words
    (a, b, their scales, c) and its result as uint64, as a simulator receives them, twice (golden's
    own copies of the operands and its working arrays, the comparison)."""
    return 2 * 8 * (2 * ins.k + 2 * _scale_words(ins) + 3)


def max_block(instructions) -> tuple[int, int, tuple]:
    """``(most, bytes, widest)``: the largest BLOCK whose vectors of the widest of ``instructions``
    (``(arch, name)`` pairs, ``widest`` of them, ``bytes`` a vector) fit in :data:`BLOCK_MEMORY`, a
    whole number of generator blocks."""
    size, widest = max((bytes_per_vector(golden.lookup(*x)), x) for x in instructions)
    return max(GENERATOR_BLOCK, BLOCK_MEMORY // size // GENERATOR_BLOCK * GENERATOR_BLOCK), size, widest


def _kind(device: str) -> str:
    return DeviceSpec.kind_of(device) if device.startswith("dut:") else device


# the simulators' options, and the devices that take them (any other device would ignore them)
OPTION_DEVICES = {"lanes": ("rtl",), "stall": ("rtl", "core", "dut")}
_OPTION_WORDS = {
    "lanes": ("--lanes", "LANES", "the rtl device (the dot-adds per cycle of the unit it builds)"),
    "stall": ("--stall", "STALL", "the simulated devices rtl, core and dut:path/unit.toml (their handshake stalls)"),
}


def check_applies(option: str, value, device: str) -> None:
    """Refuse ``option`` (``lanes``, ``stall``) given to a device that would ignore it, in one line
    naming the option, the device and the devices that take it."""
    kind = _kind(device)
    if kind in OPTION_DEVICES[option]:
        return
    flag, var, takers = _OPTION_WORDS[option]
    why = {"dut": "has the lanes its description fixes", "core": "is a whole tensor core"}.get(kind, "has none")
    raise ValueError(f"{flag} {value} ({var}=) applies to {takers}; the device {device} {why}: "
                     f"leave out {var}=/{flag}")


def check_unit(unit: str, device: str) -> None:
    """The rtl device's unit spec (``--unit``, make's PIPELINE=), parsed here rather than on a worker;
    any other device has no unit, so a unit given to it would be silently ignored: refused."""
    if device == "rtl":
        try:
            unit_provider(unit)                   # raises one line naming the valid specs
        except ValueError as e:
            raise ValueError(str(e) if unit in str(e) else f"--unit {unit} (PIPELINE=): {e}") from None
    elif unit != "hw":
        raise ValueError(f"--unit {unit} (PIPELINE=) applies to the rtl device, which builds a unit; the device "
                         f"{device} has none (leave out PIPELINE=/--unit, or DEVICE=rtl)")


def dut_instructions(device: str, arch: str | None = None, instr: str | None = None) -> list:
    """The instructions of a ``dut:path/unit.toml`` device's targets (ARCH/INSTR filter them); a target with
    ``params`` is refused, since a campaign scores against the catalog entry."""
    from cosim.dut.builds import prepare
    prep = prepare(device[4:], arch, instr)
    for t, _ in prep.pairs:
        if t.params:
            raise ValueError(f"{prep.desc.path}: [[target]] {t.arch} {t.instr} has params; a campaign scores "
                             "against the catalog entry: run it with make cosim DUT=...")
    return [ins for _, ins in prep.pairs]


def dut_digest(device: str) -> str:
    """SHA-256 of a dut device's description and source files, so a changed design is a new campaign."""
    from cosim.dut.description import load
    from cosim.dut.sources import resolve
    desc = load(device[4:])
    h = hashlib.sha256(desc.path.read_bytes())
    for f in resolve(desc).files:
        h.update(Path(f).read_bytes())
    return h.hexdigest()


@dataclass(frozen=True)
class Campaign:
    """One verification campaign.

    Parameters
    ----------
    instructions : tuple of (arch, name)
        Catalog entries, in the order they are reported.
    device : str
        The device under test, a :class:`golden.device.DeviceSpec` word (see :data:`DEVICES_HELP`).
    target : int
        Vectors per instruction; rounded up to whole blocks.
    vectors : str
        Generator name or ``module:function`` (:func:`golden.streams.resolve`).
    seed : int
    block : int
        Vectors per block, a multiple of the generator's block (8,192).
    lanes : int
        Dot-adds per cycle of the RTL unit (``rtl`` only).
    unit : str
        Unit provider of the ``rtl`` device (``hw``, ``hw:pipeline=3``, ``standin:...``).
    stall : float
        Handshake stall probability of the ``rtl`` device, as ``make cosim``'s STALL.
    note : str
        Free text, not part of the campaign's identity.
    cover_sample : int or None
        Dot-adds of each block measured for coverage (:mod:`campaign.coverage`): a random sample of
        this many (seeded by the seed and the block), every vector of the block where it is at least
        the block, none where 0; None: :attr:`cover_rows`' default.  Not part of the identity: it
        decides what is measured, not what runs.
    """

    instructions: tuple
    device: str = "rtl"
    target: int = 100_000
    vectors: str = "mixed"
    seed: int = 1
    block: int = DEFAULT_BLOCK
    lanes: int = 1
    unit: str = "hw"
    stall: float = STALL
    note: str = field(default="", compare=False)
    cover_sample: int | None = None

    def __post_init__(self):
        if not self.instructions:
            raise ValueError("a campaign needs at least one instruction")
        for arch, name in self.instructions:
            golden.lookup(arch, name)              # raises with close matches
        if self.target < 1:
            raise ValueError(f"N (vectors per instruction) must be at least 1, got {self.target}")
        if self.seed < 0:
            raise ValueError(f"SEED must be a non-negative integer, got {self.seed}")
        if self.block < GENERATOR_BLOCK or self.block % GENERATOR_BLOCK:
            raise ValueError(f"BLOCK must be a positive multiple of {GENERATOR_BLOCK:,} vectors, got {self.block:,}")
        most, size, widest = max_block(self.instructions)
        if self.block > most:
            raise ValueError(f"BLOCK {self.block:,} vectors would not fit in a worker's memory; valid: a multiple "
                             f"of {GENERATOR_BLOCK:,} from {GENERATOR_BLOCK:,} to {most:,} (a block may take "
                             f"{BLOCK_MEMORY >> 30} GiB, and a vector of {' '.join(widest)} about {size:,} bytes)")
        if self.lanes < 1:
            raise ValueError(f"LANES must be at least 1, got {self.lanes}")
        if self.cover_sample is not None and (not isinstance(self.cover_sample, int) or self.cover_sample < 0):
            raise ValueError(f"the coverage sample (--cover-sample) must be a whole number of dot-adds a block "
                             f">= 0 (0: no coverage), got {self.cover_sample!r}")
        if not 0.0 <= self.stall < 1.0:
            raise ValueError(f"STALL must be a probability in [0, 1), got {self.stall}")
        if self.lanes != 1:
            check_applies("lanes", self.lanes, self.device)
        if self.stall != STALL:
            check_applies("stall", self.stall, self.device)
        if not isinstance(self.vectors, str):
            raise ValueError("a campaign's vectors are named (a registered name or module:function), "
                             "so that every worker can make them")
        resolve(self.vectors)                     # an unknown generator fails here, not on a worker
        check_device(self.device, self.instructions)
        check_unit(self.unit, self.device)

    @classmethod
    def of(cls, instructions, **kw) -> Campaign:
        """From :class:`golden.Instruction` objects (``golden.select(...)``)."""
        return cls(tuple((i.arch, i.name) for i in instructions), **kw)

    @property
    def blocks(self) -> int:
        """Blocks per instruction."""
        return -(-self.target // self.block)

    @property
    def cover_rows(self) -> int:
        """Dot-adds of each block measured for coverage: ``cover_sample``, by default the whole block on
        the simulated devices (rtl, core, dut:) and :data:`COVER_SAMPLE` on the others (golden, a GPU,
        a board: blocks of milliseconds)."""
        if self.cover_sample is not None:
            return min(self.cover_sample, self.block)
        return self.block if _kind(self.device) in OPTION_DEVICES["stall"] else min(COVER_SAMPLE, self.block)

    @property
    def generator_blocks(self) -> int:
        return self.block // GENERATOR_BLOCK

    def identity(self) -> dict:
        """Everything that decides which vectors run on what (not the target, the note or the coverage
        sample)."""
        d = asdict(self)
        d.pop("target"), d.pop("note"), d.pop("cover_sample")
        d["instructions"] = [list(x) for x in self.instructions]
        if self.device.startswith("dut:"):
            d["dut_sha256"] = dut_digest(self.device)
            d.pop("lanes"), d.pop("unit")
        elif self.device not in ("rtl", "core"):     # the simulators' knobs do not change another device's work
            for k in ("lanes", "unit", "stall"):
                d.pop(k)
        elif self.device == "core":
            d.pop("lanes"), d.pop("unit")
        return d

    @property
    def id(self) -> str:
        text = json.dumps(self.identity(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_json(self) -> str:
        d = asdict(self)
        d["instructions"] = [list(x) for x in self.instructions]
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Campaign:
        """A stored campaign, as it was stored: not checked again (it was when it ran, and a report must
        read it where its device cannot be made: no board, no plugin, a golden it once ran on)."""
        d = json.loads(text)
        d["instructions"] = tuple(tuple(x) for x in d["instructions"])
        c = object.__new__(cls)
        for f in fields(cls):
            object.__setattr__(c, f.name, d.get(f.name, f.default))
        return c

    def describe(self) -> str:
        n = len(self.instructions)
        return (f"campaign {self.id}: {n} instruction(s) x {self.blocks:,} block(s) of {self.block:,} vectors "
                f"({self.blocks * self.block:,} per instruction) on {self.device}, vectors {self.vectors}, "
                f"seed {self.seed}")
