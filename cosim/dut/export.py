"""One of the project's own units as a device under test: its Verilog and a description of it.

``export(ins, folder)`` writes ``mma_unit.v`` (``amaranth.back.verilog``) and ``unit.toml`` (valid/ready
handshake, operands as fields of the input payload), so that the DUT path can be checked against the
native one on the same RTL (same verdicts; the overhead benchmark, ``python -m cosim.dut bench``).
"""

from __future__ import annotations

from pathlib import Path

from ..payload import PayloadLayout

MODULE = "mma_unit"
DESCRIPTION = "unit.toml"


def description_text(ins, top: str = MODULE, sources=("mma_unit.v",), latency: int | None = None,
                     name: str | None = None, plusargs=()) -> str:
    """The TOML of an exported unit (ports ``i__payload``, ``o__payload``, Amaranth's stream names)."""
    layout = PayloadLayout(ins, 1)
    first = {}
    for f in layout.fields:
        first.setdefault(f.name, f.offset)
    ops = []
    for op in ("a", "b", "c", "scale_a", "scale_b"):
        if layout.counts.get(op):
            ops.append(f'{op} = {{ port = "i__payload", element_bits = {layout.widths[op]}, '
                       f'elements = {layout.counts[op]}, offset = {first[op]} }}')
    ops.append(f'd = {{ port = "o__payload", element_bits = {layout.widths["d"]} }}')
    lat = "" if latency is None else f"latency = {latency}\n"
    return (f'[dut]\nname = "{name or "hw_" + ins.arch}"\ntop = "{top}"\n'
            f'sources = [{", ".join(repr(s).replace(chr(39), chr(34)) for s in sources)}]\n'
            + (f'plusargs = [{", ".join(chr(34) + p + chr(34) for p in plusargs)}]\n' if plusargs else "") +
            '\n[clock]\nname = "clk"\n\n[reset]\nname = "rst"\nactive = "high"\ncycles = 1\n\n'
            '[handshake]\nkind = "valid_ready"\nin_valid = "i__valid"\nin_ready = "i__ready"\n'
            f'out_valid = "o__valid"\nout_ready = "o__ready"\n{lat}\n'
            '[operands]\n' + "\n".join(ops) + f'\n\n[[target]]\narch = "{ins.arch}"\ninstr = "{ins.name}"\n')


def export(ins, folder, pipeline: str = "0", built_as=None) -> Path:
    """Write the hw unit of ``ins`` and its description into ``folder``; returns the description's path.

    ``built_as``: the instruction the unit is built for (a planted fault: ``ins`` with other Params),
    while the description's target stays ``ins``."""
    import hw

    from ..build import elaborate
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    unit = hw.dot_add_unit(built_as or ins, pipelining=pipeline)
    (folder / f"{MODULE}.v").write_text(elaborate(unit, MODULE))
    path = folder / DESCRIPTION
    path.write_text(description_text(ins, latency=unit.latency))
    return path
