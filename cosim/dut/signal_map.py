"""The signal map: golden's stages on a design's own signals, read and compared (no simulator here).

A description's optional ``[signals]`` table maps golden's trace values (:mod:`golden.stages`:
``max_exponent.e_max``, ``aligned.products``, ...) to the design's internal signals and the cycle,
counted from the one where the dot-add's input was accepted, at which each holds it::

    [signals]
    "max_exponent.e_max" = { signal = "e_max", cycle = 1, bias = 256 }
    "aligned.products" = { signal = "terms[215:0]", element_bits = 27, signed = true, cycle = 1 }

``signal`` is a path below the top (``u_core.s1_emax``; a bit range ``[hi:lo]`` takes part of it); a
vector value (one per product) is either one bus of ``element_bits``-wide elements, element 0 in the
low bits, or ``signals = "u_lane{i}.term"`` (a pattern) or a list.  The design's value is compared as
``golden * 2**shift + bias`` (``shift``: more fraction bits than golden's units, ``bias``: a biased
exponent), ``signed`` reading it as two's complement.

:func:`read_signals` reads the table, :func:`compare` compares one dot-add's mapped values with golden's
trace in the order of golden's stages, :func:`first_divergence` says where they part.  Running the
design and reading its waveform is :mod:`cosim.dut.signals`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

import golden
from golden.stages import Stage

from .reader import DescriptionError, Reader

_SIGNAL = re.compile(r"^(?P<path>[A-Za-z_][A-Za-z0-9_$.\[\]]*?)(?:\[(?P<hi>\d+):(?P<lo>\d+)\])?$")
_KEY = re.compile(r"^(?:pass(?P<pass>\d+)\.)?(?P<stage>[a-z_]+)\.(?P<value>[a-z_0-9]+)$")
FIELDS = ("signal", "signals", "element_bits", "cycle", "signed", "bias", "shift")
RERUN = 8                 # failing dot-adds whose stages are compared


@dataclass(frozen=True)
class Mapping:
    """Where one of golden's trace values sits in the design (see the module docstring)."""

    key: str
    paths: tuple                  # (signal path, low bit, width or None) per element, or one for a bus
    element_bits: int | None
    cycle: int
    signed: bool = False
    bias: int = 0
    shift: int = 0

    def decode(self, raws: list[int]) -> list[int]:
        """The design's integers (one per element) from the sampled signal values."""
        vals = []
        if self.element_bits is not None and len(self.paths) == 1:
            (raw,) = raws
            _, lo, width = self.paths[0]
            raw >>= lo
            n = (width or 0) // self.element_bits
            vals = [(raw >> (i * self.element_bits)) & ((1 << self.element_bits) - 1) for i in range(n)]
            bits = self.element_bits
        else:
            for raw, (_, lo, width) in zip(raws, self.paths):
                vals.append((raw >> lo) & ((1 << width) - 1) if width else raw)
            bits = self.element_bits or (self.paths[0][2] or 0)
        if self.signed and bits:
            vals = [v - (1 << bits) if v >> (bits - 1) & 1 else v for v in vals]
        return vals


def read_signals(path, table: dict, tile=None) -> dict:
    """``{key: Mapping}`` from a description's ``[signals]`` (DescriptionError, one line, if wrong); ``tile``:
    the description's tile, which takes no map."""
    if tile is not None:
        raise DescriptionError(f"{path}: [signals]: a tile device's lanes and k-slices have no one cycle per "
                               "dot-add; the signal map takes dot-add devices")
    stages = ", ".join(s.value for s in Stage if s is not Stage.PASS)
    out = {}
    for key, spec in table.items():
        m = _KEY.match(key)
        if m is None or m["stage"] not in {s.value for s in Stage}:
            raise DescriptionError(f"{path}: [signals] {key!r}: not STAGE.VALUE (golden's trace names, "
                                   f"docs/your-rtl.md); stages: {stages}")
        if not isinstance(spec, dict):
            raise DescriptionError(f"{path}: [signals] {key!r}: expected {{ signal = \"...\", cycle = N }}")
        r = Reader(path, spec, f"[signals] {key}.")
        r.unknown(FIELDS)
        cycle = r.get("cycle", int, required=True, valid="cycles after the one where the input was accepted")
        if not 0 <= cycle <= 10_000:
            r.fail("cycle", f"{cycle}; valid: 0 to 10000")
        bits = r.get("element_bits", int)
        if bits is not None and not 1 <= bits <= 4096:
            r.fail("element_bits", f"{bits}; valid: 1 to 4096")
        one, many = r.get("signal", str), r.get("signals", (str, list))
        if (one is None) == (many is None):
            r.fail("signal", "give exactly one of signal = \"path\" or signals = \"path_{i}\" / [\"path\", ...]")
        paths = tuple(_path(r, p) for p in ([one] if one is not None else
                                              many if isinstance(many, list) else [many]))
        out[key] = Mapping(key, paths, bits, cycle, bool(r.get("signed", bool, False)), r.get("bias", int, 0),
                           r.get("shift", int, 0))
    return out


def _path(r: Reader, text: str) -> tuple:
    if not isinstance(text, str):
        r.fail("signals", f"{text!r} is not a signal path")
    m = _SIGNAL.match(text.strip().replace("{i}", "0"))
    if m is None:
        r.fail("signal", f"{text!r} is not a signal path (a.b.c, optionally [hi:lo])")
    lo = int(m["lo"]) if m["lo"] is not None else 0
    width = int(m["hi"]) - lo + 1 if m["hi"] is not None else None
    return (text.strip().split("[")[0] if m["hi"] is not None else text.strip(), lo, width)


def expand(mapping: Mapping, count: int) -> Mapping:
    """A pattern ``signals = "x{i}"`` as ``count`` paths."""
    if len(mapping.paths) == 1 and "{i}" in mapping.paths[0][0]:
        p, lo, w = mapping.paths[0]
        return Mapping(mapping.key, tuple((p.replace("{i}", str(i)), lo, w) for i in range(count)),
                       mapping.element_bits, mapping.cycle, mapping.signed, mapping.bias, mapping.shift)
    return mapping


def _golden_ints(value, shift: int, bias: int):
    """golden's value as the design's integers (None where it is not a whole number or not finite)."""
    arr = np.atleast_1d(np.asarray(value, np.float64))
    out = []
    for v in arr:
        x = float(v) * 2.0 ** shift
        out.append(int(x) + bias if np.isfinite(x) and x == int(x) else None)
    return out


def compare(ins, mappings: dict, ops, design: dict) -> list[tuple[str, str]]:
    """For one dot-add: ``[(key, verdict)]`` in golden's stage order, each ``agrees``, ``differs: ...`` or
    ``not compared: ...``; ``design``: ``{key: [design integers]}``."""
    a, b, c, sa, sb = ops
    values = golden.trace(ins, a, b, c, sa, sb).values()
    order = list(values)
    terms = [np.asarray(values[k], np.float64) for k in ("products.value", "max_exponent.c") if k in values]
    if not all(np.isfinite(t).all() for t in terms):         # the special-value rules decide, not the datapath
        return [(key, "not compared: a NaN or an infinity decides this dot-add") for key in mappings]
    out = []
    for key in sorted(mappings, key=lambda k: order.index(k) if k in order else len(order)):
        m = mappings[key]
        if key not in values:
            out.append((key, f"not compared: golden's trace of {ins.name} has no {key} (it has "
                             f"{', '.join(k for k in order if not k.startswith('pass'))})"))
            continue
        want = _golden_ints(values[key], m.shift, m.bias)
        got = design[key]
        if any(w is None for w in want):
            out.append((key, "not compared: golden's value is not a whole number here (a special value)"))
            continue
        if len(got) != len(want):
            out.append((key, f"not compared: the design gives {len(got)} element(s), golden {len(want)}"))
            continue
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
        if not bad:
            out.append((key, "agrees"))
            continue
        i = bad[0]
        which = f"element {i} " if len(want) > 1 else ""
        more = f" ({len(bad)} of {len(want)} elements differ)" if len(want) > 1 else ""
        out.append((key, f"differs: {which}is {got[i]} in the design, {want[i]} in golden{more}"))
    return out


def first_divergence(verdicts: list) -> str:
    """``"products.exponent agrees; max_exponent.e_max agrees; aligned.products differs: ..."`` up to the first
    difference (every stage, when none differs)."""
    parts = []
    for key, verdict in verdicts:
        parts.append(f"{key} {verdict}")
        if verdict.startswith("differs"):
            break
    return "; ".join(parts)
