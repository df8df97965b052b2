"""Blackjack in words (:mod:`auditkit.tables`): a patron hand as a line, the wager events."""

from __future__ import annotations

from typing import Any

from ...tables import cards_text, money_text

__all__ = ["INTRO", "hand_text", "EVENTS"]


INTRO = ('Wagers within limits (a), winning hands (a)(1)-(a)(3), pushes (b), wagers after the first card (c) '
         'and after a double, split, surrender or insurance (e); `loss` and `paytable`.')
"""What the game notebook says its rules cover."""


def hand_text(h: dict[str, Any]) -> str:
    """``seat 2 hand 0: A♠ 10♥, 25.00 (doubled) → +50.00``."""
    how = [k for k in ("doubled", "split", "surrendered") if h.get(k)]
    return (f"seat {h['seat']} hand {h.get('hand') or 0}: {cards_text(h.get('cards'))}, {money_text(h['wager'])}"
            f"{' (' + ', '.join(how) + ')' if how else ''} → {money_text(h['net'], True)}")


_ACTIONS = {"place": "bets", "increase": "adds", "withdraw": "withdraws", "double": "doubles for",
            "split": "splits for", "surrender": "surrenders", "insurance": "takes insurance for",
            "even_money": "takes even money"}


def _wager(e: dict[str, Any]) -> str:
    action = str(e.get("action"))
    amount = money_text(e.get("amount"))
    return " ".join(x for x in (f"seat {e.get('seat')}", _ACTIONS.get(action, action.replace("_", " ")),
                                amount if action not in ("surrender", "even_money") else "") if x)


EVENTS = {"wager": _wager, "first_card": lambda e: "first card dealt"}
