"""Reading a description's TOML tables: typed fields, each problem one line naming the file and the field.

:class:`Reader` is what :mod:`cosim.dut.description` and :mod:`cosim.dut.signal_map` read their tables
with; :class:`DescriptionError` is the one error of a description (one line: the file, the field, what
is valid).
"""

from __future__ import annotations

from pathlib import Path


class DescriptionError(ValueError):
    """A description (or what it names) is wrong: one line, naming the field and what is valid."""


class Reader:
    """Typed access to one table of the TOML, each error naming file and field."""

    def __init__(self, path: Path, table: dict, where: str):
        self.path, self.table, self.where = path, table, where

    def fail(self, key: str, what: str):
        raise DescriptionError(f"{self.path}: {self.where}{key}: {what}")

    def get(self, key, kind, default=None, required=False, valid: str = ""):
        if key not in self.table:
            if required:
                self.fail(key, f"missing (required{'; ' + valid if valid else ''})")
            return default
        v = self.table[key]
        if kind is int and (isinstance(v, bool) or not isinstance(v, int)):
            self.fail(key, f"{v!r} is not an integer{'; ' + valid if valid else ''}")
        if kind is not int and not isinstance(v, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            self.fail(key, f"{v!r} is a {type(v).__name__}, expected {names}{'; ' + valid if valid else ''}")
        return v

    def name(self, key, default=None, required=False):
        v = self.get(key, str, default, required, "a port or module name")
        if v is not None and not is_identifier(v.replace("{i}", "0")):
            self.fail(key, f"{v!r} is not a Verilog identifier")
        return v

    def choice(self, key, words, default):
        """One of ``words`` (default ``default``): anything else is one line naming the valid ones."""
        v = self.get(key, str, default)
        if v not in words:
            self.fail(key, f"{v!r}; valid: {', '.join(words)}")
        return v

    def unknown(self, allowed):
        extra = sorted(set(self.table) - set(allowed))
        if extra:
            self.fail(extra[0], f"unknown field; valid: {', '.join(allowed)}")


def is_identifier(s: str) -> bool:
    return bool(s) and (s[0].isalpha() or s[0] == "_") and all(ch.isalnum() or ch in "_$" for ch in s)
