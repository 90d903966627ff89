"""Formal proofs of the datapath stages and of the stream protocol (SymbiYosys)."""
