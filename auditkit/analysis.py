"""The auditors' analysis API: findings and rounds out of a store, summaries, drill-down,
expected versus observed outcome frequencies, and hold.

Everything here aggregates in pandas before anything is charted, and reads the
store one partition (game and gaming day) at a time with only the columns it
needs, so a notebook over ten million rounds holds summaries, never rounds.

Definitions used throughout:

* **day** is the gaming day of the store's partition (the local date of
  ``started_at``); **hour** is the local hour the log wrote.
* **shift** is named by local hour ranges, ``{"day": (6, 14), "swing": (14, 22),
  "grave": (22, 6)}`` by default (start inclusive, end exclusive, wrapping
  midnight); pass your own mapping to any function taking ``shifts``.
* **overpaid** is the sum of positive discrepancies (recorded net above the
  expected net: the patron got too much), **underpaid** the sum of the negative
  ones, as a positive amount.
* **drop** here is the *handle*: the sum of stakes of completed rounds (blackjack
  doubles and splits counted at their total wager; three card poker ante + play
  + pair plus). **win** is the house's net win, ``-sum(patron nets)``
  (three card poker's ante bonus included), and **hold = win / drop**. Cash
  drop (the drop box) is not in a hand-history log; this is the closest figure
  a log supports. Void and dead rounds (every wager returned) are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from . import games as registered
from .columns import flat_values, parents, to_numpy
from .schema import schema_for
from .status import SEVERITIES
from .store import Store
from .summaries import payout_totals
from .summaries import summarize as _summarize
from .tables import cards_text, events_text, hand_lines, readable, relative_to, wagers_text

__all__ = [
    "DEFAULT_SHIFTS", "open_store", "shift_of", "load_findings", "coverage", "iter_rounds", "load_rounds", "round_counts",
    "summarize", "by_citation", "by_table", "by_dealer", "by_shift", "by_day", "payout_totals",
    "money_findings", "discrepancy_bins", "largest_discrepancies", "cumulative_payouts", "heatmap_frame", "over_time",
    "with_rates", "readable", "overview", "MIN_ROUNDS", "busy", "period_of", "by_dealer_shift",
    "drill_down", "rounds_behind", "outcome_counts",
    "expected_vs_observed", "flagged_groups", "funnel_limits", "hold",
]

DEFAULT_SHIFTS: dict[str, tuple[int, int]] = {"day": (6, 14), "swing": (14, 22), "grave": (22, 6)}
"""Shift name -> (first local hour, hour it ends), end exclusive; a range may wrap midnight."""

StoreLike = Store | str | Path


def open_store(store: StoreLike) -> Store:
    """A :class:`Store` from a store or its folder."""
    if isinstance(store, Store):
        return store
    path = Path(store)
    if not Store.is_store(path):
        raise FileNotFoundError(f"no auditkit store at {path} (run `auditkit ingest` first)")
    return Store(path)


def _as_list(value: str | Iterable[str] | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    out = list(value)
    return out or None


# ---- shifts ---------------------------------------------------------------------------------
def shift_of(hours: Sequence[int] | np.ndarray | pd.Series,
             shifts: Mapping[str, tuple[int, int]] | None = None) -> np.ndarray:
    """The shift name of each local hour (``"other"`` for an hour no range covers)."""
    shifts = DEFAULT_SHIFTS if shifts is None else shifts
    h = np.asarray(hours, dtype=np.int64)
    out = np.full(h.shape, "other", dtype=object)
    for name, (start, end) in shifts.items():
        if not (0 <= start < 24 and 0 <= end <= 24):
            raise ValueError(f"shift {name!r}: hours must be within 0..24, got {(start, end)}")
        inside = (h >= start) & (h < end) if start < end else (h >= start) | (h < end)
        out[inside & (out == "other")] = name
    return out


def _local_hour(started_at: pd.Series) -> np.ndarray:
    """Local hour of ISO 8601 local timestamps (``2025-06-02T09:21:45-05:00`` -> 9)."""
    if started_at.empty:
        return np.empty(0, dtype=np.int64)
    return pd.to_numeric(started_at.astype(str).str.slice(11, 13), errors="coerce").fillna(0).astype(np.int64).to_numpy()


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
    from .reviews import latest, with_reviews

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
    from .reportcoverage import from_parquet, of_store

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


# ---- rounds ---------------------------------------------------------------------------------
def _filter(tables: list[str] | None, dealers: list[str] | None, round_ids: list[str] | None = None) -> Any:
    expr = None
    for col, values in (("table_id", tables), ("dealer_id", dealers), ("round_id", round_ids)):
        if values is not None:
            e = pc.field(col).isin(values)
            expr = e if expr is None else expr & e
    return expr


def iter_rounds(store: StoreLike, game: str, start: str | None = None, end: str | None = None, *,
                tables: str | Iterable[str] | None = None, dealers: str | Iterable[str] | None = None,
                columns: Sequence[str] | None = None,
                round_ids: Iterable[str] | None = None) -> Iterator[tuple[str, pa.Table]]:
    """``(date, table)`` per stored day of ``game``, only the given columns, table/dealer filters pushed down."""
    st = open_store(store)
    flt = _filter(_as_list(tables), _as_list(dealers), _as_list(round_ids))
    for date in st.dates(game, start, end):
        # the store's own dataset: a folder's, an object store's or a one-shot's held in memory alike
        t = st._dataset(game, date).to_table(columns=list(columns) if columns else None, filter=flt)
        if t.num_rows:
            yield date, t


def load_rounds(store: StoreLike, game: str, start: str | None = None, end: str | None = None, *,
                tables: str | Iterable[str] | None = None, dealers: str | Iterable[str] | None = None,
                columns: Sequence[str] | None = None) -> pa.Table:
    """Rounds of ``game`` in [start, end] as one Arrow table with a ``date`` column.

    Name the columns you need: the whole history of a big store does not fit in
    memory; aggregate per day with :func:`iter_rounds` instead.
    """
    out = [t.append_column("date", pa.array([d] * t.num_rows, pa.string()))
           for d, t in iter_rounds(store, game, start, end, tables=tables, dealers=dealers, columns=columns)]
    if not out:
        schema = schema_for(game)
        if columns:
            schema = pa.schema([schema.field(c) for c in columns])
        return schema.append(pa.field("date", pa.string())).empty_table()
    return pa.concat_tables(out)


def round_counts(store: StoreLike, start: str | None = None, end: str | None = None, *,
                 games: str | Iterable[str] | None = None, tables: str | Iterable[str] | None = None,
                 dealers: str | Iterable[str] | None = None,
                 by: Sequence[str] = ("game", "table_id", "date"),
                 shifts: Mapping[str, tuple[int, int]] | None = None) -> pd.DataFrame:
    """Number of stored rounds per group (keys among game, table_id, dealer_id, date, day, hour, shift)."""
    st = open_store(store)
    keys = list(by)
    frames = []
    for game in _as_list(games) or st.games():
        for date, t in iter_rounds(st, game, start, end, tables=tables, dealers=dealers,
                                   columns=["table_id", "dealer_id", "started_at", "utc_offset"]):
            f = pd.DataFrame({"table_id": t["table_id"].to_numpy(zero_copy_only=False),
                              "dealer_id": t["dealer_id"].to_numpy(zero_copy_only=False)})
            f["game"], f["date"], f["day"] = game, date, date
            if {"hour", "shift"} & set(keys):
                local = pd.to_datetime(t["started_at"].to_numpy(zero_copy_only=False)) + pd.to_timedelta(
                    t["utc_offset"].to_numpy(zero_copy_only=False).astype(np.int64), unit="min")
                f["hour"] = np.asarray(local.hour, dtype=np.int64)
                f["shift"] = shift_of(f["hour"], shifts)
            frames.append(f.groupby(keys, dropna=False).size().rename("rounds").reset_index())
    if not frames:
        return pd.DataFrame(columns=keys + ["rounds"])
    return pd.concat(frames).groupby(keys, dropna=False)["rounds"].sum().reset_index()


def _local_text(utc: pd.Series, offset: pd.Series) -> pd.Series:
    """``2025-06-01 10:05:50 (UTC-05:00)``: the local time the log wrote."""
    off = offset.fillna(0).astype(np.int64)
    local = pd.to_datetime(utc, utc=True).dt.tz_localize(None) + pd.to_timedelta(off, unit="m")
    sign = np.where(off < 0, "-", "+")
    zone = [f"UTC{s}{abs(o) // 60:02d}:{abs(o) % 60:02d}" for s, o in zip(sign, off, strict=True)]
    return local.dt.strftime("%Y-%m-%d %H:%M:%S") + " (" + pd.Series(zone, index=utc.index) + ")"


def logs_folder(store: StoreLike) -> str | None:
    """The folder holding every source the store has read (their longest common folder), or None: the
    folder :func:`rounds_behind` writes source files relative to."""
    import os

    dirs = {os.path.dirname(s.path) for s in open_store(store).manifest()}
    try:
        return os.path.commonpath(sorted(dirs)) if dirs else None
    except ValueError:  # relative and absolute paths mixed
        return None


def rounds_behind(store: StoreLike, findings: pd.DataFrame, columns: Sequence[str] | None = None,
                  limit: int = 1000) -> dict[str, pd.DataFrame]:
    """The stored rounds behind some findings (at most ``limit`` per game), written as a person reads them.

    Returns one frame per game (their columns differ), with the rule ids of the
    findings on each round in ``rules``; cards as ``A♥ 10♦ 4♠``, wagers as
    ``seat 2 banker 25.00 → +23.75``, a hand per line with its cards, stakes and
    payouts and events in words (:mod:`auditkit.tables`), ``started_at`` as local
    time with its offset, source files relative to :func:`logs_folder`.
    """
    st = open_store(store)
    out: dict[str, pd.DataFrame] = {}
    for game, f in findings.groupby("game"):
        ids = list(dict.fromkeys(f["round_id"]))[:limit]
        dates = sorted(f.loc[f["round_id"].isin(ids), "date"].unique())
        frames = []
        for date in dates:
            for _d, t in iter_rounds(st, str(game), date, date, round_ids=ids, columns=columns):
                frames.append(t)
        if not frames:
            continue
        t = pa.concat_tables(frames).sort_by("started_at")
        nested = [c for c in t.column_names if pa.types.is_list(t.schema.field(c).type)]
        frame = t.drop_columns(nested).to_pandas(  # integers stay integers where some are missing
            types_mapper=lambda typ: pd.Int64Dtype() if pa.types.is_integer(typ) else None)
        for c in nested:  # a few drilled rounds: formatted one by one (auditkit.tables)
            typ = t.schema.field(c).type
            if pa.types.is_int8(typ.value_type) and c != "dice":
                frame[c] = [cards_text(v) for v in t[c].to_pylist()]
            elif c == "wagers":
                frame[c] = [wagers_text(w) for w in t[c].to_pylist()]
            elif c == "hands":
                frame[c] = [hand_lines(str(game), hs) for hs in t[c].to_pylist()]
            elif c == "events":
                frame[c] = [events_text(str(game), e) for e in t[c].to_pylist()]
            else:
                frame[c] = [" ".join(str(x) for x in v or []) for v in t[c].to_pylist()]
        if "source_file" in frame:
            frame["source_file"] = relative_to(frame["source_file"], logs_folder(st))
        if "started_at" in frame and "utc_offset" in frame:
            frame["started_at"] = _local_text(frame["started_at"], frame.pop("utc_offset"))
        rules = f.groupby("round_id")["rule_id"].agg(lambda s: ", ".join(sorted(set(s))))
        frame["rules"] = frame["round_id"].map(rules)
        first = ["round_id", "started_at", "table_id", "dealer_id"]
        last = ["wagers", "rules", "status", "events", "shoe_id", "round_seq", "source_file", "source_line"]
        game_cols = sorted((c for c in frame.columns if c not in first + last),  # the cards, then the hands
                           key=lambda c: 0 if c.endswith("_cards") or c == "dice" else 1 if c == "hands" else 2)
        frame = frame.drop(columns=[c for c in ("wagers", "events") if c in frame and not frame[c].astype(bool).any()])
        out[str(game)] = frame[[c for c in first + game_cols + last if c in frame.columns]].reset_index(drop=True)
    return out


# ---- observed outcomes ------------------------------------------------------------------------
GRAIN = ["game", "date", "table_id", "dealer_id", "shoe_id"]


def outcome_counts(store: StoreLike, start: str | None = None, end: str | None = None, *,
                   games: str | Iterable[str] | None = None, tables: str | Iterable[str] | None = None,
                   dealers: str | Iterable[str] | None = None, config: Any = None) -> pd.DataFrame:
    """Observed and expected counts of each game's events, per game, day, table, dealer and shoe.

    Long form: one row per group and event, with ``trials``, ``observed`` and
    ``expected`` (sum of the per-round probabilities) and ``variance`` (sum of
    p(1-p)). Only completed rounds count. Baccarat uses the cards as dealt
    (not the recorded outcome); blackjack counts rounds in which the dealer had
    to play out (a patron hand still live) and not holding a blackjack, with the
    probability given its upcard; three card poker counts every round.
    Aggregated per day, so memory stays bounded by a day of narrow columns.
    """
    from .paytables import Config

    config = config or Config()
    st = open_store(store)
    frames = []
    for game in _as_list(games) or st.games():
        theory = registered.get(game).theory
        if theory is None or not theory.EVENTS:
            continue
        cols = ["table_id", "dealer_id", "shoe_id", "status", *theory.EVENT_COLUMNS]
        for date, t in iter_rounds(st, game, start, end, tables=tables, dealers=dealers, columns=cols):
            completed = to_numpy(pc.equal(t["status"], "completed"), False).astype(bool)
            keys = pd.DataFrame({c: t[c].to_numpy(zero_copy_only=False) for c in ("table_id", "dealer_id", "shoe_id")})
            keys[["dealer_id", "shoe_id"]] = keys[["dealer_id", "shoe_id"]].fillna("")
            for event, ok, hit, p in theory.events(t, config, game):
                ok = ok & completed
                frames.append(_group(keys[ok], game, date, event, hit[ok], p[ok]))
    cols = GRAIN + ["event", "trials", "observed", "expected", "variance"]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)[cols]


def _group(keys: pd.DataFrame, game: str, date: str, event: str, hit: np.ndarray, p: np.ndarray) -> pd.DataFrame:
    f = keys.assign(observed=hit.astype(np.int64), expected=p, variance=p * (1 - p))
    by = f.groupby(["table_id", "dealer_id", "shoe_id"], dropna=False)
    g = by[["observed", "expected", "variance"]].sum()  # plain sums: a named aggregation costs 3 times more
    g.insert(0, "trials", by.size())
    g = g.reset_index()
    g.insert(0, "date", date)
    g.insert(0, "game", game)
    g["event"] = event
    return g


def expected_vs_observed(counts: pd.DataFrame, by: str | Sequence[str] = "table_id", *, alpha: float = 0.01,
                         adjust: str = "holm", min_trials: int = 30) -> pd.DataFrame:
    """Observed against theoretical frequency per game, event and group, with an exact binomial test.

    ``by``: table_id, dealer_id, shoe_id, date (or several). For each group the
    two-sided binomial test compares ``observed`` out of ``trials`` with the
    group's expected rate (``expected / trials``). P-values are adjusted over
    the groups and events of each game (Holm by default; ``"none"`` or
    ``"bonferroni"``), and ``flagged`` marks adjusted p-values below ``alpha``:
    with many tables some raw p-values are small by chance alone. Baccarat
    groups also carry ``chi2_p``, the chi-square test of the three outcomes
    together. Groups with fewer than ``min_trials`` are reported, never flagged.
    """
    from scipy import stats

    keys = [by] if isinstance(by, str) else list(by)
    cols = ["game", *keys, "event", "trials", "observed", "expected", "rate", "expected_rate", "z", "p_value",
            "p_adjusted", "flagged", "chi2_p"]
    if counts.empty:
        return pd.DataFrame(columns=cols)
    g = counts.groupby(["game", *keys, "event"], dropna=False)[["trials", "observed", "expected", "variance"]] \
        .sum().reset_index()
    g = g[g["trials"] > 0].reset_index(drop=True)
    g["rate"] = g["observed"] / g["trials"]
    g["expected_rate"] = g["expected"] / g["trials"]
    g["z"] = (g["observed"] - g["expected"]) / np.sqrt(g["variance"].clip(lower=1e-12))
    g["p_value"] = [stats.binomtest(int(k), int(n), float(min(max(p, 1e-12), 1 - 1e-12))).pvalue
                    for k, n, p in zip(g["observed"], g["trials"], g["expected_rate"], strict=True)]  # one per group
    g["chi2_p"] = np.nan
    bac = g["game"].isin([n for x in registered.games() if x.theory and x.theory.EXCLUSIVE for n in x.names])
    if bac.any():
        wide = g[bac].pivot_table(index=["game", *keys], columns="event", values=["observed", "expected"],
                                  aggfunc="sum", dropna=False)
        obs, exp = wide["observed"].to_numpy(float), wide["expected"].to_numpy(float)
        chi = ((obs - exp) ** 2 / np.where(exp > 0, exp, np.nan)).sum(axis=1)
        chi_p = pd.Series(stats.chi2.sf(chi, df=obs.shape[1] - 1), index=wide.index, name="chi2_p")
        g = g.drop(columns="chi2_p").merge(chi_p.reset_index(), on=["game", *keys], how="left")
    g["p_adjusted"] = g["p_value"]
    for _game, idx in g.groupby("game").groups.items():
        g.loc[idx, "p_adjusted"] = _adjust(g.loc[idx, "p_value"].to_numpy(), adjust)
    g["flagged"] = (g["p_adjusted"] < alpha) & (g["trials"] >= min_trials)
    return g[cols].sort_values(["game", "p_value"], kind="stable").reset_index(drop=True)


def flagged_groups(counts: pd.DataFrame, levels: Sequence[str] = ("table_id", "dealer_id", "shoe_id"), *,
                   alpha: float = 0.01) -> pd.DataFrame:
    """The groups :func:`expected_vs_observed` flags at each level, in one frame: ``level`` (table, dealer,
    shoe) and ``group`` (its id), then game, event and the test's figures."""
    cols = ["level", "group", "game", "event", "trials", "observed", "expected", "rate", "expected_rate", "z",
            "p_value", "p_adjusted"]
    frames = []
    for key in levels:
        eo = expected_vs_observed(counts, key, alpha=alpha)
        eo = eo[eo["flagged"]]
        if len(eo):
            frames.append(eo.rename(columns={key: "group"}).assign(level=key.replace("_id", "")))
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def _adjust(p: np.ndarray, method: str) -> np.ndarray:
    m = len(p)
    if method == "none" or m == 0:
        return p
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    if method != "holm":
        raise ValueError(f"unknown p-value adjustment {method!r}: holm, bonferroni or none")
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def funnel_limits(p: float, n_max: int, levels: Sequence[float] = (0.95, 0.998), points: int = 80,
                  n_min: int = 10) -> pd.DataFrame:
    """Control limits of a funnel plot for a rate ``p``: exact binomial quantiles on a log grid of trials.

    Long form: trials, level, lower, upper (as rates). A group outside the
    99.8 % limits is improbable at about 1 in 500 (two-sided) before any
    adjustment for the number of groups.
    """
    from scipy import stats

    n = np.unique(np.geomspace(max(n_min, 1), max(n_max, n_min + 1), points).round().astype(np.int64))
    frames = []
    for level in levels:
        a = (1 - level) / 2
        lo = stats.binom.ppf(a, n, p) / n
        hi = stats.binom.ppf(1 - a, n, p) / n
        frames.append(pd.DataFrame({"trials": n, "level": f"{level:.1%}", "lower": lo, "upper": hi}))
    return pd.concat(frames, ignore_index=True)


# ---- hold -------------------------------------------------------------------------------------
def _stakes_and_nets(t: pa.Table, game: str) -> tuple[np.ndarray, np.ndarray]:
    """Per round: sum of stakes and sum of patron nets (the wagers list, and the game's hands)."""
    n = t.num_rows
    stake = np.zeros(n)
    net = np.zeros(n)

    def add(values: pa.Array, owner: np.ndarray, into: np.ndarray) -> None:
        into += np.bincount(owner, weights=to_numpy(values, 0.0).astype(np.float64), minlength=n)

    w = flat_values(t["wagers"])
    owner = parents(t["wagers"])
    add(w.field("amount"), owner, stake)
    add(w.field("net"), owner, net)
    theory = registered.get(game).theory
    for col in theory.STAKE_COLUMNS if theory else ():
        owner = parents(t[col])
        stakes, nets = theory.stakes_and_nets(flat_values(t[col]))
        for f in stakes:
            add(f, owner, stake)
        for f in nets:
            add(f, owner, net)
    return stake, net


def hold(store: StoreLike, start: str | None = None, end: str | None = None, *,
         games: str | Iterable[str] | None = None, tables: str | Iterable[str] | None = None,
         dealers: str | Iterable[str] | None = None, by: Sequence[str] = ("game", "table_id", "date")) -> pd.DataFrame:
    """Drop (sum of stakes), win (``-sum of patron nets``) and hold = win / drop per group.

    Completed rounds only (void and dead rounds return every wager). ``by``
    among game, table_id, dealer_id, date.
    """
    st = open_store(store)
    keys = list(by)
    frames = []
    for game in _as_list(games) or st.games():
        theory = registered.get(game).theory
        cols = ["table_id", "dealer_id", "status", "wagers", *(theory.STAKE_COLUMNS if theory else [])]
        for date, t in iter_rounds(st, game, start, end, tables=tables, dealers=dealers, columns=cols):
            completed = to_numpy(pc.equal(t["status"], "completed"), False).astype(bool)
            stake, net = _stakes_and_nets(t, game)
            f = pd.DataFrame({"table_id": t["table_id"].to_numpy(zero_copy_only=False),
                              "dealer_id": t["dealer_id"].to_numpy(zero_copy_only=False),
                              "drop": stake, "win": -net})[completed]
            f["game"], f["date"] = game, date
            frames.append(f.groupby(keys, dropna=False).agg(
                rounds=("drop", "size"), drop=("drop", "sum"), win=("win", "sum")).reset_index())
    if not frames:
        return pd.DataFrame(columns=keys + ["rounds", "drop", "win", "hold"])
    out = pd.concat(frames).groupby(keys, dropna=False)[["rounds", "drop", "win"]].sum().reset_index()
    out[["drop", "win"]] = out[["drop", "win"]].round(2)
    out["hold"] = np.where(out["drop"] > 0, out["win"] / out["drop"].where(out["drop"] > 0, 1), np.nan)
    return out
