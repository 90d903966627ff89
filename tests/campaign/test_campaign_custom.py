"""An instruction of your own (golden.custom) is a campaign's instruction like a catalog entry: its blocks
are made and compared by (arch, name), the name being its spec."""

from __future__ import annotations

import golden
from campaign.blocks import run_block
from campaign.spec import GENERATOR_BLOCK, Campaign

SPEC = "k=2,a=f16,c=f32,base=FDA,F=exact,e_zero=-126,out_rounding=RNE,overflow=ieee,zero_sign=ieee754"


def test_a_campaign_block_of_an_instruction_of_your_own():
    ins = golden.lookup("custom", SPEC)
    clean = Campaign.of([ins], target=GENERATOR_BLOCK, block=GENERATOR_BLOCK, device="golden")
    r = run_block(clean, ins.arch, ins.name, 0)
    assert (r.status, r.vectors, r.mismatches) == ("done", GENERATOR_BLOCK, 0)
    planted = Campaign.of([ins], target=GENERATOR_BLOCK, block=GENERATOR_BLOCK, device="golden:out_rounding=RZ")
    r = run_block(planted, ins.arch, ins.name, 0)
    assert r.status == "done" and r.mismatches > GENERATOR_BLOCK // 10      # RZ where the design rounds to nearest
