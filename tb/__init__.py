"""Testbenches: the Verilog co-simulation harness (cosim_harness.sv) and its cocotb test (cosim_tb.py)."""
