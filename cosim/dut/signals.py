"""The first divergent stage: a failing design rerun on a waveform build, its signal map compared with golden.

On a mismatch (:func:`report_divergence`) the first failing dot-adds are rerun without stalls on a
build that writes a VCD waveform; each value of the description's signal map
(:mod:`cosim.dut.signal_map`) is read at its cycle (:mod:`cosim.dut.vcd`) and compared with golden's
trace of that dot-add, in the order of golden's stages.  The report names the first stage that
differs: ``max_exponent.e_max agrees; aligned.products differs: element 3 is ...``.
:func:`check_map` (``python -m cosim.dut signals``) runs the same comparison on a design that works,
so a wrong map is found before a failure needs it.
"""

from __future__ import annotations

from golden.streams import VectorStream

from ..session import Capture, simulate
from . import transfers
from .builds import build, x_plusargs
from .reader import DescriptionError
from .signal_map import RERUN, Mapping, compare, expand, first_divergence
from .vcd import VcdError, find, names_of, sample


def stage_verdicts(prep, target, ins, ops, cfg) -> tuple[list, object]:
    """Run the dot-adds ``ops`` without stalls on a VCD build of ``target`` and compare every mapped value
    with golden's: ``(verdicts per dot-add, waveform path)``; RuntimeError (one line) if it cannot."""
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
    names, _ = names_of(waves)
    clock = find(names, "unit.clk")            # cosim_harness.unit: the adapter; .dut: the design
    unit = clock.rsplit(".", 1)[0]
    under = f"{unit}.dut"
    valid, ready = (find(names, f"{unit}.{s}") for s in ("i__valid", "i__ready"))
    maps = {k: expand(m, ins.k) for k, m in prep.desc.signals.items()}
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
