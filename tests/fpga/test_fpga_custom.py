"""An instruction of your own (golden.custom) on the board: its unit and board configuration are made like a
catalog entry's (make fpga-sim ARCH=custom INSTR=SPEC)."""

from __future__ import annotations

import golden
from fpga.board.config import BoardConfig

SPEC = "k=2,a=e5m2,c=f16,base=FDA,F=exact,e_zero=-126,out_rounding=RNE,overflow=ieee,zero_sign=ieee754"


def test_a_board_of_an_instruction_of_your_own():
    import hw
    from hw.pipeline import questions_only
    ins = golden.lookup("custom", SPEC)
    cfg = BoardConfig("custom", (ins.name,))
    assert (cfg.arch, cfg.instructions) == ("custom", (ins.name,))
    with questions_only():                   # the unit is dropped inside the block (its docstring says why)
        assert hw.dot_add_unit(ins).latency >= 1
