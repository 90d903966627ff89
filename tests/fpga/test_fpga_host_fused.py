"""The fused host check (generator, golden's row kernel and signature in one compiled pass a block):
its signatures equal the numpy model's bit for bit, a planted fault in it is caught, and the pipelined
self-test against a stand-in board reports a wrong signature with the block's replay information."""

import io

import numpy as np
import pytest

import golden
from fpga.board.config import BoardConfig
from fpga.board.selftest import model
from fpga.host.selftest import check as selftest_check
from fpga.host.selftest import fast as selftest_fast
from tests.fpga.test_fpga_selftest_host import StandInBoard

pytestmark = pytest.mark.skipif(not selftest_fast.available(), reason="numba is not installed")

# one unit per algorithm family (the benchmark's), the cheapest to compile first: the default suite's
FAMILIES = [("hopper", "HMMA.1684.F32.TF32"), ("cdna3", "v_mfma_f32_16x16x4_f32"), ("hopper", "HGMMA.64xNx16.F32"),
            ("ampere", "HMMA.16816.F32"), ("blackwell", "UTCOMMA.MXF4.E8"), ("cdna3", "v_mfma_f32_32x32x8_f16"),
            ("cdna3", "v_mfma_f32_16x16x16_f16"), ("cdna3", "v_mfma_f32_32x32x16_fp8_fp8"),
            ("cdna3", "v_mfma_f32_16x16x32_fp8_fp8"), ("cdna2", "v_mfma_f32_32x32x8_f16"),
            ("hopper", "HGMMA.64xNx16.F16")]
CHEAP = FAMILIES[0]
# make test compiles one fused kernel, CHEAP's (FDA's, as test_fpga_selftest_host.py's stand-in board);
# the tests that compile it or the self-test's generator and CRC kernels share one xdist worker
# (--dist loadgroup), so a fresh clone compiles each once (about 15 s of CPU), not in two workers
ON_CHEAP = pytest.mark.xdist_group("selftest_kernels")


def _model_signatures(spec, first_block, blocks):
    return spec.signatures(golden.dot_add(spec.ins, *spec.operands(first_block, blocks), backend="numpy"))


def _equal_to_the_model(arch, name, kind, lanes=2, block_len=37):
    """Blocks whose entries reach the top of the 32-bit counter, a block length that is not a whole
    number of tiles, several lanes, split across two threads."""
    spec = model.SelfTestSpec(golden.lookup(arch, name), lanes, 0x0123456789ABCDEF, kind, block_len)
    first = (1 << 32) // block_len - 4
    got = selftest_fast.fused_signatures(spec, first, 4, threads=2)
    assert got.shape == (4, lanes) and np.array_equal(got, _model_signatures(spec, first, 4)), (name, kind)


@ON_CHEAP
@pytest.mark.parametrize("kind", list(model.KINDS))
def test_fused_signatures_equal_the_model(kind):
    _equal_to_the_model(*CHEAP, kind)


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(model.KINDS))
@pytest.mark.parametrize("arch,name", FAMILIES[1:])
def test_fused_signatures_equal_the_model_every_family(arch, name, kind):
    _equal_to_the_model(arch, name, kind)


@pytest.mark.slow       # compiles the FDA and TF32 layouts' generators (about 6 s fresh)
def test_packed_layouts_and_the_entries_sampled_on_their_own():
    """The benchmark's units are packed (the fast generator); TF32's 19 bits in 32 too; a sampled
    entry generated on its own equals its rows in the model's run."""
    for arch, name in FAMILIES:
        assert selftest_fast.packed_layout(golden.lookup(arch, name)) is not None, name
    ins = golden.lookup("blackwell", "UTCOMMA.MXF4.E8")
    ref = model.operands(ins, 3, 7, "normal", 100, 50)
    got = selftest_fast.operands_at(ins, 3, 7, "normal", [130, 101, 149])
    for r, g in zip(ref, got):
        pick = r.reshape(50, 3, *r.shape[1:])[[30, 1, 49]].reshape(9, *r.shape[1:])
        assert np.array_equal(pick, g.astype(np.uint64))


@ON_CHEAP
def test_a_planted_fault_in_the_fused_path_is_caught(monkeypatch):
    """golden's planted rounding fault reaches the fused kernel, and one generator bit read wrong
    (a packed piece one bit off): both give signatures the model does not."""
    from golden import kernels
    spec = model.SelfTestSpec(golden.lookup(*CHEAP), 2, 11, "normal", 37)
    right = _model_signatures(spec, 0, 3)
    assert np.array_equal(selftest_fast.fused_signatures(spec, 0, 3, threads=1), right)
    with kernels.planted_fault():
        assert not np.array_equal(selftest_fast.fused_signatures(spec, 0, 3, threads=1), right)
    pieces, win = selftest_fast.packed_layout(spec.ins)
    pieces = pieces.copy()
    pieces[1, 1] += 1                                   # a's second unit read one bit up
    monkeypatch.setattr(selftest_fast, "packed_layout", lambda _ins: (pieces, win))
    monkeypatch.setattr(selftest_fast, "_FUSED_CACHE", {})         # the spec's arguments made again
    assert not np.array_equal(selftest_fast.fused_signatures(spec, 0, 3, threads=1), right)


def test_each_family_has_a_fused_kernel_that_inlines_the_row_kernel_golden_chose():
    """The fused check runs the row kernel golden.kernels' plan chose (an integer-lane kernel where one
    takes the design), each compiled nogil so the checker thread runs beside the link."""
    from fpga.host.selftest import _fused
    from golden import kernels
    from golden.kernels import amd_fp8, fda_float, fda_fp8, fdrda_float, gdfs_int
    chosen = {arch_name: kernels.plan(golden.lookup(*arch_name)).rows for arch_name in FAMILIES}
    assert chosen[("blackwell", "UTCOMMA.MXF4.E8")] is gdfs_int.gdfs_int_rows
    f16 = chosen[("cdna3", "v_mfma_f32_32x32x8_f16")]               # register-path shapes of their own,
    fp8 = chosen[("cdna3", "v_mfma_f32_16x16x32_fp8_fp8")]          # checked through amd_int's kernel
    assert f16 in fdrda_float.KERNELS.values() and fp8 in amd_fp8.KERNELS.values()
    assert _fused.kernel_of(fp8) is _fused.check_fdrda_int and _fused.kernel_of(f16) is _fused.check_fdrda_int
    f16 = chosen[("ampere", "HMMA.16816.F32")]                       # likewise, through the FDA kernel
    assert f16 in fda_float.KERNELS.values() and _fused.kernel_of(f16) is _fused.check_fda
    e4 = kernels.plan(golden.lookup("ada", "QMMA.16832.F32.E4M3.E4M3")).rows
    assert e4 in fda_fp8.KERNELS.values() and _fused.kernel_of(e4) is _fused.check_fda
    for rows in chosen.values():
        assert _fused.kernel_of(rows).targetoptions.get("nogil") is True, rows


@pytest.mark.slow       # each family's fused kernel compiled (about 20 s each fresh)
@pytest.mark.parametrize("arch,name", FAMILIES[1:9])
def test_a_planted_fault_is_caught_in_every_fused_kernel(arch, name):
    from golden import kernels
    spec = model.SelfTestSpec(golden.lookup(arch, name), 2, 13, "normal", 64)
    right = _model_signatures(spec, 0, 2)
    assert np.array_equal(selftest_fast.fused_signatures(spec, 0, 2, threads=1), right)
    with kernels.planted_fault():
        assert not np.array_equal(selftest_fast.fused_signatures(spec, 0, 2, threads=1), right)


@pytest.mark.slow       # another family's fused kernel compiled (about 20 s fresh); the pipelined self-test
# catching a planted fault: test_fpga_selftest_host.py's stand-in board
def test_the_pipelined_selftest_reports_a_wrong_signature_with_its_replay(tmp_path):
    """The host checks request i while the board streams i + 1 (HostChecker ahead of the link); a board
    whose unit computes differently is caught at the first vector golden says differs, and the
    report names the block, the failing vectors' file and the replay commands."""
    from fpga.host.selftest import first_difference, run_selftest
    cfg = BoardConfig(*FAMILIES[1], lanes=2)               # SFMA: its unit's fma rounding is what differs
    ins = cfg.instruction_objects[0]
    good = StandInBoard(cfg)
    report = run_selftest(good, seed=3, kind="bits", blocks=7, block_len=16, chunk=2, out=io.StringIO(), threads=1,
                          backend="numba")
    assert report.ok and report.host_path == "fused" and good.requests == 4, report.summary()
    params = ins.params.with_(fma_rounding="RZ")
    where = first_difference(ins, params, 2, 3, "bits", 16, 7)
    assert where is not None
    out = io.StringIO()
    report = run_selftest(StandInBoard(cfg, params), seed=3, kind="bits", blocks=7, block_len=16, chunk=2,
                          failures_dir=tmp_path, out=out, threads=1, backend="numba")
    f = report.failure
    assert not report.ok and (f.block, f.index, f.lane) == where, report.summary()
    text = out.getvalue()
    assert f"self-test block {where[0]} differs" in text and "python -m fpga replay" in text
    assert report.failures_file and str(report.failures_file).startswith(str(tmp_path))


def test_fused_errors():
    spec = model.SelfTestSpec(golden.lookup(*CHEAP), 1, 1, "bits", 16)
    with pytest.raises(ValueError, match="32-bit entry counter"):
        selftest_fast.fused_signatures(spec, (1 << 32) // 16, 1)
    with pytest.raises(ValueError, match="entries must be in"):
        selftest_fast.operands_at(spec.ins, 1, 1, "bits", [-1])
    assert selftest_check.host_path("numpy", spec.ins) == "numpy"


@ON_CHEAP
def test_the_fused_path_samples_the_same_dot_adds_for_coverage():
    """The fused path never holds a block's operands: its coverage sample, generated on its own, is the
    numpy path's sample bit for bit (the same rows, the same operands)."""
    spec = model.SelfTestSpec(golden.lookup(*CHEAP), 2, 5, "bits", 24)
    got, want = [], []
    sigs = selftest_check.expected_signatures(spec, 2, 3, backend="fused", samples=got, cover_sample=5)
    assert np.array_equal(sigs, selftest_check.expected_signatures(spec, 2, 3, backend="numpy", samples=want,
                                                                   cover_sample=5))
    assert len(got) == len(want) == 1 and got[0][1] == want[0][1] == 3 * 24 * 2
    for g, w in zip(got[0][0], want[0][0]):
        assert (g is None) == (w is None) and (g is None or np.array_equal(g.astype(np.uint64), w))
