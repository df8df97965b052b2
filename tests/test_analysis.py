"""The analysis API against hand-computed summaries, exact probabilities and a biased shoe."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

pytest.importorskip("scipy")

from sample_store import BIASED_COUNTS, BIASED_TABLE, DAYS, deal_baccarat, sample_store  # noqa: E402

from auditkit import analysis as A  # noqa: E402
from auditkit.games.baccarat.theory import baccarat_probabilities  # noqa: E402
from auditkit.games.blackjack.theory import blackjack_bust_probabilities, blackjack_bust_probability  # noqa: E402
from auditkit.games.three_card_poker.theory import tcp_dealer_qualify_probability  # noqa: E402
from auditkit.schema import FINDINGS, schema_for  # noqa: E402
from auditkit.store import SourceRecord, Store  # noqa: E402


def _finding(round_id: str, game: str, table: str, dealer: str, at: str, citation: str, disc: float = 0.0,
             rule: str | None = None, severity: str = "high") -> dict:
    return {"round_id": round_id, "game": game, "table_id": table, "dealer_id": dealer, "started_at": at,
            "rule_id": rule or f"{game}.{citation}", "citation": citation, "severity": severity, "message": "m",
            "expected": "", "recorded": "", "discrepancy": disc, "expected_amount": float("nan"),
            "recorded_amount": float("nan"), "seats": "", "shoe_id": "", "date": at[:10],
            "source_file": "f", "source_line": 1, "evidence": []}


@pytest.fixture
def findings(tmp_path) -> pd.DataFrame:
    """Six findings written to a store and read back: three days, two tables, three shifts."""
    rows = [
        _finding("r1", "baccarat", "BAC-1", "D1", "2025-06-01T07:00:00-05:00", "paytable", 12.5),
        _finding("r1", "baccarat", "BAC-1", "D1", "2025-06-01T07:00:00-05:00", "outcome"),
        _finding("r2", "baccarat", "BAC-1", "D2", "2025-06-01T15:30:00-05:00", "paytable", -4.25),
        _finding("r3", "baccarat", "BAC-2", "D2", "2025-06-02T23:10:00-05:00", "paytable", -100.0),
        _finding("r4", "blackjack", "BJ-1", "D1", "2025-06-03T02:00:00-05:00", "loss", 30.0),
        _finding("r5", "blackjack", "BJ-1", "D3", "2025-06-03T13:59:59-05:00", "68 IAC 10-2-4(c)", 0.0,
                 severity="medium"),
    ]
    store = Store(tmp_path / "store")
    frame = pd.DataFrame(rows)
    for (game, date), part in frame.groupby(["game", "date"]):
        store.write_findings(game, date, part[[f.name for f in FINDINGS]])
    return A.load_findings(store)


def test_load_findings_hour_and_shift(findings):
    assert len(findings) == 6
    by_id = findings.set_index(["round_id", "citation"])
    assert by_id.loc[("r1", "paytable"), "hour"] == 7
    assert by_id.loc[("r4", "loss"), "shift"] == "grave"
    assert by_id.loc[("r5", "68 IAC 10-2-4(c)"), "shift"] == "day"     # 13:59 is before 14:00


def test_load_findings_from_store_filters(tmp_path):
    store = Store(tmp_path / "s")
    frame = pd.DataFrame([
        _finding("a", "baccarat", "BAC-1", "D1", "2025-06-01T10:00:00-05:00", "paytable", 1.0),
        _finding("b", "baccarat", "BAC-2", "D2", "2025-06-02T10:00:00-05:00", "outcome"),
        _finding("c", "blackjack", "BJ-1", "D1", "2025-06-02T10:00:00-05:00", "loss", 2.0)])
    for (game, date), part in frame.groupby(["game", "date"]):
        store.write_findings(game, date, part[[f.name for f in FINDINGS]])
    assert set(A.load_findings(store, "2025-06-02")["round_id"]) == {"b", "c"}
    assert set(A.load_findings(store, games="baccarat")["round_id"]) == {"a", "b"}
    assert set(A.load_findings(store, tables=["BAC-2", "BJ-1"])["round_id"]) == {"b", "c"}
    assert set(A.load_findings(store, dealers="D1", citations="loss")["round_id"]) == {"c"}
    assert A.load_findings(store, end="2025-05-31").empty


def test_findings_carry_their_reviews_into_the_notebooks(tmp_path):
    """A finding reviewed (auditkit review) shows its status and note in load_findings, and the notebooks'
    opening summary counts the reviews; a finding never reviewed is open."""
    from auditkit import charts as C
    from auditkit.reviews import add_reviews

    store = Store(tmp_path / "s")
    frame = pd.DataFrame([
        _finding("a", "baccarat", "BAC-1", "D1", "2025-06-01T10:00:00-05:00", "paytable", 1.0),
        _finding("b", "baccarat", "BAC-2", "D2", "2025-06-01T11:00:00-05:00", "outcome"),
        _finding("c", "baccarat", "BAC-2", "D2", "2025-06-01T12:00:00-05:00", "outcome")])
    store.write_findings("baccarat", "2025-06-01", frame[[f.name for f in FINDINGS]])
    counts = pd.DataFrame({"game": ["baccarat"], "table_id": ["BAC-1"], "dealer_id": ["D1"],
                           "date": ["2025-06-01"], "rounds": [10]})
    f = A.load_findings(store)
    assert f["status"].tolist() == ["open"] * 3 and f["note"].tolist() == [""] * 3
    assert "every finding open" in C.summary(A.overview(f, counts)).data
    add_reviews(store, [{"round_id": "a", "rule_id": "baccarat.paytable", "status": "explained", "note": "re-dealt"},
                        {"round_id": "b", "rule_id": "baccarat.outcome", "status": "escalated"}], by="A. Auditor")
    f = A.load_findings(store).set_index("round_id")
    assert f.loc["a", "status"] == "explained" and f.loc["a", "note"] == "re-dealt"
    assert f.loc["a", "reviewed_by"] == "A. Auditor" and f.loc["c", "status"] == "open"
    text = C.summary(A.overview(f.reset_index(), counts)).data
    assert "**Reviews**: 1 open; 1 explained, 1 escalated." in text


def test_shift_of():
    hours = [0, 5, 6, 13, 14, 21, 22, 23]
    assert list(A.shift_of(hours)) == ["grave", "grave", "day", "day", "swing", "swing", "grave", "grave"]
    custom = {"early": (8, 12)}
    assert list(A.shift_of([7, 8, 11, 12], custom)) == ["other", "early", "early", "other"]
    with pytest.raises(ValueError):
        A.shift_of([1], {"bad": (25, 3)})


def test_summaries_by_citation_table_dealer_shift_day(findings):
    cit = A.by_citation(findings).set_index(["game", "citation"])
    assert cit.loc[("baccarat", "paytable"), "findings"] == 3
    assert cit.loc[("baccarat", "paytable"), "overpaid"] == 12.5
    assert cit.loc[("baccarat", "paytable"), "underpaid"] == 104.25
    assert cit.loc[("blackjack", "loss"), "overpaid"] == 30.0
    table = A.by_table(findings).set_index("table_id")
    assert table.loc["BAC-1", "findings"] == 3 and table.loc["BAC-1", "rounds"] == 2
    assert table.loc["BJ-1", "findings"] == 2
    dealer = A.by_dealer(findings).set_index("dealer_id")
    assert dealer.loc["D1", "findings"] == 3 and dealer.loc["D2", "underpaid"] == 104.25
    shift = A.by_shift(findings).set_index("shift")
    assert dict(shift["findings"]) == {"day": 3, "swing": 1, "grave": 2}
    day = A.by_day(findings)
    assert list(day["day"]) == list(DAYS) and list(day["findings"]) == [3, 1, 2]
    per = A.by_day(findings, "citation")
    assert per[(per["day"] == "2025-06-01") & (per["citation"] == "paytable")]["findings"].item() == 2


def test_payout_totals(findings):
    assert A.payout_totals(findings) == {"overpaid": 42.5, "underpaid": 104.25, "net": -61.75,
                                         "overpaid_findings": 2, "underpaid_findings": 2}
    m = A.money_findings(findings)
    assert set(m["round_id"]) == {"r1", "r2", "r3", "r4"}
    assert dict(zip(m["round_id"], m["direction"], strict=True)) == {"r1": "overpaid", "r2": "underpaid", "r3": "underpaid",
                                                        "r4": "overpaid"}


def test_largest_and_bins(findings):
    top = A.largest_discrepancies(findings, n=2)
    assert list(top["round_id"]) == ["r3", "r4"]
    bins = A.discrepancy_bins(findings, bins=4)
    assert bins["findings"].sum() == 4
    assert bins.groupby("direction")["amount"].sum().round(2).to_dict() == {"overpaid": 42.5, "underpaid": 104.25}
    assert (bins["bin_start"] < bins["bin_end"]).all()


def test_cumulative_payouts(findings):
    cum = A.cumulative_payouts(findings)
    over = cum[cum["direction"] == "overpaid"].set_index("day")
    under = cum[cum["direction"] == "underpaid"].set_index("day")
    assert list(over["amount"]) == [12.5, 0.0, 30.0] and list(over["cumulative"]) == [12.5, 12.5, 42.5]
    assert list(under["amount"]) == [4.25, 100.0, 0.0] and list(under["cumulative"]) == [4.25, 104.25, 104.25]


def test_heatmap_frame_coarsens(findings):
    daily = A.heatmap_frame(findings, "table_id")
    assert set(daily["granularity"]) == {"day"}
    cell = daily[(daily["table_id"] == "BAC-1") & (daily["period"] == "2025-06-01")]
    assert cell["findings"].item() == 3 and cell["rounds_flagged"].item() == 2
    coarse = A.heatmap_frame(findings, "table_id", max_cells=6)  # 9 day cells > 6: weeks (Jun 1 is a Sunday)
    assert set(coarse["granularity"]) == {"week"} and coarse["findings"].sum() == 6
    assert sorted(coarse["period"].unique()) == ["2025-05-26", "2025-06-02"]
    assert set(A.heatmap_frame(findings, "table_id", max_cells=4)["granularity"]) == {"month"}
    counts = pd.DataFrame({"table_id": ["BAC-1", "BAC-1"], "date": ["2025-06-01", "2025-06-02"], "rounds": [300, 200]})
    rated = A.heatmap_frame(findings[findings["table_id"] == "BAC-1"], "table_id", counts=counts)
    assert list(rated["per_1000"]) == [10.0, 0.0]


def test_drill_down(findings):
    sel = A.drill_down(findings, citation="paytable", table_id="BAC-1")
    assert list(sel["round_id"]) == ["r1", "r2"]
    assert list(A.drill_down(findings, shift=["grave"])["round_id"]) == ["r3", "r4"]
    with pytest.raises(KeyError):
        A.drill_down(findings, nothing=1)


# ---- rounds from a hand-made store -----------------------------------------------------------
def _tcp_store(tmp_path) -> Store:
    """Two three card poker rounds at two tables and one void round, amounts chosen by hand."""
    def hand(ante, play, pp, na, np_, npp, bonus):
        return {"seat": 1, "cards": [0, 5, 10], "decision": "play", "ante": ante, "play": play, "pair_plus": pp,
                "net_ante": na, "net_play": np_, "ante_bonus": bonus, "net_pair_plus": npp}

    base = {"dealer_cards": [40, 44, 48], "utc_offset": -300, "shoe_id": None, "round_seq": None,
            "wagers": None, "events": None, "source_file": "x", "source_line": 1}
    rows = [
        dict(base, round_id="t1", table_id="T-1", dealer_id="D1", status="completed",
             started_at=pd.Timestamp("2025-06-01T15:00:00Z"),
             hands=[hand(10, 10, 5, 10, 10, -5, 10), hand(20, 20, None, -20, -20, None, 0)]),
        dict(base, round_id="t2", table_id="T-2", dealer_id="D2", status="completed",
             started_at=pd.Timestamp("2025-06-01T16:00:00Z"), hands=[hand(25, 0, 0, -25, 0, 0, 0)]),
        dict(base, round_id="t3", table_id="T-2", dealer_id="D2", status="void",
             started_at=pd.Timestamp("2025-06-01T17:00:00Z"), hands=[hand(50, 50, 0, 0, 0, 0, 0)]),
    ]
    store = Store(tmp_path / "store")
    sha = "ab" * 32
    store.write_rounds("three_card_poker", "2025-06-01", pa.Table.from_pylist(rows, schema=schema_for("three_card_poker")),
                       sha)
    store.commit_source(SourceRecord(sha256=sha, path="x", size=1, format="jsonl"))
    return store


def test_hold_hand_computed(tmp_path):
    store = _tcp_store(tmp_path)
    h = A.hold(store).set_index("table_id")
    # T-1: stakes 10+10+5 + 20+20 = 65; patron nets 10+10-5+10 (bonus) -20-20 = -15: win 15
    assert h.loc["T-1", "drop"] == 65.0 and h.loc["T-1", "win"] == 15.0
    assert h.loc["T-1", "hold"] == pytest.approx(15 / 65)
    # T-2: the void round is left out; ante 25 lost
    assert h.loc["T-2", "rounds"] == 1 and h.loc["T-2", "drop"] == 25.0 and h.loc["T-2", "hold"] == 1.0


def test_load_rounds_filters_and_counts(tmp_path):
    store = _tcp_store(tmp_path)
    t = A.load_rounds(store, "three_card_poker", tables="T-2", columns=["round_id", "status"])
    assert t.column_names == ["round_id", "status", "date"] and t["round_id"].to_pylist() == ["t2", "t3"]
    assert A.load_rounds(store, "three_card_poker", dealers=["D1"], columns=["round_id"])["round_id"].to_pylist() == ["t1"]
    assert A.load_rounds(store, "three_card_poker", "2025-06-02", columns=["round_id"]).num_rows == 0
    counts = A.round_counts(store, by=["table_id", "shift"]).set_index("table_id")
    assert counts.loc["T-1", "rounds"] == 1 and counts.loc["T-1", "shift"] == "day"  # 10:00 local
    assert counts.loc["T-2", "rounds"] == 2


def test_rounds_behind(tmp_path):
    store = _tcp_store(tmp_path)
    f = pd.DataFrame([_finding("t2", "three_card_poker", "T-2", "D2", "2025-06-01T11:00:00-05:00", "paytable")])
    out = A.rounds_behind(store, f)
    rounds = out["three_card_poker"]
    assert list(rounds["round_id"]) == ["t2"] and rounds["rules"].item() == "three_card_poker.paytable"
    assert rounds["dealer_cards"].item() == "Q♣ K♣ A♣"


# ---- exact probabilities --------------------------------------------------------------------
def test_baccarat_probabilities_published():
    p = baccarat_probabilities(8)
    assert p["player"] == pytest.approx(0.446247, abs=5e-7)
    assert p["banker"] == pytest.approx(0.458597, abs=5e-7)
    assert p["tie"] == pytest.approx(0.095156, abs=5e-7)
    assert sum(p.values()) == pytest.approx(1.0)


def test_biased_shoe_probabilities_match_dealing():
    """The exact calculation agrees with rounds dealt from the biased shoe by the tableau (first rounds of shoes)."""
    exact = baccarat_probabilities(counts=BIASED_COUNTS)
    d = deal_baccarat(BIASED_COUNTS, n_shoes=20000, rounds_per_shoe=1, seed=3)
    observed = np.bincount(d["outcome"], minlength=3) / len(d["outcome"])
    se = np.sqrt(0.25 / len(d["outcome"]))
    for k, name in enumerate(("player", "banker", "tie")):
        assert abs(observed[k] - exact[name]) < 4 * se
    assert exact["player"] < 0.41 and exact["banker"] > 0.49


def test_tcp_dealer_qualification():
    assert tcp_dealer_qualify_probability() == pytest.approx(1 - 6720 / 22100, abs=1e-12)


def test_blackjack_bust_probabilities():
    exact = blackjack_bust_probabilities(decks=400)  # close to an infinite deck
    rng = np.random.default_rng(5)
    n = 600_000
    vals = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10])
    up, hole = vals[rng.integers(0, 13, n)], vals[rng.integers(0, 13, n)]
    hard, ace = up + hole, (up == 1) | (hole == 1)
    for _ in range(10):  # the dealer stands on 17, soft 17 included
        total = np.where(ace & (hard + 10 <= 21), hard + 10, hard)
        c = vals[rng.integers(0, 13, n)]
        draw = total < 17
        hard, ace = np.where(draw, hard + c, hard), ace | (draw & (c == 1))
    total = np.where(ace & (hard + 10 <= 21), hard + 10, hard)
    no_bj = ~(((up == 1) & (hole == 10)) | ((up == 10) & (hole == 1)))
    for u in range(1, 11):
        m = (up == u) & no_bj
        assert abs((total[m] > 21).mean() - exact[u]) < 0.008, u
    six = blackjack_bust_probability(6)
    assert six == pytest.approx(0.2960, abs=5e-4)
    assert blackjack_bust_probability(6, hits_soft_17=True) > six


# ---- expected versus observed ---------------------------------------------------------------
def test_expected_vs_observed_hand_computed():
    counts = pd.DataFrame({
        "game": "three_card_poker", "date": "2025-06-01", "table_id": ["A", "B", "C"], "dealer_id": "",
        "shoe_id": "", "event": "dealer_qualifies", "trials": [100, 100, 10], "observed": [50, 90, 10],
        "expected": [50.0, 50.0, 5.0], "variance": [25.0, 25.0, 2.5]})
    eo = A.expected_vs_observed(counts, "table_id", alpha=0.01, min_trials=30).set_index("table_id")
    assert eo.loc["A", "p_value"] == pytest.approx(1.0) and eo.loc["A", "z"] == 0
    assert eo.loc["B", "z"] == pytest.approx(8.0)
    assert eo.loc["B", "rate"] == 0.9 and eo.loc["B", "expected_rate"] == 0.5
    assert eo.loc["C", "p_value"] == pytest.approx(2 * 0.5 ** 10)
    # Holm over three p-values: smallest times 3, next times 2 (monotone), largest times 1
    p = np.sort(eo["p_value"].to_numpy())
    assert np.sort(eo["p_adjusted"].to_numpy()) == pytest.approx([p[0] * 3, max(p[0] * 3, p[1] * 2), 1.0])
    assert bool(eo.loc["B", "flagged"]) and not eo.loc["A", "flagged"]
    assert not eo.loc["C", "flagged"]  # improbable, but fewer than 30 trials


def test_funnel_limits():
    lim = A.funnel_limits(0.4586, 10_000)
    wide = lim[lim["level"] == "99.8%"]
    narrow = lim[lim["level"] == "95.0%"]
    assert (wide["lower"] <= 0.4586).all() and (wide["upper"] >= 0.4586).all()
    assert (wide["upper"].to_numpy() >= narrow["upper"].to_numpy()).all()
    assert wide["upper"].iloc[-1] - wide["lower"].iloc[-1] < wide["upper"].iloc[0] - wide["lower"].iloc[0]


def test_expected_vs_observed_flags_biased_shoe():
    """The table dealt from a stacked shoe is flagged; the fair tables of every game are not (Holm, alpha 0.01)."""
    counts = A.outcome_counts(sample_store())
    eo = A.expected_vs_observed(counts, "table_id", alpha=0.01)
    flagged = eo[eo["flagged"]]
    assert set(flagged["table_id"]) == {BIASED_TABLE}
    assert set(flagged["event"]) >= {"player"}
    biased = eo[(eo["table_id"] == BIASED_TABLE)].set_index("event")
    assert biased.loc["player", "rate"] < 0.42 and biased.loc["banker", "chi2_p"] < 1e-4
    fair = eo[eo["table_id"] != BIASED_TABLE]
    assert set(fair["game"]) >= {"baccarat", "blackjack", "three_card_poker"}
    assert not fair["flagged"].any()
    # the whole biased table's trials are its completed rounds
    assert biased.loc["player", "trials"] == counts[counts["table_id"] == BIASED_TABLE]["trials"].sum() / 3
    by_dealer = A.expected_vs_observed(counts, "dealer_id", alpha=0.01)
    assert by_dealer[by_dealer["flagged"]]["dealer_id"].str.startswith("DB").all()


def test_hold_on_sample_store():
    h = A.hold(sample_store(), by=["game", "table_id", "date"])
    biased = h[h["table_id"] == BIASED_TABLE]
    assert (biased["drop"] == biased["rounds"] * 100).all()  # one banker bet of 100 a round
    assert set(h["game"]) >= {"baccarat", "blackjack", "three_card_poker", "pai_gow_poker"}
    assert np.isfinite(h["hold"]).all()


def test_with_rates(findings):
    counts = pd.DataFrame({"game": ["baccarat", "baccarat", "blackjack"], "table_id": ["BAC-1", "BAC-2", "BJ-1"],
                           "date": "2025-06-01", "rounds": [300, 1000, 500]})
    rated = A.with_rates(A.by_table(findings), counts, ["game", "table_id"]).set_index("table_id")
    assert rated.loc["BAC-1", "rounds_checked"] == 300 and rated.loc["BAC-1", "per_1000"] == 10.0
    assert rated.loc["BAC-2", "per_1000"] == 1.0 and rated.loc["BJ-1", "per_1000"] == 4.0
