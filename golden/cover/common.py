"""Cover points every algorithm shares, read from the operands and the result alone.

``output``: the class of the result, and the overflow boundary.  ``special_operands``: each special
value (NaN, +inf, -inf) in each operand position.  ``special_cross``: c's class against the class of
the products ``a_k * b_k`` (IEEE rules), including an infinite c meeting a NaN product.

:func:`rounding_point` makes the point of the final rounding from an algorithm's pre-rounding value
(golden.cover.fda uses it with the fixed-point sum); :func:`rounding_position` classifies a value at
the output precision.  The directed constructors here use operands only (no algorithm's internals),
so that every algorithm can use them; where one misses, golden.cover.directed searches.

(Each algorithm's tuple in golden.algorithms lists these with its own; see golden.cover.fda.)
"""

from __future__ import annotations

import numpy as np

from ..datapath import pass_order
from ..descriptors import ALGORITHMS
from ..formats import INF, NAN, decode, from_float, get_format, special_bits, to_float
from .model import Batch, Bin, CoverPoint

__all__ = ["OUTPUT", "SPECIAL_OPERANDS", "SPECIAL_CROSS", "COMMON_POINTS", "result_values", "rounding_position",
           "rounding_point", "POSITIONS", "SIGNS", "zero_operands", "last_pass_columns", "set_value",
           "output_precision", "place_products", "largest_result"]


# --------------------------------------------------------------------------- operand helpers

def zero_operands(ins, n: int) -> tuple:
    """``(a, b, c, scale_a, scale_b)`` of ``n`` rows of +0 (uint64 bits), the block scales 1."""
    fa, fb, fc, _ = (get_format(f) for f in ins.formats)
    a, b = np.zeros((n, ins.k), np.uint64), np.zeros((n, ins.k), np.uint64)
    c = np.zeros(n, np.uint64)
    if not getattr(ins, "scale_format", None):
        return a, b, c, None, None
    one = np.uint64(from_float(get_format(ins.scale_format), np.asarray([1.0]))[0])
    blocks = ins.k // ins.block_size
    return a, b, c, np.full((n, blocks), one, np.uint64), np.full((n, blocks), one, np.uint64)


def last_pass_columns(ins) -> np.ndarray:
    """The columns of a and b that the last pass of ``ins``'s chain takes (every column when unchained):
    the final rounding is that pass's (earlier passes only hand c on)."""
    p, k = ins.params, ins.k
    L = p.pass_size if p.pass_size and p.pass_size < k else k
    order = pass_order(k, L, p.pass_interleave) if p.pass_interleave is not None else np.arange(k)
    return order[k - L:]


def set_value(fmt, values) -> tuple[np.ndarray, np.ndarray]:
    """``(bits, exact)``: float64 ``values`` as ``fmt`` bit patterns (RNE) and whether each is exact."""
    fmt = get_format(fmt)
    v = np.asarray(values, np.float64)
    bits = from_float(fmt, v).astype(np.uint64)
    back = to_float(fmt, bits)
    with np.errstate(invalid="ignore"):
        exact = (back == v) | (np.isnan(back) & np.isnan(v))
    return bits, exact


def output_precision(ins) -> int:
    """Fraction bits of the result: Params.out_frac_bits where narrower, else the output format's."""
    frac = getattr(ins.params, "out_frac_bits", None)
    return get_format(ins.d_format).man_bits if frac is None else int(frac)


# --------------------------------------------------------------------------- the result's class

def result_values(batch: Batch) -> np.ndarray:
    """The results as float64 ``[R]``."""
    fd = get_format(batch.instruction.d_format)
    return np.asarray(to_float(fd, batch.d.astype(np.uint64)), np.float64)


def largest_result(ins) -> float:
    """The largest finite magnitude a result can take: the output format's, at the output precision
    (Params.out_frac_bits: 13 fraction bits of an f32 leave its lowest ten off)."""
    fd = get_format(ins.d_format)
    ulp = 2.0 ** (fd.emax - output_precision(ins))
    return float(np.floor(fd.max_finite / ulp) * ulp)


def _output_hits(batch: Batch) -> dict:
    fd = get_format(batch.instruction.d_format)
    x = result_values(batch)
    nan, inf = np.isnan(x), np.isinf(x)
    fin = ~nan & ~inf
    zero = fin & (x == 0)
    sub = fin & ~zero & (np.abs(x) < 2.0 ** fd.emin)
    return {"nan": nan, "infinite": inf, "zero": zero, "subnormal": sub, "normal": fin & ~zero & ~sub,
            "max_finite": fin & (np.abs(x) == largest_result(batch.instruction))}


def term_bounds(ins) -> tuple[int, float]:
    """``(finest, top)``: the lowest bit any term (a product, with its block scales, or c) can carry, and
    the log2 of a bound on the magnitude of the exact sum of K products and c.  Every result of every
    algorithm is a multiple of ``2**finest`` (a rounding only drops bits) and, without an infinite or
    NaN input, below ``2**top``."""
    fa, fb, fc = (get_format(f) for f in ins.formats[:3])
    lsb = fa.emin - fa.man_bits + fb.emin - fb.man_bits
    top = (fa.emax + 1) + (fb.emax + 1)
    if getattr(ins, "scale_format", None):
        fs = get_format(ins.scale_format)
        lsb, top = lsb + 2 * (fs.emin - fs.man_bits), top + 2 * (fs.emax + 1)
    return min(lsb, fc.emin - fc.man_bits), max(top + float(np.log2(ins.k)), fc.emax + 1.0) + 1.0


def _output_unreachable(ins) -> dict:
    fd = get_format(ins.d_format)
    fa, fb, fc = (get_format(f) for f in ins.formats[:3])
    finest, top = term_bounds(ins)
    out = {}
    if not fd.subnormals:
        out["subnormal"] = f"the output format {fd.name} has no subnormals"
    elif ALGORITHMS[ins.params.base].flushes:
        out["subnormal"] = f"{ins.params.base} flushes every subnormal sum to zero"
    elif finest >= fd.emin:
        out["subnormal"] = (f"every result is a multiple of 2^{finest} (the finest bit of a term), at or above "
                            f"{fd.name}'s smallest normal 2^{fd.emin}")
    small = top < np.log2(largest_result(ins)) - 1        # a margin for a rounding up at the top
    why_small = f"finite terms sum to below 2^{top:.1f}, under {fd.name}'s largest finite"
    if small:
        out["max_finite"] = why_small
    if not fd.inf:
        out["infinite"] = f"the output format {fd.name} has no infinities"
    elif small and not any(f.inf for f in (fa, fb, fc)):
        out["infinite"] = f"no input format has infinities and the {why_small}"
    if not fd.has_nan:
        out["nan"] = f"the output format {fd.name} has no NaN"
    elif small and not any(f.inf or f.has_nan for f in (fa, fb, fc)):
        out["nan"] = f"no input format has NaN or infinities and the {why_small}"
    return out


def _output_directed(ins, name: str, rng, n: int):
    """c alone carries the result (a zero product changes nothing): a value of the class in c's format."""
    fc, fd = get_format(ins.formats[2]), get_format(ins.d_format)
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    target = {"normal": 1.0 + rng.integers(0, 8, n) / 8.0, "zero": np.zeros(n),
              "subnormal": np.full(n, 2.0 ** (fd.emin - 1)), "infinite": np.full(n, np.inf),
              "nan": np.full(n, np.nan), "max_finite": np.full(n, largest_result(ins))}[name]
    a, b, c, sa, sb = zero_operands(ins, n)
    if name == "infinite" and not fc.inf or name == "nan" and not fc.has_nan:
        return None
    c[:], _ = set_value(fc, sign * target)
    return a, b, c, sa, sb


OUTPUT = CoverPoint(
    "output",
    (Bin("normal", "the result is a normal number"),
     Bin("subnormal", "the result is subnormal"),
     Bin("zero", "the result is zero"),
     Bin("infinite", "the result is infinite"),
     Bin("nan", "the result is NaN"),
     Bin("max_finite", "the result is the largest finite magnitude (at the overflow boundary)")),
    _output_hits, _output_unreachable, description="the class of the result", directed=_output_directed)


# --------------------------------------------------------------------------- special operands

SPECIALS = (("nan", "NaN"), ("+inf", "+infinity"), ("-inf", "-infinity"))
OPERANDS = ("a", "b", "c")


def _classes(fmt, bits) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(nan, +inf, -inf)`` masks of bit patterns of ``fmt``."""
    d = decode(get_format(fmt), np.asarray(bits, np.uint64))
    inf = d.cls == INF
    return d.cls == NAN, inf & (d.sign == 0), inf & (d.sign == 1)


def _special_hits(batch: Batch) -> dict:
    out = {}
    for where, fmt, bits in zip(OPERANDS, batch.instruction.formats[:3], (batch.a, batch.b, batch.c)):
        masks = _classes(fmt, bits)
        for (kind, _), m in zip(SPECIALS, masks):
            out[f"{kind}_in_{where}"] = m.any(1) if m.ndim == 2 else m
    return out


def _special_unreachable(ins) -> dict:
    out = {}
    for where, fmt in zip(OPERANDS, ins.formats[:3]):
        f = get_format(fmt)
        if not f.has_nan:
            out[f"nan_in_{where}"] = f"{where}'s format {f.name} has no NaN"
        if not f.inf:
            for sign in "+-":
                out[f"{sign}inf_in_{where}"] = f"{where}'s format {f.name} has no infinities"
    return out


def _special_value(fmt, kind: str, n: int):
    """Bits of ``kind`` (``nan``, ``+inf``, ``-inf``) in ``fmt``, or None where it has none."""
    f = get_format(fmt)
    if kind == "nan":
        return None if not f.has_nan else np.full(n, special_bits(f, "nan"), np.uint64)
    if not f.inf:
        return None
    return np.full(n, special_bits(f, "inf", 1 if kind == "-inf" else 0), np.uint64)


def _normal_bits(fmt, shape, rng) -> np.ndarray:
    bits, _ = set_value(fmt, np.where(rng.random(shape) < 0.5, -1.0, 1.0) * (1 + rng.integers(0, 4, shape) / 4))
    return bits


def _special_directed(ins, name: str, rng, n: int):
    kind, where = name.split("_in_")
    fa, fb, fc, _ = ins.formats
    bits = _special_value({"a": fa, "b": fb, "c": fc}[where], kind, n)
    if bits is None:
        return None
    a, b, c, sa, sb = zero_operands(ins, n)
    a[:], b[:], c[:] = _normal_bits(fa, a.shape, rng), _normal_bits(fb, b.shape, rng), _normal_bits(fc, n, rng)
    if where == "c":
        c[:] = bits
    else:
        col = rng.integers(0, ins.k, n)
        (a if where == "a" else b)[np.arange(n), col] = bits
    return a, b, c, sa, sb


SPECIAL_OPERANDS = CoverPoint(
    "special_operands",
    tuple(Bin(f"{kind}_in_{where}", f"{where} holds {words}" + (" (in some position)" if where != "c" else ""))
          for where in OPERANDS for kind, words in SPECIALS),
    _special_hits, _special_unreachable, directed=_special_directed,
    description="each special value (NaN, +inf, -inf) in each operand position, from the operands' bits")


# --------------------------------------------------------------------------- c against the products

CLASSES = ("finite", "inf", "nan")


def _product_classes(batch: Batch) -> dict:
    """``{class: bool [R]}`` of the products a_k * b_k by IEEE rules (the worst product of the row)."""
    fa, fb = batch.instruction.formats[:2]
    va, vb = to_float(get_format(fa), batch.a), to_float(get_format(fb), batch.b)
    with np.errstate(all="ignore"):
        p = va * vb                              # inf * 0 is NaN, as the rules say
    nan = np.isnan(p).any(1)
    inf = ~nan & np.isinf(p).any(1)
    return {"finite": ~nan & ~inf, "inf": inf, "nan": nan}


def _cross_hits(batch: Batch) -> dict:
    cv = to_float(get_format(batch.instruction.formats[2]), batch.c)
    cc = {"nan": np.isnan(cv), "inf": np.isinf(cv), "finite": np.isfinite(cv)}
    pc = _product_classes(batch)
    return {f"c_{x}*products_{y}": cc[x] & pc[y] for x in CLASSES for y in CLASSES}


def _cross_unreachable(ins) -> dict:
    fa, fb, fc = (get_format(f) for f in ins.formats[:3])
    why_c = {"inf": None if fc.inf else f"c's format {fc.name} has no infinities",
             "nan": None if fc.has_nan else f"c's format {fc.name} has no NaN"}
    some_inf = fa.inf or fb.inf
    why_p = {"inf": None if some_inf else f"neither {fa.name} nor {fb.name} has infinities",
             "nan": None if fa.has_nan or fb.has_nan or some_inf     # inf * 0 is NaN
             else f"neither {fa.name} nor {fb.name} has NaN or infinities"}
    out = {}
    for x in CLASSES:
        for y in CLASSES:
            why = why_c.get(x) or why_p.get(y)
            if why:
                out[f"c_{x}*products_{y}"] = why
    return out


def _product_special(ins, kind: str, n: int, rng):
    """``(a bits, b bits)`` of one product of class ``kind`` (``inf``: inf * 1; ``nan``: NaN * 1, or
    inf * 0 where neither format has NaN), or None."""
    fa, fb = (get_format(f) for f in ins.formats[:2])
    one_a, one_b = set_value(fa, np.ones(n))[0], set_value(fb, np.ones(n))[0]
    sign = "-" if rng.random() < 0.5 else "+"
    if kind == "inf":
        if fa.inf:
            return _special_value(fa, f"{sign}inf", n), one_b
        return (one_a, _special_value(fb, f"{sign}inf", n)) if fb.inf else None
    if fa.has_nan:
        return _special_value(fa, "nan", n), one_b
    if fb.has_nan:
        return one_a, _special_value(fb, "nan", n)
    if fa.inf:
        return _special_value(fa, "+inf", n), np.zeros(n, np.uint64)
    return (np.zeros(n, np.uint64), _special_value(fb, "+inf", n)) if fb.inf else None


def _cross_directed(ins, name: str, rng, n: int):
    cls_c, cls_p = (s.split("_", 1)[1] for s in name.split("*"))
    fa, fb, fc, _ = ins.formats
    a, b, c, sa, sb = zero_operands(ins, n)
    a[:], b[:] = _normal_bits(fa, a.shape, rng), _normal_bits(fb, b.shape, rng)
    c[:] = _normal_bits(fc, n, rng) if cls_c == "finite" else _special_value(
        fc, cls_c if cls_c == "nan" else ("-inf" if rng.random() < 0.5 else "+inf"), n)
    if cls_p != "finite":
        got = _product_special(ins, cls_p, n, rng)
        if got is None:
            return None
        col = rng.integers(0, ins.k, n)
        a[np.arange(n), col], b[np.arange(n), col] = got
    return a, b, c, sa, sb


SPECIAL_CROSS = CoverPoint(
    "special_cross",
    tuple(Bin(f"c_{x}*products_{y}", f"c is {x}, and the worst product a_k*b_k is {y}")
          for x in CLASSES for y in CLASSES),
    _cross_hits, _cross_unreachable, directed=_cross_directed,
    description="c's class (finite, inf, NaN) against the products' (NaN if any product is NaN, else inf if "
                "any is infinite), by IEEE rules from the operands")


# --------------------------------------------------------------------------- the final rounding

POSITIONS = (("exact", "the value is representable at the output precision"),
             ("below_half", "the bits below the last place are non-zero and below half an ulp"),
             ("tie", "the bits below the last place are exactly half an ulp (a tie, zero sticky)"),
             ("above_half", "the bits below the last place are above half an ulp"),
             ("tie_at_min_exponent", "a tie whose ulp is the output format's smallest (|value| < 2^(emin+1))"))
SIGNS = (("positive", "the value is positive"), ("negative", "the value is negative"))


def rounding_position(values, fmt, frac_bits: int) -> dict:
    """``{position: bool}`` of finite non-zero float64 ``values`` (exact pre-rounding values) rounded at
    ``frac_bits`` fraction bits of ``fmt`` (its exponent range: below 2^emin the last place stays
    2^(emin - frac_bits)); NaN, infinities and zeros are in no position."""
    fmt = get_format(fmt)
    v = np.abs(np.asarray(values, np.float64))
    live = np.isfinite(v) & (v != 0)
    v = np.where(live, v, 1.0)
    _, ex = np.frexp(v)                                     # v = m * 2^ex, m in [0.5, 1)
    e = np.maximum(ex - 1, fmt.emin)
    scaled = np.ldexp(v, (frac_bits - e).astype(np.int32))  # v in units of the last place: exact
    rest = scaled - np.floor(scaled)
    tie = live & (rest == 0.5)
    return {"exact": live & (rest == 0), "below_half": live & (rest > 0) & (rest < 0.5), "tie": tie,
            "above_half": live & (rest > 0.5), "tie_at_min_exponent": tie & (v < 2.0 ** (fmt.emin + 1))}


def rounding_point(pre_rounding, unreachable=None, name: str = "rounding") -> CoverPoint:
    """The point of the final rounding: ``pre_rounding(batch)`` -> the exact value each row rounds
    (float64 ``[R]``; NaN where a row has none), by position at the output precision and by sign.
    ``unreachable(ins)`` -> ``{position: reason}`` (applied to both signs)."""

    def hits(batch):
        v = pre_rounding(batch)
        pos = rounding_position(v, batch.instruction.d_format, output_precision(batch.instruction))
        sign = {"positive": v > 0, "negative": v < 0}
        return {f"{p}*{s}": pos[p] & sign[s] for p, _ in POSITIONS for s, _ in SIGNS}

    def why(ins):
        got = {} if unreachable is None else unreachable(ins)
        return {f"{p}*{s}": got[p] for p, _ in POSITIONS for s, _ in SIGNS if p in got}

    bins = tuple(Bin(f"{p}*{s}", f"{pd}, and {sd}") for p, pd in POSITIONS for s, sd in SIGNS)
    return CoverPoint(name, bins, hits, why, directed=_rounding_directed,
                      description="the final rounding: the pre-rounding value's bits below the output's last "
                                  "place, by the value's sign (meaningful under any rounding mode)")


_DELTA = {"exact": 0, "below_half": 1, "tie": 2, "above_half": 3, "tie_at_min_exponent": 2}


def _pow2_range(fmt, normal: bool = False) -> tuple[int, int]:
    """Exponents e with 2^e exactly representable in ``fmt`` (``normal``: as a normal number, so that its
    exponent is e)."""
    f = get_format(fmt)
    return f.emin - (f.man_bits if f.subnormals and not normal else 0), f.emax


def _rounding_directed(ins, name: str, rng, n: int):
    """``top + delta``: top = t * 2^E (t = 1, 2, 4 terms of 2^E: c and products), delta = m quarter-ulps of
    the result's binade (m = 0..3), all of one sign, each product a single a_k * b_k (* the block scales)
    in the last pass; the variants differ in t, E and which terms c carries."""
    pos, sign_name = name.split("*")
    fd, fc = get_format(ins.d_format), get_format(ins.formats[2])
    p = output_precision(ins)
    ops = zero_operands(ins, n)
    a, b, c, sa, sb = ops
    cols = last_pass_columns(ins)
    s = -1.0 if sign_name == "negative" else 1.0
    for r in range(n):
        log_t = int(rng.integers(0, 3))
        if pos == "tie_at_min_exponent":
            e_res = fd.emin - int(rng.integers(0, 2))          # the smallest normal binade, or subnormal
        else:
            e_res = int(rng.integers(-4, 5))
        E = e_res - log_t
        m = _DELTA[pos] if pos != "exact" else int(rng.choice([0, 4]))
        terms = [E] * (1 << log_t)
        via_c = rng.random() < 0.6
        c_val = s * 2.0 ** E if via_c else 0.0
        if via_c:
            terms = terms[1:]
        delta = m * 2.0 ** (e_res - p - 2)
        if m and rng.random() < 0.3 and via_c:
            c_val += s * delta                               # c carries the low bits too (a wider c)
            delta = 0.0
        _place(ins, ops, r, cols, [(1, x) for x in terms] + ([(m, e_res - p - 2)] if delta else []), s, rng)
        c[r] = set_value(fc, np.asarray([c_val]))[0][0]
    return a, b, c, sa, sb


def _place(ins, ops, r: int, cols, products, sign, rng, normal: bool = False) -> None:
    """Write the products ``sign * m * 2^x`` (``(m, x)`` pairs, m = 1..3) into row ``r``'s columns
    ``cols`` as ``a_k * b_k`` (times one scale 2^S for the row when scaled); ``normal``: a and b normal,
    so each product's exponent e_a + e_b is x (m = 3 adds one); ``sign``: one, or one per product.  A
    product no split realises is left out (the row then misses, and is measured as it is)."""
    a, b, _, sa, sb = ops
    fa, fb = ins.formats[:2]
    (la, ha), (lb, hb) = _pow2_range(fa, normal), _pow2_range(fb, normal)
    signs = np.broadcast_to(np.asarray(sign, np.float64), (len(products),))
    S = 0
    if sa is not None and products:
        fs = get_format(ins.scale_format)
        lo, hi = _pow2_range(fs)
        xs = [x for _, x in products]            # centre the row's products in the range a * b spans
        S = int(np.clip((min(xs) + max(xs) - (la + lb + ha + hb)) // 2, 2 * lo, 2 * hi))
        sa[r], _ = set_value(fs, np.full(sa.shape[1], 2.0 ** (S // 2)))
        sb[r], _ = set_value(fs, np.full(sb.shape[1], 2.0 ** (S - S // 2)))
    for j, ((m, x), sj) in enumerate(zip(products[:len(cols)], signs)):
        while m % 2 == 0:                          # an even m is a power of two more
            m, x = m // 2, x + 1
        want = x - S
        lo_a, hi_a = max(la, want - hb), min(ha - (1 if m > 1 else 0), want - lb)
        if lo_a > hi_a:
            continue
        xa = int(rng.integers(lo_a, hi_a + 1))
        av, aok = set_value(fa, np.asarray([sj * m * 2.0 ** xa]))
        bv, bok = set_value(fb, np.asarray([2.0 ** (want - xa)]))
        if aok[0] and bok[0]:
            a[r, cols[j]], b[r, cols[j]] = av[0], bv[0]


place_products = _place

COMMON_POINTS = (OUTPUT, SPECIAL_OPERANDS, SPECIAL_CROSS)
"""The points every algorithm (FDA, GDFS, FDRDA, GFDRDA, SFMA, GPS, and their chains) measures: from
the operands and the result only."""


# --------------------------------------------------------------------------- alignment shift against F

def shift_bins(term: str) -> tuple:
    """The bins of a term's alignment shift ``e_max - e`` against the window F (FDA's products, GDFS's
    scaled group terms): inside, F-1, F, F+1, beyond."""
    return (Bin("inside", f"{term}'s alignment shift e_max - e is below F-1"),
            Bin("F-1", f"{term}'s alignment shift is exactly F-1"),
            Bin("F", f"{term}'s alignment shift is exactly F"),
            Bin("F+1", f"{term}'s alignment shift is exactly F+1"),
            Bin("beyond", f"{term}'s alignment shift is above F+1 (the term is truncated away)"))


def add_shift_hits(out: dict, shift: np.ndarray, live: np.ndarray, F: int) -> None:
    """Rows ``[R]`` where some live term (``live [R, K]``) has its ``shift [R, K]`` in each bin, or-ed
    into ``out`` (:func:`shift_bins`' names)."""
    for name, where in (("inside", shift < F - 1), ("F-1", shift == F - 1), ("F", shift == F),
                        ("F+1", shift == F + 1), ("beyond", shift > F + 1)):
        out[name] |= (live & where).any(1)
