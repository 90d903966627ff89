"""The suite's settings, and the path to its helpers.

Tests live in ``tests/<folder>/`` by what they check; helpers that are not tests live in
``tests/support/`` (docs/verification.md, "Layout of tests/"), which this file puts on the path so
that ``from reference_model import ...`` works from every folder.  The Amaranth drivers
(``amaranth_sim``) are re-exported so that ``from conftest import simulate`` keeps working.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# The suite checks golden's numpy path, the reference the compiled kernels are held to; the kernels
# are checked against it in tests/golden/test_golden_kernels.py (each test there names its backend).
# This keeps numba's first compiles (tens of seconds of CPU, once per checkout) out of every other
# test and of every subprocess a test starts (they inherit the environment).
os.environ.setdefault("GOLDEN_BACKEND", "numpy")

SUPPORT = str(Path(__file__).resolve().parent / "support")
if SUPPORT not in sys.path:
    sys.path.insert(0, SUPPORT)

from amaranth_sim import run_stage, simulate, stream_run  # noqa: E402,F401  (re-exported)
