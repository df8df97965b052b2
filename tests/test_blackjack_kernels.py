"""Blackjack kernels against their plain forms, on random and edge inputs (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from auditkit.cards import JOKER
from auditkit.games.blackjack.hands import hand_totals
from auditkit.games.blackjack.kernels import list_counts, list_totals

# card lists: any code of a deck and the joker; aces (48-51) often, empty lists allowed
CARD = st.one_of(st.integers(0, JOKER), st.integers(48, 51))
LISTS = st.lists(st.lists(CARD, max_size=40), max_size=30)  # 40 tens: hard totals past 255


def flat(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = np.array([len(x) for x in lists], dtype=np.int64)
    start = np.zeros(len(n), dtype=np.int64)
    np.cumsum(n[:-1], out=start[1:])
    codes = np.array([c for x in lists for c in x], dtype=np.int8)
    return codes, start, n


def matrix(lists: list[list[int]]) -> np.ndarray:
    m = np.full((len(lists), max([len(x) for x in lists], default=0) or 1), -1, np.int8)
    for i, x in enumerate(lists):
        m[i, :len(x)] = x
    return m


@settings(max_examples=300, derandomize=True, deadline=None)
@given(LISTS)
def test_list_totals_equal_hand_totals(lists: list[list[int]]) -> None:
    total, soft = list_totals(*flat(lists))
    want_total, want_soft = hand_totals(matrix(lists))
    assert total.dtype == np.int16
    assert total.tolist() == want_total.tolist()
    assert soft.tolist() == want_soft.tolist()


@settings(max_examples=300, derandomize=True, deadline=None)
@given(LISTS)
def test_list_counts_equal_plain_sums(lists: list[list[int]]) -> None:
    codes, start, n = flat(lists)
    got = list_counts(codes == JOKER, start, n)
    assert got.tolist() == [sum(c == JOKER for c in x) for x in lists]


def test_list_totals_edges() -> None:
    aces = [[48] * k for k in range(12)]  # 0 to 11 aces: 0, soft 11, soft 12, ..., soft 21, hard 12
    total, soft = list_totals(*flat(aces))
    assert total.tolist() == [0, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]
    assert soft.tolist() == [False] + [True] * 11
    many = [[44] * 12 + [48] * 12]  # twelve kings and twelve aces: 132, no ace counted 11
    assert list_totals(*flat(many))[0].tolist() == [132]
    assert list_totals(*flat([]))[0].tolist() == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 52), max_size=12))
def test_total_lookup_is_best_total(cards):
    """hands.total (best_total looked up per hard total) against best_total of the summed points, long
    hands (hard totals of 64 and more) too."""
    from auditkit.games.blackjack.hands import ACES, POINTS, best_total, total

    hard, ace = sum(POINTS[c] for c in cards), any(ACES[c] for c in cards)
    assert total(cards) == best_total(hard, ace)
    assert total(cards * 6) == best_total(6 * hard, ace)
