"""Every catalog instruction's cover points close: golden.cover.directed.solve hits every reachable bin
(the whole catalog: ``-m slow``; one instruction per algorithm runs in the suite's other cover tests)."""

from __future__ import annotations

import numpy as np
import pytest

import golden
from golden.cover.directed import solve


@pytest.mark.slow
@pytest.mark.parametrize("ins", golden.CATALOG, ids=lambda i: f"{i.arch}-{i.name}")
def test_every_reachable_bin_of_every_instruction_is_solved(ins):
    sol = solve(ins, np.random.default_rng(1), seconds=60)
    assert sol.coverage.closed(), f"{ins.arch} {ins.name}: holes {sol.coverage.missed()}"
    assert sol.coverage.reachable(), "an instruction with no reachable bin measures nothing"
