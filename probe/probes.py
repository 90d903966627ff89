"""The probes: black-box experiments on a backend, after MMA-Sim section III and Fasi et al.

Every probe takes a :class:`~probe.rig.Rig` (one instruction's interface on one
backend) and returns plain data (a dict).  Summands are numbered ``0..K-1`` for the
products and ``K`` for ``c``.  Nothing here reads the catalog's algorithm parameters.
"""

from __future__ import annotations

import math

import numpy as np

from golden.formats import get_format, round_to_format, to_float

from .rig import Row, exact_in

MODES = ("RU", "RD", "RZ", "RA", "RN")
TIES = ("RNU", "RND", "RNZ", "RNA", "RNE", "RNO")
T_MAX = 72                       # deepest bit position tried by the precision scans


# --------------------------------------------------------------------------- helpers

def _row(rig, terms: dict) -> Row:
    """A row from summand values (index K is c)."""
    K = rig.K
    return Row({k: float(v) for k, v in terms.items() if k != K}, c=float(terms.get(K, 0.0)))


def _round_int(x: float, mode: str) -> int:
    """Round the real ``x`` (in units) to an integer with a rounding mode or RN tie rule."""
    fl = math.floor(x)
    frac = x - fl
    if frac == 0:
        return int(x)
    if mode == "RU":
        return fl + 1
    if mode == "RD":
        return fl
    if mode == "RZ":
        return int(math.trunc(x))
    if mode == "RA":
        return fl + 1 if x > 0 else fl
    if frac != 0.5:
        return fl + 1 if frac > 0.5 else fl
    tie = {"RNU": fl + 1, "RND": fl, "RNZ": int(math.trunc(x)), "RNA": fl + 1 if x > 0 else fl,
           "RNE": fl if fl % 2 == 0 else fl + 1, "RNO": fl if fl % 2 else fl + 1}
    return tie[mode if mode in tie else "RNE"]


def classify_rounding(observed: dict) -> dict:
    """Tables I and II of the paper: ``observed`` maps an input offset (units of u) to the
    rounded offset; returns ``{"mode": ..., "tie": ...}`` (None where undecided)."""
    t1 = [x for x in (0.75, 0.25, -0.75, -0.25) if observed.get(x) is not None]
    mode = None
    if len(t1) == 4:
        hits = [m for m in MODES if all(_round_int(x, m if m != "RN" else "RNE") == observed[x] for x in t1)]
        mode = hits[0] if len(hits) == 1 else None
    tie = None
    if mode == "RN":
        t2 = [x for x in (0.5, 1.5, -0.5, -1.5) if observed.get(x) is not None]
        if len(t2) == 4:
            hits = [m for m in TIES if all(_round_int(x, m) == observed[x] for x in t2)]
            tie = hits[0] if len(hits) == 1 else None
    return {"mode": mode, "tie": tie, "observed": {str(k): v for k, v in observed.items()}}


def rounding_name(r: dict) -> str | None:
    """``RZ``, ``RD``, ``RU``, ``RA`` or the RN tie rule (``RNE``...)."""
    if r is None or r.get("mode") is None:
        return None
    return r["tie"] if r["mode"] == "RN" else r["mode"]


def _out_max_exp(rig) -> int:
    return rig.fd.emax


def _pick_X(rig, on_c=False, limit=None):
    """Largest power of two e with +-2**e available where needed, 2**(e+3) inside the output range."""
    top = _out_max_exp(rig) - 3 if limit is None else limit
    for e in range(top, -200, -1):
        v = math.ldexp(1.0, e)
        if not (rig.has_prod(v) and rig.has_prod(-v)):
            continue
        if on_c and not (rig.c_ok(v) and rig.c_ok(-v)):
            continue
        return e
    return None


def _first_fail(flags):
    """(largest t with every earlier flag True, exact?) from a list of (t, flag or None)."""
    last = 0
    for t, f in flags:
        if f is None:
            return last, False
        if not f:
            return last, True
        last = t
    return last, False


# --------------------------------------------------------------------------- III-B

def independence(rig, n: int = 256, seed: int = 5) -> dict:
    """III-B: every output element is computed the same way.

    The dot-add of each random vector must not depend on where it sits in the batch or on
    its neighbours (the GPU backend spreads a batch over the elements of matrices, so this
    is the paper's test there): the batch is run forward, reversed and interleaved.
    """
    from golden.vectors import random_operands
    rng = np.random.default_rng(seed)
    ins = rig.ins
    a, b, c, sa, sb = random_operands(ins, n, rng, kind="normal")
    from .backends import check_output

    def run(idx):
        args = (a[idx], b[idx], c[idx], None if sa is None else sa[idx], None if sb is None else sb[idx])
        return check_output(ins, rig.backend(ins, *args), len(idx), rig.name)

    base = np.arange(n)
    d0 = run(base)
    rev = run(base[::-1])[::-1]
    inter = np.r_[base[n // 2:], base[: n // 2]]
    d2 = run(inter)[np.argsort(inter)]
    same = bool((d0 == rev).all() and (d0 == d2).all())
    return {"independent": same, "vectors": n,
            "differences": int((d0 != rev).sum() + (d0 != d2).sum())}


# --------------------------------------------------------------------------- output precision

def _m_terms(rig):
    """Terms whose exact sum is 4 (leading bit two above the largest term's exponent)."""
    K = rig.K                                     # in the last products: the last pass of a chain
    if K >= 3:
        return {K - 3: 1.5, K - 2: 1.5, K - 1: 1.0}
    if K == 2:
        return {0: 2.0, 1: 2.0}
    return {0: 4.0}


def output_precision(rig) -> dict:
    """Fraction bits of the result: the largest t for which 4 + 2**(2-t) comes back exactly
    (the small part carried by c, the 4 by products; III-D's ``1 + eps`` on the final sum)."""
    K = rig.K
    base = _m_terms(rig)
    rows, ts = [], []
    for t in range(1, T_MAX):
        eps = math.ldexp(1.0, 2 - t)
        if not rig.c_ok(eps):
            break
        rows.append(_row(rig, {**base, K: eps}))
        ts.append(t)
    vals, _ = rig.run(rows)
    flags = [(t, None if v is None else v == 4.0 + math.ldexp(1.0, 2 - t)) for t, v in zip(ts, vals)]
    p, exact = _first_fail(flags)
    return {"bits": p, "exact": exact}


# --------------------------------------------------------------------------- III-C

class Node:
    def __init__(self, children, level, leaves):
        self.children, self.level, self.leaves = children, level, frozenset(leaves)

    @property
    def exact(self):
        return len(self.leaves) != self.level and len(self.children) > 2

    def show(self, K) -> str:
        def name(x):
            return "c" if x == K else f"#{x}"
        def key(ch):
            leaves = {ch} if isinstance(ch, int) else ch.leaves
            return (0 if K in leaves else 1, min(x for x in leaves))
        parts = [name(ch) if isinstance(ch, int) else ch.show(K) for ch in sorted(self.children, key=key)]
        if self.exact:
            return "exact(" + ", ".join(parts) + ")"
        if len(parts) == 2:
            return "(" + " + ".join(parts) + ")"
        return f"fused{len(parts)}(" + ", ".join(parts) + ")"


def _build_tree(n, size):
    """Single-linkage dendrogram from the leaf count of each pair's lowest common ancestor."""
    parent = list(range(n))
    node_of = {i: i for i in range(n)}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for level in sorted(set(size.values())):
        groups: dict = {}
        for (i, j), s in size.items():
            if s != level:
                continue
            ri, rj = find(i), find(j)
            if ri == rj:
                continue
            groups.setdefault(ri, set()).add(ri)
            groups.setdefault(rj, set()).add(rj)
            # merge the two sets of roots
            gi, gj = groups[ri], groups[rj]
            if gi is not gj:
                gi |= gj
                for r in gj:
                    groups[r] = gi
        seen = set()
        for g in groups.values():
            if id(g) in seen:
                continue
            seen.add(id(g))
            roots = sorted(g)
            children = [node_of[r] for r in roots]
            leaves = set()
            for ch in children:
                leaves |= {ch} if isinstance(ch, int) else set(ch.leaves)
            node = Node(children, level, leaves)
            for r in roots[1:]:
                parent[r] = roots[0]
            node_of[roots[0]] = node
    roots = {find(i) for i in range(n)}
    if len(roots) != 1:
        return None
    return node_of[roots.pop()]


def _consistent(tree, size, K) -> bool:
    """Every pair meets in a subtree of the measured size (2 inside an exact group); c is in no exact group."""
    stack = [tree]
    while stack:
        n = stack.pop()
        if isinstance(n, int):
            continue
        if n.exact and K in n.leaves:
            return False
        kids = [frozenset([ch]) if isinstance(ch, int) else ch.leaves for ch in n.children]
        want = 2 if n.exact else len(n.leaves)
        for x in range(len(kids)):
            for y in range(x + 1, len(kids)):
                for i in kids[x]:
                    for j in kids[y]:
                        if size[(min(i, j), max(i, j))] != want:
                            return False
        stack.extend(n.children)
    return True


def summation_tree(rig) -> dict:
    """III-C: the summation order from +X, -X and small y everywhere else.

    For each pair (i, j) of summands, X sits at i, -X at j and y at every other summand;
    ``d / y`` counts the summands added after X and -X met, so ``K + 1 - d / y`` is the
    size of the subtree where they meet.  The subtrees give the tree (multiway nodes are
    t-term fused sums); pairs that cancel with nothing lost form exact groups.
    """
    K = rig.K
    eX = _pick_X(rig, on_c=True)
    ys = [e for e in range(rig.fd.emin, (eX or 0)) if rig.has_prod(math.ldexp(1.0, e))
          and rig.c_ok(math.ldexp(1.0, e)) and rig.out_bits(math.ldexp(1.0, e) * (K + 1)) is not None]
    if eX is None or not ys:
        return {"feasible": False, "reason": "no +-X and y available as products"}
    ey = ys[0]
    gap = eX - ey
    if gap < 24:
        return {"feasible": False, "reason": f"the products span only 2^{gap}: X cannot swamp y", "gap": gap}
    X, y = math.ldexp(1.0, eX), math.ldexp(1.0, ey)
    pairs = [(i, j) for i in range(K + 1) for j in range(i + 1, K + 1)]
    rows = []
    for i, j in pairs:
        terms = {k: y for k in range(K + 1)}
        terms[i], terms[j] = X, -X
        rows.append(_row(rig, terms))
    vals, _ = rig.run(rows)
    size = {}
    for (i, j), v in zip(pairs, vals):
        if v is None:
            return {"feasible": False, "reason": "a row could not be built or computed", "gap": gap}
        s = v / y
        if s != int(s) or not 0 <= s <= K - 1:
            return {"feasible": False, "reason": f"d / y = {s} for X at {i}, -X at {j}", "gap": gap}
        size[(i, j)] = K + 1 - int(s)
    tree = _build_tree(K + 1, size)
    if tree is None or not _consistent(tree, size, K):
        return {"feasible": False, "reason": f"inconsistent subtree sizes (X/y = 2^{gap} is too small a gap: "
                "partial sums of y survive in part)", "gap": gap}
    return {"feasible": True, "gap": gap, "X": eX, "y": ey, "tree": tree, "text": tree.show(K)}


def pass_membership(rig, p_out: int) -> dict:
    """Which products share a fused pass, when the formats are too narrow for III-C.

    ``c = 2**(p+1)`` (its last place is 2) and two products of 1: in one pass they sum
    exactly to ``c + 2``; in successive passes each 1 is rounded away from the
    intermediate result.  Needs more alignment bits than result bits.
    """
    K = rig.K
    c = math.ldexp(1.0, p_out + 1)
    if not rig.c_ok(c) or not rig.has_prod(1.0) or not rig.has_prod(2.0):
        return {"feasible": False, "reason": "c = 2^(p+1) or the product 1 not available"}
    check, _ = rig.run([_row(rig, {0: 2.0, K: c})])
    if check[0] != c + 2:
        return {"feasible": False, "reason": "c + 2 is not exact (alignment no wider than the result)"}
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
    vals, _ = rig.run([_row(rig, {i: 1.0, j: 1.0, K: c}) for i, j in pairs])
    parent = list(range(K))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for (i, j), v in zip(pairs, vals):
        if v == c + 2:
            parent[find(j)] = find(i)
    classes: dict = {}
    for k in range(K):
        classes.setdefault(find(k), []).append(k)
    passes = sorted(classes.values())
    return {"feasible": True, "passes": passes}


def structure(tree_res: dict, pm: dict | None, K: int) -> dict:
    """The algorithm's shape from the tree (or the pass membership)."""
    if tree_res.get("feasible"):
        tree = tree_res["tree"]
        chain, cur = [], tree
        while not isinstance(cur, int):
            chain.append(cur)
            cur = next(ch for ch in cur.children if (ch == K if isinstance(ch, int) else K in ch.leaves))
        chain.reverse()
        nodes, stack = [], [tree]
        while stack:
            n = stack.pop()
            if not isinstance(n, int):
                nodes.append(n)
                stack.extend(n.children)
        exact_groups = sorted(sorted(n.leaves) for n in nodes if n.exact)
        binary = all(len(n.children) == 2 for n in nodes)
        if binary:
            groups = []
            for n in chain:
                other = [ch for ch in n.children if not (ch == K if isinstance(ch, int) else K in ch.leaves)][0]
                groups.append(sorted([other] if isinstance(other, int) else other.leaves))
            sizes = {len(g) for g in groups}
            G = sizes.pop() if len(sizes) == 1 else None
            kind = "sequential" if G == 1 else "pairwise-groups"
            return {"kind": kind, "binary": True, "group": G, "groups": groups, "pass_size": None,
                    "c_first": chain[0] is not None, "exact_groups": exact_groups, "source": "tree"}
        passes = []
        for n in chain:
            prods = []
            for ch in n.children:
                if isinstance(ch, int):
                    if ch != K:
                        prods.append(ch)
                elif K not in ch.leaves:
                    prods.extend(sorted(ch.leaves))
            passes.append(sorted(prods))
        c_first = any(ch == K for ch in chain[0].children)
        L = len(passes[0]) if passes else None
        even = all(len(p) == L for p in passes)
        return {"kind": "fused", "binary": False, "pass_size": L if even else None, "passes": passes,
                "c_first": c_first, "exact_groups": exact_groups, "source": "tree"}
    if pm and pm.get("feasible"):
        passes = pm["passes"]
        L = len(passes[0])
        return {"kind": "fused", "binary": False, "pass_size": L if all(len(p) == L for p in passes) else None,
                "passes": passes, "c_first": None, "exact_groups": [], "source": "pass membership"}
    return {"kind": None, "binary": None, "pass_size": None, "passes": None, "c_first": None,
            "exact_groups": [], "source": None}


# --------------------------------------------------------------------------- III-D, III-E

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
        eX = _pick_X(rig, on_c=K in (i, j))
        if eX is None:
            continue
        X = math.ldexp(1.0, eX)
        for sign in (1, -1):
            for t in range(1, T_MAX):
                eps = sign * math.ldexp(1.0, eX - t)
                ok = (rig.has_prod(eps) if k != K else rig.c_ok(eps)) and rig.out_bits(eps) is not None
                plan.append((k, sign, t, eps, _row(rig, {i: X, j: -X, k: eps}) if ok else None))
        per[k] = {"partners": (i, j), "X": eX}
    rows = [p[4] for p in plan if p[4] is not None]
    vals, _ = rig.run(rows)
    it = iter(vals)
    res: dict = {}
    for k, sign, t, eps, row in plan:
        v = next(it) if row is not None else None
        res.setdefault((k, sign), []).append((t, None if v is None else v == eps))
    for k in per:
        per[k]["bits"], per[k]["exact"] = _first_fail(res[(k, 1)])
        per[k]["neg_bits"], per[k]["neg_exact"] = _first_fail(res[(k, -1)])
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
                rows.append(_row(rig, {i: X, j: -X, k: e}))
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
            plan.append((k, t, eps, _row(rig, {one: 1.0, k: eps}) if ok else None))
    vals, _ = rig.run([p[3] for p in plan if p[3] is not None])
    it = iter(vals)
    res: dict = {}
    for k, t, eps, row in plan:
        v = next(it) if row is not None else None
        res.setdefault(k, []).append((t, None if v is None else v == 1.0 + eps))
    for k in range(K + 1):
        bits, exact = _first_fail(res[k])
        per[k] = {"bits": bits, "exact": exact}
    return {"per_summand": per}


def output_rounding(rig, p_out: int) -> dict:
    """III-E, Tables I and II on the final rounding: exact sums ``4 + f*u`` (u the last place
    of the result at 4; f in +-0.75, +-0.25, then +-0.5, +-1.5), the 4 from products, f*u in c."""
    K = rig.K
    base = _m_terms(rig)
    u = math.ldexp(1.0, 2 - p_out)
    rows, keys = [], []
    for f in (0.75, 0.25, -0.75, -0.25, 0.5, 1.5, -0.5, -1.5):
        s = 1 if f > 0 else -1
        terms = {k: s * v for k, v in base.items()}
        terms[K] = s * abs(f) * u
        if not rig.c_ok(terms[K]):
            continue
        rows.append(_row(rig, terms))
        keys.append(f)
    vals, _ = rig.run(rows)
    obs = {}
    for f, v in zip(keys, vals):
        if v is not None:
            s = 1 if f > 0 else -1
            obs[f] = (v - s * 4.0) / u
    return classify_rounding(obs)


# --------------------------------------------------------------------------- III-F

def _bits_of(fmt, v):
    return exact_in(fmt, v)


def special_values(rig, p_out: int) -> dict:
    """III-F: subnormal inputs, products and sums (flushed or kept), -0, product and
    intermediate overflow with the boundary cases, NaN generation, TF32 low bits."""
    K, fa, fb, fc, fd = rig.K, rig.fa, rig.fb, rig.fc, rig.fd
    cases = {}

    def add(name, row, judge):
        cases[name] = (row, judge)

    one_a, one_b = _bits_of(fa, 1.0), _bits_of(fb, 1.0)
    # subnormal inputs
    if fc.subnormals and fc.man_bits:
        v = math.ldexp(1.0, fc.emin - 1)
        add("subnormal c", Row({}, c=v), lambda d, v=v: _kept(d, v))
    for side, fmt in (("a", fa), ("b", fb)):
        if fmt.subnormals and fmt.man_bits and one_a is not None and one_b is not None:
            v = math.ldexp(1.0, fmt.emin - 1)
            bits = _bits_of(fmt, v)
            raw = {("a", 0): bits if side == "a" else one_a, ("b", 0): bits if side == "b" else one_b}
            if rig.out_bits(v) is not None:
                add(f"subnormal {side}", Row({}, 0.0, raw), lambda d, v=v: _kept(d, v))
    # subnormal product (in the result format) from normal operands
    v = math.ldexp(1.0, fd.emin - 1)
    p = rig.prod(v)
    if p is not None and rig._is_normal(fa, p[0]) and rig._is_normal(fb, p[1]) and \
            abs(float(to_float(fa, np.array([p[0]], np.uint64))[0])) >= math.ldexp(1.0, fa.emin) and \
            abs(float(to_float(fb, np.array([p[1]], np.uint64))[0])) >= math.ldexp(1.0, fb.emin):
        add("subnormal product", Row({0: v}), lambda d, v=v: _kept(d, v))
    # subnormal sum: 1.5 eps - eps
    e = math.ldexp(1.0, fd.emin)
    if K >= 2 and rig.has_prod(1.5 * e) and rig.has_prod(-e):
        add("subnormal sum", Row({0: 1.5 * e, 1: -e}), lambda d, e=e: _kept(d, 0.5 * e))
    elif rig.c_ok(1.5 * e) and rig.has_prod(-e):
        add("subnormal sum", Row({0: -e}, c=1.5 * e), lambda d, e=e: _kept(d, 0.5 * e))
    # negative zero
    zb = _bits_of(fb, -0.0)
    if zb is not None and rig.c_ok(-0.0):
        raw = {("b", k): zb for k in range(K)}
        add("-0 + sum(+0 * -0)", Row({}, -0.0, raw), lambda d: _zero_sign(d))
    tiny = _tiny_negative_product(rig, fd.emin - fd.man_bits - 2)
    if tiny is not None:
        add("-tiny product rounding to zero", Row({}, 0.0, {("a", K - 1): tiny[0], ("b", K - 1): tiny[1]}),
            lambda d: _zero_sign(d))
    if K >= 2 and rig.has_prod(1.0) and rig.has_prod(-1.0):
        add("1 - 1 (exact cancellation)", Row({0: 1.0, 1: -1.0}), lambda d: _zero_sign(d))
    # overflow
    E = fd.emax
    big = math.ldexp(1.0, E + 1) if E < 1023 else math.inf
    if math.isfinite(big) and rig.has_prod(big) and rig.c_ok(-math.ldexp(1.0, E)):
        add("product overflow: 2^(E+1) - 2^E", Row({0: big}, c=-math.ldexp(1.0, E)),
            lambda d, E=E: "overflows" if d is not None and math.isinf(d) else
            ("exact" if d == math.ldexp(1.0, E) else _fmt(d)))
    top = math.ldexp(1.0, E)
    if K >= 2 and rig.has_prod(top) and rig.c_ok(-top) and rig.c_ok(top) and rig.has_prod(-top):
        add("intermediate overflow: 2^E + 2^E - 2^E", Row({0: top, 1: top}, c=-top),
            lambda d, top=top: "overflows" if d is not None and math.isinf(d) else
            ("exact" if d == top else _fmt(d)))
        add("intermediate overflow: c=2^E first, + 2^E - 2^E", Row({0: top, 1: -top}, c=top),
            lambda d, top=top: "overflows" if d is not None and math.isinf(d) else
            ("exact" if d == top else _fmt(d)))
    mx = fd.max_finite
    u = math.ldexp(1.0, E - p_out)
    if rig.c_ok(mx):
        for f in (1.0, 0.75, 0.5, 0.25):
            for s in (1, -1):
                if rig.has_prod(s * f * u) and rig.c_ok(s * mx):
                    add(f"overflow boundary {'+' if s > 0 else '-'}(max + {f}u)", Row({0: s * f * u}, c=s * mx),
                        lambda d: "inf" if d is not None and math.isinf(d) else
                        ("max" if d is not None and abs(d) == fd.max_finite else _fmt(d)))
    # NaN
    if fa.inf and one_b is not None:
        inf_a = _bits_of(fa, math.inf)
        zero_b = _bits_of(fb, 0.0)
        add("0 * inf", Row({}, 0.0, {("a", 0): inf_a, ("b", 0): zero_b}), lambda d: _nan(d))
        if K >= 2:
            add("+inf - inf (products)", Row({}, 0.0, {("a", 0): inf_a, ("b", 0): one_b,
                                                       ("a", 1): _bits_of(fa, -math.inf), ("b", 1): one_b}),
                lambda d: _nan(d))
    if fc.inf and rig.c_ok(math.inf):
        if fa.inf and one_b is not None:
            add("c=+inf, product -inf", Row({}, math.inf, {("a", 0): _bits_of(fa, -math.inf), ("b", 0): one_b}),
                lambda d: _nan(d))
        add("c=+inf", Row({0: 1.0}, c=math.inf), lambda d: _fmt(d))
    if fa.has_nan and one_b is not None:
        from golden.formats import special_bits
        add("NaN input", Row({}, 0.0, {("a", 0): int(special_bits(fa, "nan")), ("b", 0): one_b}),
            lambda d: _nan(d))
    # TF32: low 13 bits
    if fa.name == "tf32" and one_b is not None:
        add("tf32 1.0 with a low bit set", Row({}, 0.0, {("a", 0): 0x3F800001, ("b", 0): one_b}),
            lambda d: "ignored" if d == 1.0 else ("used" if d is not None else None))
        add("tf32 NaN with payload only in the low bits", Row({}, 0.0, {("a", 0): 0x7F800001, ("b", 0): one_b}),
            lambda d: "becomes infinity" if d is not None and math.isinf(d) else
            ("NaN" if d is not None and math.isnan(d) else _fmt(d)))
    names = list(cases)
    vals, bits = rig.run([cases[n][0] for n in names])
    out = {}
    nan_bits = set()
    for n, v, bt in zip(names, vals, bits):
        out[n] = cases[n][1](v)
        if v is not None and math.isnan(v):
            nan_bits.add(int(bt))
    out["_nan_patterns"] = sorted(nan_bits)
    return out


def _tiny_negative_product(rig, below: int):
    """Bits (a, b) of normal operands whose product is -2**e for the largest e < ``below`` (or None)."""
    fa, fb = rig.fa, rig.fb
    for e in range(below - 1, below - 60, -1):
        for ea in sorted(range(fa.emin, fa.emax + 1), key=lambda x: abs(x - e / 2)):
            eb = e - ea
            if fb.emin <= eb <= fb.emax:
                a = exact_in(fa, -math.ldexp(1.0, ea))
                b = exact_in(fb, math.ldexp(1.0, eb))
                if a is not None and b is not None:
                    return a, b
            break
    return None


def _fmt(d):
    if d is None:
        return None
    return repr(d)


def _kept(d, v):
    if d is None:
        return None
    if d == v:
        return "kept"
    if d == 0:
        return "flushed"
    return f"other ({d!r})"


def _zero_sign(d):
    if d is None:
        return None
    if d == 0:
        return "-0" if math.copysign(1.0, d) < 0 else "+0"
    return f"non-zero ({d!r})"


def _nan(d):
    if d is None:
        return None
    return "NaN" if math.isnan(d) else _fmt(d)


# --------------------------------------------------------------------------- e_zero, c_drop, alignment reference

def _round_out(rig, v: float, mode: str, p_out: int) -> int:
    """Bits of the exact float64 value ``v`` rounded to the result format with a mode."""
    fd = rig.fd
    m, e = math.frexp(abs(v))
    mag = int(m * 2 ** 53)
    frac = p_out if p_out < fd.man_bits else None
    return int(round_to_format(fd, np.int64(v < 0), np.int64(mag), np.int64(e - 53), mode if mode != "RNE" else "RNE",
                               frac_bits=frac, overflow="ieee"))


def zero_exponent(rig, F: int, mode: str, p_out: int) -> dict:
    """The exponent that zero summands take in the maximum (ISA.md fact 1, e_zero).

    Every other summand is zero; a product B = 2**e and a tiny negative product
    -2**(e-F) (plus, for RNE, two products placing B + ulp + ulp/2 on a tie) are summed.
    The tiny one survives alignment exactly when the maximum exponent is e, i.e. when the
    zeros' exponent is at most e; the highest e where it is lost is e_zero - 1.
    """
    K = rig.K
    if mode not in ("RZ", "RNE", "RD") or K < 4:
        return {"observed": False, "reason": f"needs RZ, RD or RNE results and K >= 4 (have {mode}, K={K})"}
    fd = rig.fd
    nterm = 4 if mode == "RNE" else 2
    blk = rig.block or 1
    idx = [i * blk for i in range(nterm)] if rig.block and K // blk >= nterm else list(range(nterm))
    kept_at, lost_at, scanned = [], [], []
    e = fd.emin + 40
    while e > -1200 and not lost_at:
        rows, es, exp = [], [], []
        for e in range(e, e - 64, -1):
            B = math.ldexp(1.0, e)
            d = -math.ldexp(1.0, e - F)
            if d == 0.0:
                break
            vals = [B, d]
            if mode == "RNE":
                ulp = math.ldexp(1.0, max(e, fd.emin) - p_out)
                vals += [ulp, ulp / 2]
            terms = dict(zip(idx, vals))
            if not rig.block and not all(rig.has_prod(v) for v in vals):
                continue
            exact = sum(vals)
            k_bits, l_bits = _round_out(rig, exact, mode, p_out), _round_out(rig, exact - d, mode, p_out)
            if k_bits == l_bits:
                continue
            rows.append(_row(rig, terms))
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
            rows.append(_row(rig, {0: 1.0, K: c}))
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
                rows.append(_row(rig, {i: X, j: -X, K: eps}))
                ts.append(t)
        vals, _ = rig.run(rows)
        bits, exact = _first_fail([(t, None if v is None else v == math.ldexp(1.0, eX - t)) for t, v in zip(ts, vals)])
        if not exact:
            return {"observed": False, "reason": "c precision not resolved"}
        out[label] = bits
    shift = out["4x4"] - out["1x1"]
    return {"observed": True, "bits": out, "reference": "block scale (group sums unnormalised)" if shift >= 2
            else "product exponent", "shift": shift}


# --------------------------------------------------------------------------- Fasi et al.

def fasi(rig, p_out: int, mode: str | None) -> dict:
    """Fasi, Higham, Mikaitis and Pranesh: monotonicity of the multi-operand sum, the
    normalisation point (only the final sum is normalised) and extra carry bits."""
    K, fc = rig.K, rig.fc
    out = {}
    uc = math.ldexp(1.0, -fc.man_bits - 1)           # half an ulp of 1 in c's format
    n = min(K, 4)
    tiny = {k: uc for k in range(n)}
    if all(rig.has_prod(v) for v in tiny.values()) and rig.c_ok(1.0 - uc):
        vals, _ = rig.run([_row(rig, {**tiny, K: 1.0 - uc}), _row(rig, {**tiny, K: 1.0})])
        if None not in vals:
            out["monotonic"] = vals[0] <= vals[1]
            out["monotonicity_values"] = {"c=1-u/2": vals[0], "c=1": vals[1]}
            exact = 1.0 - uc + n * uc
            if mode in ("RZ", "RNE", "RD", "RU"):
                want = float(to_float(rig.fd, np.array([_round_out(rig, exact, mode, p_out)], np.uint64))[0])
                out["normalised_once"] = vals[0] == want
    # carry bits: K+1 terms each just below 2: the exact sum needs ceil(log2(K+1)) more bits
    v = 2.0 - math.ldexp(1.0, -3)
    if rig.has_prod(v) and rig.c_ok(v) and mode in ("RZ", "RNE", "RD", "RU"):
        exact = v * (K + 1)
        vals, _ = rig.run([_row(rig, {k: v for k in range(K + 1)})])
        if vals[0] is not None:
            want = float(to_float(rig.fd, np.array([_round_out(rig, exact, mode, p_out)], np.uint64))[0])
            out["carry_bits_ok"] = vals[0] == want
            out["carry_bits_needed"] = math.ceil(math.log2(K + 1))
    return out
