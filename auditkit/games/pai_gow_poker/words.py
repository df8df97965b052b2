"""Pai gow poker in words (:mod:`auditkit.tables`): a patron hand as a line, the procedure's events."""

from __future__ import annotations

from typing import Any

from ...tables import cards_text, money_text

__all__ = ["INTRO", "hand_text", "EVENTS"]


INTRO = ('Irregularities (a)-(i): face-up cards, dice, cards out of order or exposed, hands of other than '
         "seven cards, stacks and cards remaining; the dealer's setting by the house way (f); `void` and "
         '`paytable`. No outcome of pai gow has a fixed probability (the dealer sets by the house way), so '
         'there is no expected-versus-observed test; the hold is shown instead.')
"""What the game notebook says its rules cover."""


def hand_text(h: dict[str, Any]) -> str:
    """``seat 1 (position 3): high A♠ K♠ 5♦ 5♣ 3♥, low Q♣ 10♦; 10.00 → -10.00``."""
    where = f" (position {h['position']})" if h.get("position") is not None else ""
    if h.get("high") or h.get("low"):
        cards = f"high {cards_text(h.get('high'))}, low {cards_text(h.get('low'))}"
    else:
        cards = cards_text(h.get("cards"))
    return f"seat {h['seat']}{where}: {cards}; {money_text(h.get('wager'))} → {money_text(h.get('net'), True)}"


def _count(e: dict[str, Any], one: str, many: str) -> str:
    n = e.get("count")
    return one if n in (None, 1) else f"{n} {many}"


EVENTS = {
    "face_up_card": lambda e: _count(e, "a card found face up in the deck", "cards found face up in the deck"),
    "no_roll": lambda e: "no roll: the dice reshaken",
    "roll": lambda e: f"dice rolled {' '.join(str(d) for d in e.get('dice') or [])}",
    "card_out_of_order": lambda e: "a card drawn out of order" + (", exposed" if e.get("exposed") else ""),
    "dealer_card_exposed": lambda e: "a card of the dealer's hand exposed",
    "card_exposed_during_stacks": lambda e: "a card exposed while the stacks were dealt",
    "stacks_dealt": lambda e: f"{e.get('count')} stacks dealt",
    "supervisor_called": lambda e: "supervisor called: " + ("a misdeal" if e.get("misdeal") else "no misdeal"),
    "dealer_hand_reset": lambda e: (f"the dealer's hand reset to high {cards_text(e.get('high'))}, "
                                    f"low {cards_text(e.get('low'))}"),
    "reshuffle": lambda e: "the cards reshuffled",
}
