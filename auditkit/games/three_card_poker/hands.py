"""Three card poker hand evaluator, vectorized over any number of hands.

Ranks, high to low: straight flush, three of a kind, straight, flush, pair,
high card. A-2-3 is the lowest straight (the ace plays low there) and Q-K-A the
highest. Equal categories compare card by card from the highest, a pair first by
the rank of the pair, then by the kicker; suits never break a tie.

Every hand gets one comparable integer ``score = category << 12 | tiebreak``
read from a lookup table indexed by its three card codes (``52**3`` entries,
built once at import), so evaluating millions of hands is one gather. The dealer's
qualifier (queen high) is in :mod:`.paytable`.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "HIGH_CARD", "PAIR", "FLUSH", "STRAIGHT", "THREE_OF_A_KIND", "STRAIGHT_FLUSH", "CATEGORY_NAMES",
    "CATEGORY_SHIFT", "evaluate", "high_card_score",
]

HIGH_CARD = 0
PAIR = 1
FLUSH = 2
STRAIGHT = 3
THREE_OF_A_KIND = 4
STRAIGHT_FLUSH = 5
CATEGORY_NAMES = ("high card", "pair", "flush", "straight", "three of a kind", "straight flush")
"""Name of each category, indexed by its constant."""

CATEGORY_SHIFT = 12
"""``score >> CATEGORY_SHIFT`` is the category (tiebreaks stay below 13**3 < 4096)."""


def high_card_score(r0: int, r1: int, r2: int) -> int:
    """Score of a high-card hand of ranks ``r0 >= r1 >= r2`` (0 = deuce .. 12 = ace)."""
    return (HIGH_CARD << CATEGORY_SHIFT) | (r0 * 169 + r1 * 13 + r2)


def _rank_scores(c0: np.ndarray, c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
    """Scores of hands given as three code arrays (0..51), fully vectorized (used to build the table)."""
    r = np.sort(np.stack([c0 // 4, c1 // 4, c2 // 4], axis=1), axis=1)[:, ::-1].astype(np.int32)
    s = np.stack([c0 % 4, c1 % 4, c2 % 4], axis=1)
    r0, r1, r2 = r[:, 0], r[:, 1], r[:, 2]
    distinct = (r0 != r1) & (r1 != r2)
    trips = r0 == r2
    pair = ~trips & ~distinct
    wheel = (r0 == 12) & (r1 == 1) & (r2 == 0)  # A-3-2: the ace plays low
    straight = distinct & ((r0 - r2 == 2) | wheel)
    flush = distinct & (s[:, 0] == s[:, 1]) & (s[:, 1] == s[:, 2])
    category = np.select(
        [straight & flush, trips, straight, flush, pair],
        [STRAIGHT_FLUSH, THREE_OF_A_KIND, STRAIGHT, FLUSH, PAIR], HIGH_CARD)
    pair_rank = r1  # sorted: the middle card always belongs to the pair
    kicker = np.where(r0 == r1, r2, r0)
    tiebreak = np.select(
        [straight, trips, pair],
        [np.where(wheel, 1, r0), r0, pair_rank * 13 + kicker],
        r0 * 169 + r1 * 13 + r2)
    return ((category << CATEGORY_SHIFT) | tiebreak).astype(np.int32)


def _build_table() -> np.ndarray:
    c = np.indices((52, 52, 52), dtype=np.int32).reshape(3, -1)
    return _rank_scores(c[0], c[1], c[2])


SCORES = _build_table()
"""Score of every ordered triple of card codes, at ``c0 * 2704 + c1 * 52 + c2``."""

_SCORES53 = np.full((53, 53, 53), -1, dtype=np.int32)
_SCORES53[:52, :52, :52] = SCORES.reshape(52, 52, 52)
_SCORES53 = _SCORES53.ravel()
_CODE = np.full(256, 52, dtype=np.int32)  # an int8 code read as uint8: 0..51 real cards, anything else 52
_CODE[:52] = np.arange(52)


def evaluate(cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Category (int8) and score (int32) of each row of an ``(n, 3)`` card-code matrix.

    Rows holding anything but three real cards (NO_CARD padding, a joker) get
    category and score -1. Repeated codes are evaluated as written.
    """
    cards = np.asarray(cards)
    if cards.ndim != 2 or cards.shape[1] != 3:
        raise ValueError(f"expected an (n, 3) card matrix, got shape {cards.shape}")
    c = _CODE[np.ascontiguousarray(cards, dtype=np.int8).view(np.uint8)]  # NO_CARD, joker -> 52
    score = _SCORES53[c[:, 0] * 2809 + c[:, 1] * 53 + c[:, 2]]
    category = (score >> CATEGORY_SHIFT).astype(np.int8)
    return category, score
