"""Altair chart builders for the auditor notebooks: aggregated data in, charts out.

Every builder takes a small frame from :mod:`auditkit.analysis` (summaries, never
rounds) and refuses one with more than :data:`MAX_ROWS` rows, so a chart spec
stays small and Altair's row limit is never hit. Charts have titles, axis
titles and tooltips; days are labelled as dates (``Jun 01``), and an empty frame
gives a chart that says so. :func:`use_renderer` makes notebooks display charts
that need no network (JupyterLab's own Vega, a static SVG for nbconvert);
:func:`summary`, :func:`table` and :func:`rounds` show the opening summary,
readable tables and the drill-down. :func:`save_chart` writes PNG, SVG, HTML
(self-contained, offline) or the Vega-Lite JSON through vl-convert.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from .reviews import STATUSES
from .status import SEVERITIES
from .store import atomic_path
from .tables import ROWS, show
from .vega import VEGALITE_V5_MIME, VEGALITE_V5_SCHEMA, chart_page, static_svg

__all__ = [
    "MAX_ROWS", "use_renderer", "findings_over_time", "findings_by_citation", "findings_by", "heatmap",
    "discrepancy_histogram", "largest_discrepancies", "cumulative_payouts", "funnel_plot", "hold_heatmap",
    "hold_by_table", "save_chart", "nothing", "citation_labels", "summary", "table", "rounds", "OFFLINE_RENDERER",
    "use_currency", "game_title", "game_intro", "known_odds",
    "dealer_shifts", "outcomes_table", "OUTCOME_NAMES",
]

MAX_ROWS = 5000
"""Most rows a chart embeds (Altair's own limit): aggregate before charting."""
OFFLINE_RENDERER = "auditkit-offline"
SEVERITY_ORDER = list(SEVERITIES)
SEVERITY_COLORS = ["#c0392b", "#e67e22", "#7f8c8d"]


def _check(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    if len(frame) > MAX_ROWS:
        raise ValueError(f"{what}: {len(frame)} rows to chart (more than {MAX_ROWS}); aggregate first "
                         "(see auditkit.analysis)")
    return frame.reset_index(drop=True)


_FREQ = {"day": "D", "week": "7D", "month": "MS", "year": "YS"}


def _period_labels(values: pd.Series, unit: str,
                   period: tuple[str, str] | None = None) -> tuple[pd.Series, list[str]]:
    """Date labels (``Jun 01``, ``Jun 2025``) for ``YYYY-MM-DD`` period starts, and every period from the
    first to the last in order (days without a row keep their place on the axis); ``period`` (the first
    and last gaming day checked) widens the axis to the whole period, not from the first finding."""
    days = pd.to_datetime(values.astype(str))
    first, last = (days.min(), days.max()) if len(days) else (None, None)
    if period and len(days):
        # the period's first day in the unit's periods, as analysis.over_time starts them (weeks on Mondays)
        start = pd.Timestamp(period[0]).to_period({"week": "W", "month": "M", "year": "Y"}.get(unit, "D")).start_time
        first, last = min(first, start), max(last, pd.Timestamp(period[1]))
    every = pd.date_range(first, last, freq=_FREQ.get(unit, "D")) if len(days) else pd.DatetimeIndex([])
    years = pd.Series(every.year).nunique() if len(every) else days.dt.year.nunique()
    fmt = {"month": "%b %Y", "year": "%Y"}.get(unit, "%b %d" if years <= 1 else "%b %d %Y")
    return days.dt.strftime(fmt), list(dict.fromkeys(every.strftime(fmt)))


def _period_x(frame: pd.DataFrame, field: str, unit: str, title: str | None = None,
              period: tuple[str, str] | None = None) -> tuple[pd.DataFrame, alt.X]:
    """``frame`` with a ``when`` label column, and an axis of gaming days (weeks, months) labelled as dates,
    spanning ``period`` (first and last gaming day) when given.

    Labels are made here (``Jun 01``), not by Vega, so no viewer's time zone moves
    a gaming day and no axis shows hours or epoch milliseconds.
    """
    labels, order = _period_labels(frame[field], unit, period)
    axis = alt.Axis(labelAngle=0 if len(order) <= 12 else -45, labelOverlap=True)
    return frame.assign(when=labels), alt.X("when:O", sort=order, scale=alt.Scale(domain=order),
                                            title=title or f"Gaming {unit}", axis=axis)


def nothing(message: str, title: str = "") -> alt.Chart:
    """A chart that says in words that there is nothing to draw."""
    return alt.Chart(pd.DataFrame({"note": [message]}), title=title).mark_text(
        align="left", x=0, y=10, fontSize=13, color="#555").encode(text="note:N").properties(width=520, height=24)


# ---- rendering ------------------------------------------------------------------------------
def _offline_renderer(spec: dict[str, Any], **_meta: Any) -> dict[str, Any]:
    """A mime bundle that needs no network anywhere.

    JupyterLab draws the Vega-Lite v5 bundle itself (interactive); ``jupyter
    nbconvert --to html`` and other front ends that know no Vega show the
    static SVG; :func:`auditkit.notebooks.export_html` turns the spec back into an
    interactive chart with the Vega bundle inlined. Altair's specs use only
    Vega-Lite 5 grammar, so only the ``$schema`` changes.
    """
    title = spec.get("title")
    title = title if isinstance(title, str) else (title or {}).get("text", "")
    return {VEGALITE_V5_MIME: {**spec, "$schema": VEGALITE_V5_SCHEMA}, "image/svg+xml": static_svg(spec),
            "text/plain": f"<chart: {title or 'untitled'}>"}


def use_renderer(name: str = OFFLINE_RENDERER) -> None:
    """Choose how notebooks show charts.

    ``auditkit-offline`` (also ``default`` and ``offline``): works without a network
    in live JupyterLab, ``jupyter nbconvert --to html`` and the HTML reports (see
    :func:`_offline_renderer`); ``png`` or ``svg``: static only; any other name is
    one of Altair's own renderers (``html`` loads Vega from a CDN).
    """
    if OFFLINE_RENDERER not in alt.renderers.names():
        alt.renderers.register(OFFLINE_RENDERER, _offline_renderer)
    alt.renderers.enable(OFFLINE_RENDERER if name in ("default", "offline") else name)


_currency: list[str | None] = ["USD"]  # the [money] currency of auditkit's defaults until use_currency says otherwise


def use_currency(config: Any = None) -> str:
    """Write money in the currency of a configuration (a file's path or a loaded
    :class:`auditkit.paytables.Config`; None: auditkit's defaults): its ``[money] currency``,
    on money axes (``Cumulative amount (USD)``) and in table titles (``discrepancy (USD)``)."""
    from .paytables import Config, load_config

    cfg = config if isinstance(config, Config) else load_config(config) if config else Config()
    _currency[0] = str(cfg.get("money", "currency"))
    return _currency[0]


def game_title(game: str) -> str:
    """A game as people name it: its descriptor's title (``Three card poker``); a variant by its own name
    (``Mini baccarat``)."""
    from . import games

    try:
        g = games.get(game)
    except KeyError:
        g = None
    return g.title if g is not None and g.name == game else game.replace("_", " ").capitalize()


_LOG_AXIS = {"labelOverlap": "greedy", "format": "~s", "labelFlush": True}
"""A log axis whose labels never run together (``100 1k 10k``, greedy overlap removal)."""


def _money(title: str) -> str:
    """An axis title with the currency: ``Cumulative amount (USD)``."""
    return f"{title} ({_currency[0]})" if _currency[0] else title


# ---- findings --------------------------------------------------------------------------------
def findings_over_time(frame: pd.DataFrame, color: str = "severity", title: str = "Findings over time",
                       period: tuple[str, str] | None = None) -> alt.Chart:
    """Stacked bars of findings per gaming day (week, month), linked to a clickable legend.

    ``frame``: :func:`auditkit.analysis.over_time` (findings per 1,000 rounds dealt; a small multiple per
    game when it has a ``game`` column with more than one) or :func:`auditkit.analysis.heatmap_frame` with
    ``rows=color`` (counts). Coloured by severity by default, so the legend has three entries whatever
    the number of citations. ``period`` (:func:`auditkit.analysis.period_of`): the axis spans it.
    """
    frame = _check(frame, "findings_over_time")
    if frame.empty:
        return nothing("No findings in this period.", title)
    pick = alt.selection_point(fields=[color], bind="legend")
    unit = str(frame["granularity"].iloc[0])
    scale = alt.Scale(domain=SEVERITY_ORDER, range=SEVERITY_COLORS) if color == "severity" else alt.Undefined
    rate = "per_1000" in frame.columns
    frame, x = _period_x(frame, "period", unit, period=period)
    tips = [alt.Tooltip("when:N", title=f"gaming {unit}"), alt.Tooltip(f"{color}:N"),
            alt.Tooltip("findings:Q", title="findings"), alt.Tooltip("rounds_flagged:Q", title="rounds flagged")]
    if rate:
        tips += [alt.Tooltip("rounds:Q", format=",", title="rounds dealt"),
                 alt.Tooltip("per_1000:Q", format=",.2f", title="per 1,000 rounds")]
    games = frame["game"].astype(str).unique() if "game" in frame.columns else []
    chart = alt.Chart(frame.assign(game=frame["game"].astype(str).map(game_title)) if len(games) else frame,
                      title=title if len(games) <= 1 else alt.Undefined).mark_bar().encode(
        x=x,
        y=alt.Y("sum(per_1000):Q" if rate else "sum(findings):Q",
                title="Findings per 1,000 rounds" if rate else "Findings"),
        color=alt.Color(f"{color}:N", title=color.replace("_", " ").capitalize(), scale=scale,
                        sort=SEVERITY_ORDER if color == "severity" else alt.Undefined),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.15)),
        tooltip=tips,
    ).add_params(pick)
    if len(games) > 1:  # games mix: one small multiple each, on its own scale
        return chart.properties(width=640, height=110).facet(
            row=alt.Row("game:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
            title=title).resolve_scale(y="independent")
    return chart.properties(width=640, height=260)


def citation_labels(summary: pd.DataFrame) -> pd.Series:
    """``68 IAC 10-10-14(b)(5)`` as it is (the section names the game); a bare word gets its game: ``paytable (blackjack)``."""
    bare = ~summary["citation"].astype(str).str.startswith("68 IAC")
    game = summary["game"].astype(str).str.replace("_", " ")
    return summary["citation"].where(~bare, summary["citation"].astype(str) + " (" + game + ")")


def findings_by_citation(summary: pd.DataFrame, title: str = "Findings by citation") -> alt.Chart:
    """Horizontal bars per citation (:func:`auditkit.analysis.by_citation`), severity first, coloured by severity."""
    summary = _check(summary, "findings_by_citation")
    if summary.empty:
        return nothing("No findings in this period.", title)
    summary = summary.assign(label=citation_labels(summary))
    rank = summary["severity"].map({k: i for i, k in enumerate(SEVERITY_ORDER)}).fillna(len(SEVERITY_ORDER))
    totals = summary.assign(_r=rank).groupby("label").agg(_r=("_r", "min"), _n=("findings", "sum"))
    order = totals.sort_values(["_r", "_n"], ascending=[True, False], kind="stable").index.tolist()
    return alt.Chart(summary, title=title).mark_bar().encode(
        y=alt.Y("label:N", sort=order, title="Citation", axis=alt.Axis(labelLimit=320)),
        x=alt.X("sum(findings):Q", title="Findings (log scale: one finding still shows)",
                scale=alt.Scale(type="symlog")),
        color=alt.Color("severity:N", scale=alt.Scale(domain=SEVERITY_ORDER, range=SEVERITY_COLORS),
                        title="Severity"),
        tooltip=["game:N", "citation:N", "severity:N", alt.Tooltip("findings:Q", title="findings"),
                 alt.Tooltip("rounds:Q", title="rounds"), alt.Tooltip("overpaid:Q", format=",.2f"),
                 alt.Tooltip("underpaid:Q", format=",.2f")],
    ).properties(width=520)


def findings_by(summary: pd.DataFrame, key: str, top: int = 30, title: str | None = None,
                rate: bool = False) -> alt.Chart:
    """Bars for the ``top`` groups of a summary by ``key`` (table_id, dealer_id, shift...).

    With ``rate`` (a ``per_1000`` column), bars show findings per thousand rounds.
    """
    value = "per_1000" if rate else "findings"
    summary = summary.sort_values(value, ascending=False, kind="stable").head(top)
    summary = _check(summary, "findings_by")
    label = key.replace("_id", "").replace("_", " ")
    if summary.empty:
        return nothing("No findings in this period.", title or f"Findings by {label}")
    tips = [alt.Tooltip(f"{key}:N", title=label), alt.Tooltip("findings:Q")]
    tips += [alt.Tooltip(f"{c}:Q", format=",.2f" if c in ("overpaid", "underpaid") else ",")
             for c in ("rounds", "rounds_checked", "per_1000", "overpaid", "underpaid") if c in summary.columns]
    return alt.Chart(summary, title=title or f"Findings by {label} (top {top})").mark_bar().encode(
        y=alt.Y(f"{key}:N", sort="-x", title=label.capitalize()),
        x=alt.X(f"{value}:Q", title="Findings per 1,000 rounds" if rate else "Findings"),
        tooltip=tips,
    ).properties(width=520)


def heatmap(frame: pd.DataFrame, rows: str = "table_id", value: str = "findings",
            title: str | None = None) -> alt.Chart:
    """A heat map of ``rows`` × period (:func:`auditkit.analysis.heatmap_frame`)."""
    frame = _check(frame, "heatmap")
    unit = str(frame["granularity"].iloc[0]) if len(frame) else "day"
    label = rows.replace("_id", "").replace("_", " ")
    title = title or f"Findings by {label} and {unit}"
    if frame.empty:
        return nothing("No findings in this period.", title)
    order: Any = alt.Undefined
    if "severity" in frame.columns:  # citations: severity first, then the most findings
        rank = frame["severity"].map({k: i for i, k in enumerate(SEVERITY_ORDER)}).fillna(len(SEVERITY_ORDER))
        totals = frame.assign(_r=rank).groupby(rows).agg(_r=("_r", "min"), _n=("findings", "sum"))
        order = totals.sort_values(["_r", "_n"], ascending=[True, False], kind="stable").index.tolist()
    frame, x = _period_x(frame, "period", unit)
    tips = [alt.Tooltip(f"{rows}:N", title=label), alt.Tooltip("when:N", title=f"gaming {unit}"),
            alt.Tooltip("findings:Q"), alt.Tooltip("rounds_flagged:Q", title="rounds flagged")]
    tips += [alt.Tooltip(f"{c}:Q") for c in ("rounds", "per_1000") if c in frame.columns]
    return alt.Chart(frame, title=title).mark_rect().encode(
        x=x,
        y=alt.Y(f"{rows}:N", title=label.capitalize(), sort=order, axis=alt.Axis(labelLimit=320)),
        color=alt.Color(f"{value}:Q", scale=alt.Scale(scheme="orangered"),
                        title="Findings per 1,000 rounds" if value == "per_1000" else value.capitalize()),
        tooltip=tips,
    ).properties(width=alt.Step(18), height=alt.Step(16))


# ---- money ----------------------------------------------------------------------------------
_DIRECTION = alt.Scale(domain=["overpaid", "underpaid"], range=["#c0392b", "#2471a3"])


def discrepancy_histogram(bins: pd.DataFrame, title: str = "Payout discrepancies") -> alt.Chart:
    """Pre-binned discrepancies (:func:`auditkit.analysis.discrepancy_bins`), over- and underpaid side by side."""
    bins = _check(bins, "discrepancy_histogram")
    if bins.empty:
        return nothing("No payout discrepancies in this period.", title)
    return alt.Chart(bins, title=title).mark_bar().encode(
        x=alt.X("bin_start:Q", bin="binned", title=_money("Discrepancy, absolute amount"),
                scale=alt.Scale(type="log"), axis=alt.Axis(**_LOG_AXIS)),
        x2="bin_end:Q",
        y=alt.Y("findings:Q", title="Findings"),
        color=alt.Color("direction:N", scale=_DIRECTION, title="Direction"),
        row=alt.Row("direction:N", title=None),
        tooltip=[alt.Tooltip("direction:N"), alt.Tooltip("bin_start:Q", format=",.2f", title="from"),
                 alt.Tooltip("bin_end:Q", format=",.2f", title="to"), alt.Tooltip("findings:Q"),
                 alt.Tooltip("amount:Q", format=",.2f", title="total amount")],
    ).properties(width=560, height=150)


def largest_discrepancies(top: pd.DataFrame, title: str = "Largest payout discrepancies") -> alt.Chart:
    """One bar per finding of :func:`auditkit.analysis.largest_discrepancies`, signed."""
    top = _check(top, "largest_discrepancies")
    if top.empty:
        return nothing("No payout discrepancies in this period.", title)
    return alt.Chart(top, title=title).mark_bar().encode(
        y=alt.Y("round_id:N", sort=alt.EncodingSortField("amount", order="descending"), title="Round"),
        x=alt.X("discrepancy:Q", title=_money("Recorded minus expected net")),
        color=alt.Color("direction:N", scale=_DIRECTION, title="Direction"),
        tooltip=["round_id:N", "game:N", "table_id:N", "dealer_id:N", "day:N", "citation:N",
                 alt.Tooltip("discrepancy:Q", format=",.2f"), "message:N"],
    ).properties(width=520)


def cumulative_payouts(frame: pd.DataFrame, title: str = "Cumulative over- and underpayment",
                       period: tuple[str, str] | None = None) -> alt.Chart:
    """Running totals per day (:func:`auditkit.analysis.cumulative_payouts`), one line per direction;
    ``period`` (:func:`auditkit.analysis.period_of`): the axis spans it."""
    frame = _check(frame, "cumulative_payouts")
    if frame.empty:
        return nothing("No payout discrepancies in this period.", title)
    hover = alt.selection_point(fields=["day"], nearest=True, on="pointerover", empty=False)
    frame, x = _period_x(frame, "day", "day", period=period)
    games = frame["game"].astype(str).unique() if "game" in frame.columns else []
    if len(games):
        frame = frame.assign(game=frame["game"].astype(str).map(game_title))
    base = alt.Chart(frame, title=title if len(games) <= 1 else alt.Undefined).encode(
        x=x,
        y=alt.Y("cumulative:Q", title=_money("Cumulative amount")),
        color=alt.Color("direction:N", scale=_DIRECTION, title="Direction"),
    )
    line = base.mark_line(interpolate="step-after")
    points = base.mark_point(filled=True).encode(
        opacity=alt.condition(hover, alt.value(1), alt.value(0)),
        tooltip=[alt.Tooltip("when:N", title="gaming day"), "direction:N", alt.Tooltip("amount:Q", format=",.2f", title="that day"),
                 alt.Tooltip("cumulative:Q", format=",.2f"), alt.Tooltip("findings:Q")],
    ).add_params(hover)
    if len(games) > 1:  # games mix: one small multiple each, on its own scale
        return (line + points).properties(width=600, height=120).facet(
            row=alt.Row("game:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
            title=title).resolve_scale(y="independent")
    return (line + points).properties(width=600, height=260)


# ---- expected versus observed -----------------------------------------------------------------
def funnel_plot(eo: pd.DataFrame, limits: pd.DataFrame, key: str = "table_id", title: str | None = None,
                max_points: int = 3000, alpha: float = 0.01) -> alt.LayerChart:
    """Observed rate against trials for one game and event, inside binomial control limits.

    ``eo``: rows of :func:`auditkit.analysis.expected_vs_observed` for one game
    and event; ``limits``: :func:`auditkit.analysis.funnel_limits` at its
    expected rate. With more than ``max_points`` groups (shoes over a year),
    the flagged ones and the most extreme by |z| are drawn. ``alpha``: the significance
    the groups were flagged at (:func:`auditkit.analysis.expected_vs_observed`), for the legend.
    """
    if eo.empty:
        return nothing("No rounds to compare with theory in this period.", title or "Expected versus observed")
    shown = eo
    if len(eo) > max_points:
        shown = eo.assign(_a=eo["z"].abs()).sort_values(["flagged", "_a"], ascending=False).head(max_points)
        shown = shown.drop(columns="_a")
    shown = _check(shown, "funnel_plot")
    if len(shown):  # draw the limits over the range of the groups, not from a handful of rounds
        limits = limits[limits["trials"] >= max(1.0, float(shown["trials"].min()) / 2)]
    limits = _check(limits, "funnel_plot limits")
    game = str(eo["game"].iloc[0]) if len(eo) else ""
    event = str(eo["event"].iloc[0]) if len(eo) else ""
    extra = f" ({len(shown)} most extreme of {len(eo)})" if len(shown) < len(eo) else ""
    title = title or f"{game_title(game)}: {event.replace('_', ' ')} rate by {key.replace('_id', '')}{extra}"
    label = key.replace("_id", "").replace("_", " ")
    x = alt.X("trials:Q", scale=alt.Scale(type="log", padding=16), title="Rounds (trials)",
              axis=alt.Axis(**_LOG_AXIS))
    bands = alt.Chart(limits).mark_line(strokeDash=[4, 3], color="#7f8c8d").encode(
        x=x, y="lower:Q", detail="level:N", tooltip=["level:N", "trials:Q", alt.Tooltip("lower:Q", format=".4f")])
    upper = alt.Chart(limits).mark_line(strokeDash=[4, 3], color="#7f8c8d").encode(
        x=x, y="upper:Q", detail="level:N", tooltip=["level:N", "trials:Q", alt.Tooltip("upper:Q", format=".4f")])
    # each pair of dashed lines named where they stand furthest apart: above the upper line's first point
    ends = limits.loc[limits.groupby("level")["trials"].idxmin()] if len(limits) else limits
    ends = ends.assign(text=ends["level"].astype(str) + " limits") if len(ends) else ends.assign(text=[])
    names = alt.Chart(ends).mark_text(align="left", baseline="bottom", dx=3, dy=-3, fontSize=10,
                                      color="#5d6d7e").encode(x=x, y="upper:Q", text="text:N")
    shown = shown.assign(status=np.where(shown["flagged"].astype(bool), f"improbable (adjusted p < {alpha:g})",
                                         "within chance"))
    centre = alt.Chart(pd.DataFrame({"expected_rate": [float(eo["expected"].sum() / max(eo["trials"].sum(), 1))]
                                     if len(eo) else [0.0]})).mark_rule(color="#34495e").encode(
        y="expected_rate:Q", tooltip=[alt.Tooltip("expected_rate:Q", format=".5f", title="theoretical rate")])
    pts = alt.Chart(shown).mark_circle(size=60).encode(
        x=x,
        y=alt.Y("rate:Q", title=f"Observed {event.replace('_', ' ')} rate", scale=alt.Scale(zero=False)),
        color=alt.Color("status:N", title=None, scale=alt.Scale(
            domain=["within chance", f"improbable (adjusted p < {alpha:g})"], range=["#2471a3", "#c0392b"])),
        tooltip=[alt.Tooltip(f"{key}:N", title=label), alt.Tooltip("trials:Q", format=","),
                 alt.Tooltip("observed:Q", format=","), alt.Tooltip("expected:Q", format=",.1f"),
                 alt.Tooltip("rate:Q", format=".4f"), alt.Tooltip("expected_rate:Q", format=".4f"),
                 alt.Tooltip("z:Q", format=".2f"), alt.Tooltip("p_value:Q", format=".2e"),
                 alt.Tooltip("p_adjusted:Q", format=".2e"), "flagged:N"],
    )
    # the improbable groups named beside their points: read in a static page too, without a tooltip
    marked = alt.Chart(shown[shown["flagged"].astype(bool)]).mark_text(
        align="left", baseline="middle", dx=8, fontSize=11, fontWeight="bold", color="#c0392b").encode(
        x=x, y="rate:Q", text=f"{key}:N")
    return alt.layer(bands, upper, names, centre, pts, marked, title=title).properties(width=560, height=320)


# ---- hold -----------------------------------------------------------------------------------
def hold_heatmap(frame: pd.DataFrame, title: str = "Hold by table and day") -> alt.Chart:
    """Hold (win / drop) per table and day (:func:`auditkit.analysis.hold`), diverging around 0.

    Over :data:`MAX_ROWS` cells, only the most recent days that fit are drawn (the title says so).
    """
    if len(frame) > MAX_ROWS:
        days = sorted(frame["date"].unique())
        keep = max(1, MAX_ROWS // max(frame["table_id"].nunique(), 1))
        frame = frame[frame["date"].isin(days[-keep:])]
        title = f"{title} (last {min(keep, len(days))} days)"
    frame = _check(frame, "hold_heatmap")
    if frame.empty:
        return nothing("No completed rounds in this period.", title)
    frame, x = _period_x(frame, "date", "day")
    return alt.Chart(frame, title=title).mark_rect().encode(
        x=x,
        y=alt.Y("table_id:N", title="Table"),
        color=alt.Color("hold:Q", scale=alt.Scale(scheme="redblue", domainMid=0, reverse=True),
                        title="Hold", legend=alt.Legend(format=".0%")),
        tooltip=["game:N", "table_id:N", alt.Tooltip("when:N", title="gaming day"), alt.Tooltip("rounds:Q", format=","),
                 alt.Tooltip("drop:Q", format=",.2f"), alt.Tooltip("win:Q", format=",.2f"),
                 alt.Tooltip("hold:Q", format=".2%")],
    ).properties(width=alt.Step(18), height=alt.Step(16))


def hold_by_table(frame: pd.DataFrame, title: str = "Hold by table", min_rounds: int | None = None) -> alt.Chart:
    """Hold per table over the period (:func:`auditkit.analysis.hold` by game and table), the tables with
    fewer than ``min_rounds`` rounds (:data:`auditkit.analysis.MIN_ROUNDS`) left out, the title saying how
    many: a table of a handful of rounds at 100% hold says nothing and would set the scale."""
    from .analysis import MIN_ROUNDS

    frame = _check(frame, "hold_by_table")
    if frame.empty:
        return nothing("No completed rounds in this period.", title)
    least = MIN_ROUNDS if min_rounds is None else min_rounds
    kept = frame[frame["rounds"] >= least]
    if len(kept) and len(kept) < len(frame):
        title = f"{title} ({len(frame) - len(kept)} table(s) with fewer than {least:,} rounds left out)"
        frame = kept
    frame = frame.assign(game=frame["game"].astype(str).map(game_title))
    return alt.Chart(frame, title=title).mark_bar().encode(
        y=alt.Y("table_id:N", sort="-x", title="Table"),
        x=alt.X("hold:Q", title="Hold (win / drop)", axis=alt.Axis(format="%")),
        color=alt.Color("game:N", title="Game"),
        tooltip=["game:N", "table_id:N", alt.Tooltip("rounds:Q", format=","), alt.Tooltip("drop:Q", format=",.2f"),
                 alt.Tooltip("win:Q", format=",.2f"), alt.Tooltip("hold:Q", format=".2%")],
    ).properties(width=520)


def dealer_shifts(frame: pd.DataFrame, title: str = "Findings per 1,000 rounds by dealer and shift") -> alt.Chart:
    """A cell per dealer and shift (:func:`auditkit.analysis.by_dealer_shift`), its rate written in it: a
    dealer whose findings come in one shift stands out (three card poker's swing shift)."""
    from .analysis import DEFAULT_SHIFTS

    frame = _check(frame, "dealer_shifts")
    if frame.empty:
        return nothing("No findings in this period.", title)
    shifts = [s for s in [*DEFAULT_SHIFTS, "other"] if s in set(frame["shift"])]
    hours = ", ".join(f"{s} {a}-{b}" for s, (a, b) in DEFAULT_SHIFTS.items())
    top = float(frame["per_1000"].max()) or 1.0
    base = alt.Chart(frame, title=title).encode(
        x=alt.X("shift:N", sort=shifts, title=f"Shift (local hours: {hours})", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("dealer_id:N", sort=list(dict.fromkeys(frame["dealer_id"])), title="Dealer"))
    cells = base.mark_rect().encode(
        color=alt.Color("per_1000:Q", scale=alt.Scale(scheme="orangered", domainMin=0), title="Per 1,000 rounds"),
        tooltip=["dealer_id:N", "shift:N", alt.Tooltip("rounds_checked:Q", format=",", title="rounds dealt"),
                 alt.Tooltip("findings:Q", format=","), alt.Tooltip("per_1000:Q", format=",.1f")])
    text = base.mark_text(fontSize=11).encode(
        text=alt.Text("per_1000:Q", format=".1f"),
        color=alt.condition(f"datum.per_1000 > {top / 2}", alt.value("white"), alt.value("#222")))
    return (cells + text).properties(width=alt.Step(110), height=alt.Step(22))


OUTCOME_NAMES = {"table_id": "table", "dealer_id": "dealer", "shoe_id": "shoe", "date": "day", "trials": "rounds",
                 "observed": "observed", "expected": "expected count", "rate": "observed rate",
                 "expected_rate": "expected rate", "p_value": "p", "p_adjusted": "adjusted p (Holm)",
                 "flagged": "improbable", "chi2_p": "chi-square p (the three outcomes)"}
"""The column names of an expected-versus-observed table, as a reader says them."""


def outcomes_table(frame: pd.DataFrame, empty: str = "No group departs from theory beyond chance.",
                   rows: int | None = ROWS) -> Any:
    """:func:`auditkit.analysis.expected_vs_observed` or :func:`auditkit.analysis.flagged_groups` for people:
    named columns (:data:`OUTCOME_NAMES`), ``improbable`` yes or no, the chi-square column only where a
    game has one (baccarat's three outcomes)."""
    from .tables import readable

    if frame.empty:
        return show(frame, rows, empty=empty)
    out = readable(frame)
    if "flagged" in frame:
        out["flagged"] = np.where(frame["flagged"].astype(bool), "yes", "no")
    if "chi2_p" in frame and frame["chi2_p"].isna().all():
        out = out.drop(columns="chi2_p")
    return show(out.rename(columns=OUTCOME_NAMES), rows, empty=empty)


# ---- tables and the opening summary ---------------------------------------------------------------
def table(frame: pd.DataFrame, empty: str = "Nothing to show in this period.", rows: int | None = ROWS) -> Any:
    """A frame for people (:func:`auditkit.tables.show`): its first ``rows`` (None: all), saying how many of
    how many, money in the currency of :func:`use_currency`; an empty one says ``empty`` in words."""
    return show(frame, rows, empty=empty, currency=_currency[0])


def rounds(store: Any, findings: pd.DataFrame, n: int = 10) -> list[Any]:
    """The rounds behind the first ``n`` findings, one table per game (a sentence when there are none)."""
    from IPython.display import Markdown

    from .analysis import rounds_behind

    behind = rounds_behind(store, findings.head(n))
    return [show(f, None, currency=_currency[0]) for f in behind.values()] or [
        Markdown("*No rounds behind these findings.*")]


def game_intro(game: str) -> Any:
    """The game notebook's opening: the game, its section and what its rules cover (its ``words.INTRO``)."""
    from IPython.display import Markdown

    from . import games

    g = games.get(game)
    intro = getattr(g.words, "INTRO", "")
    return Markdown(f"## {g.title}: findings by citation ({g.section})\n\n{intro}\n\nCitations are written as the "
                    "rules catalog reads them; `outcome`, `loss`, `paytable`, `void` and `integrity` are checks no "
                    "subsection fixes.")


def known_odds(game: str) -> tuple[str, ...]:
    """The events of known odds of a game that expected versus observed tests (none for pai gow poker)."""
    from . import games

    theory = games.get(game).theory
    return tuple(getattr(theory, "EVENTS", ())) if theory else ()


def _day(day: str | None) -> str:
    return pd.Timestamp(day).strftime("%b %d, %Y") if day else "?"


_MD_PUNCTUATION = re.compile(r"([!-%'-/:-@\[-`{-~])")  # every ASCII punctuation character but &


def _md(text: object) -> str:
    """Text from a log or profile (a table or dealer id) as inert Markdown: one line, every ASCII punctuation
    character backslash-escaped (CommonMark's escapes) and ``&`` written ``&amp;``, so no HTML tag, entity, link,
    autolinked URL or address, emphasis or block starts in it; a renderer shows the text as written."""
    return _MD_PUNCTUATION.sub(r"\\\1", " ".join(str(text).split())).replace("&", "&amp;")


def summary(figures: dict[str, Any], title: str = "Summary") -> Any:
    """The opening one-screen summary (:func:`auditkit.analysis.overview`) as Markdown."""
    from IPython.display import Markdown

    f = figures
    lines = [f"### {_md(title)}",
             f"**{f['rounds']:,} rounds checked** over {f['days']} gaming day{'s' if f['days'] != 1 else ''}, "
             f"{_day(f['first_day'])} to {_day(f['last_day'])}."]
    if not f["findings"]:
        lines.append("**No findings** in this period: every round checked passed every rule.")
    else:
        sev = f["by_severity"]
        lines.append(f"**{f['findings']:,} findings** on {f['rounds_flagged']:,} rounds: "
                     f"**{sev['high']:,} high**, {sev['medium']:,} medium, {sev['low']:,} low.")
        m = f["money"]
        lines.append(f"**Money**: patrons overpaid **{m['overpaid']:,.2f}** ({m['overpaid_findings']:,} findings), "
                     f"underpaid **{m['underpaid']:,.2f}** ({m['underpaid_findings']:,} findings); never netted.")
        reviews = f.get("reviews") or {}
        done = {k: n for k, n in reviews.items() if k != "open" and n}
        if done:
            lines.append(f"**Reviews**: {reviews.get('open', 0):,} open; " + ", ".join(
                f"{n:,} {k}" for k, n in sorted(done.items(), key=lambda kv: STATUSES.index(kv[0]))) + ".")
        elif reviews:
            lines.append("**Reviews**: every finding open (none reviewed yet: `auditkit review`).")
        for key, label in (("tables", "Worst tables"), ("dealers", "Worst dealers")):
            rows = f[key]
            name = "table_id" if key == "tables" else "dealer_id"
            if len(rows):
                least = f", among those with {f['min_rounds']:,} rounds or more" if f.get("min_rounds") else ""
                lines.append(f"**{label}** (findings per 1,000 rounds{least}): " + "; ".join(
                    f"{_md(r[name])} {r['per_1000']:,.1f} ({int(r['findings']):,} findings)"
                    for _i, r in rows.iterrows()) + ".")
    flagged = f["flagged"]
    if len(flagged):
        parts = []
        for _i, r in flagged.head(6).iterrows():
            parts.append(f"{_md(r['level'])} {_md(r['group'])} ({_md(str(r['game']).replace('_', ' '))}, "
                         f"{_md(str(r['event']).replace('_', ' '))} "
                         f"{r['rate']:.3f} against {r['expected_rate']:.3f}, adjusted p {r['p_adjusted']:.1e})")
        more = f" and {len(flagged) - 6} more" if len(flagged) > 6 else ""
        lines.append(f"**Improbable outcome frequencies**: {'; '.join(parts)}{more}.")
    else:
        lines.append("**Expected versus observed**: no table or dealer departs from theory beyond chance.")
    return Markdown("\n\n".join(lines))


# ---- saving ---------------------------------------------------------------------------------
def save_chart(chart: alt.TopLevelMixin, path: str | Path, scale: float = 2.0) -> Path:
    """Write a chart as PNG, SVG, HTML (self-contained, works offline, log text never markup) or JSON, by the
    file's suffix."""
    import vl_convert as vlc
    from altair.utils._importers import vl_version_for_vl_convert

    path = Path(path)
    spec = chart.to_dict()
    version = vl_version_for_vl_convert()
    suffix = path.suffix.lower()
    if suffix == ".png":
        data: bytes | str = vlc.vegalite_to_png(spec, vl_version=version, scale=scale)
    elif suffix == ".svg":
        data = vlc.vegalite_to_svg(spec, vl_version=version)
    elif suffix in (".html", ".htm"):  # its data as JSON escapes in our own page (vl-convert's wrote it raw)
        title = spec.get("title")
        data = chart_page({**spec, "$schema": alt.SCHEMA_URL},
                          title if isinstance(title, str) else (title or {}).get("text", "chart"))
    elif suffix == ".json":
        data = json.dumps(spec, indent=1)
    else:
        raise ValueError(f"unknown chart format {suffix!r}: .png, .svg, .html or .json")
    with atomic_path(path) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data, "utf-8")
    return path
