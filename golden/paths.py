"""Where generated files go: the one build folder every layer writes under.

Verilator builds (``cosim``), board simulators and bitstreams (``fpga``, ``fpga-sim``), proofs
(``formal``), campaign databases (``campaign``) and lint runs all live in subfolders of one
folder: ``$MMA_BUILD_DIR`` when it is set, else ``build/`` of the source checkout, else (an
installed package, whose source folder is no place to write) ``build/`` in the working
directory.  This module is golden's, the lowest layer, so every layer asks it the same way.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["BUILD_ENV", "REPO", "build_dir"]

BUILD_ENV = "MMA_BUILD_DIR"
REPO = Path(__file__).resolve().parent.parent


def build_dir(*parts: str) -> Path:
    """The build folder, or its subfolder ``parts`` (``build_dir("formal")``), read from the
    environment at each call; nothing is created.

    Parameters
    ----------
    *parts : str
        Path components below the build folder.

    Returns
    -------
    pathlib.Path
        An absolute path.
    """
    if os.environ.get(BUILD_ENV):
        root = Path(os.environ[BUILD_ENV]).resolve()
    elif (REPO / "pyproject.toml").exists():
        root = REPO / "build"
    else:
        root = Path.cwd() / "build"
    return root.joinpath(*parts)
