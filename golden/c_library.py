"""The C golden library's shared facts, written from golden's own tables (nothing kept by hand twice).

:func:`spec_header` is ``golden_spec.h``: the format-row columns, parameter slots, codes and constants
of :mod:`golden.kernels.spec` that the C row kernels (``golden_c/src/``) read, each a ``#define`` of the
Python value.  :func:`catalog_source` is ``golden_catalog.inc``: every :data:`golden.CATALOG` entry
(:func:`supports`: the designs golden.kernels models, and the fields of :class:`CSlot`) as C data (names,
shapes, formats, the kernel family, :func:`build_design`'s format rows and parameter vector, the product
order), which ``golden_c/src/api.c`` includes; an instruction added to the catalog is in the C library
at its next build.  The value/exponent tables are not emitted: api.c builds each table layout at first
use from the format rows (``fields_value_exp``, and the exact conversion of ``operand_format``), so the
source stays small.  ``python -m golden.c_library DIR`` writes both into DIR.
"""

from __future__ import annotations

import sys
from enum import IntEnum
from pathlib import Path

from . import algorithms
from .descriptors import KernelCode
from .kernels import spec
from .params import EXACT
from .rules import Rounding, ZeroSign

__all__ = ["spec_header", "SPEC_NAMES", "write_spec_header", "catalog_source", "write_catalog", "CSlot",
           "C_NPARAMS", "core_params", "supports", "build_design", "custom_instructions", "runtime_source",
           "write_runtime", "FIELD_KINDS"]


class CSlot(IntEnum):
    """Parameter slots the C kernels read after :mod:`golden.kernels.spec`'s ``NPARAMS``: the Params
    fields (and values) the C library models beyond the compiled numba kernels.  golden_spec.h
    defines each as ``GS_P_<NAME>`` (index ``spec.NPARAMS + value``)."""

    EXACT = 0          # F="exact": the exact sum of the products and c, rounded once
    NAN_SET = 1        # 1: every NaN result is NAN_BITS (Params.nan_bits given)
    NAN_BITS = 2
    FMA_MODE = 3       # SFMA's fma_rounding, a golden.rules.RoundingCode
    ZERO_754 = 4       # zero_sign="ieee754"


C_NPARAMS = spec.NPARAMS + len(CSlot)
# zero_sign="ieee754" is modelled in C by these kernels (SFMA and GPS do not read zero_sign)
_ZERO_754_KERNELS = (KernelCode.FDA, KernelCode.GDFS, KernelCode.FDRDA, KernelCode.GFDRDA)


def core_params(p):
    """``p`` with the fields only the C library models (:class:`CSlot`) at values golden.kernels
    models: what :func:`golden.kernels.spec.build` and :func:`~golden.kernels.spec.supports` are given."""
    changes = {}
    if p.F == EXACT:
        changes["F"] = 0
    if p.nan_bits is not None:
        changes["nan_bits"] = None
    if p.fma_rounding != Rounding.RNE:
        changes["fma_rounding"] = Rounding.RNE
    if p.zero_sign == ZeroSign.IEEE754 and spec.kernel_code(p) in _ZERO_754_KERNELS:
        changes["zero_sign"] = ZeroSign.IEEE
    return p.with_(**changes) if changes else p


def supports(dp) -> bool:
    """Whether the C library computes datapath ``dp`` bit for bit as golden: golden.kernels models
    its :func:`core_params` (the C kernels port those), and the fields of :class:`CSlot` are read in C.
    (Unlike :func:`golden.kernels.handles`, no check of numba's fma: C99's fma is correctly rounded.)"""
    p = dp.params
    if p.zero_sign == ZeroSign.IEEE754 and spec.kernel_code(p) not in _ZERO_754_KERNELS \
            and ZeroSign.IEEE754 not in algorithms.ALGORITHMS[p.base].describes.get("zero_sign", ()):
        return False
    return spec.supports(core_params(p), dp.formats, dp.k, dp.scale_format, dp.block_size)


def build_design(dp):
    """``(fmts, vtab, etab, prm)`` of datapath ``dp`` for the C kernels: :func:`golden.kernels.spec.build`
    of its :func:`core_params`, the parameter vector extended by the :class:`CSlot` slots
    (:data:`C_NPARAMS` int64)."""
    import numpy as np
    p = dp.params
    fmts, vtab, etab, prm = spec.build(core_params(p), tuple(dp.formats), dp.scale_format, dp.block_size, dp.k)
    extra = np.zeros(len(CSlot), np.int64)
    extra[CSlot.EXACT] = int(p.F == EXACT)
    extra[CSlot.NAN_SET] = int(p.nan_bits is not None)
    extra[CSlot.NAN_BITS] = p.nan_bits or 0
    extra[CSlot.FMA_MODE] = Rounding(p.fma_rounding).code
    extra[CSlot.ZERO_754] = int(p.zero_sign == ZeroSign.IEEE754)
    return fmts, vtab, etab, np.concatenate([prm, extra])

# every name of golden.kernels.spec (and golden.algorithms) the C kernels read
SPEC_NAMES = (
    "EXP_BITS", "MAN_BITS", "BIAS", "SIGNED", "EMIN", "EMAX", "MAX_MANTISSA", "VALUE_BITS", "IGNORED_LOW",
    "NAN_KIND", "TABLE_OFF", "NAN_BITS", "INF_BITS", "MAX_BITS", "HAS_INF", "FNUZ", "WORD32", "EXP_TAB_OFF",
    "SUBNORMALS", "FORMAT_COLUMNS", "NAN_IEEE", "NAN_ALL_ONES", "NAN_NEG_ZERO", "NAN_MAX_EXP", "NAN_NONE",
    *(mode.name for mode in Rounding), "OVERFLOW_INF", "OVERFLOW_IEEE", "A", "B", "CF", "D", "S", "SLOTS",
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
    for slot in CSlot:
        lines.append(f"#define GS_P_{slot.name} ({spec.NPARAMS + int(slot)}LL)")
    lines.append(f"#define GS_C_NPARAMS ({C_NPARAMS}LL)")
    return "\n".join(lines + ["", "#endif", ""])


def write_spec_header(folder) -> Path:
    """Write ``golden_spec.h`` into ``folder`` (made if missing); its path."""
    path = Path(folder) / "golden_spec.h"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(spec_header())
    return path


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ints(values) -> str:
    return "{" + ", ".join(f"{int(v)}LL" if abs(int(v)) > 2**31 - 1 else str(int(v)) for v in values) + "}"


def _supported():
    from .catalog import CATALOG
    return [ins for ins in CATALOG if supports(ins.datapath)]


def custom_instructions(specs=()) -> list:
    """The instructions of your own (:mod:`golden.custom` specs, any spelling) a build adds to the
    catalog, under architecture ``custom`` and their canonical spec as name.

    Raises
    ------
    ValueError
        A spec golden refuses, or a design no compiled kernel models (the C library has no numpy path)."""
    from .catalog import CUSTOM, lookup
    out = []
    for text in specs:
        ins = lookup(CUSTOM, text)
        if not supports(ins.datapath):
            raise ValueError(f"custom instruction {ins.name}: no C kernel models this design "
                             f"(golden.c_library.supports is false), so the C library cannot compute it")
        if ins not in out:
            out.append(ins)
    return out


def catalog_source(custom=()) -> str:
    """``golden_catalog.inc``: the C library's catalog, written from :data:`golden.CATALOG`, and
    the instructions of your own in ``custom`` (:func:`custom_instructions`).

    Designs (format rows, parameters, orders, table layouts) are deduplicated: entries sharing a
    datapath share its rows, and a table layout (which formats are tabled at which offsets) is built
    once in C however many designs use it."""
    import numpy as np

    from .catalog import _ARCH_ALIASES, ARCHITECTURES, CATALOG, CUSTOM
    from .datapath import pass_order
    from .formats import get_format

    customs = custom_instructions(custom)
    entries = _supported() + customs
    designs, design_ix = [], {}
    layouts, layout_ix = [], {}
    rows, row_ix = [], {}
    orders, order_ix = [], {}

    def _key(dp):
        return (dp.params, tuple(dp.formats), dp.k, dp.scale_format, dp.block_size)

    def row_id(fmt) -> int:
        if fmt.name not in row_ix:
            row_ix[fmt.name] = len(rows)
            rows.append((fmt.name, spec.format_row(fmt, -1, -1)))
        return row_ix[fmt.name]

    for ins in entries:
        dp = ins.datapath
        key = (dp.params, tuple(dp.formats), dp.k, dp.scale_format, dp.block_size)
        if key in design_ix:
            continue
        fmts, vtab, _, prm = build_design(dp)
        slots = [*dp.formats, dp.scale_format or dp.formats[3]]
        low = get_format(dp.params.operand_format) if dp.params.operand_format else None
        segs = []
        for slot, fmt in enumerate(slots):
            off = int(fmts[slot][spec.TABLE_OFF])
            if off >= 0:
                lowered = low if slot in (spec.A, spec.B) else None
                seg = (off, 1 << fmt.value_bits, row_id(fmt), -1 if lowered is None else row_id(lowered))
                if seg not in segs:
                    segs.append(seg)
        lay = (tuple(segs), len(vtab) if segs else 0)
        if lay not in layout_ix:
            layout_ix[lay] = len(layouts)
            layouts.append(lay)
        p = dp.params
        oid = -1
        if p.pass_interleave is not None:
            order = tuple(int(x) for x in pass_order(dp.k, p.pass_size, p.pass_interleave))
            if order not in order_ix:
                order_ix[order] = len(orders)
                orders.append(order)
            oid = order_ix[order]
        design_ix[key] = len(designs)
        designs.append((np.asarray(fmts).reshape(-1), np.asarray(prm), layout_ix[lay], oid, dp.k,
                        int(spec.kernel_code(p))))

    out = ["/* golden_catalog.inc: written by golden.c_library from golden.CATALOG; do not edit.",
           " * Included by golden_c/src/api.c, which defines the types. */", ""]
    out.append(f"#define GC_NROWS {len(rows)}")
    out.append(f"#define GC_NDESIGNS {len(designs)}")
    out.append(f"#define GC_NLAYOUTS {len(layouts)}")
    out.append(f"#define GC_NENTRIES {len(entries)}")
    out.append(f"#define GC_MAXK {max([d[4] for d in designs] + [1])}")
    out.append("")
    out.append("static const char *const GC_ROW_NAMES[GC_NROWS] = {" + ", ".join(_c_string(n) for n, _ in rows) + "};")
    out.append("static const int64_t GC_ROWS[GC_NROWS][GS_FORMAT_COLUMNS] = {")
    out += [f"    {_ints(r)}, /* {n} */" for n, r in rows]
    out.append("};")
    nseg = sum(len(s) for s, _ in layouts)
    out.append(f"static const gc_segment GC_SEGMENTS[{max(nseg, 1)}] = {{")
    first = []
    for segs, _ in layouts:
        first.append(sum(len(s) for s, _ in layouts[:len(first)]))
        out += [f"    {{{o}, {n}, {r}, {lo}}}," for o, n, r, lo in segs]
    if not nseg:
        out.append("    {0, 0, 0, -1},")
    out.append("};")
    out.append("static const gc_layout GC_LAYOUTS[GC_NLAYOUTS] = {")
    out += [f"    {{{f}, {len(segs)}, {size}}}," for f, (segs, size) in zip(first, layouts)]
    out.append("};")
    out.append(f"static const int64_t GC_ORDERS[{max(len(orders), 1)}][GC_MAXK] = {{")
    out += [f"    {_ints(o)}," for o in orders] or ["    {0},"]
    out.append("};")
    out.append("static const gc_design GC_DESIGNS[GC_NDESIGNS] = {")
    for fm, prm, lay, oid, k, code in designs:
        out.append(f"    {{{code}, {k}, {lay}, {oid}, {_ints(fm)}, {_ints(prm)}}},")
    out.append("};")
    out.append("static const gc_entry GC_ENTRIES[GC_NENTRIES] = {")
    shapes = []
    for ins in entries:
        dp = ins.datapath
        d = design_ix[(dp.params, tuple(dp.formats), dp.k, dp.scale_format, dp.block_size)]
        names = "|".join((ins.ptx, *ins.aliases))
        fmts = [ins.a_format, ins.b_format, ins.c_format, ins.d_format, ins.scale_format]
        start = len(shapes)
        shapes += list(ins.shapes) or [(ins.m, ins.n)]
        default = start + (list(ins.shapes).index((ins.m, ins.n)) if (ins.m, ins.n) in ins.shapes else 0)
        fnames = ", ".join(_c_string(f) if f else "NULL" for f in fmts)
        bits = [get_format(f).storage_bits if f else 0 for f in fmts]
        out.append(f"    {{{_c_string(ins.arch)}, {_c_string(ins.name)}, {_c_string(names)}, "
                   f"{_c_string(ins.algorithm)}, {ins.k}, {ins.block_size or 0}, {d}, "
                   f"{get_format(ins.d_format).dtype().itemsize}, {{{fnames}}}, {_ints(bits)}, {start}, "
                   f"{len(shapes) - start}, {default}}},")
    out.append("};")
    out.append(f"#define GC_NINSTR {len(shapes)}")
    out.append("static const mma_golden_instr GC_INSTR[GC_NINSTR] = {")
    e = 0
    for i, ins in enumerate(entries):
        for m, n in (list(ins.shapes) or [(ins.m, ins.n)]):
            out.append(f"    {{&GC_ENTRIES[{i}], &GC_DESIGNS[{design_ix[_key(ins.datapath)]}], {m}, {n}, NULL}},")
            e += 1
    out.append("};")
    arches = list(ARCHITECTURES) + ([CUSTOM] if customs else [])
    out.append(f"#define GC_NARCH {len(arches)}")
    out.append("static const char *const GC_ARCHES[GC_NARCH] = {" + ", ".join(map(_c_string, arches)) + "};")
    out.append(f"#define GC_NALIASES {len(_ARCH_ALIASES)}")
    out.append("static const char *const GC_ARCH_ALIASES[GC_NALIASES][2] = {")
    out += [f"    {{{_c_string(k)}, {_c_string(v)}}}," for k, v in sorted(_ARCH_ALIASES.items())]
    out.append("};")
    missing = [ins for ins in CATALOG if ins not in entries]
    out.append(f"#define GC_NMISSING {len(missing)}")
    out.append(f"static const char *const GC_MISSING[{max(len(missing), 1)}][2] = {{")
    out += [f"    {{{_c_string(i.arch)}, {_c_string(i.name)}}}," for i in missing] or ["    {NULL, NULL},"]
    out.append("};")
    return "\n".join(out) + "\n"


# Params field kinds as golden.params.Field.kind names them, as C codes (golden_runtime.inc's GR_FIELDS)
FIELD_KINDS = ("int", "bool", "word", "format", "algorithm")


def _word_code(spec_field, word) -> int:
    """What the kernels' parameter vector holds for a word: its rules enum's ``code`` where it has one
    (roundings, overflow rules), else its index among the field's words."""
    member = spec_field.enum(word)
    return int(member.code) if hasattr(member, "code") else spec_field.words.index(word)


def _terms_rule(alg) -> tuple[int, int, int]:
    """``(int_bits, per_group, plus)``: an algorithm's ``terms(p, L)`` as ``L // (group if per_group
    else 1) + plus`` terms of ``int_bits`` integer bits, read off its descriptor (checked on a few L)."""
    from types import SimpleNamespace
    g = 4
    int_bits, t1 = alg.terms(SimpleNamespace(group=g), 8 * g)
    per_group = int(alg.terms(SimpleNamespace(group=g), 16 * g)[1] - t1 == 8)
    plus = t1 - (8 if per_group else 8 * g)
    for L, grp in ((16, 16), (32, 8), (64, 2), (48, 16)):
        if alg.terms(SimpleNamespace(group=grp), L) != (int_bits, L // (grp if per_group else 1) + plus):
            raise ValueError(f"{alg.name}'s exact_terms is not L // group + c or L + c: the C library's "
                             "run-time designs cannot bound it (golden.c_library._terms_rule)")
    return int_bits, per_group, plus


def runtime_source() -> str:
    """``golden_runtime.inc``: what ``golden_c/src/runtime.c`` needs to build a design of your own at run
    time (``mma_golden_from_spec``) without golden: every :data:`golden.params.FIELDS` field (kind,
    words and the codes the kernels take, smallest value, default), every algorithm descriptor
    (kernel, fields read and required, values it describes, its exact-sum bound), every format's row
    (:func:`golden.kernels.spec.format_row`) and facts, and the shape and format fields of
    :mod:`golden.custom`'s grammar."""
    import dataclasses

    from .custom import FORMAT_FIELDS, SHAPE_FIELDS, scale_formats
    from .descriptors import ALGORITHMS
    from .formats import FORMATS
    from .params import FIELDS, Params

    names = list(FIELDS)
    defaults = {f.name: f.default for f in dataclasses.fields(Params)}
    out = ["/* golden_runtime.inc: written by golden.c_library from golden.params.FIELDS, golden.descriptors and",
           " * golden.formats; do not edit.  Included by golden_c/src/runtime.c, which defines the types. */", ""]
    for i, kind in enumerate(FIELD_KINDS):
        out.append(f"#define GR_KIND_{kind.upper()} {i}")
    out.append(f"#define GR_NFIELDS {len(names)}")
    for i, name in enumerate(names):
        out.append(f"#define GR_F_{name.upper()} {i}")
        spec_field = FIELDS[name]
        for w in spec_field.words:
            out.append(f"#define GR_W_{name.upper()}_{str(w).upper()} {_word_code(spec_field, w)}")
    out.append("static const gr_field GR_FIELDS[GR_NFIELDS] = {")
    for name in names:
        f = FIELDS[name]
        words = list(f.words) if f.kind == "word" else list(ALGORITHMS) if f.kind == "algorithm" else []
        codes = [_word_code(f, w) for w in words] if f.kind == "word" else list(range(len(words)))
        d = defaults.get(name, dataclasses.MISSING)
        dnone = int(d is None or d is dataclasses.MISSING)
        dval = 0 if dnone else (codes[words.index(d)] if f.kind == "word" else int(d))
        low = "INT64_MIN" if f.low is None else str(f.low)
        out.append(f"    {{{_c_string(name)}, {FIELD_KINDS.index(f.kind)}, {low}, {int(f.none)}, "
                   f"{_c_string(f.extra) if f.extra else 'NULL'}, {_c_string('|'.join(map(str, words)))}, "
                   f"{_ints(codes + [0] * (8 - len(codes)))}, {dnone}, {dval}LL}},")
    out.append("};")
    out.append(f"#define GR_NALGS {len(ALGORITHMS)}")
    out.append("static const gr_algorithm GR_ALGS[GR_NALGS] = {")
    for alg in ALGORITHMS.values():
        reads = sum(1 << names.index(n) for n in alg.fields_read)
        needs = sum(1 << names.index(n) for n in alg.requires)
        desc = [(names.index(n), _word_code(FIELDS[n], v) if FIELDS[n].kind == "word" else int(v))
                for n, vs in alg.describes.items() for v in vs]
        desc += [(-1, 0)] * (4 - len(desc))
        int_bits, per_group, plus = _terms_rule(alg)
        out.append(f"    {{{_c_string(alg.name)}, {int(alg.kernel_code)}, {int(alg.chained)}, {int(alg.exact_F)}, "
                   f"{int(alg.lowering)}, {reads}LL, {needs}LL, {{{', '.join(f'{{{a}, {b}}}' for a, b in desc)}}}, "
                   f"{int_bits}, {per_group}, {plus}}},")
    out.append("};")
    scales = scale_formats()
    out.append(f"#define GR_NFORMATS {len(FORMATS)}")
    out.append("static const gr_format GR_FORMATS[GR_NFORMATS] = {")
    for name, fmt in FORMATS.items():
        out.append(f"    {{{_c_string(name)}, {fmt.storage_bits}, {fmt.dtype().itemsize}, {int(spec._decodable(fmt))}, "
                   f"{int(spec._plain_output(fmt))}, {int(name in scales)}, {_ints(spec.format_row(fmt, -1, -1))}}},")
    out.append("};")
    shape = list(SHAPE_FIELDS) + list(FORMAT_FIELDS)
    out.append(f"#define GR_NSHAPE {len(shape)}")
    out.append("static const char *const GR_SHAPE_FIELDS[GR_NSHAPE] = {" + ", ".join(map(_c_string, shape)) + "};")
    for i, name in enumerate(shape):
        out.append(f"#define GR_S_{name.upper()} {i}")
    return "\n".join(out) + "\n"


def write_runtime(folder) -> Path:
    """Write ``golden_runtime.inc`` into ``folder`` (made if missing); its path."""
    path = Path(folder) / "golden_runtime.inc"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(runtime_source())
    return path


def write_catalog(folder, custom=()) -> Path:
    """Write ``golden_catalog.inc`` into ``folder`` (made if missing); its path."""
    path = Path(folder) / "golden_catalog.inc"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(catalog_source(custom))
    return path


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: python -m golden.c_library DIR [CUSTOM_SPEC ...]   (writes DIR/golden_spec.h and "
              "DIR/golden_catalog.inc; custom specs: golden.custom's grammar)", file=sys.stderr)
        sys.exit(2)
    print(write_spec_header(sys.argv[1]))
    print(write_catalog(sys.argv[1], sys.argv[2:]))
    print(write_runtime(sys.argv[1]))
