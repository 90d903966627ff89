"""The probe on a described device (``make probe DUT=path/unit.toml``): every target, each against its own
arithmetic, and the inference written as a target the description takes.

A description's targets are what the design claims to compute: a catalog entry (with its ``params``
changes, so a design described as RZ is judged as RZ) or an arithmetic of its own.  Each is probed
through its own build and pins (:meth:`probe.backends.SimulatedDUT.bound`), its report headed by which
target it is.  When the inferred arithmetic is no catalog entry's, the report ends with it as a
``[[target]]`` block in TOML (:func:`target_toml`): pasted into the description, it is a target of
your own that co-simulates as golden computes it.  The run ends with one line, ``verification:
reproduced`` when the inferred parameters reproduced every target bit for bit.
"""

from __future__ import annotations

import golden
from golden.custom import custom
from golden.params import FIELDS

from .infer import Report, probe

__all__ = ["probe_device", "target_toml", "catalog_twins"]

LOWERING = ("operand_format", "pass_interleave", "c_last")      # a compiled path's fields: written only when set
_PLAIN = golden.Params(base="SFMA")


def _toml_value(name: str, value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if name == "nan_bits" and isinstance(value, int):
        return f"{value:#x}"
    if isinstance(value, int):
        return str(value)
    return f'"{value}"'


def target_toml(ins, params, label: str | None = None, pins: dict | None = None) -> str:
    """``[[target]]`` of a description for ``ins``'s shape and formats computed by ``params`` (every field
    the algorithm reads, and base; fields left at None are the defaults and not written)."""
    lines = ["[[target]]"]
    if label:
        lines.append(f'name = "{label}"')
    lines.append(f"k = {ins.k}")
    if pins:
        lines.append("pins = { " + ", ".join(f"{k} = {v}" for k, v in pins.items()) + " }")
    if ins.scale_format:
        lines.append(f"block = {ins.block_size}")
    lines.append("[target.formats]")
    lines += [f'{k} = "{v}"' for k, v in (("a", ins.a_format), ("b", ins.b_format), ("c", ins.c_format),
                                         ("d", ins.d_format), ("scale", ins.scale_format)) if v]
    lines.append("[target.params]")
    read = set(params.fields_read) | {"base"}
    for name in FIELDS:
        value = getattr(params, name)
        if name in read and value is not None and not (name in LOWERING and value == getattr(_PLAIN, name)):
            lines.append(f"{name} = {_toml_value(name, value)}")
    return "\n".join(lines)


def catalog_twins(ins, params) -> list:
    """Catalog entries that compute exactly what ``params`` does on ``ins``'s formats and K."""
    mine = custom(ins.k, ins.a_format, ins.c_format, params, b=ins.b_format, d=ins.d_format,
                  scale=ins.scale_format, block=ins.block_size).datapath
    twins = [c for c in golden.CATALOG if c.datapath == mine]
    return sorted(twins, key=lambda c: ((c.arch, c.name) != (ins.arch, ins.name), c.arch != ins.arch))


def _reproduced(r: Report) -> bool:
    v = r.verification or {}
    return "rows" in v and not v["mismatches"]


def probe_device(backend, arch: str | None, instr: str | None, out, quiet: bool = False) -> tuple[int, list]:
    """Probe the targets of ``backend`` (a :class:`probe.backends.SimulatedDUT`) that ``arch``/``instr`` name
    (every target when neither is given); print each report; ``(exit status, reports)``."""
    pairs = backend.targets()
    keep = list(range(len(pairs)))
    if arch or instr:
        wanted = {(i.arch, i.name) for i in golden.select(arch or None, instr or None)}
        keep = [n for n in keep if (pairs[n][1].arch, pairs[n][1].name) in wanted]
        if not keep:
            have = "; ".join(t.describe() for t, _ in pairs)
            raise ValueError(f"ARCH={arch or 'all'} INSTR={instr or 'all'} names none of the description's targets "
                             f"({have}); leave both out to probe every target")
    reports, blocks = [], []
    for n in keep:
        target, ins = pairs[n]
        pins = " ".join(f"{k}={v}" for k, v in target.pins.items())
        head = f"== target {n + 1}: {target.describe()}" + (f" (pins {pins})" if pins else "")
        print(head, file=out, flush=True)
        r = probe(ins, backend.bound(n))
        late = backend.latency_note(n)
        if late:                                 # named beside the values, whatever they say
            r.differences.append(late)
        reports.append(r)
        print(r.summary() if quiet else r.text(), file=out)
        if late:
            print(late, file=out)
        if r.inferred is not None:
            twins = catalog_twins(ins, r.inferred)
            if twins:
                more = f" (and {len(twins) - 1} more with this datapath)" if len(twins) > 1 else ""
                print(f"the inference is catalog entry {twins[0].arch} {twins[0].name}{more}", file=out)
            else:
                label = f"{target.label or 'target ' + str(n + 1)} (inferred)"
                blocks.append(target_toml(ins, r.inferred, label, target.pins))
                print("the inference as a target of your own (paste it into the description):", file=out)
                print(blocks[-1], file=out)
        print("", file=out)
    bad = [n + 1 for n, r in zip(keep, reports) if not _reproduced(r)]
    differ = [n + 1 for n, r in zip(keep, reports) if not r.matches]
    if differ:
        print(f"{len(differ)} of {len(keep)} target(s) differ from what the description says: target(s) "
              f"{', '.join(map(str, differ))}", file=out)
    print("verification: reproduced" if not bad else
          f"verification: not reproduced on target(s) {', '.join(map(str, bad))} of {len(keep)}", file=out)
    return (0 if not bad and not differ else 1), reports
