"""A cell of several fields (``46|PBPBPB``) in an export, placed by ``profile suggest`` where its parts
can be named: two digits that agree with the hands' point totals are the announced totals, a text of P
and B the deal order."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .roles import Column

if TYPE_CHECKING:
    from .placement import Placement

__all__ = ["place_layout"]


def place_layout(build: Placement, c: Column) -> bool:
    """A cell of several fields (``46|PBPBPB``) cut into those it can name: two digits that agree with
    the point totals of the player's and banker's first two cards on most rows are the announced
    totals, a text of P and B the deal order; the other parts are left as TODOs."""
    cut = c.compound
    assert cut is not None
    groups = list(re.compile(cut.pattern).groupindex)
    hands = {side: next((x for x in build.columns_ if x.role == f"cards:{side}" and x.cells), None)
             for side in ("player", "banker")}
    placed = False
    digits = [g for g in groups if g.startswith("d")]
    if len(digits) == 2 and all(hands.values()) and "announced_player" in build.vocab:
        found = [re.fullmatch(cut.pattern, v.strip()) if v else None for v in c.cells]
        totals = [(_points(p, hands["player"]), _points(b, hands["banker"]))  # type: ignore[union-attr]
                  for p, b in zip(hands["player"].cells, hands["banker"].cells, strict=True)]  # type: ignore[union-attr]
        pairs = [((int(m[digits[0]]), int(m[digits[1]])), t) for m, t in zip(found, totals, strict=True) if m and
                 None not in t]
        for order in (digits, digits[::-1]):
            agree = sum((a, b) == t for (a, b), t in pairs) if order == digits else \
                sum((b, a) == t for (a, b), t in pairs)
            if pairs and agree >= 0.8 * len(pairs):
                for target, group in zip(("announced.player", "announced.banker"), order, strict=True):
                    build.put(target, {"column": c.name, "pattern": cut.pattern, "group": group})
                placed = True
                break
    for group in groups:
        if group.startswith("order") and "deal_order" in build.vocab:
            build.put("deal_order", {"column": c.name, "pattern": cut.pattern, "group": group})
            placed = True
    if placed:
        build.fields.note(f"the cell {c.name!r} ({c.values[0]!r}) cut by its parts: check what each part holds")
    return placed


def _points(cell: str | None, col: Column) -> int | None:
    """The point total (ranks 2-9 their value, an ace 1, tens and faces 0, modulo 10) of a hand's first two
    cards in ``cell``, written as ``col`` writes them; None when it cannot say."""
    if not cell or col.cards is None:
        return None
    cards = cell.split() if col.how == " " else cell.split(col.how) if col.how and col.how != "json" else [cell]
    total = 0
    for card in [c.strip() for c in cards][:2]:
        rank = card if col.cards.notation in ("points", "rank-only") else card[:-1]
        value = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}.get(rank.upper())
        if value is None:
            if not rank.isdigit():
                return None
            value = int(rank) % 10 if int(rank) < 14 else 1
        total += value
    return total % 10
