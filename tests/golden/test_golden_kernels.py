"""The compiled kernels (golden/kernels/) against the numpy path: identical bits on every catalog
datapath for every vector kind, on the measured GPU sets, through broadcasting and threads; a fault
planted in a kernel is caught by the same comparison; designs a kernel does not model fall back."""

import dataclasses
import warnings

import numpy as np
import pytest
from gpu_vectors import load
from kernel_shapes import default_tier

import golden
from golden import api, kernels
from golden.algorithms import Params
from golden.catalog import instructions, lookup
from golden.descriptors import KernelCode
from golden.formats import get_format
from golden.kernels import spec
from golden.provenance import MEASURED_SETS
from golden.rules import EXACT
from golden.vectors import KINDS, random_operands

# one xdist worker takes the whole file (make test: --dist loadgroup), so each kernel compiles once
pytestmark = [pytest.mark.skipif(not kernels.available(), reason="numba is not installed"),
              pytest.mark.xdist_group("golden_kernels")]

ROWS = 64               # per vector kind and datapath in make test (384 rows each); the slow tier: SLOW_ROWS
SLOW_ROWS = 20_000


def _datapaths():
    """One instruction per datapath (instructions with equal datapaths give the same bits on every
    input: golden.catalog.Datapath), all of them covered: every catalog instruction is one of these."""
    seen = {}
    for ins in instructions():
        seen.setdefault(ins.datapath, ins)
    return list(seen.values())


DATAPATHS = _datapaths()
DEFAULT_DATAPATHS = default_tier(DATAPATHS)         # the other fp8 shapes' kernels: -m slow


def mismatches(ins, n: int, kinds=KINDS, seed: int = 0, threads: int = 1) -> int:
    """Rows where the two backends differ, over ``n`` rows of each vector kind."""
    bad = 0
    for i, kind in enumerate(kinds):
        a, b, c, sa, sb = random_operands(ins, n, np.random.default_rng([seed, i]), kind)
        want = golden.dot_add(ins, a, b, c, sa, sb, backend="numpy")
        got = golden.dot_add(ins, a, b, c, sa, sb, backend="numba", threads=threads)
        assert got.dtype == want.dtype and got.shape == want.shape
        bad += int((got != want).sum())
    return bad


def test_every_instruction_has_a_kernel():
    # but the exact passes (F="exact", CDNA1's f16 and bf16): no alignment window for a kernel to model,
    # numpy only (golden/kernels/spec.py)
    assert all(kernels.handles(i.datapath) for i in instructions() if i.params.F != EXACT)


def family_bits(ins, a, b, c, fault: bool = False) -> np.ndarray:
    """d's bits from the family kernel of ``ins``'s design (golden.kernels.family_kernel: fused_int's
    block path for an FDA one, where the plan would take a kernel of one shape), one thread."""
    from golden.kernels import profile
    rows, args = profile.kernel_args(ins, a, b, c, None, None)
    if fault:
        prm = args[-3].copy()
        prm[spec.P_FAULT] = 1
        args = (*args[:-3], prm, *args[-2:])
    kernels.family_kernel(rows)(0, c.shape[0], *args)
    return args[-1].astype(ins.datapath.formats[3].dtype)


@pytest.mark.parametrize("ins", DEFAULT_DATAPATHS, ids=lambda i: f"{i.arch}-{i.name}")
def test_identical_bits_every_vector_kind(ins):
    assert mismatches(ins, ROWS) == 0


@pytest.mark.slow
@pytest.mark.parametrize("ins", DATAPATHS, ids=lambda i: f"{i.arch}-{i.name}")
def test_identical_bits_many_rows_all_threads(ins):
    assert mismatches(ins, SLOW_ROWS, seed=1, threads=kernels.default_threads()) == 0


def _set_id(s) -> str:
    return f"{s.id}-{s.arch}-{s.instruction}"


def check_gpu_set(s, family: bool) -> None:
    """A GPU-measured set through the kernel golden takes for it (``family``: its family kernel,
    :func:`family_bits`) gives numpy's bits, and the GPU's where the set is exact."""
    ins, a, b, c, want = load(s)
    got = family_bits(ins, a, b, c) if family else golden.dot_add(ins, a, b, c, backend="numba")
    assert np.array_equal(got, golden.dot_add(ins, a, b, c, backend="numpy"))
    if s.exact:
        assert golden.same_results(ins, got, want).all()


@pytest.mark.parametrize("s", MEASURED_SETS, ids=_set_id)
def test_gpu_sets_through_the_kernels(s):
    """Each set through the kernel golden takes for it; where that is a kernel of one shape make test
    leaves to -m slow (kernel_shapes.default_tier), through its family kernel here."""
    check_gpu_set(s, family=not default_tier([lookup(s.arch, s.instruction)]))


@pytest.mark.slow
@pytest.mark.parametrize("s", [s for s in MEASURED_SETS if not default_tier([lookup(s.arch, s.instruction)])],
                         ids=_set_id)
def test_gpu_sets_through_the_shape_kernels_make_test_leaves(s):
    check_gpu_set(s, family=False)


# one instruction per kernel family, and per rounding of the fused family's output
FAULT_UNITS = [("hopper", "HMMA.16816.F32"), ("hopper", "HMMA.16816.F16"), ("ada", "QMMA.16832.F32.E4M3.E4M3"),
               ("blackwell", "UTCOMMA.4X"), ("cdna3", "v_mfma_f32_32x32x8_f16"),
               ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8"), ("cdna2", "v_mfma_f32_32x32x8_f16"),
               ("hopper", "DMMA.8x8x4"), ("cdna3", "v_mfma_f32_16x16x4_f32"),
               ("cdna3", "v_mfma_f32_16x16x16_bf16"), ("cdna2", "v_mfma_f32_32x32x4bf16")]


@pytest.mark.parametrize("unit", FAULT_UNITS, ids=lambda u: f"{u[0]}-{u[1]}")
def test_planted_rounding_fault_is_caught(unit):
    ins = lookup(*unit)
    assert mismatches(ins, 4 * ROWS, kinds=("normal", "structured")) == 0
    with kernels.planted_fault():
        assert mismatches(ins, 4 * ROWS, kinds=("normal", "structured")) > 0


def _fused(ins) -> bool:
    return spec.kernel_code(ins.params) in (KernelCode.FDA, KernelCode.GDFS)    # the kernels with an integer path


def test_fused_designs_take_the_integer_path():
    """Every FDA/CoFDA/GDFS datapath but the compiled-path lowering runs golden.kernels.fused_int
    (so the comparisons above check it); the lowering runs the float64 kernel.  Designs no kernel
    models (F="exact": CDNA1) stay on numpy and are left out."""
    from golden.kernels import spec, supports
    for ins in filter(_fused, DATAPATHS):
        dp = ins.datapath
        if not supports(dp.params, dp.formats, dp.k, dp.scale_format, dp.block_size):
            assert dp.params.F == "exact", f"{ins.arch} {ins.name}: a fused design no kernel models"
            continue
        fast = spec.build(dp.params, dp.formats, dp.scale_format, dp.block_size, dp.k)[3][spec.P_FAST]
        assert (fast == spec.FAST_NONE) == (dp.params.operand_format is not None), f"{ins.arch} {ins.name}"


# one fused unit per output rounding, format family and scale kind: tails of blocks, both kernels
FUSED_UNITS = [("hopper", "HMMA.16816.F32"), ("ampere", "HMMA.16816.F16"), ("ampere", "HMMA.1688.F32.TF32"),
               ("ada", "QMMA.16832.F32.E4M3.E4M3"), ("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8"),
               ("blackwell", "UTCOMMA.4X")]


@pytest.mark.parametrize("unit", FUSED_UNITS, ids=lambda u: f"{u[0]}-{u[1]}")
def test_integer_and_float_kernels_agree(unit, monkeypatch):
    """A row count that leaves a partial block, every vector kind, operands in their own width:
    the integer-lane kernel, and the float64 kernel it takes over from (fast path switched off),
    both equal numpy."""
    from golden.kernels import spec
    ins = lookup(*unit)
    assert mismatches(ins, 2 * 128 + 37) == 0
    a, b, c, sa, sb = random_operands(ins, 150, np.random.default_rng(9), "mixed")
    want = golden.dot_add(ins, a, b, c, sa, sb, backend="numpy")
    fs = ins.scale_format and get_format(ins.scale_format)
    narrow = (x if x is None else x.astype(f.dtype) for x, f in zip((a, b, c, sa, sb), (*ins.formats[:3], fs, fs)))
    assert np.array_equal(golden.dot_add(ins, *narrow, backend="numba"), want)
    monkeypatch.setattr(spec, "fast_kind", lambda *args: spec.FAST_NONE)
    spec.build.cache_clear()
    try:
        assert mismatches(ins, 64 + 5, kinds=("bits", "normal", "structured")) == 0
    finally:
        spec.build.cache_clear()


# the fused kernels' other rounding and scale paths: the lowering's float64 kernel (fused.py) and
# block-scaled FDA in integer lanes
FUSED_FAULT_UNITS = [("hopper", "MMA.16832.F32.E4M3.E4M3"), ("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8")]


@pytest.mark.parametrize("unit", FUSED_FAULT_UNITS, ids=lambda u: f"{u[0]}-{u[1]}")
def test_planted_fault_in_other_fused_paths_is_caught(unit):
    test_planted_rounding_fault_is_caught(unit)


def _gps_args(dp, a, b, c):
    fmts, vtab, etab, prm = spec.build(dp.params, dp.formats, None, None, dp.k)
    ops = [kernels._operand(x) for x in (a, b, c, None, None)]
    isz = np.array([s for _, s in ops], np.int64)
    out = np.empty(c.shape[0], np.uint64)
    return (*(v for v, _ in ops), isz, dp.k, fmts, vtab, etab, prm, kernels.product_order(dp.params, dp.k), out)


def test_gps_keeps_a_product_rounded_up_to_the_smallest_normal():
    """(4095 * 2**-75) * (4097 * 2**-75) = (2**24 - 1) * 2**-150, a tie that rounds to 2**-126: GPS
    keeps it, the CPU's flush to zero flushes it.  With significands that wide (13 bits each, a
    16-bit format of this test's own) the GPS kernel leaves the CPU's flush off, and its bits are
    the numpy path's; bf16's and f16's products, never rounded short of underflow, take it."""
    from numba import njit

    from golden.algorithms import gps as gps_numpy
    from golden.datapath import Datapath
    from golden.formats import Format, from_float
    from golden.kernels import _common, gps

    wide, f32 = Format("w3m12", 3, 12, 65, storage_bits=16), get_format("f32")      # exponents -64 .. -59
    dp = Datapath(lookup("cdna2", "v_mfma_f32_32x32x4bf16").params, wide, wide, f32, f32, 4)
    x, y = (from_float(wide, np.array([v * 2.0 ** -75])).astype(np.uint64)[0] for v in (4095, 4097))
    a = np.array([[x, 0, 0, 0]], np.uint64)
    b = np.array([[y, 0, 0, 0]], np.uint64)
    c = np.zeros(1, np.uint64)
    want = gps_numpy(dp, a, b, c)
    assert want[0] == 0x00800000
    args = _gps_args(dp, a, b, c)
    assert not gps.cpu_flush_is_gps(args[7])
    gps.gps_rows(0, 1, *args)
    assert args[-1][0] == want[0]

    @njit
    def flushed_product(u, v):
        old = _common.fp_control()
        _common.set_fp_control(old | _common.FLUSH_TO_ZERO)
        p = u * v
        _common.set_fp_control(old)
        return p
    xv, yv = np.float32(4095 * 2.0 ** -75), np.float32(4097 * 2.0 ** -75)
    assert xv * yv == np.float32(2.0 ** -126)
    if _common.HAS_MXCSR:                                     # the CPU's flush would have lost it
        assert flushed_product(xv, yv) == 0
    for name in ("v_mfma_f32_32x32x4bf16", "v_mfma_f32_32x32x8_f16"):
        assert gps.cpu_flush_is_gps(kernels.plan(lookup("cdna2", name)).fmts)


@pytest.mark.parametrize("group", [2, 4])
def test_gps_flushes_every_sum_in_software_where_the_cpu_flush_is_off(group):
    """With the CPU's flush left off (significands of 13 bits each, this test's own format), every
    product, pair sum and accumulation below 2**-126 is flushed by the kernel itself: operands
    near the format's least exponents, of random signs, so that products lie just above 2**-126
    and many of their sums and differences fall below it; the numpy path's bits."""
    from golden.algorithms import gps as gps_numpy
    from golden.datapath import Datapath
    from golden.formats import Format
    from golden.kernels import gps

    wide, f32 = Format("w3m12", 3, 12, 65, storage_bits=16), get_format("f32")      # exponents -64 .. -59
    params = lookup("cdna2", "v_mfma_f32_32x32x8_f16").params.with_(group=group)
    dp = Datapath(params, wide, wide, f32, f32, 8)
    rng = np.random.default_rng(23)
    n = 2000
    fields = rng.integers(1, 3, size=(2, n, 8), dtype=np.uint64) << 12        # exponents -64, -63
    a, b = fields | rng.integers(0, 1 << 12, size=(2, n, 8), dtype=np.uint64) | (
        rng.integers(0, 2, size=(2, n, 8), dtype=np.uint64) << 15)
    c = np.zeros(n, np.uint64)
    c[::3] = rng.integers(1, 0x01000000, size=len(c[::3]))                     # tiny c: subnormal sums with it
    want = gps_numpy(dp, a, b, c)
    args = _gps_args(dp, a, b, c)
    assert not gps.cpu_flush_is_gps(args[7])
    gps.gps_rows(0, n, *args)
    assert np.array_equal(args[-1], want)
    assert (want == 0).sum() > n // 20                                          # sums flushed among them


def test_gps_leaves_the_callers_floating_point_mode_as_it_was():
    from numba import njit

    from golden.kernels import _common

    @njit
    def mode():
        return _common.fp_control()
    ins = lookup("cdna2", "v_mfma_f32_32x32x4bf16")
    a, b, c, _, _ = random_operands(ins, 1000, np.random.default_rng(2), "bits")
    before = mode()
    golden.dot_add(ins, a, b, c, backend="numba", threads=1)
    assert mode() == before
    assert not before & _common.FLUSH_TO_ZERO
    assert np.float32(2.0 ** -100) * np.float32(2.0 ** -40) == np.float32(2.0 ** -140)    # numpy's subnormals


def test_threads_split_rows_identically():
    ins = lookup("cdna3", "v_mfma_f32_16x16x4_f32")              # SFMA: the smallest kernel to compile
    a, b, c, _, _ = random_operands(ins, 3 * kernels.PARALLEL_MIN_ROWS, np.random.default_rng(5), "mixed")
    one = golden.dot_add(ins, a, b, c, backend="numba", threads=1)
    assert np.array_equal(golden.dot_add(ins, a, b, c, backend="numba", threads=2), one)
    assert np.array_equal(golden.dot_add(ins, a, b, c, backend="numpy"), one)


def test_broadcast_and_narrow_operands_read_in_place():
    """mma broadcasts a and b (chunks widened on the fly); narrow dtypes are read in their width."""
    ins = lookup("hopper", "HMMA.16816.F32")
    rng = np.random.default_rng(3)
    A = rng.integers(0, 1 << 16, (16, 16), dtype=np.uint16)
    B = rng.integers(0, 1 << 16, (16, 8), dtype=np.uint16)
    C = rng.integers(0, 1 << 32, (16, 8), dtype=np.uint32)
    with_numpy = api.mma(ins, A, B, C)                           # conftest-free: compare the two backends
    a = np.broadcast_to(A[:, None, :], (16, 8, 16))
    b = np.broadcast_to(B.T[None, :, :], (16, 8, 16))
    assert np.array_equal(golden.dot_add(ins, a, b, C, backend="numba"), with_numpy)
    assert np.array_equal(golden.dot_add(ins, a.copy(), b.copy(), C, backend="numba"), with_numpy)
    assert np.array_equal(golden.dot_add(ins, a.astype(np.int64), b.astype(np.uint32), C, backend="numba"),
                          with_numpy)


@dataclasses.dataclass(frozen=True)
class _NewParams(Params):
    """A Params with a field added after the kernels were written."""
    exact_f: bool = False


def test_unmodelled_params_fall_back(monkeypatch):
    """supports() checks every Params field against its default: a field it does not know sends the
    design to numpy, and so does a design whose sums the numpy path refuses (its error is raised)."""
    ins = lookup("hopper", "HMMA.16816.F32")
    dp = ins.datapath
    base = dataclasses.asdict(dp.params)
    assert kernels.supports(_NewParams(**base), dp.formats, dp.k)
    assert not kernels.supports(_NewParams(**base, exact_f=True), dp.formats, dp.k)
    assert not kernels.supports(dp.params.with_(F=60), dp.formats, dp.k)
    for field, value in (("F", "exact"), ("zero_sign", "ieee754"), ("nan_bits", 0x7FC00000)):
        if field in base:                        # fields other helpers add (golden.params)
            assert not kernels.supports(dp.params.with_(**{field: value}), dp.formats, dp.k), field
    a, b, c, _, _ = random_operands(ins, 16, np.random.default_rng(0), "normal")
    want = golden.dot_add(ins, a, b, c, backend="numpy")

    def no_kernel(*args, **kw):
        raise AssertionError("a kernel ran a design it does not model")
    monkeypatch.setattr(kernels, "run", no_kernel)
    new = dataclasses.replace(ins, params=_NewParams(**base, exact_f=True))
    assert np.array_equal(golden.dot_add(new, a, b, c, backend="numba"), want)
    with pytest.raises(ValueError, match="exact up to"):     # refused where the Params meets the instruction
        dataclasses.replace(ins, params=dp.params.with_(F=60))


def test_backend_choice(monkeypatch):
    ins = lookup("hopper", "HMMA.16816.F32")
    a, b, c, _, _ = random_operands(ins, 8, np.random.default_rng(0), "normal")
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    with pytest.raises(ValueError, match="valid: numpy, numba"):
        golden.dot_add(ins, a, b, c, backend="cuda")
    monkeypatch.setenv("GOLDEN_BACKEND", "fast")
    with pytest.raises(ValueError, match="GOLDEN_BACKEND"):
        golden.dot_add(ins, a, b, c)
    with pytest.raises(ValueError, match="threads"):
        golden.dot_add(ins, a, b, c, backend="numpy", threads=0)
    monkeypatch.setenv("GOLDEN_BACKEND", "numpy")

    def no_kernel(*args, **kw):
        raise AssertionError("the numpy backend ran a kernel")
    monkeypatch.setattr(kernels, "run", no_kernel)
    assert np.array_equal(golden.dot_add(ins, a, b, c), want)


def test_without_numba_one_warning(monkeypatch):
    ins = lookup("hopper", "HMMA.16816.F32")
    a, b, c, _, _ = random_operands(ins, 8, np.random.default_rng(0), "normal")
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    monkeypatch.setattr(kernels, "available", lambda: False)
    monkeypatch.setattr(api, "_warned_no_numba", [])
    monkeypatch.delenv("GOLDEN_BACKEND", raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            assert np.array_equal(golden.dot_add(ins, a, b, c), want)
    assert [str(w.message) for w in caught if "numba" in str(w.message)].__len__() == 1


@pytest.mark.parametrize("spread", [4, 200])
def test_fast_generator_same_bits_as_from_float(spread):
    """random_values builds its bit patterns from the fields; from_float (RZ) is the reference."""
    from golden.formats import FORMATS, from_float
    from golden.vectors import random_values
    for name, fmt in FORMATS.items():
        got = random_values(fmt, (3000,), np.random.default_rng(2), spread=spread)
        rng = np.random.default_rng(2)                      # the same draws, rounded by from_float
        lo, hi = max(fmt.emin, -spread), min(fmt.emax, spread)
        e = rng.integers(lo, hi + 1, (3000,))
        v = np.ldexp(1 + rng.random((3000,)), e)
        if fmt.signed:
            v = np.where(rng.random((3000,)) < 0.5, -v, v)
        v = np.where(rng.random((3000,)) < 0.1, 0.0, v)
        assert np.array_equal(got, from_float(fmt, v, "RZ").astype(np.uint64)), name


# the AMD and SFMA kernels' other paths: operands in their own width (uint16 f16, uint8 fp8, uint32
# f32: the per-width loops and the byte loader), the later model's specials (FDRDA/GFDRDA rows
# outside the block path)
NARROW_UNITS = [("cdna3", "v_mfma_f32_16x16x16_bf16"), ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8"),
                ("cdna2", "v_mfma_f32_32x32x8_f16"), ("cdna3", "v_mfma_f32_16x16x4_f32"), ("hopper", "DMMA.8x8x4")]


@pytest.mark.parametrize("unit", NARROW_UNITS, ids=lambda u: f"{u[0]}-{u[1]}")
def test_operands_in_their_own_width(unit):
    ins = lookup(*unit)
    fa, fb, fc, _ = ins.formats
    a, b, c, _, _ = random_operands(ins, 300, np.random.default_rng(7), "mixed")
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    narrow = a.astype(fa.dtype), b.astype(fb.dtype), c.astype(fc.dtype)
    assert np.array_equal(golden.dot_add(ins, *narrow, backend="numba"), want)
    mixed = a.astype(fa.dtype), b, c.astype(np.uint64)
    assert np.array_equal(golden.dot_add(ins, *mixed, backend="numba"), want)


@pytest.mark.parametrize("unit,change", [(("cdna3", "v_mfma_f32_16x16x32_fp8_bf8"), {"specials": "later_model"}),
                                         (("cdna3", "v_mfma_f32_32x32x8_bf16"), {"specials": "later_model"})],
                         ids=lambda x: str(x))
def test_amd_designs_beside_the_catalog(unit, change):
    ins = lookup(*unit)
    new = dataclasses.replace(ins, params=ins.datapath.params.with_(**change))
    assert kernels.handles(new.datapath)
    for i, kind in enumerate(("bits", "normal", "disputed", "structured")):
        a, b, c, _, _ = random_operands(ins, 200, np.random.default_rng([11, i]), kind)
        want = golden.dot_add(new, a, b, c, backend="numpy")
        assert np.array_equal(golden.dot_add(new, a, b, c, backend="numba"), want), kind


def test_every_field_the_kernels_claim_to_model_is_read_into_their_parameters():
    """The kernels model every Params field but golden.kernels.spec._UNMODELLED: each of the others is
    read (``p.FIELD`` / ``params.FIELD``) where the kernels' parameters are built. A new field that no
    kernel reads must be listed as unmodelled, so a design that sets it runs on the numpy path."""
    import inspect
    import re

    from golden.kernels import spec
    source = inspect.getsource(spec)

    def read(name):
        return re.search(rf"\b(p|params)\.{name}\b", source) is not None

    unread = sorted(name for name in spec._MODELLED if not read(name))
    assert not unread, f"fields neither read by the kernels nor listed in _UNMODELLED: {unread}"
    assert not read("a_field_added_tomorrow")          # planted: an unread field is caught


# SFMA's row loop is compiled with K = 4 a constant (its fmas unrolled), a runtime K otherwise (1, 2, 8,
# 16); binary64 and binary32, operands in uint64 and in their own width, mixed widths
SFMA_UNITS = [("hopper", "DMMA.16x8x16"), ("hopper", "DMMA.16x8x8"), ("ampere", "DMMA.884"),
              ("cdna2", "v_mfma_f32_32x32x1_2b_f32"), ("cdna2", "v_mfma_f32_32x32x2_f32")]


@pytest.mark.parametrize("unit", SFMA_UNITS, ids=lambda u: f"{u[0]}-{u[1]}")
def test_sfma_row_loops_match_and_catch_the_planted_fault(unit):
    ins = lookup(*unit)
    a, b, c, _, _ = random_operands(ins, 97, np.random.default_rng(4), "mixed")
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    own = [x.astype(f.dtype) for x, f in zip((a, b, c), ins.formats[:3])]
    for ops in ((a, b, c), own, (own[0], b, own[2])):              # uint64, own width, mixed widths
        assert np.array_equal(golden.dot_add(ins, *ops, backend="numba", threads=1), want)
    assert mismatches(ins, 4 * ROWS, kinds=("normal", "structured")) == 0
    with kernels.planted_fault():
        assert mismatches(ins, 4 * ROWS, kinds=("normal", "structured")) > 0


def test_plan_is_cached_per_instruction_and_follows_new_params():
    """kernels.plan keeps one plan per instruction object; an instruction made with other params gets
    its own (the bits follow its params, not a stale plan)."""
    ins = lookup("hopper", "HMMA.16816.F32")
    assert kernels.plan(ins) is kernels.plan(ins)
    other = ins.with_params(F=ins.params.F - 3)
    assert kernels.plan(other) is not kernels.plan(ins)
    a, b, c, _, _ = random_operands(other, 200, np.random.default_rng(2), "normal")
    assert np.array_equal(golden.dot_add(other, a, b, c, backend="numba"),
                          golden.dot_add(other, a, b, c, backend="numpy"))
    assert not np.array_equal(golden.dot_add(other, a, b, c, backend="numba"),
                              golden.dot_add(ins, a, b, c, backend="numba"))


BOUND_UNITS = [("hopper", "DMMA.8x8x4"), ("hopper", "HMMA.16816.F32")]   # d written in place; d via scratch


def _narrow(ins, n, seed, kind="normal"):
    return random_operands(ins, n, np.random.default_rng(seed), kind, narrow=True)[:3]


@pytest.mark.parametrize("unit", BOUND_UNITS, ids=lambda u: f"{u[0]}-{u[1]}")
def test_a_layout_called_again_runs_bound_with_the_same_bits(unit, monkeypatch):
    """dot_add keeps a kernels.Bound per layout of operands it never scans: the next call of that
    layout runs it (not kernels.run), new values giving their own bits, the planted fault caught."""
    ins = lookup(*unit)
    a, b, c = _narrow(ins, 300, 1)
    golden.dot_add(ins, a, b, c, backend="numba", threads=1)
    assert isinstance(api._BOUND.get(api._layout_key(ins, (a, b, c, None, None), 1)), kernels.Bound)

    def no_run(*args, **kw):
        raise AssertionError("a bound layout went through kernels.run")
    monkeypatch.setattr(kernels, "run", no_run)
    for seed, kind in ((2, "normal"), (3, "bits")):
        a2, b2, c2 = _narrow(ins, 300, seed, kind)
        want = golden.dot_add(ins, a2, b2, c2, backend="numpy")
        assert np.array_equal(golden.dot_add(ins, a2, b2, c2, backend="numba", threads=1), want)
        with kernels.planted_fault():
            assert (golden.dot_add(ins, a2, b2, c2, backend="numba", threads=1) != want).any()
    monkeypatch.setenv("GOLDEN_BACKEND", "numpy")                # the environment is read at every call
    with kernels.planted_fault():
        assert np.array_equal(golden.dot_add(ins, a2, b2, c2), want)


def test_scanned_operands_never_bind_and_are_checked_at_every_call():
    """f16 operands as uint64 are scanned for stray high bits: no Bound, so a bad pattern in a later
    call of the same layout is still refused."""
    ins = lookup("hopper", "HMMA.16816.F32")
    a, b, c, _, _ = random_operands(ins, 50, np.random.default_rng(4), "normal")
    for _ in range(2):
        golden.dot_add(ins, a, b, c, backend="numba")
    assert api._layout_key(ins, (a, b, c, None, None), None) not in api._BOUND
    a[7, 3] = 1 << 20
    with pytest.raises(ValueError, match="wider than format f16"):
        golden.dot_add(ins, a, b, c, backend="numba")


@pytest.mark.parametrize("unit", [("hopper", "HMMA.16816.F32"), ("cdna2", "v_mfma_f32_32x32x8_f16")],
                         ids=["shape-kernel", "family-kernel"])
@pytest.mark.parametrize("rows_a_launch", [64, None], ids=["sliced", "one-launch"])
def test_bound_layouts_read_in_slices_and_byte_swapped(unit, rows_a_launch, monkeypatch):
    """A Bound of more rows than one launch takes, or of byte-swapped operands, goes through
    kernels.run's steps (slices, a copy in the kernels' dtype): the same bits as numpy, on a shape
    kernel (which narrows to its own widths) and a family kernel (which reads native integers as
    they lie, and copies others)."""
    monkeypatch.setattr(api, "_BOUND", {})                   # no Bound of another test's launch size
    if rows_a_launch is not None:
        monkeypatch.setattr(kernels, "CONTIGUOUS_ROWS", rows_a_launch)
    ins = lookup(*unit)
    for seed, swap in ((5, False), (6, True)):
        a, b, c = _narrow(ins, 200, seed)
        if swap:
            a, b = a.astype(">u2"), b.astype(">u2")
        want = golden.dot_add(ins, a, b, c, backend="numpy")
        for _ in range(2):                                          # the second call runs the Bound
            assert np.array_equal(golden.dot_add(ins, a, b, c, backend="numba", threads=2), want)
        assert isinstance(api._BOUND[api._layout_key(ins, (a, b, c, None, None), 2)], kernels.Bound)
        with kernels.planted_fault():
            assert (golden.dot_add(ins, a, b, c, backend="numba", threads=2) != want).any()


# the integer-lane FDA decodes f16/bf16 (uint16) and fp8 (uint8) operands where they lie (f16 with f16
# c; f16 and E4M3 with f32 c take shape kernels, golden.kernels.fda_float and fda_fp8, so these tests run
# the family kernel itself: family_bits)
IN_PLACE_UNITS = [("hopper", "HMMA.16816.F16"), ("ada", "QMMA.16832.F32.E4M3.E4M3")]



@pytest.mark.parametrize("unit", IN_PLACE_UNITS, ids=lambda u: f"{u[0]}-{u[1]}")
def test_fda_in_place_decode_matches_and_catches_the_planted_fault(unit):
    ins = lookup(*unit)
    bad = 0
    for i, kind in enumerate(KINDS):
        a, b, c, _, _ = random_operands(ins, 3 * 128 + 5, np.random.default_rng([12, i]), kind, narrow=True)
        assert a.dtype.itemsize == b.dtype.itemsize < 8
        want = golden.dot_add(ins, a, b, c, backend="numpy")
        assert np.array_equal(family_bits(ins, a, b, c), want), kind
        bad += int((family_bits(ins, a, b, c, fault=True) != want).sum())
    assert bad > 0


# own-width FDA operands: f16 and E4M3 pairs decode with their fields as constants, bf16 and the
# other fp8 pairs from their decode rows
LITERAL_UNITS = [("hopper", "HMMA.16816.F16"), ("ada", "QMMA.16816.F32.E4M3.E4M3"),
                 ("hopper", "HMMA.16816.F32.BF16"), ("ada", "QMMA.16816.F32.E4M3.E5M2"),
                 ("ada", "QMMA.16816.F32.E5M2.E5M2")]


def _blocks_alternating(ins, rows_per_block, blocks, seed):
    """Own-width operands whose FDA blocks alternate: random bit patterns (NaN and infinities in most
    blocks), then finite normal numbers (none: the block after a special one decodes without its
    classes), then bits again ..."""
    kinds = ["bits" if q % 2 == 0 else "normal" for q in range(blocks)]
    parts = [random_operands(ins, rows_per_block, np.random.default_rng([seed, q]), kind, narrow=True)
             for q, kind in enumerate(kinds)]
    return [np.concatenate([p[s] for p in parts]) for s in range(3)]


@pytest.mark.parametrize("unit", LITERAL_UNITS, ids=lambda u: f"{u[0]}-{u[1]}")
def test_fda_own_width_decode_matches_across_special_and_plain_blocks(unit):
    from golden.kernels import fused_int

    ins = lookup(*unit)
    pl = kernels.plan(ins)
    drows = fused_int.decode_rows(pl.fmts)
    literal = unit in LITERAL_UNITS[:2]
    rows_ = fused_int.LITERAL_ROWS                          # their special test: a field's maximum equal to its value
    assert (rows_[:, fused_int.D_NM] == rows_[:, fused_int.D_NV]).all()
    assert (fused_int.literal_of(drows[spec.A]) >= 0 and fused_int.literal_of(drows[spec.B]) >= 0) == literal
    rows = min(fused_int.FDA_ROWS, max(16, fused_int.FLAT // pl.k))   # fda_block_rows' block: one per kind in turn
    a, b, c = _blocks_alternating(ins, rows, 5, 21)
    for q in range(5):                                      # bits blocks hold a NaN or infinity, plain ones none
        part = slice(q * rows, (q + 1) * rows)
        finite = [np.isfinite(golden.formats.to_float(fmt, x)).all()
                  for x, fmt in zip((a[part], b[part]), ins.datapath.formats[:2])]
        assert all(finite) == (q % 2 == 1)
    want = golden.dot_add(ins, a, b, c, backend="numpy")
    assert np.array_equal(family_bits(ins, a[:-3], b[:-3], c[:-3]), want[:-3])      # a partial last block
    assert (family_bits(ins, a, b, c, fault=True) != want).any()


def test_float64_conversions_that_vectorise_are_exact_at_their_edges():
    """_common.f64_of_i51 and bit_length_i51 (AVX2's int64 -> float64 and leading-zero count) against
    Python's own on every power of two and its neighbours up to 2**51, and on random values."""
    from numba import njit

    from golden.kernels import _common as C

    @njit
    def both(xs):
        f, n = np.empty(len(xs)), np.empty(len(xs), np.int64)
        for i in range(len(xs)):
            f[i], n[i] = C.f64_of_i51(xs[i]), C.bit_length_i51(abs(xs[i]))
        return f, n
    edges = [0] + [(1 << k) + d for k in range(51) for d in (-1, 0, 1) if 0 <= (1 << k) + d < 1 << 51]
    rand = np.random.default_rng(0).integers(0, 1 << 51, 1000).tolist()
    xs = np.array([s * x for x in edges + rand for s in (1, -1)], np.int64)
    f, n = both(xs)
    assert f.tolist() == [float(x) for x in xs.tolist()]
    assert n.tolist() == [abs(x).bit_length() for x in xs.tolist()]
