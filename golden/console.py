"""How the project's commands end.

:func:`exit_with` is ``sys.exit(main())`` for every ``python -m`` entry point, except that a reader
that stops reading (``python -m fpga records --table | head``) ends the command quietly, with the
status a shell gives a Unix tool stopped by SIGPIPE, instead of a ``BrokenPipeError`` traceback.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, NoReturn

__all__ = ["BROKEN_PIPE", "exit_with"]

BROKEN_PIPE = 141       # 128 + SIGPIPE: what a shell reports for a tool whose reader went away


def exit_with(main: Callable[[], int | None]) -> NoReturn:
    """Run ``main`` and exit with its status (:data:`BROKEN_PIPE` when stdout's reader went away)."""
    try:
        code = main()
        sys.stdout.flush()          # a last buffered write fails here, not at the interpreter's exit
    except BrokenPipeError:
        # Python flushes stdout once more at exit and would report that failure: stdout goes to
        # /dev/null first (the recipe of Python's signal module documentation)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = BROKEN_PIPE
    sys.exit(code)
