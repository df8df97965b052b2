"""Baccarat in words (:mod:`auditkit.tables`): what its notebook's rules cover (no patron hands, no events)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["INTRO", "EVENTS", "hand_total"]

INTRO = ("Third-card rules (b)(1)-(b)(11), dealing order (c), at most three cards (d), the cutting card (e), "
         "announced totals (a); outcome and paytable on the cards as dealt; shoe integrity.")
EVENTS: dict[str, Any] = {}


def hand_total(cards: Sequence[str]) -> int:
    """A hand's point total, as the dealer announces it (``profile check``'s preview of a round)."""
    from ...cards import parse_card
    from .tableau import BACCARAT_POINTS

    return int(sum(int(BACCARAT_POINTS[parse_card(c)]) for c in cards) % 10)
