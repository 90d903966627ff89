"""The fused RTL (FDA/CoFDA, GDFS, FDRDA/GFDRDA and chains) in Amaranth's simulator, bit for bit against golden.

Fast, dependency-light checks for every FDA variant (output formats, chains,
E8M13, block scales, mixed narrow formats), the GDFS scale variants and the
CDNA3 round-down algorithms, with random valid/ready stalls.
The Verilator co-simulation (cosim/) runs the same units at full scale.
"""

import zlib

import numpy as np
import pytest
from amaranth.sim import Simulator
from amaranth_sim import simulate

import golden
import golden.vectors
import hw
from hw.pipeline import questions_only

REPRESENTATIVE = [
    ("volta", "HMMA.884.F32.F16"),
    ("turing", "HMMA.884.F16.F16"),
    ("ampere", "HMMA.1688.F32.TF32"),          # CoFDA 2x4, tf32
    ("ampere", "HMMA.16816.F16"),              # CoFDA, f16 out
    ("ada", "QMMA.16832.F32.E4M3.E5M2"),       # CoFDA, F=13, E8M13
    ("hopper", "HMMA.16816.F32.BF16"),
    ("hopper", "QGMMA.64xNx32.F16.E5M2.E4M3"),
    ("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8"),
    ("blackwell", "UTCQMMA.F32.E2M3.E2M1"),
    ("rtx_blackwell", "QMMA.16832.F16.E3M2.E2M3.F8F6F4"),
    ("blackwell", "UTCOMMA.4X"),                 # GDFS, ue4m3 block 16
    ("blackwell", "UTCOMMA.MXF4.E8"),            # GDFS, ue8m0 block 32
    ("rtx_blackwell", "OMMA.SF.16864.F32.E2M1.E2M1.E8.NVF4.B16"),
    ("cdna3", "v_mfma_f32_32x32x8_f16"),          # FDRDA
    ("cdna3", "v_mfma_f32_16x16x8_xf32"),         # CoFDRDA, tf32 (products overflow)
    ("cdna3", "v_mfma_f32_16x16x16_bf16"),        # CoFDRDA, bf16
    ("cdna3", "v_mfma_f32_32x32x16_fp8_bf8"),     # GFDRDA
    ("cdna3", "v_mfma_f32_16x16x32_bf8_bf8"),     # CoGFDRDA
    ("blackwell", "MMA.16832.F16.E4M3.E4M3"),     # the compiled fp8 mma.sync (hw.lowered.LoweredFDA), f16 out
    ("hopper", "MMA.16832.F32.E5M2.E4M3"),        # ... f32 out
]


def vectors(ins, n, seed):
    rng = np.random.default_rng(seed)
    a, b, c, sa, sb = golden.vectors.random_operands(ins, n, rng, "all")
    return a, b, c, sa, sb


@pytest.mark.parametrize("arch,name", REPRESENTATIVE)
def test_rtl_matches_golden_under_stalls(arch, name):
    ins = golden.lookup(arch, name)
    unit = hw.dot_add_unit(ins)
    a, b, c, sa, sb = vectors(ins, 150, seed=zlib.crc32(name.encode()) % 1000)
    got, _ = simulate(unit, a, b, c, sa, sb, stall_in=0.2, stall_out=0.2)
    want = golden.dot_add(ins, a, b, c, sa, sb).astype(np.uint64)
    bad = golden.mismatching(ins, got, want)
    if len(bad):
        i = bad[0]
        pytest.fail(f"{len(bad)} of {len(c)} differ; first row {i}: RTL {int(got[i]):#x}, golden {int(want[i]):#x}\n"
                    + str(golden.trace(ins, a[i], b[i], c[i], None if sa is None else sa[i],
                                       None if sb is None else sb[i])))


def test_latency_and_throughput_without_stalls():
    ins = golden.lookup("ampere", "HMMA.16816.F32")
    unit = hw.dot_add_unit(ins)
    assert unit.initiation_interval == 1
    assert sum(c for _, c in unit.stage_latencies) == unit.latency == 2 * unit.datapaths[0].passes[0].latency
    a, b, c, _, _ = vectors(ins, 40, seed=1)
    got, cycles = simulate(unit, a, b, c)
    assert (got == golden.dot_add(ins, a, b, c)).all()
    assert cycles == 40 + unit.latency        # one result per cycle after the pipeline fills


def test_lanes_compute_independent_dot_adds():
    ins = golden.lookup("hopper", "HMMA.1684.F32.TF32")
    unit = hw.dot_add_unit(ins, lanes=3)
    a, b, c, _, _ = vectors(ins, 30, seed=2)
    out = []

    async def bench(ctx):
        ctx.set(unit.o.ready, 1)
        for t in range(10 + unit.latency + 1):
            if t < 10:
                ctx.set(unit.i.payload, [{"a": [int(x) for x in a[3 * t + j]], "b": [int(x) for x in b[3 * t + j]],
                                          "c": int(c[3 * t + j])} for j in range(3)])
            ctx.set(unit.i.valid, t < 10)
            _, _, valid, payload = await ctx.tick().sample(unit.o.valid, unit.o.payload)
            if valid:
                out.extend(int(x) for x in payload)

    sim = Simulator(unit)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert (np.array(out, np.uint64) == golden.dot_add(ins, a, b, c)).all()


def test_custom_parameters_are_one_change_away():
    ins = golden.lookup("hopper", "HMMA.16816.F32")
    custom = ins.params.with_(F=20)
    unit = hw.dot_add_unit(ins, params=custom)
    a, b, c, _, _ = vectors(ins, 80, seed=3)
    got, _ = simulate(unit, a, b, c)
    from golden.algorithms import run
    assert (got == run(custom, a, b, c, *ins.formats)).all()
    assert (got != golden.dot_add(ins, a, b, c)).any()      # F=20 really is a different design


@pytest.mark.xdist_group("yosys")           # with the FPGA build tests: one Yosys WebAssembly compile
def test_report_lists_latency_ii_and_size(capsys):
    from hw.report import main
    assert main(["report", "volta", "HMMA.884.F32.F32"]) == 0
    out = capsys.readouterr().out
    row = [line for line in out.splitlines() if line.startswith("volta         HMMA.884.F32.F32")][0].split()
    latency, ii, cells, ff = int(row[3]), int(row[4]), int(row[5]), int(row[6])
    with questions_only():
        assert latency == hw.dot_add_unit(("volta", "HMMA.884.F32.F32")).latency and ii == 1
    assert cells > 1000 and ff > 100
    assert main(["report", "blackwell", "UTCOMMA", "--no-size"]) == 0
    assert "UTCOMMA.4X" in capsys.readouterr().out


def _round_values(fmt, n, rng):
    """Exact values (sign, mag, exp) around the format's subnormal, normal and overflow ranges, ties included."""
    f = golden.formats.get_format(fmt)
    bits = rng.integers(1, 40, n)
    mag = rng.integers(0, 1 << 62, n, dtype=np.int64) >> (62 - bits)
    mag[::7] = 0
    mag[1::7] = ((mag[1::7] >> 3) << 3) | 4          # exactly half an ulp below some place
    top = rng.integers(f.emin - f.man_bits - 3, f.emax + 3, n)
    exp = top - bits + 1
    return rng.integers(0, 2, n), mag, exp


@pytest.mark.parametrize("mode", ["RZ", "RD", "RU", "RNE"])
@pytest.mark.parametrize("fmt,frac_bits,overflow", [("f32", None, "ieee"), ("f16", None, "inf"),
                                                     ("f32", 13, "inf"), ("bf16", None, "ieee")])
def test_rounder_matches_golden(mode, fmt, frac_bits, overflow):
    """hw.round.Rounder against golden.formats.round_to_format, then the flush and +0 rules on top."""
    from amaranth.sim import Simulator

    from golden.formats import round_to_format
    from hw.round import Rounder
    sign, mag, exp = _round_values(fmt, 300, np.random.default_rng(zlib.crc32(f"{mode}{fmt}{frac_bits}".encode())))
    f = golden.formats.get_format(fmt)
    want = round_to_format(f, sign, mag, exp, mode, frac_bits=frac_bits, overflow=overflow).astype(np.uint64)
    sign_bit = np.uint64(1 << (f.exp_bits + f.man_bits))
    subnormal_or_zero = (want & np.uint64(((1 << f.exp_bits) - 1) << f.man_bits)) == 0
    for flush, positive_zero in ((False, False), (True, False), (False, True)):
        rounder = Rounder(f, 40, mode, frac_bits, overflow, flush=flush, positive_zero=positive_zero,
                          sticky="mask" if positive_zero else "trailing_zeros",
                          lod="halves" if positive_zero else "flags")
        got = []

        async def bench(ctx):
            for s, mg, e in zip(sign, mag, exp):
                ctx.set(rounder.sign, int(s))  # noqa: B023
                ctx.set(rounder.mag, int(mg))  # noqa: B023
                ctx.set(rounder.e0, int(e))  # noqa: B023
                got.append(ctx.get(rounder.word))  # noqa: B023

        sim = Simulator(rounder)
        sim.add_testbench(bench)
        sim.run()
        expected = want.copy()
        if flush:
            expected = np.where(subnormal_or_zero, want & sign_bit, want)
        if positive_zero:
            expected = np.where(want & ~sign_bit == 0, np.uint64(0), want)
        bad = np.nonzero(np.array(got, np.uint64) != expected)[0]
        assert not len(bad), (f"flush={flush} positive_zero={positive_zero}: {len(bad)} of {len(mag)} differ; first "
                              f"sign={sign[bad[0]]} mag={int(mag[bad[0]]):#x} exp={exp[bad[0]]}: "
                              f"{got[bad[0]]:#x}, golden {int(expected[bad[0]]):#x}")


def test_bad_datapaths_are_rejected_before_anything_is_built():
    """Each datapath class names what it builds; a rejected unit or datapath never exists, so
    Amaranth has nothing to report as created but never used."""
    import gc
    import warnings

    from amaranth.hdl import UnusedElaboratable

    from hw.fda import FDAChain
    from hw.gps import GPS
    from hw.sfma import SFMAChain
    hgmma = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    gps = golden.lookup("cdna2", "v_mfma_f32_32x32x8_f16").datapath
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedElaboratable)
        with pytest.raises(ValueError, match="SFMAChain builds SFMA, not FDA"):
            SFMAChain(hgmma.datapath)
        with pytest.raises(ValueError, match="FDAChain builds FDA, not FDRDA"):
            FDAChain(golden.lookup("cdna3", "v_mfma_f32_32x32x8_f16").datapath)
        with pytest.raises(ValueError, match="GPS has no block scales"):
            GPS(gps.with_(scale_format=golden.formats.get_format("ue8m0"), block_size=4))
        with pytest.raises(TypeError, match="takes a golden.Datapath"):
            GPS(golden.lookup("cdna2", "v_mfma_f32_32x32x8_f16"))
        with pytest.raises(ValueError, match=r"lanes must be a whole number 1\.\.256"):
            hw.dot_add_unit(hgmma, lanes=0)
        with pytest.raises(ValueError, match="not a multiple of the pass size"):
            hw.dot_add_unit(hgmma, params=hgmma.params.with_(pass_size=5))
        gc.collect()
