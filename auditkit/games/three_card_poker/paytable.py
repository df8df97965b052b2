"""The tables of 68 IAC 10-11-6 and of the posted paytable, one form each.

The rules, the analysis (:mod:`.theory`) and the simulator all read these: the
dealer's qualifier (b), the 1:1 minimum of ante and play wins (c), the ante
bonus minimums (d)(1)-(d)(3), the configuration keys of the ante bonus and pair
plus paytables, and the settlement of a played hand under (c).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...cards import RANKS
from .hands import FLUSH, PAIR, STRAIGHT, STRAIGHT_FLUSH, THREE_OF_A_KIND, high_card_score

__all__ = ["QUEEN_HIGH", "WIN_MINIMUM", "ANTE_BONUS_MINIMUM", "ANTE_BONUS_KEYS", "PAIR_PLUS_KEYS",
           "dealer_qualifies", "ante_bonus_odds", "pair_plus_odds", "ante_and_play_nets"]

QUEEN_HIGH = high_card_score(RANKS.index("Q"), 0, 0)
"""(b) "queen high or better": a dealer hand qualifies when its score is at least this."""

WIN_MINIMUM = 1.0
"""(c)(1), (c)(3): ante and play wins are paid "at odds of at least one (1) to one (1)"."""

ANTE_BONUS_MINIMUM = {STRAIGHT_FLUSH: 5.0, THREE_OF_A_KIND: 4.0, STRAIGHT: 1.0}
"""(d)(1)-(d)(3): the least ante bonus odds of a straight flush, three of a kind and a straight."""

ANTE_BONUS_KEYS = {STRAIGHT_FLUSH: "straight_flush", THREE_OF_A_KIND: "three_of_a_kind", STRAIGHT: "straight"}
"""Hand category to its key in the configuration's ``ante_bonus`` paytable."""

PAIR_PLUS_KEYS = {STRAIGHT_FLUSH: "straight_flush", THREE_OF_A_KIND: "three_of_a_kind", STRAIGHT: "straight",
                  FLUSH: "flush", PAIR: "pair"}
"""Hand category to its key in the configuration's ``pair_plus`` paytable (below a pair the wager loses)."""


def dealer_qualifies(score: np.ndarray) -> np.ndarray:
    """(b): whether each dealer hand score is queen high or better (an unreadable hand, -1, never is)."""
    return np.asarray(score) >= QUEEN_HIGH


def ante_bonus_odds(section: dict[str, Any]) -> dict[int, float]:
    """The ante bonus odds a paytable section pays per category, never read below the (d) minimums."""
    posted = section.get("ante_bonus", {})
    return {cat: max(float(posted.get(key, 0.0)), ANTE_BONUS_MINIMUM[cat]) for cat, key in ANTE_BONUS_KEYS.items()}


def pair_plus_odds(section: dict[str, Any]) -> dict[int, float]:
    """The pair plus odds a paytable section pays per category (pair or better)."""
    posted = section.get("pair_plus", {})
    return {cat: float(posted.get(key, 0.0)) for cat, key in PAIR_PLUS_KEYS.items()}


def ante_and_play_nets(ante: np.ndarray, play: np.ndarray, dealer_qualified: np.ndarray, beats_dealer: np.ndarray,
                       dealer_beats: np.ndarray, ante_odds: np.ndarray | float = WIN_MINIMUM,
                       play_odds: np.ndarray | float = WIN_MINIMUM) -> tuple[np.ndarray, np.ndarray]:
    """(c): the exact ante and play nets of played hands (a tie with a qualifying dealer pushes both).

    (c)(1) the dealer does not qualify: the ante wins at ``ante_odds``, the play pushes;
    (c)(2) it qualifies and beats the hand: both lose; (c)(3) the hand beats it: both win;
    (c)(4) a tie: both push.
    """
    ante_wins = ~dealer_qualified | beats_dealer
    play_wins = dealer_qualified & beats_dealer
    lost = dealer_qualified & dealer_beats
    # a won bet nets its odds times itself, a lost one minus itself, a push nothing
    return ante * (ante_wins * ante_odds - lost), play * (play_wins * play_odds - lost)
