"""Words that every layer's command line and ``make`` take the same way.

``make campaign RESUME=on``, ``make fpga-sim WAVES=yes``, ``python -m campaign run --resume=no``:
one parser (:func:`yes_no`), so a word accepted in one place is accepted in all, and anything else
is refused with the list of valid words instead of being read as "no".
"""

from __future__ import annotations

import argparse
import numbers

__all__ = ["YES", "NO", "Parser", "check_whole", "whole_number", "yes_no", "yes_no_option"]

YES = ("1", "yes", "y", "true", "on", "enable", "enabled")
NO = ("0", "no", "n", "false", "off", "disable", "disabled", "")


def yes_no(word, what: str) -> bool:
    """A common yes/no word as a bool (any case); anything else is a ValueError naming ``what``.

    Parameters
    ----------
    word : str or bool
        ``1``, ``yes``, ``y``, ``true``, ``on``, ``enable`` (and ``0``, ``no``, ``off``, ... for no).
    what : str
        The setting's name for the message (``WAVES``, ``RESUME``).
    """
    if isinstance(word, bool):
        return word
    w = str(word).strip().lower()
    if w in YES:
        return True
    if w in NO:
        return False
    raise ValueError(f"{what}={word}: expected yes or no ({', '.join(YES[:-1])}; {', '.join(NO[:-2])})")


def yes_no_option(what: str):
    """An argparse ``type`` for a flag that also takes a word: ``--resume``, ``--resume=on``,
    ``--resume=0`` (use with ``nargs="?", const=True, default=False``)."""
    def parse(text: str) -> bool:
        try:
            return yes_no(text, what)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    parse.__name__ = "yes/no word"
    return parse


def is_whole(value) -> bool:
    """Whether ``value`` is a whole number: a Python or numpy integer, not a bool (which Python counts as
    an int) and not a float that happens to be whole."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def whole_number(low: int, high: int | None = None):
    """An argparse ``type`` for a whole number in ``low..high`` (``1_000``, ``1,000`` accepted): ``-n 0``,
    ``--baud 0``, ``--port 99999`` are refused by the parser, before anything is built."""
    def parse(text: str) -> int:
        try:
            v = int(str(text).replace("_", "").replace(",", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if v < low or (high is not None and v > high):
            span = f"{low}..{high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {span}, got {v}")
        return v
    parse.__name__ = "whole number"
    return parse


def check_whole(value, option: str, low: int, high: int | None = None) -> int:
    """``value`` (an option's parsed number) if it is a whole number in ``low..high``, else one ValueError
    in the project's words: ``--seed must be a non-negative integer, got -1``, ``--top must be at least 1,
    got 0``, ``-n must be at least 1 and at most 1,000,000,000, got 0``."""
    if is_whole(value) and value >= low and (high is None or value <= high):
        return value
    shown = f"{value:,}" if is_whole(value) else repr(value)
    if high is not None:
        raise ValueError(f"{option} must be at least {low:,} and at most {high:,}, got {shown}")
    if low == 0:
        raise ValueError(f"{option} must be a non-negative integer, got {shown}")
    raise ValueError(f"{option} must be at least {low:,}, got {shown}")


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose refusals are one line, as every other bad input is: ``error: ...``
    naming the option and what is valid (and where the usage is), exit status 2; no usage block."""

    def error(self, message):
        self.exit(2, f"error: {message} ({self.prog} --help lists the options)\n")
