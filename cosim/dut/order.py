"""Lost, duplicated and reordered results, told apart from wrong ones by their order alone (no tags).

Random operands make the results of different vectors different, so a result stream that is the
expected one shifted, repeated or swapped at the first difference says what the design did.
"""

from __future__ import annotations

import enum

import numpy as np

RUN = 8                      # results after the first difference that must follow the pattern


class Diagnosis(enum.StrEnum):
    LOST = "lost"
    DUPLICATED = "duplicated"
    REORDERED = "reordered"
    LATENCY = "latency"          # every result is another vector's, a fixed number of steps away
    WRONG = "wrong"              # a value differs, the order is right
    NONE = "none"


def _follows(got: np.ndarray, expected: np.ndarray, n: int) -> bool:
    """``got[:n] == expected[:n]``, on results varied enough to prove a pattern (at least ``n`` of them,
    half of them distinct: structured operands repeat results, and repeats prove nothing)."""
    if len(got) < n or len(expected) < n:
        return False
    return bool(np.array_equal(got[:n], expected[:n])) and len(np.unique(expected[:n])) >= n // 2


def diagnose(got: np.ndarray, expected: np.ndarray, start: int = 0) -> tuple[Diagnosis, str]:
    """``(diagnosis, one line)`` for results ``got`` against ``expected`` (the same vectors, in input
    order; ``got`` may be shorter when the design stopped); ``start``: the stream index of element 0.
    A pattern is named only where the results around the first difference prove it; else ``WRONG``."""
    got, expected = np.asarray(got, np.uint64), np.asarray(expected, np.uint64)
    n = min(len(got), len(expected))
    diff = np.nonzero(got[:n] != expected[:n])[0]
    if not diff.size:
        if len(got) < len(expected):
            return Diagnosis.LOST, (f"the result of vector #{start + len(got)} and after never came "
                                    f"({len(got)} of {len(expected)} results)")
        return Diagnosis.NONE, ""
    i = int(diff[0])
    v = start + i
    if _follows(got[i:], expected[i + 1:], RUN) or (i + 1 >= len(got) and len(got) < len(expected)):
        return Diagnosis.LOST, (f"result lost: the result of vector #{v} never came (the results after it are "
                                "those of the next vectors, in order)")
    if i > 0 and got[i] == expected[i - 1] and _follows(got[i + 1:], expected[i:], RUN):
        return Diagnosis.DUPLICATED, (f"result duplicated: the result of vector #{v - 1} came twice (the results "
                                      "after it are one vector late)")
    aligned = _by_alignment(got, expected, i, start)
    if aligned[0] is not Diagnosis.WRONG:
        return aligned
    lo = max(0, i - 64)
    window, near = expected[lo:i + 64], got[lo:i + 64]
    hits = np.nonzero(window == got[i])[0]
    # reordered: got[i] is exactly one other vector's result, and vector i's own result came elsewhere
    if hits.size == 1 and (window == expected[i]).sum() == 1 and (near == expected[i]).any():
        j = start + lo + int(hits[0])
        swapped = j == v + 1 and i + 1 < n and got[i + 1] == expected[i]
        return Diagnosis.REORDERED, (f"results reordered: result #{v} is that of vector #{j} "
                                     f"({'swapped with the next' if swapped else 'out of order'})")
    return Diagnosis.WRONG, ""


ALIGN_WINDOW = 256           # results around the first difference aligned by _align


def _align(got: np.ndarray, expected: np.ndarray) -> tuple[list, list, int]:
    """The longest common subsequence of ``got`` and ``expected``: ``(extra, missing, matched)``, the
    indices of results in ``got`` that no vector of the alignment gave, of vectors in ``expected``
    whose result did not come (both in the first half of the window), and how many results were paired."""
    n, m = len(got), len(expected)
    L = np.zeros((n + 1, m + 1), np.int32)
    for j in range(n - 1, -1, -1):
        row, nxt = L[j], L[j + 1]
        eq = expected == got[j]
        for k in range(m - 1, -1, -1):
            row[k] = nxt[k + 1] + 1 if eq[k] else max(nxt[k], row[k + 1])
    extra, missing, pairs, j, k = [], [], [], 0, 0
    while j < n and k < m:
        if got[j] == expected[k] and L[j, k] == L[j + 1, k + 1] + 1:
            pairs.append((j, k))
            j, k = j + 1, k + 1
        elif L[j + 1, k] >= L[j, k + 1]:
            extra.append(j)
            j += 1
        else:
            missing.append(k)
            k += 1
    # the window cuts both streams at the same length, so near its end a result or a vector can lack its
    # partner only because the partner lies past the cut: count only the first half of each
    return [x for x in extra if x < n // 2], [x for x in missing if x < m // 2], len(pairs)


def _by_alignment(got: np.ndarray, expected: np.ndarray, i: int, start: int) -> tuple[Diagnosis, str]:
    """Extra or missing results anywhere in the window (several, or before the first result): named when
    aligning the streams explains the window with far fewer changes than there are wrong values."""
    lo = max(0, i - RUN)
    g, e = got[lo:lo + ALIGN_WINDOW], expected[lo:lo + ALIGN_WINDOW]
    direct = int((g[:len(e)] != e[:len(g)]).sum())
    extra, missing, matched = _align(g, e)
    changes = len(extra) + len(missing)
    if not changes or matched < 2 * RUN or 4 * changes > direct or len(np.unique(e)) < len(e) // 4:
        return Diagnosis.WRONG, ""
    first = start + lo + (extra[0] if extra else missing[0])
    if extra and not missing:
        repeats = sum(1 for x in extra if x > 0 and g[x] == g[x - 1])
        return Diagnosis.DUPLICATED, (f"results duplicated: {len(extra)} result(s) in {len(g) // 2} came that "
                                      f"no vector "
                                      f"gave ({repeats} of them repeat the result before; the first at output "
                                      f"#{first}); without them every result is its vector's, in order")
    if missing and not extra:
        return Diagnosis.LOST, (f"results lost: {len(missing)} of {len(e) // 2} vectors from #{first} on got no result "
                                "(the results after each are those of the next vectors, in order)")
    return Diagnosis.REORDERED, (f"results out of order: aligning outputs to vectors from #{first} leaves "
                                 f"{len(extra)} result(s) no vector gave and {len(missing)} vector(s) without one")


def latency_shift(got: np.ndarray, expected: np.ndarray, max_k: int = 8) -> int | None:
    """``k`` when most results are those of the vector ``k`` places later (``k`` < 0: earlier): a design
    whose results are marked by a declared latency (enable, fixed) that is ``k`` cycles longer than its own."""
    got, expected = np.asarray(got, np.uint64), np.asarray(expected, np.uint64)
    n = min(len(got), len(expected))
    if n < 4 * max_k:
        return None
    if (got[:n] == expected[:n]).mean() > 0.5 or len(np.unique(expected[:n])) < n // 4:
        return None
    best, share = None, 0.5
    for k in range(-max_k, max_k + 1):
        if k == 0:
            continue
        lo, hi = max(0, -k), min(n, n - k)
        m = float((got[lo:hi] == expected[lo + k:hi + k]).mean())
        if m > share:
            best, share = k, m
    return best
