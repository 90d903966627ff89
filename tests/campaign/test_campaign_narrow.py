"""A campaign block draws its vectors in their own width for golden, and never changes what a device
receives: devices get uint64 as before unless they declare ``narrow_operands`` (golden's own)."""

from __future__ import annotations

import numpy as np

import golden
from campaign import Campaign, blocks, run_block
from golden.streams import BLOCK
from probe.backends import GoldenBackend, ParamsBackend

HMMA = ("hopper", "HMMA.16816.F32")


class Recording:
    """A device that records what it receives and computes golden's results."""

    def __init__(self, narrow: bool = False):
        self.seen = []
        if narrow:
            self.narrow_operands = True

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None):
        self.seen.append((a, b, c))
        return golden.dot_add(ins, a, b, c)


def received(monkeypatch, dev):
    """Run one block on ``dev``: the result and the operands it received."""
    c = Campaign((HMMA,), device="golden", block=BLOCK, target=BLOCK, seed=3)
    monkeypatch.setattr(blocks, "device", lambda c: dev)
    res = run_block(c, *HMMA, 0)
    assert res.status == "done" and res.mismatches == 0 and res.vectors == BLOCK
    want = blocks.operands(c, golden.lookup(*HMMA), 0)
    got = dev.seen[0]
    assert all(np.array_equal(x, y) for x, y in zip(got, want))
    return [x.dtype for x in got]


def test_devices_receive_uint64_unless_they_take_narrow(monkeypatch):
    assert received(monkeypatch, Recording()) == [np.uint64] * 3
    assert received(monkeypatch, Recording(narrow=True)) == [np.uint16, np.uint16, np.uint32]
    assert GoldenBackend().narrow_operands and ParamsBackend(F=24).narrow_operands


def test_a_narrow_operand_leaking_to_a_device_is_caught(monkeypatch):
    """Planted fault: the block hands its narrow operands to every device; the dtype check sees it."""
    monkeypatch.setattr(blocks, "device_operands", lambda dev, ops: ops)
    assert received(monkeypatch, Recording()) != [np.uint64] * 3
