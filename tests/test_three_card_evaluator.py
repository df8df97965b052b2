"""The three card poker evaluator: category counts over every hand, ordering, ties, qualification."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from auditkit.cards import JOKER, NO_CARD, parse_cards
from auditkit.games.three_card_poker.hands import (
    FLUSH,
    HIGH_CARD,
    PAIR,
    STRAIGHT,
    STRAIGHT_FLUSH,
    THREE_OF_A_KIND,
    evaluate,
)
from auditkit.games.three_card_poker.paytable import QUEEN_HIGH
from auditkit.games.three_card_poker.paytable import dealer_qualifies as qualifies


def hands(*texts: str) -> np.ndarray:
    return np.array([parse_cards(t.split()) for t in texts], dtype=np.int8)


def score(text: str) -> int:
    return int(evaluate(hands(text))[1][0])


@pytest.fixture(scope="module")
def all_hands() -> np.ndarray:
    return np.array(list(itertools.combinations(range(52), 3)), dtype=np.int8)


def test_category_counts(all_hands: np.ndarray) -> None:
    assert len(all_hands) == 22_100
    category, _ = evaluate(all_hands)
    counts = np.bincount(category, minlength=6)
    assert counts[STRAIGHT_FLUSH] == 48
    assert counts[THREE_OF_A_KIND] == 52
    assert counts[STRAIGHT] == 720
    assert counts[FLUSH] == 1_096
    assert counts[PAIR] == 3_744
    assert counts[HIGH_CARD] == 16_440


def test_dealer_fails_to_qualify(all_hands: np.ndarray) -> None:
    _, s = evaluate(all_hands)
    assert int((~qualifies(s)).sum()) == 6_720


def test_order_of_cards_does_not_matter(all_hands: np.ndarray) -> None:
    _, s = evaluate(all_hands)
    for perm in itertools.permutations(range(3)):
        assert np.array_equal(evaluate(all_hands[:, perm])[1], s)


def test_categories_rank_high_to_low() -> None:
    order = ["2c 3c 4c", "2c 2d 2h", "Ac Kd Qh", "2c 3c 5c", "Ac Ad Kh", "Ac Kd Jh"]  # SF > trips > ...
    scores = [score(h) for h in order]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 6
    cats = evaluate(hands(*order))[0].tolist()
    assert cats == [STRAIGHT_FLUSH, THREE_OF_A_KIND, STRAIGHT, FLUSH, PAIR, HIGH_CARD]


def test_straights_a23_lowest_qka_highest() -> None:
    ranks = "A23456789TJQKA"
    straights = [f"{ranks[i]}c {ranks[i + 1]}d {ranks[i + 2]}h" for i in range(12)]
    s = [score(h) for h in straights]
    assert s == sorted(s) and len(set(s)) == 12  # A-2-3 < 2-3-4 < ... < Q-K-A
    assert evaluate(hands(*straights))[0].tolist() == [STRAIGHT] * 12
    assert evaluate(hands("Ac 2c 3c", "Qs Ks As"))[0].tolist() == [STRAIGHT_FLUSH] * 2
    assert score("Ac 2c 3c") < score("2d 3d 4d")
    assert evaluate(hands("Kc Ad 2h"))[0][0] == HIGH_CARD  # no wrap-around


def test_kickers_break_ties() -> None:
    assert score("Ks 7s 3d") > score("Kd 7h 2c")      # third card
    assert score("Ks 8s 2d") > score("Kd 7h 6c")      # second card first
    assert score("9c 9d 2h") > score("8c 8d Ah")      # pair rank before kicker
    assert score("9c 9d 5h") > score("9h 9s 4c")      # then the kicker
    assert score("Ac 9c 5c") > score("Kd Qd 9d")        # flush: from the highest card
    assert score("Ac 9c 5c") > score("Ad 8d 7d")


def test_identical_ranks_tie() -> None:
    assert score("Kc 8d 7h") == score("8h Ks 7d")
    assert score("4h 4d 8h") == score("4s 4c 8c")
    assert score("Qd Jd Th") == score("Qc Js Ts")
    assert score("2h 6h Th") == score("Ts 6s 2s")


def test_queen_high_qualifies_jack_high_does_not() -> None:
    _, s = evaluate(hands("Qh 2c 3d", "Jh 9c 8d", "2c 2d 3h", "Qd Jd Th", "Kc 4d 2s", "Ac 2d 4h"))
    assert qualifies(s).tolist() == [True, False, True, True, True, True]
    assert score("Qh 3c 2d") == QUEEN_HIGH + 13 + 0


def test_invalid_rows() -> None:
    cat, s = evaluate(np.array([[JOKER, 0, 1], [NO_CARD, 4, 8], [0, 4, 8]], dtype=np.int8))
    assert cat.tolist()[:2] == [-1, -1] and s.tolist()[:2] == [-1, -1]
    assert not qualifies(s[:2]).any()
    with pytest.raises(ValueError):
        evaluate(np.zeros((2, 4), dtype=np.int8))


def _reference_key(hand: tuple[int, ...]) -> tuple:
    """An independent, readable (slow) ranking of one hand, for cross-checking the table."""
    ranks = sorted((c // 4 for c in hand), reverse=True)
    flush = len({c % 4 for c in hand}) == 1
    if ranks == [12, 1, 0]:
        straight_high = 1
    elif ranks[0] - ranks[2] == 2 and len(set(ranks)) == 3:
        straight_high = ranks[0]
    else:
        straight_high = None
    if straight_high is not None and flush:
        return (5, straight_high)
    if len(set(ranks)) == 1:
        return (4, ranks[0])
    if straight_high is not None:
        return (3, straight_high)
    if flush:
        return (2, *ranks)
    if len(set(ranks)) == 2:
        pair = ranks[1]
        return (1, pair, ranks[0] if ranks[0] != pair else ranks[2])
    return (0, *ranks)


def test_matches_reference_ordering(all_hands: np.ndarray) -> None:
    _, s = evaluate(all_hands)
    keys = [_reference_key(tuple(int(c) for c in h)) for h in all_hands]
    distinct = sorted(set(keys))
    lookup = {k: i for i, k in enumerate(distinct)}
    ref_rank = np.array([lookup[k] for k in keys])
    # same order and same ties: the scores map one-to-one and monotonically onto the reference ranks
    order = np.argsort(s, kind="stable")
    assert np.all(np.diff(ref_rank[order]) >= 0)
    assert len(np.unique(s)) == len(distinct)
