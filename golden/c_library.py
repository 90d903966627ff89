"""The C golden library's shared facts, written from golden's own tables (nothing kept by hand twice).

:func:`spec_header` is ``golden_spec.h``: the format-row columns, parameter slots, codes and constants
of :mod:`golden.kernels.spec` that the C row kernels (``golden_c/src/``) read, each a ``#define`` of the
Python value.  ``python -m golden.c_library DIR`` writes it into DIR.
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import algorithms
from .descriptors import KernelCode
from .kernels import spec

__all__ = ["spec_header", "SPEC_NAMES", "write_spec_header"]

# every name of golden.kernels.spec (and golden.algorithms) the C kernels read
SPEC_NAMES = (
    "EXP_BITS", "MAN_BITS", "BIAS", "SIGNED", "EMIN", "EMAX", "MAX_MANTISSA", "VALUE_BITS", "IGNORED_LOW",
    "NAN_KIND", "TABLE_OFF", "NAN_BITS", "INF_BITS", "MAX_BITS", "HAS_INF", "FNUZ", "WORD32", "EXP_TAB_OFF",
    "SUBNORMALS", "FORMAT_COLUMNS", "NAN_IEEE", "NAN_ALL_ONES", "NAN_NEG_ZERO", "NAN_MAX_EXP", "NAN_NONE",
    "RZ", "RD", "RU", "RNE", "OVERFLOW_INF", "OVERFLOW_IEEE", "A", "B", "CF", "D", "S", "SLOTS",
    "P_F", "P_EZERO", "P_L", "P_MODE", "P_FRAC", "P_OVERFLOW", "P_ZPOS", "P_GROUP", "P_DOTFB", "P_CFB",
    "P_FINFB", "P_MERGEFB", "P_FLOOR_RD", "P_CDROP", "P_PROD_OVER", "P_LATER", "P_CLAST", "P_INTERLEAVED",
    "P_FAULT", "P_BLOCK", "P_SCALED", "P_FLUSH", "P_BASE", "P_FAST", "NPARAMS", "GFDRDA_CODE", "NO_C_DROP",
    "TABLE_BITS", "FAST_NONE", "FAST_FDA", "FAST_GDFS",
)
ALGORITHM_NAMES = ("ZERO_EXP", "NO_TERM", "PARKED", "EXACT_BITS")


def spec_header() -> str:
    """``golden_spec.h``: ``#define GS_<NAME> <value>`` for each of :data:`SPEC_NAMES`, the
    algorithms' constants and each :class:`golden.descriptors.KernelCode`."""
    lines = ["/* golden_spec.h: written by golden.c_library from golden.kernels.spec; do not edit. */",
             "#ifndef MMA_GOLDEN_SPEC_H", "#define MMA_GOLDEN_SPEC_H", ""]
    for name in SPEC_NAMES:
        lines.append(f"#define GS_{name} ({int(getattr(spec, name))}LL)")
    for name in ALGORITHM_NAMES:
        lines.append(f"#define GS_{name} ({int(getattr(algorithms, name))}LL)")
    for code in KernelCode:
        lines.append(f"#define GS_KERNEL_{code.name} ({int(code)}LL)")
    return "\n".join(lines + ["", "#endif", ""])


def write_spec_header(folder) -> Path:
    """Write ``golden_spec.h`` into ``folder`` (made if missing); its path."""
    path = Path(folder) / "golden_spec.h"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(spec_header())
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m golden.c_library DIR   (writes DIR/golden_spec.h)", file=sys.stderr)
        sys.exit(2)
    print(write_spec_header(sys.argv[1]))
