"""The on-board self-test's coverage: a stated sample of each checked block's dot-adds, measured by golden."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import golden
from fpga.board.config import BoardConfig
from fpga.board.selftest import model
from fpga.host.selftest import check, run_selftest
from golden import coverage as golden_coverage
from golden.cover.report import measured_line

CFG = ("hopper", "HMMA.1684.F32.TF32")
LANES, BLOCK_LEN, SEED = 2, 16, 6


class StandInBoard:
    """Answers SELFTEST as a right unit would: golden's results over the model's operands, signed by
    the model."""

    def __init__(self, cfg: BoardConfig, stop_at: int | None = None):
        self.config, self.stop_at, self.requests = cfg, stop_at, 0

    def _results(self, seed, kind, first, entries):
        ins = self.config.instruction_objects[0]
        return golden.dot_add(ins, *model.operands(ins, self.config.lanes, seed, kind, first, entries), backend="numpy")

    def selftest(self, seed, kind, first, blocks, block_len):
        if self.requests == self.stop_at:
            raise KeyboardInterrupt
        self.requests += 1
        sigs = model.signatures(self.config.instruction_objects[0], self.config.lanes,
                                self._results(seed, kind, first, blocks * block_len), block_len)
        return [list(map(int, s)) for s in sigs], blocks * block_len, blocks * block_len * self.config.lanes

    def selftest_capture(self, seed, kind, first, count):
        return self._results(seed, kind, first, count)


def _expected(report, blocks, sample):
    """golden.coverage.measure over exactly the sampled dot-adds of ``blocks``, offered all of theirs."""
    spec = report.spec
    cov = golden_coverage.empty(spec.ins)
    for b in blocks:
        rows = check.cover_rows(spec, b, 1, sample)
        ops = [None if x is None else x[rows] for x in spec.operands(b)]
        golden_coverage.measure(spec.ins, *ops, into=cov)
    cov.offered = len(blocks) * spec.block_len * spec.lanes
    return cov


def _same(got, want):
    assert got.hits == want.hits and (got.dot_adds, got.offered) == (want.dot_adds, want.offered)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("numba", marks=pytest.mark.slow)])   # numba: compiles
def test_the_summary_gives_the_coverage_of_the_sampled_dot_adds(backend):
    board = StandInBoard(BoardConfig(*CFG, lanes=LANES))
    report = run_selftest(board, seed=SEED, kind="bits", blocks=5, block_len=BLOCK_LEN, chunk=2, out=io.StringIO(),
                          backend=backend, cover_sample=8)
    assert report.ok, report.summary()
    want = _expected(report, range(5), 8)
    _same(report.coverage, want)
    text = report.summary()
    assert f"  {want.summary()}; {measured_line(want)}, 8 a block" in text and want.dot_adds == 40
    assert ("  holes (" in text) == bool(want.missed())


def test_an_interrupted_run_counts_only_the_checked_blocks():
    board = StandInBoard(BoardConfig(*CFG, lanes=LANES), stop_at=2)
    with contextlib.redirect_stderr(io.StringIO()):
        report = run_selftest(board, seed=1, blocks=8, block_len=8, chunk=2, out=io.StringIO(), cover_sample=4)
    assert report.interrupted and sorted(report.blocks) == [0, 1, 2, 3]
    _same(report.coverage, _expected(report, range(4), 4))


def test_every_dot_add_or_none_and_a_failing_cover_point(monkeypatch):
    cfg = BoardConfig(*CFG, lanes=LANES)
    report = run_selftest(StandInBoard(cfg), seed=3, blocks=2, block_len=8, out=io.StringIO(), cover_sample=10 ** 6)
    assert report.coverage.dot_adds == report.coverage.offered == 2 * 8 * LANES
    report = run_selftest(StandInBoard(cfg), seed=3, blocks=2, block_len=8, out=io.StringIO())
    assert report.cover_sample == 1 and report.coverage.dot_adds == 2          # default: 1 in 512, at least one
    assert check.cover_sample_of(model.SelfTestSpec(golden.lookup(*CFG), 1, 1, "normal", 4096)) == 8
    report = run_selftest(StandInBoard(cfg), seed=3, blocks=2, block_len=8, out=io.StringIO(), cover_sample=0)
    assert report.coverage is None and "coverage" not in report.summary()
    with pytest.raises(ValueError, match="cover_sample"):
        run_selftest(StandInBoard(cfg), blocks=1, block_len=8, out=io.StringIO(), cover_sample=-1)

    def broken(*args, **kw):
        raise ZeroDivisionError("a broken cover point")
    monkeypatch.setattr(golden_coverage, "measure", broken)
    report = run_selftest(StandInBoard(cfg), seed=3, blocks=4, block_len=8, chunk=1, out=io.StringIO())
    assert report.ok and "coverage stopped (a cover point failed; the verdict stands)" in report.summary()


def test_a_blocks_sample_does_not_depend_on_the_request_that_holds_it():
    spec = model.SelfTestSpec(golden.lookup(*CFG), LANES, SEED, "bits", BLOCK_LEN)
    per = BLOCK_LEN * LANES
    together = check.cover_rows(spec, 3, 2, 5)
    alone = np.concatenate([check.cover_rows(spec, 3, 1, 5), per + check.cover_rows(spec, 4, 1, 5)])
    assert np.array_equal(together, alone) and len(set(together.tolist())) == 10
