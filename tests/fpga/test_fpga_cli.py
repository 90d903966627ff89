"""``python -m fpga``: bad input is one line naming what is wrong and what is valid; the board top
builds to a bitstream with the open toolchain (slow)."""

import subprocess
from pathlib import Path

import pytest

from fpga.__main__ import main

REPO = Path(__file__).resolve().parent.parent.parent


def error_of(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


def test_unknown_board(capsys):
    err = error_of(capsys, ["build", "hopper", "HGMMA.64xNx16.F32", "--board", "ulx3s-99f"])
    assert "unknown board 'ulx3s-99f'; valid boards: ulx3s-85f" in err


def test_unknown_instruction(capsys):
    err = error_of(capsys, ["build", "hopper", "HGMMA.64xNx99", "--board", "ulx3s-85f"])
    assert "HGMMA.64xNx99" in err


def test_instructions_of_two_architectures(capsys):
    err = error_of(capsys, ["sim", "ampere,hopper", "HMMA.16816.F32"])
    assert "a board runs one architecture" in err


def test_a_baud_the_uart_cannot_make(capsys):
    err = error_of(capsys, ["sim", "hopper", "HGMMA.64xNx16.F32", "--baud", "3000000"])
    assert "rate error" in err and "nearby valid bauds" in err


def test_a_missing_serial_port(capsys):
    err = error_of(capsys, ["identify", "--port", "/dev/ttyNOSUCHPORT"])
    assert "cannot open /dev/ttyNOSUCHPORT" in err and "available serial ports" in err


def test_nothing_listening(capsys):
    err = error_of(capsys, ["run", "--port", "socket://127.0.0.1:1"])
    assert "cannot open socket://127.0.0.1:1" in err


def test_make_fpga_run_needs_a_port():
    # -o: take the venv stamp as it is (never (re)create the venv from a test)
    done = subprocess.run(["make", "-s", "-o", ".venv/.installed", "fpga-run"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode != 0 and "make fpga-run needs PORT=" in done.stderr


@pytest.mark.slow
def test_a_small_board_top_builds_to_a_bitstream(capsys):
    """The real board top (link, buffers, UART, a K=4 unit) through yosys, nextpnr-ecp5 and ecppack."""
    assert main(["build", "hopper", "HMMA.1684.F32.TF32", "--board", "ulx3s-85f", "--pipeline", "0",
                 "--clock", "25"]) == 0
    out = capsys.readouterr().out
    assert "Fmax" in out and "PASS" in out and "bitstream: " in out
    bit = Path(out.split("bitstream: ")[1].split()[0])
    assert bit.stat().st_size > 100_000
