"""The probe command line (``probe.__main__:main``).

``python -m probe ARCH [INSTR] [--device golden|rtl|torch|golden:F=24] [--group] [--json PATH]``:
ARCH an architecture, a comma list of them or ``all``; INSTR a name or family, a comma list
of them, or all of ARCH's when left out (:func:`golden.select`).  One instruction gets the full
report; several get one line each.  ``--all`` is ``all`` architectures.

``python -m probe --device dut:path/unit.toml [ARCH [INSTR]]``: every target of a described device, each
against its own arithmetic (:mod:`probe.device`); ARCH and INSTR, when given, keep the targets they name.

``python -m probe findings --out docs/findings`` (the paper's section VI), and
``python -m probe compare ARCH INSTR... --device torch -n 2048`` (random dot-adds, bit for bit).

Exit status: 0 when everything probed matches the catalog, 1 when something differs, 2 on bad
input or when the device cannot run what was asked (no PyTorch or GPU, a board that carries
another instruction): a probe that ran nothing does not pass.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import golden
from golden.console import check_output, exit_with
from golden.device import DeviceError, DeviceSpec, Unavailable

from .backends import add_device_option, backend_from_name, note_old_spelling
from .infer import probe


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Amaranth's UnusedElaboratable warnings of a design refused before it was elaborated (the rtl backend's):
    # nothing a user can act on, and they would bury the refusal's one line (cosim.build.quiet_unused_designs)
    warnings.filterwarnings("ignore", message=r"(?s).* created but never used$")
    if argv and argv[0] == "findings":
        from .findings import main as findings_main
        return findings_main(argv[1:])
    try:
        if argv and argv[0] == "compare":
            from .compare import main as compare_main
            return compare_main(argv[1:])
        return _probe_main(argv)
    except Unavailable as e:                     # asked for, and cannot run: nothing was probed
        print(f"error: the backend cannot run here: {_line(e)}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, DeviceError) as e:
        print(f"error: {_line(e)}", file=sys.stderr)
        return 2


def _line(e: Exception) -> str:
    """An error's first line (a simulator's log tail, which may follow it, is in the log it names)."""
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m probe",
                                 description="Derive MMA instructions' arithmetic from black-box tests and compare "
                                             "it with the catalog.  Sub-commands: findings, compare.")
    ap.add_argument("arch", nargs="?", help="architecture (hopper, cdna3, ...), several separated by commas, or all")
    ap.add_argument("instr", nargs="?", help="instruction name (paper, PTX or ISA name) or family, several "
                                             "separated by commas (default: all of ARCH's)")
    ap.add_argument("--all", action="store_true", help="every catalog instruction (ARCH defaults to all)")
    ap.add_argument("--group", action="store_true",
                    help="probe one instruction per datapath and apply its result to the others")
    add_device_option(ap,
                    help="the device probed (--backend, its old spelling, still works): "
                         "golden (default), rtl (co-simulation; rtl:UNIT with a cosim unit spec, e.g. "
                         "rtl:hw:params=specials=later_model), torch (GPU), or golden:FIELD=VALUE,... "
                         "(a mis-parameterised golden), or fpga:URL (a board, or the simulated board's socket://HOST:PORT)")
    ap.add_argument("--json", metavar="PATH", help="write the report(s) as JSON to PATH ('-': stdout)")
    ap.add_argument("--quiet", action="store_true", help="one instruction: only the comparison line")
    return ap


def _probe_main(argv) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    note_old_spelling(argv)
    if args.all and args.instr:
        ap.error("--all probes every instruction: give INSTR without --all")
    if args.json and args.json != "-":
        check_output(args.json, "--json")        # before the probe: a path that cannot be written, in one line
    if DeviceSpec.kind_of(args.device) == "dut":   # a described device: its targets, ARCH/INSTR filter them
        return _device(args)
    if not (args.arch or args.all):
        ap.error("give ARCH [INSTR], or --all, or a sub-command (findings, compare)")
    pool = golden.select(args.arch, args.instr)
    backend = backend_from_name(args.device)
    if len(pool) == 1 and not args.all:
        return _one(pool[0], backend, args)
    return _many(pool, backend, args)


def _device(args) -> int:
    """Every target of a described device (or those ARCH/INSTR name), each against its own arithmetic."""
    from .device import probe_device
    backend = backend_from_name(args.device)
    rc, reports = probe_device(backend, None if args.all else args.arch, args.instr, sys.stdout, args.quiet)
    if args.json:
        return _write(args.json, [r.to_json() for r in reports]) or rc
    return rc


def _one(ins, backend, args) -> int:
    """The full report of one instruction."""
    r = probe(ins, backend)
    print(r.summary() if args.quiet else r.text())
    if args.json:
        return _write(args.json, r.to_json()) or (0 if r.matches else 1)
    return 0 if r.matches else 1


def _many(pool, backend, args) -> int:
    """One line per instruction, a total on stderr; with ``--group`` one probe per datapath."""
    reports, differ, t0 = [], 0, time.perf_counter()
    groups = _by_datapath(pool) if args.group else [[ins] for ins in pool]
    cannot, missed = [], 0
    for members in groups:
        try:
            r = probe(members[0], backend)
        except Unavailable as e:                 # this instruction only (a board runs one, a GPU some)
            cannot.append(f"{members[0].arch} {members[0].name}: {e}")
            missed += len(members)
            for ins in members:
                print(f"{ins.arch:13s} {ins.name:44s} {'?':9s} cannot run on this backend", flush=True)
            continue
        reports.append(r)
        for ins in members:
            ok = r.matches if ins is members[0] else r.matches_for(ins)
            differ += not ok
            print(f"{ins.arch:13s} {ins.name:44s} {r.family or '?':9s} "
                  f"{'matches' if ok else r.summary()}", flush=True)
    print(f"{len(pool)} instruction(s), {len(groups) - len(cannot)} probed, {len(pool) - differ - missed} match the "
          f"catalog, {differ} differ, {missed} could not run ({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    if args.json and _write(args.json, [r.to_json() for r in reports]):
        return 2
    if cannot:
        print(f"error: {missed} instruction(s) could not run on the backend (first: {cannot[0]})", file=sys.stderr)
        return 2 if differ == 0 else 1
    return 0 if differ == 0 else 1


def _by_datapath(instrs) -> list[list]:
    """The instructions grouped by :attr:`golden.Instruction.datapath` (equal datapaths, equal bits)."""
    groups: dict = {}
    for ins in instrs:
        groups.setdefault(ins.datapath, []).append(ins)
    return list(groups.values())


def _write(path, obj) -> int:
    """Write the JSON report (checked before the probe); 2 and one line if it cannot be written after all
    (the report printed above is kept), else 0."""
    text = json.dumps(obj, indent=2)
    if path == "-":
        print(text)
        return 0
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as f:
            f.write(text + "\n")
    except OSError as e:
        print(f"error: --json {path}: the report could not be written ({e.strerror or e}); the report above is "
              "what was probed", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    exit_with(main)
