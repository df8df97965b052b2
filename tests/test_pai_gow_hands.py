"""Pai gow poker hand values: five-card hands with the joker, two-card hands, fouls."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from auditkit.cards import JOKER, parse_cards
from auditkit.games.pai_gow_poker.hands import (
    FIVE_ACES,
    FLUSH,
    FULL_HOUSE,
    HIGH_CARD,
    PAIR,
    QUADS,
    STRAIGHT,
    STRAIGHT_FLUSH,
    TRIPS,
    TWO_PAIR,
    category5,
    fouled,
    fouled_scores,
    rank2,
    rank5,
)


def hand(text: str) -> np.ndarray:
    return np.array([parse_cards(text.split())], dtype=np.int8)


def r5(text: str) -> int:
    return int(rank5(hand(text))[0])


def r2(text: str) -> int:
    return int(rank2(hand(text))[0])


def cat(text: str) -> int:
    return int(category5(rank5(hand(text)))[0])


# ---- an independent reference evaluator (slow, per hand) -------------------------------------
def ref_real(ranks: list[int], suits: list[int]) -> tuple:
    """(category, tie-break ranks) of five real cards; A-2-3-4-5 is the second-highest straight."""
    counts = Counter(ranks)
    ordered = sorted(ranks, key=lambda r: (counts[r], r), reverse=True)
    flush = len(set(suits)) == 1
    distinct = sorted(set(ranks))
    straight = None
    if len(distinct) == 5:
        if distinct == [0, 1, 2, 3, 12]:
            straight = 12
        elif distinct[4] - distinct[0] == 4:
            straight = 13 if distinct[4] == 12 else distinct[4]
    shape = sorted(counts.values(), reverse=True)
    if shape[0] == 5:
        return (FIVE_ACES, ordered)
    if straight is not None and flush:
        return (STRAIGHT_FLUSH, [straight])
    if shape[0] == 4:
        return (QUADS, ordered)
    if shape[:2] == [3, 2]:
        return (FULL_HOUSE, ordered)
    if flush:
        return (FLUSH, ordered)
    if straight is not None:
        return (STRAIGHT, [straight])
    if shape[0] == 3:
        return (TRIPS, ordered)
    if shape[:2] == [2, 2]:
        return (TWO_PAIR, ordered)
    return (PAIR if shape[0] == 2 else HIGH_CARD, ordered)


def ref_eval(cards: list[int]) -> tuple:
    """Best value of five cards: the joker as an ace (suitless) or any card that makes a straight or flush."""
    real = [c for c in cards if c != JOKER]
    if len(real) == 5:
        return ref_real([c // 4 for c in real], [c % 4 for c in real])
    best = ref_real([c // 4 for c in real] + [12], [c % 4 for c in real] + [9])
    for sub in range(52):
        if sub in real:
            continue
        v = ref_real([c // 4 for c in real + [sub]], [c % 4 for c in real + [sub]])
        if v[0] in (STRAIGHT, FLUSH, STRAIGHT_FLUSH):
            best = max(best, v)
    return best


# ---- five-card hands ----------------------------------------------------------------------------
def test_categories():
    cases = {
        "As Ac Ad Ah JK": FIVE_ACES,
        "As Ks Qs Js Ts": STRAIGHT_FLUSH,
        "5d 4d 3d 2d Ad": STRAIGHT_FLUSH,
        "9c 9d 9h 9s 2c": QUADS,
        "9c 9d 9h 2s 2c": FULL_HOUSE,
        "Kh 9h 7h 4h 2h": FLUSH,
        "Kh Qc Jd Ts 9h": STRAIGHT,
        "Ah 2c 3d 4s 5h": STRAIGHT,
        "7c 7d 7h Ks 2c": TRIPS,
        "7c 7d Kh Ks 2c": TWO_PAIR,
        "7c 7d Kh Qs 2c": PAIR,
        "Ac Jd 9h 7s 2c": HIGH_CARD,
    }
    for text, want in cases.items():
        assert cat(text) == want, text


def test_category_order():
    order = ["Ac Jd 9h 7s 2c", "7c 7d Kh Qs 2c", "7c 7d Kh Ks 2c", "7c 7d 7h Ks 2c", "Kh Qc Jd Ts 9h",
             "Kh 9h 7h 4h 2h", "9c 9d 9h 2s 2c", "9c 9d 9h 9s 2c", "As Ks Qs Js Ts", "As Ac Ad Ah JK"]
    scores = [r5(t) for t in order]
    assert scores == sorted(scores) and len(set(scores)) == len(scores)


def test_tie_breaks():
    assert r5("Kc Kd 9h 5s 2c") > r5("Kh Ks 9c 4s 3c")      # pair: kicker
    assert r5("Kc Kd 9h 5s 2c") == r5("Kh Ks 9c 5d 2h")     # suits never matter
    assert r5("Qc Qd 3h 3s Ac") < r5("Kc Kd 2h 2s 3c")      # two pair: higher pair first
    assert r5("Kc Kd 3h 3s Ac") > r5("Kh Ks 3c 3d Qc")      # then the kicker
    assert r5("4c 4d 4h As Kc") < r5("5c 5d 5h 2s 3c")      # trips rank
    assert r5("3c 3d 3h As Ac") < r5("4c 4d 4h 2s 2c")      # full house: trips first
    assert r5("Ah Jh 9h 4h 2h") > r5("Ah Th 9h 8h 6h")      # flush: card by card


def test_wheel_is_second_highest_straight():
    wheel, broadway, king = r5("Ah 2c 3d 4s 5h"), r5("As Kc Qd Js Th"), r5("Kh Qc Jd Ts 9h")
    six = r5("6h 5c 4d 3s 2h")
    assert six < king < wheel < broadway
    assert r5("5d 4d 3d 2d Ad") > r5("Kd Qd Jd Td 9d")       # likewise for straight flushes
    assert r5("5d 4d 3d 2d Ad") < r5("Ad Kd Qd Jd Td")


def test_joker():
    assert cat("JK 2c 3d 4s 5h") == STRAIGHT and r5("JK 2c 3d 4s 5h") == r5("Ah 2c 3d 4s 5h")  # wheel beats 6-high
    assert r5("JK 2c 3d 4s 6h") == r5("6h 5c 4d 3s 2h")      # joker fills the inside 5
    assert r5("JK Kc Qd Js Th") == r5("As Kc Qd Js Th")      # joker as the ace of a straight
    assert r5("JK Kc Qd Js 9h") == r5("Kh Qc Jd Ts 9h")      # joker as the ten
    assert r5("JK 9s 7s 4s 2s") == r5("As 9s 7s 4s 2s")      # flush: joker as the ace
    assert r5("JK As 9s 4s 2s") == r5("As Ks 9s 4s 2s")      # ace there: joker as the highest missing card
    assert r5("JK Ks Qs Js Ts") == r5("As Ks Qs Js Ts")      # straight flush
    assert r5("JK 5s 4s 3s 2s") == r5("As 5s 4s 3s 2s")      # wheel straight flush (beats the 6-high one)
    assert r5("JK Ac 9d 5s 2c") == r5("As Ac 9d 5s 2c")      # otherwise an ace: pair of aces
    assert r5("JK Kc 9d 5s 2c") == r5("As Kc 9d 5s 2c")      # ace high
    assert r5("JK Kc Kd 5s 5c") == r5("Ac Kc Kd 5s 5h")      # the joker never pairs a king
    assert cat("JK Ac Ad As Kc") == QUADS
    assert cat("JK Ac Ad As Ah") == FIVE_ACES and r5("JK Ac Ad As Ah") > r5("As Ks Qs Js Ts")


def test_joker_against_reference():
    """Every five-card hand holding the joker and three aces or a straight/flush draw, plus a random sample."""
    rng = np.random.default_rng(11)
    rows = [np.sort(rng.choice(52, 4, replace=False)) for _ in range(3000)]
    rows += [np.array(c) for c in combinations([48, 49, 50, 51, 44, 36, 0, 4, 8], 4)]  # aces, K, Q, 2 3 4
    cards = np.array([np.append(r, JOKER) for r in rows], dtype=np.int8)
    got = rank5(cards)
    ref = [ref_eval(list(map(int, c))) for c in cards]
    assert [int(g) >> 20 for g in got] == [v[0] for v in ref]
    order = np.argsort(got, kind="stable")
    for a, b in zip(order[:-1], order[1:], strict=False):   # the scores order the hands as the reference does
        assert (ref[a] < ref[b]) == (got[a] < got[b]) and (ref[a] == ref[b]) == (got[a] == got[b])


def test_all_52_card_hands():
    """The 2,598,960 hands without the joker: the textbook category counts."""
    combos = np.fromiter((x for c in combinations(range(52), 5) for x in c), dtype=np.int8).reshape(-1, 5)
    counts = np.bincount(category5(rank5(combos)), minlength=10)
    assert counts.tolist() == [1302540, 1098240, 123552, 54912, 10200, 5108, 3744, 624, 40, 0]


def test_random_hands_against_reference():
    rng = np.random.default_rng(5)
    cards = np.array([rng.choice(53, 5, replace=False) for _ in range(3000)], dtype=np.int8)
    got = rank5(cards)
    ref = [ref_eval(list(map(int, c))) for c in cards]
    order = np.argsort(got, kind="stable")
    for a, b in zip(order[:-1], order[1:], strict=False):
        assert (ref[a] < ref[b]) == (got[a] < got[b]) and (ref[a] == ref[b]) == (got[a] == got[b])
    assert np.array_equal(rank5(cards[:, ::-1]), got)  # card order is irrelevant


def test_invalid_rows():
    bad = np.array([[0, 1, 2, 3, -1], [0, 1, 2, 3, 60], [52, 52, 1, 2, 3]], dtype=np.int16)
    assert rank5(bad).tolist() == [-1, -1, -1]
    assert rank2(np.array([[-1, 3]], dtype=np.int8)).tolist() == [-1]
    with pytest.raises(ValueError):
        rank5(np.zeros((2, 4), dtype=np.int8))


# ---- two-card hands -------------------------------------------------------------------------------
def test_two_card_hands():
    assert r2("2c 2d") > r2("Ac Kd")                  # any pair beats any non-pair
    assert r2("Ac Ad") > r2("Kc Kd") > r2("2c 2d")
    assert r2("Ac 2d") > r2("Kc Qd")                  # high card first ...
    assert r2("Kc Jd") > r2("Kh Td")                  # ... then the second card
    assert r2("Kc Jd") == r2("Jh Ks")                 # in either order, suits ignored
    assert r2("JK Ac") == r2("Ah As")                 # the joker is an ace: a pair of aces
    assert r2("JK 4c") == r2("Ah 4s")
    assert r2("JK Kc") < r2("2c 2d")
    assert category5(rank2(hand("7c 7d")))[0] == PAIR and category5(rank2(hand("7c 8d")))[0] == HIGH_CARD


# ---- fouls ------------------------------------------------------------------------------------------
def fouls(high: str, low: str) -> bool:
    return bool(fouled(hand(high), hand(low))[0])


def test_fouled():
    assert not fouls("5c 5d 9h 7s 2c", "4h 4s")       # pair of 5s above a pair of 4s
    assert fouls("4c 4d 9h 7s 2c", "5h 5s")           # pair of 4s below a pair of 5s
    assert not fouls("Kc Kd 9h 7s 2c", "Kh Ks")       # split four kings: kickers make the five-card hand higher
    assert not fouls("JK Ac Ad 9s 2c", "As Ah")       # five aces split 3/2
    assert fouls("Kc 9d 7h 5s 2c", "4h 4s")           # high card below any pair
    assert not fouls("Kc 9d 7h 5s 2c", "Qh Js")       # card by card: K > Q
    assert fouls("Kc 8d 7h 5s 2c", "Kh 9s")           # K = K, 8 < 9
    assert not fouls("Kc 9d 7h 5s 2c", "Kh 8s")       # K = K, 9 > 8
    assert not fouls("Kc 9d 7h 5s 2c", "Kh 9s")       # K 9 equal: the five-card hand has more cards
    assert fouls("Kc 9d 7h 5s 2c", "JK 3s")           # the joker in front is an ace
    assert not fouls("3c 3d 2h 2s 4c", "Ah As")       # two pair above any two-card hand
    assert not fouls("JK 9d 7h 5s 2c", "Kh Qs")       # the joker behind is an ace
    assert fouled_scores(np.array([-1]), np.array([r2("Kh Qs")])).tolist() == [True]


def test_examples_patron_hands_not_fouled():
    from tests.conftest import example_records

    for rec in example_records("pai_gow_poker"):
        for h in rec["hands"]:
            if len(h.get("high") or []) == 5 and len(h.get("low") or []) == 2:
                assert not fouled(hand(" ".join(h["high"])), hand(" ".join(h["low"])))[0], (rec["round_id"], h)
