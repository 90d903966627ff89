"""The worked examples of the MMA-Sim paper and of Fasi, Higham, Mikaitis and Pranesh."""

import numpy as np
import pytest

import golden
from golden.formats import from_float, to_float


def run(arch, name, a_vals, b_vals, c_val, scale_a=None, scale_b=None):
    """Dot-add of float values (exactly representable), zero-padded to K; returns d as a float."""
    ins = golden.lookup(arch, name)
    fa, fb, fc, fd = ins.formats
    a = np.zeros(ins.k, np.float64)
    b = np.zeros(ins.k, np.float64)
    a[:len(a_vals)] = a_vals
    b[:len(b_vals)] = b_vals
    c = from_float(fc, np.float64(c_val))
    d = golden.dot_add(ins, from_float(fa, a), from_float(fb, b), c, scale_a, scale_b)
    return to_float(fd, d).item(), int(d)


def test_cdna3_round_down_error():
    """Paper VI-C(a): 2048*2048 - 2048*2048 - 0.000001 = -0.25 on v_mfma_f32_32x32x8_f16."""
    d, _ = run("cdna3", "v_mfma_f32_32x32x8_f16", [2048, 2048], [2048, -2048], -0.000001)
    assert d == -0.25


def test_cdna3_round_down_error_disappears_with_rz():
    """The hypothetical RZ variant of the same instruction gives 0 (one parameter changed)."""
    ins = golden.lookup("cdna3", "v_mfma_f32_32x32x8_f16")
    a = from_float("f16", np.array([2048, 2048, 0, 0, 0, 0, 0, 0.0]))
    b = from_float("f16", np.array([2048, -2048, 0, 0, 0, 0, 0, 0.0]))
    c = from_float("f32", -0.000001)
    fa, fb, fc, fd = ins.formats
    from golden.algorithms import run as run_alg
    # RZ instead of RD at the c alignment: floor on the magnitude = the FDA (NVIDIA) treatment
    rz = golden.Params(base="FDA", F=24, pass_size=8, e_zero=-126, out_rounding="RNE", overflow="ieee")
    d = run_alg(rz, a[None], b[None], np.array([c]), fa, fb, fc, fd)
    assert to_float("f32", d)[0] == 0.0


def test_cdna3_fp8_patch_drops_small_c():
    """Paper VI-C: the FP8 instructions round c to zero when e_c < e_max - 25."""
    d, _ = run("cdna3", "v_mfma_f32_32x32x16_bf8_bf8", [2048, 2048], [2048, -2048], -0.000001)
    assert d == 0.0
    # ...but keep (and round down) a c within 25 binades of the products
    d, _ = run("cdna3", "v_mfma_f32_32x32x16_bf8_bf8", [2048, 2048], [2048, -2048], -0.3)
    assert d == -0.5            # -0.3 floored at 24 fraction bits below 2^22 (steps of 0.25)


@pytest.mark.parametrize("arch,name", [("ampere", "HMMA.1684.F32.TF32"), ("hopper", "HGMMA.64xNx8.F32.TF32"),
                                       ("blackwell", "UTCHMMA.F32.TF32"), ("cdna3", "v_mfma_f32_32x32x4_xf32")])
def test_tf32_nan_with_low_payload_becomes_infinity(arch, name):
    """Paper IV-C: the low 13 bits of a TF32 word are ignored, so 0x7F800001 (a NaN) is +inf."""
    ins = golden.lookup(arch, name)
    a = np.zeros(ins.k, np.uint64)
    b = np.zeros(ins.k, np.uint64)
    a[0], b[0] = 0x7F800001, 0x3F800000
    d = golden.dot_add(ins, a, b, np.uint64(0))
    assert int(d) == 0x7F800000


def test_nvidia_canonical_nan_and_positive_zero():
    d, bits = run("hopper", "HMMA.16816.F32", [np.inf, 1.0], [0.0, 1.0], 0.0)
    assert bits == 0x7FFFFFFF
    d, bits = run("hopper", "HMMA.16816.F16", [np.inf, -np.inf], [1.0, 1.0], 0.0)
    assert bits == 0x7FFF
    d, bits = run("hopper", "HMMA.16816.F32", [-0.0], [0.0], -0.0)
    assert bits == 0                                    # never -0
    d, bits = run("ampere", "HMMA.1688.F32", [1.0, -1.0], [3.0, 3.0], -0.0)
    assert bits == 0


# --------------------------------------------------------------------------- Fasi et al., V100

V = ("volta", "HMMA.884.F32.F32")


def test_fasi_subnormal_inputs_supported():
    assert run(*V, [2.0 ** -24], [4.0], 0.0)[0] == 2.0 ** -22


def test_fasi_subnormal_c_kept():
    assert run(*V, [], [], 2.0 ** -149)[0] == 2.0 ** -149


def test_fasi_subnormal_results_produced():
    assert run("volta", "HMMA.884.F16.F16", [2.0 ** -14], [0.5], 0.0)[0] == 2.0 ** -15


def test_fasi_products_exact():
    x = 1 - 2.0 ** -11
    assert run(*V, [x] * 4, [x] * 4, 0.0)[0] == 4 * x * x


def test_fasi_small_addends_lost_whatever_the_order():
    tiny = 2.0 ** -24
    for pos in range(4):
        b = [tiny] * 4
        b[pos] = 1.0
        assert run(*V, [1.0] * 4, b, tiny)[0] == 1.0
    assert run(*V, [1.0] * 4, [tiny] * 4, 1.0)[0] == 1.0


def test_fasi_round_towards_zero():
    assert run(*V, [1.0, 1.0], [2.0, 0.75 * 2.0 ** -22], 0.0)[0] == 2.0
    assert run(*V, [1.0, 1.0], [-2.0, -0.75 * 2.0 ** -22], 0.0)[0] == -2.0


def test_fasi_normalised_only_at_the_end_so_not_monotonic():
    tiny = 2.0 ** -24
    assert run(*V, [1.0] * 4, [tiny] * 4, 1 - tiny)[0] == 1 + 2.0 ** -23
    assert run(*V, [1.0] * 4, [tiny] * 4, 1.0)[0] == 1.0


def test_turing_m8n8k4_uses_volta_arithmetic():
    assert golden.lookup("turing", "HMMA.884.F32.F32").params == golden.lookup("volta", "HMMA.884.F32.F32").params
    assert golden.lookup("turing", "HMMA.1688.F32").params.F == 24


# --------------------------------------------------------------------------- findings of section VI

def test_fp8_accumulation_13_bits_on_hopper_25_on_blackwell_rtx():
    """2^0 + 2^-14 is lost with 13 fraction bits (Hopper QGMMA, Ada QMMA) but kept with 25."""
    a, b = [1.0, 2.0 ** -7], [1.0, 2.0 ** -7]
    assert run("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3", a, b, 0.0)[0] == 1.0
    assert run("ada", "QMMA.16832.F32.E4M3.E4M3", a, b, 0.0)[0] == 1.0
    assert run("rtx_blackwell", "QMMA.16832.F32.E4M3.E4M3", a, b, 0.0)[0] == 1 + 2.0 ** -14
    assert run("blackwell", "UTCQMMA.F32.E4M3.E4M3", a, b, 0.0)[0] == 1 + 2.0 ** -14


def test_e8m13_result_is_truncated_at_13_fraction_bits():
    a, b = [1.0, 2.0 ** -6], [1.0, 2.0 ** -7]     # 1 + 2^-13 kept ...
    assert run("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3", a, b, 0.0)[0] == 1 + 2.0 ** -13
    # ... but c's bits below 2^-13 are truncated in the result
    assert run("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3", [1.0], [1.0], 1 + 2.0 ** -20)[0] == 2.0


def test_cdna2_flushes_subnormals():
    ins = ("cdna2", "v_mfma_f32_32x32x8_f16")
    assert run(*ins, [2.0 ** -24], [2.0 ** 10], 0.0)[0] == 0.0          # f16 subnormal input -> +0
    assert run(*ins, [2.0 ** -14], [1.0], 2.0 ** -130)[0] == 2.0 ** -14  # subnormal c -> +0
    assert run(*ins, [2.0 ** -14, -2.0 ** -14], [2.0 ** -10, 2.0 ** -10], 0.0)[0] == 0.0
    # CDNA3 keeps them
    assert run("cdna3", "v_mfma_f32_32x32x8_f16", [2.0 ** -24], [2.0 ** 10], 0.0)[0] == 2.0 ** -14


def test_nvidia_products_never_overflow_amd_products_do():
    big = 2.0 ** 127
    # bf16: 2^127 * 2 = 2^128 overflows on CDNA3 (inf) but cancels exactly on Ampere's FDA
    assert run("ampere", "HMMA.1688.F32.BF16", [big, big, big], [2.0, -2.0, 1.0], 0.0)[0] == big
    assert run("cdna3", "v_mfma_f32_32x32x8_bf16", [big], [2.0], 1.0)[0] == np.inf
    assert np.isnan(run("cdna3", "v_mfma_f32_32x32x8_bf16", [big, big], [2.0, -2.0], 1.0)[0])


def test_e_zero_takes_part_in_the_maximum():
    """A zero product at e_zero=-133 truncates a tiny bf16 product on Hopper (fact 1)."""
    tiny = 2.0 ** -126
    # product 2^-252 alone: e_max = max(-252, e_zero(c=0)) = -133 -> truncated to 0
    assert run("hopper", "HMMA.16816.F32.BF16", [tiny], [tiny], 0.0)[0] == 0.0
    # AMD leaves zeros out of the maximum: the product survives until the final rounding (to 0 in f32)
    ins = golden.lookup("hopper", "HMMA.16816.F32.BF16")
    low = ins.params.with_(e_zero=-400, F=25)
    from golden.algorithms import run as run_alg
    a = from_float("bf16", np.array([2.0 ** -60] + [0.0] * 15))
    b = from_float("bf16", np.array([2.0 ** -70] + [0.0] * 15))
    d = run_alg(low, a[None], b[None], np.zeros(1, np.uint64), "bf16", "bf16", "f32", "f32")
    assert to_float("f32", d)[0] == 2.0 ** -130
    d = run_alg(ins.params, a[None], b[None], np.zeros(1, np.uint64), "bf16", "bf16", "f32", "f32")
    assert to_float("f32", d)[0] == 2.0 ** -130     # -130 > -133: kept on Hopper too


# --------------------------------------------------------------------------- docs/spec.md §4 rules at their edges

def test_nvidia_zero_result_is_positive_even_from_a_negative_sum():
    """Fact 3: a negative sum that truncates (f32 RZ) or rounds (f16 RNE) to zero gives +0."""
    d, bits = run("hopper", "HMMA.16816.F32.BF16", [-2.0 ** -126], [2.0 ** -24], 0.0)
    assert bits == 0
    d, bits = run("hopper", "HMMA.16816.F16", [-2.0 ** -14], [2.0 ** -12], 0.0)
    assert bits == 0
    # AMD keeps IEEE's -0 for a negative value rounding to zero
    d, bits = run("cdna3", "v_mfma_f32_32x32x8_bf16", [-2.0 ** -126], [2.0 ** -24], 0.0)
    assert bits == 0x80000000


def test_gdfs_cancelled_group_keeps_its_scale_exponent():
    """Fact 1: only a group of zero products (or zero scales) takes -139; 6*6 - 6*6 keeps 2^200."""
    ins = golden.lookup("blackwell", "UTCOMMA.MXF4.E8")
    a = np.zeros(64)
    b = np.zeros(64)
    a[:2], b[:2] = [6.0, 6.0], [6.0, -6.0]        # group 0: cancels exactly
    a[32], b[32] = 1.0, 1.0                       # group 2: 1, scaled by 1
    sa = from_float("ue8m0", np.array([2.0 ** 100, 1.0]))
    d = golden.dot_add(ins, from_float("e2m1", a), from_float("e2m1", b), from_float("f32", 0.0), sa, sa)
    assert to_float("f32", d) == 0.0              # e_max = 200 truncates the 1 away
    a[:2] = 0.0                                   # all-zero group: e_zero, the 1 survives
    d = golden.dot_add(ins, from_float("e2m1", a), from_float("e2m1", b), from_float("f32", 0.0), sa, sa)
    assert to_float("f32", d) == 1.0


def test_fdrda_input_infinity_wins_over_product_overflow():
    """Paper IV-F: step 1 returns the input infinity before step 2's products overflow."""
    assert run("cdna3", "v_mfma_f32_32x32x8_bf16", [np.inf, -2.0 ** 127], [1.0, 2.0], 0.0)[0] == np.inf
    assert run("cdna3", "v_mfma_f32_32x32x8_bf16", [1.0, -2.0 ** 127], [1.0, 2.0], np.inf)[0] == np.inf
    assert np.isnan(run("cdna3", "v_mfma_f32_32x32x8_bf16", [2.0 ** 127, -2.0 ** 127], [2.0, 2.0], 0.0)[0])


def test_cdna3_rz_variant_is_one_parameter_away():
    """Section VI-C: the same FDRDA with its floors rounding toward zero loses the -0.25."""
    import dataclasses
    ins = golden.lookup("cdna3", "v_mfma_f32_32x32x8_f16")
    a = from_float("f16", np.array([[2048.0, 2048.0] + [0.0] * 6]))
    b = from_float("f16", np.array([[2048.0, -2048.0] + [0.0] * 6]))
    c = from_float("f32", np.array([-0.000001]))
    assert to_float("f32", golden.dot_add(ins, a, b, c))[0] == -0.25
    rz = dataclasses.replace(ins, params=ins.params.with_(floor_rounding="RZ"))
    assert to_float("f32", golden.dot_add(rz, a, b, c))[0] == 0.0
    with pytest.raises(ValueError, match="Params.floor_rounding=.RNE. is not valid; valid: one of RD, RZ"):
        ins.params.with_(floor_rounding="RNE")
    import hw
    with pytest.raises(NotImplementedError, match="golden only"):
        hw.dot_add_unit(rz)
