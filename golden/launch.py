"""The console scripts (``mma-hw``, ``mma-cosim``, ...): each command, or one line naming the extra to install.

``pip install mma-rtl`` (the bare package, golden alone) installs every console script; a command
whose layer needs an extra (``[rtl]`` for Amaranth, ``[campaign]`` for dask, ...) would otherwise die
in a ``ModuleNotFoundError`` traceback.  This module is golden's, so it imports everywhere; it names
each command's module as a string and imports it only when the command runs.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["COMMANDS", "launch"]

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


def launch(script: str, argv=None) -> int:
    """Run console script ``script``; exit status 2 and one ``error:`` line when a module of its
    extra is missing (a module of this project missing is a broken install: its traceback stays)."""
    module, function, extra = COMMANDS[script]
    try:
        main = getattr(importlib.import_module(module), function)
        return main(argv)
    except ModuleNotFoundError as e:
        missing = (e.name or "").split(".")[0]
        if not missing or missing in PROJECT:
            raise
        print(f"error: {script} needs the [{extra}] extra ({missing} is not installed): "
              f"pip install 'mma-rtl[{extra}]' (or pip install -e '.[{extra}]' in a checkout)", file=sys.stderr)
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
