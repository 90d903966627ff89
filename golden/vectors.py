"""Random dot-add operands for an instruction: the shared vector generator.

``kind`` chooses the distribution:

``bits``
    Uniform random bit patterns over each operand's storage width; covers
    NaN, infinities, subnormals and every exponent.
``normal``
    Finite values with exponents near each other (random signs, a spread of a
    few binades, some zeros), where cancellation and rounding decide the result.
``mixed``
    Half of each.
``structured``
    Edge cases (:func:`structured_operands`): cancellation, exponent spread,
    ties at the rounding bit, overflow boundaries, the e_zero rule, chain
    boundaries.
``all``
    A third each of ``bits``, ``normal`` and ``structured``.
``disputed``
    CDNA3's disputed special values (:func:`disputed_operands`, ``golden.Params.specials``):
    input infinities meeting products that overflow the other way, in one pass and across
    chained passes; NaN or infinite c (and chained NaNs) meeting large products.  Other
    instructions get valid vectors that simply do not reach the rules.
``cover`` (a directed kind, :data:`DIRECTED_KINDS`)
    Directed vectors (:func:`golden.cover.directed.cover_operands`): operands solved for, bin by
    bin, until every reachable bin of the instruction's cover points is hit (docs/coverage.md), then
    further constructions bin by bin.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from .api import BACKEND_ENV, check_numba_environment, jit_disabled
from .catalog import Instruction
from .formats import Format, NanKind, from_float, get_format, special_bits, to_float
from .params import EXACT
from .rules import Rounding

KINDS = ("bits", "normal", "mixed", "structured", "all", "disputed")       # the random distributions
DIRECTED_KINDS = ("cover",)              # solved for, not drawn: made by a module above this one
VECTOR_KINDS = KINDS + DIRECTED_KINDS    # every kind VECTORS= takes

# Directed kinds need golden's trace, so the module that makes one registers it here when imported:
# ``cover`` by golden.cover.directed, which ``import golden`` imports.
_MADE_ABOVE: dict = {}


def register_kind(name: str, make) -> None:
    """Make directed vector kind ``name`` (one of :data:`DIRECTED_KINDS`) with ``make(ins, n, rng, out)``."""
    if name not in DIRECTED_KINDS:
        raise ValueError(f"unknown directed vector kind {name!r}; valid: {', '.join(DIRECTED_KINDS)}")
    _MADE_ABOVE[name] = make


def _kernels():
    """:mod:`golden.vector_kernels`, or None where numba does not import, ``GOLDEN_BACKEND=numpy``
    keeps golden off numba (the test suite's setting: no compiles; the same values either way) or
    ``NUMBA_DISABLE_JIT`` turns its compiler off."""
    if os.environ.get(BACKEND_ENV) == "numpy" or jit_disabled():
        return None                  # NUMBA_DISABLE_JIT: numpy's own calls (compiled draws would run as Python)
    check_numba_environment()
    try:
        from . import vector_kernels
    except ImportError:
        return None
    return vector_kernels


def _state(rng: np.random.Generator):
    """``rng``'s state for the compiled draws (:mod:`golden.rng`), or None to draw with numpy's calls
    (numba missing, or a bit generator other than PCG64): both give the same values."""
    vk = _kernels()
    return None if vk is None else vk.R.load(rng)


def operand_dtype(fmt: Format | str, narrow: bool = False) -> np.dtype:
    """The dtype the generators hand out for ``fmt``: uint64, or with ``narrow`` the smallest unsigned
    dtype that holds the format's storage word (uint8 fp8/fp6/fp4 and scales, uint16 f16/bf16, uint32
    f32/tf32, uint64 f64): the same values in 1/8 to 1/2 of the bytes, which golden reads without a
    width scan (``docs/golden.md``, "Operands in their own width")."""
    return np.dtype(get_format(fmt).dtype if narrow else np.uint64)


def _out_array(shape, out, fmt: Format, narrow: bool = False) -> np.ndarray:
    """``out`` checked against ``shape`` (a uint64 array of it, or one of ``fmt``'s own width), or a new
    one (:func:`operand_dtype`)."""
    if out is None:
        return np.empty(shape, operand_dtype(fmt, narrow))
    want = (int(shape),) if np.ndim(shape) == 0 else tuple(int(x) for x in shape)
    ok = (np.dtype(np.uint64), operand_dtype(fmt, True))
    if not isinstance(out, np.ndarray) or out.dtype not in ok or out.shape != want:
        valid = " or ".join(dict.fromkeys(str(d) for d in ok))          # uint64 first, once
        raise ValueError(f"out must be a {valid} array of shape {want} for {fmt.name}, got "
                         f"{getattr(out, 'dtype', type(out).__name__)} {getattr(out, 'shape', '')}")
    return out


def operand_formats(ins: Instruction) -> tuple:
    """The formats of ``(a, b, c, scale_a, scale_b)`` (scales None when unscaled)."""
    fa, fb, fc, _ = ins.formats
    fs = get_format(ins.scale_format) if ins.scale_format else None
    return fa, fb, fc, fs, fs


def _out_operands(ins: Instruction, n: int, out, narrow: bool = False):
    """``out`` checked against :func:`empty_operands`' shapes for ``n`` vectors of ``ins``, or new arrays."""
    want = empty_operands(ins, 0)
    if out is None:
        return empty_operands(ins, n, narrow)
    if not isinstance(out, tuple) or len(out) != 5:
        raise ValueError("out must be a tuple (a, b, c, scale_a, scale_b) of arrays, as empty_operands makes")
    for name, x, w, fmt in zip(("a", "b", "c", "scale_a", "scale_b"), out, want, operand_formats(ins)):
        if (x is None) != (w is None):
            raise ValueError(f"out's {name} must be {'None' if w is None else 'an array'} for {ins.name}")
        if x is not None:
            _out_array((n, *w.shape[1:]), x, fmt)
    return out


def _flat(out: np.ndarray) -> np.ndarray:
    """A flat array of ``out``'s dtype the kernels fill: a view of ``out`` where it is contiguous."""
    return out.reshape(-1) if out.flags.c_contiguous else np.empty(out.size, out.dtype)


def _unflat(out: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """``out`` holding what the kernel wrote to ``flat`` (a copy only where ``flat`` is not a view of it)."""
    if not out.flags.c_contiguous:
        out[...] = flat.reshape(out.shape)
    return out


def _store(rng: np.random.Generator, st) -> None:
    """Hand the state the compiled draws left in ``st`` back to ``rng``."""
    _kernels().R.store(rng, st)


def random_bits(fmt: Format, shape, rng: np.random.Generator, out=None, narrow: bool = False) -> np.ndarray:
    """Uniform random bit patterns over ``fmt``'s storage width (``integers(0, 2**bits)``), in ``out``
    (an array of ``shape``, uint64 or of the format's own width) when given, else in a new array
    (uint64; of the format's own width with ``narrow``, :func:`operand_dtype`): the same values."""
    fmt = get_format(fmt)
    st = _state(rng)
    out = _out_array(shape, out, fmt, narrow)
    if st is None:
        if fmt.storage_bits == 64:
            out[...] = rng.integers(0, 1 << 63, shape, dtype=np.uint64) * np.uint64(2) + \
                rng.integers(0, 2, shape, dtype=np.uint64)
        else:
            out[...] = rng.integers(0, 1 << fmt.storage_bits, shape, dtype=np.uint64)
        return out
    flat = _flat(out)
    if fmt.storage_bits == 64:
        _kernels().fill_bits64(st, flat)
    else:
        _kernels().fill_bounded(st, flat, np.uint64((1 << fmt.storage_bits) - 1))
    _store(rng, st)
    return _unflat(out, flat)


def random_values(fmt: Format, shape, rng: np.random.Generator, spread: int = 4, zeros: float = 0.1,
                  out=None, narrow: bool = False) -> np.ndarray:
    """Finite values ``+-m * 2**e`` with ``|e| <= spread`` clipped to the format's range, rounded to it
    (in ``out`` when given, else a new array; dtypes as :func:`random_bits`)."""
    fmt = get_format(fmt)
    lo, hi = max(fmt.emin, -spread), min(fmt.emax, spread)
    st = _state(rng) if -1000 < lo <= hi < 1000 else None     # the kernel needs ldexp(m, e) normal
    out = _out_array(shape, out, fmt, narrow)
    if st is None:
        e = rng.integers(lo, hi + 1, shape)
        m = 1 + rng.random(shape)
        v = np.ldexp(m, e)
        neg = rng.random(shape) < 0.5 if fmt.signed else None
        zero = rng.random(shape) < zeros
        out[...] = _truncate_normal(fmt, v, neg, zero)
        return out
    flat = _flat(out)
    _kernels().fill_values(st, flat, lo, hi, fmt.signed, float(zeros), fmt.man_bits, fmt.emax,
                           fmt.max_mantissa, fmt.bias, fmt.exp_bits + fmt.man_bits, fmt.ignored_low_bits)
    _store(rng, st)
    return _unflat(out, flat)


def _truncate_normal(fmt: Format, v, neg, zero) -> np.ndarray:
    """``from_float(fmt, where(zero, 0, where(neg, -v, v)), "RZ")`` for positive normal float64 ``v``
    of exponents ``emin .. emax + 1`` (``random_values``' draws), from v's fields: RZ keeps the
    top mantissa bits; above the largest finite it saturates, as RZ does.  The same bits, about 10x
    sooner (tests/golden/test_golden_kernels.py compares the two)."""
    vb = np.asarray(v, np.float64).view(np.uint64)
    ev = ((vb >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64) - 1023
    man = (vb & np.uint64((1 << 52) - 1)) >> np.uint64(52 - fmt.man_bits)
    over = (ev > fmt.emax) | ((ev == fmt.emax) & (man > np.uint64(fmt.max_mantissa)))
    top = np.uint64(((fmt.emax + fmt.bias) << fmt.man_bits) | fmt.max_mantissa)
    word = np.where(over, top, (np.maximum(ev + fmt.bias, 0).astype(np.uint64) << np.uint64(fmt.man_bits)) | man)
    if neg is not None:
        word |= neg.astype(np.uint64) << np.uint64(fmt.exp_bits + fmt.man_bits)
    word = np.where(zero, np.uint64(0), word)
    return word << np.uint64(fmt.ignored_low_bits)


def _rz_bits(fmt, values):
    """Values rounded to the format (RZ; NaN as zero): their bits."""
    return from_float(fmt, np.nan_to_num(values, nan=0.0), Rounding.RZ).astype(np.uint64)


def _exact_or_zero(fmt, values):
    """Round values to the format (RZ) and read them back, so constructions stay exact."""
    bits = _rz_bits(fmt, values)
    return bits, to_float(fmt, bits)


@functools.lru_cache(maxsize=1024)
def _table(fmt: Format, options: tuple, mode: Rounding = Rounding.RZ) -> np.ndarray:
    """``options`` rounded to ``fmt`` (RZ as :func:`_rz_bits`, or ``mode``), once: constants that every
    block of 8,192 vectors would otherwise round again (a millisecond each)."""
    values = np.array(options, np.float64)
    table = _rz_bits(fmt, values) if mode == Rounding.RZ else from_float(fmt, values, mode).astype(np.uint64)
    table.flags.writeable = False
    return table


def _pick(fmt, options, shape, rng):
    """``_rz_bits(fmt, rng.choice(options, shape))``, rounding each option once (the same draws)."""
    return _table(fmt, tuple(float(x) for x in options))[rng.choice(len(options), shape)]


def _one(fmt: Format, value: float) -> np.uint64:
    """The bits of one value rounded to ``fmt`` (RZ), as :func:`_exact_or_zero` gives them."""
    return _table(fmt, (float(value),))[0]


def structured_operands(ins: Instruction, n: int, rng: np.random.Generator, out=None, narrow: bool = False):
    """Edge cases, an equal share of each: exact cancellation, wide exponent spread, ties and
    near-ties at the output's rounding bit, overflow boundaries, all-zero products with tiny
    or zero c (the e_zero rule), and chain boundaries (a first pass that cancels c)."""
    fa, fb, fc, _ = ins.formats
    K = ins.k
    a, b, c, sa, sb = random_operands(ins, n, rng, "normal", out, narrow)
    cases = rng.integers(0, 6, n)
    # 0: exact cancellation of the first two products, small rest (needs K >= 2)
    rows = cases == 0
    if K > 1 and fb.signed:
        a[rows, 1] = a[rows, 0]
        b[rows, 1] = b[rows, 0] ^ np.uint64(1 << (fb.value_bits - 1))
    # 1: wide exponent spread, the whole range of each operand format
    rows = cases == 1
    for fmt, arr in ((fa, a), (fb, b)):
        e = rng.integers(fmt.emin - fmt.man_bits, fmt.emax + 1, (rows.sum(), K))
        arr[rows] = _rz_bits(fmt, np.ldexp(1 + rng.random(e.shape), e) *
                             rng.choice([-1.0, 1.0] if fmt.signed else [1.0], e.shape))
    _ties(ins, a, b, c, np.nonzero(cases == 2)[0], rng)
    # 3: overflow boundaries: operands at their largest, c near the output's largest
    rows = cases == 3
    for fmt, arr in ((fa, a), (fb, b)):
        arr[rows] = _pick(fmt, fmt.max_finite * np.array([-1.0, 1.0, 0.5] if fmt.signed else [1.0, 0.5]),
                          (rows.sum(), K), rng)
    c[rows] = _pick(fc, fc.max_finite * np.array([-1.0, 1.0, 0.99]), rows.sum(), rng)
    rows = np.nonzero(cases == 4)[0]
    _tiny(ins, a, b, c, rows, rng)
    if ins.params.e_zero is not None and ins.params.F is not None:
        _e_zero(ins, a, b, c, rows[::2], rng)
    _chain(ins, a, b, c, np.nonzero(cases == 5)[0], rng)
    return a, b, c, sa, sb


def _ties(ins, a, b, c, rows, rng) -> None:
    """Case 2, ties and near-ties: c = 1.x, one product = half an ulp of the result (+- a little)."""
    fa, fb, fc, fd = ins.formats
    p = ins.params.out_frac_bits or fd.man_bits
    c[rows] = _rz_bits(fc, 1 + np.floor(rng.random(len(rows)) * 2 ** min(p, fc.man_bits)) / 2 ** min(p, fc.man_bits))
    half = 2.0 ** -(p + 1)
    a[rows] = _one(fa, 0.0)
    a[rows, 0] = _one(fa, 1.0)
    # a choice a row once: consecutive 32-bit draws, the same values as one batch of them
    b[rows, 0] = _pick(fb, half * np.array([1.0, 1.0, 1.5, 0.75]), len(rows), rng)


def _tiny(ins, a, b, c, rows, rng) -> None:
    """Case 4: all products zero (or all but one tiny), c tiny or zero: the e_zero rule decides alignment."""
    fa, fb, fc, _ = ins.formats
    half, pos, pick = _draw_rows("draw_tiny_rows", _tiny_rows_numpy, rng, len(rows), ins.k)
    a[rows] = 0
    a[rows[half], pos[half]] = _one(fa, 2.0 ** fa.emin)
    b[rows[half], :] = _one(fb, 2.0 ** fb.emin)
    c[rows] = np.array([0, 1, int(_one(fc, 2.0 ** fc.emin))], np.int64)[pick]


def _tiny_rows_numpy(rng, m, K):
    """:func:`golden.vector_kernels.draw_tiny_rows` with numpy's calls."""
    half, pos, pick = np.zeros(m, bool), np.zeros(m, np.int64), np.empty(m, np.int64)
    for r in range(m):
        if rng.random() < 0.5:
            half[r], pos[r] = True, rng.integers(K)
        pick[r] = rng.choice(3)
    return half, pos, pick


def _e_zero(ins, a, b, c, rows, rng) -> None:
    """Case 4b, half of case 4's rows: tiny products straddling 2**(e_zero - F), where the e_zero rule truncates;
    with F="exact" nothing truncates, and they straddle the output's smallest subnormal instead."""
    fa, fb, _, fd = ins.formats
    ez, F = ins.params.e_zero, ins.params.F
    edge = fd.emin - fd.man_bits if F == EXACT else ez - F
    u1, e, sign, u2 = _draw_rows("draw_e_zero_rows", _e_zero_rows_numpy, rng, len(rows), ins.k)
    target = np.ldexp(1 + u1, edge + e)
    bb = _exact_or_zero(fb, np.ldexp(1.0, np.clip(np.round(np.log2(target) / 2).astype(int), fb.emin, fb.emax)))
    b[rows] = bb[0]
    ar = _rz_bits(fa, target / np.where(bb[1] == 0, 1, bb[1]) * np.array([-1, 1])[sign])
    ar[u2 < 0.3] = 0
    a[rows] = ar
    c[rows] = 0


def _e_zero_rows_numpy(rng, m, K):
    """:func:`golden.vector_kernels.draw_e_zero_rows` with numpy's calls."""
    out = [np.empty((m, K)), np.empty((m, K), np.int64), np.empty((m, K), np.int64), np.empty((m, K))]
    for r in range(m):
        out[0][r], out[1][r], out[2][r], out[3][r] = \
            rng.random(K), rng.integers(-3, 12, K), rng.choice(2, K), rng.random(K)
    return tuple(out)


def _chain(ins, a, b, c, rows, rng) -> None:
    """Case 5, chain boundary: the first half of the products cancels c almost exactly."""
    fa, fb, fc, _ = ins.formats
    L = ins.params.pass_size or ins.k
    pick, shift = _draw_rows("draw_chain_rows", _chain_rows_numpy, rng, len(rows))
    a[rows, :L] = _one(fa, 0.0)
    a[rows, 0] = _one(fa, 1.0)
    b[rows, :L] = _one(fb, 0.0)
    b[rows, 0] = _table(fb, (1.0, 2.0, 0.5))[pick]
    prod = to_float(fa, a[rows, 0]) * to_float(fb, b[rows, 0])
    c[rows] = _rz_bits(fc, -prod * (1 + np.ldexp(1.0, -shift)))


def _chain_rows_numpy(rng, m):
    """:func:`golden.vector_kernels.draw_chain_rows` with numpy's calls."""
    pick, shift = np.empty(m, np.int64), np.empty(m, np.int64)
    for r in range(m):
        pick[r], shift[r] = rng.choice(3), rng.integers(5, 20)
    return pick, shift


def _draw_rows(kernel: str, numpy_draws, rng, *args):
    """A structured case's row-by-row draws: compiled where :func:`_state` allows, else with numpy's calls."""
    st = _state(rng)
    if st is None:
        return numpy_draws(rng, *args)
    out = getattr(_kernels(), kernel)(st, *args)
    _store(rng, st)
    return out


def _signed(fmt: Format, bits, negative):
    """``bits`` with the sign bit set where ``negative`` (formats with a sign)."""
    if not fmt.signed:
        return bits
    return np.where(negative, bits | np.uint64(1 << (fmt.value_bits - 1 + fmt.ignored_low_bits)), bits)


def _infinity(fmt: Format, negative):
    """+-infinity's bits; NaN's where the format has no infinity (FNUZ), +-max where it has neither (fp6, fp4)."""
    if fmt.inf:
        return _signed(fmt, np.full(np.shape(negative), special_bits(fmt, "inf"), np.uint64), negative)
    return _nan(fmt, negative)


def _nan(fmt: Format, negative):
    """A NaN's bits; +-max where the format has no NaN (fp6, fp4)."""
    if fmt.nan == NanKind.NONE:
        return _signed(fmt, np.full(np.shape(negative), special_bits(fmt, "max"), np.uint64), negative)
    return np.full(np.shape(negative), special_bits(fmt, "nan"), np.uint64)


def _large(fmt: Format, shape, rng):
    """Magnitudes near the top of the format (max, max/2, .., max/16): products that overflow (tf32,
    bf16) or reach e_dot >= 25 (bf8 x bf8), and some just short of it."""
    return _table(fmt, tuple(fmt.max_finite * np.ldexp(1.0, -np.arange(5))))[rng.integers(0, 5, shape)]


def disputed_operands(ins: Instruction, n: int, rng: np.random.Generator, out=None, narrow: bool = False):
    """Vectors that reach CDNA3's disputed special-value rules (``golden.Params.specials``), over
    random ``mixed`` operands; an equal share of each case:

    0. an input infinity (c, or an operand in the same pass) and a large product of the other
       sign in a random pass (it overflows where the formats allow);
    1. chained passes: a large product of one sign in the first pass, of the other in the last
       (the first pass's infinity is the last pass's input c);
    2. a NaN or infinite c with large products;
    3. chained passes: a NaN operand in the first pass, large products in the last.
    """
    fa, fb, fc, _ = ins.formats
    K = ins.k
    L = min(ins.params.pass_size or K, K)
    a, b, c, sa, sb = random_operands(ins, n, rng, "mixed", out, narrow)
    case = rng.integers(0, 4, n)
    first = rng.integers(0, L, n)                       # a product of the first pass
    last = K - L + rng.integers(0, L, n)                # one of the last pass
    some = rng.integers(0, K // L, n) * L + rng.integers(0, L, n)
    neg = rng.random(n) < 0.5
    rows = np.arange(n)

    def large_product(r, k, negative):
        a[r, k] = _signed(fa, _large(fa, len(r), rng), negative)
        b[r, k] = _large(fb, len(r), rng)

    r = rows[case == 0]                                 # input infinity vs overflow in one pass
    large_product(r, some[r], neg[r])
    in_c = rng.random(len(r)) < 0.5
    rc = r[in_c & (some[r] < L)]                        # c enters the first pass only
    c[rc] = _infinity(fc, ~neg[rc])
    ro = r[~(in_c & (some[r] < L))]                     # else an operand of the same pass (another product)
    other = (some[ro] // L) * L + (some[ro] % L + 1 + rng.integers(0, max(L - 1, 1), len(ro))) % L
    a[ro, other] = _infinity(fa, ~neg[ro])
    b[ro, other] = _large(fb, len(ro), rng)
    r = rows[case == 1]                                 # overflow one way, then the other, across passes
    large_product(r, first[r], neg[r])
    large_product(r, last[r], ~neg[r])
    r = rows[case == 2]                                 # NaN or infinite c, large products
    c[r] = np.where(rng.random(len(r)) < 0.5, _nan(fc, neg[r]), _infinity(fc, neg[r]))
    large_product(r, first[r], neg[r])
    r = rows[case == 3]                                 # a NaN in the first pass, large products in the last
    a[r, first[r]] = _nan(fa, neg[r])
    large_product(r, last[r], neg[r])
    return a, b, c, sa, sb


def empty_operands(ins: Instruction, n: int, narrow: bool = False):
    """Uninitialised ``(a, b, c, scale_a, scale_b)`` for ``n`` vectors of ``ins`` (scales None if unscaled):
    uint64, or with ``narrow`` each in its format's own width (:func:`operand_dtype`)."""
    fa, fb, fc, fs, _ = (None if f is None else operand_dtype(f, narrow) for f in operand_formats(ins))
    scales = (np.empty((n, ins.k // ins.block_size), fs) for _ in "ab") if ins.scale_format else (None, None)
    return (np.empty((n, ins.k), fa), np.empty((n, ins.k), fb), np.empty(n, fc), *scales)


def random_operands(ins: Instruction, n: int, rng: np.random.Generator, kind: str = "mixed", out=None,
                    narrow: bool = False):
    """``(a [n, K], b [n, K], c [n], scale_a, scale_b)`` bit patterns for ``ins``, in ``out`` (arrays
    as :func:`empty_operands` makes them, or row ranges of such) when given.

    ``narrow``: new arrays in each format's own width (uint8 fp8/fp6/fp4 and scales, uint16 f16/bf16,
    uint32 f32/tf32, uint64 f64; :func:`operand_dtype`) rather than uint64, with the same values and
    the same draws; ``golden.dot_add`` reads them without a width scan, in 1/8 to 1/2 of the bytes.
    Keep uint64 for code that shifts or packs the words (a uint16 shifted left by 16 is silently 0)."""
    if kind not in VECTOR_KINDS:
        raise ValueError(f"unknown vector kind {kind!r}; valid: {', '.join(VECTOR_KINDS)}")
    fa, fb, fc, _ = ins.formats
    out = _out_operands(ins, n, out, narrow)
    if kind == "structured":
        return structured_operands(ins, n, rng, out)
    if kind == "disputed":
        return disputed_operands(ins, n, rng, out)
    if kind in _MADE_ABOVE:
        return _MADE_ABOVE[kind](ins, n, rng, out)
    if kind in ("mixed", "all"):
        parts = ("bits", "normal") if kind == "mixed" else ("bits", "normal", "structured")
        sizes = [n // len(parts)] * (len(parts) - 1)
        sizes.append(n - sum(sizes))
        start = 0
        for m, k in zip(sizes, parts):        # each part in its rows, drawn in turn
            random_operands(ins, m, rng, k, tuple(None if x is None else x[start:start + m] for x in out))
            start += m
        return out
    a, b, c, sa, sb = out
    gen = random_bits if kind == "bits" else random_values
    gen(fa, a.shape, rng, out=a)
    gen(fb, b.shape, rng, out=b)
    gen(fc, c.shape, rng, out=c)
    if ins.scale_format:
        fs = get_format(ins.scale_format)
        if kind == "bits":
            random_bits(fs, sa.shape, rng, out=sa)
            random_bits(fs, sb.shape, rng, out=sb)
        else:   # scales near 1 so the scaled products stay comparable
            table = _table(fs, tuple(np.ldexp(1.0, np.arange(-3, 4))), Rounding.RNE)
            sa[...] = table[rng.integers(-3, 4, sa.shape) + 3]
            sb[...] = table[rng.integers(-3, 4, sb.shape) + 3]
    return out
