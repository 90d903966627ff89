"""How many of the co-simulated ``disputed`` vectors the two settings of ``golden.Params.specials``
disagree on, per touched CDNA3 entry (seed 1, the first N vectors of KIND, as ``make cosim
VECTORS=KIND`` draws them).  ``python tools/cdna3_disputed_hits.py [N] [KIND]`` (default 100000
disputed).  ``python tools/cdna3_disputed_hits.py planted [N]``: the planted check, each chained
entry's RTL in one setting co-simulated against golden in the other (it must mismatch).
docs/cdna3_disputed.md records both."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import golden  # noqa: E402
from golden.algorithms import disputed_rules  # noqa: E402
from golden.streams import VectorStream  # noqa: E402


def main(n: int = 100_000, kind: str = "disputed") -> None:
    for ins in golden.instructions("cdna3"):
        if not disputed_rules(ins):
            continue
        a, b, c, sa, sb = VectorStream(ins, kind, 1).take(n)
        later = dataclasses.replace(ins, params=ins.params.with_(specials="later_model"))
        diff = len(golden.mismatching(ins, golden.dot_add(ins, a, b, c), golden.dot_add(later, a, b, c)))
        print(f"{ins.name:30s} {ins.algorithm:9s} {','.join(disputed_rules(ins)):18s} "
              f"{diff:7,d} of {n:,} {kind} vectors differ between the settings")


def planted(n: int = 20_000) -> None:
    from cosim import run as cr
    from cosim.units import HwUnits
    for name in ("v_mfma_f32_16x16x16_bf16", "v_mfma_f32_16x16x32_bf8_bf8"):
        ins = golden.lookup("cdna3", name)
        for unit_setting, ref_setting in (("paper", "later_model"), ("later_model", "paper")):
            ref = dataclasses.replace(ins, params=ins.params.with_(specials=ref_setting))
            cfg = cr.Config(progress=0, rerun_with_waves=False, n=n, seed=3, stall=0.2, vectors="disputed",
                            max_saved=4, out=open("/dev/null", "w"))
            r = cr.run_instruction(ins, cfg, HwUnits(params={"specials": unit_setting}),
                                   lambda i, *ops, ref=ref: golden.dot_add(ref, *ops))
            print(f"{name:30s} RTL {unit_setting:11s} vs golden {ref_setting:11s} {r.vectors:7,d} vectors "
                  f"{r.mismatches:6,d} mismatches  {r.status}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["planted"]:
        planted(int(sys.argv[2]) if len(sys.argv) > 2 else 20_000)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000, sys.argv[2] if len(sys.argv) > 2 else "disputed")
