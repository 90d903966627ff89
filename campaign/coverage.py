"""A campaign's functional coverage: each block's bin hits, measured on its worker, summed over blocks.

A worker measures each block it checks with :func:`golden.coverage.measure`: a random sample of
``Campaign.cover_rows`` of the block's compared dot-adds (seeded by the campaign's seed and the
block), or all of them where that is the block (the simulators' default).  The hits travel back with the block's
result and the store writes them in the block's own transaction, keyed as the block is, so the
campaign's coverage is the sum over its stored blocks: over every worker and every resumed run, each
block once however many times it ran.

Each block's hits name the cover points they were measured with (:func:`model_id`: the instruction,
its bins, its unreachable bins).  When golden's cover points change between runs, blocks measured
with other points are not added to the new ones: a resumed run measures them again on the workers
(:func:`campaign.blocks.measure_block`: their vectors regenerate from ``(seed, block)``), and a report
counts only the blocks measured with this golden's points and says how many it left out.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

import golden
from golden import coverage as golden_coverage
from golden.cover.model import SUMMARY_FORMAT, Coverage
from golden.cover.report import html_page, json_document, measured_line

__all__ = ["CampaignCoverage", "block_coverage", "model_id", "write_html", "write_json"]

HOLES_SHOWN = 20            # holes listed per instruction; the JSON holds them all


def model_id(cov: Coverage) -> str:
    """A short hash of what ``cov`` counts: its instruction, bins and unreachable bins."""
    text = json.dumps([cov.instruction, list(cov.bins), sorted(cov.unreachable)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def block_coverage(c, ins, block: int, ops, compared=None) -> dict | None:
    """The coverage of block ``block``'s operands ``ops`` (``(a, b, c, scale_a, scale_b)``) as a worker
    sends it back: ``{"model", "dot_adds", "offered", "hits": {bin: count}}`` (bins hit only), ``{"error":
    message}`` where measuring failed (the block's verdict stands), or None where the campaign measures
    nothing (``cover_rows`` 0).  ``compared``: a bool mask of the rows that were compared (the
    others, which the device could not run, are not measured)."""
    if not c.cover_rows:
        return None
    if compared is not None:
        ops = tuple(None if x is None else np.asarray(x)[compared] for x in ops)
    try:
        cov = golden_coverage.empty(ins)
        n = len(ops[2])
        sample = c.cover_rows if c.cover_rows < n else None
        golden_coverage.measure(ins, *ops, sample=sample, seed=[c.seed, block], into=cov)
    except Exception as e:                       # a cover point's failure is not the device's
        return {"error": f"{type(e).__name__}: {e}"}
    return {"model": model_id(cov), "dot_adds": cov.dot_adds, "offered": cov.offered,
            "hits": {b: n for b, n in cov.hits.items() if n}}


class CampaignCoverage:
    """The coverage of a campaign's instructions under this golden's cover points, block by block.

    Members
    -------
    coverages : dict
        ``{(arch, instr): golden.coverage.Coverage}``; an instruction this golden cannot look up is left out.
    models : dict
        ``{(arch, instr): model_id}`` of this golden's cover points.
    blocks, stale : dict
        ``{(arch, instr): blocks}`` counted, and left out as measured with other cover points.
    """

    def __init__(self, instructions):
        self.coverages, self.models, self.missing = {}, {}, {}
        for arch, name in instructions:
            try:
                self.coverages[arch, name] = golden_coverage.empty(golden.lookup(arch, name))
            except (KeyError, ValueError) as e:
                self.missing[arch, name] = str(e)
                continue
            self.models[arch, name] = model_id(self.coverages[arch, name])
        self.blocks = dict.fromkeys(self.coverages, 0)
        self.stale = dict.fromkeys(self.coverages, 0)

    @classmethod
    def of_store(cls, store, c) -> CampaignCoverage:
        """Every stored block of campaign ``c`` in ``store`` (a :class:`campaign.store.Store`)."""
        out = cls(c.instructions)
        for arch, instr, _block, measured in store.coverage_rows(c.id):
            out.add(arch, instr, measured)
        return out

    def add(self, arch: str, instr: str, measured: dict | None) -> bool:
        """Count one block's ``measured`` hits (:func:`block_coverage`); False where they were measured
        with other cover points (counted in ``stale``) or not at all."""
        key = (arch, instr)
        if key not in self.coverages or not measured or "error" in measured:
            return False
        if measured["model"] != self.models[key]:
            self.stale[key] += 1
            return False
        cov = self.coverages[key]
        for b, n in measured["hits"].items():
            cov.hits[b] += int(n)
        cov.dot_adds += int(measured["dot_adds"])
        cov.offered += int(measured["offered"])
        self.blocks[key] += 1
        return True

    def summary(self) -> str:
        """The summary line over every instruction (bins summed)."""
        covs = self.coverages.values()
        return SUMMARY_FORMAT.format(hit=sum(len(x.hit()) for x in covs),
                                     reachable=sum(len(x.reachable()) for x in covs),
                                     unreachable=sum(len(x.unreachable) for x in covs))

    def lines(self, done: dict | None = None) -> list[str]:
        """The report's lines: per instruction its summary, what was measured and its holes, then the
        campaign's summary.  ``done``: ``{(arch, instr): blocks stored}``, to name blocks without coverage."""
        out = []
        for key, cov in self.coverages.items():
            arch, name = key
            measured = (f"{self.blocks[key]:,} block(s): {measured_line(cov)}" if self.blocks[key]
                        else "no block measured yet")
            out.append(f"{arch} {name}: {cov.summary()}; {measured}")
            holes = cov.missed()
            if holes:
                more = f" ... and {len(holes) - HOLES_SHOWN} more" if len(holes) > HOLES_SHOWN else ""
                out.append(f"  holes ({len(holes)}): {', '.join(holes[:HOLES_SHOWN])}{more}")
            if self.stale[key]:
                out.append(f"  not counted: {self.stale[key]:,} block(s) measured with other cover points "
                           f"(golden's changed since); a resumed run (RESUME=1) measures them again")
            unmeasured = (done or {}).get(key, 0) - self.blocks[key] - self.stale[key]
            if unmeasured > 0:
                out.append(f"  not counted: {unmeasured:,} block(s) stored without coverage; a resumed run "
                           f"(RESUME=1) measures them")
        out += [f"{arch} {name}: no coverage: {why}" for (arch, name), why in self.missing.items()]
        if len(self.coverages) > 1:
            out.append(f"campaign {self.summary()} over {len(self.coverages)} instructions")
        return out

    def meta(self) -> dict:
        """What the JSON and HTML reports say beside the coverages: blocks counted and left out."""
        return {f"{arch} {name}": f"{self.blocks[arch, name]:,} block(s) counted, {self.stale[arch, name]:,} measured "
                f"with other cover points" for arch, name in self.coverages}


def write_json(path, campaigns: dict, meta: dict) -> Path:
    """``campaigns`` (``{campaign id: CampaignCoverage}``) as golden's coverage JSON document
    (``golden.cover.report.json_document``: ``Coverage.from_dict`` reads each entry back)."""
    covs = [cov for cc in campaigns.values() for cov in cc.coverages.values()]
    facts = {**meta, **{k: v for cc in campaigns.values() for k, v in cc.meta().items()}}
    return _write(path, json.dumps(json_document(covs, facts), indent=1) + "\n")


def write_html(path, campaigns: dict, title: str, meta: dict) -> Path:
    """golden's coverage page (``golden.cover.report.html_page``) of every instruction of ``campaigns``."""
    covs = [cov for cc in campaigns.values() for cov in cc.coverages.values()]
    facts = {**meta, **{k: v for cc in campaigns.values() for k, v in cc.meta().items()}}
    return _write(path, html_page(covs, title, facts))


def _write(path, text: str) -> Path:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ValueError(f"cannot write the coverage report {path}: {e}") from None
    return path
