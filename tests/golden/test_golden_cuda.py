"""golden.kernels.cuda under numba-cuda's simulator (CPU only; skipped without numba-cuda): every kernel
family's GPU row code gives golden.dot_add's bits on both operand kinds, and its planted rounding fault
is caught (tools/gpu_kernel_check.py and tools/gpu_check.sh, which run the same check on a real GPU).
The slow tier runs more entries against the compiled CPU path."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba_cuda")
import golden  # noqa: E402
from golden.kernels import cuda as gpu  # noqa: E402
from golden.kernels import handles, spec  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "gpu_kernel_check.py"
FAMILIES = {"FDA", "GDFS", "FDRDA", "GFDRDA", "GPS", "SFMA"}
# one entry per kernel family (the c_last and block-scaled FDA forms in the slow tier)
ONE_PER_FAMILY = ("hopper:HGMMA.64xNx16.F32", "blackwell:UTCOMMA.MXF4.E8", "cdna3:v_mfma_f32_16x16x8_xf32",
                  "cdna3:v_mfma_f32_16x16x32_fp8_fp8", "cdna2:v_mfma_f32_32x32x4_2b_f16", "ampere:DMMA.884")


def _env(out: Path) -> dict:
    return {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": str(REPO), "OUT": str(out)}


def _tool():
    spec_ = importlib.util.spec_from_file_location("gpu_kernel_check", TOOL)
    mod = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(mod)
    return mod


def _check(tmp_path, *args, timeout=600) -> tuple[subprocess.CompletedProcess, dict]:
    run = subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, env=_env(tmp_path),
                         timeout=timeout)
    report = tmp_path / "gpu_kernel_check.json"
    return run, (json.loads(report.read_text()) if report.exists() else {})


def _every_family_right(run, report, rows_per_family: dict) -> None:
    assert run.returncode == 0, run.stdout + run.stderr
    assert report["ok"] and report["mismatches"] == 0 and set(report["families"]) == FAMILIES, report["families"]
    for name, fam in report["families"].items():
        assert fam["mismatches"] == 0 and fam["rows"] == rows_per_family[name], (name, fam)
        assert fam["caught"] and fam["planted_fault_mismatches"] > 0, (name, fam)     # the comparison can fail
    assert {c["kind"] for c in report["cases"]} == {"bits", "normal"}


def test_every_cpu_kernel_design_of_the_catalog_has_a_gpu_kernel():
    taken = [i for i in golden.instructions() if handles(i.datapath)]
    assert {spec.kernel_code(i.datapath.params).name for i in taken} == FAMILIES
    assert [f"{i.arch}:{i.name}" for i in taken if not gpu.supports(i)] == []
    cdna1 = golden.lookup("cdna1", "v_mfma_f32_32x32x4f16")          # the numpy path's only: not on a GPU either
    assert not handles(cdna1.datapath) and not gpu.supports(cdna1)


def test_every_family_on_the_simulator(tmp_path):
    """One entry per family, both kinds, 24 rows each, against golden.dot_add's numpy path."""
    run, report = _check(tmp_path, "--rows", "24", "--cpu", "numpy", "--instr", *ONE_PER_FAMILY)
    _every_family_right(run, report, dict.fromkeys(FAMILIES, 48))
    assert "caught in 6 of 6 families" in run.stdout


def test_gpu_check_script_on_the_simulator(tmp_path):
    env = {**_env(tmp_path), "PYTHON": sys.executable}
    script = [str(REPO / "tools" / "gpu_check.sh")]
    run = subprocess.run([*script, "--rows", "8", "--kinds", "bits", "--cpu", "numpy", "--instr", "ampere:DMMA.884"],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    log = (tmp_path / "gpu_kernel_check.txt").read_text()
    assert run.returncode == 0 and "gpu_kernel_check exit status 0" in log, run.stdout + run.stderr
    assert "8 rows checked, 0 mismatches" in log and json.loads((tmp_path / "gpu_kernel_check.json").read_text())["ok"]
    # a failing check fails the script (pipefail through the tee): a "python" that exits 1
    bad = subprocess.run(script, capture_output=True, text=True, env={**env, "PYTHON": "false"}, cwd=REPO, timeout=60)
    assert bad.returncode == 1 and "gpu_kernel_check exit status 1" in bad.stdout, bad.stdout + bad.stderr


@pytest.mark.parametrize("args, says", [
    (["--instr", "cdna1:v_mfma_f32_32x32x4f16"], "not computed by the GPU kernels"),
    (["--instr", "hopper"], "--instr takes ARCH:NAME"),
    (["--instr", "hopper:NOPE"], "unknown instruction"),
    (["--kinds", "bits,odd"], "--kinds must be from"),
    (["--cpu", "torch"], "--cpu must be one of numba, numpy"),
    (["--rows", "0"], "--rows must be a positive number"),
])
def test_bad_input_is_refused_in_one_line(capsys, args, says):
    assert _tool().main(args) == 2                  # refused before any GPU (or simulator) is looked for
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and err.count("\n") == 1, err


def test_the_verdict_fails_on_a_mismatch_an_uncaught_fault_or_a_refused_kernel():
    tool = _tool()
    case = {"family": "GPS", "rows": 8, "mismatches": 0, "planted_fault_mismatches": 3}
    assert tool._summary("x", [case], {}, 0.0)["ok"]
    assert not tool._summary("x", [{**case, "mismatches": 1}], {}, 0.0)["ok"]
    assert not tool._summary("x", [{**case, "planted_fault_mismatches": 0}], {}, 0.0)["ok"]
    assert not tool._summary("x", [case], {"SFMA": ("sfma", "NVVM refused it")}, 0.0)["ok"]
    assert not tool._summary("x", [], {}, 0.0)["ok"]


def _sample() -> list[str]:
    """The tool's defaults and one entry per (family, architecture, a/b format, d format) of the catalog."""
    seen, out = set(), list(_tool().DEFAULT_INSTR)
    for i in golden.instructions():
        dp = i.datapath
        key = (spec.kernel_code(dp.params), i.arch, dp.formats[0].name, dp.formats[3].name, dp.scale_format is None)
        if handles(dp) and key not in seen:
            seen.add(key)
            out.append(f"{i.arch}:{i.name}")
    return list(dict.fromkeys(out))


@pytest.mark.slow
def test_more_entries_on_the_simulator_against_the_compiled_cpu_path(tmp_path):
    entries = _sample()
    run, report = _check(tmp_path, "--rows", "40", "--cpu", "numba", "--warm-processes", "2", "--instr", *entries,
                         timeout=1800)
    rows = {}
    for c in report.get("cases", []):
        rows[c["family"]] = rows.get(c["family"], 0) + 40
    _every_family_right(run, report, rows)
    assert len(report["cases"]) == 2 * len(entries)


REFUSED = """
import sys
sys.argv[0] = {tool!r}
sys.path.insert(0, {tools!r})
import gpu_kernel_check as t
real = t.gpu._compile
def refuse(name):
    if name == "gps":
        raise RuntimeError("NVVM refused it (planted)")
    return real(name)
t.gpu._compile = refuse
sys.exit(t.main(["--rows", "8", "--cpu", "numpy", "--kinds", "bits", "--instr", "cdna2:v_mfma_f32_32x32x4_2b_f16",
                 "ampere:DMMA.884"]))
"""


@pytest.mark.slow
def test_a_family_the_gpu_compiler_refuses_fails_the_check_and_the_others_still_run(tmp_path):
    code = REFUSED.format(tool=str(TOOL), tools=str(TOOL.parent))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    report = json.loads((tmp_path / "gpu_kernel_check.json").read_text())
    assert run.returncode == 1 and "NVVM refused it (planted)" in run.stderr, run.stdout + run.stderr
    assert report["families"]["GPS"]["error"] and not report["families"]["GPS"]["ok"]
    assert report["families"]["SFMA"]["ok"] and "FAILED TO RUN" in run.stdout
