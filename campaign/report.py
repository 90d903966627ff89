"""The campaign report: per instruction, vectors, mismatches, rate, the first failure with its replay file,
and the coverage of the stored blocks (its summary line and holes; :mod:`campaign.coverage`).

It reads only the database, so it can be printed at any time, while a campaign runs or after it crashed;
it writes only the coverage files it is asked for (JSON, and golden's HTML page).
"""

from __future__ import annotations

import sys

from .coverage import CampaignCoverage, write_html, write_json
from .store import Store

HEADER = (f"{'arch':13s} {'instruction':42s} {'blocks':>11s} {'vectors':>13s} {'mismatch':>9s} "
          f"{'dot-adds/s':>11s}  verdict")


def verdict(c, row: dict | None, problems: list[dict]) -> str:
    """``ok`` (every block done, no mismatch), ``MISMATCH``, ``ERROR``/``unavailable`` (the device
    failed on a block or cannot run the instruction here) or ``incomplete``."""
    if row and row["mismatches"]:
        return "MISMATCH"
    if problems:
        return problems[-1]["status"].upper() if problems[-1]["status"] == "error" else problems[-1]["status"]
    if row is None or row["blocks"] < c.blocks:
        return "incomplete"
    return "ok"


def report(db, out=None, only: str | None = None, coverage_json=None, coverage_html=None) -> int:
    """Print every campaign in ``db`` (or the one whose id is ``only``); returns 0 when every
    instruction of every campaign printed is ``ok``.  ``coverage_json``, ``coverage_html``: files to
    write the printed campaigns' coverage to (the HTML page is golden's, ``golden.cover.report``)."""
    out = out or sys.stdout
    store = Store(db, write=False)
    try:
        campaigns = store.campaigns()
        if not campaigns:
            print(f"{db}: no campaign yet", file=out)
            return 1
        bad = 0
        covered = {}
        for c in campaigns:
            if only is None or c.id == only:
                covered[c.id] = CampaignCoverage.of_store(store, c)
                bad += _one(store, c, out, covered[c.id])
    finally:
        store.close()
    _write_coverage(db, covered, coverage_json, coverage_html, out)
    return 1 if bad else 0


def _write_coverage(db, covered: dict, json_path, html_path, out) -> None:
    meta = {"database": str(db), "campaigns": ", ".join(covered)}
    if json_path:
        print(f"coverage JSON: {write_json(json_path, covered, meta)}", file=out)
    if html_path:
        print(f"coverage page: {write_html(html_path, covered, f'campaign coverage: {db}', meta)}", file=out)


def _one(store: Store, c, out, covered: CampaignCoverage) -> int:
    print(c.describe(), file=out)
    live = store.running(c.id)
    for r in store.runs(c.id):
        state = r["outcome"] or ("running" if live else "ended without a word (killed): RESUME=1 continues it")
        print(f"  run: {r['workers']} worker(s) on {r['scheduler']}, {r['blocks'] or 0:,} block(s), {state}", file=out)
    rows = store.per_instruction(c.id)
    problems = store.problems(c.id)
    print(HEADER, file=out)
    bad = 0
    firsts = []
    for arch, name in c.instructions:
        row = rows.get((arch, name))
        mine = [p for p in problems if (p["arch"], p["instr"]) == (arch, name)]
        v = verdict(c, row, mine)
        bad += v != "ok"
        blocks = f"{row['blocks'] if row else 0:,}/{c.blocks:,}"
        vectors = row["vectors"] if row else 0
        mism = row["mismatches"] if row else 0
        rate = vectors / row["busy_s"] if row and row["busy_s"] else 0.0
        note = f": {mine[-1]['message'][:100]}" if mine and v in ("ERROR", "unavailable") else ""
        print(f"{arch:13s} {name:42s} {blocks:>11s} {vectors:13,d} {mism:9,d} {rate:11,.0f}  {v}{note}", file=out)
        if v == "MISMATCH":
            firsts.append((arch, name, store.first_failure(c.id, arch, name)))
    total = sum(r["vectors"] for r in rows.values())
    print(f"{len(c.instructions)} instruction(s), {total:,} dot-adds compared, "
          f"{sum(r['mismatches'] for r in rows.values()):,} mismatches; {bad} not ok", file=out)
    for line in covered.lines({key: row["blocks"] for key, row in rows.items()}):
        print(line, file=out)
    for arch, name, f in firsts:
        print(f"first failure of {arch} {name}: block {f['block']}, vector #{f['index']}: "
              f"got {f['got']:#x}, golden {f['expected']:#x}\n  replay: python -m campaign replay {f['replay']}",
              file=out)
    return bad
