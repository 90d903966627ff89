"""``python -m golden``: listing, running and tracing, and one clear line for bad input."""

from __future__ import annotations

import pytest

import golden
from golden.cli import main


def test_list_takes_arch_and_instruction_positionally(capsys):
    assert main(["list", "hopper", "HGMMA"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and all("HGMMA" in line and line.startswith("hopper") for line in out)
    assert main(["list", "volta,turing", "HMMA.884"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == ["volta"] * 3 + ["turing"] * 3
    assert main(["list"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(golden.CATALOG)
    assert main(["list", "--arch", "cdna2"]) == 0          # the older spelling still works
    assert len(capsys.readouterr().out.splitlines()) == len(golden.instructions("cdna2"))


def test_run_prints_one_row_per_instruction(capsys):
    assert main(["run", "hopper", "HGMMA.64xNx16.F32,DMMA.8x8x4", "-n", "300", "--vectors", "normal"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith("instruction") and [r.split()[0] for r in rows[1:]] == [
        "DMMA.8x8x4", "HGMMA.64xNx16.F32"]
    # normal vectors give finite results only: the finite column equals the vector count
    assert all(r.split()[5] == "300" for r in rows[1:])


def test_trace_shows_the_paper_example(capsys):
    assert main(["trace", "cdna3", "v_mfma_f32_32x32x8_f16", "--a", "2048,2048", "--b", "2048,-2048",
                 "--c", "-0.000001"]) == 0
    assert "=> d = 0xbe800000 (-0.25)" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["list", "hoper"], "unknown architecture 'hoper'"),
    (["list", "volta", "HMMA.16816.F32"], "not available on volta"),
    (["run", "hopper", "HGMMX"], "unknown instruction 'HGMMX'"),
    (["run", "hopper", "HGMMA", "-n", "0"], "-n must be at least 1"),
    (["trace", "hopper", "HGMMA"], "names 4 instructions"),
])
def test_bad_input_is_one_clear_line(argv, words, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and words in err[0], captured.err
    assert "instruction" not in captured.out          # no table header before the error
