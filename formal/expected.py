"""The properties ``make formal`` does not prove, declared: each with the verdict it gives at the
default timeout and why.

A property that is not proved fails ``python -m formal`` (exit status 1) unless it is declared
here with the verdict it gave: a timeout or a bounded result is then reported by name, with its
reason, and the run passes.  A declared property that is proved after all (a longer ``--timeout``,
a faster machine, a better solver) is reported as ``proved (declared: timeout)``, and passes: its
entry here can go.  A declaration tolerates only its own verdict; a failed proof or an error always
fails the run.
"""

from __future__ import annotations

from typing import NamedTuple

from .verdicts import Status

__all__ = ["DECLARABLE", "EXPECTED", "Expected", "judge", "mark", "WORDS"]

DECLARABLE = (Status.BOUNDED, Status.TIMEOUT)
# how the summary words each status
WORDS = {Status.PROVED: "proved", Status.BOUNDED: "bounded", Status.FAILED: "failed", Status.TIMEOUT: "timed out",
         Status.ERROR: "errored"}


class Expected(NamedTuple):
    """What a declared property gives instead of ``proved`` (one of :data:`DECLARABLE`), and why."""

    verdict: Status          # one of DECLARABLE
    reason: str


# property name (as ``python -m formal --list`` prints it) -> what it gives at 120 s, and why
EXPECTED: dict[str, Expected] = {
    "round/f32.W525.p23.RNE.ieee.mask.halves": Expected(
        Status.TIMEOUT, "CDNA1's 525-bit exact window, beyond the solver in 120 s; its 282-bit one proves in "
                        "about 40 s"),
    "normalise/f32.S525.F520.p23.RNE.ieee": Expected(
        Status.TIMEOUT, "the 525-bit rounder inside CDNA1's normaliser, beyond the solver in 120 s; the "
                        "282-bit one proves in about 50 s"),
    "align/sig16.frac14.F520.c=f32": Expected(
        Status.TIMEOUT, "CDNA1's 520-bit exact window, beyond the solver in 120 s"),
    "align/sig22.frac20.F276.c=f32": Expected(
        Status.TIMEOUT, "CDNA1's 276-bit exact window, at the limit: proved in 123 s on a loaded 2-core "
                        "machine, so it may time out or prove at 120 s"),
    "protocol/core.cdna3.pl0.latency": Expected(
        Status.BOUNDED, "its base case holds; the induction step fails on a group-select state outside the "
                        "core's 10 groups, not yet understood (docs/formal.md, 'The stream protocol')"),
}


def _check(table: dict) -> None:
    for name, e in table.items():
        if not isinstance(e, Expected) or e.verdict not in DECLARABLE or not e.reason.strip():
            raise TypeError(f"formal.expected: {name}: expected Expected(one of {', '.join(DECLARABLE)}, "
                            f"a reason), got {e!r}")


_check(EXPECTED)


def mark(v, expected: dict | None = None) -> str:
    """What a property's output line adds: ``(as declared)`` or ``(declared: timeout)`` when a
    declared property gave another verdict; nothing for an undeclared one."""
    e = (EXPECTED if expected is None else expected).get(v.name)
    if e is None:
        return ""
    return "  (as declared)" if v.status == e.verdict else f"  (declared: {e.verdict})"


def judge(verdicts, expected: dict | None = None) -> tuple[list[str], int]:
    """The lines that follow the counts in ``python -m formal``'s summary, and the exit status:
    1 when a property failed, errored, or timed out or was bounded without being declared so
    (or gave another verdict than its declaration), else 0.

    Parameters
    ----------
    verdicts : iterable of formal.runner.Verdict
    expected : dict
        Property name -> :class:`Expected` (default :data:`EXPECTED`).
    """
    expected = EXPECTED if expected is None else expected
    declared: dict = {}
    beyond, unproved = [], {}
    for v in verdicts:
        e = expected.get(v.name)
        if v.status == Status.PROVED:
            if e is not None:
                beyond.append(f"{v.name} (declared: {e.verdict})")
        elif e is not None and v.status == e.verdict:
            declared.setdefault(v.status, []).append(f"{v.name} ({e.reason})")
        else:
            unproved.setdefault(v.status, []).append(
                v.name + (f" (declared: {e.verdict})" if e is not None else ""))
    lines = []
    if declared:
        lines.append("as declared in formal/expected.py: " + "; ".join(
            f"{len(names)} {WORDS[s]}: {', '.join(names)}" for s, names in declared.items()))
    if beyond:
        lines.append(f"proved although declared otherwise in formal/expected.py (its entry can go once it "
                     f"proves every time): "
                     f"{', '.join(beyond)}")
    if unproved:
        lines.append("NOT PROVED: " + "; ".join(f"{len(names)} {WORDS[s]}: {', '.join(names)}"
                                                for s, names in unproved.items()))
    return lines, 1 if unproved else 0
