"""A blackjack record's own fields (dealer cards, limits, hands, wager events) to stored columns, and back."""

from __future__ import annotations

from typing import Any

from ...ingest.jsonl import spec_cards, spec_money
from ...ingest.records import BadRecord, read_bool, read_cards, read_int, read_list, read_money, read_str
from .hands import ACTIONS

__all__ = ["parse", "to_record", "ACTIONS", "EVENTS"]


def parse(obj: dict, row: dict[str, Any]) -> None:
    """Fill ``row`` with the blackjack fields of record ``obj``; BadRecord says what is wrong."""
    row["dealer_cards"] = read_cards(obj, "dealer_cards")
    row["table_min"] = read_money(obj, "table_min", required=False)
    row["table_max"] = read_money(obj, "table_max", required=False)
    hands = []
    for i, h in enumerate(read_list(obj, "hands", required=True)):
        where = f"hands[{i}]."
        wager = read_money(h, "wager", where)
        doubled = read_bool(h, "doubled", where)
        initial = read_money(h, "initial_wager", where, required=False)
        if initial is None:
            initial = wager / 2 if doubled else wager
        hands.append({
            "seat": read_int(h, "seat", where, lo=0), "hand": read_int(h, "hand", where, required=False, lo=0) or 0,
            "cards": read_cards(h, "cards", where), "wager": wager, "initial_wager": initial,
            "doubled": doubled, "split": read_bool(h, "split", where), "surrendered": read_bool(h, "surrendered", where),
            "net": read_money(h, "net", where, signed=True),
        })
    row["hands"] = hands


def to_record(row: dict[str, Any], rec: dict[str, Any]) -> None:
    """The inverse of :func:`parse`: a stored row's blackjack fields into spec record ``rec``."""
    rec["dealer_cards"] = spec_cards(row["dealer_cards"])
    for k in ("table_min", "table_max"):
        if row.get(k) is not None:
            rec[k] = spec_money(row[k])
    rec["hands"] = [
        {"seat": h["seat"], "hand": h["hand"], "cards": spec_cards(h["cards"]), "wager": spec_money(h["wager"]),
         "initial_wager": spec_money(h["initial_wager"]), "doubled": h["doubled"], "split": h["split"],
         "surrendered": h["surrendered"], "net": spec_money(h["net"])}
        for h in row["hands"] or []]


def _wager_event(e: dict, ev: dict[str, Any], where: str) -> None:
    ev["seat"] = read_int(e, "seat", where, lo=0)
    ev["action"] = action = read_str(e, "action", where)
    if action not in ACTIONS:
        raise BadRecord(f"field {where}action {action!r} is not one of {', '.join(ACTIONS)}")
    ev["amount"] = read_money(e, "amount", where)


EVENTS = {"wager": _wager_event, "first_card": None}
"""Event types of a blackjack record and the reader of each one's fields."""
