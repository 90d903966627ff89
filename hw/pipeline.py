"""Pipeline plumbing shared by every datapath: stage registers and delay lines.

Every arithmetic stage is a :class:`Stage`: a ``wiring.Component`` with an
``en`` input (the whole pipeline advances when ``en`` is high, so a stalled
output holds every stage) and a ``latency`` property, the number of register
stages between its inputs and its outputs.  :class:`Delay` carries side
signals (special-value flags, exponents, operands of later chain passes)
alongside a stage for the same number of cycles.
"""

from __future__ import annotations

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Stage", "Delay", "register", "any_of"]


class Stage(wiring.Component):
    """Base of the arithmetic stages: subclasses add their ports and set ``LATENCY``.

    Members
    -------
    en : In(1)
        Advance the pipeline this cycle.
    """

    LATENCY = 1

    def __init__(self, signature_members: dict):
        super().__init__({"en": In(1), **signature_members})

    @property
    def latency(self) -> int:
        """Register stages between inputs and outputs (cycles)."""
        return self.LATENCY


def register(m: Module, en, value, name: str, shape=None, init=0):
    """A register loaded from ``value`` when ``en``; returns the register's output."""
    shape = shape if shape is not None else value.shape()
    reg = Signal(shape, name=name, init=init)
    with m.If(en):
        m.d.sync += reg.eq(value)
    return reg


class Delay(wiring.Component):
    """``cycles`` enabled registers in series (0 cycles: a wire).

    Parameters
    ----------
    shape : shape-castable
        Shape of the delayed value.
    cycles : int
        Latency in cycles.

    Members
    -------
    en : In(1)
    i : In(shape)
    o : Out(shape)
    """

    def __init__(self, shape, cycles: int):
        if cycles < 0:
            raise ValueError("a delay cannot be negative")
        self._shape = shape
        self.cycles = cycles
        super().__init__({"en": In(1), "i": In(shape), "o": Out(shape)})

    @property
    def latency(self) -> int:
        return self.cycles

    def elaborate(self, platform):
        m = Module()
        value = self.i
        for n in range(self.cycles):
            reg = Signal(self._shape, name=f"d{n}")
            with m.If(self.en):
                m.d.sync += reg.eq(value)
            value = reg
        m.d.comb += self.o.eq(value)
        return m


def any_of(bits):
    """OR of a list of 1-bit values (0 for an empty list)."""
    out = 0
    for b in bits:
        out = out | b
    return out


def silence(obj, _seen=None) -> None:
    """Mark an elaboratable and every elaboratable it holds as deliberately unused.

    Units are built for their latency or their groups alone (reports, errors); Amaranth would
    otherwise warn, when they are collected, that each stage "was created but never used".
    """
    from amaranth.hdl import Elaboratable
    seen = _seen if _seen is not None else set()
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, Elaboratable):
        obj._MustUse__silence = True
        children = vars(obj).values()
    elif isinstance(obj, (list, tuple)):
        children = obj
    elif isinstance(obj, dict):
        children = obj.values()
    else:
        return
    for child in children:
        if isinstance(child, (Elaboratable, list, tuple, dict)):
            silence(child, seen)

