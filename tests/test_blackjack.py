"""Blackjack rules (68 IAC 10-2-4): one test per citation, each with rounds that pass and rounds that fail."""

from __future__ import annotations

from itertools import count

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import example_records, expected_findings

from auditkit.games.blackjack.hands import dealer_must_draw, hand_totals
from auditkit.paytables import Config
from auditkit.validate import validate_records

S = "68 IAC 10-2-4"
_ids = count(1)


def hand(seat: int, cards: str, wager: float, net: float, **kw) -> dict:
    return {"seat": seat, "cards": cards.split(), "wager": wager, "net": net, **kw}


def rnd(dealer: str, *hands: dict, rid: str | None = None, **kw) -> dict:
    """A blackjack round record of the spec (limits 10-500 unless given)."""
    rec = {"round_id": rid or f"R{next(_ids)}", "game": "blackjack", "table_id": "T1",
           "started_at": "2025-06-01T10:00:00-05:00", "dealer_cards": dealer.split(), "hands": list(hands),
           "table_min": 10, "table_max": 500}
    rec.update(kw)
    return {k: v for k, v in rec.items() if v is not None}


def wager_ev(seat: int, action: str, amount: float) -> dict:
    return {"type": "wager", "seat": seat, "action": action, "amount": amount}


FIRST = {"type": "first_card"}


def config(**blackjack) -> Config:
    cfg = Config()
    cfg.data["blackjack"].update(blackjack)
    return cfg


def found(*records: dict, cfg: Config | None = None) -> pd.DataFrame:
    return validate_records(list(records), cfg)


def cites(f: pd.DataFrame, rec: dict) -> set[str]:
    return set(f.loc[f["round_id"] == rec["round_id"], "citation"])


def disc(f: pd.DataFrame, rec: dict, citation: str) -> float:
    row = f[(f["round_id"] == rec["round_id"]) & (f["citation"] == citation)]
    assert len(row) == 1, f
    return float(row["discrepancy"].iloc[0])


# ---- arithmetic --------------------------------------------------------------------
def test_hand_totals_soft_aces() -> None:
    from auditkit.cards import parse_cards
    rows = [["Ah", "6d"], ["Ah", "Ad", "9c"], ["Ah", "6d", "Tc"], ["Ah", "Kd"], ["Ts", "6c", "5h"], ["Ac", "Ad"]]
    width = max(map(len, rows))
    m = np.full((len(rows), width), -1, np.int8)
    for i, r in enumerate(rows):
        m[i, :len(r)] = parse_cards(r)
    total, soft = hand_totals(m)
    assert total.tolist() == [17, 21, 17, 21, 21, 12]
    assert soft.tolist() == [True, True, False, True, False, True]
    assert dealer_must_draw(total, soft, False).tolist() == [False, False, False, False, False, True]
    assert dealer_must_draw(total, soft, True).tolist() == [True, False, False, False, False, True]


# ---- (a) ------------------------------------------------------------------------------
def test_68_IAC_10_2_4_a() -> None:
    c = f"{S}(a)"
    ok = rnd("Th 8c", hand(1, "9c 9d", 10, 0), hand(2, "Tc 9h", 500, 500))
    at_max_doubled = rnd("Th 8c", hand(1, "5c 4d Tc", 1000, 1000, doubled=True))  # initial 500
    below = rnd("Th 8c", hand(1, "9c 9d", 5, 0), hand(2, "Tc 9h", 20, 20))
    above = rnd("Th 8c", hand(3, "Tc 9h", 600, 600))
    doubled_low = rnd("Th 8c", hand(1, "5c 4d Tc", 10, 10, doubled=True))  # initial_wager omitted: 5
    explicit_initial = rnd("Th 8c", hand(1, "5c 4d Tc", 30, 30, doubled=True, initial_wager=15))
    split_low = rnd("Th 8c", hand(4, "8c 2d Tc", 5, 5, split=True), hand(4, "8d Td", 5, 0, hand=1, split=True))
    no_limits = rnd("Th 8c", hand(1, "Tc 9h", 5000, 5000), table_min=None, table_max=None)
    f = found(ok, at_max_doubled, below, above, doubled_low, explicit_initial, split_low, no_limits)
    assert c not in cites(f, ok) | cites(f, at_max_doubled) | cites(f, explicit_initial) | cites(f, no_limits)
    for rec in (below, above, doubled_low, split_low):
        assert cites(f, rec) == {c}, rec
        assert disc(f, rec, c) == 0
    assert f.loc[f["round_id"] == split_low["round_id"], "seats"].iloc[0] == "4"  # one finding per seat
    # limits from the configuration when the round has none; a table override wins
    cfg = config(table_min=25.0, table_max=1000.0)
    cfg.data["tables"] = {"T9": {"blackjack": {"table_min": 5.0}}}
    low = rnd("Th 8c", hand(1, "Tc 9h", 10, 10), table_min=None, table_max=None)
    high = rnd("Th 8c", hand(1, "Tc 9h", 5000, 5000), table_min=None, table_max=None)
    other_table = rnd("Th 8c", hand(1, "Tc 9h", 10, 10), table_min=None, table_max=None, table_id="T9")
    round_wins = rnd("Th 8c", hand(1, "Tc 9h", 10, 10), table_min=10, table_max=None)
    f = found(low, high, other_table, round_wins, cfg=cfg)
    assert cites(f, low) == {c} and cites(f, high) == {c}
    assert cites(f, other_table) == set() and cites(f, round_wins) == set()


# ---- outcomes ---------------------------------------------------------------------------
def test_68_IAC_10_2_4_a_1() -> None:
    c = f"{S}(a)(1)"
    ok = rnd("Tc 6d 9s", hand(1, "Jh 7s", 25, 25), hand(2, "Ah 6d", 10, 10))  # soft 17 v dealer 25
    wrong = rnd("3c Jc 3c 9c", hand(2, "Jh 7s", 25, -25))
    pushed = rnd("Tc 6d 9s", hand(2, "Ah 6d", 10, 0))
    both_bust = rnd("Tc 6d 9s", hand(1, "Td 6c 8h", 10, -10))  # player bust first: loses, not (a)(1)
    f = found(ok, wrong, pushed, both_bust)
    assert cites(f, ok) == set() and cites(f, both_bust) == set()
    assert cites(f, wrong) == {c} and disc(f, wrong, c) == -50
    assert cites(f, pushed) == {c} and disc(f, pushed, c) == -10


def test_68_IAC_10_2_4_a_2() -> None:
    c = f"{S}(a)(2)"
    soft_21 = rnd("Tc 9d", hand(1, "Ah Ad 9c", 10, 10))              # A+A+9 = 21 beats 19
    soft_17_wins = rnd("Tc 6d", hand(1, "Ah 6d", 10, 10))             # soft 17 beats 16 (dealer play aside)
    soft_17_push = rnd("Tc 6d Ah", hand(1, "Ah 6d", 10, 0))           # soft 17 v hard 17: push
    wrong = rnd("7s Kh", hand(5, "4d 3s 3d Qd", 100, -100))
    wrong_push = rnd("Tc 9d", hand(1, "Ah Ad 9c", 10, 0))
    doubled = rnd("Tc 8d", hand(1, "6c 5d 9h", 40, -40, doubled=True))  # 20 v 18, doubled: expected +40
    f = found(soft_21, soft_17_wins, soft_17_push, wrong, wrong_push, doubled)
    assert cites(f, soft_21) | cites(f, soft_17_wins) | cites(f, soft_17_push) == set()
    assert cites(f, wrong) == {c} and disc(f, wrong, c) == -200
    assert cites(f, wrong_push) == {c} and disc(f, wrong_push, c) == -10
    assert cites(f, doubled) == {c} and disc(f, doubled, c) == -80


def test_68_IAC_10_2_4_a_3() -> None:
    c = f"{S}(a)(3)"
    ok = rnd("Tc 9d", hand(1, "Ac Kc", 20, 30))
    v_dealer_21 = rnd("Tc 5d 6h", hand(1, "Kd As", 10, 15))               # a three-card 21 is not a blackjack
    wrong = rnd("3s 5c 8h Qs", hand(1, "Ac Kc", 20, -20))
    wrong_push = rnd("Tc 5d 6h", hand(1, "Kd As", 10, 0))
    split_aces = rnd("8h Kh", hand(2, "Ac Qc", 10, 10, split=True), hand(2, "As Jc", 10, 10, hand=1, split=True))
    split_21_push = rnd("Tc 5d 6h", hand(2, "Ac Qc", 10, 0, split=True))  # split 21 v 21: push, not (a)(3)
    f = found(ok, v_dealer_21, wrong, wrong_push, split_aces, split_21_push)
    assert cites(f, ok) | cites(f, v_dealer_21) | cites(f, split_aces) | cites(f, split_21_push) == set()
    assert cites(f, wrong) == {c} and disc(f, wrong, c) == -50
    assert cites(f, wrong_push) == {c} and disc(f, wrong_push, c) == -15
    split_paid_3_2 = rnd("8h Kh", hand(2, "Ac Qc", 10, 15, split=True))
    split_lost = rnd("8h Kh", hand(2, "Ac Qc", 10, -10, split=True))
    f = found(split_paid_3_2, split_lost)
    assert cites(f, split_paid_3_2) == {"paytable"} and disc(f, split_paid_3_2, "paytable") == 5
    assert cites(f, split_lost) == {f"{S}(a)(2)"}


def test_68_IAC_10_2_4_b() -> None:
    c = f"{S}(b)"
    push = rnd("7d 4h 4c 4h", hand(1, "Jh 9c", 10, 0), hand(2, "Ah 8d", 10, 0))  # 19 v 19, soft 19 v 19
    both_bj = rnd("Ks As", hand(1, "Ad Td", 10, 0))
    dealer_bj_v_21 = rnd("Kc Ac", hand(3, "6c 5d Qd", 20, -20))                # player 21, not a blackjack
    dealer_bj_v_split_21 = rnd("Kc Ac", hand(3, "Ac Qd", 20, -20, split=True))
    lost_push = rnd("7d 4h 4c 4h", hand(2, "Jh 9c", 10, -10))
    won_push = rnd("Tc 7h", hand(2, "Ah 6d", 10, 10))                           # soft 17 v 17
    both_bj_lost = rnd("Ks As", hand(1, "Ad Td", 10, -10))
    both_bj_paid = rnd("Ks As", hand(1, "Ad Td", 10, 15))
    bj_v_21_push = rnd("Kc Ac", hand(3, "6c 5d Qd", 20, 0))
    bj_v_21_won = rnd("Kc Ac", hand(3, "6c 5d Qd", 20, 20))
    f = found(push, both_bj, dealer_bj_v_21, dealer_bj_v_split_21, lost_push, won_push, both_bj_lost,
              both_bj_paid, bj_v_21_push, bj_v_21_won)
    for rec in (push, both_bj, dealer_bj_v_21, dealer_bj_v_split_21):
        assert cites(f, rec) == set(), rec
    for rec, d in ((lost_push, -10), (won_push, 10), (both_bj_lost, -10), (both_bj_paid, 15),
                   (bj_v_21_push, 20), (bj_v_21_won, 40)):
        assert cites(f, rec) == {c}, rec
        assert disc(f, rec, c) == d


def test_loss() -> None:
    c = "loss"
    ok = rnd("Ks 6h 9s", hand(4, "2d 3d Ah Th 6h", 20, -20), hand(1, "Tc 7c", 10, -5, surrendered=True))
    bust_paid = rnd("Ks 6h 9s", hand(2, "6d 9c Td", 20, 20))        # both bust: the player loses
    beaten_push = rnd("Tc 9d", hand(1, "Tc 8h", 10, 0))
    dealer_bj_push = rnd("Ac Kd", hand(1, "Tc Th", 10, 0))          # dealer blackjack v 20
    soft_bust = rnd("Tc 7d", hand(1, "Ah 6d Tc 8s", 10, 10))        # A+6+T = hard 17, +8 = 25
    f = found(ok, bust_paid, beaten_push, dealer_bj_push, soft_bust)
    assert cites(f, ok) == set()
    assert cites(f, bust_paid) == {c} and disc(f, bust_paid, c) == 40
    assert cites(f, beaten_push) == {c} and disc(f, beaten_push, c) == 10
    assert cites(f, dealer_bj_push) == {c} and disc(f, dealer_bj_push, c) == 10
    assert cites(f, soft_bust) == {c} and disc(f, soft_bust, c) == 20


# ---- (c), (e) ----------------------------------------------------------------------------
def test_68_IAC_10_2_4_c() -> None:
    c = f"{S}(c)"
    base = [hand(1, "Tc 8h", 20, 0), hand(2, "9c 9h", 20, 0)]

    def with_events(*events: dict) -> dict:
        return rnd("Th 8c", *base, events=list(events))

    before = with_events(wager_ev(1, "place", 15), wager_ev(1, "increase", 5), wager_ev(2, "place", 25),
                         wager_ev(2, "withdraw", 5), FIRST)
    allowed = with_events(wager_ev(1, "place", 20), wager_ev(2, "place", 20), FIRST, wager_ev(1, "insurance", 10),
                          wager_ev(2, "even_money", 20), wager_ev(1, "double", 20), wager_ev(2, "split", 20),
                          wager_ev(1, "surrender", 20))
    no_marker = with_events(wager_ev(1, "place", 20), wager_ev(2, "place", 25), wager_ev(2, "withdraw", 5))
    increased = with_events(wager_ev(1, "place", 15), wager_ev(2, "place", 20), FIRST, wager_ev(1, "increase", 5))
    withdrew = with_events(wager_ev(1, "place", 20), wager_ev(2, "place", 25), FIRST, wager_ev(2, "withdraw", 5))
    placed = with_events(wager_ev(1, "place", 20), FIRST, wager_ev(2, "place", 20))
    f = found(before, allowed, no_marker, increased, withdrew, placed)
    # insurance and even money events on hands that do not match are not paytable matters here: no wagers list
    assert cites(f, before) | cites(f, allowed) | cites(f, no_marker) == set()
    for rec, seat in ((increased, "1"), (withdrew, "2"), (placed, "2")):
        assert cites(f, rec) == {c}, rec
        assert f.loc[f["round_id"] == rec["round_id"], "seats"].iloc[0] == seat


def test_68_IAC_10_2_4_e() -> None:
    c = f"{S}(e)"
    base = [hand(1, "5c 6h 8h", 40, 40, doubled=True), hand(2, "9c 9h", 20, 0)]  # dealer 18

    def with_events(*events: dict) -> dict:
        return rnd("Th 8c", *base, events=list(events))

    ok = with_events(wager_ev(1, "place", 15), wager_ev(1, "increase", 5), wager_ev(2, "place", 20),
                     wager_ev(1, "double", 20))
    other_seat = with_events(wager_ev(1, "place", 20), wager_ev(2, "place", 15), wager_ev(1, "double", 20),
                             wager_ev(2, "increase", 5))
    after_double = with_events(wager_ev(1, "place", 20), wager_ev(2, "place", 20), wager_ev(1, "double", 20),
                               wager_ev(1, "increase", 5))
    after_insurance = with_events(wager_ev(1, "place", 20), wager_ev(2, "place", 25), wager_ev(2, "insurance", 10),
                                  wager_ev(2, "withdraw", 5), wager_ev(1, "double", 20))
    f = found(ok, other_seat, after_double, after_insurance)
    assert cites(f, ok) | cites(f, other_seat) == set()
    assert cites(f, after_double) == {c} and cites(f, after_insurance) == {c}
    assert f.loc[f["round_id"] == after_insurance["round_id"], "seats"].iloc[0] == "2"
    # with a first_card marker the same change also breaks (c)
    marked = rnd("Th 8c", *base, events=[wager_ev(1, "place", 20), wager_ev(2, "place", 20), FIRST,
                                         wager_ev(1, "double", 20), wager_ev(1, "increase", 5)])
    assert cites(found(marked), marked) == {c, f"{S}(c)"}


# ---- paytable --------------------------------------------------------------------------------
def test_paytable() -> None:
    p = "paytable"
    good = [
        rnd("Tc 8d", hand(1, "6c 5d 9h", 40, 40, doubled=True)),                      # doubled: on the total
        rnd("Tc 8d", hand(1, "Ac Kc", 15, 22.5)),                                     # 3:2 on 15
        rnd("Tc 8d", hand(1, "Qs 6d", 100, -50, surrendered=True)),                   # surrender loses half
        rnd("Ad Jd", hand(1, "Ts 3h", 50, -50), wagers=[{"seat": 1, "bet": "insurance", "amount": 25, "net": 50}]),
        rnd("As 9d", hand(1, "Js Js", 100, 0), wagers=[{"seat": 1, "bet": "insurance", "amount": 50, "net": -50}]),
        rnd("As 9d", hand(1, "Ac Kd", 20, 0), wagers=[{"seat": 1, "bet": "even_money", "amount": 20, "net": 20}]),
        rnd("As Kd", hand(1, "Ac Kd", 20, 0), wagers=[{"seat": 1, "bet": "even_money", "amount": 20, "net": 20}]),
        rnd("As 9d", hand(1, "Ac Kd", 20, 20), wagers=[{"seat": 1, "bet": "even_money", "amount": 20, "net": 0}]),
        rnd("Tc 8d", hand(1, "Ac Kc", 12.25, 18.37)),                                 # 18.375: inside the rounding
        rnd("Tc 8d", hand(1, "Ac Kc", 10, 15), wagers=[{"seat": 1, "bet": "lucky_ladies", "amount": 5, "net": 20}]),
    ]
    bad = {
        "doubled_on_initial": (rnd("Tc 8d", hand(1, "6c 5d 9h", 40, 20, doubled=True)), -20),
        "bj_even": (rnd("Tc 8d", hand(1, "Ac Kc", 20, 20)), -10),
        "win_short": (rnd("Tc 8d", hand(1, "Tc 9h", 25, 24.99)), -0.01),
        "loss_double": (rnd("Tc 8d", hand(1, "Tc 7h", 25, -50)), -25),
        "surrender_full": (rnd("Tc 8d", hand(1, "Qs 6d", 100, -100, surrendered=True)), -50),
        "surrender_paid": (rnd("Tc 8d", hand(1, "Qs 6d", 100, 0, surrendered=True)), 50),
        "insurance_1_1": (rnd("As Kd", hand(3, "3s 6h", 100, -100),
                              wagers=[{"seat": 3, "bet": "insurance", "amount": 50, "net": 50}]), -50),
        "insurance_lost_paid": (rnd("As 9d", hand(3, "Ts Th", 100, 0),
                                    wagers=[{"seat": 3, "bet": "insurance", "amount": 50, "net": 100}]), 150),
        "even_money_3_2": (rnd("As 9d", hand(1, "Ac Kd", 20, 30),
                               wagers=[{"seat": 1, "bet": "even_money", "amount": 20, "net": 0}]), 10),
    }
    f = found(*good, *(r for r, _ in bad.values()))
    for rec in good:
        assert cites(f, rec) == set(), (rec, f[f["round_id"] == rec["round_id"]]["message"].tolist())
    for name, (rec, d) in bad.items():
        assert cites(f, rec) == {p}, name
        assert disc(f, rec, p) == pytest.approx(d), name
    # 6:5 blackjack by configuration, per table
    six_five = config(blackjack=1.2)
    paid_6_5 = rnd("Tc 8d", hand(1, "Ac Kc", 25, 30))
    paid_3_2 = rnd("Tc 8d", hand(1, "Ac Kc", 25, 37.5))
    f = found(paid_6_5, paid_3_2, cfg=six_five)
    assert cites(f, paid_6_5) == set()
    assert cites(f, paid_3_2) == {p} and disc(f, paid_3_2, p) == 7.5
    per_table = Config()
    per_table.data["tables"] = {"T6*": {"blackjack": {"blackjack": 1.2}}}
    f = found(rnd("Tc 8d", hand(1, "Ac Kc", 25, 30), table_id="T65", rid="six"),
              rnd("Tc 8d", hand(1, "Ac Kc", 25, 30), rid="three"), cfg=per_table)
    assert set(f["round_id"]) == {"three"}


# ---- void ------------------------------------------------------------------------------------------
def test_void() -> None:
    c = "void"
    void_ok = rnd("Tc 8d", hand(1, "Tc 9h", 25, 0), hand(2, "Tc 5h 9c", 25, 0), status="void")
    void_paid = rnd("Tc 8d", hand(1, "Tc 9h", 25, 25), status="void")
    dead_side = rnd("Ad Jd", hand(1, "Ts 3h", 50, 0), status="dead",
                    wagers=[{"seat": 1, "bet": "insurance", "amount": 25, "net": 50}])
    f = found(void_ok, void_paid, dead_side)
    assert cites(f, void_ok) == set()
    for rec, d in ((void_paid, 25), (dead_side, 50)):
        assert cites(f, rec) == {c}
        row = f[f["round_id"] == rec["round_id"]].iloc[0]
        assert row["discrepancy"] == d and row["recorded_amount"] == d and row["expected_amount"] == 0
    assert "seat 1 hand 0: net +25.00 in a void round" in f.loc[f["round_id"] == void_paid["round_id"], "message"].iloc[0]
    huge = rnd("Tc 8d", hand(1, "Tc 9h", 25, 25, hand=2**31 - 1), status="void")  # labels only the hands there are
    assert "seat 1 hand 2147483647: net +25.00" in found(huge)["message"].iloc[0]
    assert "seat 1 insurance: net +50.00 in a dead round" in f.loc[f["round_id"] == dead_side["round_id"],
                                                                    "message"].iloc[0]


def test_money_findings_are_data() -> None:
    """A money finding carries the expected and recorded nets; a finding about no money leaves them NaN."""
    wrong = rnd("7s Kh", hand(5, "4d 3s 3d Qd", 100, -100))                      # (a)(2): +100 expected
    short = rnd("Tc 8d", hand(1, "Ac Kc", 20, 20))                                # paytable: 3:2 is +30
    insured = rnd("As Kd", hand(3, "3s 6h", 100, -100),
                  wagers=[{"seat": 3, "bet": "insurance", "amount": 50, "net": 50}])
    low = rnd("Th 8c", hand(1, "9c 9d", 5, 0))                                    # (a): not about money
    f = found(wrong, short, insured, low).set_index("round_id")
    for rec, exp, got, text in ((wrong, 100, -100, ("+100.00", "-100.00")), (short, 30, 20, ("+30.00", "+20.00")),
                                (insured, 100, 50, ("+100.00", "+50.00"))):
        row = f.loc[rec["round_id"]]
        assert (row["expected_amount"], row["recorded_amount"], row["discrepancy"]) == (exp, got, got - exp)
        assert (row["expected"], row["recorded"]) == text
        assert f"recorded {text[1]}, expected {text[0]}" in row["message"]
    row = f.loc[low["round_id"]]
    assert np.isnan(row["expected_amount"]) and np.isnan(row["recorded_amount"]) and row["discrepancy"] == 0
    assert row["expected"] == "10.00-500.00" and row["recorded"] == "5.00"


# ---- integrity ---------------------------------------------------------------------------------
def test_integrity() -> None:
    joker = rnd("Tc 8d", hand(1, "JK 9h", 25, 0))
    f = found(joker)
    assert set(f["citation"]) == {"integrity"}  # outcome checks skip a round whose cards are not a deal

    def shoe_round(seq: int, dealer: str, cards: str, shoe: str | None = "S1", table: str = "T1") -> dict:
        return rnd(dealer, hand(1, cards, 10, 0), rid=f"{table}-{shoe}-{seq}", shoe_id=shoe, round_seq=seq,
                   table_id=table, started_at=f"2025-06-01T10:{seq:02d}:00-05:00")

    # six copies of 2h in a 6-deck shoe are fine, the seventh is a finding on the round it appears in
    rounds = [shoe_round(1, "Tc 2h 6s", "9c 2h 7s"),   # 18 v 18
              shoe_round(2, "Tc 2h 6s", "9c 2h 7s"),
              shoe_round(3, "Tc 2h 6s", "2h 9c 7s"),
              shoe_round(4, "Tc 8h", "9c 9s"),
              shoe_round(5, "Tc 8h", "9c 3h 6s"),
              shoe_round(6, "Tc 8h", "9c 2h 2h 5s")]
    f = found(*rounds)
    assert list(f["round_id"]) == ["T1-S1-6"] and set(f["citation"]) == {"integrity"}
    assert "2h (copy 7), 2h (copy 8)" in f["message"].iloc[0]
    # the same cards split over two shoes, or without shoe_id, or in an 8-deck shoe: no finding
    def again(shoe: str | None, table: str = "T1") -> list[dict]:
        return [shoe_round(r["round_seq"], " ".join(r["dealer_cards"]), " ".join(r["hands"][0]["cards"]),
                           shoe=shoe if r["round_seq"] < 4 or shoe is None else shoe + "b", table=table)
                for r in rounds]

    other = again("S1", table="T3")  # rounds 4-6 in another shoe
    no_shoe = again(None, table="T2")
    assert found(*other).empty
    assert found(*no_shoe).empty
    assert found(*rounds, cfg=config(decks=8)).empty


# ---- house rules: dealer play ---------------------------------------------------------------------
def test_house_rules_dealer_play() -> None:
    c = "house-rules"
    on = config(check_dealer_play=True)
    h17 = config(check_dealer_play=True, dealer_hits_soft_17=True)
    stood_16 = rnd("Tc 6d", hand(1, "Tc 5h", 10, -10))
    drew_17 = rnd("Tc 7d 2c", hand(1, "Tc 8h", 10, -10))              # drew on hard 17
    soft_17_stand = rnd("Ac 6d", hand(1, "Tc 8h", 10, 10))
    soft_17_hit = rnd("Ac 6d 3s", hand(1, "Tc 8h", 10, -10))          # A+6+3 = soft 20
    soft_then_hard = rnd("Ac 5d Tc 4h", hand(1, "Tc 8h", 10, -10))   # soft 16 -> hard 16 -> 20
    drew_twice = rnd("5c 5h 5s Ad Td", hand(1, "Tc 8h", 10, 10))       # 10, 15, 16, 26: correct
    drew_past_stand = rnd("5c 5h 7s 4d", hand(1, "Tc 8h", 10, -10))  # 17 reached, then drew
    all_busted = rnd("Tc 2d", hand(1, "Tc 8h 9c", 10, -10))           # no live hand: dealer need not draw
    all_surrendered = rnd("Tc 2d", hand(1, "Tc 6h", 10, -5, surrendered=True))
    only_blackjacks = rnd("Tc 2d", hand(1, "Ac Kh", 10, 15))
    assert found(stood_16, drew_17).empty  # off by default
    f = found(stood_16, drew_17, soft_17_stand, soft_17_hit, soft_then_hard, drew_twice, drew_past_stand,
              all_busted, all_surrendered, only_blackjacks, cfg=on)
    assert set(f["round_id"]) == {r["round_id"] for r in (stood_16, drew_17, soft_17_hit, drew_past_stand)}
    assert set(f["citation"]) == {c}
    assert "stood on 16" in f.loc[f["round_id"] == stood_16["round_id"], "message"].iloc[0]
    assert "soft 17" in f.loc[f["round_id"] == soft_17_hit["round_id"], "message"].iloc[0]
    f = found(soft_17_stand, soft_17_hit, drew_17, cfg=h17)
    assert set(f["round_id"]) == {soft_17_stand["round_id"], drew_17["round_id"]}
    assert "stood on soft 17" in f.loc[f["round_id"] == soft_17_stand["round_id"], "message"].iloc[0]


# ---- worked examples ------------------------------------------------------------------------------
def test_worked_examples() -> None:
    f = validate_records(example_records("blackjack"))
    exp = expected_findings("blackjack")
    got = {(r, c): d for r, c, d in f[["round_id", "citation", "discrepancy"]].itertuples(index=False)}
    want = {(r, c): float(d) for r, c, d in exp[["round_id", "citation", "discrepancy"]].itertuples(index=False)}
    assert got.keys() == want.keys()
    for key, d in want.items():
        assert got[key] == pytest.approx(d, abs=0.005), key
    assert len(f) == len(exp)


def test_sliced_and_chunked_batches() -> None:
    """A batch that is a slice of a chunked table (rounds without wagers or events) reads the same."""
    from auditkit.ingest.records import parse_record
    from auditkit.schema import schema_for
    from auditkit.validate import check_rounds
    recs = [rnd("Tc 9d", hand(1, "Tc 7h", 10, -10)), rnd("Tc 9d", hand(1, "Tc 7h", 10, 10), hand(2, "Ac Kd", 10, 15)),
            rnd("Tc 9d", hand(1, "Tc 9h", 10, 0), events=[wager_ev(1, "place", 10), FIRST])]
    rows = [parse_record(r)[2] | {"source_file": "x", "source_line": i} for i, r in enumerate(recs)]
    t = pa.Table.from_pylist(rows, schema=schema_for("blackjack"))
    chunked = pa.concat_tables([t.slice(0, 1), t.slice(1, 2)]).slice(1)
    f = check_rounds(chunked, "blackjack", Config())
    assert list(f["round_id"]) == [recs[1]["round_id"]]
    assert list(f["citation"]) == ["loss"] and f["discrepancy"].iloc[0] == 20
