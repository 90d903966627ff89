"""What each addition keeps (III-D): the result's fraction bits, the bits kept after alignment
per summand (with III-E's rounding of that alignment), and the alignment facts around them:
the exponent of zero summands (e_zero), the small-c drop and the block-scaled alignment reference."""

from __future__ import annotations

import math

from golden.rules import Rounding

from .common import T_MAX, first_failure, pick_X, round_to_result, summand_row, terms_summing_to_4
from .rounding import classify_rounding


def output_precision(rig) -> dict:
    """Fraction bits of the result: the largest t for which 4 + 2**(2-t) comes back exactly
    (the small part carried by c, the 4 by products; III-D's ``1 + eps`` on the final sum)."""
    K = rig.K
    base = terms_summing_to_4(rig)
    rows, ts = [], []
    for t in range(1, T_MAX):
        eps = math.ldexp(1.0, 2 - t)
        if not rig.c_ok(eps):
            break
        rows.append(summand_row(rig, {**base, K: eps}))
        ts.append(t)
    vals, _ = rig.run(rows)
    flags = [(t, None if v is None else v == 4.0 + math.ldexp(1.0, 2 - t)) for t, v in zip(ts, vals)]
    p, exact = first_failure(flags)
    return {"bits": p, "exact": exact}


def _pass_of(st, k, K):
    if k == K or not st.get("passes"):
        return 0
    for i, p in enumerate(st["passes"]):
        if k in p:
            return i
    return 0


def _partners(st, k, K):
    """Two other summands of k's pass for X and -X (same parity, even first)."""
    p = _pass_of(st, k, K)
    members = list(st["passes"][p]) if st.get("passes") else list(range(K))
    if p == 0 and st.get("c_first") is not False:
        members = members + [K]
    others = [m for m in members if m != k and m != K]
    for par in (0, 1):
        same = [m for m in others if m % 2 == par]
        if len(same) >= 2:
            return same[0], same[1]
    cand = [m for m in members if m != k]
    return (cand[0], cand[1]) if len(cand) >= 2 else (None, None)


def fused_precision(rig, st) -> dict:
    """III-D for t-term fused sums: ``-X + X + eps`` with eps at each summand (X and -X in
    the same pass), halving eps until it is lost; then III-E's Table I/II on the alignment
    of that summand (``+-1.75u, +-1.25u``; ties ``+-1.5u, +-2.5u``; u its last kept place)."""
    K = rig.K
    per = {}
    plan = []
    for k in range(K + 1):
        i, j = _partners(st, k, K)
        if i is None:
            continue
        eX = pick_X(rig, on_c=K in (i, j))
        if eX is None:
            continue
        X = math.ldexp(1.0, eX)
        for sign in (1, -1):
            for t in range(1, T_MAX):
                eps = sign * math.ldexp(1.0, eX - t)
                ok = (rig.has_prod(eps) if k != K else rig.c_ok(eps)) and rig.out_bits(eps) is not None
                plan.append((k, sign, t, eps, summand_row(rig, {i: X, j: -X, k: eps}) if ok else None))
        per[k] = {"partners": (i, j), "X": eX}
    rows = [p[4] for p in plan if p[4] is not None]
    vals, _ = rig.run(rows)
    it = iter(vals)
    res: dict = {}
    for k, sign, t, eps, row in plan:
        v = next(it) if row is not None else None
        res.setdefault((k, sign), []).append((t, None if v is None else v == eps))
    for k in per:
        per[k]["bits"], per[k]["exact"] = first_failure(res[(k, 1)])
        per[k]["neg_bits"], per[k]["neg_exact"] = first_failure(res[(k, -1)])
    # Table I / II on each summand's alignment
    rows, keys = [], []
    for k, info in per.items():
        if not info["exact"]:
            continue
        i, j = info["partners"]
        X = math.ldexp(1.0, info["X"])
        u = math.ldexp(1.0, info["X"] - info["bits"])
        for base, off in ((1, 0.75), (1, 0.25), (-1, -0.75), (-1, -0.25),
                          (2, 0.5), (2, 1.5), (-2, -0.5), (-2, -1.5)):
            e = (base + off) * u
            ok = (rig.has_prod(e) if k != K else rig.c_ok(e)) and rig.out_bits(e) is not None
            if ok:
                rows.append(summand_row(rig, {i: X, j: -X, k: e}))
                keys.append((k, base, off, u))
    vals, _ = rig.run(rows)
    obs: dict = {}
    for (k, base, off, u), v in zip(keys, vals):
        if v is None:
            continue
        # Tables I/II are written for 1 + f*u with an even 1: here the 1 is one unit u
        # (Table I) or two units (Table II, so that the ties see an even neighbour)
        obs.setdefault(k, {})[off] = v / u - base
    for k, info in per.items():
        o = obs.get(k, {})
        table = {0.75: o.get(0.75), 0.25: o.get(0.25), -0.75: o.get(-0.75), -0.25: o.get(-0.25),
                 0.5: o.get(0.5), 1.5: o.get(1.5), -0.5: o.get(-0.5), -1.5: o.get(-1.5)}
        info["rounding"] = classify_rounding(table) if o else None
    return {"per_summand": per}


def binary_precision(rig, st) -> dict:
    """III-D for binary additions: ``1 + eps`` (1 at c, or at product 0 for eps on c), eps halved
    until ``d != 1 + eps``: bits kept after the radix point by that addition."""
    K = rig.K
    per, plan = {}, []
    for k in range(K + 1):
        one = K if k != K else 0
        for t in range(1, T_MAX):
            eps = math.ldexp(1.0, -t)
            ok = (rig.has_prod(eps) if k != K else rig.c_ok(eps))
            plan.append((k, t, eps, summand_row(rig, {one: 1.0, k: eps}) if ok else None))
    vals, _ = rig.run([p[3] for p in plan if p[3] is not None])
    it = iter(vals)
    res: dict = {}
    for k, t, eps, row in plan:
        v = next(it) if row is not None else None
        res.setdefault(k, []).append((t, None if v is None else v == 1.0 + eps))
    for k in range(K + 1):
        bits, exact = first_failure(res[k])
        per[k] = {"bits": bits, "exact": exact}
    return {"per_summand": per}


def zero_exponent(rig, F: int, mode: str, p_out: int) -> dict:
    """The exponent that zero summands take in the maximum (docs/spec.md §4.1, e_zero).

    Every other summand is zero; a product B = 2**e and a tiny negative product
    -2**(e-F) (plus, for RNE, two products placing B + ulp + ulp/2 on a tie) are summed.
    The tiny one survives alignment exactly when the maximum exponent is e, i.e. when the
    zeros' exponent is at most e; the highest e where it is lost is e_zero - 1.
    """
    K = rig.K
    if mode not in (Rounding.RZ, Rounding.RNE, Rounding.RD) or K < 4:
        return {"observed": False, "reason": f"needs RZ, RD or RNE results and K >= 4 (have {mode}, K={K})"}
    fd = rig.fd
    nterm = 4 if mode == Rounding.RNE else 2
    blk = rig.block or 1
    idx = [i * blk for i in range(nterm)] if rig.block and K // blk >= nterm else list(range(nterm))
    kept_at, lost_at, scanned = [], [], []
    e = fd.emin + 40
    while e > -1200 and not lost_at:
        rows, es, exp = [], [], []
        for e in range(e, e - 64, -1):  # noqa: B020 (the next window starts where this one stopped)
            B = math.ldexp(1.0, e)
            d = -math.ldexp(1.0, e - F)
            if d == 0.0:
                break
            vals = [B, d]
            if mode == Rounding.RNE:
                ulp = math.ldexp(1.0, max(e, fd.emin) - p_out)
                vals += [ulp, ulp / 2]
            terms = dict(zip(idx, vals))
            if not rig.block and not all(rig.has_prod(v) for v in vals):
                continue
            exact = sum(vals)
            k_bits, l_bits = round_to_result(rig, exact, mode, p_out), round_to_result(rig, exact - d, mode, p_out)
            if k_bits == l_bits:
                continue
            rows.append(summand_row(rig, terms))
            es.append(e)
            exp.append((k_bits, l_bits))
        if not rows:
            if d == 0.0:
                break
            e -= 1
            continue
        _, bits = rig.run(rows)
        for ee, (kb, lb), bt in zip(es, exp, bits):
            if bt is None:
                continue
            scanned.append(ee)
            if bt == kb:
                kept_at.append(ee)
            elif bt == lb:
                lost_at.append(ee)
        e -= 1
    if not scanned:
        return {"observed": False, "reason": "no product small enough to be swamped by the zeros' exponent"}
    if lost_at:
        e_lost = max(lost_at)
        return {"observed": True, "e_zero": e_lost + 1, "scanned": [min(scanned), max(scanned)]}
    return {"observed": False, "bound": min(kept_at) if kept_at else None,
            "reason": f"no loss down to product exponent {min(scanned)}: e_zero <= {min(scanned)}"}


def c_drop(rig) -> dict:
    """CDNA3 fp8's patch (paper VI-C): a small c below the largest term is dropped instead of
    rounded down.  Product 1 and c = -2**-j: the largest j where c still moves the result."""
    K = rig.K
    rows, js = [], []
    for j in range(1, 160):
        c = -math.ldexp(1.0, -j)
        if rig.c_ok(c):
            rows.append(summand_row(rig, {0: 1.0, K: c}))
            js.append(j)
    vals, _ = rig.run(rows)
    moved = [j for j, v in zip(js, vals) if v is not None and v != 1.0]
    dropped = [j for j, v in zip(js, vals) if v == 1.0]
    if not dropped:
        return {"observed": True, "c_drop": None, "note": "a small negative c always moves the result"}
    return {"observed": True, "c_drop": max(moved) if moved else 0, "first_dropped": min(dropped)}


def alignment_reference(rig, F: int) -> dict:
    """Block-scaled units: do terms align on the product's own exponent (FDA with scales) or
    on the block-scale exponent with the group sum left unnormalised (GDFS)?  c = eps is
    measured against X = 1*1 and against X = 4*4 (value 16): the bits kept below X's leading
    bit grow by 4 when the alignment reference ignores the element exponents."""
    K = rig.K
    out = {}
    blk = rig.block or K
    i, j = 0, blk if blk < K else 1
    for label, X in (("1x1", 1.0), ("4x4", 16.0)):
        if not (rig.has_prod(X) and rig.has_prod(-X)):
            return {"observed": False, "reason": f"product {X} not available"}
        eX = math.frexp(X)[1] - 1
        rows, ts = [], []
        for t in range(1, T_MAX):
            eps = math.ldexp(1.0, eX - t)
            if rig.c_ok(eps) and rig.out_bits(eps) is not None:
                rows.append(summand_row(rig, {i: X, j: -X, K: eps}))
                ts.append(t)
        vals, _ = rig.run(rows)
        bits, exact = first_failure([(t, None if v is None else v == math.ldexp(1.0, eX - t))
                                     for t, v in zip(ts, vals)])
        if not exact:
            return {"observed": False, "reason": "c precision not resolved"}
        out[label] = bits
    shift = out["4x4"] - out["1x1"]
    return {"observed": True, "bits": out, "reference": "block scale (group sums unnormalised)" if shift >= 2
            else "product exponent", "shift": shift}
