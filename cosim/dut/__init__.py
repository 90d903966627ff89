"""A device under test of your own: a Verilog/SystemVerilog unit described by one TOML file (docs/your-rtl.md)."""
