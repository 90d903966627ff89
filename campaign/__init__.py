"""Verification campaigns that outgrow one machine.

A campaign runs numbered blocks of vectors of a set of instructions on a device under test (the
Verilator unit, golden with changed parameters, a GPU, an FPGA board), checks each against the golden
model on dask.distributed workers, and writes one SQLite row per finished block, so that a campaign
survives crashes and resumes where it stopped.  The layers' rightmost consumer: nothing imports it.

- :mod:`campaign.spec`: what a campaign is (:class:`Campaign`) and how its blocks are numbered;
- :mod:`campaign.blocks`: one block on a worker;
- :mod:`campaign.store`: the results database;
- :mod:`campaign.engine`: the dask driver (:func:`run`);
- :mod:`campaign.report`, :mod:`campaign.replay`, :mod:`campaign.bench`: what users read and rerun.
"""

from golden.launch import extra_needed

# a missing [campaign] extra is one line naming it (an error line and exit 2 under python -m campaign)
with extra_needed("campaign", "campaign"):
    from .blocks import BlockResult, run_block
    from .engine import run
    from .report import report
    from .spec import Campaign
    from .store import Store

__all__ = ["BlockResult", "Campaign", "Store", "report", "run", "run_block"]
