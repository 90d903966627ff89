"""CDNA3's disputed special values (``golden.Params.specials``): which reading a device follows.

Two rules where the MMA-Sim paper's step order and the authors' later model disagree:

``inf_meets_overflow``
    an input infinity (c, or an operand of the same pass) meets a product that overflows to
    the other infinity: the paper gives the input infinity, the later model NaN.  Needs
    products that reach 2**128 (tf32, bf16; never f16 or fp8).
``nonfinite_small_c``
    a NaN or infinite c meets products above the small-c drop (``e_dot >= c_drop``): the paper
    gives NaN (that infinity), the later model drops c as a small c and returns the products'
    sum.  Needs the drop (GFDRDA) and products above it (bf8 x bf8 only: 2**15 * 2**15).

Each rule is asked twice, in ways that cannot depend on how the products are split into passes
(c and the first product share the first pass; products 0 and 1 share a pass wherever a pass
holds two).  Two more rows spread the case over the first and the last product (the chained
passes the issue is about); their results are reported, not judged, since one pass gives NaN
under both readings there.
"""

from __future__ import annotations

import math

from golden.formats import special_bits

from ..rig import Row, exact_in

READINGS = ("paper", "later_model")


def _power_pair(rig, e: int):
    """Bits (a, b) of powers of two with a * b = 2**e, a as large as the formats allow; or None."""
    fa, fb = rig.fa, rig.fb
    for ea in range(fa.emax, fa.emin - 1, -1):
        eb = e - ea
        if fb.emin <= eb <= fb.emax:
            a, b = exact_in(fa, math.ldexp(1.0, ea)), exact_in(fb, math.ldexp(1.0, eb))
            if a is not None and b is not None:
                return a, b
    return None


def _negate(fmt, bits: int) -> int:
    return bits | (1 << (fmt.value_bits - 1 + fmt.ignored_low_bits))


def _class(v):
    if v is None:
        return None
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+inf" if v > 0 else "-inf"
    return "finite"


def disputed_specials(rig, c_drop: int | None = None) -> dict:
    """Ask both rules; ``c_drop`` (from :func:`probe.probes.c_drop`) says whether the largest
    products lie above the small-c drop, i.e. whether the second rule can show at all."""
    K, fa, fb, fc = rig.K, rig.fa, rig.fb, rig.fc
    out: dict = {"rules": {}, "rows": {}}
    rows, names, judges = [], [], []

    def ask(rule, name, row, paper, later):
        rows.append(row)
        names.append((rule, name))
        judges.append((paper, later))

    over = _power_pair(rig, 128)                 # a product of exactly 2**128: overflows to +inf
    if over is not None and fc.inf:
        a, b = over
        ask("inf_meets_overflow", "c=+inf, product #0 overflows to -inf",
            Row({}, math.inf, {("a", 0): _negate(fa, a), ("b", 0): b}), "+inf", "NaN")
        inf_a, one_b = exact_in(fa, math.inf), exact_in(fb, 1.0)
        if K >= 2 and inf_a is not None and one_b is not None:
            ask("inf_meets_overflow", "product #0 = +inf * 1, product #1 overflows to -inf",
                Row({}, 0.0, {("a", 0): inf_a, ("b", 0): one_b, ("a", 1): _negate(fa, a), ("b", 1): b}),
                "+inf", "NaN")
        if K >= 2:
            ask("chain", f"product #0 overflows to +inf, product #{K - 1} to -inf",
                Row({}, 0.0, {("a", 0): a, ("b", 0): b, ("a", K - 1): _negate(fa, a), ("b", K - 1): b}),
                None, None)
    top = fa.emax + fb.emax                       # the largest product exponent (e_dot) the formats reach
    big = _power_pair(rig, top)
    reach = c_drop is not None and top > c_drop
    if big is not None and reach and fc.nan != "none":
        a, b = big
        nan_c = int(special_bits(fc, "nan"))
        ask("nonfinite_small_c", f"c=NaN, product #0 = 2^{top}", Row({}, 0.0, {"c": nan_c, ("a", 0): a, ("b", 0): b}),
            "NaN", "finite")
        if fc.inf:
            ask("nonfinite_small_c", f"c=-inf, product #0 = 2^{top}", Row({}, -math.inf, {("a", 0): a, ("b", 0): b}),
                "-inf", "finite")
        if K >= 2 and fa.has_nan:
            ask("chain", f"NaN operand in product #0, product #{K - 1} = 2^{top}",
                Row({}, 0.0, {("a", 0): int(special_bits(fa, "nan")), ("b", 0): exact_in(fb, 1.0) or 0,
                              ("a", K - 1): a, ("b", K - 1): b}), None, None)
    vals, _ = rig.run(rows)
    seen: dict = {}
    for (rule, name), (paper, later), v in zip(names, judges, vals):
        got = _class(v)
        out["rows"][name] = "not run" if got is None else (repr(v) if got == "finite" else got)
        if rule == "chain" or got is None:
            continue
        seen.setdefault(rule, []).append("paper" if got == paper else "later_model" if got == later else
                                         f"neither ({got})")
    for rule in ("inf_meets_overflow", "nonfinite_small_c"):
        votes = seen.get(rule)
        if not votes:
            out["rules"][rule] = "unobservable"
        else:
            out["rules"][rule] = votes[0] if len(set(votes)) == 1 else "inconsistent: " + ", ".join(votes)
    found = {v for v in out["rules"].values() if v != "unobservable"}
    out["specials"] = (found.pop() if len(found) == 1 and next(iter(found)) in READINGS else
                       None if not found else
                       "mixed: " + ", ".join(f"{k} {v}" for k, v in out["rules"].items()))
    return out
