"""What the probes share: rows from summand values, the scans' limits and bookkeeping."""

from __future__ import annotations

import math

import numpy as np

from golden.formats import round_to_format
from golden.rules import Overflow

from ..rig import Row

T_MAX = 72                       # deepest bit position tried by the precision scans


def summand_row(rig, terms: dict) -> Row:
    """A row from summand values (index K is c)."""
    K = rig.K
    return Row({k: float(v) for k, v in terms.items() if k != K}, c=float(terms.get(K, 0.0)))


def _out_max_exp(rig) -> int:
    return rig.fd.emax


def pick_X(rig, on_c=False, limit=None):
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


def first_failure(flags):
    """(largest t with every earlier flag True, exact?) from a list of (t, flag or None)."""
    last = 0
    for t, f in flags:
        if f is None:
            return last, False
        if not f:
            return last, True
        last = t
    return last, False


def terms_summing_to_4(rig):
    """Terms whose exact sum is 4 (leading bit two above the largest term's exponent)."""
    K = rig.K                                     # in the last products: the last pass of a chain
    if K >= 3:
        return {K - 3: 1.5, K - 2: 1.5, K - 1: 1.0}
    if K == 2:
        return {0: 2.0, 1: 2.0}
    return {0: 4.0}


def round_to_result(rig, v: float, mode: str, p_out: int) -> int:
    """Bits of the exact float64 value ``v`` rounded to the result format with a mode."""
    fd = rig.fd
    m, e = math.frexp(abs(v))
    mag = int(m * 2 ** 53)
    frac = p_out if p_out < fd.man_bits else None
    return int(round_to_format(fd, np.int64(v < 0), np.int64(mag), np.int64(e - 53), mode,
                               frac_bits=frac, overflow=Overflow.IEEE))
