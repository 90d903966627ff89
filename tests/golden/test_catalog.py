"""The instruction catalog, the API's conventions, and clear errors on bad input."""

import ml_dtypes
import numpy as np
import pytest

import golden
from golden.formats import from_float, to_float


def _ones(ins):
    """a = 1 (first three products, fewer if K < 3), b = 1, c = 1: every algorithm is exact here."""
    fa, fb, fc, fd = ins.formats
    a = np.zeros(ins.k)
    b = np.zeros(ins.k)
    a[:3] = 1.0
    b[:3] = 1.0
    sa = sb = None
    if ins.scale_format:
        one = from_float(ins.scale_format, np.ones(ins.k // ins.block_size))
        sa, sb = one, one
    return from_float(fa, a), from_float(fb, b), from_float(fc, 1.0), sa, sb


@pytest.mark.parametrize("ins", golden.CATALOG, ids=lambda i: f"{i.arch}-{i.name}")
def test_every_instruction_computes_a_simple_exact_dot_add(ins):
    a, b, c, sa, sb = _ones(ins)
    d = golden.dot_add(ins, a, b, c, sa, sb)
    assert d.dtype == golden.get_format(ins.d_format).dtype
    want = min(ins.k, 3) + 1.0
    assert to_float(ins.d_format, d) == want
    # the same through mma on the instruction's own shape
    m, n = ins.shapes[0]
    A = np.broadcast_to(a, (m, ins.k))
    B = np.broadcast_to(b[:, None], (ins.k, n))
    C = np.full((m, n), c, np.uint64)
    sA = None if sa is None else np.broadcast_to(sa, (m, len(sa)))
    sB = None if sb is None else np.broadcast_to(sb[:, None], (len(sb), n))
    D = golden.mma(ins, A, B, C, sA, sB)
    assert D.shape == (m, n) and (to_float(ins.d_format, D) == want).all()


def test_catalog_covers_every_cell_of_the_tables():
    counts = {a: len(golden.instructions(a)) for a in golden.ARCHITECTURES}
    assert counts["volta"] == 3 and counts["turing"] == 5 and counts["ampere"] == 9
    assert counts["ada"] == 8 + 1 + 16                   # HMMA, DMMA and 16 QMMA e4m3/e5m2 variants
    assert counts["hopper"] == 8 + 1 + 3 + 4 + 8 + 8  # 8 HMMA, DMMA.8x8x4, 3 DMMA.16x8xK, HGMMA, QGMMA, MMA.16832
    assert counts["blackwell"] == 8 + 1 + 4 + 75 + 4 + 8  # HMMA, DMMA, UTCHMMA, UTCQMMA (50 + 25 scaled), UTCOMMA,
    #                                                      compiled fp8 mma.sync (MMA.16832)
    assert counts["rtx_blackwell"] == 8 + 1 + 16 + 50 + 25 + 4
    assert counts["cdna1"] == 5 + 5 + 5               # SFMA, f16 and bf16 exact passes (tests/golden/test_cdna1.py)
    assert counts["cdna2"] == 7 + 5 + 5 + 5           # SFMA, f16 GPS, bf16 G=2, bf16_1k G=4
    assert counts["cdna3"] == 7 + 2 + 5 + 5 + 8       # SFMA, xf32, f16, bf16, fp8/bf8
    names = {(i.arch, i.name) for i in golden.CATALOG}
    assert len(names) == len(golden.CATALOG), "names are unique per architecture"


@pytest.mark.parametrize("arch,name,algorithm,F,L", [
    ("volta", "HMMA.884.F32.F32", "FDA", 23, 4),
    ("turing", "HMMA.884.F16.F16", "FDA", 23, 4),
    ("turing", "HMMA.1688.F32", "FDA", 24, 8),
    ("ampere", "HMMA.1688.F32.TF32", "CoFDA", 24, 4),
    ("ampere", "HMMA.16816.F32.BF16", "CoFDA", 24, 8),
    ("ada", "QMMA.16832.F16.E5M2.E4M3", "CoFDA", 13, 16),
    ("ada", "QMMA.16816.F32.E4M3.E4M3", "FDA", 13, 16),
    ("hopper", "HMMA.1688.F32.TF32", "FDA", 25, 8),
    ("hopper", "QGMMA.64xNx32.F32.E5M2.E5M2", "FDA", 13, 32),
    ("blackwell", "UTCQMMA.F16.E2M1.E3M2", "FDA", 25, 32),
    ("blackwell", "UTCOMMA.4X", "GDFS", 35, 64),
    ("rtx_blackwell", "QMMA.16832.F32.E4M3.E5M2", "FDA", 25, 32),
    ("cdna3", "v_mfma_f32_16x16x8_xf32", "CoFDRDA", 24, 4),
    ("cdna3", "v_mfma_f32_16x16x16_bf16", "CoFDRDA", 24, 8),
    ("cdna3", "v_mfma_f32_16x16x32_fp8_bf8", "CoGFDRDA", 24, 16),
    ("cdna3", "v_mfma_f32_32x32x16_bf8_fp8", "GFDRDA", 24, 16),
])
def test_algorithm_parameters_follow_the_tables(arch, name, algorithm, F, L):
    ins = golden.lookup(arch, name)
    assert (ins.algorithm, ins.params.F, ins.params.pass_size) == (algorithm, F, L)


def test_e_zero_per_architecture():
    e = lambda arch, name: golden.lookup(arch, name).params.e_zero  # noqa: E731
    assert e("volta", "HMMA.884.F32.F32") == -131 and e("volta", "HMMA.884.F16.F16") == -19
    assert e("ada", "HMMA.1688.F32") == -132 and e("ampere", "HMMA.1688.F16") == -20
    assert e("hopper", "HGMMA.64xNx16.F32") == -133 and e("blackwell", "UTCHMMA.F16.F16") == -21
    assert e("rtx_blackwell", "QMMA.SF.16832.F32.E2M1.E2M1.E8") == -133
    assert e("blackwell", "UTCOMMA.MXF4.E8") == -139


def test_gps_groups():
    assert golden.lookup("cdna2", "v_mfma_f32_16x16x8bf16").params.group == 2
    assert golden.lookup("cdna2", "v_mfma_f32_16x16x16bf16_1k").params.group == 4
    assert golden.lookup("cdna2", "v_mfma_f32_32x32x8f16").params.group == 4


def test_names_case_insensitive_and_by_ptx_and_alias():
    a = golden.lookup("HOPPER", "hgmma.64xnx16.f32")
    assert a.name == "HGMMA.64xNx16.F32"
    assert golden.lookup("Hopper", "wgmma.m64n256k16.f32.f16.f16").n == 256
    assert golden.lookup("hopper", "HGMMA.64x96x16.F32").n == 96
    assert golden.lookup("cdna3", "f32_32x32x8_f16").name == "v_mfma_f32_32x32x8_f16"
    assert golden.lookup("cdna2", "V_MFMA_F32_32X32X8F16").arch == "cdna2"
    assert golden.lookup("sm_90", "mma.m16n8k16.f32.f16.f16.f32").name == "HMMA.16816.F32"
    assert golden.lookup("ampere", "DMMA.884").algorithm == "SFMA"
    assert golden.lookup("hopper", "DMMA.8x8x4").algorithm == "SFMA"


def test_families_select_all_variants():
    assert len(golden.instructions("blackwell", "UTCOMMA")) == 4
    assert len(golden.instructions("hopper", "HGMMA")) == 4
    assert len(golden.instructions("hopper", "QGMMA")) == 8
    assert len(golden.instructions("ampere", "HMMA.16816")) == 3
    assert len(golden.instructions("cdna3", "v_mfma_f32_32x32x16")) == 4
    assert len(golden.instructions("cdna3", "v_mfma_f32_32x32x8_f16")) == 1
    assert len(golden.instructions("rtx_blackwell", "OMMA")) == 4
    assert {i.arch for i in golden.instructions(family="HMMA.16816.F32")} == {
        "ampere", "ada", "hopper", "blackwell", "rtx_blackwell"}


def test_tcgen05_and_wgmma_shapes():
    ins = golden.lookup("blackwell", "UTCHMMA.F32.F16")
    assert ins.with_shape(128, 256).m == 128
    with pytest.raises(ValueError, match="N in 16..256 step 16"):
        ins.with_shape(128, 24)
    with pytest.raises(ValueError, match="not valid"):
        golden.lookup("hopper", "HGMMA.64xNx16.F32").with_shape(64, 12)


# --------------------------------------------------------------------------- input conventions

def test_float_and_ml_dtypes_inputs_are_accepted_when_exact():
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    a = np.arange(16, dtype=np.float16)
    b = np.ones(16, dtype=ml_dtypes.bfloat16).astype(np.float16)
    c = np.float32(0.5)
    d_float = golden.dot_add(ins, a, b, c)
    d_bits = golden.dot_add(ins, a.view(np.uint16), b.view(np.uint16), np.array(c).view(np.uint32))
    assert d_float == d_bits and to_float("f32", d_bits) == 120.5
    fp8 = golden.lookup("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3")
    x = np.full(32, 0.5, dtype=ml_dtypes.float8_e4m3fn)
    assert to_float("f32", golden.dot_add(fp8, x, x, np.float32(0))) == 8.0


def test_batches_broadcast():
    ins = golden.lookup("ampere", "HMMA.1688.F32")
    a = from_float("f16", np.ones((3, 5, 8)))
    d = golden.dot_add(ins, a, a[0, 0], from_float("f32", np.arange(5.0)))
    assert d.shape == (3, 5)
    assert (to_float("f32", d) == 8 + np.arange(5.0)).all()


def test_trace_shows_each_stage():
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    a = from_float("f16", np.r_[1.0, 2.0 ** -24, np.zeros(14)])
    b = from_float("f16", np.r_[1.0, 1.0, np.zeros(14)])
    t = golden.trace(ins, a, b, from_float("f32", 0.0))
    text = str(t)
    for stage in ("products", "maximum exponent", "aligned to F=25", "fixed-point sum", "=> d = 0x3f800000"):
        assert stage in text
    chained = str(golden.trace(golden.lookup("ampere", "HMMA.16816.F32"), a, b, from_float("f32", 0.0)))
    assert "pass 0" in chained and "pass 1" in chained


# --------------------------------------------------------------------------- errors

def test_unknown_architecture_suggests_close_names():
    with pytest.raises(ValueError, match="did you mean hopper"):
        golden.lookup("hoper", "HMMA.16816.F32")
    with pytest.raises(ValueError, match="valid: volta, turing"):
        golden.instructions("pascal")


def test_unknown_instruction_suggests_close_names():
    with pytest.raises(ValueError, match="close matches: HMMA.16816.F32"):
        golden.lookup("hopper", "HMMA.16816.F23")


def test_instruction_on_wrong_architecture_says_where_it_exists():
    with pytest.raises(ValueError, match="not available on volta; it exists on: ada, ampere, blackwell"):
        golden.lookup("volta", "HMMA.16816.F32")
    with pytest.raises(ValueError, match="exists on: cdna3"):
        golden.lookup("cdna2", "v_mfma_f32_32x32x16_fp8_fp8")


def test_ambiguous_name_lists_candidates():
    with pytest.raises(ValueError, match="names 4 instructions"):
        golden.lookup("blackwell", "UTCOMMA")


def test_wrong_k_is_rejected():
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    with pytest.raises(ValueError, match=r"K=16: a and b need shape \[\.\.\., 16\]"):
        golden.dot_add(ins, np.zeros(8, np.uint16), np.zeros(8, np.uint16), np.uint32(0))


def test_bits_wider_than_the_format_are_rejected():
    ins = golden.lookup("blackwell", "UTCQMMA.F32.E2M1.E2M1")
    a = np.zeros(32, np.uint8)
    a[3] = 0x1F
    with pytest.raises(ValueError, match="wider than format e2m1"):
        golden.dot_add(ins, a, np.zeros(32, np.uint8), np.uint32(0))


def test_inexact_float_input_is_rejected():
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    with pytest.raises(ValueError, match="not exactly representable in f16"):
        golden.dot_add(ins, np.full(16, 0.1), np.ones(16), 0.0)


def test_missing_and_misshaped_scales():
    ins = golden.lookup("blackwell", "UTCOMMA.4X")
    a = np.zeros(64, np.uint8)
    with pytest.raises(ValueError, match="needs scale_a and scale_b.*ue4m3.*16 products"):
        golden.dot_add(ins, a, a, np.uint32(0))
    with pytest.raises(ValueError, match=r"scale_a needs shape \[\.\.\., 4\]"):
        golden.dot_add(ins, a, a, np.uint32(0), np.zeros(2, np.uint8), np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match="takes no block scales"):
        golden.dot_add(golden.lookup("hopper", "HMMA.16816.F32"), np.zeros(16, np.uint16),
                       np.zeros(16, np.uint16), np.uint32(0), np.zeros(1, np.uint8), np.zeros(1, np.uint8))


def test_mma_shape_errors():
    ins = golden.lookup("ampere", "HMMA.16816.F32")
    with pytest.raises(ValueError, match="shape M=8, N=8 is not valid"):
        golden.mma(ins, np.zeros((8, 16), np.uint16), np.zeros((16, 8), np.uint16), np.zeros((8, 8), np.uint32))
    with pytest.raises(ValueError, match="C must be"):
        golden.mma(ins, np.zeros((16, 16), np.uint16), np.zeros((16, 8), np.uint16), np.zeros((8, 8), np.uint32))


def test_custom_design_is_one_parameter_away():
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    with pytest.raises(ValueError, match="FDA needs F"):
        ins.params.with_(F=None)
    with pytest.raises(ValueError, match="unknown algorithm"):
        golden.Params(base="FMA")


@pytest.mark.parametrize("ins", golden.CATALOG, ids=lambda i: f"{i.arch}-{i.name}")
def test_every_vector_kind_generates_for_every_instruction(ins):
    import golden.vectors
    rng = np.random.default_rng(0)
    fa, fb, fc, fd = ins.formats
    for kind in golden.vectors.KINDS:
        a, b, c, sa, sb = golden.vectors.random_operands(ins, 24, rng, kind)
        assert a.shape == b.shape == (24, ins.k) and c.shape == (24,)
        fs = ins.datapath.scale_format
        for x, f in ((a, fa), (b, fb), (c, fc)) + (((sa, fs), (sb, fs)) if fs else ()):
            assert x.dtype == np.uint64, f"{kind}: {f.name} operands as {x.dtype}"
            assert f.storage_bits == 64 or int(x.max()) >> f.storage_bits == 0, f"{kind}: {f.name} too wide"
        if kind == "normal":        # finite operands, as the kind promises
            for x, f in ((a, fa), (b, fb), (c, fc)):
                assert (golden.decode(f, x).cls < golden.formats.INF).all(), f"{kind}: non-finite {f.name}"
        d = golden.dot_add(ins, a, b, c, sa, sb)
        assert d.shape == (24,) and d.dtype == fd.dtype
        # the batch computes each row as a dot-add of its own (row 5 alone gives the same bits)
        alone = golden.dot_add(ins, a[5], b[5], c[5], None if sa is None else sa[5], None if sb is None else sb[5])
        assert golden.same_results(ins, alone, d[5]), f"{kind}: row 5 differs alone and in the batch"
