"""The verdict a property gets, named once: :mod:`formal.runner` gives it, :mod:`formal.expected`
declares and judges it, ``python -m formal`` counts it."""

from __future__ import annotations

from golden.rules import Word

__all__ = ["Status", "STATUSES"]


class Status(Word):
    """``Verdict.status``: what the solver said about one property (a ``StrEnum``: the word it prints)."""

    PROVED = "proved"
    BOUNDED = "bounded"      # k-induction's base case passed (no failure within the depth) but its induction
    #                          step did not (the property is not k-inductive at that depth; sby says UNKNOWN)
    FAILED = "failed"
    TIMEOUT = "timeout"
    ERROR = "error"


STATUSES = tuple(Status)
