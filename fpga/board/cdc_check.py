"""A structural check of a design's clock-domain crossings: every signal read in a domain other
than the one it comes from goes through an approved crossing.

The design is elaborated (no platform) and its statements walked: a register of domain ``D``
comes from ``D``; a combinational signal comes from the domains of everything it is computed from
(its assignment's right-hand side and the conditions around it); a block RAM's read data comes
from its read port's domain.  A crossing is a register of ``D``, or a block RAM port of ``D``,
computed from a signal that comes from another domain.  Approved:

- inside :class:`amaranth.lib.cdc.FFSynchronizer` and :class:`AsyncFFSynchronizer` (the 2-flop
  synchronisers :class:`PulseSynchronizer`, :class:`ResetSynchronizer` and
  :class:`amaranth.lib.fifo.AsyncFIFO` are made of);
- a block RAM written in one domain and read in another (nothing to check: one port per domain);
- a signal a component lists in its ``handshaked`` attribute (multi-bit values held stable
  under a synchronised pulse: :class:`fpga.board.crossing.ComputeBridge`): it and what is computed
  from it come from no domain.

Top-level ports come from no domain, and clock and reset signals are not followed.
"""

from __future__ import annotations

from amaranth.hdl import Fragment
from amaranth.hdl._ast import Assign, Switch
from amaranth.hdl._mem import MemoryInstance
from amaranth.lib.cdc import AsyncFFSynchronizer, FFSynchronizer

__all__ = ["crossings"]

APPROVED = (FFSynchronizer, AsyncFFSynchronizer)


def crossings(top) -> list[str]:
    """The unapproved crossings of ``top`` (an elaboratable), one line each: ``signal (from) -> domain``."""
    walk = _Walk()
    walk.fragment(Fragment.get(top, None), {}, approved=False)
    comes = walk.settle()
    found = []
    for dst_domain, reads, where in walk.sinks:
        for sig in reads:
            if id(sig) in walk.handshaked:
                continue
            other = comes.get(id(sig), set()) - {dst_domain}
            if other:
                found.append(f"{where}: {sig.name} ({', '.join(sorted(other))}) -> {dst_domain}")
    return sorted(set(found))


def _reads(value) -> list:
    """The signals ``value`` reads; none for a domain's clock or reset signal (reset paths are
    not followed: the synchronisers of :mod:`amaranth.lib.cdc` make them)."""
    try:
        return list(value._rhs_signals())
    except NotImplementedError:
        return []


class _Walk:
    def __init__(self):
        self.sources = {}        # id(signal) -> domain, for registers and read data
        self.comb = {}           # id(signal) -> [signals it is computed from]
        self.sinks = []          # (domain, [signals read], where)
        self.handshaked = set()
        self.signals = {}

    def fragment(self, frag, renames, approved):
        renames = {**renames, **{k: renames.get(v, v) for k, v in frag.domain_renames.items()}}
        origins = frag.origins or ()
        approved = approved or any(isinstance(o, APPROVED) for o in origins)
        for origin in origins:
            for sig in getattr(origin, "handshaked", ()):
                self.handshaked.add(id(sig))
        where = ".".join(type(o).__name__ for o in origins[:1]) or "?"
        local = {name for name, cd in frag.domains.items() if cd.local}
        for domain, stmts in frag.statements.items():
            if domain in local:          # a synchroniser's own flops (AsyncFFSynchronizer's)
                continue
            domain = renames.get(domain, domain)
            for stmt in stmts:
                self.statement(stmt, domain, [], where, approved)
        if isinstance(frag, MemoryInstance):
            self.memory(frag, renames, where)
        for sub, _name, _loc in frag.subfragments:
            self.fragment(sub, renames, approved)

    def statement(self, stmt, domain, conds, where, approved):
        if isinstance(stmt, Switch):
            conds = conds + _reads(stmt.test)
            for _patterns, body, _loc in stmt.cases:
                for inner in body:
                    self.statement(inner, domain, conds, where, approved)
        elif isinstance(stmt, Assign):
            reads = _reads(stmt.rhs) + conds
            for sig in stmt.lhs._lhs_signals():
                if domain == "comb":
                    self.comb.setdefault(id(sig), []).extend(reads)
                else:
                    self.sources[id(sig)] = domain
                    if not approved:
                        self.sinks.append((domain, reads, where))

    def memory(self, mem, renames, where):
        for port in [*mem._read_ports, *mem._write_ports]:
            domain = renames.get(port._domain, port._domain)
            if domain == "comb":
                continue
            reads = _reads(port._addr) + _reads(port._en)
            if port in mem._write_ports:
                reads += _reads(port._data)
            else:
                for sig in port._data._lhs_signals():
                    self.sources[id(sig)] = domain
            self.sinks.append((domain, reads, where))

    def settle(self) -> dict:
        """The domains each signal comes from (a fixed point over the combinational signals)."""
        comes = {k: {d} for k, d in self.sources.items() if k not in self.handshaked}
        changed = True
        while changed:
            changed = False
            for k, reads in self.comb.items():
                if k in self.handshaked:
                    continue
                now = set(comes.get(k, set()))
                for sig in reads:
                    now |= comes.get(id(sig), set())
                if now != comes.get(k, set()):
                    comes[k], changed = now, True
        return comes
