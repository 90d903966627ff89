"""A co-simulation's verdict on one instruction, the one vocabulary of the run table, the JUnit
report, the failure files and the board's runs."""

from __future__ import annotations

from golden.rules import Word

__all__ = ["Status"]


class Status(Word):
    """A co-simulation's verdict on one instruction (the run table's last column, a JUnit case's kind)."""

    OK = "ok"                   # every vector matched golden
    MISMATCH = "MISMATCH"       # some vector did not: the failing vectors are saved
    NO_RTL = "no RTL"           # the unit provider has no RTL for the instruction
    ERROR = "ERROR"             # the build or the simulation failed before a verdict
