"""FPGA deployment of the RTL units: a board runs one unit behind a serial host link (issue 10)."""
