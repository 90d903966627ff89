"""From probe results to an algorithm family and its parameters, and the comparison with the catalog."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import golden
import golden.descriptors
from golden import Instruction
from golden.descriptors import Part, part
from golden.rules import Overflow, Rounding, ZeroSign

from . import probes as P
from .algorithms import Evidence, Field, recognise
from .probes.specials import NAN_PATTERNS, Case, Outcome
from .rig import Rig
from .verify import (
    VERIFY_ROWS,
    FieldStatus,
    exact_reference,
    inferred_params,
    is_lowering,
    nan_field,
    outside_the_nine,
    special_differences,
    verification_vectors,
    verify,
)


@dataclass
class Report:
    ins: Instruction
    backend: str
    base: str | None
    family: str | None
    fields: dict
    facts: dict
    differences: list
    unobserved: list
    seconds: float = 0.0
    rows: int = 0
    calls: int = 0
    skipped: str | None = None
    outside: list = None                 # behaviour no Params of the nine algorithms describes, in words
    verification: dict = None            # the inferred Params against the device (verify.verify)
    exact: dict = None                   # the device against the exact sum rounded once (verify.exact_reference)
    lowering: str | None = None          # the entry is a compiled lowering: not inferred, verified
    checks: list = None                  # the differences beyond the fields (special values, verification)
    inferred: object = None              # the inferred golden.Params (None: no algorithm inferred)

    def matches_for(self, ins) -> bool:
        """The verdict for another instruction of the same datapath (``--group``): its own field
        comparison, the same special-value and verification checks."""
        fields = [] if is_lowering(ins.params) else compare(ins, self.base, self.family, self.fields)[0]
        return not fields and not self.checks

    @property
    def matches(self) -> bool:
        return not self.differences

    def to_json(self) -> dict:
        ins = self.ins
        return {
            "arch": ins.arch, "instruction": ins.name, "backend": self.backend,
            "interface": {"a": ins.a_format, "b": ins.b_format, "c": ins.c_format, "d": ins.d_format, "k": ins.k,
                          "scale": ins.scale_format, "block": ins.block_size},
            "inferred": {"algorithm": self.family, "base": self.base,
                         "params": {k: v.to_json() for k, v in self.fields.items()}},
            "catalog": {"algorithm": ins.algorithm,
                        "params": {k: getattr(ins.params, k) for k in ins.params.fields_read}},
            "comparison": "matches" if self.matches else self.differences,
            "not_observable": self.unobserved,
            "outside_the_nine": self.outside or [],
            "verification": self.verification, "exact_reference": self.exact, "lowering": self.lowering,
            "facts": _jsonable(self.facts),
            "probe_rows": self.rows, "backend_calls": self.calls, "seconds": round(self.seconds, 3),
        }

    def summary(self) -> str:
        return "matches" if self.matches else "DIFFERS: " + "; ".join(self.differences)

    def text(self) -> str:
        ins, f = self.ins, self.facts
        L = [f"{ins.arch} {ins.name} on {self.backend}: "
             f"{ins.a_format}*{ins.b_format}+{ins.c_format}->{ins.d_format}, K={ins.k}"
             + (f", scales {ins.scale_format}/{ins.block_size}" if ins.scale_format else "")]
        L.append(f"inferred: {self.family or '?'}  " + "  ".join(
            f"{k}={_shown(k, v.value)}" + _MARK[v.status] for k, v in self.fields.items()))
        L.append(f"catalog:  {ins.algorithm}  " + "  ".join(
            f"{k}={_shown(k, getattr(ins.params, k))}" for k in ins.params.fields_read))
        L.append(f"comparison: {self.summary()}")
        if self.lowering:
            L.append(f"not inferred: {self.lowering}")
        for line in self.outside or []:
            L.append(f"outside the nine algorithms: {line}")
        L += self._checks()
        if self.unobserved:
            L.append("not observable black-box here: " + "; ".join(self.unobserved))
        L.append("")
        ind = f.get("independence", {})
        L.append(f"[III-B] element independence: {'yes' if ind.get('independent') else 'NO'} "
                 f"({ind.get('vectors')} random dot-adds, forward, reversed, interleaved)")
        tr = f.get("tree", {})
        if tr.get("feasible"):
            L.append(f"[III-C] summation tree (X=2^{tr['X']}, y=2^{tr['y']}): {tr['text']}")
        else:
            L.append(f"[III-C] summation tree not observable: {tr.get('reason')}")
        st = f.get("structure", {})
        L.append(f"        structure: {st.get('kind')} (from {st.get('source')}); passes {st.get('passes')}"
                 if st.get("kind") == "fused" else
                 f"        structure: {st.get('kind')}; groups after c: {st.get('groups')}")
        if st.get("exact_groups"):
            L.append(f"        summed exactly first: {st['exact_groups']}")
        L.append(f"[III-D] result precision: {f['output_precision']['bits']} fraction bits")
        prec = f.get("precision", {}).get("per_summand", {})
        if prec:
            L.append("[III-D] bits kept after the radix point, per summand (+eps / -eps), and the alignment rounding:")
            for k, v in sorted(prec.items()):
                nm = "c" if k == ins.k else f"#{k}"
                b = f"{v['bits']}" + ("" if v.get("exact") else "+")
                nb = v.get("neg_bits")
                nbs = "" if nb is None else f" / {nb}" + ("" if v.get("neg_exact") else "+")
                r = P.rounding_name(v.get("rounding")) if v.get("rounding") else None
                L.append(f"        {nm:>4s}: {b}{nbs}" + (f"  {r}" if r else ""))
        orr = f.get("output_rounding", {})
        L.append(f"[III-E] result rounding (Tables I, II): {P.rounding_name(orr) or '?'}  "
                 f"observed {orr.get('observed')}")
        L.append("[III-F] special values:")
        for k, v in f.get("special", {}).items():
            if k == NAN_PATTERNS:
                continue
            L.append(f"        {Case(k).value}: {v}")
        if f.get("special", {}).get(NAN_PATTERNS):
            L.append("        NaN results: " + ", ".join(f"{b:#x}" for b in f["special"][NAN_PATTERNS]))
        for key, label in (("e_zero", "zero terms' exponent"), ("c_drop", "small-c drop"),
                           ("disputed", "CDNA3's disputed special values"),
                           ("alignment_reference", "alignment reference"), ("fasi", "Fasi et al.")):
            if key in f:
                L.append(f"[extra] {label}: {f[key]}")
        L.append(f"({self.rows} dot-adds in {self.calls} backend calls, {self.seconds:.2f} s)")
        return "\n".join(L)


_MARK = {FieldStatus.MEASURED: "", FieldStatus.BOUND: "(bound)", FieldStatus.UNOBSERVABLE: "?"}  # text report marks


def _checks_text(self) -> list[str]:
    """The verification and exact-reference lines of the text report."""
    L = []
    v = self.verification or {}
    if "rows" in v:
        if v["mismatches"]:
            L.append(f"verification: not reproduced: {v['mismatches']:,} of {v['rows']:,} random and structured "
                     "dot-adds differ from the inferred parameters; first:")
            L += [f"        {e}" for e in v["examples"]]
        else:
            L.append(f"verification: reproduced ({v['rows']:,} random and structured dot-adds, bit for bit)")
    elif v.get("reason"):
        L.append(f"verification: not run: {v['reason']}")
    x = self.exact
    if x:
        L.append(f"exact reference (the exact sum rounded once; {x['rows']:,} dot-adds): " + ", ".join(
            f"{m} {n:,}" for m, n in x["equal"].items()) + " equal")
        if x.get("claimed") and x["examples"]:
            L.append(f"        not the exact sum rounded {x['claimed']} on "
                     f"{x['rows'] - x['equal'][x['claimed']]:,}; first:")
            L += [f"        {e}" for e in x["examples"]]
    return L


Report._checks = _checks_text


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items() if k != "tree"}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return repr(x)
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    return str(x)


def probe(ins: Instruction, backend, name: str | None = None, rows: int = VERIFY_ROWS) -> Report:
    """Run every probe on ``backend`` for ``ins`` and infer the algorithm (see the package docstring);
    ``rows``: dot-adds of the verification (at least 64; the exact reference takes up to 1,024 of them)."""
    if not isinstance(rows, int) or isinstance(rows, bool) or rows < 64:
        raise ValueError(f"rows (the verification's dot-adds) must be an integer >= 64, not {rows!r}")
    t0 = time.perf_counter()
    rig = Rig(ins, backend, name)
    K = ins.k
    facts: dict = {}
    facts["independence"] = P.independence(rig)
    op = P.output_precision(rig)
    facts["output_precision"] = op
    p_out = op["bits"]
    tr = P.summation_tree(rig)
    facts["tree"] = {k: v for k, v in tr.items() if k != "tree"}
    pm = None
    if not tr.get("feasible"):
        pm = P.pass_membership(rig, p_out)
        facts["pass_membership"] = pm
    st = P.structure(tr, pm, K)
    facts["structure"] = st
    if st["binary"]:
        facts["precision"] = P.binary_precision(rig, st)
    elif st["kind"] == "fused":
        facts["precision"] = P.fused_precision(rig, st)
    orr = P.output_rounding(rig, p_out)
    facts["output_rounding"] = orr
    mode = P.rounding_name(orr)
    facts["special"] = P.special_values(rig, p_out)
    fields: dict = {}
    ev = Evidence(rig, facts, st, p_out, mode)
    base = recognise(ev)                 # the first algorithm whose probe part (probe.algorithms) says yes
    if base is not None:
        part(base, Part.PROBE).infer(ev, fields)
    fields["out_rounding"] = Field(mode, FieldStatus.MEASURED if mode else FieldStatus.UNOBSERVABLE,
                                   "result rounding (Tables I, II)")
    fd = ins.formats[3]
    fields["out_frac_bits"] = Field(p_out if p_out < fd.man_bits else None,
                                    FieldStatus.MEASURED if op["exact"] else FieldStatus.BOUND,
                                    "result fraction bits when fewer than the format's")
    sv = facts["special"]
    bound_cases = [v for k, v in sv.items() if k == Case.MAX_PLUS_1U]
    if mode in (Rounding.RZ, Rounding.RD) and bound_cases and bound_cases[0] in (Outcome.INF, Outcome.MAX):
        word = (Overflow.INF if bound_cases[0] == Outcome.INF else Overflow.IEEE).value
        fields["overflow"] = Field(word, FieldStatus.MEASURED, "max + 1 ulp under RZ: infinity ('inf') or max ('ieee')")
    else:
        fields["overflow"] = Field(None, FieldStatus.UNOBSERVABLE,
                                   "needs an RZ/RD result and a sum reaching max + 1 ulp")
    zt = sv.get(Case.TINY_NEGATIVE)
    if zt in (Outcome.NEG_ZERO, Outcome.POS_ZERO):
        # ieee754 also gives a sum of -0 terms -0 (where "ieee" gives +0)
        word = (ZeroSign.POSITIVE if zt == Outcome.POS_ZERO else ZeroSign.IEEE754
                if sv.get(Case.NEG_ZERO_SUM) == Outcome.NEG_ZERO else ZeroSign.IEEE).value
        fields["zero_sign"] = Field(word, FieldStatus.MEASURED, "sign of a negative result that rounds to zero, "
                                                      "and of a sum of -0 terms")
    else:
        fields["zero_sign"] = Field(None, FieldStatus.UNOBSERVABLE, "no negative product small enough to round to zero")
    po = sv.get(Case.PRODUCT_OVERFLOW)
    fields["product_overflow"] = Field(po == Outcome.OVERFLOWS, FieldStatus.MEASURED, "") \
        if po in (Outcome.OVERFLOWS, Outcome.EXACT) else \
        Field(None, FieldStatus.UNOBSERVABLE, "products cannot reach 2^(emax+1) with these formats")
    subs = [v for k, v in sv.items() if k in (Case.SUBNORMAL_A, Case.SUBNORMAL_B, Case.SUBNORMAL_C,
                                               Case.SUBNORMAL_PRODUCT, Case.SUBNORMAL_SUM)]
    fields["flush_subnormals"] = Field(any(v == Outcome.FLUSHED for v in subs),
                                       FieldStatus.MEASURED if subs else FieldStatus.UNOBSERVABLE,
                                       "subnormal inputs, products or sums flushed")
    if base is None:                     # no algorithm: only what every design has
        for nm in ("out_rounding", "out_frac_bits", "overflow"):
            fields.pop(nm, None)
    entry_sv = P.special_values(Rig(ins, golden.dot_add, "catalog"), p_out)     # the same rows on the entry
    nb, nb_note = nan_field(ins, sv, entry_sv)
    fields["nan_bits"] = Field(nb, FieldStatus.MEASURED if sv.get(NAN_PATTERNS) else FieldStatus.UNOBSERVABLE, nb_note)
    if base is not None:                 # only what the algorithm reads: golden's descriptor is the truth
        keep = set(golden.descriptors.ALGORITHMS[base].fields_read)
        fields = {k: v for k, v in fields.items() if k in keep}
    # the Fasi et al. tests
    facts["fasi"] = P.fasi(rig, p_out, mode)
    # comparison
    family = None if base is None else (("Co" if fields.get("pass_size") and fields["pass_size"].value
                                         and fields["pass_size"].value < K else "") + base)
    lowering = None
    if is_lowering(ins.params):
        lowering = ("the entry is a compiled lowering (" + ", ".join(
            f"{k}={getattr(ins.params, k)}" for k in ("operand_format", "pass_interleave", "c_last")) +
            "): the probe infers native datapaths; the entry's own parameters are verified instead")
        diffs, unobs = [], []
    else:
        diffs, unobs = compare(ins, base, family, fields)
    checks = special_differences(sv, entry_sv)
    rounding = (fields.get("fma_rounding") or fields.get("out_rounding") or Field()).value
    params, why = inferred_params(ins, base, fields)
    try:
        model_sv = None if params is None else P.special_values(Rig(_model(ins, params), golden.dot_add), p_out)
    except ValueError:
        model_sv = None
    outside = outside_the_nine(base, facts, rounding or mode, model_sv)
    vectors = verification_vectors(rig, rows)
    try:
        ver = verify(rig, params, vectors) if params is not None else None
    except ValueError as e:                      # golden cannot run the inferred design
        params, why = None, f"golden cannot run the inferred parameters ({e})"
    if params is not None:
        special = special_differences(sv, model_sv)
        ver["mismatches"] += len(special)           # the special-value rows count among the checked ones
        ver["rows"] += len(special)
        ver["examples"] = special[:1] + ver["examples"]
        if ver["mismatches"]:
            checks.append(f"not reproduced: {ver['mismatches']} of {ver['rows']} dot-adds differ from the "
                          "inferred parameters")
    else:
        ver = {"reason": why}
        if base is not None:
            checks.append(f"not reproduced: {why}")
    exact = exact_reference(rig, vectors, rounding if rounding in set(Rounding) else None)
    return Report(ins, rig.name, base, family, fields, facts, diffs + checks, unobs, time.perf_counter() - t0,
                  rig.rows, rig.calls, outside=outside, verification=ver, exact=exact, lowering=lowering,
                  checks=checks, inferred=params)


def _model(ins, p):
    return ins.with_params(p)


def _shown(name: str, value) -> str:
    """A field's value as the reports write it (bit patterns in hex)."""
    return f"{value:#x}" if name == "nan_bits" and isinstance(value, int) else str(value)


def compare(ins: Instruction, base, family, fields) -> tuple[list, list]:
    """Differences from the catalog entry (exact texts) and the fields this probe could not see."""
    cat = ins.params
    diffs, unobs = [], []
    if base != cat.base or family != ins.algorithm:
        diffs.append(f"algorithm: catalog {ins.algorithm}, probed {family or 'unknown'}")
    for nm in cat.fields_read:
        want = getattr(cat, nm)
        f = fields.get(nm)
        if f is None or f.status is FieldStatus.UNOBSERVABLE:
            unobs.append(f"{nm} (catalog {want})" + (f": {f.note}" if f and f.note else ""))
            continue
        if f.status is FieldStatus.BOUND:
            if f.upper is not None and want is not None and want > f.upper:
                diffs.append(f"{nm}: catalog {want}, probed at most {f.upper}")
            else:
                unobs.append(f"{nm} (catalog {want}): only bounded, <= {f.upper}")
            continue
        if f.value != want:
            diffs.append(f"{nm}: catalog {_shown(nm, want)}, probed {_shown(nm, f.value)}")
    return diffs, unobs


def dumps(reports) -> str:
    return json.dumps([r.to_json() for r in reports] if isinstance(reports, list) else reports.to_json(), indent=2)
