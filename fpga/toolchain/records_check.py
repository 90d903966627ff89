"""``python -m fpga records``: rebuild the records of ``fpga/toolchain/records.toml`` and say what moved.

Each record (:mod:`fpga.toolchain.records`) is rebuilt with :func:`fpga.toolchain.builds.build_board` (its progress
lines on stderr, an unchanged design reused), read back as a record (:func:`fpga.toolchain.records.record_from_build`)
and compared with the record (:func:`fpga.toolchain.records.compare`, :data:`fpga.toolchain.records.NOISE`); a table of
record against now goes to stdout (and ``--report FILE``, Markdown).  ``--update`` writes the new
results into the manifest; ``--from-build FOLDER`` adds the record of a build made elsewhere.
Exit status 0 when nothing moved, 1 when something did (or a rebuild failed), 2 on bad input.
"""

from __future__ import annotations

import fnmatch
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from .records import (
    ERROR,
    NOISE,
    RESOURCE_KEYS,
    BuildRecord,
    RecordError,
    Result,
    compare,
    dump,
    load,
    record_from_build,
    record_from_log,
)

__all__ = ["Row", "select", "rebuild", "recheck", "table", "main"]


@dataclass
class Row:
    """One record re-checked: the record, what its rebuild gave, what moved."""

    record: BuildRecord
    now: Result
    moved: list[str]


def select(records: list[BuildRecord], patterns: list[str] | None) -> list[BuildRecord]:
    """The records whose name matches one of ``patterns`` (shell wildcards, or a part of the name);
    RecordError naming the valid names when a pattern matches none."""
    if not patterns:
        return list(records)
    chosen = []
    for pattern in patterns:
        hits = [r for r in records if fnmatch.fnmatchcase(r.name, pattern) or pattern in r.name]
        if not hits:
            names = ", ".join(r.name for r in records) or "none"
            raise RecordError(f"--only {pattern!r} matches no record; the records: {names}")
        chosen += [r for r in hits if r not in chosen]
    return chosen


def rebuild(record: BuildRecord) -> Result:
    """Build ``record``'s request now (reusing an unchanged build) and read the result; a build
    that fails is a result with verdict ERROR, its one-line reason in ``source``."""
    from . import builds
    from .build import BuildError
    try:
        report, _ = builds.build_board(builds.BuildRequest(**record.request()), standin=record.standin)
        return record_from_build(report.build_dir, record).result
    except (BuildError, ValueError, LookupError) as e:
        return Result(verdict=ERROR, lut4=0, ff=0, dsp=0, ebr=0, fmax={}, clocks={}, selftest=False,
                      two_domains=False, source=str(e))


def _folder_key(record: BuildRecord) -> tuple:
    """Records that share a build folder (they differ only in Yosys; builds before seeds had folders of their
    own shared one across seeds too) are built one after another."""
    return (record.board, record.arch, record.instr, record.pipeline, record.clock_mhz, record.lanes,
            record.multipliers, record.standin)


def recheck(records: list[BuildRecord], jobs: int = 1, build=None) -> list[Row]:
    """Rebuild each record (``jobs`` builds at a time; ``build``: default :func:`rebuild`) and compare;
    the rows in the records' order."""
    build = build or rebuild
    groups: dict[tuple, list[BuildRecord]] = {}
    for record in records:
        groups.setdefault(_folder_key(record), []).append(record)

    def run(group):
        return [(record, build(record)) for record in group]

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = dict(pair for found in pool.map(run, groups.values()) for pair in
                    ((id(record), result) for record, result in found))
    rows = []
    for record in records:
        now = done[id(record)]
        moved = compare(record.result, now) if record.result else ["no recorded result"]
        rows.append(Row(record, now, moved))
    return rows


def _cell(before, now, fmt) -> str:
    if before is None:
        return fmt(now) if now is not None else ""
    if now is None or now == before:
        return fmt(before) if now is not None else f"{fmt(before)} -> ?"
    return f"{fmt(before)} -> {fmt(now)}"


def table(rows: list[Row]) -> str:
    """Record against now, one line per record, Markdown."""
    lines = ["| record | LUT4 | FF | DSP | EBR | Fmax (MHz) | verdict | moved beyond the noise |",
             "|---|---:|---:|---:|---:|---|---|---|"]
    for row in rows:
        old, now = row.record.result, row.now
        failed = now.verdict == ERROR
        cells = [_cell(getattr(old, k) if old else None, None if failed else getattr(now, k), "{:,}".format)
                 for k in RESOURCE_KEYS]
        domains = sorted(set(old.fmax if old else {}) | set(now.fmax))
        fmax = ", ".join(f"{d} " + _cell((old.fmax.get(d) if old else None), now.fmax.get(d), "{:.2f}".format)
                         for d in domains)
        verdict = _cell(old.verdict if old else None, now.verdict, str)
        said = "; ".join(row.moved) + (f" ({now.source})" if failed else "") or "-"
        lines.append(f"| {row.record.name} | {' | '.join(cells)} | {fmax} | {verdict} | {said} |")
    return "\n".join(lines) + "\n"


def _updated(manifest: list[BuildRecord], rows: list[Row]) -> list[BuildRecord]:
    """The manifest with the rebuilt results in place of the recorded ones (failed rebuilds keep theirs)."""
    new = {row.record.name: row.now for row in rows if row.now.verdict != ERROR}
    return [replace(r, result=new.get(r.name, r.result)) for r in manifest]


def add_builds(manifest: list[BuildRecord], folders: list[str], commit: str | None) -> list[BuildRecord]:
    """The manifest with the records of finished build ``folders`` (one of the same name replaced); a
    file instead of a folder is a build log kept in docs/fpga/ (:func:`fpga.toolchain.records.record_from_log`)."""
    records = list(manifest)
    for folder in folders:
        if Path(folder).is_file() and Path(folder).name in ("report.json", "top.report.json"):
            folder = str(Path(folder).parent)            # a build's report: its folder is the build
        if Path(folder).is_file():
            record = record_from_log(folder)
        elif Path(folder).is_dir():
            record = record_from_build(folder, commit=commit)
        else:
            raise RecordError(f"--from-build {folder}: no such build folder or build log")
        records = [r for r in records if r.name != record.name]
        records.append(record)
        res = record.result
        print(f"{record.name}: {res.verdict}, " + ", ".join(f"{d} {mhz:.2f} MHz" for d, mhz in res.fmax.items())
              + f", {res.lut4:,} LUT4 ({Path(folder)})")
    return records


def _docs_note(manifest: list[BuildRecord], path: Path) -> str:
    """Rewrite the docs' table of the records beside ``path`` (fpga.toolchain.records_table); what was rewritten."""
    from .records_table import rewrite_docs
    readme = rewrite_docs(manifest, path)
    return f" and its table in {readme}" if readme else ""


def main(args) -> int:
    """``python -m fpga records`` (the parser's namespace: manifest, only, jobs, report, update,
    from_build, commit, table)."""
    path = Path(args.manifest)
    manifest = load(path)
    if args.from_build:
        manifest = add_builds(manifest, args.from_build, args.commit)
        dump(manifest, path)
        print(f"wrote {path}" + _docs_note(manifest, path))
        return 0
    if not manifest:
        raise RecordError(f"{path}: no records (python -m fpga records --from-build FOLDER adds one)")
    chosen = select(manifest, args.only)
    if getattr(args, "table", False):
        from .records_table import markdown
        print(markdown(chosen), end="")
        return 0
    noise = f"placement noise: Fmax {NOISE.fmax:.0%}, resources {NOISE.resources:.0%} ({NOISE.measured})"
    print(f"re-checking {len(chosen)} record(s) of {path}: {noise}", file=sys.stderr, flush=True)
    rows = recheck(chosen, jobs=args.jobs)
    text = table(rows)
    print(text, end="")
    if args.report:
        Path(args.report).write_text(f"{noise}\n\n{text}")
    if args.update:
        manifest = _updated(manifest, rows)
        dump(manifest, path)
        print(f"updated {path}" + _docs_note(manifest, path), file=sys.stderr)
    moved = [row.record.name for row in rows if row.moved]
    print(f"{len(moved)} of {len(rows)} moved beyond the noise or changed verdict" + (f": {', '.join(moved)}"
          if moved else ""), file=sys.stderr)
    return 1 if moved else 0
