"""Bad input to golden is refused in one line, up front; nothing is computed wrong or lost.

Params ranges against the instruction (one check, shared by golden and the RTL generator), fields an
algorithm does not read, the command line's numbers, numba's environment, the optional extras
(matplotlib for --plot, torch for golden.torch) and Ctrl-C.
"""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import golden
from golden.algorithms import run
from golden.cli import main
from golden.params import ParamsSpecError, parse_params

REPO = Path(__file__).resolve().parents[2]


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


# ---- Params fields against the instruction's formats, in one place --------------------------------

def test_out_frac_bits_beyond_the_result_is_refused_everywhere():
    """An f32 result has 23 fraction bits: 24..64 gave powers of two (numpy) or -inf (numba)."""
    ins = golden.lookup("ampere", "HMMA.1688.F32")
    for bits in (24, 30, 63, 64):
        with pytest.raises(ParamsSpecError) as e:
            ins.with_params(out_frac_bits=bits)
        text = str(e.value)
        assert f"Params.out_frac_bits={bits}" in text and "ampere HMMA.1688.F32" in text and "1..23" in text
        assert "\n" not in text
    a = np.zeros((1, ins.k), np.uint64)
    with pytest.raises(ParamsSpecError, match="out_frac_bits=24"):     # the algorithms' own entry
        run(ins.params.with_(out_frac_bits=24), a, a, np.zeros(1, np.uint64), *ins.formats)
    with pytest.raises(ValueError, match="out_frac_bits=30"):
        golden.gemm(np.zeros((1, 8), np.uint16), np.zeros((8, 1), np.uint16), instr=ins,
                    params={"out_frac_bits": 30})
    with pytest.raises(ValueError, match="out_frac_bits=24"):          # a golden:FIELD=VALUE backend spec
        ins.with_params(**parse_params("out_frac_bits=24"))
    with pytest.raises(ValueError, match="out_frac_bits=24"):
        golden.lookup("custom", "k=2,a=f16,c=f32,base=FDA,F=24,e_zero=-133,out_frac_bits=24")
    assert ins.with_params(out_frac_bits=23).params.out_frac_bits == 23


def test_golden_and_the_rtl_refuse_the_same_values_in_the_same_words():
    import hw
    ins = golden.lookup("ampere", "HMMA.1688.F32")
    for change in ({"out_frac_bits": 24}, {"F": 60}, {"pass_size": 3}, {"nan_bits": 0x7E00}):
        with pytest.raises(ParamsSpecError) as in_golden:
            ins.with_params(**change)
        with pytest.raises(ParamsSpecError) as in_hw:
            hw.DotAddUnit.check(ins, params=ins.params.with_(**change))
        assert str(in_hw.value) == str(in_golden.value)


HGMMA = ("hopper", "HGMMA.64xNx16.F32")
CDNA3_BF16 = ("cdna3", "v_mfma_f32_16x16x16_bf16")
CDNA3_FP8 = ("cdna3", "v_mfma_f32_16x16x32_fp8_fp8")
MXF4 = ("blackwell", "UTCOMMA.MXF4.E8")
FP8_LOWERED = ("hopper", "MMA.16832.F32.E4M3.E4M3")


@pytest.mark.parametrize("unit, change, valid", [
    (HGMMA, {"F": 60}, "0..46 or 'exact'"),
    (HGMMA, {"pass_size": 3}, "a divisor of K=16"),
    (HGMMA, {"e_zero": -5000}, "-998..1023"),
    (HGMMA, {"e_zero": 10 ** 6}, "-998..1023"),
    (HGMMA, {"nan_bits": 0x7E00}, "a 32-bit NaN pattern of f32"),
    (("volta", "HMMA.884.F16.F16"), {"nan_bits": 0x7FC00000}, "a 16-bit NaN pattern of f16"),
    (("volta", "HMMA.884.F16.F16"), {"out_frac_bits": 11}, "1..10"),
    (CDNA3_BF16, {"dot_floor_bits": 60}, "24..47"),
    (CDNA3_BF16, {"c_floor_bits": 40}, "0..32"),
    (CDNA3_BF16, {"final_floor_bits": 60}, "0..51"),
    (CDNA3_BF16, {"F": 52}, "0..47"),
    (CDNA3_FP8, {"merge_floor_bits": 60}, "0..46"),
    (MXF4, {"group": 3}, "a divisor of the pass K=64 and of the block size 32"),
    (MXF4, {"pass_size": 16}, "a multiple of the block size 32"),
    (FP8_LOWERED, {"operand_format": "e2m1"}, "holds every e4m3 value exactly"),
    (("ampere", "DMMA.884"), {"fma_rounding": "RZ"}, "'RNE'"),
])
def test_every_field_is_checked_against_the_instruction(unit, change, valid):
    ins = golden.lookup(*unit)
    (field, value), = change.items()
    with pytest.raises(ParamsSpecError) as e:
        ins.with_params(**change)
    text = str(e.value)
    shown = f"{value:#x}" if field == "nan_bits" else repr(value)          # a NaN pattern in hex
    assert f"Params.{field}={shown}" in text and f"{ins.arch} {ins.name}" in text, text
    assert f"valid: {valid}" in text or valid in text.split("valid:")[1], text
    assert "\n" not in text


@pytest.mark.parametrize("unit, params, words", [
    (("hopper", "HMMA.16816.F32"), dict(base="SFMA"), "SFMA runs IEEE fused multiply-adds in one format"),
    (("hopper", "HGMMA.64xNx8.F32.TF32"), dict(base="GPS", group=4), "GPS takes IEEE-style operands"),
])
def test_an_algorithm_on_formats_it_cannot_compute_is_refused(unit, params, words):
    """SFMA on f16 operands was a KeyError (or wrong bits); GPS on tf32 built a 2**32-entry table."""
    ins = golden.lookup(*unit)
    with pytest.raises(ParamsSpecError, match=words):
        ins.with_params(golden.Params(**params))


def test_c_last_needs_c_in_the_result_format():
    with pytest.raises(ValueError, match="Params.c_last=True is not valid"):
        golden.lookup("custom", "k=2,a=f16,c=f16,d=f32,base=FDA,F=24,e_zero=-133,c_last=true")


def test_the_catalog_passes_its_own_check():
    from golden.params import check_params_for
    for ins in golden.CATALOG:
        check_params_for(ins.params, ins)
        check_params_for(ins.params, ins.datapath)


# ---- a field the algorithm never reads -------------------------------------------------------------

@pytest.mark.parametrize("base, change, readers", [
    ("FDA", {"fma_rounding": "RZ"}, "only SFMA reads it"),
    ("FDA", {"specials": "later_model"}, "only FDRDA, GFDRDA read it"),
    ("FDA", {"flush_subnormals": True}, "no algorithm reads it; it describes GPS"),
    ("SFMA", {"F": 24}, "only FDA, GDFS, FDRDA, GFDRDA read it"),
    ("GPS", {"pass_size": 4}, "only FDA, GDFS, FDRDA, GFDRDA read it"),
])
def test_a_field_the_algorithm_does_not_read_is_refused(base, change, readers):
    """fma_rounding=RZ on an FDA target was dropped without a word.  A Params alone may carry it (a
    spec checked before its instruction is known); it is refused where it meets an instruction."""
    needs = {"FDA": dict(F=24, e_zero=-133), "GPS": dict(group=4), "SFMA": {}}[base]
    ins = golden.lookup(*{"FDA": HGMMA, "GPS": ("cdna2", "v_mfma_f32_32x32x8_f16"),
                          "SFMA": ("ampere", "DMMA.884")}[base])
    design = golden.Params(base=base, **needs, **change)
    with pytest.raises(ParamsSpecError) as e:
        ins.with_params(design)
    (field, value), = change.items()
    text = str(e.value)
    assert text.startswith(f"Params.{field}={value!r} is not valid for {ins.arch} {ins.name}: {base} does not "
                           f"read it ({readers}), so it would change nothing; valid: the default "), text
    assert "\n" not in text


def test_an_fda_target_refuses_fma_rounding():
    ins = golden.lookup("ampere", "HMMA.16816.F32")
    with pytest.raises(ValueError, match="fma_rounding='RZ' is not valid for ampere HMMA.16816.F32: FDA does not read"):
        ins.with_params(**parse_params("fma_rounding=RZ"))


def test_what_an_algorithm_does_anyway_may_be_stated():
    """The catalog says GPS flushes and AMD's SFMA signs zeros as IEEE: taken, as the defaults are."""
    gps, dmma, hgmma = (golden.lookup(*u) for u in (("cdna2", "v_mfma_f32_32x32x8_f16"), ("ampere", "DMMA.884"),
                                                       HGMMA))
    assert gps.with_params(golden.Params(base="GPS", group=4, flush_subnormals=True, zero_sign="ieee"))
    assert dmma.with_params(golden.Params(base="SFMA", zero_sign="ieee754"))
    assert hgmma.with_params(fma_rounding="RNE").params == hgmma.params


# ---- golden.gemm_float ----------------------------------------------------------------------------

@pytest.mark.parametrize("A, B, words", [
    ([["a"]], [[1.0]], "gemm_float: A must be an array [M, K] of numbers"),
    ([[1.0, 2.0], [1.0]], [[1.0]], "gemm_float: A must be an array [M, K] of numbers (floats or integers); "
                                    "its rows are not all the same length"),
    ([[1.0]], None, "gemm_float: B is required: an array [K, N] of numbers"),
])
def test_gemm_float_names_the_argument_and_what_is_valid(A, B, words):
    with pytest.raises(ValueError) as e:
        golden.gemm_float(A, B, arch="hopper", instr="HGMMA.64xNx16.F32")
    assert str(e.value).startswith(words) and "\n" not in str(e.value)


# ---- the command line's numbers --------------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["run", "hopper", "HGMMA", "--seed", "-1"], "--seed must be a non-negative integer, got -1"),
    (["gemm-error", "hopper", "HGMMA.64xNx16.F32", "--seed", "-1"], "--seed must be a non-negative integer, got -1"),
    (["gemm-error", "hopper", "HGMMA.64xNx16.F32", "--m", "0"], "--m must be at least 1 and at most 1,024, got 0"),
    (["gemm-compare", "x.npz", "--top", "0"], "--top must be at least 1, got 0"),
    (["gemm-compare", "x.npz", "--rows", "0"], "--rows must be at least 1, got 0"),
    (["gemm-bench", "--workers", "0"], "--workers must be at least 1 and at most 1,024, got 0"),
    (["gemm-bench", "--big", "-1"], "--big must be at least 0 and at most 2,580, got -1"),
    (["gemm-bench", "--shape", "4x4x17", "--big", "0"], "--shape '4x4x17': M, N >= 1, K >= 32"),
    (["run", "hopper", "HGMMA", "--seed", "x"], "argument --seed: invalid int value: 'x'"),
    (["gemm-error", "hopper", "HGMMA.64xNx16.F32", "--k", "64", "--params", "out_frac_bits=30"],
     "Params.out_frac_bits=30 is not valid for hopper HGMMA.64xNx16.F32; valid: 1..23"),
])
def test_bad_numbers_are_refused_before_anything_is_printed(argv, words, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert words in _one_line(captured.err) and captured.out == ""


def test_an_ambiguous_name_is_quoted_cleanly():
    with pytest.raises(ValueError) as e:
        golden.lookup("hopper", "HGMMA")
    text = str(e.value)
    assert text.startswith("the name HGMMA names 4 instructions on hopper, not one: ") and "'" not in text


# ---- numba's environment ---------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["0", "-2", "abc"])
def test_numba_num_threads_is_checked_up_front(value, monkeypatch, capsys):
    monkeypatch.setenv("NUMBA_NUM_THREADS", value)
    monkeypatch.delenv("GOLDEN_BACKEND", raising=False)
    assert main(["run", "hopper", "HGMMA.64xNx16.F32", "-n", "10"]) == 2
    captured = capsys.readouterr()
    line = _one_line(captured.err)
    assert f"NUMBA_NUM_THREADS={value!r}" in line and "1 or more" in line and captured.out == ""
    with pytest.raises(ValueError, match="NUMBA_NUM_THREADS"):
        golden.api.resolve_backend()


def _golden(*argv, env=None, **kw):
    env = {**os.environ, **(env or {})}
    env.pop("GOLDEN_BACKEND", None)
    return subprocess.run([sys.executable, "-m", "golden", *argv], capture_output=True, text=True, cwd=REPO,
                          env=env, timeout=120, **kw)


def test_numba_disable_jit_runs_the_numpy_path():
    """NUMBA_DISABLE_JIT=1 stopped in the vector generators (a numba intrinsic has no Python form)."""
    r = _golden("run", "hopper", "HGMMA", "-n", "200", env={"NUMBA_DISABLE_JIT": "1"})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stdout.splitlines()) == 5


# ---- the optional extras ---------------------------------------------------------------------------

def test_plot_without_matplotlib_names_the_extra_before_the_work(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)          # import matplotlib: ImportError
    argv = ["gemm-error", "hopper", "HGMMA.64xNx16.F32", "--k", "64", "--m", "2", "--n", "2",
            "--plot", str(tmp_path / "err.png")]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "pip install 'mma-rtl[probe]'" in _one_line(captured.err) and captured.out == ""


def test_an_unwritable_plot_path_is_refused_before_the_work(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    argv = ["gemm-error", "hopper", "HGMMA.64xNx16.F32", "--k", "64", "--m", "2", "--n", "2",
            "--plot", str(tmp_path / "file" / "err.png")]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "--plot=" in _one_line(captured.err) and "is a file, not a folder" in captured.err
    assert captured.out == ""


def test_golden_torch_without_torch_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)               # import torch: ModuleNotFoundError
    monkeypatch.delitem(sys.modules, "golden.torch", raising=False)
    if "torch" in vars(golden):                                  # (hasattr would import it)
        monkeypatch.delattr(golden, "torch")
    with pytest.raises(ModuleNotFoundError) as e:
        importlib.import_module("golden.torch")
    assert str(e.value) == "golden.torch needs PyTorch, which is not installed: pip install 'mma-rtl[torch]'"
    with pytest.raises(ModuleNotFoundError, match=r"mma-rtl\[torch\]"):
        golden.torch.emulate                                      # noqa: B018 (the README's spelling)


def test_the_readme_spelling_golden_torch_works_without_importing_it_first(monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.delitem(sys.modules, "golden.torch", raising=False)
    if "torch" in vars(golden):                                  # (hasattr would import it)
        monkeypatch.delattr(golden, "torch")
    assert callable(golden.torch.emulate)
    r = subprocess.run([sys.executable, "-c", "import sys, golden; print('torch' in sys.modules)"],
                       capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.stdout.strip() == "False", r.stderr               # import golden does not import torch


# ---- Ctrl-C ----------------------------------------------------------------------------------------

def _sigint_default():
    """In the child, before exec: SIGINT at its default, so that Python installs its Ctrl-C handler even
    where the test process's SIGINT is ignored (Python leaves an inherited ignored SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_ends_a_run_with_one_line_and_status_130():
    env = {**os.environ, "GOLDEN_BACKEND": "numpy"}
    p = subprocess.Popen([sys.executable, "-m", "golden", "run", "hopper", "HGMMA", "-n", "100000000"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env,
                         preexec_fn=_sigint_default)
    try:
        assert p.stdout.readline().startswith("instruction")     # the header: the run has started
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 130 and err.strip().endswith("interrupted") and "Traceback" not in err, err
