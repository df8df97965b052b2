"""Findings out of a store and summed up for the notebooks: by citation, table, dealer, shift and day,
their money, over time, per 1,000 rounds, drill-downs and the opening summary's figures."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..status import SEVERITIES
from ..store import Store
from ..summaries import payout_totals
from ..summaries import summarize as _summarize
from .rounds import StoreLike, _as_list, open_store
from .shifts import _local_hour, shift_of


# ---- findings ---------------------------------------------------------------------------------
def load_findings(store: StoreLike, start: str | None = None, end: str | None = None, *,
                  games: str | Iterable[str] | None = None, tables: str | Iterable[str] | None = None,
                  dealers: str | Iterable[str] | None = None, citations: str | Iterable[str] | None = None,
                  shifts: Mapping[str, tuple[int, int]] | None = None) -> pd.DataFrame:
    """Stored findings of some games, days [start, end], tables, dealers and citations.

    Adds ``day`` (the gaming day), ``hour`` (local hour) and ``shift``, and each finding's review
    (``status``, ``note``, ``reviewed_by``, ``reviewed_at``: :mod:`auditkit.reviews`; ``open`` when
    never reviewed). Run ``auditkit.validate.validate_into_store`` first: this reads the stored findings.
    """
    from ..reviews import latest, with_reviews

    st = open_store(store)
    f = st.findings(_as_list(games), start, end)
    f = with_reviews(f, latest(st))
    for col, wanted in (("table_id", tables), ("dealer_id", dealers), ("citation", citations)):
        wanted = _as_list(wanted)
        if wanted is not None:
            f = f[f[col].isin(wanted)]
    f = f.reset_index(drop=True)
    f["day"] = f["date"]
    f["hour"] = _local_hour(f["started_at"])
    f["shift"] = shift_of(f["hour"], shifts)
    return f


def coverage(source: StoreLike, start: str | None = None, end: str | None = None, *,
             games: str | Iterable[str] | None = None) -> pd.DataFrame:
    """What the data could not show: per game and rule, rounds in scope, checked, not checkable (and
    why: the kinds of evidence missing) and findings (:mod:`auditkit.reportcoverage`). ``source`` is a
    store (its validated days, read without validating again) or a findings Parquet file written by
    ``auditkit validate --parquet``, ``auditkit report --parquet`` or a nightly run (the table it carries)."""
    from ..reportcoverage import from_parquet, of_store

    if not isinstance(source, Store) and str(source).endswith(".parquet") and Path(source).is_file():
        table = from_parquet(source)
        if table is None:
            raise ValueError(f"{source} carries no coverage table (written before coverage was recorded)")
        return table
    return of_store(open_store(source), _as_list(games), start, end)


def summarize(findings: pd.DataFrame, by: str | list[str]) -> pd.DataFrame:
    """Findings, rounds, overpaid and underpaid per group (``by`` may name day, hour or shift)."""
    return _summarize(findings, by)


def by_citation(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings per game, citation and severity, most frequent first."""
    return _summarize(findings, ["game", "citation", "severity"])


def by_table(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings per game and table."""
    return _summarize(findings, ["game", "table_id"])


def by_dealer(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings per dealer (a dealer may work several games)."""
    return _summarize(findings, ["dealer_id"])


def by_shift(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings per shift (see :data:`DEFAULT_SHIFTS`)."""
    return _summarize(findings, ["shift"])


def by_day(findings: pd.DataFrame, by: str | list[str] | None = None) -> pd.DataFrame:
    """Findings per gaming day (and per ``by``, such as ``"citation"``), in date order."""
    keys = ["day"] + ([] if by is None else [by] if isinstance(by, str) else list(by))
    return _summarize(findings, keys).sort_values(keys, kind="stable").reset_index(drop=True)


# ---- money ---------------------------------------------------------------------------------
def money_findings(findings: pd.DataFrame) -> pd.DataFrame:
    """The findings with a nonzero discrepancy, with ``direction`` (overpaid / underpaid) and ``amount`` (> 0)."""
    d = findings["discrepancy"].astype(np.float64)
    f = findings[d.abs() >= 0.005].copy()
    f["direction"] = np.where(f["discrepancy"] > 0, "overpaid", "underpaid")
    f["amount"] = f["discrepancy"].abs().round(2)
    return f.reset_index(drop=True)


def discrepancy_bins(findings: pd.DataFrame, bins: int = 30, log: bool = True) -> pd.DataFrame:
    """Histogram of money discrepancies by direction, binned in pandas (one row per bin and direction).

    With ``log`` the bins are even on a log scale of the amount (discrepancies
    run from cents to thousands). Columns: direction, bin_start, bin_end, findings, amount.
    """
    m = money_findings(findings)
    cols = ["direction", "bin_start", "bin_end", "findings", "amount"]
    if m.empty:
        return pd.DataFrame(columns=cols)
    lo, hi = float(m["amount"].min()), float(m["amount"].max())
    if log:
        edges = np.geomspace(max(lo, 0.01), max(hi, lo * 1.0001, 0.0101), bins + 1)
    else:
        edges = np.linspace(0.0, max(hi, 0.01), bins + 1)
    edges[0], edges[-1] = min(edges[0], lo), max(edges[-1], hi)
    idx = np.clip(np.searchsorted(edges, m["amount"].to_numpy(), side="right") - 1, 0, bins - 1)
    m = m.assign(bin=idx)
    out = m.groupby(["direction", "bin"]).agg(findings=("amount", "size"), amount=("amount", "sum")).reset_index()
    out["bin_start"] = edges[out["bin"]].round(2)
    out["bin_end"] = edges[out["bin"] + 1].round(2)
    out["amount"] = out["amount"].round(2)
    return out[cols]


def largest_discrepancies(findings: pd.DataFrame, n: int = 20) -> pd.DataFrame:
    """The ``n`` findings with the largest discrepancy in absolute value."""
    m = money_findings(findings)
    cols = ["round_id", "game", "table_id", "dealer_id", "day", "started_at", "citation", "rule_id", "direction",
            "discrepancy", "amount", "message"]
    return m.sort_values(["amount", "round_id"], ascending=[False, True], kind="stable").head(n)[
        [c for c in cols if c in m.columns]].reset_index(drop=True)


def cumulative_payouts(findings: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Per day (and ``by``): overpaid, underpaid, and their running totals from the first day.

    Long form, one row per day and direction: day, direction, amount, cumulative.
    """
    m = money_findings(findings)
    keys = ([by] if by else []) + ["day", "direction"]
    if m.empty:
        return pd.DataFrame(columns=keys + ["findings", "amount", "cumulative"])
    g = m.groupby(keys).agg(findings=("amount", "size"), amount=("amount", "sum")).reset_index()
    full = pd.MultiIndex.from_product([sorted(g[k].unique()) for k in keys], names=keys)
    g = g.set_index(keys).reindex(full, fill_value=0).reset_index()
    g = g.sort_values(keys, kind="stable")
    g["cumulative"] = g.groupby(([by] if by else []) + ["direction"])["amount"].cumsum().round(2)
    g["amount"] = g["amount"].round(2)
    return g.reset_index(drop=True)


def over_time(findings: pd.DataFrame, counts: pd.DataFrame, color: str = "severity", by_game: bool = False,
              max_periods: int = 120) -> pd.DataFrame:
    """Findings per 1,000 rounds dealt, per period and ``color`` (and game, for small multiples where games
    mix): the period a day, a week or a month, the finest with at most ``max_periods`` periods.

    ``counts``: :func:`round_counts` with ``date`` (and ``game``). Columns: [game,] period, granularity,
    ``color``, findings, rounds_flagged, rounds (dealt in the period), per_1000.
    """
    keys = ["game"] if by_game else []
    days = pd.to_datetime(counts["date"]) if len(counts) else pd.Series([], dtype="datetime64[ns]")
    span = (days.max() - days.min()).days + 1 if len(days) else 0
    freq, label = next(((f, name) for f, name, per in (("D", "day", 1), ("W", "week", 7), ("M", "month", 31))
                        if span <= max_periods * per), ("Y", "year"))

    def period(dates: pd.Series) -> pd.Series:
        return pd.to_datetime(dates).dt.to_period(freq).dt.start_time.dt.strftime("%Y-%m-%d")

    rounds = counts.assign(period=period(counts["date"])).groupby(keys + ["period"])["rounds"].sum()
    if findings.empty:
        return pd.DataFrame(columns=keys + ["period", "granularity", color, "findings", "rounds_flagged", "rounds",
                                            "per_1000"])
    f = findings.assign(period=period(findings["day"])).groupby(keys + ["period", color], dropna=False).agg(
        findings=("rule_id", "size"), rounds_flagged=("round_id", "nunique")).reset_index()
    f = f.merge(rounds.rename("rounds").reset_index(), on=keys + ["period"], how="left")
    f["per_1000"] = (1000 * f["findings"] / f["rounds"]).round(3)
    f["granularity"] = label
    return f.sort_values(keys + ["period", color], kind="stable").reset_index(drop=True)


def heatmap_frame(findings: pd.DataFrame, rows: str = "table_id", max_cells: int = 4000,
                  counts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Findings per ``rows`` value and period, the period coarsened (day, week, month) to stay under ``max_cells``.

    With ``counts`` (a :func:`round_counts` frame by ``rows`` and ``date``),
    adds ``rounds`` and ``per_1000`` (findings per thousand rounds).
    """
    f = findings.assign(_d=pd.to_datetime(findings["day"]))
    n_rows = max(f[rows].nunique(), 1)
    out = pd.DataFrame()
    for freq, label in (("D", "day"), ("W-MON", "week"), ("MS", "month"), ("YS", "year")):
        period = f["_d"].dt.to_period(freq[0] if freq != "W-MON" else "W").dt.start_time
        n_periods = max(period.nunique(), 1)
        if n_rows * n_periods <= max_cells or label == "year":
            out = f.assign(period=period.dt.strftime("%Y-%m-%d")).groupby([rows, "period"], dropna=False).agg(
                findings=("rule_id", "size"), rounds_flagged=("round_id", "nunique"),
                discrepancy=("discrepancy", lambda s: float(s.abs().sum()))).reset_index()
            out["granularity"] = label
            if rows == "citation" and "severity" in f.columns:  # for the chart's order: severity first
                out["severity"] = out["citation"].map(f.groupby("citation")["severity"].first())
            if counts is not None and not counts.empty:
                c = counts.assign(period=pd.to_datetime(counts["date"]).dt.to_period(
                    freq[0] if freq != "W-MON" else "W").dt.start_time.dt.strftime("%Y-%m-%d"))
                c = c.groupby([rows, "period"])["rounds"].sum().reset_index()
                out = c.merge(out, on=[rows, "period"], how="left").fillna(
                    {"findings": 0, "rounds_flagged": 0, "discrepancy": 0.0, "granularity": label})
                out[["findings", "rounds_flagged"]] = out[["findings", "rounds_flagged"]].astype(np.int64)
                out["per_1000"] = (1000 * out["findings"] / out["rounds"]).round(3)
            break
    return out.sort_values([rows, "period"], kind="stable").reset_index(drop=True)


def period_of(counts: pd.DataFrame) -> tuple[str, str] | None:
    """(first, last) gaming day of :func:`round_counts` by date: the period a chart's time axis spans
    (not from the first finding), or None when no round was dealt."""
    if "date" not in counts or not len(counts):
        return None
    days = counts["date"].astype(str)
    return str(days.min()), str(days.max())


def by_dealer_shift(findings: pd.DataFrame, counts: pd.DataFrame, top: int = 12,
                    min_rounds: int | None = None) -> pd.DataFrame:
    """Findings per 1,000 rounds of each dealer in each shift dealt (the shifts of :func:`shift_of`), for the
    ``top`` dealers by their rate over the period among those with ``min_rounds`` rounds (:data:`MIN_ROUNDS`);
    a shift dealt without a finding is 0. ``counts``: :func:`round_counts` by dealer_id and shift."""
    least = MIN_ROUNDS if min_rounds is None else min_rounds
    cols = ["dealer_id", "shift", "rounds_checked", "findings", "per_1000"]
    if counts.empty or findings.empty:
        return pd.DataFrame(columns=cols)
    dealt = counts.groupby(["dealer_id", "shift"], dropna=False)["rounds"].sum().rename("rounds_checked")
    found = findings.groupby(["dealer_id", "shift"], dropna=False).size().rename("findings")
    g = pd.concat([dealt, found], axis=1).fillna(0).reset_index()
    g = g[g["rounds_checked"] > 0].astype({"rounds_checked": "int64", "findings": "int64"})
    whole = g.groupby("dealer_id")[["findings", "rounds_checked"]].sum()
    whole = whole[whole["rounds_checked"] >= least] if (whole["rounds_checked"] >= least).any() else whole
    worst = (whole["findings"] / whole["rounds_checked"]).sort_values(ascending=False, kind="stable").head(top)
    g = g[g["dealer_id"].isin(worst.index)]
    g["per_1000"] = (1000 * g["findings"] / g["rounds_checked"]).round(3)
    order = {d: i for i, d in enumerate(worst.index)}
    return g.sort_values(["dealer_id", "shift"], key=lambda c: c.map(order) if c.name == "dealer_id" else c,
                         kind="stable")[cols].reset_index(drop=True)


def with_rates(summary: pd.DataFrame, counts: pd.DataFrame, keys: str | list[str]) -> pd.DataFrame:
    """A summary with ``rounds_checked`` (from :func:`round_counts`) and ``per_1000`` findings per thousand rounds."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    c = counts.groupby(keys, dropna=False)["rounds"].sum().rename("rounds_checked").reset_index()
    out = summary.merge(c, on=keys, how="left")
    out["per_1000"] = (1000 * out["findings"] / out["rounds_checked"]).round(3)
    return out


def drill_down(findings: pd.DataFrame, **where: Any) -> pd.DataFrame:
    """The findings behind one bar or cell: ``drill_down(f, citation="paytable", table_id="BAC-01")``.

    A value may be a list (any of them). Keys are findings columns (day, shift, hour included).
    """
    mask = np.ones(len(findings), dtype=bool)
    for col, value in where.items():
        if col not in findings.columns:
            raise KeyError(f"findings have no column {col!r}")
        values = [value] if isinstance(value, (str, int, float)) or value is None else list(value)
        mask &= findings[col].isin(values).to_numpy()
    return findings[mask].reset_index(drop=True)


MIN_ROUNDS = 100
"""Tables and dealers with fewer rounds are left out of the rankings by rate (summary and charts alike)."""


def busy(summary: pd.DataFrame, min_rounds: int = MIN_ROUNDS) -> pd.DataFrame:
    """The rows of a :func:`with_rates` summary with ``min_rounds`` rounds checked or more (all, if none has):
    the same threshold for a notebook's summary and its charts by rate."""
    kept = summary[summary["rounds_checked"] >= min_rounds]
    return kept if len(kept) else summary


def overview(findings: pd.DataFrame, counts: pd.DataFrame, flagged: pd.DataFrame | None = None,
             top: int = 3, min_rounds: int = MIN_ROUNDS) -> dict[str, Any]:
    """The figures of a notebook's opening summary.

    ``counts``: :func:`round_counts` by game, table_id, dealer_id and date;
    ``flagged``: :func:`flagged_groups`. Worst tables and dealers are ranked by
    findings per thousand rounds, among those with ``min_rounds`` rounds or more
    (a dealer of 30 rounds with 4 findings is not the worst), unless none has.
    """
    severity = findings["severity"].value_counts()
    def worst(summary: pd.DataFrame) -> pd.DataFrame:
        return busy(summary, min_rounds).sort_values(["per_1000", "findings"], ascending=False,
                                                     kind="stable").head(top)

    tables = worst(with_rates(by_table(findings), counts, ["game", "table_id"]))
    dealers = worst(with_rates(by_dealer(findings), counts, "dealer_id"))
    dates = sorted(counts["date"].unique()) if "date" in counts and len(counts) else []
    return {
        "rounds": int(counts["rounds"].sum()) if len(counts) else 0,
        "first_day": dates[0] if dates else None, "last_day": dates[-1] if dates else None,
        "days": len(dates), "findings": len(findings), "rounds_flagged": int(findings["round_id"].nunique()),
        "by_severity": {k: int(severity.get(k, 0)) for k in SEVERITIES},
        "money": payout_totals(findings),
        "reviews": {k: int(v) for k, v in findings["status"].value_counts().items()} if "status" in findings else {},
        "tables": tables, "dealers": dealers, "min_rounds": min_rounds,
        "flagged": flagged if flagged is not None else pd.DataFrame(),
    }
