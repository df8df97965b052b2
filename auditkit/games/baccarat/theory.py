"""Baccarat odds and the analysis' view of a round: exact outcome probabilities, observed outcomes, stakes."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ...columns import padded
from .tableau import BACCARAT_POINTS, banker_draws, outcome_of, player_draws

__all__ = ["EVENTS", "EXCLUSIVE", "EVENT_COLUMNS", "STAKE_COLUMNS", "baccarat_probabilities", "shoe_counts",
           "events"]

EVENTS = ("player", "banker", "tie")
"""Outcomes compared with theory."""
EXCLUSIVE = True
"""The events are the outcomes of one round (a chi-square test of them together applies)."""
EVENT_COLUMNS = ["player_cards", "banker_cards"]
STAKE_COLUMNS: list[str] = []
"""Columns beyond ``wagers`` that hold stakes (none: every baccarat bet is a wager)."""


def shoe_counts(decks: int) -> np.ndarray:
    """Cards of each point value 0..9 in a full shoe (tens and faces count 0)."""
    counts = np.full(10, 4 * decks, dtype=np.int64)
    counts[0] = 16 * decks
    return counts


@functools.lru_cache(maxsize=32)
def _exact(counts: tuple[int, ...]) -> tuple[float, float, float]:
    c = np.asarray(counts, dtype=np.float64)
    total = c.sum()
    v = np.indices((10,) * 6).reshape(6, -1)  # every sequence of six point values
    w = np.ones(v.shape[1])
    for i in range(6):  # dealt without replacement: weight of each sequence
        used = sum((v[j] == v[i]).astype(np.float64) for j in range(i))
        w *= np.clip(c[v[i]] - used, 0, None) / (total - i)
    p1, b1, p2, b2, x5, x6 = v
    p2t, b2t = (p1 + p2) % 10, (b1 + b2) % 10
    p_draw = player_draws(p2t, b2t)
    p3 = np.where(p_draw, x5, 0)
    b_draw = banker_draws(p2t, b2t, p_draw, p3)
    b3 = np.where(b_draw, np.where(p_draw, x6, x5), 0)
    out = outcome_of((p2t + p3) % 10, (b2t + b3) % 10)
    probs = np.bincount(out, weights=w, minlength=3) / w.sum()
    return float(probs[0]), float(probs[1]), float(probs[2])


def baccarat_probabilities(decks: int = 8, counts: Sequence[int] | None = None) -> dict[str, float]:
    """Exact probabilities of player, banker and tie for the first round of a full shoe.

    Computed by weighting every sequence of six point values by its
    probability without replacement and playing it through the tableau of
    68 IAC 10-10-14(b). ``counts`` gives the cards of each point value 0..9
    for a shoe of other make-up (tests use it for a biased shoe). Eight decks:
    player 0.446247, banker 0.458597, tie 0.095156.
    """
    c = shoe_counts(decks) if counts is None else np.asarray(counts, dtype=np.int64)
    if c.shape != (10,):
        raise ValueError("counts: ten numbers of cards, point values 0..9")
    p, b, t = _exact(tuple(int(x) for x in c))
    return {"player": p, "banker": b, "tie": t}


def events(t: pa.Table, config: Any, game: str) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """``(event, counted rounds, event happened, probability)`` of each outcome, on the cards as dealt."""
    probs = baccarat_probabilities(int(config.get(game, "decks")))
    p, n_p = padded(t["player_cards"], 3)
    b, n_b = padded(t["banker_cards"], 3)
    pf = BACCARAT_POINTS[p].sum(axis=1) % 10
    bf = BACCARAT_POINTS[b].sum(axis=1) % 10
    ok = (n_p >= 2) & (n_b >= 2) & (n_p <= 3) & (n_b <= 3)
    code = outcome_of(pf, bf)
    return [(e, ok, code == k, np.full(t.num_rows, probs[e])) for k, e in enumerate(EVENTS)]
