"""Observed outcome frequencies against theory: counts per group, tests with adjusted p-values, the
groups flagged, funnel limits."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from .. import games as registered
from ..columns import to_numpy
from .rounds import StoreLike, _as_list, iter_rounds, open_store

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
    from ..paytables import Config

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
