"""A device under test of your own: a Verilog/SystemVerilog unit described by one TOML file (docs/your-rtl.md).

Modules: description (the TOML, checked field by field), sources (file lists, FuseSoC cores, plain
lists), targets (catalog entries and Params changes the unit must match), ports (the top's real ports
read with Verilator, checked against the description), adapter (the generated ``cosim_unit`` that
puts any handshake behind the co-simulation harness), run (build, co-simulate, diagnose: lost,
duplicated, reordered results, X, latency; replay), order (the order diagnosis), junit (JUnit XML),
lint, backend (the design as a function: campaigns, the probe), export (a hw unit as a DUT), bench
(the DUT path against the native one).  ``python -m cosim.dut --help``.
"""
