"""Formal proofs of the datapath stages and of the stream protocol (SymbiYosys)."""

from golden.launch import extra_needed

# the proofs' designs are Amaranth's: without the [formal] extra, one line naming it (exit 2 under python -m formal)
with extra_needed("formal", "formal"):
    import amaranth  # noqa: F401
