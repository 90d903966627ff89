"""Reports of measured coverage: an HTML page, JSON, JUnit properties and a text table.

Each function takes a :class:`golden.cover.model.Coverage` (or a list of them, one per instruction of
a run) and says the same things: the summary line, each cover point with its description, its bins
sorted by hits, the holes (reachable bins no dot-add hit), the unreachable bins with their reasons,
and how many dot-adds were measured of those the run checked.

:func:`html_page` is one self-contained page (inline CSS, no script, no external resource): a
browser, a CI artefact viewer or a mail attachment shows it as it is.  :func:`write_reports` writes it
beside the JSON document (:func:`json_document`).
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

from .model import Coverage

__all__ = ["bin_state", "points_of", "measured_line", "text_table", "junit_properties", "json_document",
           "html_page", "write_reports", "HTML_NAME", "JSON_NAME"]

HTML_NAME = "coverage.html"
JSON_NAME = "coverage.json"
HIT, HOLE, UNREACHABLE = "hit", "hole", "unreachable"


def bin_state(cov: Coverage, name: str) -> str:
    """``"hit"``, ``"hole"`` (reachable, no hits) or ``"unreachable"`` for the bin ``name`` of ``cov``."""
    if name in cov.unreachable:
        return UNREACHABLE
    return HIT if cov.hits.get(name, 0) > 0 else HOLE


def _point_of(name: str, points) -> str:
    """The point a full bin name ``"point.bin"`` belongs to: the longest known point name that prefixes it."""
    known = [p for p in points if name.startswith(p + ".")]
    return max(known, key=len) if known else name.split(".", 1)[0]


def points_of(cov: Coverage) -> list[tuple[str, str, list[str]]]:
    """``[(point, description, [full bin names])]`` in the model's order, each point's bins sorted for a
    report: reachable bins by hits (most first), then the unreachable ones."""
    groups: dict[str, list[str]] = {p: [] for p in cov.points}
    for name in cov.bins:
        groups.setdefault(_point_of(name, cov.points), []).append(name)
    order = {name: i for i, name in enumerate(cov.bins)}

    def rank(name):
        return (name in cov.unreachable, -cov.hits.get(name, 0), order[name])
    return [(p, cov.points.get(p, ""), sorted(names, key=rank)) for p, names in groups.items() if names]


def measured_line(cov: Coverage) -> str:
    """How many dot-adds were measured: all the run checked, or a sample of a stated size."""
    if cov.offered > cov.dot_adds:
        return (f"a sample of {cov.dot_adds:,} of the {cov.offered:,} dot-adds checked was measured "
                f"(hit counts are the sample's)")
    return f"{cov.dot_adds:,} dot-adds measured (every one the run checked)"


def _short_name(cov: Coverage, point: str, name: str) -> str:
    return name[len(point) + 1:] if name.startswith(point + ".") else name


# ---- terminals ----------------------------------------------------------------------------------------

def text_table(cov: Coverage, width: int = 110) -> str:
    """A short table for a terminal: the summary line, then each point's reachable bins with their hits
    (holes marked ``HOLE``) and its unreachable bins as one line per reason."""
    bin_w = min(max([len(_short_name(cov, p, b)) for p, _, names in points_of(cov) for b in names] + [3]), 44)
    lines = [f"{cov.instruction}: {cov.summary()}", f"  {measured_line(cov)}"]
    for point, _, names in points_of(cov):
        reachable = [b for b in names if b not in cov.unreachable]
        reasons: dict[str, list[str]] = {}
        for full in (b for b in names if b in cov.unreachable):
            reasons.setdefault(cov.unreachable[full], []).append(_short_name(cov, point, full))
        if not reachable and len(reasons) == 1:
            (why, short), = reasons.items()
            lines.append(f"  {point}: unreachable ({', '.join(short) if len(short) <= 3 else 'all'}): {why}")
            continue
        lines.append(f"  {point}")
        for full in reachable:
            hole = "  HOLE" if bin_state(cov, full) == HOLE else ""
            lines.append(f"    {_short_name(cov, point, full):{bin_w}s} {cov.hits.get(full, 0):12,d}{hole}")
        for why, short in reasons.items():
            which = ", ".join(short) if len(short) <= 3 else f"{len(short)} bins"
            lines.append(f"    unreachable ({which}): {why}")
    lines += [f"  {point}: not applicable: {why}" for point, why in cov.inapplicable.items()]
    return "\n".join(line if len(line) <= width else line[:width - 3] + "..." for line in lines)


# ---- CI -----------------------------------------------------------------------------------------------

def junit_properties(cov: Coverage, label: str | None = None) -> list[tuple[str, str]]:
    """``[(name, value)]`` for a JUnit ``<properties>``: ``coverage.<label>.hit``, ``.reachable``,
    ``.unreachable`` (counts) and ``.holes`` (the missed bins, comma-separated; empty when closed).
    ``label``: default the instruction, its space as a dot (``hopper.HGMMA.64xNx16.F32``)."""
    key = f"coverage.{label or cov.instruction.replace(' ', '.')}"
    return [(f"{key}.hit", str(len(cov.hit()))), (f"{key}.reachable", str(len(cov.reachable()))),
            (f"{key}.unreachable", str(len(cov.unreachable))), (f"{key}.holes", ",".join(cov.missed()))]


def json_document(coverages, meta: dict | None = None) -> dict:
    """``{"meta": ..., "coverage": [Coverage.to_dict(), ...]}``: what :func:`write_reports` saves as JSON
    (``Coverage.from_dict`` reads each entry back)."""
    return {"meta": dict(meta or {}), "coverage": [c.to_dict() for c in coverages]}


# ---- the HTML page ------------------------------------------------------------------------------------

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2430; margin: 24px auto;
       max-width: 1100px; padding: 0 16px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 6px; } h2 { font-size: 18px; margin: 28px 0 4px; }
h3 { font-size: 15px; margin: 18px 0 2px; font-family: ui-monospace, Menlo, Consolas, monospace; }
.meta { color: #566; margin: 0 0 14px; } .meta span { margin-right: 18px; white-space: nowrap; }
.summary { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 15px; padding: 6px 10px;
           border-radius: 4px; display: inline-block; margin: 4px 0; }
.closed { background: #e6f4ea; border: 1px solid #9cd3ab; } .open { background: #fdecea; border: 1px solid #f1a9a0; }
.measured, .pdesc { color: #566; margin: 2px 0 6px; }
.holes { color: #a1251b; margin: 4px 0; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 10px; }
table.bins { table-layout: fixed; } col.c-bin { width: 24%; } col.c-state { width: 9%; }
col.c-hits { width: 10%; } col.c-bar { width: 18%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #e3e7ee; vertical-align: top; }
th { font-weight: 600; color: #445; background: #f5f7fa; }
td.bin { font-family: ui-monospace, Menlo, Consolas, monospace; white-space: nowrap; }
td.hits, th.hits { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.bin { overflow-wrap: anywhere; white-space: normal; }
.bar { margin-top: 4px; height: 10px; background: #3b7dd8; border-radius: 2px; min-width: 1px; }
tr.hole td { background: #fdecea; } tr.hole td.bin { color: #a1251b; font-weight: 600; }
.badge { font-size: 11px; font-weight: 700; padding: 1px 6px; border-radius: 3px; white-space: nowrap; }
.badge.hole { background: #c5221f; color: #fff; } .badge.hit { background: #e6f4ea; color: #1e6b34; }
.badge.unreachable { background: #e8eaed; color: #5f6368; }
tr.unreachable td { color: #8a9099; background: #fafafa; } .reason { font-style: italic; }
ul.inapplicable { color: #8a9099; }
.index td { font-family: ui-monospace, Menlo, Consolas, monospace; }
.legend { color: #566; font-size: 12px; }
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _anchor(cov: Coverage) -> str:
    return "ins-" + "".join(ch if ch.isalnum() else "-" for ch in cov.instruction)


def _bar(hits: int, most: int) -> str:
    """A bar on a log scale (counts span 1 to millions: a rare bin stays visible)."""
    if hits <= 0 or most <= 0:
        return ""
    width = 100.0 * math.log10(1 + hits) / math.log10(1 + most)
    return f'<div class="bar" style="width:{width:.1f}%"></div>'


def _bin_row(cov: Coverage, point: str, full: str, most: int) -> str:
    state = bin_state(cov, full)
    hits = cov.hits.get(full, 0)
    desc = _e(cov.bins.get(full, ""))
    if state == UNREACHABLE:
        desc += f'<br><span class="reason">unreachable: {_e(cov.unreachable[full])}</span>'
    label = {HIT: "hit", HOLE: "HOLE", UNREACHABLE: "unreachable"}[state]
    return (f'<tr class="{state}" id="{_e(full)}"><td class="bin">{_e(_short_name(cov, point, full))}</td>'
            f'<td><span class="badge {state}">{label}</span></td><td class="hits">{hits:,}</td>'
            f'<td>{_bar(hits, most) if state != UNREACHABLE else ""}</td><td>{desc}</td></tr>')


def _instruction_section(cov: Coverage) -> str:
    most = max([cov.hits.get(b, 0) for b in cov.reachable()] + [0])
    state = "closed" if cov.closed() else "open"
    out = [f'<section id="{_anchor(cov)}"><h2>{_e(cov.instruction)}</h2>',
           f'<div class="summary {state}">{_e(cov.summary())}</div>',
           f'<p class="measured">{_e(measured_line(cov))}</p>']
    if cov.missed():
        out.append(f'<p class="holes"><b>{len(cov.missed())} hole(s)</b> (reachable, not hit): '
                   + ", ".join(f'<a href="#{_e(b)}"><code>{_e(b)}</code></a>' for b in cov.missed()) + "</p>")
    for point, description, names in points_of(cov):
        out.append(f"<h3>{_e(point)}</h3>")
        if description:
            out.append(f'<p class="pdesc">{_e(description)}</p>')
        out.append('<table class="bins"><colgroup><col class="c-bin"><col class="c-state"><col class="c-hits">'
                   '<col class="c-bar"><col></colgroup><tr><th>bin</th><th>state</th><th class="hits">hits</th>'
                   "<th>hits (log scale)</th><th>what it means</th></tr>")
        out.extend(_bin_row(cov, point, full, most) for full in names)
        out.append("</table>")
    if cov.inapplicable:
        out.append('<h3>not applicable</h3><ul class="inapplicable">' + "".join(
            f"<li><code>{_e(p)}</code>: {_e(why)}</li>" for p, why in cov.inapplicable.items()) + "</ul>")
    out.append("</section>")
    return "\n".join(out)


def _index(coverages) -> str:
    rows = "".join(f'<tr><td><a href="#{_anchor(c)}">{_e(c.instruction)}</a></td><td>{len(c.hit())}/'
                   f'{len(c.reachable())}</td><td>{len(c.missed())}</td><td>{len(c.unreachable)}</td></tr>'
                   for c in coverages)
    return ('<table class="index"><tr><th>instruction</th><th>bins hit</th><th>holes</th><th>unreachable</th></tr>'
            f"{rows}</table>")


def html_page(coverages, title: str, meta: dict | None = None) -> str:
    """One self-contained HTML page of a run's coverage, an instruction per section.

    Parameters
    ----------
    coverages : Coverage or list of Coverage
        One per instruction of the run.
    title : str
        The page's heading (e.g. the command that ran).
    meta : dict, optional
        The run's facts (seed, vectors, unit, date...), shown under the title.

    Returns
    -------
    str
        The page: inline CSS, no script, no external resource.
    """
    coverages = [coverages] if isinstance(coverages, Coverage) else list(coverages)
    facts = "".join(f"<span><b>{_e(k)}</b>: {_e(v)}</span>" for k, v in (meta or {}).items())
    body = [f"<h1>{_e(title)}</h1>", f'<p class="meta">{facts}</p>' if facts else ""]
    if len(coverages) > 1:
        body.append(_index(coverages))
    if not coverages:
        body.append("<p>No coverage was measured.</p>")
    body.extend(_instruction_section(c) for c in coverages)
    body.append('<p class="legend">A hole is a reachable bin no measured dot-add hit; an unreachable bin is one the '
                "instruction can never hit (greyed, with the reason). Bars are hits on a log scale, relative to "
                "the instruction's most-hit bin.</p>")
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n" + "\n".join(body)
            + "\n</body></html>\n")


def write_reports(coverages, folder, title: str, meta: dict | None = None) -> tuple[Path, Path]:
    """Write :data:`HTML_NAME` (:func:`html_page`) and :data:`JSON_NAME` (:func:`json_document`) into
    ``folder`` (made when missing); returns their paths."""
    coverages = [coverages] if isinstance(coverages, Coverage) else list(coverages)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    page, doc = folder / HTML_NAME, folder / JSON_NAME
    page.write_text(html_page(coverages, title, meta), encoding="utf-8")
    doc.write_text(json.dumps(json_document(coverages, meta), indent=1) + "\n", encoding="utf-8")
    return page, doc
