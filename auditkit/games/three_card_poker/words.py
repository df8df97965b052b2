"""Three card poker in words (:mod:`auditkit.tables`): a patron hand as a line."""

from __future__ import annotations

from typing import Any

from ...tables import cards_text, money_text

__all__ = ["INTRO", "hand_text", "EVENTS"]

_BETS = (("ante", "ante", "net_ante"), ("play", "play", "net_play"), ("pair plus", "pair_plus", "net_pair_plus"))


INTRO = ('Ante and play wagers (a), dealer qualification (b), settlement (c)(1)-(c)(4), ante bonus (d); pair '
         'plus and payouts above the minimums under `paytable`.')
"""What the game notebook says its rules cover."""


def hand_text(h: dict[str, Any]) -> str:
    """``seat 2: 7♥ 8♠ 9♦ plays; ante 25.00 → +25.00, play 25.00 → +25.00, bonus +25.00``."""
    bets = [f"{label} {money_text(h.get(stake))} → {money_text(h.get(net), True)}"
            for label, stake, net in _BETS if h.get(stake)]
    if h.get("ante_bonus"):
        bets.append(f"ante bonus {money_text(h['ante_bonus'], True)}")
    decision = {"play": "plays", "fold": "folds"}.get(str(h.get("decision")), str(h.get("decision") or ""))
    return f"seat {h['seat']}: {cards_text(h.get('cards'))} {decision}; {', '.join(bets) or 'no wager'}"


EVENTS: dict[str, Any] = {}
