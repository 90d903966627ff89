"""probe: black-box dissection recovers the catalog, catches mis-parameterised designs,
gives the same report on the RTL as on golden, and fails clearly on bad backends."""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import golden
from probe import DeviceError, GoldenBackend, ParamsBackend, Unavailable, backend_from_name, probe
from probe.probes import classify_rounding, rounding_name
from probe.probes.specials import Case
from probe.verify import FieldStatus
from tests.golden.test_golden_words import bare_words, offenders


def _one_per_datapath(pool):
    seen = {}
    for ins in pool:
        seen.setdefault(ins.datapath, ins)
    return list(seen.values())


# the probes infer one native datapath; a compiled path (native=False: conversions, two HMMA and an
# add) is a composition of them, checked against its lowering in tests/golden/test_fp8_mma_sync.py
NATIVE = [i for i in golden.CATALOG if i.native]
GROUPS = _one_per_datapath(NATIVE)
# make test probes one datapath per architecture, algorithm, element format and output format (60 of
# the 166, about 8 s): the f8f6f4 kinds' 25 pairs of element formats each are most of the rest, and
# every instruction is probed in full by test_every_instruction_recovered (-m slow)
REPRESENTATIVES = list({(i.arch, i.algorithm, i.a_format, i.d_format): i for i in reversed(GROUPS)}.values())


def test_every_kind_of_datapath_recovered():
    """One instruction per architecture, algorithm, element format and output format: 60 of the 166
    distinct native datapaths of 326 native entries."""
    assert (len(REPRESENTATIVES), len(GROUPS), len(NATIVE), len(golden.CATALOG)) == (60, 166, 326, 342)
    bad = []
    for ins in REPRESENTATIVES:
        r = probe(ins, GoldenBackend(), rows=256)     # the full 4,096-row verification: -m slow, below
        if not r.matches:
            bad.append(f"{ins.arch} {ins.name}: {r.summary()}")
    assert not bad, "\n".join(bad)


@pytest.mark.slow
@pytest.mark.parametrize("ins", NATIVE, ids=lambda i: f"{i.arch}-{i.name}")
def test_every_instruction_recovered(ins):
    r = probe(ins, GoldenBackend())
    assert r.matches, r.summary()


def test_measured_fields_cover_the_key_parameters():
    """What is measured, not just "consistent": F, pass size, roundings, e_zero where reachable."""
    r = probe(golden.lookup("ampere", "HMMA.16816.F32.BF16"), GoldenBackend())
    f = r.fields
    assert (f["F"].value, f["pass_size"].value, f["out_rounding"].value) == (24, 8, "RZ")
    assert f["e_zero"].status == "measured" and f["e_zero"].value == -132
    assert f["overflow"].value == "inf" and f["zero_sign"].value == "positive"
    assert r.family == "CoFDA"
    r = probe(golden.lookup("ada", "QMMA.16832.F32.E4M3.E4M3"), GoldenBackend())
    assert r.fields["out_frac_bits"].value == 13 and r.fields["F"].value == 13 and r.fields["pass_size"].value == 16
    r = probe(golden.lookup("hopper", "HGMMA.64xNx16.F16"), GoldenBackend())
    assert r.fields["e_zero"].value == -21 and r.fields["out_rounding"].value == "RNE"
    r = probe(golden.lookup("cdna3", "v_mfma_f32_32x32x16_fp8_fp8"), GoldenBackend())
    assert r.fields["c_drop"].value == 25 and r.family == "GFDRDA"
    r = probe(golden.lookup("blackwell", "UTCOMMA.MXF4.E8"), GoldenBackend())
    assert r.family == "GDFS" and r.fields["F"].value == 35 and r.fields["e_zero"].value == -139


def test_summation_trees_print():
    K = 4
    r = probe(golden.lookup("cdna3", "v_mfma_f32_16x16x4_f32"), GoldenBackend())
    assert r.facts["tree"]["text"] == "((((c + #0) + #1) + #2) + #3)"
    r = probe(golden.lookup("cdna2", "v_mfma_f32_32x32x8_f16"), GoldenBackend())
    assert r.facts["tree"]["text"] == "((c + ((#0 + #1) + (#2 + #3))) + ((#4 + #5) + (#6 + #7)))"
    assert r.fields["group"].value == 4 and set(r.fields) == set(golden.algorithms.ALGORITHMS["GPS"].fields_read)
    assert {r.facts["special"][x] for x in (Case.SUBNORMAL_A, Case.SUBNORMAL_B, Case.SUBNORMAL_C)} == {"flushed"}
    r = probe(golden.lookup("ampere", "HMMA.1688.F32.TF32"), GoldenBackend())
    assert r.facts["tree"]["text"] == "fused5(fused5(c, #0, #1, #2, #3), #4, #5, #6, #7)"
    assert K == 4


@pytest.mark.parametrize("arch,name,change,expect", [
    ("hopper", "HGMMA.64xNx16.F32", {"F": 24}, "F: catalog 25, probed 24"),
    ("hopper", "HGMMA.64xNx16.F32", {"out_rounding": "RNE"}, "out_rounding: catalog RZ, probed RNE"),
    ("ampere", "HMMA.16816.F32", {"pass_size": 16}, "pass_size: catalog 8, probed 16"),
    ("ampere", "HMMA.16816.F32.BF16", {"e_zero": -130}, "e_zero: catalog -132, probed -130"),
    ("ada", "QMMA.16832.F32.E4M3.E5M2", {"out_frac_bits": None}, "out_frac_bits: catalog 13, probed 15"),
    ("cdna2", "v_mfma_f32_32x32x8_f16", {"group": 2}, "group: catalog 4, probed 2"),
    ("cdna3", "v_mfma_f32_32x32x16_fp8_fp8", {"c_drop": None}, "c_drop: catalog 25, probed None"),
    ("cdna3", "v_mfma_f32_32x32x8_bf16", {"F": 23}, "F: catalog 24, probed 23"),
    ("blackwell", "UTCHMMA.F32.BF16", {"overflow": "ieee"}, "overflow: catalog inf, probed ieee"),
])
def test_misparameterised_backend_is_caught(arch, name, change, expect):
    ins = golden.lookup(arch, name)
    r = probe(ins, ParamsBackend(**change))
    assert not r.matches
    assert expect in r.differences, r.differences


def test_wrong_algorithm_is_named():
    ins = golden.lookup("cdna3", "v_mfma_f32_32x32x8_f16")
    fda = dataclasses.replace(ins.params, base="FDA", e_zero=-133, product_overflow=False)   # FDA reads no overflow
    r = probe(ins, ParamsBackend(params=fda))
    assert "algorithm: catalog FDRDA, probed FDA" in r.differences


def test_report_json_and_text():
    r = probe(golden.lookup("hopper", "HGMMA.64xNx8.F32.TF32"), GoldenBackend())
    j = json.loads(json.dumps(r.to_json()))
    assert j["comparison"] == "matches" and j["inferred"]["algorithm"] == "FDA"
    assert j["inferred"]["params"]["F"] == {"value": 25, "status": "measured",
                                             "note": "bits kept after alignment, product #0"}
    assert all(type(f.status) is FieldStatus for f in r.fields.values())
    assert r.fields["F"].status is FieldStatus.MEASURED
    assert j["facts"]["special"]["tf32 1.0 with a low bit set"] == "ignored"
    assert j["facts"]["special"]["tf32 NaN with payload only in the low bits"] == "becomes infinity"
    text = r.text()
    for part in ("[III-B]", "[III-C]", "[III-D]", "[III-E]", "[III-F]", "comparison: matches"):
        assert part in text


def test_rounding_tables():
    # Table I and II of the paper: offsets (units of u) -> rounded offsets
    rne = {0.75: 1, 0.25: 0, -0.75: -1, -0.25: 0, 0.5: 0, 1.5: 2, -0.5: 0, -1.5: -2}
    assert rounding_name(classify_rounding(rne)) == "RNE"
    rd = {0.75: 0, 0.25: 0, -0.75: -1, -0.25: -1}
    assert rounding_name(classify_rounding(rd)) == "RD"
    rna = {0.75: 1, 0.25: 0, -0.75: -1, -0.25: 0, 0.5: 1, 1.5: 2, -0.5: -1, -1.5: -2}
    assert rounding_name(classify_rounding(rna)) == "RNA"


def test_bad_backends_fail_clearly():
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    with pytest.raises(DeviceError, match="shape"):
        probe(ins, lambda ins, a, b, c, sa=None, sb=None: golden.dot_add(ins, a, b, c)[:-1])
    with pytest.raises(DeviceError, match="dtype float"):
        probe(ins, lambda ins, a, b, c, sa=None, sb=None: golden.dot_add(ins, a, b, c).astype(np.float64))
    with pytest.raises(DeviceError, match="wider"):
        probe(ins, lambda ins, a, b, c, sa=None, sb=None: golden.dot_add(ins, a, b, c).astype(np.uint64) << 40)


def test_user_function_backend():
    """Any function with dot_add's signature is a backend (how a team plugs in its design)."""
    def mine(ins, a, b, c, scale_a=None, scale_b=None):
        return golden.dot_add(ins, a, b, c, scale_a, scale_b)
    assert probe(golden.lookup("volta", "HMMA.884.F32.F32"), mine).matches


def test_cli(tmp_path):
    out = tmp_path / "r.json"
    p = subprocess.run([sys.executable, "-m", "probe", "hopper", "HGMMA.64x128x16.F32", "--json", str(out),
                        "--quiet"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.strip() == "matches"
    assert json.loads(out.read_text())["instruction"] == "HGMMA.64xNx16.F32"
    p = subprocess.run([sys.executable, "-m", "probe", "hoper", "HGMMA"], capture_output=True, text=True)
    assert p.returncode == 2 and "unknown architecture 'hoper'" in p.stderr
    p = subprocess.run([sys.executable, "-m", "probe", "hopper", "HMMA.884.F32.F32"], capture_output=True,
                       text=True)
    assert p.returncode == 2 and "not available on hopper" in p.stderr
    p = subprocess.run([sys.executable, "-m", "probe", "hopper", "HGMMA.64xNx16.F32", "--device",
                        "golden:F=24", "--quiet"], capture_output=True, text=True)
    assert p.returncode == 1 and "F: catalog 25, probed 24" in p.stdout


def test_cli_selects_like_the_other_commands(tmp_path):
    """ARCH and INSTR take comma lists and families (golden.select): several instructions, one line each."""
    out = tmp_path / "r.json"
    p = subprocess.run([sys.executable, "-m", "probe", "ampere,ada", "HMMA.16816.F32,HMMA.16816.F32.BF16",
                        "--group", "--json", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert [ln.split()[:3] for ln in p.stdout.splitlines()] == [
        ["ampere", "HMMA.16816.F32", "CoFDA"], ["ada", "HMMA.16816.F32", "CoFDA"],              # by datapath
        ["ampere", "HMMA.16816.F32.BF16", "CoFDA"], ["ada", "HMMA.16816.F32.BF16", "CoFDA"]]
    probed = len({i.datapath for i in golden.select("ampere,ada", "HMMA.16816.F32,HMMA.16816.F32.BF16")})
    assert f"4 instruction(s), {probed} probed, 4 match the catalog" in p.stderr
    assert len(json.loads(out.read_text())) == probed
    p = subprocess.run([sys.executable, "-m", "probe", "--all", "hopper", "HGMMA"], capture_output=True, text=True)
    assert p.returncode == 2 and "give INSTR without --all" in p.stderr
    p = subprocess.run([sys.executable, "-m", "probe"], capture_output=True, text=True)
    assert p.returncode == 2 and "give ARCH [INSTR], or --all" in p.stderr
    p = subprocess.run([sys.executable, "-m", "probe", "hopper", "HGMMA.64xNx16.F32,HGMMX"], capture_output=True,
                       text=True)
    assert p.returncode == 2 and "HGMMX" in p.stderr


def test_cli_group_applies_one_probe_per_datapath():
    from probe.__main__ import _by_datapath
    pool = golden.select("ampere,ada", "HMMA")
    groups = _by_datapath(pool)
    assert sum(map(len, groups)) == len(pool) and len(groups) < len(pool)
    assert all(len({ins.datapath for ins in g}) == 1 for g in groups)


def test_torch_backend_without_torch_or_a_gpu_is_one_error_line():
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a GPU is present: the torch backend runs for real (see docs/probe.md)")
    except ImportError:
        pass
    from probe.torch_backend import TorchBackend
    with pytest.raises(Unavailable):
        TorchBackend()
    p = subprocess.run([sys.executable, "-m", "probe", "hopper", "HGMMA.64xNx16.F32", "--device", "torch"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.startswith("error: the backend cannot run here: PyTorch"), p.stderr


# ---- the RTL, co-simulated: the same report as golden ------------------------------------------------

def _comparable(r):
    j = r.to_json()
    for k in ("backend", "seconds", "backend_calls"):
        j.pop(k)
    if not r.ins.exact_nan:                      # NaN payloads are unspecified there (golden.same_results)
        j["facts"]["special"].pop("_nan_patterns")
    return j


def _rtl_same(arch, name):
    ins = golden.lookup(arch, name)
    g = probe(ins, GoldenBackend())
    r = probe(ins, backend_from_name("rtl"))
    assert r.backend == "rtl"
    assert _comparable(r) == _comparable(g)
    assert r.matches


def _no_rtl(ins, lanes):
    import cosim
    raise cosim.NoRTL("not written yet")


def test_rtl_without_a_unit_is_unavailable():
    """cosim.backend.RTLBackend raises cosim.NoRTL for a unit it has no RTL for: a skip, with the reason."""
    rtl = backend_from_name("rtl", unit=_no_rtl)
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    with pytest.raises(Unavailable, match="no RTL for hopper HGMMA.64xNx16.F32: not written yet"):
        probe(ins, rtl)


def test_rtl_toolchain_and_import_errors_are_unavailable(monkeypatch):
    import cosim
    import cosim.backend

    class NoVerilator:
        def __init__(self, **kw):
            raise cosim.ToolchainError("no verilator on PATH")
    monkeypatch.setattr(cosim.backend, "RTLBackend", NoVerilator)
    with pytest.raises(Unavailable, match="no simulator toolchain: no verilator on PATH"):
        backend_from_name("rtl")
    monkeypatch.setitem(sys.modules, "cosim.backend", None)          # import cosim.backend fails
    with pytest.raises(Unavailable, match="co-simulation is not importable"):
        backend_from_name("rtl")


# the probe on a Verilator-simulated device runs in make test through the DUT path
# (tests/cosim/test_dut_examples.py); the catalog's own units under slow
@pytest.mark.slow
def test_rtl_report_equals_golden():
    _rtl_same("hopper", "HGMMA.64xNx16.F32")


@pytest.mark.slow
@pytest.mark.parametrize("arch,name", [
    ("ampere", "HMMA.16816.F16"),                    # CoFDA, f16 out
    ("ada", "QMMA.16832.F32.E4M3.E5M2"),             # CoFDA, E8M13
    ("blackwell", "UTCOMMA.4X"),                     # GDFS
    ("blackwell", "UTCQMMA.SF.F32.E2M1.E3M2.E8"),    # FDA with scales
    ("cdna3", "v_mfma_f32_32x32x8_f16"),             # FDRDA
    ("cdna3", "v_mfma_f32_16x16x16_bf16"),           # CoFDRDA
    ("cdna3", "v_mfma_f32_32x32x16_fp8_bf8"),        # GFDRDA
    ("cdna3", "v_mfma_f32_16x16x32_fp8_fp8"),        # CoGFDRDA
    ("cdna2", "v_mfma_f32_32x32x8_f16"),             # GPS
    ("cdna3", "v_mfma_f32_16x16x4_f32"),             # SFMA f32
    ("hopper", "DMMA.8x8x4"),                        # SFMA f64
])
def test_rtl_report_equals_golden_per_algorithm(arch, name):
    _rtl_same(arch, name)


# ---- compare: a backend against golden on random dot-adds ------------------------------------------

class _PairsBackend:
    """An all-pairs backend (the GPU backend's shape) computed by a golden-like function."""

    def __init__(self, fn):
        self.fn = fn

    def all_pairs(self, ins, a, b):
        n = len(a)
        A, B = np.repeat(a, n, axis=0), np.tile(b, (n, 1))
        return np.asarray(self.fn(ins, A, B, np.zeros(len(A), np.uint64)), np.uint64).reshape(n, n)


def test_compare_catches_a_wrong_backend():
    from probe.__main__ import main as probe_main
    from probe.backends import ParamsBackend
    from probe.compare import compare_backend

    def compare_main(args):
        return probe_main(["compare"] + args)
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    ok = compare_backend(ins, golden.dot_add, n=4000)
    assert (ok.vectors, ok.mismatches) == (4000, 0) and sum(ok.classes.values()) == 4000
    bad = compare_backend(ins, ParamsBackend(F=24), n=4000, vectors="normal")
    assert bad.mismatches > 100 and len(bad.first) == 5
    pairs = compare_backend(ins, _PairsBackend(golden.dot_add), n=60)
    assert (pairs.vectors, pairs.mismatches) == (3600, 0)
    wrong = compare_backend(ins, _PairsBackend(ParamsBackend(out_rounding="RNE")), n=60, vectors="normal")
    assert wrong.mismatches > 100
    assert compare_main(["hopper", "HGMMA.64xNx16.F32", "-n", "500"]) == 0
    assert compare_main(["hopper", "HGMMA.64xNx16.F32", "-n", "500", "--device", "golden:F=24",
                         "--vectors", "normal"]) == 1
    assert compare_main(["hopper", "HGMMX"]) == 2
    assert compare_main(["hopper", "HGMMA.64xNx16.F32", "-n", "0"]) == 2


# ---- the GPU backend's plumbing, on a fake torch whose "GPU" is golden ------------------------------

class _FakeTensor:
    def __init__(self, bits, fmt, torch):
        self.bits, self.fmt, self.torch = np.asarray(bits, np.uint64), fmt, torch

    def to(self, device):
        return self

    def view(self, dtype):
        return _FakeTensor(self.bits, dtype, self.torch)

    def t(self):
        return _FakeTensor(self.bits.T, self.fmt, self.torch)

    contiguous = cpu = lambda self: self

    def __getitem__(self, idx):
        return _FakeTensor(self.bits[idx], self.fmt, self.torch)

    def numpy(self):
        return self.bits.astype(np.uint32).view(np.int32)


class _FakeTorch:
    """Enough of torch for TorchBackend: mm/_scaled_mm run golden as a 2-instruction K loop."""

    float16, bfloat16, float32, int16, int32 = "f16", "bf16", "f32", "i16", "i32"
    float8_e4m3fn, float8_e5m2 = "e4m3", "e5m2"
    INS = {"f16": "HGMMA.64xNx16.F32", "bf16": "HGMMA.64xNx16.F32.BF16", "tf32": "HGMMA.64xNx8.F32.TF32",
           ("e4m3", "e4m3"): "QGMMA.64xNx32.F32.E4M3.E4M3", ("e4m3", "e5m2"): "QGMMA.64xNx32.F32.E4M3.E5M2"}

    def __init__(self):
        import types
        self.version = types.SimpleNamespace(hip=None)
        props = types.SimpleNamespace(name="Fake H100")
        self.cuda = types.SimpleNamespace(is_available=lambda: True, get_device_properties=lambda d: props,
                                          get_device_capability=lambda d: (9, 0))
        self.backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(
            allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
            allow_bf16_reduced_precision_reduction=True)))
        self.calls = []

    def device(self, name):
        return name

    def from_numpy(self, arr):
        return _FakeTensor(np.asarray(arr).view({2: np.uint16, 4: np.uint32, 1: np.uint8}[arr.itemsize]), "raw", self)

    def tensor(self, value, device=None):
        return value

    def diagonal(self, D):
        return _FakeTensor(np.diagonal(D.bits), D.fmt, self)

    def _run(self, A, Bt, key):
        ins = golden.lookup("hopper", self.INS[key])
        B = Bt.bits.T                                       # back to [m, 2K]
        K = A.bits.shape[1] // 2
        n, m = len(A.bits), len(B)
        a, b = np.repeat(A.bits, m, axis=0), np.tile(B, (n, 1))
        c0 = golden.dot_add(ins, a[:, :K], b[:, :K], np.zeros(n * m, np.uint64))
        d = golden.dot_add(ins, a[:, K:], b[:, K:], c0).reshape(n, m)
        self.calls.append(key)
        return _FakeTensor(d, "f32", self)

    def mm(self, A, Bt, out_dtype=None):
        tf32 = self.backends.cuda.matmul.allow_tf32
        assert not self.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
        return self._run(A, Bt, "tf32" if A.fmt == "f32" and tf32 else A.fmt)

    def _scaled_mm(self, A, Bt, scale_a, scale_b, out_dtype, use_fast_accum):
        assert use_fast_accum and scale_a == scale_b == 1.0
        return self._run(A, Bt, (A.fmt, Bt.fmt))


def test_torch_backend_plumbing_on_a_fake_gpu(monkeypatch):
    """Packing, the c split, transposes, diagonals and library settings of the GPU backend, with a
    fake torch whose products are golden's: every route must give golden's answer back."""
    from probe import torch_backend
    from probe.compare import compare_backend
    fake = _FakeTorch()
    monkeypatch.setattr(torch_backend, "_torch", lambda: fake)
    gpu = torch_backend.TorchBackend()
    assert gpu.arch == "hopper" and "Fake H100" in gpu.name
    for name in ("HGMMA.64xNx16.F32", "HGMMA.64xNx16.F32.BF16", "HGMMA.64xNx8.F32.TF32",
                 "QGMMA.64xNx32.F32.E4M3.E5M2"):
        ins = golden.lookup("hopper", name)
        r = compare_backend(ins, gpu, n=40, vectors="normal")          # all_pairs: 1,600 dot-adds
        assert (r.vectors, r.mismatches) == (1600, 0), r.text()
        a, b, c, _, _ = golden.vectors.random_operands(ins, 300, np.random.default_rng(2), "normal")
        d = gpu(ins, a, b, c)                                             # per-row c, diagonals
        ok = ~gpu.unsupported(ins, a, b, c)
        assert ok.sum() >= 10 and np.array_equal(d[ok], golden.dot_add(ins, a, b, c)[ok])    # c split exactly
    assert fake.backends.cuda.matmul.allow_fp16_reduced_precision_reduction      # settings restored
    assert {"f16", "bf16", "tf32", ("e4m3", "e5m2")} <= set(fake.calls)
    with pytest.raises(Unavailable, match="no PyTorch route|only unscaled"):
        gpu(golden.lookup("hopper", "HGMMA.64xNx16.F16"), a, b, c)


# ---- plugin backends (entry points of packages above probe: fpga:URL) ---------------------------------

class _FakeEntryPoint:
    def __init__(self, factory):
        self.factory, self.loaded = factory, 0

    def load(self):
        self.loaded += 1
        return self.factory


def test_plugin_backends_are_found_by_name_and_get_their_argument(monkeypatch):
    import probe.backends as pb
    ep = _FakeEntryPoint(lambda url, **kw: ("board", url, kw))
    monkeypatch.setattr(pb, "plugins", lambda: {"fpga": ep})
    assert backend_from_name("fpga:socket://127.0.0.1:1234") == ("board", "socket://127.0.0.1:1234", {})
    assert ep.loaded == 1
    with pytest.raises(ValueError, match=r"needs an argument: fpga:ARGUMENT"):
        backend_from_name("fpga")
    with pytest.raises(ValueError, match=r"unknown backend 'fgpa:x'.*fpga:ARGUMENT"):
        backend_from_name("fgpa:x")


def test_no_plugins_says_how_to_get_them(monkeypatch):
    import probe.backends as pb
    monkeypatch.setattr(pb, "plugins", lambda: {})
    with pytest.raises(ValueError, match=r"no plugin backends are registered.*pip install -e \."):
        backend_from_name("fpga:/dev/ttyUSB0")


def test_the_project_registers_the_fpga_backend():
    import probe.backends as pb
    eps = pb.plugins()
    if "fpga" not in eps:
        pytest.skip("the project is not installed (make venv installs it editable, registering its entry points)")
    assert eps["fpga"].value == "fpga.host.probe_backend:from_url"


def test_backend_is_the_old_spelling_of_device(capsys):
    """``--device`` names the device; ``--backend`` still does, with one note on stderr."""
    from probe.__main__ import main
    assert main(["hopper", "HGMMA.64xNx16.F32", "--backend", "golden:F=24", "--quiet"]) == 1
    old = capsys.readouterr()
    assert old.err.count("note: --backend is now --device") == 1, old.err
    assert main(["hopper", "HGMMA.64xNx16.F32", "--device", "golden:F=24", "--quiet"]) == 1
    new = capsys.readouterr()
    assert new.out == old.out and "note:" not in new.err


FIELD_WORDS = (set(FieldStatus), ("status",), ("Field",))


def test_field_status_words_are_members():
    """A field's status is a :class:`probe.verify.FieldStatus` member wherever it is given or compared
    (a probe result's ``"bound"`` key, or a disputed rule read as ``"unobservable"``, is another word)."""
    assert offenders(*FIELD_WORDS, home=Path("probe/verify.py")) == [], "use probe.verify.FieldStatus members"
    planted = ('fields["F"] = Field(p["bits"], "measured" if p else "unobservable", "note")\n'
               'if f.status == "bound":\n'
               '    upper = ez.get("bound")\n'
               '_MARK = {"measured": "", "unobservable": "?"}\n'
               'out["rules"][rule] = "unobservable"\n')
    assert bare_words(planted, *FIELD_WORDS) == [1, 2, 4]
