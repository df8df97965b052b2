"""A run's report as one self-contained HTML page, for readers who do not run Python (``--html``).

The page needs nothing but itself: charts are inline SVG drawn here with Vega-Lite through
``vl-convert`` (no script, no font or style from a network), the style is inline, and every text
that comes from a log is escaped. It shows what was checked (the scope and the coverage: what could
not be checked, and why), findings by severity, by day and by citation, the money involved, the
top findings, and links (relative) to the CSV and workbook beside it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .money import format_money
from .reportcontext import ReportContext
from .status import SEVERITY_RANK
from .store import atomic_path

__all__ = ["write_html_report", "cannot_draw"]

SEVERITY_COLORS = {"high": "#c0392b", "medium": "#e67e22", "low": "#7f8c8d"}
TOP = 50  # findings listed on the page (the CSV has them all)
_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.6em;margin-bottom:.2em} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.9em;margin:.5em 0} td,th{border:1px solid #ddd;padding:3px 8px;
vertical-align:top} th{background:#eef2f7;text-align:left} td.n{text-align:right;font-variant-numeric:tabular-nums}
.high{color:#c0392b;font-weight:600} .medium{color:#b35c00} .low{color:#555} .muted{color:#666}
.cards{display:flex;gap:1em;flex-wrap:wrap} .card{border:1px solid #ddd;border-radius:6px;padding:.6em 1em}
.card b{display:block;font-size:1.5em} .scope{margin:.3em 0} .filtered{background:#fff4d6;padding:.3em .6em}
.provenance{font-size:.85em;color:#444} table.who{font-size:.8em;width:100%} code{font-size:.9em}
"""


def cannot_draw() -> str | None:
    """Why the page's charts cannot be drawn here (vl-convert is not installed), or None."""
    try:
        import vl_convert  # noqa: F401
    except ImportError:
        return "vl-convert-python is not installed (pip install 'auditkit[notebooks]')"
    return None


def write_html_report(path: str | Path, findings: pd.DataFrame, *, title: str = "auditkit run report",
                      scope: Mapping[str, Any] | None = None, coverage: pd.DataFrame | None = None,
                      links: Mapping[str, str] | None = None, quarantined: int = 0,
                      context: ReportContext | None = None) -> Path:
    """Write the page for ``findings`` (the report's columns) to ``path``, atomically; ``context`` (the
    filters, the rounds behind the findings, the outcome tests, the provenance) adds who and where. The
    page's sections in order: the filters and scope, the figures, who and where, the links, what was
    checked, dealers by shift, the findings, the provenance."""
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>",
             f"<style>{_STYLE}</style></head><body><h1>{_e(title)}</h1>"]
    if context is not None:
        parts.append(_filters(context))
    if scope:
        shown = [f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v) for v in scope.values()]
        parts.append("<div class='scope'>" + " · ".join(f"{_e(k)}: <b>{_e(v)}</b>" for k, v in zip(scope, shown,
                                                                                              strict=True)) + "</div>")
    parts += _figures(findings, context.currency if context else "", quarantined)
    if context is not None and len(context.rounds):
        parts += _who_and_where(findings, context)
    if links:
        parts.append("<p>" + " · ".join(f"<a href='{_e(href)}'>{_e(name)}</a>" for name, href in links.items())
                     + "</p>")
    parts += _checked(coverage, context)
    if context is not None and len(findings) and len(context.rounds):
        parts += _dealer_shifts(findings, context)
    parts += _findings(findings, context)
    if context is not None and context.provenance:
        parts.append(_provenance(context))
    parts.append("</body></html>")
    with atomic_path(path) as tmp:
        tmp.write_text("\n".join(parts), "utf-8")
    return path


def _figures(findings: pd.DataFrame, currency: str, quarantined: int) -> list[str]:
    """The cards of the page's figures: findings in all and by severity, rounds flagged, money, quarantine."""
    from .summaries import payout_totals

    money = payout_totals(findings)
    by_severity = {s: int((findings["severity"] == s).sum()) if len(findings) else 0 for s in SEVERITY_COLORS}
    parts = ["<div class='cards'>"]
    for label, value, css in [("findings", len(findings), ""), *((s, n, s) for s, n in by_severity.items()),
                              ("rounds flagged", findings["round_id"].nunique() if len(findings) else 0, ""),
                              (f"overpaid {currency}".strip(), format_money(money["overpaid"]), ""),
                              (f"underpaid {currency}".strip(), format_money(money["underpaid"]), ""),
                              ("lines quarantined", quarantined, "")]:
        parts.append(f"<div class='card'><b class='{css}'>{_e(value)}</b>{_e(label)}</div>")
    parts.append("</div>")
    return parts


def _who_and_where(findings: pd.DataFrame, context: ReportContext) -> list[str]:
    from .analysis import MIN_ROUNDS
    from .whowhere import who_and_where

    return ["<h2>Who and where, per game</h2><p class='muted'>the worst tables and dealers by findings per "
            f"1,000 rounds, among those with {MIN_ROUNDS:,} rounds or more (<i>name: per 1,000 (findings of rounds; "
            "overpaid, underpaid)</i>); findings with money beside procedure findings (no money); outcome "
            "frequencies improbable at Holm-adjusted p &lt; 0.01</p>",
            _table(who_and_where(findings, context), css="who")]


def _checked(coverage: pd.DataFrame | None, context: ReportContext | None) -> list[str]:
    """What was checked: the checks that could not check some rounds, from the coverage table."""
    parts = ["<h2>What was checked</h2>"]
    if coverage is not None and len(coverage):
        lacking = coverage[coverage["rounds_not_checkable"] > 0]
        if len(lacking):
            parts.append("<p>Checks the data could not show for some rounds (neither flagged nor passed):</p>")
            parts.append(_table(lacking[["game", "citation", "rule_id", "rounds_checked", "rounds_not_checkable",
                                         "reasons"]]))
        else:
            parts.append("<p>Every check could check every round in scope.</p>")
    elif coverage is not None:
        parts.append("<p><b>No round in scope</b>: nothing was checked" + (" (no round matches the filters)"
                     if context is not None and context.filters else "") + ".</p>")
    else:
        parts.append("<p class='muted'>No coverage table for this run.</p>")
    return parts


def _dealer_shifts(findings: pd.DataFrame, context: ReportContext) -> list[str]:
    from .analysis import DEFAULT_SHIFTS
    from .whowhere import dealer_by_shift

    shifts = dealer_by_shift(findings, context.rounds)
    if not len(shifts):
        return []
    hours = ", ".join(f"{name} {a}-{b}" for name, (a, b) in DEFAULT_SHIFTS.items())
    return ["<h2>Dealers by shift</h2><p class='muted'>findings per 1,000 rounds each dealer dealt in "
            f"each shift (local hours: {hours}; rounds in brackets), the worst dealers of each game</p>"
            + _table(shifts)]


def _findings(findings: pd.DataFrame, context: ReportContext | None) -> list[str]:
    """The findings: by day and by citation (charts and a table), and the top ones."""
    if not len(findings):
        return ["<h2>Findings</h2><p>No findings.</p>"]
    from .schema import SUMMARIES
    from .summaries import summarize

    return ["<h2>Findings by day</h2>" + _svg(_by_day(findings, context.period if context else None)),
            "<h2>Findings by citation</h2>" + _svg(_by_citation(findings)),
            "<h2>By citation</h2>" + _table(summarize(findings, SUMMARIES["citation"])),
            f"<h2>Top findings</h2><p class='muted'>showing {min(TOP, len(findings)):,} of "
            f"{len(findings):,}, high severity and largest discrepancy first; the CSV has them all</p>",
            _table(_top(findings))]


def _filters(context: ReportContext) -> str:
    """The filters that selected the report's rounds and findings, said before anything else."""
    period = context.period
    when = f"gaming days {period[0]} to {period[1]}" if period else "no round"
    if not context.filters:
        return f"<p class='scope'><b>Scope: every round of the inputs</b> (no filter), {_e(when)}</p>"
    given = " ".join(f"{_e(k)} {_e(v)}" for k, v in context.filters.items())
    return (f"<p class='scope filtered'><b>Filtered: {given}</b>; findings, coverage and counts are of the selected "
            f"rounds only, {_e(when)}</p>")


def _provenance(context: ReportContext) -> str:
    """The foot of the page: what made it, from what (every input's SHA-256), by which command."""
    from .reportcontext import INPUTS_LISTED

    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in context.provenance.items())
    shown = context.inputs[:INPUTS_LISTED]
    more = (f"<p class='muted'>and {len(context.inputs) - len(shown):,} more: the store's manifest lists them</p>"
            if len(context.inputs) > len(shown) else "")
    inputs = "".join(f"<tr><td>{_e(p)}</td><td><code>{_e(h)}</code></td></tr>" for p, h in shown)
    note = ("<p class='muted'>SHA-256 of each input's bytes; a CSV source's hash covers its companion files "
            "(hands, wagers, events) after it, each after a tag naming it (auditkit.ingest.identity.source_sha256)</p>")
    return ("<h2>Provenance</h2><footer class='provenance'><table>" + rows + "</table>"
            + (f"<table><tr><th>input</th><th>SHA-256</th></tr>{inputs}</table>{more}{note}" if shown else "")
            + "</footer>")


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _table(frame: pd.DataFrame, css: str | None = None) -> str:
    """An HTML table; numbers right-aligned (money to the cent), everything escaped, nothing as NaN."""
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    rows = []
    for values in frame.itertuples(index=False):
        cells = []
        for c, v in zip(frame.columns, values, strict=True):
            if v is None or (isinstance(v, float) and v != v):
                cells.append("<td></td>")
            elif isinstance(v, list):  # lines of one cell
                cells.append("<td>" + "<br>".join(_e(x) for x in v) + "</td>")
            elif isinstance(v, int) and not isinstance(v, bool):
                cells.append(f"<td class='n'>{v:,}</td>")
            elif isinstance(v, float):
                cells.append(f"<td class='n'>{_e(format_money(v))}</td>")
            elif isinstance(v, int) or hasattr(v, "dtype"):
                cells.append(f"<td class='n'>{_e(v)}</td>")
            else:
                cls = f" class='{v}'" if c == "severity" and v in SEVERITY_COLORS else ""
                cells.append(f"<td{cls}>{_e(v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table{f' class={css!r}' if css else ''}><tr>{head}</tr>{''.join(rows)}</table>"


def _top(findings: pd.DataFrame) -> pd.DataFrame:
    rank = -findings["severity"].map(SEVERITY_RANK).fillna(0)  # the most severe first
    size = findings["discrepancy"].abs().fillna(0)
    top = findings.assign(_r=rank, _s=-size).sort_values(["_r", "_s", "started_at"], kind="stable").head(TOP)
    cols = ["round_id", "game", "table_id", "dealer_id", "started_at", "citation", "severity", "message",
            "discrepancy"]
    return top[[c for c in cols if c in top.columns]]


def _by_day(findings: pd.DataFrame, period: tuple[str, str] | None = None) -> dict[str, Any]:
    """Findings per gaming day, the axis spanning the period checked (not from the first finding)."""
    days = findings.groupby(["date", "severity"], dropna=False).size().reset_index(name="findings")
    x: dict[str, Any] = {"field": "date", "type": "temporal", "title": "gaming day", "timeUnit": "yearmonthdate",
                         "axis": {"labelAngle": 0, "tickCount": 12}}
    if period:
        last = (pd.Timestamp(period[1]) + pd.Timedelta(days=1)).date().isoformat()
        x["scale"] = {"domain": [period[0], last]}
    return {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "width": 900, "height": 220,
            "data": {"values": days.astype({"date": str}).to_dict("records")}, "mark": "bar",
            "encoding": {"x": x,
                         "y": {"field": "findings", "type": "quantitative", "aggregate": "sum", "title": "findings",
                               "axis": {"tickMinStep": 1, "format": "d"}},
                         "color": _severity_color()}}


def _by_citation(findings: pd.DataFrame) -> dict[str, Any]:
    counts = findings.groupby(["game", "citation", "severity"]).size().reset_index(name="findings")
    counts["label"] = counts["citation"].where(counts["citation"].str.startswith("68 IAC"),
                                               counts["citation"] + " (" + counts["game"].str.replace("_", " ") + ")")
    order = counts.sort_values("findings", ascending=False)["label"].drop_duplicates().tolist()
    return {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "width": 700,
            "data": {"values": counts.to_dict("records")}, "mark": "bar",
            "encoding": {"y": {"field": "label", "type": "nominal", "sort": order, "title": None,
                               "axis": {"labelLimit": 320}},
                         "x": {"field": "findings", "type": "quantitative", "aggregate": "sum", "title": "findings",
                               "axis": {"tickMinStep": 1, "format": "d"}},
                         "color": _severity_color()}}


def _severity_color() -> dict[str, Any]:
    return {"field": "severity", "type": "nominal", "title": "severity",
            "scale": {"domain": list(SEVERITY_COLORS), "range": list(SEVERITY_COLORS.values())}}


def _svg(spec: dict[str, Any]) -> str:
    """The chart as inline SVG (no script, no network): Vega-Lite compiled and drawn by vl-convert."""
    import vl_convert as vlc

    return f"<div>{vlc.vegalite_to_svg(spec)}</div>"
