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


def _same(x: np.ndarray, y: np.ndarray, n: int) -> bool:
    n = min(n, len(x), len(y))
    return n > 0 and bool(np.array_equal(x[:n], y[:n]))


def diagnose(got: np.ndarray, expected: np.ndarray, start: int = 0) -> tuple[Diagnosis, str]:
    """``(diagnosis, one line)`` for results ``got`` against ``expected`` (the same vectors, in input
    order; ``got`` may be shorter when the design stopped); ``start``: the stream index of element 0."""
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
    if _same(got[i:], expected[i + 1:], RUN) or (i + 1 >= len(got) and len(got) < len(expected)):
        return Diagnosis.LOST, (f"result lost: the result of vector #{v} never came (the results after it are "
                                "those of the next vectors, in order)")
    if i > 0 and got[i] == expected[i - 1] and _same(got[i + 1:], expected[i:], RUN):
        return Diagnosis.DUPLICATED, (f"result duplicated: the result of vector #{v - 1} came twice (the results "
                                      "after it are one vector late)")
    window = expected[max(0, i - 64):i + 64]
    hits = np.nonzero(window == got[i])[0]
    if hits.size:
        j = start + max(0, i - 64) + int(hits[0])
        return Diagnosis.REORDERED, (f"results reordered: result #{v} is that of vector #{j} "
                                     f"({'swapped with the next' if j == v + 1 and i + 1 < n and got[i + 1] == expected[i] else 'out of order'})")
    return Diagnosis.WRONG, ""


def latency_shift(got: np.ndarray, expected: np.ndarray, max_k: int = 8) -> int | None:
    """``k`` when most results are those of the vector ``k`` places later (``k`` < 0: earlier): a design
    whose results are marked by a declared latency (enable, fixed) that is ``k`` cycles longer than its own."""
    got, expected = np.asarray(got, np.uint64), np.asarray(expected, np.uint64)
    n = min(len(got), len(expected))
    if n < 4 * max_k:
        return None
    if (got[:n] == expected[:n]).mean() > 0.5:
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
