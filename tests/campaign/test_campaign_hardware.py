"""A campaign on hardware (one board, one worker): golden checks the block on a thread and every core
while the device runs it, and a wrong result from the device is still caught."""

from __future__ import annotations

import threading

import numpy as np

import golden
from campaign import Campaign, blocks
from campaign.spec import is_hardware
from golden.streams import BLOCK

HMMA = ("hopper", "HMMA.16816.F32")


class StandInBoard:
    """Golden's results with the bits of row ``wrong`` flipped (None: right), after a wait on the
    'link' during which golden must already be running on the checker thread."""

    name = "stand-in board"

    def __init__(self, wrong=None):
        self.wrong, self.golden_started = wrong, threading.Event()

    def __call__(self, ins, *ops):
        assert self.golden_started.wait(10), "golden did not start beside the device"
        d = golden.dot_add(ins, *ops, backend="numpy")
        if self.wrong is not None:
            d[self.wrong] ^= 1
        return d


def test_is_hardware():
    assert is_hardware("fpga:/dev/ttyUSB0") and is_hardware("myboard:host")
    assert not any(map(is_hardware, ("rtl", "core", "dut:u.toml", "golden", "golden:F=24", "gpu")))


def test_a_board_block_is_checked_beside_the_board(monkeypatch):
    c = Campaign((HMMA,), block=BLOCK, target=BLOCK, seed=3)
    object.__setattr__(c, "device", "fpga:socket://127.0.0.1:1")      # nothing is opened: the device is planted
    calls = []
    real = golden.dot_add

    def spy(ins, *ops, **kw):
        calls.append((threading.current_thread().name, kw.get("threads")))
        board.golden_started.set()
        return real(ins, *ops, **kw)

    monkeypatch.setattr(golden, "dot_add", spy)
    for board, mismatches in ((StandInBoard(), 0), (StandInBoard(wrong=17), 1)):
        calls.clear()
        monkeypatch.setattr(blocks, "device", lambda _c, b=board: b)
        r = blocks.run_block(c, *HMMA, 0)
        assert r.status == "done" and r.vectors == BLOCK and r.mismatches == mismatches, r.message
        assert calls[0][0].startswith("campaign-golden") and calls[0][1] is None      # a thread, every core
    assert np.asarray(r.failing["index"]).tolist() == [17]
