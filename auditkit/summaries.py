"""Findings summed up: counts of findings and rounds, overpaid and underpaid money, by rule, table, dealer
and day (the summaries every report shows; :mod:`auditkit.report` writes them as CSV)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .schema import SUMMARIES

__all__ = ["payout_totals", "summarize", "summary_by_citation"]


def payout_totals(findings: pd.DataFrame) -> dict[str, float]:
    """Money the findings show, never netted: overpaid (recorded above expected) and underpaid, both
    positive, their difference ``net``, and how many findings are behind each."""
    d = findings["discrepancy"].astype(np.float64)
    over, under = float(d[d > 0].sum()), float(-d[d < 0].sum())
    return {"overpaid": round(over, 2) + 0.0, "underpaid": round(under, 2) + 0.0, "net": round(over - under, 2) + 0.0,
            "overpaid_findings": int((d > 0).sum()), "underpaid_findings": int((d < 0).sum())}


def summarize(findings: pd.DataFrame, by: str | list[str]) -> pd.DataFrame:
    """Counts of findings and rounds, overpaid and underpaid money, grouped by columns of the findings."""
    keys = [by] if isinstance(by, str) else list(by)
    f = findings.assign(
        overpaid=findings["discrepancy"].clip(lower=0),
        underpaid=(-findings["discrepancy"]).clip(lower=0),
    )
    out = f.groupby(keys, dropna=False, sort=True).agg(
        findings=("rule_id", "size"), rounds=("round_id", "nunique"),
        overpaid=("overpaid", "sum"), underpaid=("underpaid", "sum"),
    ).reset_index()
    out[["overpaid", "underpaid"]] = out[["overpaid", "underpaid"]].round(2) + 0.0  # never -0.00
    return out.sort_values(["findings"] + keys, ascending=[False] + [True] * len(keys), kind="stable") \
        .reset_index(drop=True)


def summary_by_citation(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings per game, citation and rule, with severity."""
    return summarize(findings, SUMMARIES["citation"])
