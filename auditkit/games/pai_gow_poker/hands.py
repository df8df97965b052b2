"""Pai gow poker hand values: five-card hands with the joker ("bug") and two-card hands.

Scores are ``int64`` and comparable across hands of one kind (higher is better):
``category << 20 | t0 << 16 | t1 << 12 | t2 << 8 | t3 << 4 | t4`` where ``t0..t4`` are
the tie-break ranks (0 = deuce .. 12 = ace), groups first (``K K 9 9 4`` for two pair),
then kickers, high to low. Straights score one value ``t0``: 4 (six high) .. 11 (king
high), then **A-2-3-4-5 = 12, the second-highest straight**, and A-K-Q-J-T = 13
(the rule of most casinos and of the published house ways this package follows;
see docs/house_way.md). A two-card score uses the same layout: ``PAIR << 20 | r << 16 |
r << 12`` or ``high << 16 | low << 12``.

The joker plays as an ace, or as any card that completes a straight, flush or straight
flush, whichever scores best; four aces and the joker are five aces, the top hand.
A row holding a card code outside 0..52, or two jokers, or five real cards of a rank,
scores -1.

Evaluation is a table lookup: the five ranks sorted high to low (joker = 13) form a
base-14 number, and a second table serves the hands whose real cards share one suit.
The 2 x 14**5 tables are built once, from the 8,568 rank patterns, on first use.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations_with_replacement

import numpy as np

from ...cards import RANK

__all__ = [
    "HIGH_CARD", "PAIR", "TWO_PAIR", "TRIPS", "STRAIGHT", "FLUSH", "FULL_HOUSE", "QUADS",
    "STRAIGHT_FLUSH", "FIVE_ACES", "CATEGORY_NAMES", "rank5", "category5", "rank2",
    "fouled", "fouled_scores", "score_table", "score_pattern", "rank2_from_ranks",
    "rank5_columns", "rank2_columns", "fouled_columns", "sort_columns_desc",
]

HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH, FIVE_ACES = range(10)
CATEGORY_NAMES = ("high card", "pair", "two pair", "three of a kind", "straight", "flush",
                  "full house", "four of a kind", "straight flush", "five aces")

ACE = 12
JOKER_RANK = 13
BASE = 14
PLANE = BASE**5  # offset of the flush table
_WEIGHTS = np.array([BASE**4, BASE**3, BASE**2, BASE, 1], dtype=np.int32)


# ---- scalar reference evaluation of one rank pattern (used to build the tables) --------
def _straight_value(ranks: list[int]) -> int:
    """Straight value of five distinct real ranks, or -1: A-K-Q-J-T 13, A-2-3-4-5 12, else top rank."""
    s = sorted(set(ranks))
    if len(s) != 5:
        return -1
    if s == [0, 1, 2, 3, ACE]:
        return 12
    if s[4] - s[0] == 4:
        return 13 if s[4] == ACE else s[4]
    return -1


def _pack(category: int, ties: list[int]) -> int:
    ties = (ties + [0, 0, 0, 0, 0])[:5]
    return (category << 20) | (ties[0] << 16) | (ties[1] << 12) | (ties[2] << 8) | (ties[3] << 4) | ties[4]


def _score_real(ranks: list[int], flush: bool) -> int:
    """Score of five real ranks (a rank may repeat up to five times: five aces)."""
    counts = {r: ranks.count(r) for r in set(ranks)}
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    ties = [r for r, c in groups for _ in range(c)]
    shape = sorted(counts.values(), reverse=True)
    straight = _straight_value(ranks)
    if shape[0] == 5:
        return _pack(FIVE_ACES, ties) if groups[0][0] == ACE else -1
    if straight >= 0 and flush:
        return _pack(STRAIGHT_FLUSH, [straight])
    if shape[0] == 4:
        return _pack(QUADS, ties)
    if shape[:2] == [3, 2]:
        return _pack(FULL_HOUSE, ties)
    if flush:
        return _pack(FLUSH, ties)
    if straight >= 0:
        return _pack(STRAIGHT, [straight])
    if shape[0] == 3:
        return _pack(TRIPS, ties)
    if shape[:2] == [2, 2]:
        return _pack(TWO_PAIR, ties)
    if shape[0] == 2:
        return _pack(PAIR, ties)
    return _pack(HIGH_CARD, ties)


def score_pattern(ranks: tuple[int, ...], flush: bool) -> int:
    """Best score of a five-card rank pattern (joker = 13), all real cards suited when ``flush``.

    The joker is an ace, or any rank that completes a straight, flush or straight flush.
    """
    real = [r for r in ranks if r != JOKER_RANK]
    if len(real) < 4 or any(real.count(r) > 4 for r in real):
        return -1
    if len(real) == 5:
        if flush and len(set(real)) < 5:
            return -1  # a suited pattern with a repeated rank cannot occur
        return _score_real(real, flush)
    if flush and len(set(real)) < 4:
        return -1
    best = _score_real(real + [ACE], False) if real.count(ACE) <= 4 else -1
    for x in range(13):
        if x in real:
            continue
        s = _score_real(real + [x], flush)
        if s >> 20 in (STRAIGHT, FLUSH, STRAIGHT_FLUSH):
            best = max(best, s)
    return best


@lru_cache(maxsize=1)
def score_table() -> np.ndarray:
    """int32 [2 * 14**5]: score of each sorted-descending base-14 rank pattern, plain then suited."""
    table = np.full(2 * PLANE, -1, dtype=np.int32)
    for combo in combinations_with_replacement(range(BASE - 1, -1, -1), 5):  # non-increasing
        idx = sum(r * w for r, w in zip(combo, (BASE**4, BASE**3, BASE**2, BASE, 1), strict=False))
        if combo.count(JOKER_RANK) > 1:
            continue
        table[idx] = score_pattern(combo, False)
        table[PLANE + idx] = score_pattern(combo, True)
    return table


_NET5 = ((0, 1), (3, 4), (2, 4), (2, 3), (0, 3), (0, 2), (1, 4), (1, 3), (1, 2))
"""A sorting network for five values: compare-exchange these positions in turn."""


def sort_columns_desc(cols: list[np.ndarray], network: tuple[tuple[int, int], ...]) -> list[np.ndarray]:
    """Sort a list of equal-length columns high to low position-wise by a sorting ``network``
    (elementwise maximum and minimum over whole columns: no per-row call, no loop over rows)."""
    cols = list(cols)
    for i, j in network:
        a, b = cols[i], cols[j]
        cols[i], cols[j] = np.maximum(a, b), np.minimum(a, b)
    return cols


def rank5_columns(cols: list[np.ndarray]) -> np.ndarray:
    """int32 [n] scores (as :func:`rank5`) of five int8 card-code columns (contiguous arrays).

    The codes are sorted high to low by a network of elementwise max/min (the joker, 52,
    first); a valid code's rank is ``code >> 2`` (the joker's is 13) and its suit ``code & 3``.
    """
    c = sort_columns_desc(cols, _NET5)
    valid = (c[0] <= 52) & (c[4] >= 0)
    s = [x & 3 for x in c]
    suited = (s[1] == s[2]) & (s[2] == s[3]) & (s[3] == s[4]) & ((s[0] == s[1]) | (c[0] == 52))
    # index = suited * 14**5 + the base-14 number of the ranks, by Horner's rule in the narrowest ints
    r = [(x >> 2).view(np.uint8) for x in c]  # 0..13 where valid
    a = suited.view(np.uint8) * np.uint8(BASE) + r[0]
    a = a.astype(np.uint16) * np.uint16(BASE) + r[1]
    a = a * np.uint16(BASE) + r[2]
    idx = a.astype(np.int32) * BASE + r[3]
    idx = idx * BASE + r[4]
    out = score_table().take(idx, mode="clip")  # an invalid row's index may be anything: cleared below
    if not valid.all():
        out[~valid] = -1
    return out


def _int8_cards(cards: np.ndarray) -> np.ndarray:
    """A card matrix as int8, any code outside 0..52 (after an int16 cast) as NO_CARD."""
    if cards.dtype == np.int8:
        return cards
    c = cards.astype(np.int16)
    return np.where((c < 0) | (c > 52), np.int16(-1), c).astype(np.int8)


def rank5(cards: np.ndarray) -> np.ndarray:
    """int8 [n, 5] cards (joker allowed) -> int64 [n] comparable score, higher better; -1 if invalid."""
    c = np.asarray(cards)
    if c.ndim != 2 or c.shape[1] != 5:
        raise ValueError(f"rank5 expects an [n, 5] card matrix, got shape {c.shape}")
    ct = np.ascontiguousarray(_int8_cards(c).T)
    return rank5_columns(list(ct)).astype(np.int64)


def category5(scores: np.ndarray) -> np.ndarray:
    """int8 [n] category constant of each five-card (or two-card) score; -1 for an invalid score."""
    s = np.asarray(scores, dtype=np.int64)
    return np.where(s < 0, -1, s >> 20).astype(np.int8)


def rank2_from_ranks(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """Two-card score from the ranks of the two cards (joker 13 read as an ace), in either order."""
    a = np.minimum(np.asarray(high, dtype=np.int64), ACE)
    b = np.minimum(np.asarray(low, dtype=np.int64), ACE)
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    return np.where(hi == lo, (PAIR << 20) | (hi << 16) | (hi << 12), (hi << 16) | (lo << 12))


_R2_CODES = np.full((54, 54), -1, dtype=np.int64)
_R2_CODES[:53, :53] = rank2_from_ranks(RANK[:53, None], RANK[None, :53])
"""Two-card score by the two card codes (0..52; 53 stands for any invalid code)."""


def rank2(cards: np.ndarray) -> np.ndarray:
    """int8 [n, 2] cards -> int64 [n] comparable two-card score (joker = ace); -1 if invalid."""
    c = np.asarray(cards)
    if c.ndim != 2 or c.shape[1] != 2:
        raise ValueError(f"rank2 expects an [n, 2] card matrix, got shape {c.shape}")
    c = c.astype(np.int32)
    a, b = c[:, 0], c[:, 1]
    a = np.where((a < 0) | (a > 52), 53, a)
    b = np.where((b < 0) | (b > 52), 53, b)
    return _R2_CODES.ravel().take(a * 54 + b)


def fouled_scores(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """bool [n]: the five-card score does not outrank the two-card score.

    Only the part of the five-card hand that the two-card hand can match counts: its
    category, then the pair rank (a pair of 5s with kickers outranks a two-card pair of
    5s), or its two highest cards for a high-card hand (K 9 7 5 3 outranks K 9).
    Invalid scores (-1) are fouled.
    """
    h = np.asarray(high, dtype=np.int64)
    lo = np.asarray(low, dtype=np.int64)
    hcat = h >> 20
    hkey = np.where(hcat == HIGH_CARD, h >> 12, np.where(hcat == PAIR, (h >> 16) << 4, hcat << 8))
    lcat = lo >> 20
    lkey = np.where(lcat == PAIR, (lo >> 16) << 4, lo >> 12)
    return (h < 0) | (lo < 0) | (hkey < lkey)


_R2_BYTES = np.full((256, 256), -1, dtype=np.int32)
_R2_BYTES[:53, :53] = _R2_CODES[:53, :53]
"""Two-card score by the two codes read as bytes (-1 is 255), for :func:`rank2_columns`."""


def rank2_columns(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """int32 [n] scores (as :func:`rank2`) of two int8 card-code columns."""
    return _R2_BYTES.ravel().take((a.view(np.uint8).astype(np.uint16) << 8) | b.view(np.uint8))


_V = np.arange((FIVE_ACES + 1) << 8)
_HIGH_KEY = np.where(_V >> 8 == HIGH_CARD, _V, np.where(_V >> 8 == PAIR, (_V >> 4) << 4, (_V >> 8) << 8)).astype(np.int16)
_LOW_KEY = np.where(_V >> 8 == PAIR, (_V >> 4) << 4, _V)[:(PAIR + 1) << 8].astype(np.int16)
""":func:`fouled_scores`' comparison keys by ``score >> 12`` of a five-card and of a two-card score."""


def fouled_columns(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """:func:`fouled_scores` of scores as :func:`rank5_columns` and :func:`rank2_columns` give them
    (valid or -1), by two small lookups."""
    return (high < 0) | (low < 0) | (_HIGH_KEY.take(high >> 12) < _LOW_KEY.take(low >> 12))


def fouled(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """bool [n]: the five-card hand (int8 [n, 5]) does not outrank the two-card hand (int8 [n, 2])."""
    return fouled_scores(rank5(high), rank2(low))
