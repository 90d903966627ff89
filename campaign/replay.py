"""Run a campaign's saved failing vectors again, on the device that failed them, against golden."""

from __future__ import annotations

import sys

import numpy as np

import golden
from cosim.failures import load_failures
from golden.device import DeviceSpec, check_output

from .blocks import OPERANDS
from .spec import Campaign


def replay(path, out=None) -> int:
    """Exit status 1 when the failure is still there (the usual case), 0 when it is gone, 2 on a bad file."""
    out = out or sys.stdout
    try:
        meta, arrays = load_failures(path)
    except (OSError, ValueError, KeyError) as e:
        raise ValueError(f"{path}: not a campaign replay file ({e})") from None
    if "campaign" not in meta or "device" not in meta:
        # the command that replays it: a design's run (make cosim DUT=) or a unit's (make cosim, a board's)
        command = "python -m cosim.dut replay" if meta.get("dut") else "python -m cosim replay"
        saved = f"saved by a run of the design {meta['dut']}" if meta.get("dut") else "a co-simulation's file"
        raise ValueError(f"{path}: not a campaign replay file ({saved}, no campaign/device in its meta data); "
                         f"replay it with {command} {path}")
    ins = golden.lookup(meta["arch"], meta["instr"])
    device_name = meta["device"]
    # each device gets the options it takes (the simulators' lanes, unit and stalls; no stalls on a replay)
    kind = DeviceSpec.kind_of(device_name)
    options = {"lanes": int(meta.get("lanes") or 1), "unit": meta.get("unit") or "hw"} if kind == "rtl" else {}
    if kind in ("rtl", "core", "dut"):
        options["stall"] = 0.0
    from .blocks import device
    try:
        c = Campaign(((ins.arch, ins.name),), device=device_name, seed=int(meta["seed"]),
                     vectors=meta.get("vectors_kind", "mixed"), **options)
        dev = device(c)
    except ValueError as e:
        raise ValueError(f"{path}: its device {device_name} was refused: {e}") from None
    ops = tuple(arrays[k] for k in OPERANDS)
    n = len(ops[2])
    got = check_output(ins, dev(ins, *ops), n, c.device)
    expected = golden.dot_add(ins, *ops)
    bad = np.nonzero(~golden.same_results(ins, got, expected))[0]
    print(f"{ins.arch} {ins.name} on {c.device}: {len(bad)} of {n} saved vector(s) mismatch again "
          f"(campaign {meta['campaign']}, block {meta['block']})", file=out)
    if len(bad):
        i = int(bad[0])
        sa = None if ops[3] is None else ops[3][i]
        sb = None if ops[4] is None else ops[4][i]
        print(f"vector #{int(arrays['index'][i])}: got {int(got[i]):#x}, golden {int(expected[i]):#x}", file=out)
        print(golden.trace(ins, ops[0][i], ops[1][i], ops[2][i], sa, sb), file=out)
    return 1 if len(bad) else 0
