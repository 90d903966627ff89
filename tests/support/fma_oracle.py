"""The exact fma oracle of the tests: ``RNE(a*b + c)`` on Python integers, one triple at a time.

Slow and obviously correct: operands become exact rationals ``m * 2**e``, the sum one integer
times a power of two, rounded once.  It checks ``golden.fma`` (tests/golden/test_fma.py); it is not part
of the golden model.
"""

from __future__ import annotations

__all__ = ["fma_exact"]

_FORMATS = {"f64": (11, 52), "f32": (8, 23)}


def fma_exact(a_bits: int, b_bits: int, c_bits: int, fmt: str) -> int:
    """Slow exact reference: RNE(a*b + c) for one triple of bit patterns.

    The operands are decoded to exact rationals ``m * 2^e`` and the sum is
    formed as one Python integer times a power of two -- no rounding at all --
    then rounded to nearest even with the format's subnormals and overflow.
    fmt is 'f64' or 'f32'.  NaN results are the canonical quiet NaN."""
    ebits, fbits = _FORMATS[fmt]
    width = 1 + ebits + fbits
    emax_field = (1 << ebits) - 1
    qnan = (emax_field << fbits) | (1 << (fbits - 1))
    inf = emax_field << fbits
    sa, ma, ea = _decode_exact(a_bits, ebits, fbits)
    sb, mb, eb = _decode_exact(b_bits, ebits, fbits)
    sc, mc, ec = _decode_exact(c_bits, ebits, fbits)
    sp = sa ^ sb
    if "nan" in (ma, mb, mc):
        return qnan
    if ma == "inf" or mb == "inf":
        if ma == 0 or mb == 0 or (mc == "inf" and sc != sp):
            return qnan                               # inf*0, inf-inf
        return (sp << (width - 1)) | inf
    if mc == "inf":
        return c_bits
    # exact value: (sp*ma*mb*2^(ea+eb) + sc*mc*2^ec) = n * 2^e0
    ep = ea + eb
    e0 = min(ep, ec)
    n = (-1) ** sp * ma * mb * (1 << (ep - e0)) + (-1) ** sc * mc * (1 << (ec - e0))
    if n == 0:
        # exact zero: -0 only when both addends are zeros of sign -, else +0
        neg = ma * mb == 0 and mc == 0 and sp == 1 and sc == 1
        return int(neg) << (width - 1)
    return _round_exact(n, e0, ebits, fbits)


def _decode_exact(bits: int, ebits: int, fbits: int):
    """(sign, m, e) with value (-1)^sign m 2^e; m is 'inf'/'nan' for specials."""
    sign = bits >> (ebits + fbits) & 1
    field = bits >> fbits & ((1 << ebits) - 1)
    frac = bits & ((1 << fbits) - 1)
    bias = (1 << (ebits - 1)) - 1
    if field == (1 << ebits) - 1:
        return sign, ("inf" if frac == 0 else "nan"), 0
    if field == 0:
        return sign, frac, 1 - bias - fbits
    return sign, frac | (1 << fbits), field - bias - fbits


def _round_exact(n: int, e0: int, ebits: int, fbits: int) -> int:
    """Bit pattern of RNE(n * 2^e0), n != 0, with subnormals and overflow."""
    sign = int(n < 0)
    n = abs(n)
    bias = (1 << (ebits - 1)) - 1
    e_min_q = 1 - bias - fbits                        # quantum of subnormals: 2^-1074 / 2^-149
    top = e0 + n.bit_length() - 1
    q = max(top - fbits, e_min_q)                     # rounding unit exponent
    if q <= e0:
        m = n << (e0 - q)                             # exact
    else:
        k = q - e0
        m, rem = n >> k, n & ((1 << k) - 1)
        half = 1 << (k - 1)
        if rem > half or (rem == half and m & 1):
            m += 1
    if m >> (fbits + 1):                              # carried into a new binade
        m >>= 1
        q += 1
    if m >> fbits:                                    # normal
        field = q + fbits + bias
        if field >= (1 << ebits) - 1:
            body = ((1 << ebits) - 1) << fbits        # overflow: inf
        else:
            body = field << fbits | (m & ((1 << fbits) - 1))
    else:
        body = m                                      # subnormal or zero
    return sign << (ebits + fbits) | body
