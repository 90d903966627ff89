"""FPGA deployment: the board gateware, its host link and the host-side driver."""
