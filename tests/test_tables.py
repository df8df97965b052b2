"""Tables for people (auditkit.tables): money, cards, hands and events in words, no NaN or <NA>."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auditkit import tables as T
from auditkit.cards import JOKER, NO_CARD, parse_cards


def test_money_is_to_the_cent_signed_for_nets_and_empty_when_missing():
    assert T.money_text(1234.5) == "1,234.50" and T.money_text(23.75, sign=True) == "+23.75"
    assert T.money_text(-0.001, sign=True) == "+0.00" and T.money_text(-0.004) == "0.00"  # never -0.00
    assert T.money_text(-150, sign=True) == "-150.00"
    assert [T.money_text(x) for x in (None, float("nan"), pd.NA, np.nan)] == ["", "", "", ""]


def test_cards_read_with_suit_symbols_and_tens():
    assert T.cards_text(parse_cards(["As", "Th", "2c", "Kd"])) == "A♠ 10♥ 2♣ K♦"
    assert T.cards_text([JOKER, NO_CARD, 0]) == "JK 2♣" and T.cards_text(None) == ""


def test_readable_leaves_no_nan_or_na_and_puts_the_currency_in_money_titles():
    f = pd.DataFrame({"discrepancy": [2.5, np.nan], "overpaid": [1000.0, None],
                      "source_line": pd.array([3, None], dtype="Int64"), "message": ["x", None],
                      "per_1000": [1.234, np.nan]})
    out = T.readable(f, currency="EUR")
    assert list(out.columns) == ["discrepancy (EUR)", "overpaid (EUR)", "source_line", "message", "per_1000"]
    assert out.iloc[0].tolist() == ["+2.50", "1,000.00", 3, "x", "1.23"]
    assert out.iloc[1].tolist() == ["", "", "", "", ""]
    assert list(T.readable(f).columns)[:2] == ["discrepancy", "overpaid"]  # no currency: titles as they are
    no_money = T.readable(pd.DataFrame({"discrepancy": [0.0, -0.5], "net": [0.0, 1.0]}))
    assert no_money["discrepancy"].tolist() == ["", "-0.50"] and no_money["net"].tolist() == ["+0.00", "+1.00"]


def test_show_says_how_many_of_how_many_and_reads_nothing_as_html():
    f = pd.DataFrame({"round_id": [f"R{i}" for i in range(30)], "message": ["<script>alert(1)</script>"] * 30})
    html = T.show(f, 20).to_html()
    assert "showing 20 of 30" in html and html.count("<tr>") == 21  # the header and 20 rows
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "showing" not in T.show(f, None).to_html()
    assert "Nothing here" in T.show(f.head(0), empty="Nothing here").data


def _hand(**kw):
    return {"seat": 2, "cards": parse_cards(kw.pop("cards")), **kw}


@pytest.mark.parametrize("game, hand, text", [
    ("blackjack", _hand(hand=0, cards=["As", "Th"], wager=25.0, net=37.5), "seat 2 hand 0: A♠ 10♥, 25.00 → +37.50"),
    ("blackjack", _hand(hand=1, cards=["9s", "2h", "Kd"], wager=50.0, net=-50.0, doubled=True, split=True),
     "seat 2 hand 1: 9♠ 2♥ K♦, 50.00 (doubled, split) → -50.00"),
    ("three_card_poker", _hand(cards=["7h", "8s", "9d"], decision="play", ante=25.0, net_ante=25.0, play=25.0,
                               net_play=25.0, ante_bonus=25.0),
     "seat 2: 7♥ 8♠ 9♦ plays; ante 25.00 → +25.00, play 25.00 → +25.00, ante bonus +25.00"),
    ("three_card_poker", _hand(cards=["5d", "2c", "8h"], decision="fold", ante=100.0, net_ante=-100.0, play=0.0,
                               net_play=None, pair_plus=None), "seat 2: 5♦ 2♣ 8♥ folds; ante 100.00 → -100.00"),
    ("pai_gow_poker", _hand(position=3, cards=["As"] * 7, high=parse_cards(["As", "Ks", "5d", "5c", "3h"]),
                            low=parse_cards(["Qc", "Td"]), wager=10.0, net=-10.0),
     "seat 2 (position 3): high A♠ K♠ 5♦ 5♣ 3♥, low Q♣ 10♦; 10.00 → -10.00"),
])
def test_a_hand_reads_in_the_words_of_its_game(game, hand, text):
    assert T.hand_lines(game, [hand]) == text
    assert T.hand_lines(game, [hand, hand]) == f"{text}\n{text}"  # a hand per line


def test_events_read_in_words_and_an_unknown_one_by_its_fields():
    bj = [{"type": "wager", "seat": 1, "action": "place", "amount": 25.0}, {"type": "first_card"},
          {"type": "wager", "seat": 1, "action": "double", "amount": 25.0},
          {"type": "wager", "seat": 3, "action": "surrender", "amount": None}]
    assert T.events_text("blackjack", bj).split("\n") == [
        "seat 1 bets 25.00", "first card dealt", "seat 1 doubles for 25.00", "seat 3 surrenders"]
    pg = [{"type": "no_roll"}, {"type": "roll", "dice": [3, 4, 6]}, {"type": "supervisor_called", "misdeal": False},
          {"type": "stacks_dealt", "count": 7}]
    assert T.events_text("pai_gow_poker", pg).split("\n") == [
        "no roll: the dice reshaken", "dice rolled 3 4 6", "supervisor called: no misdeal", "7 stacks dealt"]
    assert T.events_text("pai_gow_poker", [{"type": "new_thing", "count": 2, "exposed": True, "misdeal": None}]) \
        == "new thing count 2 exposed"


def test_paths_relative_to_the_logs_folder():
    paths = pd.Series(["/data/logs/a.jsonl", "/data/logs/2025/b.csv", "/elsewhere/c.jsonl", None])
    assert T.relative_to(paths, "/data/logs").tolist()[:3] == ["a.jsonl", "2025/b.csv", "c.jsonl"]
    assert T.relative_to(paths, None).tolist() == paths.tolist()
