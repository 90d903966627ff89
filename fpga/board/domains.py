"""The clock domains of the board, named once: every room (the gateware's crossing and top, the
toolchain's build reports and records) reads these words.

A word (:class:`golden.rules.Word`, a ``StrEnum``): a member is its Amaranth domain name
(``Domain.SYNC == "sync"``), so it is passed to ``DomainRenamer``, ``ClockDomain`` and
``PulseSynchronizer`` as it is, and a record's TOML keeps the plain word.
"""

from __future__ import annotations

from golden.rules import Word

__all__ = ["Domain"]


class Domain(Word):
    """A clock domain of the board design."""

    SYNC = "sync"    # the board's oscillator: the UART and the host link (the whole design without a PLL)
    FAST = "fast"    # the design clock where a PLL makes it: the unit, its sequencer, the self-test engine
