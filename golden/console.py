"""How the project's commands end, and what they check before they start.

:func:`exit_with` is ``sys.exit(main())`` for every ``python -m`` entry point, except that

- a reader that stops reading (``python -m fpga records --table | head``) ends the command quietly,
  with the status a shell gives a Unix tool stopped by SIGPIPE, instead of a ``BrokenPipeError``
  traceback;
- a module of an extra that is not installed (``python -m cosim run`` without Amaranth) ends it
  with one line naming the extra to install, exit 2;
- Ctrl-C ends it with one line, ``interrupted`` (and what was kept, when the command said so with
  :func:`on_interrupt`), and the status a shell gives a tool stopped by SIGINT, 130.

:func:`check_output` is how a command checks a file it will write (a report, a plot, an export)
before the work that fills it, so that a path that cannot be written is refused in one line up
front instead of failing after the results are computed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from .launch import ExtraMissing

__all__ = ["BROKEN_PIPE", "INTERRUPTED", "OutputError", "check_output", "exit_with", "on_interrupt"]

BROKEN_PIPE = 141       # 128 + SIGPIPE: what a shell reports for a tool whose reader went away
INTERRUPTED = 130       # 128 + SIGINT: what a shell reports for a tool stopped by Ctrl-C

_interrupt_note: list[str] = []


class OutputError(ValueError):
    """An output path that cannot be written (the message names the option, the path and why)."""


def on_interrupt(note: str) -> None:
    """What the ``interrupted`` line adds if Ctrl-C comes from now on (``the finished blocks are in
    the database; rerun with --resume``); an empty note says nothing more."""
    _interrupt_note[:] = [note] if note else []


def check_output(path, what: str, *, overwrite: bool = True) -> Path:
    """``path`` as a :class:`~pathlib.Path` once it is known that a file can be written there.

    Parameters
    ----------
    path : str or os.PathLike
        The file the command will write; missing parent folders are allowed (the command makes
        them), as long as the nearest existing one is a folder this user can write to.
    what : str
        The option or make variable that named it (``--report``, ``REPORT``), for the message.
    overwrite : bool
        False: an existing file is refused (a command whose output a user would not want lost).

    Raises
    ------
    OutputError
        One line: what, the path, and why it cannot be written.
    """
    p = Path(os.fspath(path)).expanduser()
    if not str(path).strip():
        raise OutputError(f"{what}: an empty path; give the file to write")
    if p.is_dir():
        raise OutputError(f"{what}={path}: is a folder; give a file path")
    if p.exists():
        if not overwrite:
            raise OutputError(f"{what}={path}: already exists and would be overwritten; "
                              f"remove it or give another path")
        if not os.access(p, os.W_OK):
            raise OutputError(f"{what}={path}: the file is not writable")
        return p
    parent = p.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"{what}={path}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{what}={path}: the folder {parent} is not writable")
    return p


def exit_with(main: Callable[[], int | None]) -> NoReturn:
    """Run ``main`` and exit with its status (:data:`BROKEN_PIPE` when stdout's reader went away,
    :data:`INTERRUPTED` after Ctrl-C)."""
    try:
        code = main()
        sys.stdout.flush()          # a last buffered write fails here, not at the interpreter's exit
    except BrokenPipeError:
        # Python flushes stdout once more at exit and would report that failure: stdout goes to
        # /dev/null first (the recipe of Python's signal module documentation)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = BROKEN_PIPE
    except ExtraMissing as e:
        # a layer imported on the way (cosim run imports hw) whose extra is not installed: one line
        print(f"error: {e}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        try:
            sys.stdout.flush()      # what was printed before Ctrl-C is kept
        except (BrokenPipeError, OSError):
            pass
        note = f": {_interrupt_note[0]}" if _interrupt_note else ""
        print(f"\ninterrupted{note}", file=sys.stderr)
        code = INTERRUPTED
    sys.exit(code)
