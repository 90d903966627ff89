"""A device under test of your own: a Verilog/SystemVerilog unit described by one TOML file (docs/your-rtl.md).

Modules, bottom up: reader (typed TOML fields, the one DescriptionError), signal_map (the ``[signals]``
table and the comparison of a design's stage values with golden's), description (the TOML, checked field
by field: lanes or tiles, packed, per-element and split ports, catalog targets and targets of your own),
sources (file lists, FuseSoC cores, plain lists), targets (the golden instruction each target is, checked
against the operands or the tile), ports (the top's real ports read with Verilator, checked against the
description), tile (a tile device's payload, scoring and capture), transfers (what one transfer carries:
a dot-add or a tile, and everything that depends on it), adapter and adapter_tile (the generated
``cosim_unit`` that puts any handshake, or a tile's beats, behind the co-simulation harness), builds
(prepare: every check without a build; one cached build per target), order (the order diagnosis),
structure (the structure probe of a failing tile device), vcd and signals (the first divergent stage,
read from a waveform), run (co-simulate, diagnose: lost, duplicated, reordered results, X, latency,
out_last; replay), junit (JUnit XML), lint, backend (the design as a function: campaigns, the probe),
export (a hw unit as a DUT), bench (the DUT path against the native one), throughput (devices side by
side).  ``python -m cosim.dut --help``.
"""
