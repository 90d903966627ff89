"""Pipeline plumbing shared by every datapath: stages, pipelines of stages and delay lines.

Every arithmetic block is a :class:`Stage`: a ``wiring.Component`` with a ``latency``, the
number of register stages between its inputs and its outputs.  Stages have no enable: the unit
and the tensor core wrap their datapaths in Amaranth's ``EnableInserter``, so the ``sync``
domain of every stage and delay line advances only when the output is free, and a stalled
output holds the whole pipeline.  A :class:`Pipeline` is a stage made of stages in series; its
latency and ``stage_latencies`` come from those stages.  :class:`Delay` carries side signals
(special-value flags, exponents, operands of later chain passes) alongside a stage for the same
number of cycles.

:class:`Checked` components validate their arguments before they exist, so a rejected one is
never created (and Amaranth never warns that it was "created but never used");
:func:`questions_only` is for designs built only to be asked their latency or grouping.
"""

from __future__ import annotations

import contextlib
import gc
import warnings

from amaranth import Module, Signal
from amaranth.hdl import UnusedElaboratable
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.catalog import Datapath

from .pipelining import as_pipelining

__all__ = ["Stage", "Pipeline", "Delay", "Checked", "DatapathPipeline", "delayed", "any_of", "questions_only"]


class Stage(wiring.Component):
    """Base of the arithmetic stages: subclasses add their ports and set ``LATENCY``."""

    LATENCY = 1

    @property
    def latency(self) -> int:
        """Register stages between inputs and outputs (cycles)."""
        return self.LATENCY


class Pipeline(Stage):
    """A stage made of stages in series: ``latency`` and ``stage_latencies`` add them up.

    Subclasses set ``self.stages`` (the stages in order, named by their class) or override
    :meth:`named_stages`, whose entries may also be plain cycle counts for stages built only at
    elaboration (the GPS adders).
    """

    stages: list = []

    def named_stages(self) -> list[tuple[str, object]]:
        """``(name, stage or cycles)`` in order."""
        return [(type(s).__name__, s) for s in self.stages]

    @property
    def stage_latencies(self) -> list[tuple[str, int]]:
        """``(stage, cycles)`` in order: what ``latency`` adds up."""
        return [(name, s if isinstance(s, int) else s.latency) for name, s in self.named_stages()]

    @property
    def latency(self) -> int:
        return sum(cycles for _, cycles in self.stage_latencies)


class Delay(wiring.Component):
    """``cycles`` registers in series (0 cycles: a wire).

    Parameters
    ----------
    shape : shape-castable
        Shape of the delayed value.
    cycles : int
        Latency in cycles.

    Members
    -------
    i : In(shape)
    o : Out(shape)
    """

    def __init__(self, shape, cycles: int):
        if cycles < 0:
            raise ValueError("a delay cannot be negative")
        self._shape = shape
        self.cycles = cycles
        super().__init__({"i": In(shape), "o": Out(shape)})

    @property
    def latency(self) -> int:
        return self.cycles

    def elaborate(self, platform):
        m = Module()
        value = self.i
        for n in range(self.cycles):
            reg = Signal(self._shape, name=f"d{n}")
            m.d.sync += reg.eq(value)
            value = reg
        m.d.comb += self.o.eq(value)
        return m


def delayed(m: Module, name: str, shape, cycles: int, value):
    """``value`` through a :class:`Delay` of ``cycles`` added to ``m`` as ``name``; returns its output."""
    d = m.submodules[name] = Delay(shape, cycles)
    m.d.comb += d.i.eq(value)
    return d.o


class Checked:
    """Mixin of components that check their arguments before they exist.

    ``check`` (a classmethod taking the constructor's arguments) raises on bad input before the
    object is created, so a rejected component never exists to be reported as unused.
    """

    @classmethod
    def check(cls, *args, **kwargs) -> None:
        """Raise ``ValueError`` (or ``NotImplementedError``) naming what is wrong and what is valid."""

    def __new__(cls, *args, **kwargs):
        cls.check(*args, **kwargs)
        return super().__new__(cls, *args, src_loc_at=1, **kwargs)


class DatapathPipeline(Checked, Pipeline):
    """Base of the datapaths (one lane of a dot-add unit, one group of a tensor core): built from
    a :class:`golden.Datapath` alone, checked before it exists.

    Subclasses name the base algorithms they build (``BASES``) and whether they take block
    scales (``SCALES``: ``"never"``, ``"optional"``, ``"required"``), and extend :meth:`check`.
    Every subclass takes ``(datapath, pipelining=None)``: a :class:`hw.Pipelining`, a level or
    a spec (``None``: level 0), which its stages read for their register stages.

    Members
    -------
    a, b : In(ArrayLayout(storage bits, k))
    c : In(c_format.storage_bits)
    scale_a, scale_b : In(ArrayLayout(scale storage bits, k // block_size)), when scaled
    d : Out(d_format.storage_bits)
    """

    BASES: tuple = ()
    SCALES = "never"

    @classmethod
    def check(cls, datapath, pipelining=None) -> None:
        as_pipelining(pipelining)                     # a bad spec is refused before anything is built
        if not isinstance(datapath, Datapath):
            raise TypeError(f"{cls.__name__} takes a golden.Datapath (Instruction.datapath), "
                            f"not {type(datapath).__name__}")
        base = datapath.params.base
        if base not in cls.BASES:
            raise ValueError(f"{cls.__name__} builds {', '.join(cls.BASES)}, not {base} ({datapath})")
        scaled = datapath.scale_format is not None
        if scaled and cls.SCALES == "never":
            raise ValueError(f"{base} has no block scales, but the datapath has scale format "
                             f"{datapath.scale_format.name} ({datapath})")
        if not scaled and cls.SCALES == "required":
            raise ValueError(f"{base} needs a scale format and block size ({datapath})")
        if scaled and (not datapath.block_size or datapath.k % datapath.block_size):
            raise ValueError(f"block size {datapath.block_size} must divide K={datapath.k} ({datapath})")
        if datapath.k < 1:
            raise ValueError(f"K must be at least 1, not {datapath.k}")

    def __init__(self, datapath: Datapath, members: dict | None = None):
        self.datapath = datapath
        super().__init__({**self.operand_members(datapath), **(members or {})})

    @staticmethod
    def operand_members(datapath: Datapath) -> dict:
        """The ports a, b, c, [scale_a, scale_b] and d of a datapath."""
        fa, fb, fc, fd = datapath.formats
        members = {"a": In(data.ArrayLayout(fa.storage_bits, datapath.k)),
                   "b": In(data.ArrayLayout(fb.storage_bits, datapath.k)),
                   "c": In(fc.storage_bits)}
        if datapath.scale_format is not None:
            scale = data.ArrayLayout(datapath.scale_format.storage_bits, datapath.scale_blocks)
            members |= {"scale_a": In(scale), "scale_b": In(scale)}
        return members | {"d": Out(fd.storage_bits)}


def any_of(bits):
    """OR of a list of 1-bit values (0 for an empty list)."""
    out = 0
    for b in bits:
        out = out | b
    return out


@contextlib.contextmanager
def questions_only():
    """Build designs only to ask them questions (latency, stages, groups, opcodes), never to
    elaborate them: Amaranth's ``UnusedElaboratable`` warnings are ignored inside the block.

    Drop every such design before the block ends (a function's locals are): the warning comes
    when an object is collected, which the block forces on the way out.  The objects that were
    there before the block are frozen out of that collection (``gc.freeze``): a full collection of
    a large process's heap takes tenths of a second, and a test worker or a build asks hundreds of
    times (the FPGA tests took 119 s of CPU with a full collection here, 67 s with this one).
    """
    frozen_before = gc.get_freeze_count() > 0       # a cosim session freezes its design for good
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        gc.freeze()
        try:
            yield
        finally:
            try:
                gc.collect()
            finally:
                if not frozen_before:                   # unfreeze() would thaw the session's too
                    gc.unfreeze()
