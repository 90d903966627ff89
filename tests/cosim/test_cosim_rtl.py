"""The RTL units (hw.dot_add_unit) co-simulated under Verilator against golden and the measured GPU data.

make test runs a few representative instructions (one Verilator build each,
cached under build/cosim/); the slow marks cover every GPU vector set and
every FDA/CoFDA instruction (make cosim-all runs every instruction).
"""

import pytest
from gpu_vectors import SETS, load

import cosim
import golden
from cosim import run as cr
from cosim.backend import RTLBackend
from golden.provenance import MEASURED_SETS
from golden.streams import VectorStream

REPRESENTATIVE = [
    ("hopper", "HGMMA.64xNx16.F32"),            # FDA, f32 out (RZ)
    ("ampere", "HMMA.16816.F16"),               # CoFDA, f16 out (RNE)
    ("ada", "QMMA.16832.F32.E4M3.E5M2"),        # CoFDA, E8M13 result
]


def _run(ins, **kw):
    try:
        import hw
        if not hasattr(hw, "dot_add_unit"):
            pytest.skip("hw.dot_add_unit does not exist yet")
    except ImportError:
        pytest.skip("no hw package")
    cfg = cr.Config(progress=0, rerun_with_waves=False, **kw)
    r = cr.run_instruction(ins, cfg, "hw")
    if r.status == "no RTL":
        pytest.skip(r.message)
    return r


# the E8M13 result (ada QMMA) is co-simulated under slow; make test checks it in Amaranth's simulator
# (tests/hw/test_hw_fused.py), which costs no Verilator build
@pytest.mark.parametrize("pair", [pytest.param(p, marks=pytest.mark.slow) if p[0] == "ada" else p
                                  for p in REPRESENTATIVE], ids=lambda p: f"{p[0]}-{p[1]}")
def test_representative_instruction(pair, capsys):
    ins = golden.lookup(*pair)
    r = _run(ins, n=20_000, stall=0.2, seed=11)
    assert r.status == "ok", r.message
    assert r.mismatches == 0 and r.vectors == 20_000
    assert r.latency_measured == r.latency and r.ii_measured == r.initiation_interval
    with capsys.disabled():
        print(f"\n[cosim] {ins.arch} {ins.name}: latency {r.latency}, build {r.build_seconds:.1f} s "
              f"({r.build_source}), {r.rate:,.0f} dot-adds/s with 20% stalls")


def _gpu_run(s):
    ins, a, b, c, want = load(s)
    try:
        import hw  # noqa: F401
    except ImportError:
        pytest.skip("no hw package")
    cfg = cr.Config(progress=0, rerun_with_waves=False, stall=0.1)
    r = cr.run_instruction(ins, cfg, "hw", reference=cosim.FixedReference(want), vectors_from=(a, b, c, None, None))
    if r.status == "no RTL":
        pytest.skip(r.message)
    return r, len(want)


# DMMA (64-bit D) builds a 100k-cell f64 unit (about 25 s): slow; the stand-in covers 64-bit D in make test
@pytest.mark.parametrize("pair", [("hopper", "HGMMA.64xNx16.F32"),
                                  pytest.param(("hopper", "DMMA.8x8x4"), marks=pytest.mark.slow)],
                         ids=lambda p: f"{p[0]}-{p[1]}")
def test_rtl_backend_equals_golden(pair):
    """The RTL as a backend (what the dissection suite calls): golden's bits for every vector, in order."""
    ins = golden.lookup(*pair)
    a, b, c, sa, sb = VectorStream(ins, "mixed", seed=2).take(3000)
    try:
        d = RTLBackend()(ins, a, b, c, sa, sb)
    except cosim.NoRTL as e:
        pytest.skip(str(e))
    want = golden.dot_add(ins, a, b, c, sa, sb)
    assert d.shape == want.shape and golden.same_results(ins, d, want).all()


@pytest.mark.parametrize("s", SETS[:1], ids=lambda s: s.id)
def test_gpu_vectors_through_rtl(s):
    r, n = _gpu_run(s)
    assert r.status == "ok" and r.vectors == n, r.message


# under slow: the lowered unit is the largest Verilator build of make test (about 100 s of CPU here);
# make test runs the same units in Amaranth's simulator (tests/hw/test_hw_fused.py)
@pytest.mark.slow
@pytest.mark.parametrize("s", [s for s in MEASURED_SETS if s.instruction.startswith("MMA.16832.")],
                         ids=lambda s: s.id)
def test_fp8_mma_sync_sets_through_rtl(s):
    """The units of the compiled fp8 mma.sync (hw.lowered.LoweredFDA) against the 5,000 dot-adds measured
    on a B200 (f32 and f16 results) and an H100 (f16) (docs/gpu/unresolved_fp8.md): the RTL equals the
    GPU, not only golden."""
    ins, a, b, c, want = load(s)
    cfg = cr.Config(progress=0, rerun_with_waves=False, stall=0.1)
    r = cr.run_instruction(ins, cfg, "hw", reference=cosim.FixedReference(want), vectors_from=(a, b, c, None, None))
    if r.status == "no RTL":
        pytest.skip(r.message)
    assert r.status == "ok" and r.vectors == 5000 and r.mismatches == 0, r.message


@pytest.mark.slow
@pytest.mark.parametrize("s", SETS[1:], ids=lambda s: s.id)
def test_gpu_vectors_through_rtl_all(s):
    r, n = _gpu_run(s)
    assert r.status == "ok" and r.vectors == n, r.message


@pytest.mark.slow
@pytest.mark.parametrize("ins", [i for i in golden.CATALOG if i.algorithm in ("FDA", "CoFDA")],
                         ids=lambda i: f"{i.arch}-{i.name}")
def test_every_fda_instruction(ins):
    r = _run(ins, n=20_000, stall=0.2, seed=3)
    assert r.status == "ok", r.message


# ---- the pipelining knob (hw.Pipelining): every level computes the bits of level 0 ---------------

# one representative instruction per algorithm (small K where the algorithm allows: each Verilator
# build costs time)
PER_ALGORITHM = [
    ("volta", "HMMA.884.F32.F16"),                 # FDA
    ("blackwell", "UTCOMMA.MXF4.E8"),              # GDFS
    ("cdna3", "v_mfma_f32_32x32x4_xf32"),          # FDRDA
    ("cdna3", "v_mfma_f32_32x32x16_fp8_fp8"),      # GFDRDA
    ("cdna3", "v_mfma_f32_32x32x1_2b_f32"),        # SFMA
    ("cdna2", "v_mfma_f32_32x32x4_2b_f16"),        # GPS
]
SLOW_PER_ALGORITHM = PER_ALGORITHM + [
    ("hopper", "HGMMA.64xNx16.F32"),               # FDA, the FPGA's unit
    ("cdna3", "v_mfma_f32_16x16x4_f32"),           # SFMA, 4 fmas
    ("hopper", "QGMMA.64xNx32.F32.E4M3.E4M3"),     # FDA, fp8
    ("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8"),  # FDA with block scales
    ("ampere", "HMMA.16816.F16"),                  # CoFDA
    ("cdna3", "v_mfma_f32_16x16x16_bf16"),         # CoFDRDA
    ("ampere", "DMMA.884"),                        # SFMA, f64
]


def _run_pipelined(pair, level, n):
    ins = golden.lookup(*pair)
    r = cr.run_instruction(ins, cr.Config(progress=0, rerun_with_waves=False, n=n, stall=0.2, seed=5),
                           f"hw:pipeline={level}")
    assert r.status == "ok", r.message
    assert r.mismatches == 0 and r.vectors == n
    assert r.latency_measured == r.latency and r.ii_measured == r.initiation_interval == 1
    return r


# GDFS, GFDRDA, GPS and FDRDA at the deepest level are checked against golden in Amaranth's
# simulator in make test (tests/hw/test_hw_pipelining.py, a unit of each); their Verilator builds (the
# largest of the six, then the next two: about 22 s on a fresh clone) run under slow.  FDA and the K=1
# SFMA stay: the deepest level through Verilator in make test
SLOW_DEEPEST = {("blackwell", "UTCOMMA.MXF4.E8"), ("cdna3", "v_mfma_f32_32x32x16_fp8_fp8"),
                ("cdna2", "v_mfma_f32_32x32x4_2b_f16"), ("cdna3", "v_mfma_f32_32x32x4_xf32")}


@pytest.mark.parametrize("pair", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW_DEEPEST else p
                                  for p in PER_ALGORITHM], ids=lambda p: f"{p[0]}-{p[1]}")
def test_deepest_pipelining_is_bit_exact(pair):
    from hw import MAX_LEVEL
    _run_pipelined(pair, MAX_LEVEL, 3000)


@pytest.mark.slow
@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("pair", SLOW_PER_ALGORITHM, ids=lambda p: f"{p[0]}-{p[1]}")
def test_every_level_every_algorithm_is_bit_exact(pair, level):
    _run_pipelined(pair, level, 20_000)


def test_cosim_catches_a_pipelined_unit_with_a_wrong_delay_line(monkeypatch):
    """Planted fault: the e_max delay line of a level-3 FDA unit one cycle too long.  Every stage
    still matches its declared latency (it elaborates); co-simulation must see wrong bits."""
    import hw
    import hw.fda
    real = hw.fda.delayed
    monkeypatch.setattr(hw.fda, "delayed", lambda m, name, shape, cycles, value:
                        real(m, name, shape, cycles + (name == "emax_wait"), value))
    ins = golden.lookup("volta", "HMMA.884.F32.F16")
    r = cr.run_instruction(ins, cr.Config(progress=0, rerun_with_waves=False, n=2000, seed=5),
                           lambda i, lanes: hw.dot_add_unit(i, lanes=lanes, pipelining=3))
    assert r.status == "MISMATCH" and r.mismatches > 0


def test_the_hw_unit_spec_names_its_pipelining():
    from cosim.units import unit_provider
    assert unit_provider("hw").spec == unit_provider(None, "0").spec == "hw"
    assert unit_provider("hw:pipeline=2,align=2").spec == "hw:pipeline=2,align=2"
    assert unit_provider(None, "3").spec == "hw:pipeline=3"
    with pytest.raises(ValueError, match="pipeline=SPEC"):
        unit_provider("hw:depth=2")
    with pytest.raises(ValueError, match="level must be"):
        unit_provider("hw:pipeline=9")
    with pytest.raises(ValueError, match="applies to the hw unit"):
        unit_provider("standin", "2")
