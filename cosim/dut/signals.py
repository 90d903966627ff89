"""The signal map: golden's stages on a design's own signals, and the first stage where they disagree.

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

On a mismatch (:func:`report_divergence`) the first failing dot-adds are rerun without stalls on a
build that writes a VCD waveform; each mapped value is read at its cycle (:mod:`cosim.dut.vcd`) and
compared with golden's trace of that dot-add, in the order of golden's stages.  The report names the
first stage that differs: ``max_exponent.e_max agrees; aligned.products differs: element 3 is ...``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

import golden
from golden.stages import Stage

from .description import DescriptionError, _Reader

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


def read_signals(path, table: dict, desc) -> dict:
    """``{key: Mapping}`` from a description's ``[signals]`` (DescriptionError, one line, if wrong)."""
    if desc.tile is not None:
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
        r = _Reader(path, spec, f"[signals] {key}.")
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


def _path(r: _Reader, text: str) -> tuple:
    if not isinstance(text, str):
        r.fail("signals", f"{text!r} is not a signal path")
    m = _SIGNAL.match(text.strip().replace("{i}", "0"))
    if m is None:
        r.fail("signal", f"{text!r} is not a signal path (a.b.c, optionally [hi:lo])")
    lo = int(m["lo"]) if m["lo"] is not None else 0
    width = int(m["hi"]) - lo + 1 if m["hi"] is not None else None
    return (text.strip().split("[")[0] if m["hi"] is not None else text.strip(), lo, width)


def _expand(mapping: Mapping, count: int) -> Mapping:
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


def stage_verdicts(prep, target, ins, ops, cfg) -> tuple[list, object]:
    """Run the dot-adds ``ops`` without stalls on a VCD build of ``target`` and compare every mapped value
    with golden's: ``(verdicts per dot-add, waveform path)``; RuntimeError (one line) if it cannot."""
    from ..session import Capture, simulate
    from . import transfers
    from .run import build, x_plusargs
    from .vcd import VcdError, find, sample
    desc = prep.desc
    n = len(ops[2])
    try:
        b = build(prep, target, ins, waves="vcd", root=cfg.build_root)
        s = simulate(b, transfers.layout(desc, ins), transfers.array_stream(desc, ins, ops), Capture(n), n=n,
                     seed=cfg.seed, stall_in=0.0, stall_out=0.0, batch_vectors=n, keep_run_dir=True,
                     plusargs=desc.plusargs + x_plusargs(cfg.seed + 1))
        if s.error or s.waves_file is None:
            raise RuntimeError((s.error or "no waveform was written").splitlines()[0])
        return _read_and_compare(prep, ins, ops, n, s.waves_file, find, sample), s.waves_file
    except (VcdError, KeyError, OSError) as e:
        raise RuntimeError(str(e)) from None


def report_divergence(prep, dr, cfg, out) -> list | None:
    """Rerun the first failing dot-adds on a VCD build and print where design and golden part
    (see the module docstring); the verdicts of each dot-add, or None when it could not run."""
    res, ins = dr.result, dr.result.ins
    f = res.failing
    n = min(RERUN, len(f["index"]))
    ops = tuple(None if f.get(k) is None else f[k][:n] for k in ("a", "b", "c", "scale_a", "scale_b"))
    print(f"signal map: the first {n} failing dot-add(s) rerun without stalls on a VCD build...", file=out, flush=True)
    try:
        verdicts, waves = stage_verdicts(prep, dr.target, ins, ops, cfg)
    except RuntimeError as e:
        print(f"  could not compare the stages: {e}", file=out)
        return None
    first = verdicts[0]
    print(f"  dot-add #{int(f['index'][0])}: {first_divergence(first)}", file=out)
    firsts = [next((k for k, v in vs if v.startswith("differs")), None) for vs in verdicts]
    counts: dict = {}
    for k in firsts:
        counts[k] = counts.get(k, 0) + 1
    summary = ", ".join(f"{k} in {c} of {n}" if k else f"no mapped stage in {c} of {n}"
                        for k, c in sorted(counts.items(), key=lambda kv: -kv[1]))
    print(f"  first divergent stage: {summary}  (waves: {waves})", file=out)
    dr.notes.append(f"first divergent stage: {summary}")
    return verdicts


def _read_and_compare(prep, ins, ops, n: int, waves, find, sample) -> list:
    """The mapped values of each of the ``n`` dot-adds from the waveform, compared with golden's."""
    from .vcd import _names
    names, _ = _names(waves)
    clock = find(names, "unit.clk")            # cosim_harness.unit: the adapter; .dut: the design
    unit = clock.rsplit(".", 1)[0]
    under = f"{unit}.dut"
    valid, ready = (find(names, f"{unit}.{s}") for s in ("i__valid", "i__ready"))
    maps = {k: _expand(m, ins.k) for k, m in prep.desc.signals.items()}
    paths = {k: [find(names, p, under) for p, _, _ in m.paths] for k, m in maps.items()}
    wanted = sorted({clock, valid, ready} | {p for ps in paths.values() for p in ps})
    vals, widths = sample(waves, clock, [w for w in wanted if w != clock])
    for k, m in maps.items():                  # a path without a range is the signal's whole width
        sized = tuple((p, lo, w if w is not None else widths[full] - lo) for (p, lo, w), full in zip(m.paths, paths[k]))
        maps[k] = Mapping(k, sized, m.element_bits, m.cycle, m.signed, m.bias, m.shift)
    edges = [e for e, (v, r) in enumerate(zip(vals[valid], vals[ready])) if v and r][:n]
    if len(edges) < n:
        raise RuntimeError(f"the waveform shows {len(edges)} accepted inputs, expected {n}")
    verdicts = []
    for v, e in enumerate(edges):
        design = {}
        for k, m in maps.items():
            at = e + m.cycle
            raws = [vals[p][at] if at < len(vals[p]) else 0 for p in paths[k]]
            design[k] = m.decode(raws)
        one = tuple(None if x is None else x[v] for x in ops)
        verdicts.append(compare(ins, maps, one, design))
    return verdicts


def check_map(prep, cfg, n: int = RERUN, out=None) -> int:
    """``python -m cosim.dut signals``: ``n`` random dot-adds of each target through the signal map; every
    mapped value of a design that matches golden agrees, so a map that does not is named before it is
    needed.  0 when every compared value agrees, 1 otherwise."""
    import sys
    from golden.streams import VectorStream
    out = out or sys.stdout
    if not prep.desc.signals:
        raise DescriptionError(f"{prep.desc.path}: no [signals] table to check (docs/your-rtl.md, 'The signal map')")
    status = 0
    for target, ins in prep.pairs:
        ops = VectorStream(ins, cfg.vectors, cfg.seed).take(n)
        verdicts, waves = stage_verdicts(prep, target, ins, ops, cfg)
        print(f"{target.describe()}: {n} random dot-adds, no stalls (waves: {waves})", file=out)
        for key in dict.fromkeys(k for vs in verdicts for k, _ in vs):
            said = [v for vs in verdicts for k, v in vs if k == key]
            agree = sum(v == "agrees" for v in said)
            skipped = sum(v.startswith("not compared") for v in said)
            first = next((v for v in said if v != "agrees"), "")
            status |= agree + skipped < len(said)
            print(f"  {key:28s} {agree} of {len(said) - skipped} agree"
                  + (f" ({skipped} not compared)" if skipped else "") + (f"; first: {first}" if first else ""),
                  file=out)
    return int(status)
