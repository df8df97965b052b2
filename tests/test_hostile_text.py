"""Hostile text never becomes markup (issue 41, item 2): ids, review notes and file names holding HTML, URLs
and Markdown, planted in every field that reaches a page, are shown as text on every page auditkit renders (the
nightly job's notebooks, its report.html, `report --html`): no tag, attribute, script or link made from them."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_job import run_folders, write_job

from auditkit.cli import main
from auditkit.reviews import add_reviews
from auditkit.store import Store

pytest.importorskip("papermill")
pytest.importorskip("nbconvert")

TABLES = {"BAC-01": "<svg onload=alert(8)>", "BAC-02": "https://evil.example/t", "BAC-03": "T&lt;3&gt;",
          "BAC-04": "[t4](javascript:alert(2))"}
DEALERS = ("<img src=x onerror=alert(9)>", "www.evil.example")
ROUND = '"><script>alert(7)</script>'
SHOE = "javascript:alert(6)//"
NOTE = "<img src=x onerror=alert(5)> see https://evil.example/n and [here](javascript:alert(3)) **bold**"
FILE = "<b onmouseover=alert(4)>.jsonl"
MARKERS = ("alert(", "evil.example", "javascript:")
LIVE = {"href", "xlink:href", "src", "srcset", "srcdoc", "action", "formaction", "data", "style", "content"}


def _hostile_log(path: Path, seed: int, prefix: str) -> None:
    raw = path.parent.parent / f"sim-{seed}.jsonl"
    assert main(["-q", "simulate", "baccarat", "--rounds", "400", "--fault-rate", "0.1", "--seed", str(seed),
                 "--out", str(raw)]) == 0
    lines = []
    for r in map(json.loads, raw.read_text("utf-8").splitlines()):
        r["dealer_id"] = DEALERS[r["table_id"] in ("BAC-02", "BAC-04")]
        r["round_id"] = ROUND + prefix + r["round_id"]
        r["shoe_id"] = SHOE + prefix + r["shoe_id"]
        r["table_id"] = TABLES[r["table_id"]]
        lines.append(json.dumps(r, default=str) + "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), "utf-8")


class _Page(HTMLParser):
    """Every start tag with its attributes, and the text of each script."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.text.append(data)


def _no_live_markup(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text("utf-8"))
    for tag, attrs in page.tags:
        for name, value in attrs:  # planted text may be an attribute's quoted value (an SVG's aria-label), never
            live = name.startswith("on") or name in LIVE  # a handler, a link, a source or a style
            assert not (live and any(m in (value or "") for m in MARKERS)), (path.name, tag, name, value)
            assert not any(m in name for m in MARKERS), (path.name, tag, name)
        assert tag not in ("svg", "img", "b", "script") or not any(n.startswith("on") for n, _ in attrs), (path, tag)
    for script in page.scripts:
        if any(m in script for m in MARKERS):  # the data of a chart only, every < > & of it a JSON escape
            assert script.startswith("vegaEmbed(") and not re.search(r"[<>&]", script.split("{", 1)[1]), path
            spec = json.loads(script[script.index("{"):script.rindex(', {"actions"')])
            _no_links_in_chart(spec, path)
    return page


def _no_links_in_chart(spec: object, path: Path) -> None:
    """No chart makes a link (an ``href`` channel) or a tooltip image (vega-tooltip's ``image`` key)."""
    if isinstance(spec, dict):
        assert "href" not in spec.get("encoding", {}), path
        tips = spec.get("encoding", {}).get("tooltip", [])
        for t in tips if isinstance(tips, list) else [tips]:
            assert isinstance(t, dict) and t.get("title", t.get("field")) not in ("image", "title"), (path, t)
        for v in spec.values():
            _no_links_in_chart(v, path)
    elif isinstance(spec, list):
        for v in spec:
            _no_links_in_chart(v, path)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    _hostile_log(tmp / "logs" / FILE, 11, "a")
    job = write_job(tmp, notebooks=False)
    assert main(["-q", "run", str(job)]) == 1
    store = Store(tmp / "store")
    found = store.findings(None, None, None)
    add_reviews(store, [{"round_id": r, "rule_id": k, "status": "explained", "note": NOTE}
                        for r, k in zip(found["round_id"], found["rule_id"], strict=True)], by=DEALERS[0])
    _hostile_log(tmp / "logs" / "second.jsonl", 12, "b")  # new rounds on the same day: the pages are rendered again
    job = write_job(tmp, notebooks=["01_overview", "02_payout_discrepancies", "03_expected_vs_observed", "10_baccarat"])
    assert main(["-q", "run", str(job)]) == 1
    assert main(["-q", "report", "--store", str(tmp / "store"), "--out", str(tmp / "r.csv"),
                 "--html", str(tmp / "report.html")]) == 0
    out = sorted(p for p in [tmp / "report.html", *(tmp / "reports").rglob("*.html")])
    names = {p.name for p in out}
    assert {"01_overview.html", "02_payout_discrepancies.html", "03_expected_vs_observed.html", "10_baccarat.html",
            "report.html"} <= names, names
    assert len(run_folders(tmp / "reports")) == 2
    return out


def test_no_page_holds_live_markup_made_from_a_log_a_note_or_a_file_name(pages):
    for path in pages:
        _no_live_markup(path)


def test_the_hostile_text_is_on_the_pages_as_text(pages):
    """The planted text reaches the pages (so the test above looked at it), shown as written."""
    by_name = {}
    for path in pages:
        by_name.setdefault(path.name, []).append(" ".join(_no_live_markup(path).text))
    overview = by_name["01_overview.html"][0]
    assert "Worst dealers" in overview and DEALERS[0] in overview and TABLES["BAC-01"] in overview
    assert TABLES["BAC-02"] in overview and TABLES["BAC-04"] in overview  # a URL and a Markdown link, as text
    game = by_name["10_baccarat.html"][0]
    assert TABLES["BAC-03"] in game  # an entity written in a log is shown as written, not decoded
    assert NOTE in game and ROUND in game and FILE in game  # the notes, ids and file names of the drill-down
    assert all(ROUND in text and DEALERS[0] in text for text in by_name["report.html"])


def test_a_saved_chart_page_or_svg_holds_no_live_markup(tmp_path):
    """`charts.save_chart` to .html wrote log text into vl-convert's script raw (`</script><img ...>` ended it)."""
    import altair as alt
    import pandas as pd

    from auditkit.charts import save_chart

    rows = pd.DataFrame({"table_id": ["</script><img src=x onerror=alert(1)>", "<!--<script>", TABLES["BAC-02"]],
                         "findings": [1, 2, 3]})
    chart = alt.Chart(rows, title=DEALERS[0]).mark_bar().encode(x="table_id:N", y="findings:Q", tooltip=["table_id:N"])
    for suffix in (".html", ".svg"):
        page = _no_live_markup(save_chart(chart, tmp_path / f"c{suffix}"))
        if suffix == ".html":
            assert len(page.scripts) == 2 and page.scripts[1].startswith("vegaEmbed(")  # the bundle, then the chart
