"""golden.cover.report: the HTML page, JSON, JUnit properties and text table of a measured coverage.

The page is also rendered in headless Chromium (Debian's ``chromium``), which must show the summary
line, a hole marked as one and an unreachable bin with its reason; that test is skipped only where
Chromium is not installed.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest

import golden
from golden.cover import report
from golden.cover.model import Coverage
from golden.coverage import measure
from golden.vectors import random_operands


def _made_up() -> Coverage:
    """A coverage of two points: a hit bin, a hole, an unreachable bin (its reason needs escaping)."""
    bins = {"sign.positive": "the result is positive", "sign.negative": "the result is negative",
            "sign.nan": "the result is a NaN", "width.narrow": "a <narrow> operand"}
    return Coverage("hopper HGMMA.64xNx16.F32", bins,
                    {"sign.positive": 1500, "sign.negative": 0, "sign.nan": 0, "width.narrow": 7},
                    {"sign.nan": "NaN results are never made by <this> & that"}, dot_adds=1507, offered=1507,
                    points={"sign": "the sign of the result", "width": "operand widths"})


def test_bins_are_grouped_by_point_and_sorted_by_hits():
    cov = _made_up()
    groups = report.points_of(cov)
    assert [g[0] for g in groups] == ["sign", "width"]
    assert groups[0][2] == ["sign.positive", "sign.negative", "sign.nan"]        # unreachable last
    assert [report.bin_state(cov, b) for b in groups[0][2]] == ["hit", "hole", "unreachable"]


def test_the_page_is_self_contained_and_says_everything():
    cov = _made_up()
    page = report.html_page([cov], "make coverage", {"seed": 1, "vectors": "mixed"})
    assert cov.summary() == "coverage: 2 of 3 reachable bins hit (1 unreachable)"
    assert cov.summary() in page and "the sign of the result" in page and "the result is positive" in page
    assert "&lt;this&gt; &amp; that" in page and "a &lt;narrow&gt; operand" in page       # escaped
    assert re.search(r'<tr class="hole" id="sign.negative">.*?HOLE', page)
    assert "<script" not in page and not re.search(r'(src|href)="(https?:)?//', page)
    assert "1,507 dot-adds measured" in page and "seed" in page
    HTMLParser().feed(page)                                              # parses


def test_a_sample_says_its_size():
    cov = _made_up()
    cov.offered = 1_000_000
    line = report.measured_line(cov)
    assert "sample of 1,507 of the 1,000,000 dot-adds" in line and html.escape(line) in report.html_page(cov, "t")


def test_json_junit_and_text():
    cov = _made_up()
    doc = report.json_document([cov], {"seed": 3})
    assert doc["meta"] == {"seed": 3}
    assert Coverage.from_dict(json.loads(json.dumps(doc))["coverage"][0]) == cov
    props = dict(report.junit_properties(cov))
    assert props == {"coverage.hopper.HGMMA.64xNx16.F32.hit": "2", "coverage.hopper.HGMMA.64xNx16.F32.reachable": "3",
                     "coverage.hopper.HGMMA.64xNx16.F32.unreachable": "1",
                     "coverage.hopper.HGMMA.64xNx16.F32.holes": "sign.negative"}
    text = report.text_table(cov)
    assert text.splitlines()[0] == f"hopper HGMMA.64xNx16.F32: {cov.summary()}"
    assert re.search(r"negative +0  HOLE", text) and "unreachable (nan): NaN results are never made" in text


def test_a_measured_coverage_reports_every_bin(tmp_path):
    """The instruction's own cover points (whatever they are): every bin on the page, the files written."""
    ins = golden.lookup("hopper", "HGMMA.64xNx16.F32")
    cov = measure(ins, *random_operands(ins, 300, np.random.default_rng(5), "mixed"))
    page, doc = report.write_reports([cov, cov], tmp_path / "run", "two", {"n": 300})
    text = page.read_text()
    assert all(f'id="{b}"' in text for b in cov.bins) and text.count(cov.summary()) >= 2
    assert json.loads(doc.read_text())["coverage"][1]["summary"] == cov.summary()


# ---- in a browser --------------------------------------------------------------------------------------

def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no headless Chromium here (Debian: apt-get install chromium)")


class _Rows(HTMLParser):
    """The text of each table row of a rendered DOM, with the row's class."""

    def __init__(self):
        super().__init__()
        self.rows, self.text, self._row = [], [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self._row = [dict(attrs).get("class", ""), ""]

    def handle_endtag(self, tag):
        if tag == "tr" and self._row:
            self.rows.append(tuple(self._row))
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._row:
            self._row[1] += data


def test_the_page_renders_in_headless_chromium(tmp_path):
    browser = _chromium()
    page, _ = report.write_reports([_made_up()], tmp_path, "make coverage", {"seed": 1})
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=60)
    assert dom.returncode == 0, dom.stderr[-2000:]
    rows = _Rows()
    rows.feed(dom.stdout)
    assert "coverage: 2 of 3 reachable bins hit (1 unreachable)" in "".join(rows.text)
    assert ("hole", "negativeHOLE0the result is negative") in rows.rows, rows.rows
    unreachable = [text for cls, text in rows.rows if cls == "unreachable"]
    assert unreachable and "unreachable: NaN results are never made by <this> & that" in unreachable[0]
    shot = tmp_path / "page.png"
    subprocess.run(flags + ["--window-size=1200,700", f"--screenshot={shot}", page.as_uri()], capture_output=True,
                   timeout=60)
    assert shot.exists() and shot.stat().st_size > 5000                # a picture, not a blank page
