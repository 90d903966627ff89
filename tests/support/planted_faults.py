"""Faulty "devices" for the coverage tests: golden's result except in one corner each.

Each is ``(ins, a, b, c) -> d bits [R]`` for an unchained, unscaled FDA instruction (hopper
HGMMA.64xNx16.F32 and its f16-output sibling), built from golden's trace (golden.coverage.batch_of) a
chunk at a time, so a million vectors take seconds:

- :func:`drop_shift_F`: a product whose alignment shift is exactly F is dropped, as a shifter whose
  "beyond the window" test reads ``>= F`` for ``> F`` would;
- :func:`tie_up_at_min_exponent`: on a tie with zero sticky whose ulp is the output format's
  smallest, the rounder rounds the magnitude up;
- :func:`inf_c_beats_nan_product`: when c is infinite and some product is NaN, the result is c
  instead of NaN.
"""

from __future__ import annotations

import numpy as np

from golden.coverage import batch_of
from golden.formats import get_format, round_to_format, special_bits
from golden.rules import Rounding

CHUNK = 1 << 16

__all__ = ["drop_shift_F", "tie_up_at_min_exponent", "inf_c_beats_nan_product", "FAULTS"]


def _chunked(fault):
    """``fault(ins, batch) -> d [r]`` applied a chunk of rows at a time."""

    def device(ins, a, b, c):
        a, b, c = np.asarray(a), np.asarray(b), np.asarray(c).reshape(-1)    # bits, or values exact in the formats
        out = np.empty(a.shape[0], get_format(ins.d_format).dtype)
        for lo in range(0, a.shape[0], CHUNK):
            batch = batch_of(ins, a[lo:lo + CHUNK], b[lo:lo + CHUNK], c[lo:lo + CHUNK])
            out[lo:lo + CHUNK] = fault(ins, batch)
        return out

    device.__name__ = device.__qualname__ = fault.__name__.lstrip("_")
    device.__doc__ = fault.__doc__
    device.corner = fault
    return device


def _round(ins, total, e_max):
    """The fixed-point sum ``total`` (units 2^(e_max - F)) rounded as golden's _finish does (a zero is +0,
    NVIDIA's rule)."""
    p = ins.params
    sign, mag = (total < 0).astype(np.int8), np.abs(total).astype(np.int64)
    d = round_to_format(ins.d_format, sign, mag, e_max - p.F, p.out_rounding, frac_bits=p.out_frac_bits,
                        overflow=p.overflow)
    return np.where(mag == 0, d.dtype.type(0), d)


def _drop_shift_F(ins, batch):
    """Golden, except that a product at alignment shift exactly F is dropped (off by one in "beyond")."""
    v, d = batch.passes[0], batch.d.copy()
    shift = v["max_exponent.e_max"][:, None] - v["products.exponent"]
    at_F = (shift == ins.params.F) & (v["products.value"] != 0)
    rows = at_F.any(1) & np.isfinite(v["sum.sum"])
    if rows.any():
        total = v["sum.sum"][rows] - np.where(at_F[rows], v["aligned.products"][rows], 0.0).sum(1)
        d[rows] = _round(ins, total, v["max_exponent.e_max"][rows])
    return d


def _tie_up_at_min_exponent(ins, batch):
    """Golden, except that a tie (zero sticky) in the output's smallest binade rounds the magnitude up."""
    v, d = batch.passes[0], batch.d.copy()
    fd = get_format(ins.d_format)
    p = fd.man_bits if ins.params.out_frac_bits is None else ins.params.out_frac_bits
    x = np.abs(np.where(np.isfinite(v["sum.value"]), v["sum.value"], 0.0))
    scaled = np.ldexp(x, p - fd.emin)             # units of the smallest ulp 2^(emin - p)
    rows = (x > 0) & (x < 2.0 ** (fd.emin + 1)) & (scaled - np.floor(scaled) == 0.5)
    if rows.any():
        up = np.sign(v["sum.value"][rows]) * (np.floor(scaled[rows]) + 1) * 2.0 ** (fd.emin - p)
        sign = (up < 0).astype(np.int8)
        d[rows] = round_to_format(fd, sign, np.abs(np.ldexp(up, p - fd.emin)).astype(np.int64), fd.emin - p,
                                  Rounding.RZ, frac_bits=ins.params.out_frac_bits)
    return d


def _inf_c_beats_nan_product(ins, batch):
    """Golden, except that an infinite c meeting a NaN product gives c (the NaN is lost)."""
    v, d = batch.passes[0], batch.d.copy()
    cv = v["max_exponent.c"]
    rows = np.isinf(cv) & np.isnan(v["products.value"]).any(1)
    d[rows] = special_bits(ins.d_format, "inf", (cv[rows] < 0).astype(np.uint64))
    return d


drop_shift_F = _chunked(_drop_shift_F)
tie_up_at_min_exponent = _chunked(_tie_up_at_min_exponent)
inf_c_beats_nan_product = _chunked(_inf_c_beats_nan_product)

FAULTS = {"drop_shift_F": drop_shift_F, "tie_up_at_min_exponent": tie_up_at_min_exponent,
          "inf_c_beats_nan_product": inf_c_beats_nan_product}
