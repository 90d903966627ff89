"""``make lint-rtl DUT=...``: Verilator's lint (``--lint-only -Wall``) on a described design's own files."""

from __future__ import annotations

import subprocess
import sys

from .. import build as bld
from .. import toolchain
from . import ports as dports
from . import sources as dsources
from .description import load


def lint(path, out=None) -> int:
    """Lint the design (its top, under its integer parameters); 0 when clean, 1 with warnings, 2 on errors."""
    out = out or sys.stdout
    desc = load(path)
    src = dsources.resolve(desc)
    tc = toolchain.setup()
    gparams = [f"-G{k}={dports.sv_value(v)}" for k, v in {**src.parameters, **desc.parameters}.items()
               if isinstance(v, (int, bool))]
    cmd = [tc.verilator.path, "--lint-only", "-Wall", "--top-module", desc.top, *gparams,
           *dports.verilator_source_args(src)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    log = bld.BUILD_ROOT / "dut" / bld.safe_name(desc.name) / "lint.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(" ".join(cmd) + "\n" + r.stdout + r.stderr)
    msgs = [ln for ln in r.stderr.splitlines() if ln.startswith("%")]
    errors = [m for m in msgs if m.startswith("%Error") and "Exiting due to" not in m]
    warnings = [m for m in msgs if m.startswith("%Warning")]
    for m in msgs:
        print(m, file=out)
    skipped = [k for k, v in desc.parameters.items() if not isinstance(v, (int, bool))]
    note = f" (parameters {', '.join(skipped)} left at their defaults: -G takes numbers)" if skipped else ""
    real_errors = [m for m in errors if not m.startswith("%Error: Exiting")]
    if real_errors and not warnings:
        print(f"error: {desc.path}: lint found {len(real_errors)} error(s); log {log}", file=sys.stderr)
        return 2
    print(f"{desc.name} ({desc.top}): {len(warnings)} warning(s), {len(real_errors)} error(s){note}; log {log}",
          file=out)
    return 0 if not msgs else 1
