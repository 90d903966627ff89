"""The stage parameters the catalog uses: every unit's datapath built by hw and walked.

:func:`stage_cases` elaborates the datapath of every distinct catalog datapath (and the union
decoders of every architecture's tensor core), collects the parameters of each stage it finds
(rounders, normalisers, alignment shifters, compressor trees, exponent-max trees, multipliers,
decoders), deduplicates them and records which units use each.  Elaborating every datapath takes
a minute or two, so the result is cached in ``build/formal/cases.json`` under a hash of the
sources of golden/ and hw/.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

__all__ = ["stage_cases", "KINDS"]

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "build" / "formal" / "cases.json"
KINDS = ("round", "normalise", "align", "compress", "maxexp", "multiply", "decode")


def _sources_hash() -> str:
    h = hashlib.sha256()
    for pkg in ("golden", "hw", "formal"):
        for path in sorted((ROOT / pkg).glob("*.py")):
            if path.name == "catalog.py" or pkg != "formal":
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _round(obj) -> tuple[str, dict]:
    return "round", {"fmt": obj.fmt.name, "mag_bits": obj.mag_bits, "mode": obj.mode, "frac_bits": obj.frac_bits,
                     "overflow": obj.overflow, "flush": obj.flush, "positive_zero": obj.positive_zero,
                     "sticky": obj.sticky, "lod": obj.lod, "cuts": sorted(obj.cuts)}


def _normalise(obj) -> tuple[str, dict]:
    return "normalise", {"sum_bits": obj.sum_bits, "F": obj.F, "fd": obj.fd.name, "frac_bits": obj.p,
                         "rounding": obj.rounding, "overflow": obj.overflow, "positive_zero": obj.positive_zero}


def _align(obj) -> tuple[str, dict]:
    from amaranth import Shape
    return "align", {"sig_bits": Shape.cast(obj.term["sig"].shape).width, "frac": obj.frac, "F": obj.F,
                     "fc": obj.fc.name if obj.fc is not None else None}


def _multiply(obj) -> tuple[str, dict]:
    fa, fb = (obj.fmt, obj.fmt) if hasattr(obj, "fmt") else (obj.fa, obj.fb)
    return "multiply", {"a_bits": fa.man_bits + 1, "b_bits": fb.man_bits + 1}


def _decode(obj) -> tuple[str, dict]:
    from hw.decode import UnionFormat
    if isinstance(obj.fmt, UnionFormat):
        return "decode", {"members": [f.name for f in obj.fmt.members]}
    return "decode", {"members": [obj.fmt.name]}


@functools.cache
def _shared_stages() -> dict:
    """``{stage class: parameters function}`` of the stages every algorithm builds from (hw imported
    here: formal's command line starts without it)."""
    from hw.align import AlignShifters
    from hw.compress import CompressorTree
    from hw.decode import OperandDecode
    from hw.maxexp import MaxExponentTree
    from hw.multiply import MultiplierArray
    from hw.normalise import NormaliseRound
    from hw.round import Rounder
    return {Rounder: _round, NormaliseRound: _normalise, AlignShifters: _align,
            CompressorTree: lambda o: ("compress", {"term_bits": o.term_bits, "n": o.n}),
            MaxExponentTree: lambda o: ("maxexp", {"n": o.n, "levels_per_stage": o.levels_per_stage}),
            MultiplierArray: _multiply, OperandDecode: _decode}


# formal's part of each algorithm descriptor (golden.descriptors): the stages of its own datapath,
# beyond the shared ones, that the proofs take ({"module.Class": parameters function}; by name, so
# that importing formal does not import hw)
ALGORITHM_STAGES = {
    "SFMA": {"hw.fma.FMAMultiply": _multiply},
    "GPS": {"hw.gps.F32Multiply": _multiply},
    "FDA": {}, "GDFS": {}, "FDRDA": {}, "GFDRDA": {},
}


def _register() -> None:
    from golden.descriptors import Part, register
    for name, stages in ALGORITHM_STAGES.items():
        register(name, Part.FORMAL, stages)


_register()


def _params(obj) -> tuple[str, dict] | None:
    """``(kind, parameters)`` of a stage of interest (JSON-able), else None."""
    from golden.descriptors import Part, parts
    own = {name: fn for stages in parts(Part.FORMAL).values() for name, fn in stages.items()}
    fn = own.get(f"{type(obj).__module__}.{type(obj).__qualname__}")
    if fn is None:
        fn = next((f for cls, f in _shared_stages().items() if isinstance(obj, cls)), None)
    return None if fn is None else fn(obj)


def _collect() -> dict:
    from amaranth.hdl import Fragment

    import golden
    from hw.tensor_core import datapath_groups
    from hw.unit import DATAPATHS
    found: dict = {k: {} for k in KINDS}

    def note(obj, unit):
        got = _params(obj)
        if got:
            kind, params = got
            key = json.dumps(params, sort_keys=True)
            found[kind].setdefault(key, set()).add(unit)

    datapaths: dict = {}
    for ins in golden.select("all", "all"):
        if ins.params.base in DATAPATHS:
            datapaths.setdefault(ins.datapath, []).append(f"{ins.arch} {ins.name}")
    for dp, units in datapaths.items():
        stack = [Fragment.get(DATAPATHS[dp.params.base](dp), None)]
        while stack:
            frag = stack.pop()
            for obj in frag.origins or ():
                for unit in units:
                    note(obj, unit)
            stack += [sub for sub, _, _ in frag.subfragments]
    # the tensor cores' union decoders (their groups' a/b formats), without building the cores
    from hw.decode import OperandDecode
    for arch in sorted({i.arch for i in golden.select("all", "all")}):
        members = [i for i in golden.instructions(arch) if i.params.base in DATAPATHS]
        for g in datapath_groups(members):
            for fmt in (g.fa, g.fb):
                for unit in (f"{i.arch} {i.name}" for i in g.members):
                    note(OperandDecode(fmt), unit)
    return {kind: [{"params": json.loads(k), "units": sorted(v)} for k, v in sorted(cases.items())]
            for kind, cases in found.items()}


def stage_cases(refresh: bool = False) -> dict:
    """``{kind: [{"params": {...}, "units": ["arch NAME", ...]}, ...]}`` for every kind of :data:`KINDS`."""
    key = _sources_hash()
    if not refresh and CACHE.exists():
        cached = json.loads(CACHE.read_text())
        if cached.get("key") == key:
            return cached["cases"]
    from hw.pipeline import questions_only
    with questions_only():
        cases = _collect()
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.write_text(json.dumps({"key": key, "cases": cases}, indent=1))
    return cases
