"""What the probe's conclusions are checked against, after the inference.

* :func:`special_differences`: the special-value cases (:class:`probe.probes.specials.Case`) run on
  golden with the catalog entry, case by case against the device: a special value that differs
  from the entry is a difference, not only a fact.
* :func:`outside_the_nine`: behaviour no :class:`golden.Params` describes (a rounding that is not
  RZ/RD/RU/RNE, subnormal results flushed by an algorithm that keeps them, an intermediate overflow
  that is neither infinity nor exact, several NaN patterns), described in words.
* :func:`verify`: the inferred Params run against the device on thousands of random and structured
  dot-adds: "reproduced", or "not reproduced: m of n" with the first counterexamples.
* :func:`exact_reference`: the device against the exact sum rounded once, in each rounding mode,
  so a design that claims a mode and is 1 ulp off somewhere is found.
"""

from __future__ import annotations

import numpy as np

import golden
import golden.vectors
from golden.algorithms import Params
from golden.descriptors import ALGORITHMS
from golden.formats import NAN, ROUNDING_MODES, decode, get_format
from golden.params import EXACT, FIELDS
from golden.rules import Word

from .probes.specials import NAN_PATTERNS, Case, Outcome
from .rig import Row

__all__ = ["FieldStatus", "VERIFY_ROWS", "EXACT_ROWS", "special_differences", "outside_the_nine", "inferred_params",
           "verification_vectors", "verify", "exact_reference", "is_lowering"]

VERIFY_ROWS = 4096          # random and structured dot-adds the inferred Params must reproduce
EXACT_ROWS = 1024           # of them, compared with the exact sum rounded once in each mode
SHOWN = 3                   # counterexamples shown
STRUCTURED_ROWS = 256       # of the verification rows, from the structured generator
LOWERING_FIELDS = ("operand_format", "pass_interleave", "c_last")


class FieldStatus(Word):
    """How the probe saw an inferred field (:class:`probe.algorithms.Field` ``.status``); the word the
    JSON report stores.  Not :class:`golden.provenance.Basis`: that says what a GPU ran for a catalog
    entry, this what the probe's scans resolved."""

    MEASURED = "measured"            # observed: the value is the device's
    BOUND = "bound"                  # only bounded: ``Field.upper`` is the largest value consistent with the scans
    UNOBSERVABLE = "unobservable"    # these formats or this rig cannot show it


def is_lowering(p: Params) -> bool:
    """A compiled path (a lowering onto another instruction), which the probe does not infer."""
    return p.operand_format is not None or p.pass_interleave is not None or p.c_last


def special_differences(device: dict, entry: dict) -> list[str]:
    """``special value CASE: catalog X, probed Y`` for every case both ran whose outcome differs."""
    out = []
    for case, want in entry.items():
        if case == NAN_PATTERNS or case not in device:
            continue
        got = device[case]
        if got is not None and want is not None and got != want:
            out.append(f"special value {Case(case).value}: catalog {want}, probed {got}")
    return out


def nan_field(ins, device: dict, entry: dict):
    """``(value, note)`` of ``nan_bits``: the entry's own where the device's NaN results are the entry's (or
    the entry leaves the payload open), the one pattern otherwise; a note when there are several."""
    got, want = device.get(NAN_PATTERNS, []), entry.get(NAN_PATTERNS, [])
    if not got or got == want:
        return ins.params.nan_bits, "NaN results as the entry's"
    shown = ", ".join(f"{b:#x}" for b in got)
    if len(got) > 1:
        return None, f"several NaN patterns ({shown})"
    if not ins.exact_nan:
        return None, f"the entry leaves NaN payloads open; the device gives {shown}"
    return got[0], f"every NaN result is {shown}"


def outside_the_nine(base, facts: dict, rounding: str | None, model: dict | None = None) -> list[str]:
    """Behaviour that no Params of the nine algorithms describes, in words.  ``model``: the special
    values of the inferred Params on the same rows; a case they reproduce is not outside."""
    out = []
    sv = dict(facts.get("special", {}))
    for c in list(sv):
        if model is not None and c != NAN_PATTERNS and model.get(c) == sv[c]:
            sv.pop(c)
    if rounding and rounding not in ROUNDING_MODES:
        out.append(f"the result rounding is {rounding} (Tables I and II), not one of "
                   f"{', '.join(ROUNDING_MODES)}: e.g. ties rounded up through a sticky bit")
    flushed = [c.value for c in (Case.SUBNORMAL_SUM, Case.SUBNORMAL_PRODUCT, Case.SUBNORMAL_C)
               if sv.get(c) == Outcome.FLUSHED]
    if flushed and base is not None and not ALGORITHMS[base].flushes:
        out.append(f"subnormal values flushed to zero ({', '.join(flushed)}: a subnormal result, or a "
                   f"subnormal input), which {base} keeps")
    for c in (Case.MAX_PLUS_1U, Case.MIN_MINUS_1U):
        v = sv.get(c)
        if v not in (None, Outcome.INF, Outcome.MAX):
            out.append(f"{c.value} gives {v}, neither infinity nor the largest finite value "
                       "(an accumulator that wraps on overflow)")
    for c in (Case.INTERMEDIATE_OVERFLOW, Case.INTERMEDIATE_OVERFLOW_C_FIRST):
        v = sv.get(c)
        if v not in (None, Outcome.OVERFLOWS, Outcome.EXACT):
            out.append(f"{c.value} gives {v}, neither infinity nor the exact result "
                       "(an accumulator that wraps or saturates)")
    nans = sv.get(NAN_PATTERNS, [])
    if len(nans) > 1:
        out.append("NaN results in several patterns: " + ", ".join(f"{b:#x}" for b in nans))
    return out


def inferred_params(ins, base, fields: dict):
    """The Params the probe inferred (its measured fields on the entry's, or on a fresh design of the
    inferred base), or ``(None, reason)``."""
    if is_lowering(ins.params):
        return ins.params, None                    # not inferred: the entry's lowering is what is checked
    if base is None:
        return None, "no algorithm inferred"
    changes = {}
    for k, f in fields.items():
        if f.status is not FieldStatus.MEASURED or k not in FIELDS:
            continue
        if k == "out_rounding" and f.value not in ROUNDING_MODES:
            continue                               # described as outside the nine
        changes[k] = f.value
    try:
        if base == ins.params.base:
            return ins.params.with_(**changes), None
        return Params(base=base, **changes), None
    except (TypeError, ValueError) as e:
        return None, f"the inferred fields make no Params ({e})"


def _tiny_against_large(rig) -> list:
    """Rows where small terms of both signs meet a large c (2^20 + 2^-40 - 2^-41 and its kind): where
    a sticky bit or the order of roundings shows."""
    rows = []
    for e in (20, 0, -10, 60):
        for lo, sign in ((60, 1), (61, -1), (40, 1), (24, -1)):
            c = float(2.0 ** e)
            p0, p1 = 2.0 ** (e - lo), -sign * 2.0 ** (e - lo - 1)
            if rig.c_ok(c) and rig.has_prod(p0) and rig.has_prod(p1):
                prods = {0: p0, 1: p1} if rig.K >= 2 else {0: p0}
                rows += [Row(prods, c), Row({k: -v for k, v in prods.items()}, -c)]
    return rows


def verification_vectors(rig, n: int = VERIFY_ROWS, seed: int = 20):
    """``n`` dot-adds: the cosim generator's random and structured kinds, and the tiny-against-large rows."""
    ins = rig.ins
    rng = np.random.default_rng(seed)
    a, b, c, sa, sb = golden.vectors.random_operands(ins, n, rng, "mixed")
    m = min(STRUCTURED_ROWS, n // 4) if ins.k > 1 else 0
    if m:                                # the structured kind (cancellation, ties, boundaries) is slower to make
        parts = golden.vectors.random_operands(ins, m, rng, "structured")
        for whole, part in zip((a, b, c, sa, sb), parts):
            if whole is not None:
                whole[n - m:] = part
    rows = _tiny_against_large(rig)
    if rows:
        ta, tb, tc, tsa, tsb, ok = rig.build(rows)
        m = min(int(ok.sum()), n // 8)
        idx = np.nonzero(ok)[0][:m]
        a[:m], b[:m], c[:m] = ta[idx], tb[idx], tc[idx]
        if sa is not None:
            sa[:m], sb[:m] = tsa[idx], tsb[idx]
    return a, b, c, sa, sb


def _model(ins, p: Params):
    return ins.with_params(p)


def _example(ins, a, b, c, i, got, want, label: str = "closest model") -> str:
    fa, fb, fc, fd = ins.formats
    w = {f.name: max(1, (f.storage_bits + 3) // 4) for f in ins.formats}
    terms = " ".join(f"{k}:{int(a[i, k]):0{w[fa.name]}x}*{int(b[i, k]):0{w[fb.name]}x}"
                     for k in range(ins.k) if a[i, k] or b[i, k])
    return (f"a*b [{terms or 'all zero'}] c={int(c[i]):0{w[fc.name]}x} -> device {int(got[i]):0{w[fd.name]}x}, "
            f"{label} {int(want[i]):0{w[fd.name]}x}")


def verify(rig, p: Params, vectors=None) -> dict:
    """The device against ``p`` on the verification vectors: ``{"rows", "mismatches", "examples"}``."""
    ins = rig.ins
    a, b, c, sa, sb = vectors if vectors is not None else verification_vectors(rig)
    got, ok = rig.run_operands(a, b, c, sa, sb)
    want = golden.dot_add(_model(ins, p), a, b, c, sa, sb).astype(np.uint64)
    bad = ok & ~golden.same_results(_model(ins, p), got, want)
    idx = np.nonzero(bad)[0]
    return {"rows": int(ok.sum()), "mismatches": int(idx.size),
            "examples": [_example(ins, a, b, c, i, got, want) for i in idx[:SHOWN]]}


def exact_reference(rig, vectors, claimed: str | None) -> dict | None:
    """The device against the exact sum of its products and c rounded once, in each mode (IEEE signed
    zeros and overflow; any NaN equals any NaN): ``{"rows", "equal": {mode: n}, "claimed", "examples"}``.
    None where the products are not exact in binary64 (binary64 operands)."""
    ins = rig.ins
    fa, fb = (get_format(f) for f in ins.formats[:2])
    if fa.man_bits + fb.man_bits + 2 > 53 or ins.formats[2].name == "f64":
        return None
    a, b, c, sa, sb = (None if x is None else x[:EXACT_ROWS] for x in vectors)
    got, ok = rig.run_operands(a, b, c, sa, sb)
    fd = ins.formats[3]
    out = {"rows": int(ok.sum()), "equal": {}, "claimed": claimed, "examples": []}
    for mode in ROUNDING_MODES:
        p = Params(base="FDA", F=EXACT, e_zero=-133, out_rounding=mode, overflow="ieee", zero_sign="ieee754")
        want = golden.dot_add(_model(ins, p), a, b, c, sa, sb).astype(np.uint64)
        same = (got == want) | ((decode(fd, got).cls == NAN) & (decode(fd, want).cls == NAN))
        out["equal"][mode] = int((same & ok).sum())
        if mode == claimed:
            idx = np.nonzero(ok & ~same)[0]
            out["examples"] = [_example(ins, a, b, c, i, got, want, f"exact {mode}") for i in idx[:SHOWN]]
    return out
