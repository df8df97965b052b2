"""Who and where, per game: the worst tables and dealers by findings per 1,000 rounds (with their
money), the findings with money beside the procedure findings (none), the improbable outcome
frequencies, and the dealers by shift: what a report page says before its rows (:mod:`auditkit.runreport`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .money import format_money

if TYPE_CHECKING:
    from .reportcontext import ReportContext

__all__ = ["who_and_where", "worst", "dealer_by_shift", "SHOWN"]

SHOWN = 2  # tables, dealers and improbable groups named per game on the first screen


def worst(findings: pd.DataFrame, rounds: pd.DataFrame, key: str, top: int = SHOWN) -> pd.DataFrame:
    """The ``top`` groups of ``key`` (table_id, dealer_id) per game with the most findings per 1,000
    rounds, among those with :data:`auditkit.analysis.MIN_ROUNDS` rounds or more (all, if none has)."""
    from .analysis import busy, with_rates
    from .summaries import summarize

    if findings.empty:
        return pd.DataFrame(columns=["game", key, "findings", "rounds", "overpaid", "underpaid", "rounds_checked",
                                     "per_1000"])
    rated = with_rates(summarize(findings, ["game", key]), rounds, ["game", key])
    out = [busy(g).sort_values(["per_1000", "findings"], ascending=False, kind="stable").head(top)
           for _, g in rated.groupby("game", sort=False)]
    return pd.concat(out, ignore_index=True)


def _named(rows: pd.DataFrame, key: str) -> list[str]:
    """``BJ-02: 52.0 (91 of 1,750 rounds; under 5,004.00)`` per row: findings per 1,000 rounds, findings
    of rounds, the money overpaid and underpaid."""
    out = []
    for r in rows.itertuples(index=False):
        money = [f"{w} {format_money(v)}" for w, v in (("overpaid", r.overpaid), ("underpaid", r.underpaid)) if v]
        rounds = f" of {int(r.rounds_checked):,} rounds" if r.rounds_checked == r.rounds_checked else ""
        rate = f"{r.per_1000:.1f}" if r.per_1000 == r.per_1000 else "-"
        out.append(f"{getattr(r, key)}: {rate} ({r.findings:,}{rounds}" + "".join(f"; {m}" for m in money) + ")")
    return out or ["none"]


def _improbable(flagged: pd.DataFrame | None, game: str, top: int = SHOWN) -> list[str]:
    if flagged is None:
        return ["not tested"]
    rows = flagged[flagged["game"] == game].sort_values("p_adjusted", kind="stable").head(top)
    return [f"{r.level} {r.group}: {r.event} {r.rate:.1%} against {r.expected_rate:.1%} in {int(r.trials):,} rounds "
            f"(adjusted p {r.p_adjusted:.1e})" for r in rows.itertuples(index=False)] or ["none"]


def who_and_where(findings: pd.DataFrame, context: ReportContext) -> pd.DataFrame:
    """One row per game of the rounds behind the report: rounds, findings with money and without
    (procedure), the money, the worst tables and dealers, the improbable outcome frequencies."""
    rounds = context.rounds
    per_game = rounds.groupby("game", sort=False)["rounds"].sum()
    tables = worst(findings, rounds, "table_id")
    dealers = worst(findings, rounds, "dealer_id")
    rows = []
    for game, n in per_game.items():
        f = findings[findings["game"] == game] if len(findings) else findings
        d = f["discrepancy"].astype(np.float64) if len(f) else pd.Series(dtype=np.float64)
        money = (d.fillna(0) != 0).to_numpy()
        rows.append({"game": game, "rounds": int(n), "findings with money": int(money.sum()),
                     "procedure findings (no money)": int((~money).sum()),
                     f"overpaid {context.currency}": round(float(d[d > 0].sum()), 2) + 0.0,
                     f"underpaid {context.currency}": round(float(-d[d < 0].sum()), 2) + 0.0,
                     "worst tables":
                         _named(tables[tables["game"] == game], "table_id"),
                     "worst dealers":
                         _named(dealers[dealers["game"] == game], "dealer_id"),
                     "improbable outcome frequencies": _improbable(context.flagged, game)})
    return pd.DataFrame(rows)


def dealer_by_shift(findings: pd.DataFrame, rounds: pd.DataFrame, top: int = SHOWN) -> pd.DataFrame:
    """Findings per 1,000 rounds of each game's worst dealers in each shift they dealt, rounds in
    brackets (``12.5 (800)``); empty when the rounds carry no shift."""
    from .analysis.shifts import _local_hour, shift_of

    if findings.empty or "shift" not in rounds or not len(rounds):
        return pd.DataFrame()
    dealers = worst(findings, rounds, "dealer_id", top)
    f = findings.assign(shift=shift_of(_local_hour(findings["started_at"])))
    found = f.groupby(["game", "dealer_id", "shift"]).size()
    dealt = rounds.groupby(["game", "dealer_id", "shift"])["rounds"].sum()
    shifts = [s for s in ("day", "swing", "grave", "other") if s in set(rounds["shift"])]
    out = []
    for r in dealers.itertuples(index=False):
        row = {"game": r.game, "dealer": r.dealer_id}
        for s in shifts:
            n = int(dealt.get((r.game, r.dealer_id, s), 0))
            k = int(found.get((r.game, r.dealer_id, s), 0))
            row[s] = f"{1000 * k / n:.1f} ({n:,})" if n else ""
        out.append(row)
    return pd.DataFrame(out)
