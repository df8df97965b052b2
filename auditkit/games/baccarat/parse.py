"""A baccarat record's own fields to stored columns, and back."""

from __future__ import annotations

from typing import Any

from ...ingest.jsonl import drop_none, spec_cards
from ...ingest.records import BadRecord, read_bool, read_cards, read_int, read_str, read_value
from .tableau import OUTCOMES

__all__ = ["parse", "to_record"]


def parse(obj: dict, row: dict[str, Any]) -> None:
    """Fill ``row`` with the baccarat fields of record ``obj``; BadRecord says what is wrong."""
    if row["shoe_id"] is None:
        raise BadRecord("missing required field shoe_id")
    if row["round_seq"] is None:
        raise BadRecord("missing required field round_seq")
    row["player_cards"] = read_cards(obj, "player_cards")
    row["banker_cards"] = read_cards(obj, "banker_cards")
    row["outcome"] = outcome = read_str(obj, "outcome")
    if outcome not in OUTCOMES:
        raise BadRecord(f"field outcome {outcome!r} is not player, banker or tie")
    announced = read_value(obj, "announced", "", False)
    if announced is not None and not isinstance(announced, dict):
        raise BadRecord("field announced must be an object {player, banker}")
    announced = announced or {}
    row["announced_player"] = read_int(announced, "player", "announced.", required=False, lo=0, hi=9)
    row["announced_banker"] = read_int(announced, "banker", "announced.", required=False, lo=0, hi=9)
    order = read_str(obj, "deal_order", required=False)
    if order is not None and (not order or set(order.upper()) - {"P", "B"}):
        raise BadRecord(f"field deal_order {order!r} must be a string over P and B")
    row["deal_order"] = order.upper() if order is not None else None
    row["cut_card"] = read_bool(obj, "cut_card")


def to_record(row: dict[str, Any], rec: dict[str, Any]) -> None:
    """The inverse of :func:`parse`: a stored row's baccarat fields into spec record ``rec``."""
    rec["player_cards"] = spec_cards(row["player_cards"])
    rec["banker_cards"] = spec_cards(row["banker_cards"])
    rec["outcome"] = row["outcome"]
    if row.get("announced_player") is not None or row.get("announced_banker") is not None:
        rec["announced"] = drop_none({"player": row.get("announced_player"),
                                       "banker": row.get("announced_banker")})
    if row.get("deal_order"):
        rec["deal_order"] = row["deal_order"]
    if row.get("cut_card"):
        rec["cut_card"] = True
