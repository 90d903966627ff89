"""How the sum is built: element independence (III-B), the summation tree (III-C) and, where
the formats are too narrow for the tree, which products share a fused pass."""

from __future__ import annotations

import math

import numpy as np

from golden.device import check_output
from golden.vectors import random_operands

from .common import pick_X, summand_row


def independence(rig, n: int = 256, seed: int = 5) -> dict:
    """III-B: every output element is computed the same way.

    The dot-add of each random vector must not depend on where it sits in the batch or on
    its neighbours (the GPU backend spreads a batch over the elements of matrices, so this
    is the paper's test there): the batch is run forward, reversed and interleaved.
    """
    rng = np.random.default_rng(seed)
    ins = rig.ins
    a, b, c, sa, sb = random_operands(ins, n, rng, kind="normal")

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
    eX = pick_X(rig, on_c=True)
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
        rows.append(summand_row(rig, terms))
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
    check, _ = rig.run([summand_row(rig, {0: 2.0, K: c})])
    if check[0] != c + 2:
        return {"feasible": False, "reason": "c + 2 is not exact (alignment no wider than the result)"}
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
    vals, _ = rig.run([summand_row(rig, {i: 1.0, j: 1.0, K: c}) for i, j in pairs])
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
