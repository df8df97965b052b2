"""The notebooks' polish (issue 42, item 7): the expected-versus-observed table reads as a table, the
hold by table is not set by a table of a handful of rounds, the funnel's improbable points are named in
a static page, time axes span the period checked, and a dealer's findings by shift have a view."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("altair")
pytest.importorskip("scipy")

from auditkit import analysis as A  # noqa: E402
from auditkit import charts as C  # noqa: E402
from auditkit.vega import static_svg  # noqa: E402

PERIOD = ("2025-06-01", "2025-07-05")


def _outcomes() -> pd.DataFrame:
    """Outcome counts of baccarat at three tables, BAC-X far from theory."""
    rows = []
    for table, banker in (("BAC-1", 459), ("BAC-2", 455), ("BAC-X", 380)):
        for event, observed, p in (("banker", banker, 0.458597), ("player", 1000 - banker - 95, 0.446247),
                                   ("tie", 95, 0.095156)):
            rows.append({"game": "baccarat", "date": "2025-06-01", "table_id": table, "dealer_id": "D1",
                         "shoe_id": f"{table}-S1", "event": event, "trials": 1000, "observed": observed,
                         "expected": 1000 * p, "variance": 1000 * p * (1 - p)})
    return pd.DataFrame(rows)


def _html(styled) -> str:
    return styled.to_html()


def test_the_expected_versus_observed_table_is_narrow_named_and_in_words():
    eo = A.expected_vs_observed(_outcomes(), "table_id")
    assert eo["flagged"].any()
    assert "28em" not in _html(C.table(eo))  # a number named `expected` is no column of sentences
    text = _html(C.outcomes_table(eo))
    heads = re.findall(r"<th [^>]*col_heading[^>]*>([^<]*)</th>", text)
    assert heads[:4] == ["game", "table", "event", "rounds"]
    assert {"expected count", "observed rate", "expected rate", "adjusted p (Holm)", "improbable",
            "chi-square p (the three outcomes)"} <= set(heads)
    assert "True" not in text and "False" not in text and ">yes<" in text and "28em" not in text
    flagged = A.flagged_groups(_outcomes())
    assert {"group", "adjusted p (Holm)"} <= set(re.findall(r"col_heading[^>]*>([^<]*)<",
                                                             _html(C.outcomes_table(flagged))))


def test_hold_by_table_leaves_out_a_table_of_a_handful_of_rounds():
    frame = pd.DataFrame({"game": "baccarat", "table_id": ["BAC-1", "BAC-2", "BAC-TINY"], "rounds": [900, 850, 6],
                          "drop": [90_000.0, 85_000.0, 600.0], "win": [1_200.0, 900.0, 600.0],
                          "hold": [0.0133, 0.0106, 1.0]})
    spec = C.hold_by_table(frame).to_dict()
    values = next(iter(spec["datasets"].values()))
    assert {v["table_id"] for v in values} == {"BAC-1", "BAC-2"}
    assert "1 table(s) with fewer than 100 rounds left out" in str(spec["title"])
    every = next(iter(C.hold_by_table(frame, min_rounds=1).to_dict()["datasets"].values()))
    assert {v["table_id"] for v in every} == {"BAC-1", "BAC-2", "BAC-TINY"}


def test_the_funnels_improbable_points_are_named_in_a_static_page():
    eo = A.expected_vs_observed(_outcomes(), "table_id")
    banker = eo[eo["event"] == "banker"]
    chart = C.funnel_plot(banker, A.funnel_limits(0.458597, 1000))
    svg = static_svg(chart.to_dict())
    names = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "BAC-X" in names and "BAC-1" not in names  # the improbable table only


def _axis(spec: dict) -> list[str]:
    found = []

    def walk(node):
        if isinstance(node, dict):
            x = node.get("encoding", {}).get("x") if isinstance(node.get("encoding"), dict) else None
            if x and "scale" in x and "domain" in x["scale"]:
                found.append(x["scale"]["domain"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(spec)
    return found[0]


def test_time_axes_span_the_period_not_from_the_first_finding():
    frame = pd.DataFrame({"period": ["2025-06-16", "2025-06-20"], "granularity": "day", "severity": "high",
                          "findings": [2, 3], "rounds_flagged": [2, 3], "rounds": [100, 100], "per_1000": [20.0, 30.0]})
    days = _axis(C.findings_over_time(frame, period=PERIOD).to_dict())
    assert days[0] == "Jun 01" and days[-1] == "Jul 05" and len(days) == 35
    assert _axis(C.findings_over_time(frame).to_dict())[0] == "Jun 16"  # without the period: the findings' days
    weeks = frame.assign(period=["2025-06-09", "2025-06-16"], granularity="week")
    assert _axis(C.findings_over_time(weeks, period=PERIOD).to_dict())[:2] == ["May 26", "Jun 02"]
    findings = pd.DataFrame({"day": ["2025-06-09", "2025-06-12"], "discrepancy": [5.0, -10.0],
                             "rule_id": "r", "round_id": ["a", "b"]})
    days = _axis(C.cumulative_payouts(A.cumulative_payouts(findings), period=PERIOD).to_dict())
    assert days[0] == "Jun 01" and days[-1] == "Jul 05"
    counts = pd.DataFrame({"date": ["2025-06-03", "2025-06-01", "2025-07-05"], "rounds": [1, 2, 3]})
    assert A.period_of(counts) == PERIOD and A.period_of(counts.iloc[:0]) is None


def test_a_dealers_findings_by_shift():
    counts = pd.DataFrame({"dealer_id": ["D3105", "D3105", "D3105", "D1", "D1", "D1", "D2"],
                           "shift": ["day", "swing", "grave", "day", "swing", "grave", "day"],
                           "rounds": [400, 400, 200, 400, 400, 200, 20]})
    findings = pd.DataFrame({"dealer_id": ["D3105"] * 20 + ["D1", "D2"],
                             "shift": ["swing"] * 20 + ["day", "day"], "rule_id": "r"})
    table = A.by_dealer_shift(findings, counts)
    assert list(dict.fromkeys(table["dealer_id"])) == ["D3105", "D1"]  # D2 dealt too few rounds to rank
    cell = table.set_index(["dealer_id", "shift"])
    assert cell.loc[("D3105", "swing"), "per_1000"] == 50.0 and cell.loc[("D3105", "day"), "per_1000"] == 0.0
    assert cell.loc[("D3105", "swing"), "rounds_checked"] == 400
    spec = C.dealer_shifts(table).to_dict()
    values = next(iter(spec["datasets"].values()))
    assert len(values) == len(table) and np.isclose(max(v["per_1000"] for v in values), 50.0)
    svg = static_svg(spec)
    assert "50.0" in svg and "D3105" in svg and "swing" in svg
