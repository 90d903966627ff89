"""The AMD round-down algorithms' own cover points (FDRDA, GFDRDA; docs/spec.md §3.6-3.9, §4.4).

From each pass's trace: the products' truncation to F bits below their own maximum, GFDRDA's even/odd
merge floored at ``merge_floor_bits``, the dot part floored at ``dot_floor_bits`` and c at
``c_floor_bits`` below ``2^e_max`` (non-zero bits dropped or not, by sign: a round-down of a negative
value moves it away from zero, the case a truncating datapath gets wrong), c against the dot part, the
normalisation (carry, cancellation, the exponent clamp at -126) and its floor at ``final_floor_bits``,
GFDRDA's small-c drop, the products that overflow to infinity, and the disputed special-value rules
(``Params.specials``) by the names the descriptors list.  A point looks at every pass of a chain; a
row hits a bin when some pass does.  Each bin has a construction (``directed``) that places chosen
products and c in the first pass (golden.cover.chain.build).
"""

from __future__ import annotations

import numpy as np

from ..disputed import NONFINITE_C_EXP, disputed_rules, products_overflow
from ..formats import get_format, to_float
from .chain import CHAIN_POINTS, build, pass_c_values, pass_columns, product_range, signs, value_range
from .common import COMMON_POINTS
from .model import Batch, Bin, CoverPoint

__all__ = ["FDRDA_COVER_POINTS", "GFDRDA_COVER_POINTS", "AMD_POINTS", "GFDRDA_POINTS"]

CLAMP = -126               # the normalised exponent's floor (docs/spec.md §4.4)


# --------------------------------------------------------------------------- per-pass values

def _passes(batch: Batch):
    """Per pass: ``(values, c, finite)``, ``finite`` the rows whose products and c are all finite."""
    for v, c in zip(batch.passes, pass_c_values(batch)):
        finite = np.isfinite(v["products.value"]).all(1) & np.isfinite(c)
        yield v, c, finite


def _e(v, key):
    """An exponent of the trace (NaN: none) as int64, with 0 where NaN, and where it is present."""
    x = np.asarray(v[key], np.float64)
    have = ~np.isnan(x)
    return np.where(have, x, 0).astype(np.int64), have


def _dropped(exact_scaled) -> np.ndarray:
    """Whether a floor dropped non-zero bits: the exact value, in the floor's units, is not whole."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(exact_scaled) & (exact_scaled != np.floor(exact_scaled))


def _by_sign(out: dict, where, value, dropped) -> None:
    out["exact"] |= where & ~dropped
    out["dropped_positive"] |= where & dropped & (value > 0)
    out["dropped_negative"] |= where & dropped & (value < 0)


def _fresh(batch: Batch, bins) -> dict:
    return {b.name: batch.none() for b in bins}


# --------------------------------------------------------------------------- hits

def _alignment_hits(batch: Batch) -> dict:
    p = batch.instruction.params
    out = _fresh(batch, ALIGNMENT_BINS)
    for v, _, finite in _passes(batch):
        P = np.asarray(v["products.value"], np.float64)
        if "dot_sum.s_even" in v:               # GFDRDA: each set aligned to its own maximum
            ee, _ = _e(v, "dot_sum.e_even")
            eo, _ = _e(v, "dot_sum.e_odd")
            ref = np.where(np.arange(P.shape[1]) % 2 == 0, ee[:, None], eo[:, None])
        else:
            ref = np.broadcast_to(_e(v, "max_exponent.e_dot")[0][:, None], P.shape)
        live = finite[:, None] & (P != 0)
        with np.errstate(all="ignore"):
            units = np.ldexp(np.where(live, P, 0.0), (p.F - ref).astype(np.int32))
        lost = live & (units != np.trunc(units))
        out["vanished"] |= (lost & (np.abs(units) < 1)).any(1)
        out["truncated"] |= (lost & (np.abs(units) >= 1)).any(1)
        out["exact"] |= finite & (P != 0).any(1) & ~lost.any(1)
    return out


def _merge_hits(batch: Batch) -> dict:
    p = batch.instruction.params
    out = _fresh(batch, MERGE_BINS)
    for v, _, finite in _passes(batch):
        e_dot = np.asarray(v["merged.e_dot"], np.int64)
        drops = []
        for s_key, e_key in (("dot_sum.s_even", "dot_sum.e_even"), ("dot_sum.s_odd", "dot_sum.e_odd")):
            e, have = _e(v, e_key)
            s = np.asarray(v[s_key], np.float64)
            scaled = np.ldexp(s, (p.merge_floor_bits - p.F - (e_dot - e)).astype(np.int32))
            drops.append((have, s, _dropped(scaled)))
        both = finite & drops[0][0] & drops[1][0]
        for _, s, lost in drops:
            out["dropped_positive"] |= both & lost & (s > 0)
            out["dropped_negative"] |= both & lost & (s < 0)
        out["exact"] |= both & ~drops[0][2] & ~drops[1][2]
    return out


def _sets_hits(batch: Batch) -> dict:
    out = _fresh(batch, SETS_BINS)
    for v, _, finite in _passes(batch):
        ee, he = _e(v, "dot_sum.e_even")
        eo, ho = _e(v, "dot_sum.e_odd")
        both = finite & he & ho
        out["even_above"] |= both & (ee > eo)
        out["odd_above"] |= both & (eo > ee)
        out["equal"] |= both & (ee == eo)
        out["even_only"] |= finite & he & ~ho
        out["odd_only"] |= finite & ho & ~he
    return out


def _s_dot(v) -> tuple[np.ndarray, int]:
    """The dot part's sum and its fraction bits below ``2^e_dot`` (F; GFDRDA: merge_floor_bits)."""
    return (np.asarray(v["merged.s_dot"], np.float64), "merge") if "merged.s_dot" in v else \
        (np.asarray(v["dot_sum.s_dot"], np.float64), "F")


def _dot_floor_hits(batch: Batch) -> dict:
    p = batch.instruction.params
    out = _fresh(batch, FLOOR_BINS)
    for v, _, finite in _passes(batch):
        s, which = _s_dot(v)
        frac = p.merge_floor_bits if which == "merge" else p.F
        e_dot, has = _e(v, "max_exponent.e_dot")
        e_max = np.asarray(v["max_exponent.e_max"], np.int64)
        scaled = np.ldexp(s, (p.dot_floor_bits - frac - (e_max - e_dot)).astype(np.int32))
        _by_sign(out, finite & has & (s != 0), s, _dropped(scaled))
    return out


def _c_kept(v, c, p) -> np.ndarray:
    """Rows whose c the small-c drop keeps (every row without ``c_drop``)."""
    if p.c_drop is None:
        return np.ones(c.shape, bool)
    return np.asarray(v["max_exponent.e_c"]) >= np.asarray(v["max_exponent.e_max"]) - p.c_drop


def _c_floor_hits(batch: Batch) -> dict:
    p = batch.instruction.params
    out = _fresh(batch, C_FLOOR_BINS)
    for v, c, finite in _passes(batch):
        e_max = np.asarray(v["max_exponent.e_max"], np.int64)
        with np.errstate(all="ignore"):
            scaled = np.ldexp(np.where(finite, c, 0.0), (p.c_floor_bits - e_max).astype(np.int32))
        live = finite & (c != 0) & _c_kept(v, c, p)
        below = np.abs(scaled) < 1
        _by_sign(out, live & ~below, c, _dropped(scaled))
        out["below_window_positive"] |= live & below & (c > 0)
        out["below_window_negative"] |= live & below & (c < 0)
    return out


def _dominance_hits(batch: Batch) -> dict:
    out = _fresh(batch, DOMINANCE_BINS)
    for v, c, finite in _passes(batch):
        e_dot, has = _e(v, "max_exponent.e_dot")
        e_c = np.asarray(v["max_exponent.e_c"], np.int64)
        live = finite & has & (c != 0)
        out["c_above"] |= live & (e_c > e_dot)
        out["equal"] |= live & (e_c == e_dot)
        out["dot_above"] |= live & (e_dot > e_c)
        out["zero_c_above"] |= finite & has & (c == 0) & (e_dot < CLAMP)
    return out


def _normalise_hits(batch: Batch) -> dict:
    p = batch.instruction.params
    out = _fresh(batch, NORMALISE_BINS)
    for v, _, finite in _passes(batch):
        T = np.asarray(v["aligned.sum"], np.float64)
        e_max = np.asarray(v["max_exponent.e_max"], np.int64)
        e_n = np.asarray(v["normalised.exponent"], np.int64)
        live = finite & (T != 0)
        _, bits = np.frexp(np.where(live, T, 1.0))              # the bit length of |T|
        clamped = live & (e_max - p.dot_floor_bits + bits - 1 < CLAMP)
        out["clamped"] |= clamped
        out["above_e_max"] |= live & ~clamped & (e_n > e_max)
        out["at_e_max"] |= live & ~clamped & (e_n == e_max)
        out["below_e_max"] |= live & ~clamped & (e_n < e_max)
    return out


def _final_floor_hits(batch: Batch) -> dict:
    p = batch.instruction.params
    out = _fresh(batch, FLOOR_BINS)
    for v, _, finite in _passes(batch):
        T = np.asarray(v["aligned.sum"], np.float64)
        e_max = np.asarray(v["max_exponent.e_max"], np.int64)
        e_n = np.asarray(v["normalised.exponent"], np.int64)
        with np.errstate(all="ignore"):
            scaled = np.ldexp(np.where(finite, T, 0.0),
                              (e_max - p.dot_floor_bits - e_n + p.final_floor_bits).astype(np.int32))
        _by_sign(out, finite & (T != 0), T, _dropped(scaled))
    return out


def _c_drop_hits(batch: Batch) -> dict:
    p = batch.instruction.params
    out = _fresh(batch, C_DROP_BINS)
    if p.c_drop is None:
        return out
    for v, c, finite in _passes(batch):
        e_dot, has = _e(v, "max_exponent.e_dot")
        e_c = np.asarray(v["max_exponent.e_c"], np.int64)
        e_max = np.asarray(v["max_exponent.e_max"], np.int64)
        live = finite & has & (c != 0)
        out["kept_at_edge"] |= live & (e_c == e_max - p.c_drop)
        out["dropped_at_edge"] |= live & (e_c == e_max - p.c_drop - 1)
        out["dropped_negative"] |= live & (e_c < e_max - p.c_drop) & (c < 0)
        products_finite = np.isfinite(v["products.value"]).all(1)
        out["nonfinite_kept"] |= ~np.isfinite(c) & products_finite & has & \
            (e_dot - p.c_drop <= NONFINITE_C_EXP)
    return out


def _specials(batch: Batch):
    """Per pass: ``(input inf +, input inf -, overflow +, overflow -, NaN, c, has, e_dot, products finite)``:
    infinities from an input (c or an operand), products of finite operands overflowing, a NaN term."""
    ins = batch.instruction
    fa, fb = (get_format(f) for f in ins.formats[:2])
    for j, (v, c, _) in enumerate(_passes(batch)):
        cols = pass_columns(ins, j)
        va = to_float(fa, batch.a[:, cols].astype(np.uint64))
        vb = to_float(fb, batch.b[:, cols].astype(np.uint64))
        P = np.asarray(v["products.value"], np.float64)
        from_input = np.isinf(va) | np.isinf(vb)
        over = np.isinf(P) & ~from_input
        e_dot, has = _e(v, "max_exponent.e_dot")
        yield ((np.isposinf(P) & from_input).any(1) | np.isposinf(c),
               (np.isneginf(P) & from_input).any(1) | np.isneginf(c),
               (over & (P > 0)).any(1), (over & (P < 0)).any(1), np.isnan(P).any(1) | np.isnan(c),
               c, has, e_dot, np.isfinite(P).all(1))


def _overflow_hits(batch: Batch) -> dict:
    out = _fresh(batch, OVERFLOW_BINS)
    for inf_p, inf_n, over_p, over_n, nan, *_ in _specials(batch):
        clean = ~nan & ~(inf_p & inf_n)
        out["overflow"] |= clean & ~inf_p & ~inf_n & (over_p ^ over_n)
        out["both_signs"] |= clean & ~inf_p & ~inf_n & over_p & over_n
        out["input_inf_same_sign"] |= clean & ((inf_p & over_p & ~over_n) | (inf_n & over_n & ~over_p))
    return out


def _disputed_hits(batch: Batch) -> dict:
    p = batch.instruction.params
    out = _fresh(batch, DISPUTED_BINS)
    for inf_p, inf_n, over_p, over_n, nan, c, has, e_dot, products_finite in _specials(batch):
        out["inf_meets_overflow"] |= ~nan & ~(inf_p & inf_n) & ((inf_p & over_n) | (inf_n & over_p))
        if p.c_drop is not None:        # the later model would drop this c: e_c = -1 < e_max - c_drop
            out["nonfinite_small_c"] |= ~np.isfinite(c) & products_finite & has & \
                (e_dot - p.c_drop > NONFINITE_C_EXP)
    return out


# --------------------------------------------------------------------------- reachability

def _span(ins) -> tuple[int, int, int]:
    """``(lowest product value exponent, highest unnormalised product exponent, highest value exponent)``."""
    fa, fb = (get_format(f) for f in ins.formats[:2])
    lo, hi = product_range(ins)
    return lo, fa.emax + fb.emax, hi


def _all(bins, why: str) -> dict:
    return {b.name: why for b in bins}


def _alignment_unreachable(ins) -> dict:
    lo, top, _ = _span(ins)
    if top - ins.params.F - 1 < lo:
        why = f"every product lies within F={ins.params.F} bits of the largest (least bit 2^{lo})"
        return {"truncated": why, "vanished": why}
    return {}


def _dot_floor_unreachable(ins) -> dict:
    p, fc = ins.params, get_format(ins.formats[2])
    if fc.emax - p.dot_floor_bits < _span(ins)[0] + 1:
        why = f"c never lies {p.dot_floor_bits} binades above a product's low bits"
        return {"dropped_positive": why, "dropped_negative": why}
    return {}


def _c_floor_unreachable(ins) -> dict:
    p = ins.params
    out = {}
    if p.c_drop is not None and p.c_drop < p.c_floor_bits + 1:
        why = f"c_drop={p.c_drop} drops every c below the window of {p.c_floor_bits} bits"
        out = {"below_window_positive": why, "below_window_negative": why}
    return out


def _dominance_unreachable(ins) -> dict:
    fa, fb = (get_format(f) for f in ins.formats[:2])
    if fa.emin + fb.emin >= CLAMP:
        return {"zero_c_above": f"{fa.name} x {fb.name} products have exponents of at least "
                                f"{fa.emin + fb.emin}: a zero c's {CLAMP} never leads"}
    return {}


def _normalise_unreachable(ins) -> dict:
    fc = get_format(ins.formats[2])
    if value_range(fc)[0] >= CLAMP and _span(ins)[0] >= CLAMP:
        return {"clamped": f"no c or product of {ins.formats[0]} lies below 2^{CLAMP}"}
    return {}


def _final_floor_unreachable(ins) -> dict:
    p, fc = ins.params, get_format(ins.formats[2])
    if fc.emax - p.dot_floor_bits < _span(ins)[0]:
        why = f"no sum spans the {p.final_floor_bits + 1} bits the final floor keeps"
        return {"dropped_positive": why, "dropped_negative": why}
    return {}


def _merge_unreachable(ins) -> dict:
    lo, _, hi = _span(ins)
    if hi - ins.params.merge_floor_bits - 1 < lo:
        why = f"the two sets never lie {ins.params.merge_floor_bits} binades apart"
        return {"dropped_positive": why, "dropped_negative": why}
    return {}


def _c_drop_unreachable(ins) -> dict:
    if ins.params.c_drop is None:
        return _all(C_DROP_BINS, "no small-c drop (c_drop is None)")
    return {}


def _overflow_unreachable(ins) -> dict:
    fa, fb = (get_format(f) for f in ins.formats[:2])
    if not ins.params.product_overflow:
        return _all(OVERFLOW_BINS, "products never overflow (product_overflow is off)")
    if not products_overflow(fa, fb):
        return _all(OVERFLOW_BINS, f"{fa.name} x {fb.name} products stay below 2^128")
    return {}


def _disputed_unreachable(ins, bins) -> dict:
    fa, fb = (get_format(f) for f in ins.formats[:2])
    reached = disputed_rules(ins)
    why = {"inf_meets_overflow": f"no product overflows ({fa.name} x {fb.name}, product_overflow="
                                 f"{ins.params.product_overflow})",
           "nonfinite_small_c": f"no e_dot reaches c_drop={ins.params.c_drop} ({fa.name} x {fb.name} products "
                                f"up to 2^{fa.emax + fb.emax}): the later model never drops a NaN or infinite c"}
    return {b.name: why[b.name] for b in bins if b.name not in reached}


# --------------------------------------------------------------------------- constructions

def _draw(rng, n: int, low: int, high: int):
    """``n`` random exponents in ``[low, high]``; None when the range is empty."""
    return None if low > high else rng.integers(low, high + 1, n)


def _sign_of(name: str, rng, n: int) -> np.ndarray:
    """+1 for a ``*_positive`` bin, -1 for ``*_negative``, random signs otherwise."""
    if name.endswith("positive"):
        return np.ones(n)
    if name.endswith("negative"):
        return -np.ones(n)
    return signs(rng, n)


def _p2(t) -> np.ndarray:
    return np.ldexp(1.0, np.asarray(t))


def _alignment_directed(ins, name, rng, n):
    lo, _, hi = _span(ins)
    F = ins.params.F
    t = _draw(rng, n, lo + F + 2, hi) if name != "exact" else _draw(rng, n, max(lo, -60), min(hi, 60))
    if t is None:
        return None
    big, s = signs(rng, n) * _p2(t), signs(rng, n)
    if name == "exact":
        return build(ins, n, {0: big})
    small = s * 1.5 * _p2(t - F) if name == "truncated" else s * _p2(t - F - 1)
    return build(ins, n, {0: big, 2: small})           # slot 2: the same (even) set as slot 0 in GFDRDA


def _dot_floor_directed(ins, name, rng, n):
    lo, _, hi = _span(ins)
    fc, dfb = get_format(ins.formats[2]), ins.params.dot_floor_bits
    t = _draw(rng, n, max(lo + 1, CLAMP - dfb + 8), min(hi, fc.emax - dfb))
    if t is None:
        return None
    s = _sign_of(name, rng, n)
    if name == "exact":
        return build(ins, n, {0: s * _p2(t)})
    return build(ins, n, {0: s * 1.5 * _p2(t)}, signs(rng, n) * _p2(t + dfb))   # c dominates by dfb binades


def _c_floor_directed(ins, name, rng, n):
    lo, _, hi = _span(ins)
    fc, cfb = get_format(ins.formats[2]), ins.params.c_floor_bits
    t = _draw(rng, n, max(lo, value_range(fc)[0] + cfb + 2, CLAMP + cfb + 2), min(hi, fc.emax))
    if t is None:
        return None
    s = _sign_of(name, rng, n)
    c = {"exact": 1.25 * _p2(t), "dropped_positive": 1.5 * _p2(t - cfb), "dropped_negative": 1.5 * _p2(t - cfb),
         "below_window_positive": 1.5 * _p2(t - cfb - 1), "below_window_negative": 1.5 * _p2(t - cfb - 1)}[name]
    return build(ins, n, {0: signs(rng, n) * _p2(t)}, s * c)


def _dominance_directed(ins, name, rng, n):
    lo, _, hi = _span(ins)
    fa, fb = (get_format(f) for f in ins.formats[:2])
    if name == "zero_c_above":                     # normal operands: the exponent is the value's
        t = _draw(rng, n, fa.emin + fb.emin, CLAMP - 1)
        return None if t is None else build(ins, n, {0: signs(rng, n) * _p2(t)})
    t = _draw(rng, n, max(lo, -60), min(hi, 60))
    r = rng.integers(1, 9, n)
    c = {"c_above": _p2(t + r), "equal": 1.25 * _p2(t), "dot_above": _p2(t - r)}[name]
    return build(ins, n, {0: signs(rng, n) * _p2(t)}, signs(rng, n) * c)


def _normalise_directed(ins, name, rng, n):
    lo, _, hi = _span(ins)
    fc = get_format(ins.formats[2])
    s = signs(rng, n)
    if name == "clamped":                          # a subnormal c alone, else a tiny product
        got = build(ins, n, {}, s * np.ldexp(rng.integers(1, 1 << 20, n).astype(float), value_range(fc)[0]))
        t = _draw(rng, n, lo, CLAMP - 2)
        return got if got is not None or t is None else build(ins, n, {0: s * _p2(t)})
    t = _draw(rng, n, max(lo + 1, -60), min(hi - 1, 60))
    if t is None:
        return None
    if name == "at_e_max":
        return build(ins, n, {0: s * _p2(t)})
    if name == "above_e_max":
        return build(ins, n, {0: s * 1.5 * _p2(t), 1: s * 1.5 * _p2(t)})
    return build(ins, n, {0: -s * 1.5 * _p2(t - 1)}, s * _p2(t))      # below: c - 0.75 c


def _final_floor_directed(ins, name, rng, n):
    lo, _, hi = _span(ins)
    fc, dfb = get_format(ins.formats[2]), ins.params.dot_floor_bits
    t = _draw(rng, n, max(lo + dfb, CLAMP + 8), min(hi + dfb, fc.emax))
    if t is None:
        return None
    s = _sign_of(name, rng, n)
    if name == "exact":
        return build(ins, n, {0: s * _p2(t)}, s * _p2(t))
    return build(ins, n, {0: s * _p2(t - dfb)}, s * _p2(t))      # one unit below 2^t: 33 bits, one floored


def _merge_directed(ins, name, rng, n):
    lo, _, hi = _span(ins)
    m = ins.params.merge_floor_bits
    t = _draw(rng, n, lo + m + 1, hi) if name != "exact" else _draw(rng, n, max(lo, -40), min(hi, 40))
    if t is None:
        return None
    big, s = signs(rng, n) * _p2(t), _sign_of(name, rng, n)
    small = s * _p2(t) if name == "exact" else s * 1.5 * _p2(t - m)
    even_big = rng.random() < 0.5                 # either set may be the smaller one
    return build(ins, n, {0: big, 1: small} if even_big else {1: big, 0: small})


def _sets_directed(ins, name, rng, n):
    lo, _, hi = _span(ins)
    t = _draw(rng, n, max(lo + 9, -40), min(hi, 40))
    if t is None:
        return None
    big, small = signs(rng, n) * _p2(t), signs(rng, n) * _p2(t - rng.integers(1, 9, n))
    slots = {"even_above": {0: big, 1: small}, "odd_above": {1: big, 0: small}, "equal": {0: big, 1: -1.5 * big},
             "even_only": {0: big, 2: small}, "odd_only": {1: big, 3: small}}[name]
    return build(ins, n, slots)


def _c_drop_directed(ins, name, rng, n):
    p = ins.params
    if p.c_drop is None:
        return None
    lo, _, hi = _span(ins)
    fc = get_format(ins.formats[2])
    if name == "nonfinite_kept":
        t = _draw(rng, n, max(lo, -40), min(hi, p.c_drop + NONFINITE_C_EXP))
        c = np.where(rng.random(n) < 0.5, np.nan, signs(rng, n) * np.inf) if fc.inf else np.full(n, np.nan)
        return None if t is None else build(ins, n, {0: _p2(t)}, c)
    t = _draw(rng, n, max(lo, CLAMP + p.c_drop + 12), hi)
    if t is None:
        return None
    below = {"kept_at_edge": 0, "dropped_at_edge": 1, "dropped_negative": 1 + rng.integers(0, 8, n)}[name]
    s = -np.ones(n) if name == "dropped_negative" else signs(rng, n)
    return build(ins, n, {0: signs(rng, n) * _p2(t)}, s * 1.5 * _p2(t - p.c_drop - below))


def _big(ins, s):
    """Products of the formats' largest values (far past 2^128), signs ``s``, as ``(a, b)``."""
    fa, fb = (get_format(f) for f in ins.formats[:2])
    return s * fa.max_finite, np.full(np.shape(s), fb.max_finite)


def _input_inf(ins, s, rng, n: int, slots: dict):
    """``slots`` plus an input infinity of signs ``s``: c where it can be infinite, else an operand."""
    fa, fc = get_format(ins.formats[0]), get_format(ins.formats[2])
    if fc.inf and rng.random() < 0.5 or not fa.inf:
        return build(ins, n, slots, s * np.inf)
    return build(ins, n, {**slots, 3: (s * np.inf, np.ones(n))})


def _overflow_directed(ins, name, rng, n):
    s = signs(rng, n)
    if name == "overflow":
        return build(ins, n, {0: _big(ins, s)})
    if name == "both_signs":
        return build(ins, n, {0: _big(ins, s), 1: _big(ins, -s)})
    return _input_inf(ins, s, rng, n, {0: _big(ins, s)})


def _disputed_directed(ins, name, rng, n):
    s = signs(rng, n)
    if name == "inf_meets_overflow":
        return _input_inf(ins, -s, rng, n, {0: _big(ins, s)})
    p, fc = ins.params, get_format(ins.formats[2])
    if p.c_drop is None:
        return None
    _, _, hi = _span(ins)
    t = _draw(rng, n, p.c_drop + NONFINITE_C_EXP + 1, hi)
    c = np.where(rng.random(n) < 0.5, np.nan, s * np.inf) if fc.inf else np.full(n, np.nan)
    return None if t is None else build(ins, n, {0: _p2(t)}, c)


# --------------------------------------------------------------------------- the points

FLOOR_BINS = (
    Bin("exact", "no non-zero bit is dropped"),
    Bin("dropped_positive", "a positive value loses non-zero bits (the floor truncates)"),
    Bin("dropped_negative", "a negative value loses non-zero bits (round-down moves it away from zero)"),
)
C_FLOOR_BINS = FLOOR_BINS + (
    Bin("below_window_positive", "a positive c lies wholly below the window (floors to zero)"),
    Bin("below_window_negative", "a negative c lies wholly below the window (round-down: minus one unit)"),
)
ALIGNMENT_BINS = (
    Bin("exact", "every product keeps all its bits in the F-bit window of its set's maximum"),
    Bin("truncated", "a product straddles the window's last place: its low bits are truncated (RZ)"),
    Bin("vanished", "a non-zero product lies wholly below the window: it is truncated to zero"),
)
MERGE_BINS = (
    Bin("exact", "both sets present, the merge drops nothing"),
    Bin("dropped_positive", "the smaller positive set sum loses non-zero bits at merge_floor_bits"),
    Bin("dropped_negative", "the smaller negative set sum loses non-zero bits (round-down: away from zero)"),
)
SETS_BINS = (
    Bin("even_above", "the even products' maximum exponent is above the odd ones'"),
    Bin("odd_above", "the odd products' maximum exponent is above the even ones'"),
    Bin("equal", "both sets share their maximum exponent"),
    Bin("even_only", "only even-index products are non-zero"),
    Bin("odd_only", "only odd-index products are non-zero"),
)
DOMINANCE_BINS = (
    Bin("c_above", "a non-zero c's exponent is above e_dot: the dot part is floored below c"),
    Bin("equal", "c's exponent equals e_dot"),
    Bin("dot_above", "e_dot is above c's exponent: c is floored below the dot part"),
    Bin("zero_c_above", "c is zero and its exponent -126 is above e_dot: the products are floored below 2^-126"),
)
NORMALISE_BINS = (
    Bin("above_e_max", "the sum carries: its exponent is above e_max"),
    Bin("at_e_max", "the sum's exponent is e_max"),
    Bin("below_e_max", "the sum cancels: its exponent is below e_max (and at least -126)"),
    Bin("clamped", "the sum lies below 2^-126: the exponent is held at -126 (a subnormal significand)"),
)
C_DROP_BINS = (
    Bin("kept_at_edge", "c's exponent is exactly e_max - c_drop: the lowest kept"),
    Bin("dropped_at_edge", "c's exponent is e_max - c_drop - 1: the highest dropped"),
    Bin("dropped_negative", "a negative c is dropped (a floor would have made it minus one unit)"),
    Bin("nonfinite_kept", "a NaN or infinite c with finite products below the later model's drop "
                          "(both readings agree)"),
)
OVERFLOW_BINS = (
    Bin("overflow", "a product of finite operands reaches 2^128 and becomes an infinity (the only special)"),
    Bin("both_signs", "products overflow to both infinities: NaN"),
    Bin("input_inf_same_sign", "an input infinity meets a product overflowing to the same infinity"),
)
DISPUTED_BINS = (
    Bin("inf_meets_overflow", "an input infinity (c or an operand) meets a product overflowing to the other "
                              "infinity in the same pass: paper -> that infinity, later model -> NaN"),
    Bin("nonfinite_small_c", "a NaN or infinite c meets finite products with e_dot - c_drop above -1: paper -> "
                             "NaN or that infinity, later model -> c dropped, a finite result"),
)


def _point(name, bins, hits, unreachable, directed, description):
    return CoverPoint(name, bins, hits, unreachable, description, directed)


def _disputed_point(names) -> CoverPoint:
    bins = tuple(b for b in DISPUTED_BINS if b.name in names)
    names = {b.name for b in bins}

    def hits(batch):
        return {k: h for k, h in _disputed_hits(batch).items() if k in names}

    return _point("disputed", bins, hits, lambda ins: _disputed_unreachable(ins, bins), _disputed_directed,
                  "the disputed special-value rules (Params.specials) by the descriptor's names")


AMD_POINTS = (
    _point("product_alignment", ALIGNMENT_BINS, _alignment_hits, _alignment_unreachable, _alignment_directed,
           "each product aligned to F bits below its set's maximum exponent, truncated"),
    _point("dot_floor", FLOOR_BINS, _dot_floor_hits, _dot_floor_unreachable, _dot_floor_directed,
           "the dot part floored at dot_floor_bits below 2^e_max"),
    _point("c_floor", C_FLOOR_BINS, _c_floor_hits, _c_floor_unreachable, _c_floor_directed,
           "a non-zero kept c floored at c_floor_bits below 2^e_max"),
    _point("c_vs_dot", DOMINANCE_BINS, _dominance_hits, _dominance_unreachable, _dominance_directed,
           "c's exponent against the products' e_dot"),
    _point("normalised", NORMALISE_BINS, _normalise_hits, _normalise_unreachable, _normalise_directed,
           "the sum's normalised exponent against e_max and the clamp at -126"),
    _point("final_floor", FLOOR_BINS, _final_floor_hits, _final_floor_unreachable, _final_floor_directed,
           "the normalised sum floored at final_floor_bits before the RNE rounding"),
    _point("c_drop", C_DROP_BINS, _c_drop_hits, _c_drop_unreachable, _c_drop_directed,
           "the small-c drop (c zeroed when e_c < e_max - c_drop)"),
    _point("product_overflow", OVERFLOW_BINS, _overflow_hits, _overflow_unreachable, _overflow_directed,
           "products overflowing to infinity at 2^128"),
)
"""The points FDRDA and GFDRDA share."""

GFDRDA_POINTS = (
    _point("merge_floor", MERGE_BINS, _merge_hits, _merge_unreachable, _merge_directed,
           "the even and odd sums floored at merge_floor_bits below 2^e_dot and added"),
    _point("merge_sets", SETS_BINS, _sets_hits, lambda ins: {}, _sets_directed,
           "the even and odd products' maximum exponents"),
)
"""GFDRDA's own: the even/odd merge."""

# the disputed bins mirror each descriptor's ``disputed`` (golden.algorithms; tests check they agree)
FDRDA_COVER_POINTS = (*AMD_POINTS, _disputed_point(("inf_meets_overflow",)), *CHAIN_POINTS, *COMMON_POINTS)
GFDRDA_COVER_POINTS = (*AMD_POINTS, *GFDRDA_POINTS, _disputed_point(("inf_meets_overflow", "nonfinite_small_c")),
                       *CHAIN_POINTS, *COMMON_POINTS)
