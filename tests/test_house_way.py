"""Pai gow poker house way: every category of seven cards, the joker, configuration, the worked examples."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from auditkit.cards import JOKER, RANKS, parse_cards
from auditkit.games.pai_gow_poker.hands import FLUSH, STRAIGHT, STRAIGHT_FLUSH, fouled, rank2, rank5
from auditkit.games.pai_gow_poker.house_way import (
    DEFAULT,
    STRUCTURES,
    HouseWay,
    HouseWayError,
    load_house_way,
    same_setting,
    set_hands,
)
from auditkit.paytables import load_config
from tests.conftest import example_records, expected_findings


def cards(text: str) -> list[int]:
    return parse_cards(text.split())


def setting(text: str, way: HouseWay = DEFAULT) -> tuple[set[int], set[int]]:
    high, low = set_hands(np.array([cards(text)], dtype=np.int8), way)
    return set(high[0].tolist()), set(low[0].tolist())


def check(seven: str, high: str, low: str, way: HouseWay = DEFAULT) -> None:
    """The house way sets ``seven`` as ``high / low``, or as an equal setting that differs only in suits."""
    got_high, got_low = set_hands(np.array([cards(seven)], dtype=np.int8), way)
    want_high, want_low = np.array([cards(high)], dtype=np.int8), np.array([cards(low)], dtype=np.int8)
    assert sorted(cards(high) + cards(low)) == sorted(cards(seven))
    assert same_setting(got_high, got_low, want_high, want_low)[0], (seven, got_high, got_low)


# ---- hand-written settings of every category (default house way) ------------------------------
CASES = [
    # no pair: highest behind, the next two in front
    ("Ks Qh 9c 8c 5s 3s 2c", "Ks 8c 5s 3s 2c", "Qh 9c"),
    ("JK Qh 9c 8c 5s 3s 2d", "JK 8c 5s 3s 2d", "Qh 9c"),            # the joker is the ace
    # one pair: pair behind, two highest singletons in front
    ("9d 9h Kc Qc 8h 5s 3d", "9h 9d 8h 5s 3d", "Kc Qc"),
    ("7s 7h JK Kd 9h 4c 2s", "7s 7h 9h 4c 2s", "JK Kd"),            # joker in front as an ace
    ("JK Ah Kd 9h 7c 4s 2c", "JK Ah 7c 4s 2c", "Kd 9h"),            # ace + joker: a pair of aces
    # two pair: low-low / low-mid split unless a king or ace
    ("6s 6h 3c 3d Qh 9c 2s", "6s 6h Qh 9c 2s", "3c 3d"),
    ("6s 6h 3c 3d Kh 9c 2s", "6s 6h 3c 3d 2s", "Kh 9c"),
    ("Ts Th 3c 3d Qh 9c 2s", "Ts Th Qh 9c 2s", "3c 3d"),
    ("Ts Th 3c 3d Ah 9c 2s", "Ts Th 3c 3d 2s", "Ah 9c"),
    # low-high / mid-mid split unless an ace (the joker counts)
    ("Ks Kh 4c 4d Qh 9c 2s", "Ks Kh Qh 9c 2s", "4c 4d"),
    ("Ks Kh 4c 4d Ah 9c 2s", "Ks Kh 4c 4d 2s", "Ah 9c"),
    ("9s 9h 8c 8d Kh 5c 2s", "9s 9h Kh 5c 2s", "8c 8d"),
    ("9s 9h 8c 8d Ah 5c 2s", "9s 9h 8c 8d 2s", "Ah 5c"),
    ("Qh Qc 6d 6s JK 9c 2s", "Qh Qc 6d 6s 2s", "JK 9c"),
    # mid-high, high-high, aces with any pair: always split
    ("Js Jh 8c 8d Ah 5c 2s", "Js Jh Ah 5c 2s", "8c 8d"),
    ("Ks Kh Qc Qd Ah 5c 2s", "Ks Kh Ah 5c 2s", "Qc Qd"),
    ("As Ah 3c 3d Kh 5c 2s", "As Ah Kh 5c 2s", "3c 3d"),
    ("JK Ah 3c 3d Kh 9c 7s", "JK Ah Kh 9c 7s", "3c 3d"),
    # two pair with a straight: the two pair rule (the straight is broken)
    ("9s 9h 8c 8d 7h 6c 5s", "9s 9h 7h 6c 5s", "8c 8d"),
    ("JK Ah 3c 3d 7h 5c 2s", "JK Ah 7h 5c 2s", "3c 3d"),            # A-2-3-x-5 wheel ignored too
    # three pair: highest pair in front
    ("Ks Kh 7c 7d 4h 4c 2s", "7c 7d 4h 4c 2s", "Ks Kh"),
    ("JK Ah 7c 7d 4h 4c 2s", "7c 7d 4h 4c 2s", "JK Ah"),
    # trips behind, two highest singletons in front; three aces split
    ("8s 8h 8c Kd 9h 5c 2s", "8s 8h 8c 5c 2s", "Kd 9h"),
    ("As Ah Ac Kd 9h 5c 2s", "As Ah 9h 5c 2s", "Ac Kd"),
    ("JK As Ah Kd 9h 5c 2s", "JK As 9h 5c 2s", "Ah Kd"),
    # two trips: a pair of the higher in front
    ("Ks Kh Kc 5d 5h 5c 2s", "Ks 5d 5h 5c 2s", "Kh Kc"),
    # full house: the pair in front; deuces kept with A-K; with another pair the highest pair in front
    ("Qs Qh Qc 8d 8h Ac 2s", "Qs Qh Qc Ac 2s", "8d 8h"),
    ("Qs Qh Qc 2d 2h Ac Ks", "Qs Qh Qc 2d 2h", "Ac Ks"),
    ("Qs Qh Qc 2d 2h Ac Js", "Qs Qh Qc Ac Js", "2d 2h"),
    ("Qs Qh Qc 3d 3h Ac Ks", "Qs Qh Qc Ac Ks", "3d 3h"),
    ("9s 9h 9c Kd Kh 4c 4s", "9s 9h 9c 4c 4s", "Kd Kh"),
    # four of a kind: 2-6 kept, 7-T split unless an ace (or joker) can play in front, J-A split
    ("5s 5h 5c 5d Kh Qc 2s", "5s 5h 5c 5d 2s", "Kh Qc"),
    ("9s 9h 9c 9d Kh Qc 2s", "9s 9h Kh Qc 2s", "9c 9d"),
    ("9s 9h 9c 9d Ah Qc 2s", "9s 9h 9c 9d 2s", "Ah Qc"),
    ("9s 9h 9c 9d JK Qc 2s", "9s 9h 9c 9d 2s", "JK Qc"),
    ("Ks Kh Kc Kd Ah Qc 2s", "Ks Kh Ah Qc 2s", "Kc Kd"),
    ("As Ah Ac Ad Kh Qc 2s", "As Ah Kh Qc 2s", "Ac Ad"),
    ("7s 7h 7c 7d Qh Qc 2s", "7s 7h 7c 7d 2s", "Qh Qc"),            # with a pair: pair in front
    ("4s 4h 4c 4d 9h 9c 9s", "4s 4h 4c 4d 9s", "9h 9c"),            # with trips: its pair in front
    # five aces: 3/2 split, kept together with a pair of kings
    ("JK As Ah Ac Ad 9c 2s", "JK As 9c 2s Ah", "Ac Ad"),
    ("JK As Ah Ac Ad Kc Ks", "JK As Ah Ac Ad", "Kc Ks"),
    ("JK As Ah Ac Ad Qc Qs", "JK As Ah Qc Qs", "Ac Ad"),
    # straights and flushes: keep them behind, the best two cards possible in front
    ("9s 8h 7c 6d 5h Kc 2s", "9s 8h 7c 6d 5h", "Kc 2s"),
    ("Ts 9s 8h 7c 6d 5h 2c", "9s 8h 7c 6d 5h", "Ts 2c"),            # six-card straight
    ("Ts 9s 8h 7c 6d 5h 4c", "8h 7c 6d 5h 4c", "Ts 9s"),            # seven-card straight
    ("Ah 2c 3d 4s 5h Kc 9d", "Ah 2c 3d 4s 5h", "Kc 9d"),            # the wheel
    ("9s 8h 7c 6d 5h Kc Ks", "9s 8h 7c 6d 5h", "Kc Ks"),            # straight and a pair in front
    ("Ks Js 8s 5s 2s Ah Qd", "Ks Js 8s 5s 2s", "Ah Qd"),
    ("Ks Js 8s 5s 3s 2s Ah", "Js 8s 5s 3s 2s", "Ah Ks"),            # six-card flush
    ("Th 9h 8c 7h 6d 3h 2h", "Th 9h 7h 3h 2h", "8c 6d"),            # flush (front 8-6) over straight (front 3-2)
    ("9h 8h 7h 6h 5h Kc Qd", "9h 8h 7h 6h 5h", "Kc Qd"),            # straight flush
    ("8s 8h 8c 9d Th 7c 6s", "Th 9d 8s 7c 6s", "8h 8c"),            # trips and a straight: pair in front
    # the joker in straights, flushes and straight flushes
    ("JK 9s 8h 7c 5h Kc 2s", "JK 9s 8h 7c 5h", "Kc 2s"),
    ("JK Ks 9s 6s 3s Ah Qd", "JK Ks 9s 6s 3s", "Ah Qd"),
    ("JK Kh Qh Jh Th 2c 3d", "JK Kh Qh Jh Th", "3d 2c"),
    ("JK 2h 3c 4d Kh 9c 7s", "JK 7s 4d 3c 2h", "Kh 9c"),            # no straight (one joker, A and 5 missing)
    # an ace-high straight made with an ace and the joker is played as a pair of aces ...
    ("As JK Qh Jc Td 4s 3c", "As JK Td 4s 3c", "Qh Jc"),
    # ... but a wheel with the ace and the joker is played
    ("As JK 2h 3c 4d Kh 9c", "As JK 2h 3c 4d", "Kh 9c"),
    # ... and a lower straight is played, here with the aces in front
    ("As JK Kh Qc Jd Ts 9c", "Kh Qc Jd Ts 9c", "As JK"),
]


@pytest.mark.parametrize("seven,high,low", CASES, ids=[c[0] for c in CASES])
def test_house_way_cases(seven: str, high: str, low: str):
    check(seven, high, low)


# ---- a slow reference implementation of the house way, rule by rule ----------------------------
def ref_setting(seven: list[int], way: HouseWay = DEFAULT) -> tuple[int, int]:
    """(five-card score, two-card score) of the house way, from the rule text, by brute force."""
    def rk(c: int) -> int:
        return 12 if c == JOKER else c // 4

    options = []
    for low in combinations(seven, 2):
        high = [c for c in seven if c not in low]
        s5 = int(rank5(np.array([high], dtype=np.int8))[0])
        s2 = int(rank2(np.array([low], dtype=np.int8))[0])
        options.append((high, list(low), s5, s2))
    counts = Counter(rk(c) for c in seven)
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = [n for _, n in groups]
    singles = sorted((r for r, n in counts.items() if n == 1), reverse=True)
    pairs = sorted((r for r, n in counts.items() if n == 2), reverse=True)
    trips = sorted((r for r, n in counts.items() if n == 3), reverse=True)

    def rank(t: str) -> int:
        return 99 if t == "none" else RANKS.index(t)

    if shape[0] == 5:
        kind = "five_aces"
        front = [pairs[0]] * 2 if pairs and pairs[0] >= rank(way.five_aces_keep_with_pair) else [12, 12]
    elif shape[0] == 4:
        kind, q = "quads", groups[0][0]
        if trips:
            front = [trips[0]] * 2
        elif pairs:
            front = [pairs[0]] * 2
        elif q <= rank(way.quads_keep_max) or (q <= rank(way.quads_keep_with_ace_max) and singles[0] == 12):
            front = singles[:2]
        else:
            front = [q, q]
    elif len(trips) == 2:
        kind, front = "two_trips", [trips[0]] * 2
    elif trips and pairs:
        kind = "full_house"
        w = way.full_house_keep_with
        if (len(pairs) == 1 and pairs[0] <= rank(way.full_house_keep_pair_max)
                and singles[0] >= rank(w[0]) and singles[1] >= rank(w[1])):
            front = singles[:2]
        else:
            front = [pairs[0]] * 2
    elif trips:
        kind = "trips"
        front = [12, singles[0]] if trips[0] == 12 and way.split_three_aces else singles[:2]
    elif len(pairs) == 3:
        kind, front = "three_pair", [pairs[0]] * 2
    elif len(pairs) == 2:
        kind = "two_pair"

        def klass(p: int) -> int:
            return 0 if p <= rank(way.low_pair_max) else 1 if p <= rank(way.mid_pair_max) else 2 if p < 12 else 3
        a, b = klass(pairs[0]), klass(pairs[1])
        name = "aces" if a == 3 else ["low", "mid", "high"][b] + "_" + ["low", "mid", "high"][a]
        rule = way.two_pair[name]
        keep = rule == "keep" or (rule != "split" and singles[0] >= rank(rule))
        front = singles[:2] if keep else [pairs[1]] * 2
    elif pairs:
        kind, front = "one_pair", singles[:2]
    else:
        kind, front = "no_pair", singles[1:3]
    if kind in way.straights_with:
        sf = []
        for high, _low, s5, s2 in options:
            if s5 >> 20 not in (STRAIGHT, FLUSH, STRAIGHT_FLUSH):
                continue
            ace_high = s5 >> 20 == STRAIGHT and (s5 >> 16) & 15 == 13
            if way.ace_joker_high_straight_as_pair and ace_high and JOKER in high and any(c // 4 == 12 and c != JOKER for c in high):
                continue
            sf.append((s2, s5))
        if sf:
            s2, s5 = max(sf)
            return s5, s2
    matches = [(s5, s2) for high, low, s5, s2 in options if sorted(rk(c) for c in low) == sorted(front)]
    return max(matches)


def random_hands(n: int, seed: int) -> np.ndarray:
    """n random seven-card hands, a third of them with the joker, a third suited-heavy."""
    rng = np.random.default_rng(seed)
    hands = np.argsort(rng.random((n, 53)), axis=1)[:, :7].astype(np.int8)
    k = n // 3
    with_joker = np.argsort(rng.random((k, 52)), axis=1)[:, :6]
    hands[:k] = np.concatenate([with_joker, np.full((k, 1), JOKER)], axis=1)
    # many straights and flushes: draw from 20 cards (5 ranks x 4 suits, or 2 suits x 10 ranks)
    lo = rng.integers(0, 9, size=k)
    pool = (lo[:, None] * 4 + np.arange(20)[None, :]) % 52
    hands[k:2 * k] = np.take_along_axis(pool, np.argsort(rng.random((k, 20)), axis=1)[:, :7], axis=1)
    return hands


def test_against_reference():
    hands = random_hands(3000, seed=3)
    high, low = set_hands(hands)
    got = list(zip(rank5(high).tolist(), rank2(low).tolist(), strict=True))
    for i, seven in enumerate(hands.tolist()):
        assert got[i] == ref_setting(seven), seven


def test_variant_against_reference():
    way = load_house_way({"two_pair": {"low_low": "split", "mid_mid": "keep", "mid_high": "A"},
                          "split_three_aces": False, "full_house_keep_pair_max": "none", "quads_keep_max": "9",
                          "five_aces_keep_with_pair": "none", "straights_with": ["no_pair", "one_pair", "two_pair"],
                          "ace_joker_high_straight_as_pair": False})
    hands = random_hands(1500, seed=4)
    high, low = set_hands(hands, way)
    got = list(zip(rank5(high).tolist(), rank2(low).tolist(), strict=True))
    for i, seven in enumerate(hands.tolist()):
        assert got[i] == ref_setting(seven, way), seven


# ---- every hand can be set --------------------------------------------------------------------
def test_random_sample_partition_no_foul_deterministic():
    hands = random_hands(200_000, seed=1)
    high, low = set_hands(hands)
    both = np.sort(np.concatenate([high, low], axis=1), axis=1)
    assert np.array_equal(both, np.sort(hands, axis=1))              # a partition of the seven cards
    assert not fouled(high, low).any()                                # the house way never fouls
    rng = np.random.default_rng(2)
    shuffled = np.take_along_axis(hands, np.argsort(rng.random(hands.shape), axis=1), axis=1)
    high2, low2 = set_hands(shuffled)
    assert np.array_equal(high, high2) and np.array_equal(low, low2)  # same cards in any order, same setting
    assert same_setting(high, low, high2, low2).all()


def test_invalid_rows_and_shapes():
    rows = np.array([cards("Ks Qh 9c 8c 5s 3s 2c"), [0, 1, 2, 3, 4, 5, -1]], dtype=np.int8)
    high, low = set_hands(rows)
    assert (high[1] == -1).all() and (low[1] == -1).all() and (high[0] >= 0).all()
    with pytest.raises(ValueError):
        set_hands(np.zeros((1, 6), dtype=np.int8))
    empty_high, empty_low = set_hands(np.zeros((0, 7), dtype=np.int8))
    assert empty_high.shape == (0, 5) and empty_low.shape == (0, 2)


# ---- configuration ----------------------------------------------------------------------------
def test_load_house_way():
    assert load_house_way("default") is DEFAULT
    way = load_house_way({"two_pair": {"low_low": "split"}, "name": "strict"})
    assert way.two_pair["low_low"] == "split" and way.two_pair["low_high"] == "A" and way.name == "strict"
    check("6s 6h 3c 3d Kh 9c 2s", "6s 6h Kh 9c 2s", "3c 3d", way)     # now split despite the king
    for bad in ({"two_pair": {"low_low": "Z"}}, {"colour": "red"}, {"two_pair": {"aces_low": "A"}},
                {"straights_with": ["rainbow"]}, {"low_pair_max": "J"}, {"split_three_aces": "yes"},
                {"base": "nowhere"}, "nowhere", 3):
        with pytest.raises(HouseWayError):
            load_house_way(bad)
    assert set(STRUCTURES) >= set(DEFAULT.straights_with)


def test_house_way_from_toml(tmp_path: Path):
    path = tmp_path / "licensee.toml"
    path.write_text(
        '[pai_gow_poker]\nhouse_way = "strict"\n'
        '[pai_gow_poker.house_ways.strict]\nbase = "default"\ntwo_pair = { low_low = "split", low_mid = "split" }\n'
        '[tables."PG-9".pai_gow_poker]\nhouse_way = "default"\n')
    config = load_config(path)
    name = config.get("pai_gow_poker", "house_way")
    way = load_house_way(config.data["pai_gow_poker"]["house_ways"][name])
    check("6s 6h 3c 3d Kh 9c 2s", "6s 6h Kh 9c 2s", "3c 3d", way)
    assert config.get("pai_gow_poker", "house_way", "PG-9") == "default"
    check("6s 6h 3c 3d Kh 9c 2s", "6s 6h 3c 3d 2s", "Kh 9c", load_house_way(config.get("pai_gow_poker", "house_way", "PG-9")))


# ---- the worked examples ------------------------------------------------------------------------
def test_examples_dealer_settings():
    """Every example dealer is set (and reset) in the default house way, except the one (f) finding."""
    expected = expected_findings("pai_gow_poker")
    f_rounds = set(expected.loc[expected["citation"] == "68 IAC 10-9-17(f)", "round_id"])
    assert f_rounds == {"PGP-20250602-adf614"}
    records = example_records("pai_gow_poker")
    sevens = np.array([cards(" ".join(r["dealer"]["cards"])) for r in records], dtype=np.int8)
    high, low = set_hands(sevens)
    resets = 0
    for i, rec in enumerate(records):
        way = (set(high[i].tolist()), set(low[i].tolist()))
        final = rec["dealer"]
        for ev in rec.get("events", []):
            if ev["type"] == "dealer_hand_reset":
                final, resets = ev, resets + 1
        recorded = (set(cards(" ".join(final["high"]))), set(cards(" ".join(final["low"]))))
        if rec["round_id"] in f_rounds:
            assert recorded != way
            assert way == (set(cards("Ks 8c 5s 3s 2c")), set(cards("Qh 9c")))
            assert recorded == (set(cards("Ks Qh 8c 5s 2c")), set(cards("9c 3s")))
        else:
            assert recorded == way, rec["round_id"]
    assert resets >= 1
