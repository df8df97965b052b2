"""Tuned kernels of the blackjack context, each equal to a plain form (``tests/test_blackjack_kernels.py``).

* :func:`list_totals`: the totals of many card lists straight from their flat codes, by prefix
  sums, instead of padding them into a matrix (:func:`hands.hand_totals`, the plain form). The
  round checks of 1,000,000 simulated rounds (2.9 M hands) take 2.16 s CPU with it, 3.12 s with
  the padded form (same run, same findings).
* :func:`list_counts`: the sum of a flag over each list (the jokers of each hand), the same way.
"""

from __future__ import annotations

import numpy as np

from ...cards import IS_ACE
from .hands import BLACKJACK_POINTS, best_total

__all__ = ["list_totals", "list_counts"]

# hard points + 2**16 x (is an ace) per card code: one prefix sum gives both per list (up to 6,553 cards)
_ACE = 1 << 16
_POINTS_AND_ACE = BLACKJACK_POINTS.astype(np.int64) + _ACE * IS_ACE.astype(np.int64)


def list_counts(values: np.ndarray, start: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The sum of ``values[start[i]:start[i] + n[i]]`` for each list ``i`` (prefix differences)."""
    cs = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=cs[1:])
    return cs[start + n] - cs[start]


def list_totals(flat: np.ndarray, start: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Total and softness of each list ``flat[start[i]:start[i] + n[i]]`` of card codes."""
    both = list_counts(_POINTS_AND_ACE[flat], start, n)
    total, soft = best_total(both % _ACE, both >= _ACE)
    return total.astype(np.int16), soft
