"""The console scripts (``mma-hw``, ``mma-cosim``, ...): each command, or one line naming the extra to install.

``pip install mma-rtl`` (the bare package, golden alone) installs every console script; a command
whose layer needs an extra (``[rtl]`` for Amaranth, ``[campaign]`` for dask, ...) would otherwise die
in a ``ModuleNotFoundError`` traceback.  This module is golden's, so it imports everywhere; it names
each command's module as a string and imports it only when the command runs.
"""

from __future__ import annotations

import importlib
import sys
from contextlib import contextmanager

__all__ = ["COMMANDS", "extra_needed", "launch"]

PROJECT = ("golden", "hw", "cosim", "tb", "formal", "probe", "fpga", "campaign")
# console script -> (its module, its main, the extra that brings what it imports)
COMMANDS = {
    "mma-hw": ("hw.report", "main", "rtl"),
    "mma-cosim": ("cosim.__main__", "main", "cosim"),
    "mma-probe": ("probe.__main__", "main", "probe"),
    "mma-fpga": ("fpga.__main__", "main", "fpga"),
    "mma-campaign": ("campaign.__main__", "main", "campaign"),
    "mma-formal": ("formal.__main__", "main", "formal"),
}


class ExtraMissing(ModuleNotFoundError):
    """A module of an extra is not installed; the message names the extra and how to install it."""


def _third_party(e: ModuleNotFoundError) -> str | None:
    """The missing distribution's top module, or None when it is one of this project's (a broken
    install, whose traceback stays)."""
    missing = (e.name or "").split(".")[0]
    return missing if missing and missing not in PROJECT else None


def _needs(what: str, extra: str, missing: str) -> str:
    return (f"{what} needs the [{extra}] extra ({missing} is not installed): "
            f"pip install 'mma-rtl[{extra}]' (or pip install -e '.[{extra}]' in a checkout)")


@contextmanager
def extra_needed(package: str, extra: str, *, command: bool | None = None):
    """Imports of ``package`` that need ``extra``: a missing module becomes one line naming the extra.

    Parameters
    ----------
    package : str
        What needs it, as the user calls it (``cosim``, ``golden.torch``).
    extra : str
        The extra of pyproject.toml that installs it.
    command : bool, optional
        True in a ``__main__`` module: the line is printed (``error: ...``) and the command exits 2.
        None (a package's ``__init__``): the same when ``python -m`` is importing the package to run
        it (Python sets ``sys.argv[0]`` to ``-m`` while it locates the module); otherwise, for a
        library user, an :class:`ExtraMissing` (a ModuleNotFoundError) with that line as its message.
    """
    try:
        yield
    except ExtraMissing as e:
        if command or (command is None and sys.argv[:1] == ["-m"]):
            print(f"error: {e}", file=sys.stderr)
            raise SystemExit(2) from None
        raise
    except ModuleNotFoundError as e:
        missing = _third_party(e)
        if missing is None:
            raise
        line = _needs(package, extra, missing)
        if command or (command is None and sys.argv[:1] == ["-m"]):
            print(f"error: {line}", file=sys.stderr)
            raise SystemExit(2) from None
        raise ExtraMissing(line, name=e.name) from e


def launch(script: str, argv=None) -> int:
    """Run console script ``script``; exit status 2 and one ``error:`` line when a module of its
    extra is missing (a module of this project missing is a broken install: its traceback stays)."""
    module, function, extra = COMMANDS[script]
    try:
        main = getattr(importlib.import_module(module), function)
        return main(argv)
    except ModuleNotFoundError as e:        # an ExtraMissing too: the script's own extra is named
        missing = _third_party(e)
        if missing is None:
            raise
        print(f"error: {_needs(script, extra, missing)}", file=sys.stderr)
        return 2


def hw() -> int:
    return launch("mma-hw")


def cosim() -> int:
    return launch("mma-cosim")


def probe() -> int:
    return launch("mma-probe")


def fpga() -> int:
    return launch("mma-fpga")


def campaign() -> int:
    return launch("mma-campaign")


def formal() -> int:
    return launch("mma-formal")
