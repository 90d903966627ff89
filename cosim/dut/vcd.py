"""Reading a few signals of a VCD waveform, sampled at a clock's rising edges.

The signal map (:mod:`cosim.dut.signals`) reads a design's internal values from the waveform of a
rerun: :func:`sample` returns, for each rising edge of the clock, the value each asked-for signal held
just before it (what a register loaded at that edge saw).  The parser keeps only the signals asked
for, so a whole design's waveform costs one pass over the text.
"""

from __future__ import annotations

import re
from pathlib import Path

_VAR = re.compile(r"\$var\s+\S+\s+(\d+)\s+(\S+)\s+(\S+)(?:\s+(\[[^\]]*\]))?\s+\$end")


class VcdError(ValueError):
    """A waveform that lacks a signal asked for (the message names close ones)."""


def names_of(path: Path) -> tuple[dict, int]:
    """``{full name: (id code, width)}`` from the header, and the offset where the changes begin."""
    names, scope = {}, []
    with open(path, errors="replace") as f:
        while True:
            line = f.readline()
            if not line:
                break
            text = line.strip()
            if text.startswith("$scope"):
                scope.append(text.split()[2])
            elif text.startswith("$upscope"):
                scope.pop()
            elif text.startswith("$var"):
                m = _VAR.match(text)
                if m:
                    width, code, name = int(m[1]), m[2], m[3]
                    full = ".".join(scope + [name])
                    rng = m[4]
                    names[full] = (code, width, rng)
            elif text.startswith("$enddefinitions"):
                return names, f.tell()
    return names, 0


def find(names: dict, path: str, under: str = "") -> str:
    """The full name of ``path`` (a name relative to a scope ending with ``under``): VcdError with close
    names when it is not there."""
    want = f"{under}.{path}" if under else path
    hits = [n for n in names if n == want or n.endswith("." + want)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        return min(hits, key=len)
    leaf = path.rsplit(".", 1)[-1]
    close = sorted(n for n in names if n.rsplit(".", 1)[-1] == leaf)[:4]
    raise VcdError(f"the waveform has no signal {path!r}" + (f" (signals of that name: {', '.join(close)})"
                                                             if close else ""))


def sample(path: Path, clock: str, signals: list[str]) -> tuple[dict, list]:
    """``({signal: [value before each rising edge of clock]}, widths)``: integers (X and Z read as 0)."""
    path = Path(path)
    names, start = names_of(path)
    clk = names[clock][0]
    codes = {names[s][0]: s for s in signals}
    cur = {s: 0 for s in signals}
    out = {s: [] for s in signals}
    clk_val = 0
    with open(path, errors="replace") as f:
        f.seek(start)
        pending: list = []

        def flush():
            nonlocal clk_val
            rose = False
            for code, value in pending:
                if code == clk:
                    rose = rose or (clk_val == 0 and value == 1)
                    clk_val = value
            if rose:
                for s in signals:
                    out[s].append(cur[s])
            for code, value in pending:
                if code in codes:
                    cur[codes[code]] = value
            pending.clear()

        for line in f:
            if not line or line[0] in "$ \n":
                continue
            c = line[0]
            if c == "#":
                flush()
            elif c in "01xzXZ":
                code = line[1:].strip()
                if code == clk or code in codes:
                    pending.append((code, 1 if c == "1" else 0))
            elif c in "bB":
                bits, _, code = line[1:].strip().partition(" ")
                if code in codes or code == clk:
                    pending.append((code, int(re.sub("[xzXZ]", "0", bits), 2)))
        flush()
    return out, {s: names[s][1] for s in signals}
