"""Chart specs show the fields an auditor needs, stay small, and save offline."""

from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("altair")
pytest.importorskip("scipy")

from sample_store import BIASED_TABLE, sample_store  # noqa: E402

from auditkit import analysis as A  # noqa: E402
from auditkit import charts as C  # noqa: E402
from auditkit.games.baccarat.theory import baccarat_probabilities  # noqa: E402


@pytest.fixture(scope="module")
def findings() -> pd.DataFrame:
    return A.load_findings(sample_store())


def _layers(spec: dict) -> list[dict]:
    out = [spec]
    for key in ("layer", "vconcat", "hconcat", "concat"):
        for sub in spec.get(key, []):
            out.extend(_layers(sub))
    if "spec" in spec:
        out.extend(_layers(spec["spec"]))
    return out


def _fields(spec: dict, channel: str) -> set[str]:
    out = set()
    for layer in _layers(spec):
        enc = layer.get("encoding", {}).get(channel)
        for item in enc if isinstance(enc, list) else [enc] if enc else []:
            if "field" in item:
                out.add(item["field"])
            if "condition" in item and "field" in item["condition"]:
                out.add(item["condition"]["field"])
    return out


def _title(spec: dict) -> str:
    t = spec.get("title")
    return t if isinstance(t, str) else (t or {}).get("text", "")


def _rows(spec: dict) -> int:
    return sum(len(v) for v in spec.get("datasets", {}).values())


def _axis_titles(spec: dict) -> dict[str, str]:
    return {ch: layer["encoding"][ch].get("title") for layer in _layers(spec) for ch in ("x", "y")
            if ch in layer.get("encoding", {}) and layer["encoding"][ch].get("title")}


def _labels(chart, axis_title: str) -> list[str]:
    """The tick labels of the axis titled ``axis_title``, as vl-convert draws them (the SVG's text)."""
    import re

    import vl_convert as vlc

    svg = vlc.vegalite_to_svg(chart.to_dict(), vl_version=alt_vl_version())
    for chunk in svg.split('<g class="mark-group role-axis"')[1:]:
        texts = re.findall(r"<text[^>]*>([^<]*)</text>", chunk)
        if f"titled '{axis_title}'" in chunk[:300] and axis_title in texts:
            return texts[:texts.index(axis_title)]  # the tick labels come before the axis title
    raise AssertionError(f"no axis titled {axis_title!r}")


def alt_vl_version() -> str:
    from altair.utils._importers import vl_version_for_vl_convert

    return vl_version_for_vl_convert()


def _assert_dates(labels: list[str]) -> None:
    import re

    assert labels, "no tick labels"
    for label in labels:
        assert not re.search(r"\d{9,}", label), f"epoch milliseconds as a label: {label!r}"
        assert not re.search(r"\d:\d\d|\b\d{1,2} ?[AP]M\b", label), f"an hour tick on day data: {label!r}"
        assert re.fullmatch(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)( \d\d)?( \d{4})?", label), label
    assert len(labels) == len(set(labels)), f"a day labelled twice: {labels}"


def test_findings_over_time(findings):
    frame = A.heatmap_frame(findings, "severity")
    chart = C.findings_over_time(frame)
    spec = chart.to_dict()
    assert _title(spec) == "Findings over time"
    assert {"when", "severity", "findings", "rounds_flagged"} <= _fields(spec, "tooltip")
    assert _fields(spec, "color") == {"severity"}  # three legend entries, whatever the number of citations
    assert _axis_titles(spec) == {"x": "Gaming day", "y": "Findings"}
    assert spec["params"][0]["bind"] == "legend"  # clicking a severity highlights it
    assert _rows(spec) == len(frame)
    labels = _labels(chart, "Gaming day")
    _assert_dates(labels)
    assert labels == ["Jun 01", "Jun 02", "Jun 03"]  # one tick per gaming day, in no viewer's time zone


def test_day_axes_are_dates(findings):
    """Cumulative payouts and both heat maps label gaming days as dates: never epoch ms, never hours."""
    _assert_dates(_labels(C.cumulative_payouts(A.cumulative_payouts(findings)), "Gaming day"))
    counts = A.round_counts(sample_store(), by=["table_id", "date"])
    _assert_dates(_labels(C.heatmap(A.heatmap_frame(findings, "table_id", counts=counts)), "Gaming day"))
    _assert_dates(_labels(C.hold_heatmap(A.hold(sample_store())), "Gaming day"))


def test_empty_charts_say_so():
    empty = A.heatmap_frame(A.load_findings(sample_store(), citations="no such citation"), "severity")
    for chart in (C.findings_over_time(empty), C.cumulative_payouts(A.cumulative_payouts(empty.assign(discrepancy=0.0)))):
        spec = chart.to_dict()
        assert "No " in json.dumps(spec["datasets"]) and spec["mark"]["type"] == "text"


def test_findings_by_citation_and_group(findings):
    citations = A.by_citation(findings)
    spec = C.findings_by_citation(citations).to_dict()
    assert {"game", "citation", "severity", "findings", "rounds", "overpaid", "underpaid"} <= _fields(spec, "tooltip")
    assert _fields(spec, "color") == {"severity"}
    order = spec["encoding"]["y"]["sort"]  # severity first, then the most frequent
    rank = {"high": 0, "medium": 1, "low": 2}
    labelled = citations.assign(label=C.citation_labels(citations))
    worst = [labelled.loc[labelled["label"] == o, "severity"].map(rank).min() for o in order]
    assert worst == sorted(worst) and len(order) == labelled["label"].nunique()
    assert "paytable (baccarat)" in order and "68 IAC 10-10-14(b)(5)" in order
    summary = A.by_table(findings)
    spec = C.findings_by(summary, "table_id", top=3).to_dict()
    assert _rows(spec) == 3 and {"table_id", "findings", "rounds"} <= _fields(spec, "tooltip")
    assert _title(spec) == "Findings by table (top 3)"
    top = summary.sort_values("findings", ascending=False)["table_id"].iloc[0]
    assert top == BIASED_TABLE  # its shoes hold too many sevens and eights: integrity findings
    assert top in json.dumps(spec)


def test_heatmap(findings):
    counts = A.round_counts(sample_store(), by=["table_id", "date"])
    frame = A.heatmap_frame(findings, "table_id", counts=counts)
    spec = C.heatmap(frame, value="per_1000").to_dict()
    assert {"table_id", "when", "findings", "rounds", "per_1000"} <= _fields(spec, "tooltip")
    assert _fields(spec, "color") == {"per_1000"} and _fields(spec, "y") == {"table_id"}
    assert _title(spec) == "Findings by table and day"


def test_money_charts(findings):
    bins = A.discrepancy_bins(findings)
    spec = C.discrepancy_histogram(bins).to_dict()
    assert {"direction", "bin_start", "bin_end", "findings", "amount"} <= _fields(spec, "tooltip")
    top = A.largest_discrepancies(findings, 10)
    spec = C.largest_discrepancies(top).to_dict()
    assert {"round_id", "table_id", "citation", "discrepancy", "message"} <= _fields(spec, "tooltip")
    assert _rows(spec) == len(top) <= 10
    cum = A.cumulative_payouts(findings)
    spec = C.cumulative_payouts(cum).to_dict()
    assert {"when", "direction", "amount", "cumulative"} <= _fields(spec, "tooltip")
    assert _fields(spec, "y") == {"cumulative"}


def test_funnel_plot():
    counts = A.outcome_counts(sample_store(), games="baccarat")
    eo = A.expected_vs_observed(counts, "table_id")
    player = eo[eo["event"] == "player"]
    limits = A.funnel_limits(baccarat_probabilities()["player"], int(player["trials"].max()))
    spec = C.funnel_plot(player, limits).to_dict()
    assert {"table_id", "trials", "observed", "expected", "rate", "p_value", "p_adjusted", "flagged"} \
        <= _fields(spec, "tooltip")
    assert {"rate", "lower", "upper", "expected_rate"} <= _fields(spec, "y")
    assert _title(spec) == "Baccarat: player rate by table"
    assert _axis_titles(spec)["x"] == "Rounds (trials)"
    many = pd.concat([player] * 400, ignore_index=True)  # more groups than a chart holds
    spec = C.funnel_plot(many, limits, max_points=500).to_dict()
    assert "500 most extreme" in _title(spec)


def test_hold_charts():
    h = A.hold(sample_store())
    spec = C.hold_heatmap(h).to_dict()
    assert {"table_id", "when", "rounds", "drop", "win", "hold"} <= _fields(spec, "tooltip")
    spec = C.hold_by_table(A.hold(sample_store(), by=["game", "table_id"])).to_dict()
    assert _fields(spec, "x") == {"hold"}


def test_row_limit_guard():
    big = pd.DataFrame({"citation": ["x"] * (C.MAX_ROWS + 1), "game": "g", "severity": "high", "findings": 1,
                        "rounds": 1, "overpaid": 0.0, "underpaid": 0.0})
    with pytest.raises(ValueError, match="aggregate first"):
        C.findings_by_citation(big)


def test_save_chart(tmp_path, findings):
    chart = C.findings_by_citation(A.by_citation(findings))
    png = C.save_chart(chart, tmp_path / "c.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = C.save_chart(chart, tmp_path / "c.svg").read_text()
    assert svg.lstrip().startswith("<svg") and "Findings by citation" in svg
    html = C.save_chart(chart, tmp_path / "c.html").read_text()
    assert "vegaEmbed" in html and "cdn.jsdelivr" not in html  # the bundle is inline: works offline
    assert json.loads(C.save_chart(chart, tmp_path / "c.json").read_text())["title"] == "Findings by citation"
    with pytest.raises(ValueError):
        C.save_chart(chart, tmp_path / "c.gif")


def test_offline_renderer():
    import altair as alt

    C.use_renderer("offline")
    try:
        bundle = alt.renderers.get()(C.findings_by_citation(pd.DataFrame(
            {"citation": ["x"], "game": "g", "severity": "high", "findings": [1], "rounds": [1],
             "overpaid": [0.0], "underpaid": [0.0]})).to_dict())
        assert bundle[C.VEGALITE_V5_MIME]["$schema"].endswith("/vega-lite/v5.json")  # JupyterLab draws it
        assert bundle["image/svg+xml"].lstrip().startswith("<svg")  # nbconvert's HTML shows it
        assert "text/html" not in bundle  # would outrank the Vega-Lite bundle in JupyterLab
    finally:
        C.use_renderer("default")
    assert alt.renderers.active == C.OFFLINE_RENDERER


def _every_chart(findings: pd.DataFrame) -> list:
    store = sample_store()
    counts = A.round_counts(store, by=["table_id", "date"])
    eo = A.expected_vs_observed(A.outcome_counts(store, games="baccarat"), "table_id")
    player = eo[eo["event"] == "player"]
    return [
        C.findings_over_time(A.heatmap_frame(findings, "severity")), C.findings_by_citation(A.by_citation(findings)),
        C.findings_by(A.by_table(findings), "table_id"), C.heatmap(A.heatmap_frame(findings, "table_id", counts=counts)),
        C.discrepancy_histogram(A.discrepancy_bins(findings)),
        C.largest_discrepancies(A.largest_discrepancies(findings, 10)),
        C.cumulative_payouts(A.cumulative_payouts(findings)),
        C.funnel_plot(player, A.funnel_limits(baccarat_probabilities()["player"], int(player["trials"].max()))),
        C.hold_heatmap(A.hold(store)), C.hold_by_table(A.hold(store, by=["game", "table_id"])),
    ]


def test_specs_are_vega_lite_5(findings):
    """JupyterLab 4 compiles the v5 bundle with its own Vega-Lite 5: every chart must be valid Vega-Lite 5."""
    import vl_convert as vlc

    oldest = min(v for v in vlc.get_vegalite_versions() if v.startswith("5."))
    for chart in _every_chart(findings):
        spec = {**chart.to_dict(), "$schema": C.VEGALITE_V5_SCHEMA}
        assert vlc.vegalite_to_vega(spec, vl_version=oldest)["$schema"].startswith("https://vega.github.io/schema/vega/")


# ---- the polish of issue 27, item 4: each read from the chart as drawn or as specified ----------------------
def _encodings(spec: dict, channel: str) -> list[dict]:
    return [layer["encoding"][channel] for layer in _layers(spec) if channel in layer.get("encoding", {})]


def test_log_axes_have_labels_that_do_not_run_together(findings):
    """The discrepancy histogram's and the funnel's log axes: labels thinned greedily and short (``1k``); as
    drawn, no two labels of the funnel's axis touch (the ``100120 160`` of before)."""
    hist = C.discrepancy_histogram(A.discrepancy_bins(findings))
    counts = A.outcome_counts(sample_store(), games="baccarat")
    eo = A.expected_vs_observed(counts, "table_id")
    player = eo[eo["event"] == "player"]
    funnel = C.funnel_plot(player, A.funnel_limits(0.446, int(player["trials"].max())))
    for chart in (hist, funnel):
        axes = [e.get("axis", {}) for e in _encodings(chart.to_dict(), "x") if e.get("scale", {}).get("type") == "log"]
        assert axes and all(a.get("labelOverlap") == "greedy" and a.get("format") == "~s" for a in axes)
    labels = _labels(funnel, "Rounds (trials)")
    assert labels and all(len(x) <= 4 for x in labels), labels  # 100, 200, 1k: never 100120


def test_money_axes_carry_the_currency_of_the_configuration(findings, tmp_path):
    (tmp_path / "eur.toml").write_text('[money]\ncurrency = "EUR"\n')
    try:
        assert C.use_currency(tmp_path / "eur.toml") == "EUR"
        titles = [_axis_titles(c.to_dict())["x" if i < 2 else "y"] for i, c in enumerate((
            C.discrepancy_histogram(A.discrepancy_bins(findings)),
            C.largest_discrepancies(A.largest_discrepancies(findings, 10)),
            C.cumulative_payouts(A.cumulative_payouts(findings))))]
        assert titles == ["Discrepancy, absolute amount (EUR)", "Recorded minus expected net (EUR)",
                          "Cumulative amount (EUR)"]
    finally:
        assert C.use_currency() == "USD"
    assert _axis_titles(C.cumulative_payouts(A.cumulative_payouts(findings)).to_dict())["y"] == "Cumulative amount (USD)"


def test_funnel_legend_and_lines_are_in_words_and_nothing_clips():
    counts = A.outcome_counts(sample_store(), games="baccarat")
    eo = A.expected_vs_observed(counts, "table_id", alpha=0.05)
    player = eo[eo["event"] == "player"]
    spec = C.funnel_plot(player, A.funnel_limits(0.446, int(player["trials"].max())), alpha=0.05).to_dict()
    color = next(e for e in _encodings(spec, "color") if e.get("field") == "status")
    assert color["scale"]["domain"] == ["within chance", "improbable (adjusted p < 0.05)"]
    texts = json.dumps(spec)
    assert "95.0% limits" in texts and "99.8% limits" in texts  # the dashed lines are named at their right end
    assert "Improbable" not in texts and all(e["scale"].get("padding") == 16 for e in _encodings(spec, "x")
                                             if e.get("field") == "trials" and "scale" in e)
    mini = player.assign(game="mini_baccarat")
    assert _title(C.funnel_plot(mini, A.funnel_limits(0.446, 1000)).to_dict()) == "Mini baccarat: player rate by table"
    assert C.game_title("three_card_poker") == "Three card poker"


def test_citations_by_day_are_severity_first(findings):
    """The game notebooks' "citations by day": high-severity citations on top, as the citation chart."""
    spec = C.heatmap(A.heatmap_frame(findings, "citation"), rows="citation").to_dict()
    order = _encodings(spec, "y")[0]["sort"]
    severity = findings.groupby("citation")["severity"].first()
    ranks = [C.SEVERITY_ORDER.index(severity[c]) for c in order]
    assert ranks == sorted(ranks) and len(order) == findings["citation"].nunique()
    assert ranks[0] == 0 and ranks[-1] > 0


def test_findings_over_time_are_rates_with_a_small_multiple_per_game(findings):
    """Findings per 1,000 rounds dealt in the period (not counts, which follow how busy a day was), one
    panel per game where games mix; one game, one panel."""
    counts = A.round_counts(sample_store(), by=["game", "date"])
    frame = A.over_time(findings, counts, by_game=True)
    row = frame.iloc[0]
    dealt = counts[(counts["game"] == row["game"]) & (counts["date"] == row["period"])]["rounds"].sum()
    assert row["per_1000"] == round(1000 * row["findings"] / dealt, 3) and row["granularity"] == "day"
    spec = C.findings_over_time(frame).to_dict()
    assert spec["facet"]["row"]["field"] == "game" and spec["resolve"]["scale"]["y"] == "independent"
    assert spec["spec"]["encoding"]["y"]["field"] == "per_1000"
    assert spec["spec"]["encoding"]["y"]["title"] == "Findings per 1,000 rounds"
    assert {"Baccarat", "Blackjack"} <= {r["game"] for rows in spec["datasets"].values() for r in rows}
    one = C.findings_over_time(A.over_time(findings[findings["game"] == "blackjack"], counts)).to_dict()
    assert "facet" not in one and one["encoding"]["y"]["field"] == "per_1000"
    weeks = A.over_time(findings, counts, max_periods=2)  # three days in at most two periods: weeks
    assert set(weeks["granularity"]) == {"week"}


def test_cumulative_payouts_mixing_games_are_small_multiples(findings):
    spec = C.cumulative_payouts(A.cumulative_payouts(findings, by="game")).to_dict()
    assert spec["facet"]["row"]["field"] == "game" and spec["resolve"]["scale"]["y"] == "independent"
    assert "facet" not in C.cumulative_payouts(A.cumulative_payouts(findings)).to_dict()
