"""``python -m fpga records --table``: the records of ``fpga/toolchain/records.toml`` as a Markdown table.

The table in ``docs/fpga/README.md`` ("Records") is this command's output, between the markers
:data:`BEGIN` and :data:`END`; ``--from-build`` and ``--update`` rewrite it (:func:`rewrite_docs`)
and ``tests/fpga/test_fpga_records.py`` checks that it still is the manifest's, so the numbers a
reader sees cannot drift from it.  Nothing is built: it reads the manifest only.
"""

from __future__ import annotations

from pathlib import Path

from .records import FAST_DOMAIN, SYNC_DOMAIN, BuildRecord

__all__ = ["BEGIN", "END", "markdown", "algorithm", "built_as", "docs_block", "rewrite_docs"]

BEGIN = "<!-- records table: python -m fpga records --table (tests check it is the manifest's) -->"
END = "<!-- end of records table -->"

_DOMAIN_ORDER = (FAST_DOMAIN, SYNC_DOMAIN)


def algorithm(record: BuildRecord) -> str:
    """The instruction's algorithm (``golden``'s catalog), or ``?`` for one the catalog lacks."""
    import golden
    try:
        return golden.lookup(record.arch, record.instr).algorithm
    except LookupError:
        return "?"


def built_as(record: BuildRecord) -> str:
    """``board top, self-test, two clock domains`` / ``the unit alone behind an LFSR``, and the board."""
    res = record.result
    if record.standin:
        what = "the unit alone behind an LFSR (`--standin`)"
    else:
        what = "board top" + (", self-test" if res and res.selftest else "") \
            + (", two clock domains" if res and res.two_domains else ", one clock domain")
    return what + ("" if record.board == "ulx3s-85f" else f", {record.board}")


def _domains(values: dict[str, float], fmt: str) -> str:
    keys = sorted(values, key=lambda d: (_DOMAIN_ORDER.index(d) if d in _DOMAIN_ORDER else 9, d))
    return ", ".join(f"{d} {format(values[d], fmt)}" for d in keys)


def markdown(records: list[BuildRecord]) -> str:
    """One line per record: what was built, at which clocks, what it reached, and from which commit."""
    lines = ["| record | algorithm | built as | clocks (MHz) | Fmax (MHz) | LUT4 | FF | DSP | EBR | verdict | commit |",
             "|---|---|---|---|---|---:|---:|---:|---:|---|---|"]
    for r in records:
        res = r.result
        if res is None:
            lines.append(f"| {r.name} | {algorithm(r)} | {built_as(r)} | | | | | | | no result | |")
            continue
        clocks = _domains({d: round(mhz, 2) for d, mhz in res.clocks.items()}, "g")
        lines.append(f"| {r.name} | {algorithm(r)} | {built_as(r)} | {clocks} | {_domains(res.fmax, '.2f')} | "
                     f"{res.lut4:,} | {res.ff:,} | {res.dsp} | {res.ebr} | {res.verdict} | {res.commit} |")
    return "\n".join(lines) + "\n"


def docs_block(text: str) -> str:
    """The table between :data:`BEGIN` and :data:`END` in ``text`` (a document), without the markers;
    ValueError when the markers are missing."""
    try:
        start = text.index(BEGIN) + len(BEGIN)
        end = text.index(END, start)
    except ValueError:
        raise ValueError(f"the document has no records table between {BEGIN!r} and {END!r}") from None
    return text[start:end].strip("\n") + "\n"


def rewrite_docs(records: list[BuildRecord], manifest: Path | str) -> Path | None:
    """Rewrite the records table of ``manifest``'s README: ``docs/fpga/README.md`` for the package's
    manifest (``records.toml`` beside this module), else the ``README.md`` beside ``manifest``; the
    README's path, or None when there is no README with the markers there (a manifest of one's own)."""
    from .records import RECORDS_README
    packaged = Path(manifest).resolve() == Path(__file__).with_name("records.toml").resolve()   # not a stand-in
    readme = RECORDS_README if packaged else Path(manifest).with_name("README.md")
    if not readme.is_file():
        return None
    text = readme.read_text()
    try:
        old = docs_block(text)
    except ValueError:
        return None
    new = markdown(records)
    if new != old:
        readme.write_text(text.replace(f"{BEGIN}\n{old}{END}", f"{BEGIN}\n{new}{END}", 1))
    return readme
