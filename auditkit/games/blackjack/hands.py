"""Blackjack's game facts, defined once: totals, blackjack, bust, the dealer's drawing rule, a live
hand and the result 68 IAC 10-2-4 gives a hand, plus the wager actions of the regulation.

The rules' context, the analysis (``theory.py``) and the simulator all use these. Each works
on numpy arrays (one element per hand or round) and on plain Python numbers (one hand of the
simulator): negations use :func:`_not`, never ``~`` (``~True`` is ``-2``).

Rules catalog: "Hand total: A counts 11 unless that busts the hand, then 1. A blackjack is a
two-card 21 on a hand that is not from a split."
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ...cards import IS_ACE, rank_table

BLACKJACK_POINTS = rank_table([2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 1], joker=0, pad=0)
"""Blackjack hard value of each card code (ace 1; soft totals add 10 once where it does not bust)."""

__all__ = ["TWENTY_ONE", "DEALER_STANDS", "ACTIONS", "CHANGES", "CONFIRMED", "ALTERS", "POINTS", "ACES",
           "best_total", "hand_totals", "total", "is_blackjack", "busts", "dealer_must_draw", "is_live",
           "wins_dealer_busts", "wins_higher_total", "wins_blackjack", "pushes", "loses_to_dealer_blackjack",
           "loses", "outcome"]

TWENTY_ONE = 21
DEALER_STANDS = 17
"""The dealer draws below 17 and stands at 17 or more (a soft 17 is drawn to where the house hits it)."""

ACTIONS = ("place", "increase", "withdraw", "double", "split", "surrender", "insurance", "even_money")
"""The ``action`` of a ``wager`` event."""
CHANGES = ("place", "increase", "withdraw")
"""(c): "no wager may be made, increased, or withdrawn after the first card of the round has been dealt"."""
CONFIRMED = ("double", "split", "surrender", "insurance", "even_money")
"""(c) and (e): splitting pairs, doubling down, surrendering, an insurance wager, an even money wager."""
ALTERS = ("increase", "withdraw")
"""(e): what a player may not do to a wager once one of :data:`CONFIRMED` is confirmed."""

POINTS = BLACKJACK_POINTS[:53].tolist()
"""Hard points of each card code (ace 1, ten and faces 10); the joker counts 0."""
ACES = IS_ACE[:53].tolist()


def _not(x: Any) -> Any:
    """Logical not of a boolean array, or of one Python bool (kept a plain bool: the simulator is fast)."""
    return (not x) if x.__class__ is bool else np.logical_not(x)


def best_total(hard: Any, has_ace: Any) -> tuple[Any, Any]:
    """The total of a hand from its hard points and whether it holds an ace: one ace counts 11
    unless that busts the hand (a *soft* total)."""
    soft = has_ace & (hard <= TWENTY_ONE - 10)
    return hard + 10 * soft, soft


def hand_totals(cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Total and softness of each row of a padded card matrix (``-1`` pads)."""
    return best_total(BLACKJACK_POINTS[cards].sum(axis=1, dtype=np.int16), IS_ACE[cards].any(axis=1))


_BEST_TOTALS = [best_total(hard, ace) for hard in range(64) for ace in (False, True)]
"""``best_total(hard, ace)`` at ``2 * hard + ace`` for every hard total below 64 (for :func:`total`)."""


def total(cards: list[int]) -> tuple[int, bool]:
    """Total and softness of one hand's card codes (a plain loop and :func:`best_total` looked up in
    :data:`_BEST_TOTALS`: the simulator calls it per card dealt)."""
    hard, ace = 0, False
    for c in cards:
        hard += POINTS[c]
        ace |= ACES[c]
    return _BEST_TOTALS[2 * hard + ace] if hard < 64 else best_total(hard, ace)


def is_blackjack(n_cards: Any, total: Any, split: Any) -> Any:
    """A two-card 21 on a hand that is not from a split (the dealer's hand is never split)."""
    return (n_cards == 2) & (total == TWENTY_ONE) & _not(split)


def busts(total: Any) -> Any:
    return total > TWENTY_ONE


def dealer_must_draw(total: Any, soft: Any, hits_soft_17: Any) -> Any:
    """The dealer draws below 17, and on a soft 17 when the house hits it."""
    return (total < DEALER_STANDS) | ((total == DEALER_STANDS) & soft & hits_soft_17)


def is_live(total: Any, surrendered: Any, blackjack: Any, even_money: Any) -> Any:
    """A hand the dealer plays against: not busted, not surrendered, not a blackjack, not settled
    by even money. The dealer draws only when some hand of the round is live."""
    return _not(busts(total) | surrendered | blackjack | even_money)


# ---- the result of a hand compared with the dealer's (exactly one holds) ----------------------
def wins_dealer_busts(player: Any, player_bj: Any, dealer: Any) -> Any:
    """(a)(1): the player's cards 21 or less, the dealer's more than 21 (a player blackjack is (a)(3))."""
    return _not(busts(player) | player_bj) & busts(dealer)


def wins_higher_total(player: Any, player_bj: Any, dealer: Any) -> Any:
    """(a)(2): the player's cards exceed the dealer's without exceeding 21."""
    return _not(busts(player) | player_bj | busts(dealer)) & (player > dealer)


def wins_blackjack(player_bj: Any, dealer_bj: Any) -> Any:
    """(a)(3): the player has a blackjack and the dealer does not."""
    return player_bj & _not(dealer_bj)


def pushes(player: Any, player_bj: Any, dealer: Any, dealer_bj: Any) -> Any:
    """(b): the sums are the same (and not over 21), or both have a blackjack: the wager is returned."""
    return (player_bj & dealer_bj) | (_not(busts(player) | player_bj | dealer_bj) & (player == dealer))


def loses_to_dealer_blackjack(player: Any, player_bj: Any, dealer_bj: Any) -> Any:
    """(b): the dealer has a blackjack and the player's 21 is not one: the wager is lost."""
    return dealer_bj & _not(player_bj) & (player == TWENTY_ONE)


def loses(player: Any, player_bj: Any, dealer: Any) -> Any:
    """``loss``: the player busts (whatever the dealer holds), or the dealer's total (or blackjack)
    beats the player's."""
    return busts(player) | (_not(player_bj | busts(dealer)) & (dealer > player))


@cache  # the simulator asks hand by hand; there are a few hundred distinct (totals, blackjacks)
def outcome(player: int, player_bj: bool, dealer: int, dealer_bj: bool) -> tuple[str, int]:
    """One hand's result: the subsection it rests on and its direction (1 win, 0 push, -1 loss)."""
    if wins_dealer_busts(player, player_bj, dealer):
        return "(a)(1)", 1
    if wins_higher_total(player, player_bj, dealer):
        return "(a)(2)", 1
    if wins_blackjack(player_bj, dealer_bj):
        return "(a)(3)", 1
    if pushes(player, player_bj, dealer, dealer_bj):
        return "(b)", 0
    if loses_to_dealer_blackjack(player, player_bj, dealer_bj):
        return "(b)", -1
    return "loss", -1
