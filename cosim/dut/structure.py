"""Where a tile device's data goes: directed transactions that trace each input element to the results.

When a tile device's results are wrong, the first question is whether its data moves as the
description says: a swapped lane, a fragment read transposed, an accumulator not carried between
k-slices all give wrong numbers that golden's trace of one element cannot explain.  This probe asks
the design directly, in one short simulation without stalls:

* **A** probes: one element of A is 1, every other is 0; each element of B carries one bit of its
  own position (1 or 2, one round per bit), C is 0.  Every element of D the A element reaches holds
  1 or 2, and the rounds spell which B element it met.  **B** probes the same way round, and **C**
  probes (C one-hot, A and B zero) show where each C element comes out.
* The values 0, 1 and 2 are exact in every format golden knows and every product and sum of them is
  exact, so the answers are data movement, never rounding.

From the answers (:func:`infer`): the D position each (row of A, column of B) pair lands at, each
input element's role (the position the design used it as), and the inputs that reach nothing.  The
report names the patterns it recognises -- D elements (lanes) permuted, an operand read transposed
within each k-slice or in the other major order, k-slices whose products reach nothing (an
accumulator not carried) -- and lists the first of anything else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from golden.formats import from_float, to_float
from golden.layouts import positions

from ..session import simulate
from . import transfers
from .builds import x_plusargs

SHOWN = 4             # elements listed per finding


@dataclass
class Probes:
    """The directed transactions and what each one asks: ``kind`` (a, b, c), the input position, the round."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    SA: np.ndarray | None
    SB: np.ndarray | None
    asks: list = field(default_factory=list)        # (kind, (row, col), round) per transaction


def _bits(n: int) -> int:
    return max(1, math.ceil(math.log2(max(n, 2))))


def make_probes(ins, tile) -> Probes:
    """The directed transactions of a ``tile`` device computing ``ins``."""
    M, N, Kt = tile.m, tile.n, tile.k
    fa, fb, fc, _ = ins.formats
    one_a, two_a = (int(from_float(fa, v)) for v in (1.0, 2.0))
    one_b, two_b = (int(from_float(fb, v)) for v in (1.0, 2.0))
    one_c = int(from_float(fc, 1.0))
    As, Bs, Cs, asks = [], [], [], []

    def add(A, B, C, ask):
        As.append(A)
        Bs.append(B)
        Cs.append(C)
        asks.append(ask)

    zA, zB, zC = np.zeros((M, Kt), np.uint64), np.zeros((Kt, N), np.uint64), np.zeros((M, N), np.uint64)
    codes_b = np.arange(Kt * N).reshape(Kt, N)
    for i in range(M):
        for k in range(Kt):
            for r in range(_bits(Kt * N)):
                A = zA.copy()
                A[i, k] = one_a
                add(A, np.where((codes_b >> r) & 1, two_b, one_b).astype(np.uint64), zC, ("a", (i, k), r))
    codes_a = np.broadcast_to(np.arange(Kt)[None, :], (M, Kt))
    for k in range(Kt):
        for n in range(N):
            for r in range(_bits(Kt)):
                B = zB.copy()
                B[k, n] = one_b
                add(np.where((codes_a >> r) & 1, two_a, one_a).astype(np.uint64), B, zC, ("b", (k, n), r))
    for i in range(M):
        for j in range(N):
            C = zC.copy()
            C[i, j] = one_c
            add(zA, zB, C, ("c", (i, j), 0))
    SA = SB = None
    if ins.scale_format:
        one_s = int(from_float(ins.scale_format, 1.0))
        nb = Kt // ins.block_size
        SA = np.full((len(asks), M, nb), one_s, np.uint64)
        SB = np.full((len(asks), nb, N), one_s, np.uint64)
    return Probes(np.stack(As), np.stack(Bs), np.stack(Cs), SA, SB, asks)


@dataclass
class Findings:
    """What the probes say (:func:`infer`): one line per finding, and whether data moves as described."""

    lines: list = field(default_factory=list)
    moves_as_described: bool = True


def _answers(ins, tile, probes: Probes, D: np.ndarray) -> dict:
    """``{(kind, position): {d position: code or None}}``: the D elements each input element reached, with the
    code its rounds spell (None: a value other than 1 or 2 in some round)."""
    vals = to_float(ins.formats[3], D).reshape(len(probes.asks), tile.m, tile.n)
    out: dict = {}
    for t, (kind, pos, r) in enumerate(probes.asks):
        seen = out.setdefault((kind, pos), {})
        for q in zip(*np.nonzero(vals[t] != 0)):
            v = float(vals[t][q])
            code = seen.get(q, 0)
            seen[q] = None if code is None or v not in (1.0, 2.0) else code | ((v == 2.0) << r)
    return out


def infer(ins, tile, probes: Probes, D: np.ndarray, places: dict | None = None) -> Findings:
    """The findings of the probes from the design's answers ``D [transactions, M*N]``; ``places``:
    ``{operand: {(row, col): (beat, lane)}}`` of the operands' layouts, to name moves by beat and lane."""
    places = places or {}
    M, N, Kt = tile.m, tile.n, tile.k
    ans = _answers(ins, tile, probes, D)
    f = Findings()
    lost = {kind: [p for (k, p), seen in ans.items() if k == kind and not seen] for kind in "abc"}
    garbled = [(k, p, q) for (k, p), seen in ans.items() for q, code in seen.items() if code is None]
    # where each C element comes out: D written elsewhere (then A and B's results move alike) or C read elsewhere
    c_at = {p: tuple(map(int, next(iter(s)))) for (kind, p), s in ans.items() if kind == "c" and len(s) == 1}
    c_moved = {p: q for p, q in c_at.items() if p != q}
    identity = {(i, j): (i, j) for i in range(M) for j in range(N)}
    hypotheses = [("d", {q: p for p, q in c_at.items()})] if c_moved else []
    hypotheses.append(("c" if c_moved else "none", identity))
    best = None
    for which, inv in hypotheses:                 # the reading that leaves A and B with the fewest moves
        role_b = _roles_b(ans, inv, Kt, N)
        role_a = _roles_a(ans, inv, role_b, M, Kt, N)
        moved_b = {p: r for p, r in role_b.items() if p != r}
        moved_a = {p: r for p, r in role_a.items() if p != r}
        unclear = sum(1 for (k, p), seen in ans.items() if k in "ab" and seen) - len(role_a) - len(role_b)
        score = len(moved_a) + len(moved_b) + unclear       # elements this reading cannot give one role
        if best is None or score < best[0]:
            best = (score, which, moved_a, moved_b)
    _, which, moved_a, moved_b = best
    _report_lost(f, ins, tile, lost)
    _report_d(f, which, c_moved, places.get("d"))
    _report_operand(f, "B", moved_b, Kt, N, ins.k, places=places.get("b"))
    _report_operand(f, "A", moved_a, M, Kt, ins.k, row_operand=True, places=places.get("a"))
    if garbled:
        k, p, q = garbled[0]
        f.lines.append(f"{k.upper()}{list(p)} gives D{list(map(int, q))} a value that is neither 1 nor 2 on a probe "
                       f"of exact small numbers ({len(garbled)} such answers)")
        f.moves_as_described = False
    if f.moves_as_described:
        f.lines.append("data moves as described: every element of A, B and C is read and D written where the "
                       "layouts say, and every k-slice reaches D; the fault is in the arithmetic")
    return f


def _roles_b(ans: dict, inv: dict, Kt: int, N: int) -> dict:
    """Each B element's role ``(k, n)``: the A column it met (its code) and the D column it reached."""
    roles_of = {}
    for k in range(Kt):
        for n in range(N):
            roles = {(code, inv[tuple(map(int, q))][1]) for q, code in ans["b", (k, n)].items()
                     if code is not None and tuple(map(int, q)) in inv}
            if len(roles) == 1:
                roles_of[k, n] = next(iter(roles))
    return roles_of


def _roles_a(ans: dict, inv: dict, role_b: dict, M: int, Kt: int, N: int) -> dict:
    """Each A element's role ``(i, k)``: the D row it reached and the k of the B element it met (that
    element's own role, so that a B read elsewhere is not blamed on A)."""
    roles_of = {}
    for i in range(M):
        for k in range(Kt):
            roles = set()
            for q, code in ans["a", (i, k)].items():
                q = tuple(map(int, q))
                if code is None or q not in inv:
                    continue
                kb, nb = divmod(code, N)
                roles.add((inv[q][0], role_b.get((kb, nb), (kb, nb))[0]))
            if len(roles) == 1:
                roles_of[i, k] = next(iter(roles))
    return roles_of


def _report_lost(f: Findings, ins, tile, lost: dict) -> None:
    S, K = tile.k // ins.k, ins.k
    if not any(lost.values()):
        return
    f.moves_as_described = False
    slices = {kind: sorted({(p[1] if kind == "a" else p[0]) // K for p in lost[kind]}) for kind in "ab"}
    whole = (bool(slices["a"]) and slices["a"] == slices["b"] and len(lost["a"]) == tile.m * K * len(slices["a"])
             and len(lost["b"]) == tile.n * K * len(slices["b"]))
    if whole:
        dead = slices["a"]
        rng = ", ".join(f"{s} (k = {s * K}..{s * K + K - 1})" for s in dead)
        line = f"the products of k-slice {rng} reach no element of D"
        if dead == list(range(S - 1)):
            line += (f"; C and the last k-slice's do: the accumulator is not carried between k-slices (k-slice "
                     f"{S - 1} starts from C again)" if not lost["c"] else
                     "; only the last k-slice's products reach D, each k-slice starting from zero")
        f.lines.append(line)
    else:
        for kind in "ab":
            if lost[kind]:
                shown = ", ".join(f"{kind.upper()}{list(p)}" for p in lost[kind][:SHOWN])
                f.lines.append(f"{len(lost[kind])} element(s) of {kind.upper()} reach no element of D: {shown}"
                               + (" ..." if len(lost[kind]) > SHOWN else ""))
    if lost["c"] and not whole:
        shown = ", ".join(f"C{list(p)}" for p in lost["c"][:SHOWN])
        f.lines.append(f"{len(lost['c'])} element(s) of C reach no element of D: {shown}")


def _report_d(f: Findings, which: str, c_moved: dict, d_places: dict | None = None) -> None:
    """C's elements come out elsewhere: D written at other positions (``which == "d"``: A and B's results
    move with them), or C read at other positions (``"c"``)."""
    if not c_moved:
        return
    f.moves_as_described = False
    if which == "d":
        cols = _column_swaps(c_moved)
        what = (f"columns {' and '.join(map(str, cols))} of D are swapped" if cols else
                "D's elements come out at other positions")
        lanes = _lane_swaps(c_moved, d_places) if d_places else None
        if lanes:
            what += f" (lanes {lanes[0]} and {lanes[1]} of every output beat)"
        shown = ", ".join(f"D[{p[0]}][{p[1]}] comes out as D[{q[0]}][{q[1]}]" for p, q in list(c_moved.items())[:SHOWN])
        f.lines.append(f"{what}: {shown}" + (" ..." if len(c_moved) > SHOWN else ""))
    else:
        shown = ", ".join(f"C[{p[0]}][{p[1]}] comes out at D[{q[0]}][{q[1]}]" for p, q in list(c_moved.items())[:SHOWN])
        f.lines.append(f"C is read at other positions (A and B's results land where they should): {shown}")


def _lane_swaps(moved: dict, places: dict) -> tuple | None:
    """The two lanes of D's beats that trade places, when that is all ``moved`` does."""
    pairs = {(places[p][1], places[q][1]) for p, q in moved.items() if places[p][0] == places[q][0]}
    if len(pairs) != 2 or any(places[p][0] != places[q][0] for p, q in moved.items()):
        return None
    (a, b), (c, d) = sorted(pairs)
    return (a, b) if (a, b) == (d, c) else None


def _lane_moves(moved: dict, places: dict) -> list | None:
    """``[(lane, lane it acts as)]`` when every move stays in its beat and is the same in every beat."""
    pairs = set()
    for p, q in moved.items():
        (bp, lp), (bq, lq) = places[p], places[q]
        if bp != bq:
            return None
        pairs.add((lp, lq))
    lanes = dict(pairs)
    return sorted(lanes.items()) if len(lanes) == len(pairs) else None


def _column_swaps(moved: dict) -> list | None:
    """The columns two at a time when ``moved`` exchanges whole columns, else None."""
    cols = {(p[1], q[1]) for p, q in moved.items()}
    if any(p[0] != q[0] for p, q in moved.items()):
        return None
    pairs = {tuple(sorted(c)) for c in cols}
    if len(pairs) == 1 and all((b, a) in cols for a, b in cols):
        return list(next(iter(pairs)))
    return None


def _report_operand(f: Findings, name: str, moved: dict, rows: int, cols: int, K: int,
                    row_operand: bool = False, places: dict | None = None) -> None:
    """An operand whose elements play other positions' roles: a pattern if one explains every move."""
    if not moved:
        return
    f.moves_as_described = False
    every = {(r, c) for r in range(rows) for c in range(cols)}
    kdim = 1 if row_operand else 0              # the k axis of the operand (A: columns, B: rows)
    blocked = {p: _block_transpose(p, K, kdim) for p in every}
    if all(moved.get(p, p) == blocked[p] for p in every) and any(p != blocked[p] for p in every):
        idx = ("[r][{K}s+c]", "[c][{K}s+r]") if row_operand else ("[{K}s+r][c]", "[{K}s+c][r]")
        f.lines.append(f"{name} is read transposed within each k-slice: the {K} x {K} block of k-slice s is used as "
                       f"its transpose ({name}{idx[0].format(K=K)} as {name}{idx[1].format(K=K)})")
        return
    if rows == cols and all(moved.get(p, p) == (p[1], p[0]) for p in every):
        f.lines.append(f"{name} is read transposed: {name}[r][c] is used as {name}[c][r]")
        return
    shown = ", ".join(f"{name}[{p[0]}][{p[1]}] is used as {name}[{r[0]}][{r[1]}]"
                      for p, r in list(moved.items())[:SHOWN])
    lanes = _lane_moves(moved, places) if places else None
    crossed = ""
    if lanes:
        said = ", ".join(f"lane {a}'s element is used as lane {b}'s" for a, b in lanes)
        crossed = f"; in every beat of {name.lower()}, {said}"
    f.lines.append(f"{len(moved)} element(s) of {name} play other positions' roles: {shown}"
                   + (" ..." if len(moved) > SHOWN else "") + crossed)


def _block_transpose(p, K: int, kdim: int):
    """Position ``p`` transposed within its ``K x K`` block along the k axis (None if the block is not square)."""
    r, c = p
    if kdim == 0:                    # B: rows are k; block (4s + r', c) -> (4s + c, r') when c < K
        s, rr = divmod(r, K)
        return (s * K + c, rr) if c < K else None
    s, cc = divmod(c, K)             # A: columns are k
    return (cc, s * K + r) if r < K else None


def run_probes(prep, target, ins, built, seed: int = 1):
    """The design's answers to the probes (one simulation, no stalls): ``(probes, D)``."""
    desc = prep.desc
    probes = make_probes(ins, desc.tile)
    ops = (probes.A, probes.B, probes.C, probes.SA, probes.SB)
    n = len(probes.asks)
    cap = transfers.capture(desc, ins, n)
    s = simulate(built, transfers.layout(desc, ins), transfers.array_stream(desc, ins, ops), cap, n=n, seed=seed,
                 stall_in=0.0, stall_out=0.0, batch_vectors=n, plusargs=desc.plusargs + x_plusargs(seed + 1))
    if s.error:
        raise RuntimeError(s.error.splitlines()[0])
    if s.run_dir is not None:
        import shutil
        shutil.rmtree(s.run_dir, ignore_errors=True)
    return probes, cap.d[:cap.filled]


def report_structure(prep, dr, built, cfg, out) -> Findings | None:
    """Run the probes on a failing tile device and print what they say (None if they could not run)."""
    ins = dr.result.ins
    print("structure probe (directed transactions, one input element at a time, no stalls):", file=out, flush=True)
    try:
        probes, D = run_probes(prep, dr.target, ins, built, cfg.seed)
    except RuntimeError as e:
        print(f"  could not run: {e}", file=out)
        return None
    places = {}
    for op in prep.desc.operands.values():
        rows, cols = prep.desc.tile.shape(op.name, ins.block_size)
        places[op.name] = {tuple(map(int, rc)): divmod(p, op.elements)
                           for p, rc in enumerate(positions(op.layout, rows, cols, op.fragment_order))}
    f = infer(ins, prep.desc.tile, probes, D, places)
    for line in f.lines:
        print(f"  {line}", file=out)
    dr.notes += [f"structure: {line}" for line in f.lines]
    return f


__all__ = ["make_probes", "infer", "run_probes", "report_structure", "Findings"]
