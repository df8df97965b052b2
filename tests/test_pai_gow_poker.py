"""Pai gow poker irregularities, 68 IAC 10-9-17, plus void, paytable and integrity.

Each test builds rounds that must pass and rounds that must fail. Tests of one
subsection select that citation, so that the other checks do not interfere;
the clean-round and worked-example tests run every check.
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
from conftest import example_records, expected_findings

from auditkit.games.pai_gow_poker.deal import dice_position
from auditkit.validate import validate_records

GAME = "pai_gow_poker"

# A clean round (from the worked examples): dice 4+5+6 = 15 give position 1, the dealer.
BASE = {
    "round_id": "T-1", "game": GAME, "table_id": "T", "started_at": "2025-06-02T10:27:35-05:00",
    "dice": [4, 5, 6], "first_position": 1,
    "dealer": {"cards": ["4h", "2d", "8c", "2c", "Td", "3s", "7c"],
               "high": ["7c", "4h", "3s", "2d", "2c"], "low": ["Td", "8c"]},
    "hands": [
        {"seat": 1, "position": 2, "cards": ["7s", "Ac", "5d", "Qs", "9d", "5c", "Ts"],
         "high": ["Ts", "9d", "7s", "5d", "5c"], "low": ["Ac", "Qs"], "wager": 200, "net": 190},
        {"seat": 2, "position": 3, "cards": ["Jd", "9c", "Qh", "Jh", "8s", "Kd", "Ad"],
         "high": ["Qh", "Jh", "Jd", "9c", "8s"], "low": ["Ad", "Kd"], "wager": 10, "net": 9.5},
        {"seat": 3, "position": 4, "cards": ["4s", "Ah", "6s", "5h", "Jc", "3c", "2s"],
         "high": ["6s", "5h", "4s", "3c", "2s"], "low": ["Ah", "Jc"], "wager": 20, "net": 19},
        {"seat": 5, "position": 6, "cards": ["3d", "Kc", "Kh", "As", "Qd", "6h", "9h"],
         "high": ["Kh", "Kc", "9h", "6h", "3d"], "low": ["As", "Qd"], "wager": 200, "net": 190},
        {"seat": 6, "position": 7, "cards": ["6d", "4d", "3h", "5s", "Tc", "7h", "7d"],
         "high": ["7d", "6d", "5s", "4d", "3h"], "low": ["Tc", "7h"], "wager": 15, "net": 0},
    ],
    "cards_remaining": 4,
    "events": [{"type": "roll", "dice": [4, 5, 6]}, {"type": "stacks_dealt", "count": 7}],
}
ROLL = {"type": "roll", "dice": [4, 5, 6]}
STACKS = {"type": "stacks_dealt", "count": 7}
RESHUFFLE = {"type": "reshuffle"}


def rnd(round_id: str = "T-1", *, events: list[dict] | None = None, void: bool = False,
        status: str | None = None, **fields) -> dict:
    """A copy of the clean round with changes; ``void`` sets status void and every net to 0."""
    r = copy.deepcopy(BASE)
    r["round_id"] = round_id
    if events is not None:
        r["events"] = events
    if void or status in ("void", "dead"):
        r["status"] = status or "void"
        for h in r["hands"]:
            h["net"] = 0
    elif status:
        r["status"] = status
    r.update(copy.deepcopy(fields))
    return r


def found(records: list[dict], citation: str | None = None) -> pd.DataFrame:
    """Findings on the records, of one citation when given."""
    return validate_records(records, citations=[citation] if citation else None)


def flagged(records: list[dict], citation: str) -> set[str]:
    return set(found(records, citation)["round_id"])


def _needs_evaluator() -> None:
    pytest.importorskip("auditkit.games.pai_gow_poker.house_way")
    pytest.importorskip("auditkit.games.pai_gow_poker.hands")


# ---- positions -------------------------------------------------------------------------
def test_dice_positions() -> None:
    totals = np.arange(3, 19)
    want = [3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4]
    assert dice_position(totals).tolist() == want
    assert dice_position(np.array([8, 15])).tolist() == [1, 1]  # the dealer's position


# ---- irregularities ---------------------------------------------------------------------
C = "68 IAC 10-9-17"


def test_68_IAC_10_9_17_a() -> None:
    one = {"type": "face_up_card", "count": 1}
    recs = [
        rnd("ok-one", events=[ROLL, one, STACKS]),                                   # one card: not voided
        rnd("ok-void", events=[ROLL, {"type": "face_up_card", "count": 2}, RESHUFFLE], void=True),
        rnd("bad-two-events", events=[ROLL, one, one, STACKS]),                      # 2 cards over two events
        rnd("bad-events-no-count", events=[ROLL, {"type": "face_up_card", "count": 0}, one, STACKS]),
        rnd("bad-completed", events=[ROLL, {"type": "face_up_card", "count": 3}, STACKS]),
        rnd("bad-no-shuffle", events=[ROLL, {"type": "face_up_card", "count": 2}], void=True),
        rnd("bad-shuffle-before", events=[RESHUFFLE, ROLL, {"type": "face_up_card", "count": 2}], void=True),
        rnd("bad-dead", events=[ROLL, {"type": "face_up_card", "count": 2}, RESHUFFLE], status="dead"),
    ]
    f = found(recs, f"{C}(a)")
    assert set(f["round_id"]) == {"bad-two-events", "bad-events-no-count", "bad-completed", "bad-no-shuffle",
                                  "bad-shuffle-before", "bad-dead"}
    msg = f.set_index("round_id")["message"]
    assert "3 face-up cards" in msg["bad-completed"] and "round completed" in msg["bad-completed"]
    assert "no reshuffle" in msg["bad-no-shuffle"]
    assert (f["discrepancy"] == 0).all() and f["expected_amount"].isna().all() and f["recorded_amount"].isna().all()


def test_68_IAC_10_9_17_b() -> None:
    no_roll = {"type": "no_roll"}
    recs = [
        rnd("ok", events=[no_roll, ROLL, STACKS]),
        rnd("ok-twice", events=[no_roll, no_roll, ROLL, STACKS]),
        rnd("ok-no-stacks-event", events=[no_roll, ROLL]),
        rnd("ok-plain", events=[ROLL, STACKS]),
        rnd("bad-roll-then-no-roll", events=[ROLL, no_roll, STACKS]),
        rnd("bad-roll-after-deal", events=[no_roll, STACKS, ROLL]),
        rnd("bad-no-roll-last", events=[ROLL, no_roll]),
        rnd("bad-second-no-roll", events=[no_roll, ROLL, no_roll, STACKS]),
    ]
    assert flagged(recs, f"{C}(b)") == {"bad-roll-then-no-roll", "bad-roll-after-deal", "bad-no-roll-last",
                                         "bad-second-no-roll"}


def test_68_IAC_10_9_17_c_1() -> None:
    recs = [
        rnd("ok"),                                                      # 15 -> 1
        rnd("ok-no-events", events=[]),
        rnd("ok-dead", first_position=2, status="dead"),
        rnd("ok-void", first_position=2, status="void"),
        rnd("bad-completed", first_position=2),
        rnd("ok-8", dice=[2, 3, 3], events=[], first_position=1),       # 8 goes to the dealer
        rnd("bad-8", dice=[2, 3, 3], events=[], first_position=7),
        # the dice used are the last roll's: a reroll of 1+1+2 = 4 gives position 4
        rnd("bad-last-roll", events=[ROLL, {"type": "no_roll"}, {"type": "roll", "dice": [1, 1, 2]}, STACKS]),
        rnd("ok-last-roll", first_position=4,
            events=[ROLL, {"type": "no_roll"}, {"type": "roll", "dice": [1, 1, 2]}, STACKS]),
    ]
    f = found(recs, f"{C}(c)(1)")
    assert set(f["round_id"]) == {"bad-completed", "bad-8", "bad-last-roll"}
    assert "gives 4" in f.set_index("round_id")["message"]["bad-last-roll"]


def test_68_IAC_10_9_17_c_2() -> None:
    ex = {"type": "card_out_of_order", "exposed": True}
    recs = [
        rnd("ok", events=[ROLL, ex, RESHUFFLE], void=True),
        rnd("ok-unexposed", events=[ROLL, {"type": "card_out_of_order", "exposed": False}, STACKS]),
        rnd("bad-completed", events=[ROLL, ex, STACKS]),
        rnd("bad-no-shuffle", events=[ROLL, ex, STACKS], void=True),
    ]
    assert flagged(recs, f"{C}(c)(2)") == {"bad-completed", "bad-no-shuffle"}


def test_68_IAC_10_9_17_c_3() -> None:
    ex = {"type": "dealer_card_exposed"}
    recs = [
        rnd("ok", events=[ROLL, STACKS, ex, RESHUFFLE], void=True),
        rnd("bad-completed", events=[ROLL, STACKS, ex]),
        rnd("bad-no-shuffle", events=[ROLL, STACKS, ex], void=True),
    ]
    f = found(recs, f"{C}(c)(3)")
    assert set(f["round_id"]) == {"bad-completed", "bad-no-shuffle"}
    assert f.set_index("round_id")["message"]["bad-no-shuffle"].startswith("(c)(3): dealer card exposed")
    # a completed (c)(3) round is one (c)(3) finding: its nets are not a void finding
    others = [f"{C}({k})" for k in ("a", "b", "c)(1", "c)(2", "c)(3", "d", "e", "g", "h", "i")]
    assert set(validate_records([recs[1]], citations=others + ["void", "integrity"])["citation"]) == {
        f"{C}(c)(3)"}


def test_68_IAC_10_9_17_d() -> None:
    un = {"type": "card_out_of_order", "exposed": False}
    recs = [
        rnd("ok", events=[ROLL, un, STACKS]),
        rnd("ok-voided-for-other-reason",
            events=[ROLL, un, {"type": "face_up_card", "count": 2}, RESHUFFLE], void=True),
        rnd("bad-void", events=[ROLL, un, STACKS], void=True),
        rnd("bad-dead", events=[ROLL, un, STACKS], status="dead"),
    ]
    assert flagged(recs, f"{C}(d)") == {"bad-void", "bad-dead"}


def test_68_IAC_10_9_17_e() -> None:
    six = copy.deepcopy(BASE["hands"])
    six[0]["cards"] = six[0]["cards"][:6]
    eight_dealer = dict(BASE["dealer"], cards=BASE["dealer"]["cards"] + ["Kh"])
    recs = [
        rnd("ok", hands=six, events=[ROLL, STACKS, RESHUFFLE], status="void"),
        rnd("bad-completed", hands=six),
        rnd("bad-dealer-no-shuffle", dealer=eight_dealer, status="void"),
    ]
    f = found(recs, f"{C}(e)")
    assert set(f["round_id"]) == {"bad-completed", "bad-dealer-no-shuffle"}
    assert "dealer 8" in f.set_index("round_id")["message"]["bad-dealer-no-shuffle"]


def test_68_IAC_10_9_17_g() -> None:
    ex = {"type": "card_exposed_during_stacks"}
    recs = [
        rnd("ok", events=[ROLL, ex, STACKS, RESHUFFLE], void=True),
        rnd("bad-completed", events=[ROLL, ex, STACKS]),
        rnd("bad-no-shuffle", events=[ROLL, ex, STACKS], void=True),
    ]
    assert flagged(recs, f"{C}(g)") == {"bad-completed", "bad-no-shuffle"}


def test_68_IAC_10_9_17_h() -> None:
    six = {"type": "stacks_dealt", "count": 6}
    recs = [
        rnd("ok", events=[ROLL, six, RESHUFFLE], void=True),
        rnd("ok-seven"),
        rnd("bad-completed", events=[ROLL, six]),
        rnd("bad-no-shuffle", events=[ROLL, six], void=True),
        rnd("bad-eight", events=[ROLL, {"type": "stacks_dealt", "count": 8}]),
    ]
    f = found(recs, f"{C}(h)")
    assert set(f["round_id"]) == {"bad-completed", "bad-no-shuffle", "bad-eight"}
    assert "8 stacks dealt" in f.set_index("round_id")["message"]["bad-eight"]


def test_68_IAC_10_9_17_i() -> None:
    sup = {"type": "supervisor_called", "misdeal": False}
    mis = {"type": "supervisor_called", "misdeal": True}
    base_ev = [ROLL, STACKS]
    recs = [
        rnd("ok-four"),
        rnd("ok-not-recorded", cards_remaining=None),
        rnd("ok-no-misdeal", cards_remaining=5, events=base_ev + [sup]),
        rnd("ok-misdeal-void", cards_remaining=3, events=base_ev + [mis, RESHUFFLE], void=True),
        rnd("bad-no-call", cards_remaining=5),
        rnd("bad-misdeal-completed", cards_remaining=3, events=base_ev + [mis]),
    ]
    f = found(recs, f"{C}(i)")
    assert set(f["round_id"]) == {"bad-no-call", "bad-misdeal-completed"}
    msg = f.set_index("round_id")["message"]
    assert msg["bad-no-call"] == "(i): 5 cards remaining, no supervisor call"
    assert "misdeal" in msg["bad-misdeal-completed"]


def test_68_IAC_10_9_17_f() -> None:
    _needs_evaluator()
    d = BASE["dealer"]
    wrong = dict(d, high=["Td", "8c", "7c", "4h", "3s"], low=["2d", "2c"])       # pair put in front
    permuted = dict(d, high=list(reversed(d["high"])), low=list(reversed(d["low"])))
    reset_ok = {"type": "dealer_hand_reset", "high": d["high"], "low": d["low"]}
    reset_bad = {"type": "dealer_hand_reset", "high": wrong["high"], "low": wrong["low"]}
    recs = [
        rnd("ok"),
        rnd("ok-order", dealer=permuted),                                   # compared as card sets
        rnd("ok-reset", dealer=wrong, events=[ROLL, STACKS, reset_ok]),
        rnd("ok-void-unset", dealer=dict(d, high=wrong["high"], low=wrong["low"]), void=True),
        rnd("bad", dealer=wrong),
        rnd("bad-reset", events=[ROLL, STACKS, reset_bad]),
        rnd("bad-reset-then-set", dealer=wrong, events=[ROLL, STACKS, reset_ok, reset_bad]),
    ]
    # trip aces: the house way puts an ace in front; which ace does not matter
    aces = {"cards": ["As", "Ah", "Ad", "9c", "7d", "4s", "2h"]}
    swapped = rnd("ok-suit", dealer=dict(aces, high=["As", "Ah", "7d", "4s", "2h"], low=["Ad", "9c"]))
    not_own = rnd("bad-not-own", dealer=dict(aces, high=["As", "Ac", "7d", "4s", "2h"], low=["Ad", "9c"]))
    f = found(recs + [swapped, not_own], f"{C}(f)")
    assert set(f["round_id"]) == {"bad", "bad-reset", "bad-reset-then-set", "bad-not-own"}
    msg = f.set_index("round_id")["message"]["bad"]
    assert "house way" in msg and "2d 2c" in msg


# ---- money -------------------------------------------------------------------------------
def test_void() -> None:
    recs = [
        rnd("ok", events=[ROLL, STACKS, RESHUFFLE], void=True),
        rnd("ok-dead", status="dead", first_position=2),
        rnd("bad", void=True),
        rnd("bad-dead", status="dead", first_position=2),
        rnd("bad-wagers", void=True, wagers=[{"seat": 4, "bet": "main", "amount": 10, "net": 10}]),
    ]
    recs[3]["hands"][2]["net"] = -20
    recs[2]["hands"][0]["net"] = -200
    recs[2]["hands"][1]["net"] = 9.5
    f = found(recs, "void").set_index("round_id")
    assert set(f.index) == {"bad", "bad-dead", "bad-wagers"}
    assert f.loc["bad", "discrepancy"] == pytest.approx(-190.5)
    assert f.loc["bad-dead", "discrepancy"] == -20
    assert f.loc["bad-wagers", "discrepancy"] == 10
    assert (f["expected_amount"] == 0).all() and (f["recorded_amount"] == f["discrepancy"]).all()
    assert f.loc["bad-dead", "message"] == "seat 3 hand: net -20.00 in a dead round"
    # a completed round's nets are not a void finding
    assert found([rnd("completed")], "void").empty


# Dealer Kc Kd 9h 7s 4c / Ah Qd (one pair: the pair behind, the two highest in front).
SETTLE = {
    "round_id": "S-1", "game": GAME, "table_id": "T", "started_at": "2025-06-02T11:00:00-05:00",
    "dice": [1, 2, 4], "first_position": 7,
    "dealer": {"cards": ["Kc", "Kd", "9h", "7s", "4c", "Ah", "Qd"],
               "high": ["Kc", "Kd", "9h", "7s", "4c"], "low": ["Ah", "Qd"]},
    "hands": [
        # trips win the high hand, A-Q copies the dealer's A-Q: the copy goes to the dealer -> push
        {"seat": 1, "cards": ["5c", "5d", "5h", "8d", "3h", "As", "Qc"],
         "high": ["5c", "5d", "5h", "8d", "3h"], "low": ["As", "Qc"], "wager": 100, "net": 0},
        # fouled: the two-card pair of jacks outranks the nine-high five-card hand -> loses
        {"seat": 2, "cards": ["Jh", "Js", "2c", "3d", "6h", "8c", "9s"],
         "high": ["9s", "8c", "6h", "3d", "2c"], "low": ["Jh", "Js"], "wager": 40, "net": -40},
        # two pair and a pair of kings: both win, 25 pays 23.75 after 5% commission
        {"seat": 3, "cards": ["Tc", "Th", "6d", "6s", "2h", "Ks", "Kh"],
         "high": ["Tc", "Th", "6d", "6s", "2h"], "low": ["Ks", "Kh"], "wager": 25, "net": 23.75},
    ],
    "cards_remaining": 4,
    "events": [{"type": "roll", "dice": [1, 2, 4]}, STACKS],
}


def settle(round_id: str, **nets: float) -> dict:
    r = copy.deepcopy(SETTLE)
    r["round_id"] = round_id
    for h in r["hands"]:
        h["net"] = nets.get(f"s{h['seat']}", h["net"])
    return r


def test_paytable() -> None:
    _needs_evaluator()
    recs = [
        settle("ok"),
        settle("bad-copy-paid", s1=95),           # copy paid as a win
        settle("bad-foul-pushed", s2=0),           # fouled hand pushed
        settle("bad-commission", s3=25),           # paid without commission
        settle("bad-cent", s3=23.74),
    ]
    f = found(recs, "paytable").set_index("round_id")
    assert set(f.index) == {"bad-copy-paid", "bad-foul-pushed", "bad-commission", "bad-cent"}
    assert f.loc["bad-copy-paid", "discrepancy"] == 95
    assert f.loc["bad-foul-pushed", "discrepancy"] == 40
    assert f.loc["bad-commission", "discrepancy"] == pytest.approx(1.25)
    assert f.loc["bad-commission", "expected"] == "+23.75"
    assert f.loc["bad-commission", "recorded"] == "+25.00"
    assert f.loc["bad-commission", "expected_amount"] == 23.75 and f.loc["bad-commission", "recorded_amount"] == 25
    assert f.loc["bad-commission", "message"] == "paytable: seat 3 win on 25.00 pays +23.75, recorded +25.00"
    assert (f["discrepancy"] == (f["recorded_amount"] - f["expected_amount"]).round(6)).all()
    assert f.loc["bad-cent", "discrepancy"] == pytest.approx(-0.01)
    # the base round's settlements are right, and so is the example round
    assert found([rnd("base")], "paytable").empty
    # an exact payout that is not whole cents: 37.5 * 0.95 = 35.625, either cent is fine
    half = [settle(f"h{i}") for i in range(3)]
    for h, net in zip(half, (35.62, 35.63, 35.61), strict=False):
        h["hands"][2].update(wager=37.5, net=net)
    assert set(found(half, "paytable")["round_id"]) == {"h2"}
    # a hand without a complete setting is not settled (nothing to compare)
    partial = settle("partial", s1=95)
    partial["hands"][0]["high"] = partial["hands"][0]["high"][:4]
    assert found([partial], "paytable").empty
    # void rounds are not settled
    v = settle("void", s1=0, s2=0, s3=0)
    v["status"] = "void"
    assert found([v], "paytable").empty


def test_copy_high_goes_to_dealer() -> None:
    _needs_evaluator()
    r = copy.deepcopy(SETTLE)
    r["round_id"] = "copy-high"
    # K K 9 7 4 copies the dealer's high hand; the pair of deuces beats A-Q in front -> push
    r["hands"] = [{"seat": 1, "cards": ["Ks", "Kh", "9d", "7c", "4d", "2s", "2d"],
                   "high": ["Ks", "Kh", "9d", "7c", "4d"], "low": ["2s", "2d"], "wager": 50, "net": 47.5}]
    f = found([r], "paytable")
    assert len(f) == 1 and f["discrepancy"].iloc[0] == 47.5 and f["expected"].iloc[0] == "+0.00"
    assert f["expected_amount"].iloc[0] == 0 and f["recorded_amount"].iloc[0] == 47.5
    r["hands"][0]["net"] = 0
    assert found([r], "paytable").empty


def test_clean_rounds_have_no_finding() -> None:
    _needs_evaluator()
    assert found([rnd("base"), settle("settle")]).empty


# ---- integrity ------------------------------------------------------------------------------
def test_integrity() -> None:
    dup = rnd("bad-dup")
    dup["hands"][2]["cards"][0] = "7s"            # 7s also dealt to seat 1
    dealer_dup = rnd("bad-dealer")
    dealer_dup["hands"][0]["cards"][0] = "4h"     # 4h is the dealer's
    jokers = rnd("bad-jokers")
    jokers["hands"][0]["cards"][0] = "JK"
    jokers["hands"][1]["cards"][0] = "JK"
    one_joker = rnd("ok-joker")
    one_joker["hands"][0]["cards"][0] = "JK"
    f = found([rnd("ok"), dup, dealer_dup, jokers, one_joker], "integrity").set_index("round_id")
    assert set(f.index) == {"bad-dup", "bad-dealer", "bad-jokers"}
    assert f.loc["bad-dup", "message"] == "integrity: 7s dealt to seat 1 and seat 3"
    assert "4h dealt to dealer and seat 1" in f.loc["bad-dealer", "message"]
    assert "JK dealt to seat 1 and seat 2" in f.loc["bad-jokers", "message"]


# ---- worked examples -------------------------------------------------------------------------
def test_worked_examples() -> None:
    _needs_evaluator()
    got = validate_records(example_records(GAME))
    want = expected_findings(GAME)
    g = {(r, c): d for r, c, d in zip(got["round_id"], got["citation"], got["discrepancy"], strict=False)}
    w = {(r, c): d for r, c, d in zip(want["round_id"], want["citation"], want["discrepancy"], strict=False)}
    assert set(g) == set(w)
    for key, d in w.items():
        assert g[key] == pytest.approx(d, abs=0.005), key


# ---- declared columns and settings -------------------------------------------------------------
def test_rules_read_only_their_declared_columns() -> None:
    """A batch cut to a rule's declared columns (plus the report's metadata) gives the same findings."""
    from auditkit.engine.findings import META
    from auditkit.games.pai_gow_poker.simulate import simulate
    from auditkit.paytables import Config
    from auditkit.rules.registry import rules_for
    from auditkit.validate import check_rounds

    table, truth = simulate(4_000, seed=21, fault_rate=0.3, irregular_rate=0.3)
    config = Config()
    for r in rules_for(GAME, "round"):
        assert r.columns, r.rule_id
        whole = check_rounds(table, GAME, config, [r])
        cut = table.select([c for c in table.column_names if c in {*r.columns, *META}])
        part = check_rounds(cut, GAME, config, [r])
        assert len(whole) and whole.equals(part), r.rule_id
    assert {r.rule_id: r.params for r in rules_for(GAME) if r.params} == {
        "paigow.f": ("house_way", "house_ways"), "paigow.paytable": ("win", "commission")}
