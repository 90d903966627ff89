"""tools/link_equiv.py, the check that a refactoring left the host link's hardware unchanged: it proves
a link equal to itself and catches one CRC bit changed (docs/fpga/README.md, "The host link's parts")."""

from pathlib import Path

import pytest
from tool_scripts import load_tool

from fpga.board.config import BoardConfig
from fpga.board.link import HostLink, frame

REPO = Path(__file__).resolve().parents[2]


def _tool():
    return load_tool("link_equiv")


@pytest.mark.slow
@pytest.mark.parametrize("two_domains", [False, True])
def test_the_check_proves_a_link_and_catches_a_planted_crc_bit(tmp_path, monkeypatch, two_domains):
    tool = _tool()
    cfg = BoardConfig("hopper", "HMMA.1684.F32.TF32", depth=8)
    gold = tmp_path / "gold.il"
    gold.write_text(tool.rtlil_of(HostLink(cfg, 4, two_domains=two_domains), "link"))
    aliases = dict(a.split("=", 1)[::-1] for a in tool.ALIASES)
    for planted in (False, True):
        if planted:
            columns = list(frame._CRC_COLUMNS)
            columns[3] ^= 1 << 5                        # one bit of the CRC's XOR network
            monkeypatch.setattr(frame, "_CRC_COLUMNS", columns)
        gate = tmp_path / f"gate{planted:d}.il"
        gate.write_text(tool.rtlil_of(HostLink(cfg, 4, two_domains=two_domains), "link"))
        work = tmp_path / f"work{planted:d}"
        work.mkdir()
        proven, message = tool.prove_link(gold, gate, "link", work, tool.STRIP, aliases)
        assert proven != planted, message
        if planted:
            assert "crc" in message
