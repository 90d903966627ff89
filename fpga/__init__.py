"""FPGA deployment of the units: board tops, host link, driver, board simulation and builds."""
