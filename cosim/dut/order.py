"""Lost, duplicated and reordered results, told apart from wrong ones by their order alone (no tags).

Random operands make the results of different vectors different, so a result stream that is the
expected one shifted, repeated or swapped at the first difference says what the design did.
"""

from __future__ import annotations

import enum

import numpy as np

RUN = 8                      # results after the first difference that must follow the pattern


class Diagnosis(str, enum.Enum):
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
