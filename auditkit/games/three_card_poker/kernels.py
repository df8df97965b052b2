"""Tuned kernels of the three card poker context, each proven equal to a plain form in
``tests/test_three_card_kernels.py`` and kept because ``bench/bench_three_card_poker.py`` needs it.

* :func:`distinct_cards_short`: the integrity screen. The plain form sorts a per-round
  matrix of every card of the round; this one ORs one bit per card (52-bit masks) and
  counts the bits, so only the few flagged rounds are sorted to say which card repeats.
"""

from __future__ import annotations

import numpy as np

__all__ = ["distinct_cards_short"]

_BIT = np.zeros(256, dtype=np.uint64)
_BIT[:52] = np.left_shift(np.uint64(1), np.arange(52, dtype=np.uint64))
"""One bit per real card, indexed by an int8 code read as uint8 (NO_CARD, the joker and any other code: 0)."""


def _bits(cards: np.ndarray) -> np.ndarray:
    """The 52-bit mask of the cards of each row of an ``(m, 3)`` int8 matrix."""
    b = _BIT[np.ascontiguousarray(cards, dtype=np.int8).view(np.uint8)]
    return b[:, 0] | b[:, 1] | b[:, 2]


def distinct_cards_short(dealer: np.ndarray, cards: np.ndarray, hand_round: np.ndarray) -> np.ndarray:
    """Per round: fewer than ``3 * (hands + 1)`` distinct real cards among the dealer's three and each hand's three.

    ``dealer`` is ``(n, 3)``, ``cards`` ``(h, 3)`` (int8, NO_CARD padded) and ``hand_round``
    the round of each hand, non-decreasing. A round whose hands and dealer hold three
    real cards each is short exactly when a card repeats in it.
    """
    n = len(dealer)
    bits = _bits(dealer)
    per_round = np.bincount(hand_round, minlength=n)
    if len(hand_round):
        some = per_round > 0
        starts = (np.cumsum(per_round) - per_round)[some]
        bits[some] |= np.bitwise_or.reduceat(_bits(cards), starts)
    return np.bitwise_count(bits) < 3 * (per_round + 1)
