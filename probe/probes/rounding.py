"""How results are rounded (III-E): Tables I and II of the paper, on the final rounding."""

from __future__ import annotations

import math

from golden.rules import Rounding

from .common import summand_row, terms_summing_to_4

# the paper's rows: golden's directed modes (golden.rules.Rounding), away from zero, and to nearest (RN),
# whose tie rule Table II tells (RNE, golden's, among them)
RA, RN = "RA", "RN"
MODES = (Rounding.RU, Rounding.RD, Rounding.RZ, RA, RN)
TIES = ("RNU", "RND", "RNZ", "RNA", Rounding.RNE, "RNO")



def _round_int(x: float, mode: str) -> int:
    """Round the real ``x`` (in units) to an integer with a rounding mode or RN tie rule."""
    fl = math.floor(x)
    frac = x - fl
    if frac == 0:
        return int(x)
    if mode == Rounding.RU:
        return fl + 1
    if mode == Rounding.RD:
        return fl
    if mode == Rounding.RZ:
        return int(math.trunc(x))
    if mode == RA:
        return fl + 1 if x > 0 else fl
    if frac != 0.5:
        return fl + 1 if frac > 0.5 else fl
    tie = {"RNU": fl + 1, "RND": fl, "RNZ": int(math.trunc(x)), "RNA": fl + 1 if x > 0 else fl,
           Rounding.RNE: fl if fl % 2 == 0 else fl + 1, "RNO": fl if fl % 2 else fl + 1}
    return tie[mode if mode in tie else Rounding.RNE]


def classify_rounding(observed: dict) -> dict:
    """Tables I and II of the paper: ``observed`` maps an input offset (units of u) to the
    rounded offset; returns ``{"mode": ..., "tie": ...}`` (None where undecided)."""
    t1 = [x for x in (0.75, 0.25, -0.75, -0.25) if observed.get(x) is not None]
    mode = None
    if len(t1) == 4:
        hits = [m for m in MODES if all(_round_int(x, m if m != RN else Rounding.RNE) == observed[x] for x in t1)]
        mode = hits[0] if len(hits) == 1 else None
    tie = None
    if mode == RN:
        t2 = [x for x in (0.5, 1.5, -0.5, -1.5) if observed.get(x) is not None]
        if len(t2) == 4:
            hits = [m for m in TIES if all(_round_int(x, m) == observed[x] for x in t2)]
            tie = hits[0] if len(hits) == 1 else None
    return {"mode": mode, "tie": tie, "observed": {str(k): v for k, v in observed.items()}}


def rounding_name(r: dict) -> str | None:
    """``RZ``, ``RD``, ``RU``, ``RA`` or the RN tie rule (``RNE``...)."""
    if r is None or r.get("mode") is None:
        return None
    return r["tie"] if r["mode"] == RN else r["mode"]


OFFSETS = (0.75, 0.25, -0.75, -0.25, 0.5, 1.5, -0.5, -1.5)     # Table I, then Table II's ties


def _classify_4_plus(rig, p_out: int, terms_of) -> dict:
    """Tables I and II on rows whose exact sum is ``+-(4 + |f| u)`` (u the last place of the result at
    4): ``terms_of(s, v)`` gives the summands for sign ``s`` and offset ``v``, or None if infeasible."""
    u = math.ldexp(1.0, 2 - p_out)
    rows, keys = [], []
    for f in OFFSETS:
        s = 1 if f > 0 else -1
        terms = terms_of(s, abs(f) * u)
        if terms is None:
            continue
        rows.append(summand_row(rig, terms))
        keys.append(f)
    vals, _ = rig.run(rows)
    obs = {}
    for f, v in zip(keys, vals):
        if v is not None:
            s = 1 if f > 0 else -1
            obs[f] = (v - s * 4.0) / u
    return classify_rounding(obs)


def output_rounding(rig, p_out: int) -> dict:
    """III-E, Tables I and II on the final rounding: exact sums ``4 + f*u`` (u the last place
    of the result at 4; f in +-0.75, +-0.25, then +-0.5, +-1.5), the 4 from products, f*u in c."""
    K = rig.K
    base = terms_summing_to_4(rig)

    def terms_of(s, v):
        terms = {k: s * x for k, x in base.items()}
        terms[K] = s * v
        return terms if rig.c_ok(terms[K]) else None
    return _classify_4_plus(rig, p_out, terms_of)


def final_rounding(rig, p_out: int) -> dict:
    """Tables I and II on the last operation alone: c = +-4 and the last product +-f*u, every other
    product zero, so a sequential unit (SFMA) rounds ``4 + f*u`` once, in its last fma."""
    K = rig.K

    def terms_of(s, v):
        terms = {K: s * 4.0, K - 1: s * v}
        return terms if rig.c_ok(terms[K]) and rig.has_prod(terms[K - 1]) else None
    return _classify_4_plus(rig, p_out, terms_of)
