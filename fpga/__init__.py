"""FPGA deployment of the RTL units (issue 10)."""
