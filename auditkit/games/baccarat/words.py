"""Baccarat in words (:mod:`auditkit.tables`): what its notebook's rules cover (no patron hands, no events)."""

from __future__ import annotations

from typing import Any

__all__ = ["INTRO", "EVENTS"]

INTRO = ("Third-card rules (b)(1)-(b)(11), dealing order (c), at most three cards (d), the cutting card (e), "
         "announced totals (a); outcome and paytable on the cards as dealt; shoe integrity.")
EVENTS: dict[str, Any] = {}
