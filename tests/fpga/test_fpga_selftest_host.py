"""The self-test's host side: the compiled generator and signatures equal the numpy model bit for bit,
the host checker on its thread gives the reference's signatures, and a self-test against a board
that answers like a wrong unit is caught at the right vector (a stand-in board: no Verilator)."""

import contextlib
import dataclasses
import io

import numpy as np
import pytest

import golden
from fpga.board.config import BoardConfig
from fpga.board.selftest import model
from fpga.host.selftest import check as selftest_check
from fpga.host.selftest import fast as selftest_fast
from golden.formats import get_format, special_bits

# these tests compile the self-test's kernels (generator, CRC, the fused check of FDA): they share one
# xdist worker with test_fpga_host_fused.py's (make test: --dist loadgroup), so each compiles once
pytestmark = [pytest.mark.skipif(not selftest_fast.available(), reason="numba is not installed"),
              pytest.mark.xdist_group("selftest_kernels")]

# 16-, 32- and 64-bit results, 4-bit fields with scales, 19-bit TF32 in 32-bit words (fields that
# spill across 64-bit words), NaN canonicalised (FDRDA: exact_nan False) and not, several lanes
CASES = [("hopper", "HMMA.1684.F32.TF32", 2), ("blackwell", "UTCOMMA.MXF4.E8", 2),
         ("cdna3", "v_mfma_f32_32x32x8_f16", 3), ("hopper", "HGMMA.64xNx16.F16", 1), ("hopper", "DMMA.8x8x4", 1)]


@pytest.mark.parametrize("kind", list(model.KINDS))
@pytest.mark.parametrize("arch,name,lanes", CASES)
def test_compiled_generator_and_signatures_equal_the_model(arch, name, lanes, kind):
    """Entries crossing 2**32, several threads' parts, a tile's remainder: every operand bit and every
    signature equal."""
    ins = golden.lookup(arch, name)
    seed, first, entries = 0x0123456789ABCDEF ^ len(name) << 40, 0xFFFFFF00 + 7, 300
    ref = model.operands(ins, lanes, seed, kind, first, entries)
    got = selftest_fast.operands(ins, lanes, seed, kind, first, entries, threads=2)
    fmts = list(ins.formats[:3]) + [ins.scale_format] * 2
    for r, g, fmt in zip(ref, got, fmts):
        assert (r is None) == (g is None)
        if r is not None:
            assert g.dtype == get_format(fmt).dtype                 # golden reads the formats' own widths
            assert np.array_equal(r, g.astype(np.uint64))
    d = golden.dot_add(ins, *ref)
    d[::7] = np.asarray(special_bits(ins.formats[3], "nan") | 1, d.dtype)   # NaNs with payloads
    assert np.array_equal(model.signatures(ins, lanes, d, 60), selftest_fast.signatures(ins, lanes, d, 60, threads=2))


def test_a_planted_fault_in_the_compiled_model_is_caught():
    """One generator bit and one signature bit wrong: the comparison with the numpy model fails."""
    ins = golden.lookup("hopper", "HMMA.1684.F32.TF32")
    ref = model.operands(ins, 2, 5, "bits", 0, 64)
    tab = selftest_fast.field_table(ins)
    tab[3, 3] += 1                                  # field 3 read one bit off
    orig = selftest_fast.field_table
    try:
        selftest_fast.field_table = lambda _ins: tab
        got = selftest_fast.operands(ins, 2, 5, "bits", 0, 64, threads=1)
    finally:
        selftest_fast.field_table = orig
    assert not np.array_equal(ref[0], got[0].astype(np.uint64))
    d = golden.dot_add(ins, *ref)
    right = model.signatures(ins, 2, d, 32)
    d[17] ^= 1                                      # one result bit
    assert not np.array_equal(right, selftest_fast.signatures(ins, 2, d, 32, threads=1))


# numba under -m slow: the staged path's first compiles for this layout (about 15 s fresh); its stepping is
# the numpy one's, and the compiled stages are checked against the model above
@pytest.mark.parametrize("backend", ["numpy", pytest.param("numba", marks=pytest.mark.slow)])
def test_expected_signatures_in_bounded_steps(backend, monkeypatch):
    monkeypatch.setattr(selftest_check, "STEP_ROWS", 3 * 16 * 2)       # three blocks a step
    spec = model.SelfTestSpec(golden.lookup("cdna3", "v_mfma_f32_32x32x8_f16"), 2, 9, "normal", 16)
    want = spec.signatures(golden.dot_add(spec.ins, *spec.operands(4, 7)))
    assert np.array_equal(selftest_check.expected_signatures(spec, 4, 7, backend=backend, threads=2), want)
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        selftest_check.expected_signatures(spec, 0, 1, threads=0)


def test_host_path_follows_golden_backend(monkeypatch):
    monkeypatch.setenv("GOLDEN_BACKEND", "numpy")
    assert selftest_check.host_path() == "numpy" and selftest_check.host_path("numba") == "fused"
    assert selftest_check.host_path("fused") == "fused"


class StandInBoard:
    """Answers SELFTEST as a unit computing with ``params`` would (golden, numpy path), the board's
    order and signatures from the numpy model."""

    def __init__(self, cfg: BoardConfig, params=None):
        self.config = cfg
        ins = cfg.instruction_objects[0]
        self.ins = ins if params is None else dataclasses.replace(ins, params=params)
        self.requests = 0

    def _results(self, seed, kind, first, entries):
        ops = model.operands(self.ins, self.config.lanes, seed, kind, first, entries)
        return golden.dot_add(self.ins, *ops, backend="numpy")

    def selftest(self, seed, kind, first, blocks, block_len):
        self.requests += 1
        d = self._results(seed, kind, first, blocks * block_len)
        sigs = model.signatures(self.config.instruction_objects[0], self.config.lanes, d, block_len)
        return [list(map(int, s)) for s in sigs], blocks * block_len, blocks * block_len * self.config.lanes

    def selftest_capture(self, seed, kind, first, count):
        return self._results(seed, kind, first, count)


def test_selftest_against_a_stand_in_board_and_a_planted_fault(tmp_path):
    """The pipelined host checker agrees with a right board (many requests, the host ahead of it)
    and names the first vector golden says differs on a board whose unit has F one larger."""
    from fpga.host.selftest import first_difference, run_selftest
    cfg = BoardConfig("hopper", "HMMA.1684.F32.TF32", lanes=2)
    ins = cfg.instruction_objects[0]
    good = StandInBoard(cfg)
    report = run_selftest(good, seed=6, kind="normal", blocks=9, block_len=16, chunk=2, out=io.StringIO(),
                          backend="numba", threads=2)
    assert report.ok and good.requests == 5 and sorted(report.blocks) == list(range(9)), report.summary()
    assert report.host_path == "fused" and "fused path, 2 thread(s)" in report.summary()
    params = ins.params.with_(F=ins.params.F + 1)
    where = first_difference(ins, params, 2, 6, "normal", 16, 9)
    assert where is not None
    out = io.StringIO()
    report = run_selftest(StandInBoard(cfg, params), seed=6, kind="normal", blocks=9, block_len=16, chunk=2,
                          failures_dir=tmp_path, out=out, backend="numba")
    f = report.failure
    assert not report.ok and (f.block, f.index, f.lane) == where, report.summary()
    assert f"first failing vector: block {where[0]}" in out.getvalue()


def test_ctrl_c_keeps_the_checked_blocks():
    class Interrupting(StandInBoard):
        def selftest(self, *a):
            if self.requests == 2:
                raise KeyboardInterrupt
            return super().selftest(*a)
    from fpga.host.selftest import run_selftest
    board = Interrupting(BoardConfig("hopper", "HMMA.1684.F32.TF32", lanes=2))
    with contextlib.redirect_stderr(io.StringIO()):
        report = run_selftest(board, seed=1, blocks=8, block_len=8, chunk=2, out=io.StringIO())
    assert report.interrupted and sorted(report.blocks) == [0, 1, 2, 3]


def test_the_host_kernels_release_the_gil():
    """The checker thread runs beside the link only if its kernels drop the GIL: the self-test's
    and every golden kernel the compiled path calls are compiled ``nogil``."""
    from fpga.host.selftest import _kernels as k
    from golden import kernels
    golden_kernels = []
    for family in kernels._families().values():             # a row kernel (or with its parallel variant)
        golden_kernels += list(family) if isinstance(family, tuple) else [family]
    from fpga.host.selftest import _fused
    fused = [_fused.check_fda, _fused.check_gdfs, _fused.check_fdrda, _fused.check_gps, _fused.check_sfma]
    for fn in [k.generate, k.generate_packed, k.generate_entries, k.crc_chains] + fused + golden_kernels:
        assert fn.targetoptions.get("nogil") is True, fn
